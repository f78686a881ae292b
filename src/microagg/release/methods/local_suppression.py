"""Local suppression of key values to k-anonymity (sdcMicro ``localSuppression``/``kAnon``;
μ-ARGUS local suppression)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.frequencies import key_codes
from microagg.core.verifiers import k_anonymity
from microagg.data.table import missing_mask
from microagg.errors import InputError, ParameterError
from microagg.options import MissingValues
from microagg.release.families.keys import KeyData, KeyMethod, KeyStep, column_names, with_missing
from microagg.release.methods.base import release_method
from microagg.release.params import Interval, Optional, Predicate, param
from microagg.release.reports.key_reports import RISK_KS, KeyRisk, SuppressionReport
from microagg.release.reports.report import Anonymity

if TYPE_CHECKING:
    from collections.abc import Iterable

    from microagg.core.suppression import Constraint

__all__ = ["LocalSuppression"]


def _sizes(name: str, value: Any) -> tuple[int, ...]:
    parts = value.split(",") if isinstance(value, str) else value
    try:
        sizes = tuple(int(str(p).strip()) for p in parts)
    except (TypeError, ValueError):
        raise ParameterError(name, f"must be numbers of keys such as 3,4, got {value!r}"
                             ) from None
    if not sizes or min(sizes) < 1:
        raise ParameterError(name, f"must be numbers of keys of at least 1, got {value!r}")
    return tuple(dict.fromkeys(sizes))


@release_method
class LocalSuppression(KeyMethod):
    """Local suppression: the fewest key values this method finds are made missing so that
    every record shares its key values with at least k - 1 others, a missing value matching
    any value (sdcMicro's ``alpha = 1``). A greedy pass gives each record below k, the most
    at risk first, the smallest set of suppressions that makes it k-anonymous at once (the
    least important keys among sets of that size); a second pass puts back every value
    whose return keeps the table k-anonymous (:mod:`microagg.core.suppression`). The result
    is verified on the written table by the independent counting of
    :mod:`microagg.core.frequencies`. Each stratum is made k-anonymous on its own.

    Unlike sdcMicro's heuristic, which suppresses one key of a record at a time towards its
    nearest neighbours and checks again after each pass over the records, a set chosen here
    is the cheapest that makes the record k-anonymous given the table as it is; on UCI Adult
    (7 keys, k = 5) it suppresses about a third as many values (docs/reproduction.md).
    sdcMicro has no weighted variant (its frequencies here are sample counts), nor has this
    method: a declared weight is written unchanged.

    References
    ----------
    Hundepool, A. et al. (2012), *Statistical Disclosure Control*, Wiley, §3.4.6 (local
    suppression); Templ, M. (2017), *Statistical Disclosure Control for Microdata*, Springer,
    §3.6 (sdcMicro's ``localSuppression``); Samarati, P. (2001), Protecting respondents'
    identities in microdata release, IEEE TKDE 13(6) (k-anonymity by suppression).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": ["m", "m", "m", "f", "f", "f"],
    ...                       "region": ["a", "a", "b", "b", "b", "a"]})
    >>> release = LocalSuppression(k=2).release(frame, keys=["sex", "region"])
    >>> release.frame["region"].tolist(), release.report.suppressions
    (['a', 'a', nan, 'b', 'b', nan], {'sex': 0, 'region': 2})
    >>> release.report.k_anonymity.holds
    True
    """

    name: ClassVar[str] = "local-suppression"
    summary: ClassVar[str] = "local suppression of key values to k-anonymity"
    command: ClassVar[str] = "suppress"
    report_type: ClassVar[type[SuppressionReport]] = SuppressionReport

    k: int = param(Interval(int, 2, hint="with k = 1 every record is k-anonymous as it is"),
                   help="Every record shares its key values with at least k - 1 others.")
    importance: tuple[str, ...] | None = param(
        Optional(Predicate(column_names, "key names")), default=None,
        help="The keys from the most important (suppressed last) to the least important; "
             "keys not named come after (default: a key with more categories is less "
             "important, as sdcMicro).")
    combinations: tuple[int, ...] | None = param(
        Optional(Predicate(_sizes, "numbers of keys")), default=None,
        help="Make every set of this many keys k-anonymous (e.g. 3,4) instead of all the "
             "keys together (sdcMicro's combs).")

    def smallest_stratum(self) -> int:
        return self.k

    def risk_ks(self) -> tuple[int, ...]:
        return (*RISK_KS, self.k)

    def rank(self, codes: np.ndarray, keys: list[str]) -> np.ndarray:
        """Each key's rank (0: the least important), from ``importance`` and the default.

        Parameters
        ----------
        codes : numpy.ndarray
            The codes of the keys (:func:`~microagg.core.frequencies.key_codes`).
        keys : list of str
            Their names.

        Returns
        -------
        numpy.ndarray
            One int64 rank per key.
        """

        from microagg.core.suppression import default_importance

        default = default_importance(codes)
        listed = list(self.importance or ())
        for name in listed:
            if name not in keys:
                raise InputError(f"`importance` names '{name}', which is not one of the keys "
                                 f"({', '.join(keys)})")
        rest = sorted((k for k in keys if k not in listed),
                      key=lambda k: -default[keys.index(k)])
        order = [*listed, *rest]  # the most important first
        return np.array([len(keys) - 1 - order.index(k) for k in keys], dtype=np.int64)

    def _constraints(self, q: int) -> list[Constraint] | None:
        from microagg.core.suppression import Constraint

        if not self.combinations:
            return None
        too_large = [s for s in self.combinations if s > q]
        if too_large:
            raise InputError(f"`combinations` asks for sets of {too_large[0]} keys, but there "
                             f"are {q}")
        return [Constraint(columns, self.k) for size in self.combinations
                for columns in itertools.combinations(range(q), size)]

    def suppressed(self, codes: np.ndarray, keys: list[str],
                   strata: Iterable[np.ndarray] | None = None) -> tuple[np.ndarray, int, int]:
        """Which key values to suppress, from the codes of the keys alone.

        Parameters
        ----------
        codes : numpy.ndarray
            The ``(n, len(keys))`` codes of :func:`~microagg.core.frequencies.key_codes`
            (numbered by first appearance, -1 where missing).
        keys : list of str
            The keys' names, for ``importance``.
        strata : iterable of numpy.ndarray, optional
            The rows of each stratum, each made k-anonymous on its own (default: one).

        Returns
        -------
        tuple
            The ``(n, len(keys))`` boolean mask of the values to suppress, and the
            suppressions of the greedy pass and the values put back by the second.
        """
        from microagg.core.suppression import local_suppression

        rank = self.rank(codes, keys)
        constraints = self._constraints(len(keys))
        suppressed = np.zeros(codes.shape, dtype=bool)
        greedy = restored = 0
        if strata is None:  # the codes as they are: a copy of 10^7 records is 0.5 GB
            done = local_suppression(codes, self.k, importance=rank, constraints=constraints)
            return done.suppressed, done.greedy, done.restored
        for rows in strata:
            done = local_suppression(codes[rows], self.k, importance=rank,
                                     constraints=constraints)
            suppressed[rows] = done.suppressed
            greedy += done.greedy
            restored += done.restored
        return suppressed, greedy, restored

    def at_scale_refusal(self) -> str | None:
        """``None``: the Dask engine gathers the codes of the keys and suppresses them as
        one machine does (:mod:`microagg.at_scale.suppress`); sets of ``combinations``
        are checked on one machine."""
        if self.combinations:
            return ("`combinations` is checked on one machine: leave it out to make all "
                    "the keys together k-anonymous")
        return None

    def protect(self, data: KeyData, rng: np.random.Generator) -> KeyStep:
        keys = data.keys
        codes = key_codes(data.frame, keys)
        suppressed, greedy, restored = self.suppressed(
            codes, keys, [rows for rows, _ in data.strata()])
        columns = {key: with_missing(data.frame[key], suppressed[:, j])
                   for j, key in enumerate(keys) if suppressed[:, j].any()}
        rank = self.rank(codes, keys)
        by_importance = sorted(keys, key=lambda k: -rank[keys.index(k)])
        notes = ["a suppressed value is written as a missing value; k-anonymity counts a "
                 "missing value as matching any value (sdcMicro's alpha = 1)"]
        if not suppressed.any():
            notes.append(f"nothing was suppressed: the keys were {self.k}-anonymous as they "
                         "were")
        if data.design.weight is not None:
            notes.append("the suppressions do not depend on the weight: k-anonymity is a "
                         "property of the sample (sdcMicro's localSuppression has no weighted "
                         "variant)")
        return KeyStep(columns, {
            "k": self.k, "importance": by_importance,
            "combinations": list(self.combinations) if self.combinations else None,
            "suppressions": {key: int(suppressed[:, j].sum()) for j, key in enumerate(keys)},
            "total_suppressions": int(suppressed.sum()),
            "missing_before": {key: int(missing_mask(data.frame[key]).sum()) for key in keys},
            "greedy_suppressions": greedy, "restored": restored}, notes)

    def verify(self, written: pd.DataFrame, data: KeyData, after: KeyRisk
               ) -> dict[str, Any]:
        """k-anonymity of the written table, in each stratum, for all the keys (``after``)
        or for each set of ``combinations`` of them."""
        if not self.combinations:
            smallest = after.smallest_class
        else:
            smallest = len(written)
            for rows, _ in data.strata():
                part = written.iloc[rows]
                for size in self.combinations:
                    for chosen in itertools.combinations(data.keys, size):
                        smallest = min(smallest, k_anonymity(
                            part, chosen, MissingValues.MATCHES_ANY).smallest_class)
        return {"k_anonymity": Anonymity(smallest, after.classes, smallest >= self.k,
                                         after.all_missing)}
