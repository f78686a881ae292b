"""The result of a comparison at equal risk or utility (003 §3): typed results per method, the
ranking with its ties, and the recommendation in plain words
(:func:`microagg.evaluation.compare.compare` computes them; :mod:`microagg.evaluation.html`
draws them).

A comparison reads the original records: it is an analysis of the raw data for the data owner,
not a release. Its results say so (:data:`RAW_DATA_NOTICE`) and never hold the extremes of the
raw data (domains read off the data are named, not given).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from microagg.options import CompareMethod, MatchStatus, RiskKind, Target, TargetMatch

__all__ = ["EMD_DEFINITION", "EPSILON_MEANINGLESS", "PARAMETER_MEANINGS", "RAW_DATA_NOTICE",
           "Comparison", "Evaluation", "Loss", "MethodResult", "Utility", "risk_in_words"]

RAW_DATA_NOTICE = ("This comparison is an analysis of the original records for the data owner, "
                   "not a release: its risks, utilities and calibrated parameters are "
                   "statistics of the raw data (a parameter found by searching on the data is "
                   "a fact of the data too). Keep it with the data; publish only releases.")

EPSILON_MEANINGLESS = 10.0
"""Above this ε a differentially private candidate is flagged: the guarantee lets the odds of
any inference about a person grow by e^ε > 22,000, which protects nothing in practice."""

PARAMETER_MEANINGS = {
    "k": "k: records averaged together in each cluster (larger = safer, less detail)",
    "gamma": "gamma: the added noise's covariance as a multiple of the data's covariance "
             "(larger = safer)",
    "s": "s: standard deviation of the random factor each value is multiplied by (1 ± s; "
         "larger = safer)",
    "fraction": "fraction: how far apart in rank two swapped values may lie, as a fraction of "
                "the records (0.05 = within 5 % of the records; larger = safer)",
    "epsilon": "epsilon: the differential-privacy budget (smaller = more noise, safer)",
    "local-suppression:k": "k (local suppression): key values are suppressed until every "
                           "record shares its keys with at least k - 1 others (larger = "
                           "safer, more cells missing)",
    "recode-then-suppress:k": "k (recode then suppress): the same, after the recoding at "
                              "the fixed level",
    "level": "level: steps up each recoded key's taxonomy, or doublings of its interval "
             "width (larger = coarser, safer)",
    "retention": "retention: the probability with which PRAM's matrix P keeps a category "
                 "(smaller = more categories redrawn, safer)",
}
"""What each calibrated parameter does, in plain words (``METHOD:PARAMETER`` where a
parameter means something else for that method)."""


EMD_DEFINITION = {
    "measure": "earth mover's distance between the original and masked records "
               "(smaller = better)",
    "label": "EMD",
    "scale": "attributes scaled to [0, 1] by their domain"}
"""The utility of 003, as a comparison states it."""


def risk_in_words(risk: float) -> str:
    """What a value of the rank risk (mean of ln(1 + d), ranks 1..n) means."""
    ranks = math.expm1(risk) if risk < 700 else math.inf
    return (f"a risk of {risk:.3g} means that the masked record nearest to an original record "
            f"lies about {ranks:,.1f} rank positions from it (geometric mean over the records; "
            "0 = the original records are published as they are, larger = safer)")


@dataclass(frozen=True)
class Evaluation:
    """The measure calibrated on (risk, or EMD for the dual) at one parameter value, over
    seeds: its mean and 95 % confidence interval; ``risk`` and the utility ``loss`` (the EMD
    ± ``loss_bound``, certified, for 003; the information loss of categorical keys) of the
    first seed's release, for the risk-utility scatter."""

    value: float
    measures: tuple[float, ...]
    mean: float
    ci: tuple[float, float]
    risk: float
    loss: float
    loss_bound: float = 0.0


