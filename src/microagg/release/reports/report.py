"""The reports of the releases: what was written, and the guarantee it has, in words.

:class:`KAnonymityReport` goes with a k-anonymous microaggregation; :class:`PrivacyReport` is
written beside a DP release (``OUT.privacy.json``). Both are typed objects; ``to_dict()`` gives
the JSON form. A privacy report holds only public quantities (the threat model of
docs/algorithms.md): never the seed, never how many values of the data were clamped.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar, Self

__all__ = [
    "NEIGHBOURS",
    "NOISE_WARNING_FRACTION",
    "SAMPLING",
    "THREAT_MODEL",
    "Anonymity",
    "ChoiceNoise",
    "Clusters",
    "Domain",
    "Entry",
    "EpsilonPart",
    "GuaranteeScope",
    "KAnonymityReport",
    "NoiseLevel",
    "NumericNoise",
    "PrivacyReport",
    "Sensitivity",
    "guarantee_sentence",
]

NEIGHBOURS = ("two data sets are neighbours when they have the same number n of records and "
              "differ in one record, replaced by any other record of the domain; n is public")

THREAT_MODEL = ("public: n, k, the cluster sizes and the schema (domains, categories, "
                "taxonomies); secret: the records, the partition and the alignment of the "
                "written rows with the input. The rows are written in a uniformly random order "
                "with a fresh index; the seed is never written.")

SAMPLING = ("Laplace noise: the statistic is snapped to a power-of-two grid and perturbed by "
            "discrete Laplace noise drawn exactly (Canonne, Kamath, Steinke 2020), never by "
            "floating-point inverse-CDF sampling (Mironov 2012); exponential mechanism: "
            "qualities snapped to a power-of-two grid, choice drawn exactly by rejection with "
            "Bernoulli(exp(-x)) trials (CKS 2020, Algorithm 1)")

CLAMPING = ("values outside a declared domain are clamped into it before the release (their "
            "number is told to the data owner, not published)")

# The CLI warns when the noise standard deviation exceeds this fraction of a domain's width.
NOISE_WARNING_FRACTION = 0.25


class GuaranteeScope(StrEnum):
    """What the differential-privacy guarantee of a release holds for."""

    TABLE = "table"  # the table as written
    PROTECTED_COLUMNS = "protected columns"  # the table without its carried columns
    EACH_COLUMN = "each column"  # every protected column (or group) on its own, not their pairing
    MICROAGGREGATED = "microaggregated data set"  # 004: DP of X^m, not of the records
    INDIVIDUAL = "individual DP"  # 004 eigen variant: local sensitivity, neighbours of X only
    COMPLETE_ROWS = "complete rows"  # DP of the rows left after dropping incomplete ones
    NONE = "none"


def guarantee_sentence(*, epsilon: float, multiplier: int, columns: list[str],
                       carried: list[str], linked: bool, from_data: list[str],
                       drops_incomplete: bool, parts: list[tuple[str, float]] | None = None,
                       microaggregated: str | None = None, individual: str | None = None,
                       seeded: bool = False) -> tuple[bool, GuaranteeScope, str]:
    """(differentially private, scope, the guarantee in plain words), never rounded up.

    ``parts`` are the separately grouped column sets of a linked table with their ε (default:
    every column with ε/m). ``microaggregated`` names the data set the guarantee is about when
    it is not the records themselves (004: the m-microaggregated data set X^m of a
    data-dependent partition); the table is then not DP with respect to the records.
    ``individual`` names what the noise was calibrated to when that depends on the data set
    (local sensitivity): the guarantee is then ε-individual DP (Soria-Comas et al. 2017), not
    ε-DP. A ``seeded`` release is not differentially private at all: whoever knows the seed
    regenerates the noise; the sentence says so first, then what the release would satisfy
    with its noise drawn from OS entropy. A release that ``drops_incomplete`` rows (rows with
    a missing value where no value is declared for it) publishes their number exactly: it is
    differentially private with respect to the complete rows only, said whether or not this
    input had such a row."""
    if seeded:
        _, _, without = guarantee_sentence(
            epsilon=epsilon, multiplier=multiplier, columns=columns, carried=carried,
            linked=linked, from_data=from_data, drops_incomplete=drops_incomplete,
            parts=parts, microaggregated=microaggregated, individual=individual)
        return False, GuaranteeScope.NONE, (
            "This release is NOT differentially private: its noise was drawn from a given "
            "seed, and anyone who learns or guesses the seed can regenerate the noise and "
            "remove it (a run for research or reproduction only). Drawn from OS entropy "
            f"(no seed), it would be as follows. {without}")
    if from_data:
        return False, GuaranteeScope.NONE, (
            "This release is NOT differentially private: the domains of "
            f"{', '.join(from_data)} were taken from the data (--bounds-from-data), so the "
            "noise and the possible outputs depend on the data itself.")
    level = epsilon * multiplier
    rows = (" Rows with a missing value were dropped first (drop_incomplete): the table's "
            "length publishes how many rows are complete, exactly, so it is NOT "
            "differentially private with respect to the input, only with respect to its "
            "complete rows." if drops_incomplete else "")
    dropped = ("This release is NOT differentially private with respect to the input: rows "
               "with a missing value were dropped first (drop_incomplete), and the table's "
               "length publishes how many rows are complete; what follows holds for the "
               "complete rows. " if drops_incomplete else "")
    target = neighbours = ""
    if microaggregated:
        target = (" It is NOT differentially private with respect to the original records: "
                  "the partition depends on the data, so one changed record can change every "
                  "cluster.")
        neighbours = (f" with respect to {microaggregated}: for any two such data sets that "
                      "differ in one record of one cluster (the clusters otherwise the same)")
    if linked:
        parts = parts or [(f"({c})", epsilon / len(columns)) for c in columns]
        each = "; ".join(f"{name}: {share:g}" for name, share in parts)
        carried_text = (f" The carried columns {', '.join(carried)} are copied unchanged."
                        if carried else "")
        return False, GuaranteeScope.EACH_COLUMN, (
            f"Each separately grouped set of protected columns satisfies differential "
            f"privacy on its own (ε per set: {each}), but the table as written is NOT "
            "differentially private: which values share a record follows the data-dependent "
            "grouping of every set and is released without noise (linked columns)."
            f"{target}{carried_text}{rows}")
    if individual:
        return _individual_sentence(level, individual, microaggregated, carried, columns,
                                    target, rows)
    extra = (f" (the paper's per-attribute calibration: the nominal ε = {epsilon:g} is spent "
             f"once per attribute, {multiplier} times)" if multiplier > 1 else "")
    pairs = neighbours or (": for any two neighbouring data sets (same size n, one record "
                           "replaced)")
    if drops_incomplete:
        pairs = pairs.replace("data sets (", "sets of complete rows (")
    core = (f"satisfies {level:g}-differential privacy{extra}{pairs}, the probability of any "
            f"output differs by at most a factor e^{level:g}.{target}")
    subject = "The released table"
    if carried:
        dropped += (f"The table as written is NOT differentially private: the carried "
                    f"columns {', '.join(carried)} are copied unchanged from the input. ")
        subject = f"Without them, the protected columns ({', '.join(columns)})"
    # the weakest scope names what the guarantee is about
    scope = (GuaranteeScope.MICROAGGREGATED if microaggregated else
             GuaranteeScope.COMPLETE_ROWS if drops_incomplete else
             GuaranteeScope.PROTECTED_COLUMNS if carried else GuaranteeScope.TABLE)
    return scope is GuaranteeScope.TABLE, scope, f"{dropped}{subject} {core}"


def _individual_sentence(level: float, individual: str, microaggregated: str | None,
                         carried: list[str], columns: list[str], target: str, rows: str
                         ) -> tuple[bool, GuaranteeScope, str]:
    """The guarantee of a local-sensitivity release: ε-individual DP (Soria-Comas et al.
    2017), whose neighbours are those of the one data set the noise was calibrated on."""
    data = microaggregated or "this data set"
    within = " one record of one cluster (the clusters otherwise the same)" if \
        microaggregated else " one record (same size n)"
    subject = (f"Without the carried columns {', '.join(carried)} (copied unchanged, NOT "
               f"protected), the protected columns ({', '.join(columns)})" if carried
               else "The released table")
    return False, GuaranteeScope.INDIVIDUAL, (
        f"{subject} satisfies {level:g}-individual differential privacy with respect to "
        f"{data}: for it and any data set that differs from it in{within}, the probability "
        f"of any output differs by at most a factor e^{level:g} from the probability it "
        f"would have on that neighbour with the noise scales computed here.{target} It is "
        f"NOT differentially private: the noise scales are computed from {individual} of "
        "this data set (a local sensitivity), so the noise level itself depends on the data "
        f"and may tell a neighbour apart.{rows}")


@dataclass(frozen=True, eq=False)
class Entry(Mapping[str, Any]):
    """A typed entry of a report. Its fields are attributes (``entry.epsilon``), declared in
    the order the JSON writes them; it is also the read-only mapping of its fields that are
    set (``entry["epsilon"]``), which is what the JSON report holds: a field left ``None`` is
    not written (unless the type keeps ``None``, ``keep_none``, as a measure that does not
    apply)."""

    keep_none: ClassVar[bool] = False

    def _set(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)
                if self.keep_none or getattr(self, f.name) is not None}

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON holds it."""
        return {k: plain(v) for k, v in self.items()}

    def __getitem__(self, key: str) -> Any:
        return self._set()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._set())

    def __len__(self) -> int:
        return len(self._set())

    @classmethod
    def from_mapping(cls, entry: Mapping[str, Any]) -> Self:
        """The entry of ``entry``'s keys; a key the type does not have is an error (a new
        report key is added to its type, so every key is typed)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(entry) - known)
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(unknown)}")
        return cls(**entry)


@dataclass(frozen=True, eq=False)
class EpsilonPart(Entry):
    """One part of the ε ledger (:class:`~microagg.release.dp.mechanisms.Budget`)."""

    part: str
    epsilon: float
    times: int | None = None  # the paper calibration: the whole ε spent this many times
    total: float | None = None  # ... and what that costs, times · ε
    reason: str = ""
    divided_into: int | None = None  # the part divided equally over this many queries
    each: float | None = None  # ... each query's share
    division: str | None = None  # ... and why


@dataclass(frozen=True, eq=False)
class Sensitivity(Entry):
    """A released statistic: its mechanism, sensitivity, ε and noise scale."""

    statistic: str | None = None
    value: float | None = None  # a released bound (clipping)
    mechanism: str | None = None
    formula: str | None = None
    sensitivity: float | None = None
    epsilon: float | None = None
    epsilon_per_cluster: float | None = None
    across_clusters: str | None = None
    scale: float | str | None = None  # a number, or how a local-sensitivity scale was set
    standard_deviation: float | None = None
    grid_step: float | None = None
    integer_scale: int | None = None
    components: int | None = None
    exact_sampling: Mapping[str, Any] | None = None  # the exponential mechanism's sampling


@dataclass(frozen=True, eq=False)
class Domain(Entry):
    """The domain of a protected column: numeric bounds or the categories' structure, and
    where it came from."""

    low: float | None = None
    high: float | None = None
    categories: int | None = None
    concepts: int | None = None
    structure: str | None = None
    source: str | None = None
    diameter: float | None = None
    declared: list[float] | None = None  # the declared bounds, when clipped
    clipped: str | None = None
    missing: str | None = None  # the declared value missing cells are read as, and its rule


@dataclass(frozen=True, eq=False)
class NumericNoise(Entry):
    """The noise on one numeric attribute, in public quantities only."""

    standard_deviation: float
    fraction_of_width: float
    note: str | None = None


@dataclass(frozen=True, eq=False)
class ChoiceNoise(Entry):
    """The noise of an exponential-mechanism choice among ``concepts``."""

    epsilon_per_choice: float
    concepts: int
    largest_odds_best_to_worst: float


@dataclass(frozen=True, eq=False, kw_only=True)
class Clusters(Entry):
    """The clusters of a partition: how many, the smallest and largest (not for univariate
    methods, whose report holds one per attribute) and how many of each size."""

    count: int
    smallest: int | None = None
    largest: int | None = None
    size_histogram: dict[str, int]


@dataclass(frozen=True, eq=False)
class Anonymity(Entry):
    """k-anonymity as verified on the written table (:func:`~microagg.core.verifiers.
    k_anonymity`): the smallest equivalence class, the number of classes, whether the
    smallest has at least k records, and the records whose columns are all missing, which
    match every record only through missing values and are counted apart (their f_k is n;
    they count for no record that has every value: :mod:`microagg.core.frequencies`)."""

    smallest_class: int
    classes: int
    holds: bool
    all_missing: int = 0


NoiseLevel = NumericNoise | ChoiceNoise
"""The noise entry of one protected attribute."""


def plain(value: Any) -> Any:
    """``value`` as JSON holds it: entries and mappings as dicts, sequences as lists."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class PrivacyReport:
    """The privacy report of a DP release (written as ``OUT.privacy.json``)."""

    method: str
    differentially_private: bool
    guarantee_scope: GuaranteeScope
    guarantee: str
    epsilon: float
    epsilon_split: list[EpsilonPart]
    k: int | None
    groups: int | None
    records: int
    columns: list[str]
    carried: list[str]
    dropped_columns: list[str]
    linkage: str | None
    calibration: str | None
    reference: str | None
    sensitivities: list[Sensitivity]
    domains: dict[str, Domain]
    noise: dict[str, NoiseLevel]
    weaker_than_plain_dp: list[str]
    warnings: list[str]
    row_order: str = "uniformly random permutation, fresh index"
    moments: dict[str, Any] | None = None  # 004: m, noise, strategy, clustering, variant
    unit: str = "one record"  # what two neighbouring data sets differ in
    unit_epsilon: float | None = None  # the guarantee's epsilon for that unit (= epsilon)
    record_epsilon: float | None = None  # what each record's mechanisms spend (epsilon_split)
    threat_model: str = THREAT_MODEL
    neighbouring: str = NEIGHBOURS
    clamping: str = CLAMPING
    sampling: str = SAMPLING

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


