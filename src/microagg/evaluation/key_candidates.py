"""The candidates of a comparison of methods for categorical keys
(:mod:`microagg.evaluation.key_compare`): each method with the one parameter the comparison
calibrates, its range, and its release of the keys coded for measuring
(:func:`~microagg.evaluation.key_measures.released_codes`).

Every candidate runs the method object's own step (``protect`` of the keys family,
:mod:`microagg.release.families.keys`; the k-anonymity family's release for MDAV), so a calibrated
value releases what the command with that value writes:

* ``local-suppression``: k in [2, :data:`KEY_K_MAX`] (searched on its logarithm);
* ``recode-then-suppress``: the keys recoded at the fixed level ``recode_level``, then local
  suppression with k calibrated as above;
* ``global-recoding``: the level L in [1, H]: each recoded key goes L steps up its taxonomy
  (at most to its root), a numeric key with an interval width w to intervals of width
  w·2^(L−1) (nested: each level merges pairs of the previous one's intervals) from the low
  end of its domain; H is the tallest recoded key's number of levels;
* ``invariant-pram``: the retention probability in [0, 0.999] (less is safer), with the
  method's α = 0.5; randomized, so its measures are means over seeds;
* ``mdav``: k in [2, :data:`KEY_K_MAX`]: the keys microaggregated by MDAV (numbers replaced
  by cluster means, categories by the cluster's marginality centroid, 000 eq. 5).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.data.taxonomy import Taxonomy
from microagg.errors import InputError
from microagg.evaluation.calibration import Candidate
from microagg.evaluation.compared_methods import candidate
from microagg.evaluation.key_measures import KeyCoding, released_codes
from microagg.options import CompareMethod
from microagg.release.families.keys import KeyData, KeyMethod
from microagg.release.methods.global_recoding import GlobalRecoding
from microagg.release.methods.local_suppression import LocalSuppression
from microagg.release.methods.mdav import MDAV
from microagg.release.methods.pram import MAX_CATEGORIES, InvariantPram

__all__ = ["KEY_K_MAX", "PRAM_RETENTION_MAX", "KeyInput", "Recoding", "key_candidates",
           "parse_widths", "recodings"]

KEY_K_MAX = 1000
"""The largest k a comparison of key methods tries (and n / 2): a class of a thousand
records is far beyond any k a statistical office asks for, and local suppression slows as k
grows."""

PRAM_RETENTION_MAX = 0.999
"""The least protective retention PRAM is tried at (at 1 nothing would change)."""


@dataclass(frozen=True)
class Recoding:
    """How the recoding candidates recode one key: up its taxonomy, or (a numeric key) to
    intervals of width ``width`` · 2^(L−1) from ``low``; ``height`` levels in all."""

    key: str
    height: int
    width: float | None = None
    low: float = 0.0
    high: float = 0.0
    declared: bool = True  # the numeric domain is declared (else read off the data)

    def breaks(self, level: int) -> tuple[float, ...]:
        """The interval breaks at ``level`` (numeric keys)."""
        assert self.width is not None
        width = self.width * 2.0 ** (min(level, self.height) - 1)
        count = max(1, math.ceil((self.high - self.low) / width - 1e-12))
        return tuple(float(self.low + width * i) for i in range(count + 1))

    def describe(self) -> str:
        if self.width is None:
            return f"{self.key}: L steps up its taxonomy ({self.height} levels)"
        start = (f"{self.low:g}, the low end of its declared domain" if self.declared
                 else "its smallest value")
        return (f"{self.key}: intervals of width {self.width:g}·2^(L-1) from {start} "
                f"({self.height} levels)")


def parse_widths(text: str) -> dict[str, float]:
    """Interval widths written ``age=5, hours=10`` as a mapping of key to width (checked
    against the keys by :func:`recodings`).

    Examples
    --------
    >>> parse_widths("age=5, hours-per-week=10")
    {'age': 5.0, 'hours-per-week': 10.0}
    """
    out = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, equals, value = part.rpartition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            equals = ""
        if not equals or not name.strip():
            raise InputError(f"`widths` takes KEY=WIDTH pairs separated by commas (e.g. "
                             f"age=5), got '{part}'")
    return out


def recodings(frame: pd.DataFrame, schema: Schema, keys: Sequence[str],
              recode: Sequence[str] | None, widths: Mapping[str, float] | str | None
              ) -> dict[str, Recoding]:
    """The keys the recoding candidates recode (``recode``; default: every key with a
    taxonomy in ``schema`` or an interval width in ``widths``, a mapping or text such as
    ``age=5``) and how."""
    widths = parse_widths(widths) if isinstance(widths, str) else dict(widths or {})
    for key, width in widths.items():
        if key not in keys:
            raise InputError(f"`widths` names '{key}', which is not one of the keys")
        if not schema[key].is_numeric:
            raise InputError(f"`widths`: key '{key}' is {schema[key].kind}; an interval width "
                             "recodes a numeric key (a categorical one goes up its taxonomy)")
        if not (isinstance(width, int | float) and math.isfinite(width) and width > 0):
            raise InputError(f"`widths`: the width of '{key}' must be a positive number, "
                             f"got {width!r}")
    chosen = (list(recode) if recode is not None else
              [k for k in keys if schema[k].taxonomy is not None or k in widths])
    out = {}
    for key in chosen:
        if key not in keys:
            raise InputError(f"`recode` names '{key}', which is not one of the keys")
        if key in widths:
            out[key] = _numeric(frame, schema, key, float(widths[key]))
        elif schema[key].taxonomy is not None:
            taxonomy = Taxonomy.load(schema[key].taxonomy)  # type: ignore[arg-type]
            out[key] = Recoding(key, max(1, int(taxonomy.depth().max()) - 1))
        else:
            raise InputError(f"`recode` names '{key}', which has no taxonomy (declare one in "
                             "the schema) nor an interval width (`widths`)")
    return out


def _numeric(frame: pd.DataFrame, schema: Schema, key: str, width: float) -> Recoding:
    bounds = schema[key].bounds
    values = pd.to_numeric(frame[key], errors="coerce").to_numpy(dtype=np.float64)
    present = values[~np.isnan(values)]
    if bounds is None and present.size == 0:
        raise InputError(f"`widths`: key '{key}' has no values to recode")
    low, high = bounds if bounds is not None else (float(present.min()), float(present.max()))
    height = 1
    while width * 2.0 ** (height - 1) < high - low:
        height += 1
    return Recoding(key, height, width, low, high, bounds is not None)


@dataclass(frozen=True, eq=False)
class KeyInput:
    """What every candidate reads: the keys (and the weight) with their schema and design
    (``data``), the original keys coded for measuring, the recodings, the fixed level of
    ``recode-then-suppress``, and the releases of recoding already made (by level)."""

    data: KeyData
    coding: KeyCoding
    recodings: dict[str, Recoding]
    recode_level: int = 1
    _recoded: dict[int, dict[str, pd.Series]] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.data.frame)

    @property
    def height(self) -> int:
        """The number of levels of the tallest recoded key."""
        return max((r.height for r in self.recodings.values()), default=0)

    def recoded(self, level: int) -> dict[str, pd.Series]:
        """The recoded keys at ``level`` (made once per level)."""
        if level not in self._recoded:
            method = GlobalRecoding(
                levels=tuple((r.key, min(level, r.height)) for r in self.recodings.values()
                             if r.width is None),
                breaks=tuple((r.key, r.breaks(level)) for r in self.recodings.values()
                             if r.width is not None))
            self._recoded[level] = dict(self.protect(method, self.data, 0))
        return self._recoded[level]

    def protect(self, method: KeyMethod, data: KeyData,
                rng: np.random.Generator | int) -> dict[str, pd.Series]:
        """The columns a method of the keys family changes on ``data``."""
        return method.protect(data, np.random.default_rng(rng)).columns

    def codes(self, columns: Mapping[str, pd.Series]) -> np.ndarray:
        return released_codes(self.coding, columns)


Release = Callable[[np.ndarray, float, np.random.Generator], np.ndarray]


def _suppress(inp: KeyInput, recode_first: bool) -> Release:
    def release(_x: np.ndarray, k: float, rng: np.random.Generator) -> np.ndarray:
        data = inp.data
        recoded: dict[str, pd.Series] = {}
        if recode_first:
            recoded = inp.recoded(inp.recode_level)
            data = KeyData(data.frame.assign(**recoded), data.schema, data.keys, data.design,
                           data.stratum_names)
        suppressed = inp.protect(LocalSuppression(k=int(k)), data, rng)
        return inp.codes({**recoded, **suppressed})
    return release


def _recode(inp: KeyInput) -> Release:
    def release(_x: np.ndarray, level: float, _rng: np.random.Generator) -> np.ndarray:
        return inp.codes(inp.recoded(int(level)))
    return release


def _pram(inp: KeyInput) -> Release:
    def release(_x: np.ndarray, retention: float, rng: np.random.Generator) -> np.ndarray:
        return inp.codes(inp.protect(InvariantPram(retention=float(retention)), inp.data,
                                     rng))
    return release


def _mdav(inp: KeyInput) -> Release:
    data = inp.data

    def release(_x: np.ndarray, k: float, _rng: np.random.Generator) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            done = MDAV(k=int(k)).release(data.frame, schema=data.schema, columns=data.keys)
        return inp.codes({key: done.frame[key] for key in data.keys})
    return release


def key_candidates(inp: KeyInput) -> tuple[dict[CompareMethod, Candidate],
                                           dict[CompareMethod, str]]:
    """The candidates on ``inp`` (module docstring), and for every method for keys why it
    cannot be compared on this data ("" when it can)."""
    top = max(2, min(KEY_K_MAX, inp.n // 2))
    levels = "; ".join(r.describe() for r in inp.recodings.values())
    many = [key for key, values in zip(inp.coding.keys, inp.coding.values, strict=True)
            if len(values) > MAX_CATEGORIES]
    table = [
        candidate(CompareMethod.LOCAL_SUPPRESSION, 2, top, _suppress(inp, False),
                  "the least important keys (most categories) are suppressed first, as "
                  "sdcMicro's default", log=True),
        candidate(CompareMethod.MDAV, 2, top, _mdav(inp),
                  "MDAV on the keys: numbers replaced by cluster means, categories by the "
                  "cluster's marginality centroid; missing values stay missing",
                  log=True),
        candidate(CompareMethod.INVARIANT_PRAM, 0.0, PRAM_RETENTION_MAX, _pram(inp),
                  "alpha = 0.5 (the method's default); a record counts for the risk only "
                  "when PRAM kept all its keys", log=False),
    ]
    reasons = {CompareMethod.LOCAL_SUPPRESSION: "", CompareMethod.MDAV: "",
               CompareMethod.INVARIANT_PRAM: (
                   f"key '{many[0]}' has more than {MAX_CATEGORIES} values, too many for "
                   "PRAM's matrix (recode it first)" if many else "")}
    recodable = ("" if inp.recodings else "no key has a taxonomy (declare one in the schema) "
                 "nor an interval width (`widths`)")
    reasons[CompareMethod.GLOBAL_RECODING] = recodable
    reasons[CompareMethod.RECODE_THEN_SUPPRESS] = recodable
    if inp.recodings:
        table += [
            candidate(CompareMethod.GLOBAL_RECODING, 1, inp.height, _recode(inp),
                      f"level L: {levels}"),
            candidate(CompareMethod.RECODE_THEN_SUPPRESS, 2, top, _suppress(inp, True),
                      f"recoded at level L = {inp.recode_level} first ({levels}), then "
                      "local suppression", log=True),
        ]
    return {c.method: c for c in table}, reasons