@dataclass(frozen=True)
class Utility:
    """Utility at the chosen value, over ``seeds`` releases (one for a deterministic method):
    the mean EMD of 003 eq. 1 and its uncertainty ``emd_bound``, the sum of the certified bound
    of a grouped EMD (``emd_certified``; 0 when ``emd_exact``) and the 95 % half-interval over
    the seeds (``emd_spread``); SSE/SST % (aligned releases only) and the mean JSD over
    attributes of the first seed's release."""

    emd: float
    emd_exact: bool
    emd_bound: float
    sse_percent: float | None
    jsd: float
    seeds: int = 1
    emd_certified: float = 0.0
    emd_spread: float = 0.0

    name: ClassVar[str] = "emd"
    """The key of the ranking measure in the JSON form of every evaluation."""
    columns: ClassVar[tuple[str, ...]] = ("EMD ± uncertainty", "SSE/SST %", "JSD")
    """The report table's columns of this utility."""

    @property
    def loss(self) -> float:
        """The measure methods are ranked on (smaller = better)."""
        return self.emd

    @property
    def interval(self) -> tuple[float, float]:
        return (self.emd - self.emd_bound, self.emd + self.emd_bound)

    def summary(self) -> str:
        return f"EMD {_plain(self.emd)} ± {self.emd_bound:.2g}"

    def cells(self) -> tuple[float | str | None, ...]:
        """The values of :attr:`columns`."""
        return (f"{self.emd:.4g} ± {self.emd_bound:.2g}", self.sse_percent, self.jsd)

    def to_dict(self) -> dict[str, Any]:
        return {"emd": self.emd, "emd_exact": self.emd_exact, "emd_bound": self.emd_bound,
                "emd_certified_bound": self.emd_certified,
                "emd_seed_spread": self.emd_spread, "seeds": self.seeds,
                "sse_percent": self.sse_percent, "jsd": self.jsd}


class Loss(Protocol):
    """A utility at the chosen value, as a comparison ranks and reports it: :class:`Utility`
    (003), or :class:`~microagg.evaluation.key_utility.KeyUtility` for categorical keys."""

    name: ClassVar[str]
    columns: ClassVar[tuple[str, ...]]

    @property
    def loss(self) -> float: ...

    @property
    def interval(self) -> tuple[float, float]: ...

    def summary(self) -> str: ...

    def cells(self) -> tuple[float | str | None, ...]: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class MethodResult:
    """One method's calibration: the chosen value, its risk (mean and 95 % interval), its
    utility, the ``status`` of the search (and ``reason`` when not matched), every evaluation,
    and notes and warnings for the report."""

    method: CompareMethod
    parameter: str
    value: float
    risk: float
    risk_ci: tuple[float, float]
    utility: Loss
    status: MatchStatus
    reason: str
    evaluations: tuple[Evaluation, ...]
    log_axis: bool = False  # the parameter's range spans decades: plot it on a log axis
    note: str = ""
    warning: str = ""

    @property
    def matched(self) -> bool:
        return self.status is MatchStatus.MATCHED

    @property
    def ranked(self) -> bool:
        """Matched, or better than the target over its whole range (ranked at the closest)."""
        return self.status in (MatchStatus.MATCHED, MatchStatus.EXCEEDS)

    def to_dict(self) -> dict[str, Any]:
        name = self.utility.name
        return {"method": self.method.value, "parameter": self.parameter,
                "value": self.value, "risk": self.risk, "risk_ci": list(self.risk_ci),
                "utility": self.utility.to_dict(),
                "matched": self.matched, "status": self.status.value, "reason": self.reason,
                "note": self.note, "warning": self.warning,
                "evaluations": [{"value": e.value, "mean": e.mean, "ci": list(e.ci),
                                 "seeds": len(e.measures), "risk": e.risk, name: e.loss,
                                 f"{name}_bound": e.loss_bound}
                                for e in self.evaluations]}