def numeric_noise(width: float, standard_deviation: float, note: str | None = None
                  ) -> NumericNoise:
    """The noise on one numeric attribute, in public quantities only."""
    return NumericNoise(standard_deviation, standard_deviation / width, note)


def categorical_noise(epsilon_per_choice: float, group_size: int, concepts: int
                      ) -> ChoiceNoise:
    """The noise of an exponential-mechanism choice among ``concepts``: a group of
    ``group_size`` records changes a concept's quality by at most group_size · D, so the best
    concept is at most e^(ε' · size / 2) times as likely as the worst."""
    exponent = epsilon_per_choice * group_size / 2
    return ChoiceNoise(epsilon_per_choice, concepts, math.exp(min(exponent, 700.0)))


def noise_warnings(noise: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Warnings for attributes whose noise swamps the data, with what to change."""
    out = []
    for name, level in noise.items():
        fraction = level.get("fraction_of_width")
        if fraction is not None and fraction > NOISE_WARNING_FRACTION:
            out.append(f"the noise on '{name}' has a standard deviation of {fraction:.0%} of "
                       "its domain width: the released values are mostly noise (use a larger "
                       "k, a larger epsilon, a narrower domain, or --calibration "
                       "per-attribute)")
        odds = level.get("largest_odds_best_to_worst")
        if odds is not None and odds < math.e:
            out.append(f"the choice of '{name}' is close to uniform over its "
                       f"{level['concepts']} concepts (the best is at most {odds:.2f} times as "
                       "likely as the worst): use a larger k or a larger epsilon")
    return out


@dataclass(frozen=True)
class KAnonymityReport:
    """What a k-anonymous microaggregation did and what the written table satisfies."""

    method: str
    k: int
    columns: list[str]  # the masked columns (quasi-identifiers)
    records: int
    rows_dropped_as_incomplete: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    clusters: Clusters | dict[str, Clusters]  # one per attribute for univariate methods
    k_anonymity: Anonymity  # over the masked columns
    k_anonymity_as_written: Anonymity  # over every written column
    scaling: str | None = None
    reference: str | None = None
    gamma: float | None = None
    generalized_categories: dict[str, list[str]] = field(default_factory=dict)
    clamped: dict[str, int] = field(default_factory=dict)
    weight: str | None = None  # the sampling weight the means are weighted by
    strata: list[str] = field(default_factory=list)  # the stratum columns
    n_strata: int = 0
    rounded: dict[str, int] = field(default_factory=dict)  # column -> decimals written
    missing_values: dict[str, int] = field(default_factory=dict)  # masked column -> count
    missing_semantics: str = "matches-any"  # what a missing value matches in k_anonymity
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class MaskingReport:
    """What a masking method (003 §5) did. It has no ex-ante privacy guarantee."""

    method: str
    parameter: str
    value: float
    columns: list[str]
    records: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]
    seeded: bool
    parameters: dict[str, Any] = field(default_factory=dict)  # every parameter of the method
    guarantee: str = ("none: a masking method gives no ex-ante guarantee; measure the risk of "
                      "the release (microagg evaluate: rank_risk, record_linkage_percent) or "
                      "compare methods at equal risk (microagg compare)")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class TClosenessReport:
    """What a k-anonymous t-close microaggregation (paper 002) did, and what the written table
    satisfies by the independent verifiers of :mod:`microagg.core.verifiers`."""

    method: str
    k: int  # requested
    effective_k: int  # the cluster size of 002 eq. (3)-(4) for t-closeness-first, else k
    t: float
    quasi_identifiers: list[str]
    confidential: list[str]
    distances: dict[str, str]  # the EMD ground distance of each confidential attribute
    records: int
    rows_dropped_as_incomplete: int
    identifiers_dropped: list[str]
    released_unchanged: list[str]  # confidential and other columns, written as they are
    clusters: Clusters
    classes_before_merging: int
    merges: int  # Alg. 1 merges (for Alg. 2 and 3: the repair of classes above t)
    largest_emd: dict[str, float]  # per confidential attribute, over the written classes
    k_anonymity: Anonymity  # over the quasi-identifiers as written
    t_closeness_holds: bool
    microaggregation: str | None = None  # the partitioner Alg. 1 starts from
    scaling: str | None = None
    generalized_categories: dict[str, list[str]] = field(default_factory=dict)
    clamped: dict[str, int] = field(default_factory=dict)
    weight: str | None = None  # the sampling weight the class means are weighted by
    missing_values: dict[str, int] = field(default_factory=dict)  # input column -> count
    missing_semantics: str = "matches-any"  # what a missing value matches in the checks
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: plain(getattr(self, f.name)) for f in fields(self)}
