"""The risk and the utility of a release of categorical keys, as a comparison at equal risk
measures them (:mod:`microagg.evaluation.key_compare`).

Both work on the keys coded per column (:func:`released_codes`): the original's codes
0, 1, … of its values, -1 for a missing value, and the released values coded against the
same list, a value the original does not hold (a recoded label, a cluster centroid) taking a
new code.

**Risk** (:class:`KeyRiskMeasure`): the frequencies f_k (and F_k with a sampling weight) of
the released key combinations, a missing value matching any value by default
(:mod:`microagg.core.frequencies`), and each record's individual risk from them (1/f_k, or
Benedetti-Franconi with weights: :mod:`microagg.risk.individual`) — the figures ``microagg
risk`` gives for the released file. The comparison holds one of: the expected number of
re-identifications Σ r_i, the global risk Σ r_i / n, or the violations of k, the records with
f_k < k (sdcMicro's ``measure_risk`` and ``kAnon_violations``). A method that draws released
values at random (PRAM) releases records whose keys may not be their own; matching such a
record's released keys points at the wrong person, so only the records whose released keys
are all their own count (the correct matches of Shlomo and Skinner 2010, §3): the frequencies
are those of the released file, the sum runs over the unchanged records. Without this a
frequency count of PRAMed keys rises as PRAM protects more (new, rarer combinations appear),
and sdcMicro warns that its risk measures are not useful on PRAMed keys.

**Utility** (:func:`information_loss`): the share of each key's information that the release
leaves unknown, the non-uniform entropy of de Waal and Willenborg (1999) and Gionis and Tassa
(2009, §3), in bits: a record whose original value is x and released value r loses
−log₂ P(x | r), with P(x | r) the share of x among the original values of the records
released as r; a suppressed value (missing where the original is present) is the whole
domain, so it loses −log₂ P(x), all the information of the cell. Key j's loss is
Σ_i −log₂ P(x_ij | r_ij) / Σ_i −log₂ P(x_ij) = H(X_j | R_j) / H(X_j) without suppressions:
0 when every value is released as it is, 1 when every value is suppressed (or recoded to the
root of its taxonomy); the records whose original value is missing are left out (there was
nothing to lose). The comparison ranks by the mean over the keys. The same formula serves
recoding (P(x | r) is the share of x inside the recoded group), microaggregation (inside the
records given the same centroid) and PRAM (inside the records released as r), so methods
that suppress, coarsen or perturb are measured on one scale. The share of key cells changed
and suppressed are given beside it.

References
----------
de Waal, A. G. and Willenborg, L. C. R. J. (1999). Information loss through global recoding
and local suppression. *Netherlands Official Statistics* 14, 17-20.
Gionis, A. and Tassa, T. (2009). k-Anonymization with minimal loss of information. *IEEE
Transactions on Knowledge and Data Engineering* 21(2), 206-219.
Shlomo, N. and Skinner, C. (2010). Assessing the protection provided by
misclassification-based disclosure limitation methods for survey microdata. *The Annals of
Applied Statistics* 4(3), 1291-1310.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.frequencies import key_frequencies
from microagg.data.table import missing_mask
from microagg.options import MissingValues, RiskKind
from microagg.risk.individual import individual_risk

__all__ = ["KeyCoding", "KeyLoss", "KeyRiskMeasure", "KeyUtility", "information_loss",
           "released_codes"]


@dataclass(frozen=True, eq=False)
class KeyCoding:
    """The original keys coded per column (``codes``: -1 missing) and each column's list of
    values, against which released values are coded."""

    keys: tuple[str, ...]
    codes: np.ndarray
    values: tuple[pd.Index, ...]

    @classmethod
    def of(cls, frame: pd.DataFrame, keys: Sequence[str]) -> KeyCoding:
        codes, values = [], []
        for key in keys:
            column = frame[key]
            missing = missing_mask(column)
            coded, uniques = pd.factorize(column.to_numpy(dtype=object), use_na_sentinel=True)
            coded = coded.astype(np.int64)
            coded[missing] = -1
            codes.append(coded)
            values.append(pd.Index(uniques, dtype=object))
        return cls(tuple(keys), np.column_stack(codes), tuple(values))


def released_codes(coding: KeyCoding, released: Mapping[str, pd.Series]) -> np.ndarray:
    """The released keys coded against ``coding``: a released column of ``released`` by the
    original's list of values (a value the original does not hold gets a new code), a key
    ``released`` leaves out as the original's codes.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", "y", "y"], "b": [1, 2, None]})
    >>> coding = KeyCoding.of(frame, ["a", "b"])
    >>> coding.codes.tolist()
    [[0, 0], [1, 1], [1, -1]]
    >>> released_codes(coding, {"a": pd.Series(["x", "*", None])}).tolist()
    [[0, 0], [2, 1], [-1, -1]]
    """
    out = coding.codes.copy()
    for j, key in enumerate(coding.keys):
        if key not in released:
            continue
        column = released[key]
        values = column.to_numpy(dtype=object)
        missing = missing_mask(column)
        codes = coding.values[j].get_indexer(pd.Index(values, dtype=object)).astype(np.int64)
        new = (codes < 0) & ~missing
        if new.any():
            extra, _ = pd.factorize(values[new])
            codes[new] = len(coding.values[j]) + extra
        codes[missing] = -1
        out[:, j] = codes
    return out


@dataclass(frozen=True)
class KeyRiskMeasure:
    """One categorical risk of released keys (module docstring): ``kind``, the sampling
    ``weights`` (None: the sample is the population), what a missing value matches and the
    ``k`` of the violations."""

    kind: RiskKind
    weights: np.ndarray | None = field(default=None, repr=False)
    missing: MissingValues = MissingValues.MATCHES_ANY
    k: int = 5

    @property
    def label(self) -> str:
        """The measure in a few words."""
        if self.kind is RiskKind.VIOLATIONS:
            return f"violations of k = {self.k}"
        return self.kind.value.replace("-", " ").replace("reidentifications",
                                                          "re-identifications")

    def __call__(self, codes: np.ndarray, own: np.ndarray | None = None) -> float:
        """The risk of the released keys ``codes``, counting only the records whose keys
        are their ``own`` (all records when None).

        Examples
        --------
        >>> codes = np.array([[0, 0], [0, 0], [1, 0], [1, 1]])
        >>> KeyRiskMeasure(RiskKind.EXPECTED_REIDENTIFICATIONS)(codes)
        3.0
        >>> KeyRiskMeasure(RiskKind.VIOLATIONS, k=2)(codes, np.array([1, 1, 1, 0], bool))
        1.0
        """
        fk, Fk = key_frequencies(codes, self.missing, self.weights)
        counted = np.ones(fk.size, dtype=bool) if own is None else own
        if self.kind is RiskKind.VIOLATIONS:
            return float(np.count_nonzero((fk < self.k) & counted))
        risk = individual_risk(fk, Fk)
        total = float(risk[counted].sum())
        return total / fk.size if self.kind is RiskKind.GLOBAL_RISK else total

    def definition(self, weight: str | None) -> dict[str, str]:
        """The measure as a comparison states it."""
        what = {
            RiskKind.EXPECTED_REIDENTIFICATIONS: "expected re-identifications: the sum of "
            "the individual risks of the released records",
            RiskKind.GLOBAL_RISK: "global risk: the mean individual risk of the released "
            "records",
            RiskKind.VIOLATIONS: f"violations of k = {self.k}: the released records whose "
            f"key combination is shared by fewer than {self.k} records (f_k < {self.k})",
        }[self.kind]
        individual = ("Benedetti-Franconi with F_k the summed weights of '" + weight + "'"
                      if weight else "1/f_k (no sampling weight: the sample is the "
                      "population)")
        return {
            "measure": f"{what}, from the frequencies of the released key combinations "
                       "(smaller = safer)",
            "label": self.label,
            "individual risk": individual,
            "missing key values": self.missing.value,
            "randomized methods": "a record counts only when its released keys are all its "
                                  "own (PRAM: a match on changed keys points at the wrong "
                                  "person; Shlomo and Skinner 2010)",
            "reading": {
                RiskKind.EXPECTED_REIDENTIFICATIONS: "the number of records an intruder who "
                "matches key combinations against the population is expected to identify",
                RiskKind.GLOBAL_RISK: "the chance that a record drawn at random is identified "
                "by an intruder matching its key combination",
                RiskKind.VIOLATIONS: f"the records that are not {self.k}-anonymous on the "
                "keys as released",
            }[self.kind],
        }


@dataclass(frozen=True)
class KeyLoss:
    """The utility of one release of the keys: the information lost per key (a share of its
    entropy, :func:`information_loss`) and the shares of key cells changed and suppressed
    (cells whose original value is present)."""

    per_key: dict[str, float]
    changed: dict[str, float]
    suppressed: dict[str, float]

    @property
    def information_loss(self) -> float:
        """The mean over the keys of the share of information lost."""
        return float(np.mean(list(self.per_key.values())))

    @property
    def changed_percent(self) -> float:
        return 100 * float(np.mean(list(self.changed.values())))

    @property
    def suppressed_percent(self) -> float:
        return 100 * float(np.mean(list(self.suppressed.values())))


def _bits_lost(original: np.ndarray, released: np.ndarray) -> tuple[float, float]:
    """Σ −log₂ P(x | r) and Σ −log₂ P(x) over the records whose original ``x`` is present
    (a suppressed ``r`` loses −log₂ P(x))."""
    present = original >= 0
    x, r = original[present], released[present]
    if x.size == 0:
        return 0.0, 0.0
    counts = np.bincount(x)
    own = -np.log2(counts[x] / x.size)
    lost = own.copy()
    kept = r >= 0
    if kept.any():
        pair = r[kept] * (int(x.max()) + 1) + x[kept]
        _, inverse, joint = np.unique(pair, return_inverse=True, return_counts=True)
        given = np.bincount(r[kept])
        lost[kept] = -np.log2(joint[inverse] / given[r[kept]])
    return float(lost.sum()), float(own.sum())


def information_loss(coding: KeyCoding, released: np.ndarray) -> KeyLoss:
    """The information the released keys ``released`` (coded by :func:`released_codes`)
    lose against the original (module docstring).

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", "x", "y", "y"]})
    >>> coding = KeyCoding.of(frame, ["a"])
    >>> information_loss(coding, coding.codes).per_key
    {'a': 0.0}
    >>> loss = information_loss(coding, np.array([[0], [-1], [1], [1]]))
    >>> loss.per_key, loss.suppressed_percent
    ({'a': 0.25}, 25.0)
    >>> information_loss(coding, np.array([[2], [2], [2], [2]])).per_key  # recoded to "*"
    {'a': 1.0}
    """
    per_key, changed, suppressed = {}, {}, {}
    for j, key in enumerate(coding.keys):
        original, out = coding.codes[:, j], released[:, j]
        lost, total = _bits_lost(original, out)
        per_key[key] = lost / total if total > 0 else 0.0
        present = original >= 0
        cells = max(int(present.sum()), 1)
        changed[key] = float(np.count_nonzero(present & (out != original)) / cells)
        suppressed[key] = float(np.count_nonzero(present & (out < 0)) / cells)
    return KeyLoss(per_key, changed, suppressed)


@dataclass(frozen=True)
class KeyUtility:
    """The utility of a method for categorical keys at the chosen value, over ``seeds``
    releases (one for a method without randomness): the mean information loss and the
    half-width ``bound`` of its Student-t 95 % interval over the releases, per key, and the
    mean shares of key cells changed and suppressed (percent)."""

    information_loss: float
    bound: float
    per_key: dict[str, float]
    changed_percent: float
    suppressed_percent: float
    seeds: int = 1

    name: ClassVar[str] = "information_loss"
    columns: ClassVar[tuple[str, ...]] = ("information loss ± uncertainty", "cells changed %",
                                          "cells suppressed %")

    @property
    def loss(self) -> float:
        """The measure methods are ranked on (smaller = better)."""
        return self.information_loss

    @property
    def interval(self) -> tuple[float, float]:
        return (self.information_loss - self.bound, self.information_loss + self.bound)

    def summary(self) -> str:
        return f"information loss {self.information_loss:.4g} ± {self.bound:.2g}"

    def cells(self) -> tuple[float | str | None, ...]:
        return (f"{self.information_loss:.4g} ± {self.bound:.2g}", self.changed_percent,
                self.suppressed_percent)

    def to_dict(self) -> dict[str, Any]:
        return {"information_loss": self.information_loss, "bound": self.bound,
                "per_key": self.per_key, "cells_changed_percent": self.changed_percent,
                "cells_suppressed_percent": self.suppressed_percent, "seeds": self.seeds}
