"""The options of every method, as enums, and the one place where a user's spelling of an
option is checked (:func:`parse`). Messages name the option and list its choices.

The methods themselves are not listed here: the registry
(:data:`microagg.release.methods.METHODS`) is the only list of them. What remains names what
is not a release method: the microaggregation a t-closeness merge starts from (``Method``,
a parameter's choices), the partition algorithms of t-closeness that its three methods run
(``TClosenessMethod``, below the registry: the partitions import no release), and the names
a comparison gives its candidates (``CompareMethod``, each tied to its class in the registry
by :mod:`microagg.evaluation.compared_methods`)."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from microagg.errors import InputError

__all__ = ["Calibration", "Closed", "Clustering", "CompareMethod", "CoskewnessTerms",
           "GroundDistance", "LDiversityKind", "Linkage", "MatchStatus", "Method", "MissingValues",
           "MomentNoise", "MomentVariant", "RankScale", "RankTies", "Reference",
           "ReportKind", "RiskAggregate", "RiskKind", "Scaling", "TClosenessMethod", "Target",
           "TargetMatch", "parse"]


class Closed(StrEnum):
    """Which end of each interval of global recoding's breaks is closed."""

    LEFT = "left"  # [a, b), the last interval [a, b]
    RIGHT = "right"  # (a, b], the first interval [a, b]: sdcMicro's globalRecode (R's cut)


class Method(StrEnum):
    """The microaggregation the t-closeness method ``merge`` starts from
    (``microaggregation``): the methods of the k-anonymity family, named as they are."""

    MDAV = "mdav"
    VMDAV = "vmdav"
    INDIVIDUAL_RANKING = "individual-ranking"
    OPTIMAL_UNIVARIATE = "optimal-univariate"
    INSENSITIVE = "insensitive"


class Clustering(StrEnum):
    """The partition of a cross-moment release (004 §4.1 step 1) and what it protects."""

    INSENSITIVE = "insensitive"  # 000 Alg. 2: ε-DP of the records, sensitivities times c
    MDAV = "mdav"  # data-dependent: ε-DP of the microaggregated data set X^m only
    IR_MDAV = "ir-mdav"  # MDAV per attribute group (004 Alg. 3): ε-DP of each group's X^m


class MomentNoise(StrEnum):
    """How the statistics of a cluster are perturbed (004 §4.3)."""

    JOINT = "joint"  # Alg. 1: one Laplace scale, the joint sensitivity of Theorem 11
    SEPARATE = "separate"  # Alg. 2: each statistic its own sensitivity and share of ε


class MomentVariant(StrEnum):
    """Which covariance coefficients a cross-moment release publishes (004 §5.1), or their
    eigen-decomposition (004 §4.3, eigenvalue-based microaggregation)."""

    PURE = "pure"  # every unique q_ij
    VARIANCES = "variances"  # q_ii only
    EIGEN = "eigen"  # eigenvalues and eigenvectors (Prop. 9-10): individual DP only
    KENDALL = "kendall"  # q_ii and Kendall's tau_a per pair (a Gaussian copula), m = 1 only


class CoskewnessTerms(StrEnum):
    """Which coskewness coefficients an m = 2 release publishes."""

    MARGINAL = "marginal"  # φ_iii only: what the skew-normal sampler uses (004 §5.2)
    ALL = "all"  # every unique φ_ijl


class Engine(StrEnum):
    """Where a release runs (``--engine``)."""

    LOCAL = "local"  # this process, the table in memory
    DASK = "dask"  # a Dask cluster, Parquet data sets in and out (microagg.at_scale)


class MissingValues(StrEnum):
    """What a missing value of a quasi-identifier matches when records are grouped."""

    MATCHES_ANY = "matches-any"  # any value (sdcMicro's alpha = 1): the default
    CATEGORY = "category"  # only another missing value (a category of its own)


class LDiversityKind(StrEnum):
    """Which l-diversity of a sensitive attribute (Machanavajjhala et al. 2007 §4.1-4.2)."""

    DISTINCT = "distinct"  # the number of distinct sensitive values
    ENTROPY = "entropy"  # exp of the entropy of the sensitive values
    RECURSIVE = "recursive"  # the largest l of recursive (c, l)-diversity


class Scaling(StrEnum):
    """Scaling of numeric attributes in MDAV and V-MDAV distances."""

    AUTO = "auto"  # z-scores for numeric data, domain widths (000 eq. 8) for mixed data
    ZSCORE = "zscore"
    RANGE = "range"
    NONE = "none"


class Reference(StrEnum):
    """Reference points of insensitive microaggregation (000 §4.2-4.3)."""

    CORNERS = "corners"
    SINGLE = "single"


class Calibration(StrEnum):
    """How ε and the sensitivities are shared between numeric attributes (docs/algorithms.md)."""

    CORRECT = "correct"  # one vector query over all numeric attributes (000 §4): ε-DP
    PER_ATTRIBUTE = "per-attribute"  # ε/m and its own width per attribute: ε-DP
    PAPER = "paper"  # every attribute spends ε (000's experiments): (m·ε)-DP


class Linkage(StrEnum):
    """How columns clustered separately (individual ranking) are written."""

    UNLINKED = "unlinked"  # each column in its own random order: ε-DP as a table
    LINKED = "linked"  # the papers' records: each column (ε/m)-DP, the table not DP


class TClosenessMethod(StrEnum):
    """The partition algorithms of k-anonymous t-closeness (paper 002): the one each
    method of the t-closeness family runs (its ``algorithm``), named as the method."""

    MERGE = "merge"  # Alg. 1: microaggregate, then merge classes
    K_ANONYMITY_FIRST = "k-anonymity-first"  # Alg. 2, repaired by Alg. 1's merging
    T_CLOSENESS_FIRST = "t-closeness-first"  # Alg. 3, verified and repaired by merging