def _plain(value: float) -> str:
    return f"{value:.4g}"


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`~microagg.evaluation.compare.compare` (or of
    :func:`~microagg.evaluation.key_compare.compare_keys`): the target, one
    :class:`MethodResult` per method, the ranking of the ranked methods, best first (least
    utility loss at equal risk, or most risk — i.e. safest — at equal utility), and where the
    data came from (``provenance``: the input, the date, the version, the columns left out).
    ``risk_definition`` and ``utility_definition`` say which risk was held and which utility
    ranked (their ``measure`` in words, their ``label`` in a few); ``match`` whether a value
    met the target within its band or at most at it."""

    target: Target
    target_value: float
    target_source: str
    tolerance: float
    seeds: int
    risk_definition: dict[str, str]
    data: dict[str, Any]
    methods: tuple[MethodResult, ...]
    ranking: tuple[CompareMethod, ...] = field(default=())
    provenance: dict[str, Any] = field(default_factory=dict)
    utility_definition: dict[str, str] = field(default_factory=lambda: dict(EMD_DEFINITION))
    risk_kind: RiskKind = RiskKind.RANK
    match: TargetMatch = TargetMatch.WITHIN

    @property
    def risk_label(self) -> str:
        """The risk held, in a few words (for axes and sentences)."""
        return self.risk_definition.get("label", "rank risk")

    @property
    def utility_label(self) -> str:
        """The utility ranked on, in a few words."""
        return self.utility_definition.get("label", "EMD")

    def by_method(self) -> dict[CompareMethod, MethodResult]:
        return {m.method: m for m in self.methods}

    def _interval(self, m: MethodResult) -> tuple[float, float]:
        """The uncertainty interval of the measure a method is ranked on."""
        return m.utility.interval if self.target is Target.RISK else m.risk_ci

    def tied_with_best(self) -> tuple[CompareMethod, ...]:
        """The ranked methods after the first whose interval overlaps the first's: the data
        cannot tell them apart on the ranking measure."""
        if not self.ranking:
            return ()
        by = self.by_method()
        low, high = self._interval(by[self.ranking[0]])
        return tuple(m for m in self.ranking[1:]
                     if self._interval(by[m])[0] <= high and self._interval(by[m])[1] >= low)

    def to_dict(self) -> dict[str, Any]:
        key = "target_risk" if self.target is Target.RISK else "target_utility"
        return {key: self.target_value, "target_source": self.target_source,
                "tolerance": self.tolerance, "seeds": self.seeds,
                "risk_kind": self.risk_kind.value, "match": self.match.value,
                "risk_definition": self.risk_definition,
                "utility_definition": self.utility_definition, "data": self.data,
                "methods": [m.to_dict() for m in self.methods],
                "ranking": [m.value for m in self.ranking],
                "tied_with_best": [m.value for m in self.tied_with_best()],
                "recommendation": self.recommendation(),
                "notice": RAW_DATA_NOTICE, "provenance": self.provenance}

    def _measure(self, m: MethodResult) -> str:
        if self.target is Target.RISK:
            return m.utility.summary()
        return f"risk {_plain(m.risk)} [{_plain(m.risk_ci[0])}, {_plain(m.risk_ci[1])}]"

    def _left_out(self) -> str:
        parts = []
        for m in self.methods:
            if m.status is MatchStatus.SHORT:
                parts.append(f"{m.method.value} cannot reach the target within its parameter "
                             f"range ({m.reason}), so it is left out.")
            elif m.status is MatchStatus.UNSETTLED:
                parts.append(f"{m.method.value} crosses the target but could not be settled "
                             f"on it ({m.reason}), so it is left out.")
        return " ".join(parts)

    def recommendation(self) -> str:
        """One paragraph in plain words."""
        at = ("the same disclosure risk" if self.target is Target.RISK
              else "the same utility loss")
        if self.match is TargetMatch.AT_MOST:
            at = f"a risk of at most {_plain(self.target_value)} ({self.risk_label})"
        tail = self._left_out()
        tail = f" {tail}" if tail else ""
        if not self.ranking:
            return ("No method could be calibrated to the target within its parameter range: "
                    f"choose another target.{tail}")
        by = self.by_method()
        best = by[self.ranking[0]]
        what = ("the least utility loss" if self.target is Target.RISK
                else "the lowest disclosure risk (larger is safer)")
        text = (f"At {at}, {best.method.value} with {best.parameter} = {_plain(best.value)} "
                f"gives {what} ({self._measure(best)}).")
        if best.status is MatchStatus.EXCEEDS:
            side = ("is safer than the target over its whole range, even at this least "
                    f"protective value (risk {_plain(best.risk)} against "
                    f"{_plain(self.target_value)})" if self.target is Target.RISK else
                    "keeps more utility than the target over its whole range, even at this "
                    f"most protective value (EMD {_plain(best.utility.loss)} against "
                    f"{_plain(self.target_value)})")
            if self.match is TargetMatch.AT_MOST:
                side = ("meets the target even at its least protective value (risk "
                        f"{_plain(best.risk)})")
            text += f" It {side}, so it is compared at that value."
        tied = self.tied_with_best()
        if tied:
            names = ", ".join(f"{by[m].method.value} ({self._measure(by[m])})" for m in tied)
            text += (f" {names} cannot be told apart from it: their uncertainty intervals "
                     "overlap, so choose among them on other grounds.")
        rest = [m for m in self.ranking[1:] if m not in tied]
        if rest:
            text += " It is followed by " + ", then ".join(
                f"{by[m].method.value} ({by[m].parameter} = {_plain(by[m].value)})"
                for m in rest) + "."
        flagged = [m for m in self.methods if m.warning]
        flags = "".join(f" Warning: {m.method.value}: {m.warning}." for m in flagged)
        return (text + tail + flags + " The ranking holds for this data set and these "
                "attributes only: repeat the comparison on your own data before "
                "choosing.")