class GroundDistance(StrEnum):
    """Ground distance of the EMD between values of a confidential attribute (002 §2.2)."""

    ORDERED = "ordered"  # numeric and ordinal: rank difference / (m - 1)
    EQUAL = "equal"  # nominal: every two values at distance 1
    HIERARCHICAL = "hierarchical"  # nominal with a taxonomy (Li et al. 2007 §4.2)


class CompareMethod(StrEnum):
    """The candidates of a comparison at equal risk (003; evaluation/compare.py)."""

    MDAV = "mdav"  # k
    INDIVIDUAL_RANKING = "individual-ranking"  # k
    CORRELATED_NOISE = "correlated-noise"  # γ
    MULTIPLICATIVE_NOISE = "multiplicative-noise"  # s
    RANK_SWAP = "rank-swap"  # the window as a fraction of the records
    DP_LAPLACE = "dp-laplace"  # ε
    DP_INDIVIDUAL_RANKING = "dp-individual-ranking"  # ε, k fixed
    # methods for categorical keys (evaluation/key_compare.py); mdav is also one of them
    LOCAL_SUPPRESSION = "local-suppression"  # k
    GLOBAL_RECODING = "global-recoding"  # the level of the recoded keys
    RECODE_THEN_SUPPRESS = "recode-then-suppress"  # k, after recoding at a fixed level
    INVARIANT_PRAM = "invariant-pram"  # the retention probability

    @property
    def keys_only(self) -> bool:
        """A method for categorical keys only (compared at a categorical risk)."""
        return self in (CompareMethod.LOCAL_SUPPRESSION, CompareMethod.GLOBAL_RECODING,
                        CompareMethod.RECODE_THEN_SUPPRESS, CompareMethod.INVARIANT_PRAM)


class MatchStatus(StrEnum):
    """How a method's calibration to a comparison's target ended (evaluation/compare.py)."""

    MATCHED = "matched"  # a value whose 95 % interval lies in the band: ranked
    EXCEEDS = "exceeds"  # better than the target over its whole range: ranked at the closest
    SHORT = "short"  # worse than the target over its whole range: left out
    UNSETTLED = "unsettled"  # crosses the target, no interval inside the band: left out


class ReportKind(StrEnum):
    """Who an HTML release report is for (evaluation/report_html.py)."""

    INTERNAL = "internal"  # the data owner: every figure, parameter and note
    EXTERNAL = "external"  # anyone: no record-level figure, no small group, no data value


class Target(StrEnum):
    """What a comparison holds equal across methods (003 §3)."""

    RISK = "risk"  # rank methods by utility
    UTILITY = "utility"  # rank methods by risk


class RiskKind(StrEnum):
    """The risk a comparison holds equal (evaluation/compare.py, evaluation/key_compare.py)."""

    RANK = "rank"  # 003 eq. 2 on numeric attributes (larger = safer)
    EXPECTED_REIDENTIFICATIONS = "expected-reidentifications"  # Σ individual risk of keys
    GLOBAL_RISK = "global-risk"  # the mean individual risk of the keys
    VIOLATIONS = "violations"  # records in classes of the keys smaller than k
    SINGLING_OUT = "singling-out"  # attacks on a release (risk/attacks.py; smaller = safer)
    LINKABILITY = "linkability"
    INFERENCE = "inference"

    @property
    def by_attack(self) -> bool:
        """Whether the risk is an attack's on a release against control records
        (evaluation/attack_compare.py)."""
        return self in (RiskKind.SINGLING_OUT, RiskKind.LINKABILITY, RiskKind.INFERENCE)

    @property
    def on_numeric(self) -> bool:
        """Whether the methods compared at this risk mask numeric attributes (the rank risk
        and the attacks) rather than categorical keys."""
        return self is RiskKind.RANK or self.by_attack


class TargetMatch(StrEnum):
    """When a calibrated value meets a comparison's target (evaluation/calibration.py)."""

    WITHIN = "within"  # its 95 % interval lies within target · (1 ± tolerance)
    AT_MOST = "at-most"  # its 95 % interval lies on the safe side of target · (1 + tolerance)


class RankScale(StrEnum):
    """The unit of the rank distances of 003's risk (evaluation/risk.py)."""

    RANKS = "ranks"  # ranks 1..n
    UNIT = "unit"  # ranks divided by n


class RankTies(StrEnum):
    """How 003's risk ranks tied original values (evaluation/risk.py, docs/algorithms.md)."""

    INTERVALS = "intervals"  # a tied value's rank is the interval its ties span (default)
    MIDRANKS = "midranks"  # the mean rank of its ties, as 003 §2.1 reads literally


class RiskAggregate(StrEnum):
    """How 003 eq. 2 aggregates the record distances d(x, Y) (docs/algorithms.md)."""

    MEAN_OF_LOGS = "mean-of-logs"  # (1/n) Σ ln(1 + d): reproduces 003's matched parameters
    LOG_OF_MEAN = "log-of-mean"  # ln((1/n) Σ d)
    PRINTED = "printed"  # (1/n) ln Σ d, eq. 2 as printed


E = TypeVar("E", bound=StrEnum)


def parse(enum: type[E], value: object, option: str) -> E:
    """``value`` as a member of ``enum``; an :class:`InputError` naming ``option`` otherwise."""
    if isinstance(value, enum):
        return value
    try:
        return enum(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(member.value for member in enum)
        raise InputError(f"unknown {option} '{value}' (choose one of: {choices})") from None
