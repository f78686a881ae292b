"""The differentially private releases: the family's pipeline, which holds every shared rule
once (docs/design.md, "Differential privacy: the rules"), around each method's own step.

:meth:`DPMethod.release`: the rng and whether it was seeded; the input prepared under declared
domains (:func:`~microagg.release.inputs.prepare_dp`: identifiers and unprotected columns
dropped, values clamped); the check of k against n; the ε ledger
(:class:`~microagg.release.dp.mechanisms.Budget`, where every split of ε is made); the domains
clipped at DP quantiles when asked (:mod:`~microagg.release.dp.clipping`); the method's step
(:meth:`DPMethod.step`), which returns a :class:`DPStep`; and the written table, in random row
order with types from the schema, with its privacy report and, when the release is weaker than
plain ε-DP, one :class:`~microagg.errors.PrivacyLeakWarning` pointing at the caller's line
(:func:`~microagg.release.dp.publish.publish_dp`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.data.schema import Role, Schema
from microagg.errors import ParameterError
from microagg.partition._validate import check_k
from microagg.release.base import Release
from microagg.release.dp.clipping import DEFAULT_SHARE, Clipping, clip_domains
from microagg.release.dp.mechanisms import MAX_EPSILON, Budget, make_rng
from microagg.release.dp.step import DPStep
from microagg.release.dp.unit import PrivacyUnit
from microagg.release.inputs import DPInput, prepare_dp
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.params import Interval, Optional, Predicate, param
from microagg.release.reports.report import PrivacyReport

__all__ = ["DPMethod", "DPStep", "small_k_warnings"]

Progress = Callable[[int], None]


def small_k_warnings(k: int, n: int) -> list[str]:
    """The report's warning when k < √n (000 §4): then plain noise would be smaller."""
    if k * k >= n:
        return []
    return [f"k = {k} is below sqrt(n) = {n ** 0.5:.1f}: the centroids' sensitivity "
            "c * sum(width) / k exceeds a single record's, so plain Laplace noise on the "
            "records would add less noise"]


def _clipping(name: str, value: Any) -> Clipping | None:
    """``clip``: a :class:`Clipping`, a quantile Q (the upper bound), a pair (P, Q), or the
    text "Q" or "P,Q"."""
    if value is None or isinstance(value, Clipping):
        return value
    try:
        if isinstance(value, str):
            return Clipping.parse(value)
        if isinstance(value, int | float):
            return Clipping(0.0, float(value))
        low, high = value
        return Clipping(float(low), float(high))
    except (TypeError, ValueError) as exc:
        raise ParameterError(name, f"takes a quantile Q or a pair P, Q: {exc}") from None


@dataclass(frozen=True, kw_only=True)
class DPMethod(ReleaseMethod):
    """An ε-differentially private release: the pipeline of the module docstring around the
    method's :meth:`step`. Every method has the budget ``epsilon`` and may clip its numeric
    domains at DP quantiles first (``clip``, ``clip_share``)."""

    family: ClassVar[Family] = Family.DIFFERENTIAL_PRIVACY
    uses_threads: ClassVar[bool] = False
    description: ClassVar[str]

    epsilon: float = param(Interval(float, 0, MAX_EPSILON, closed="right",
                                    hint="a guarantee of e^epsilon beyond that protects "
                                         "nothing, and the noise computations lose their "
                                         "precision"),
                           help="Privacy budget epsilon (> 0).")
    clip: Clipping | None = param(
        Predicate(_clipping, "a quantile Q, or P,Q"), default=None,
        help="Clip the numeric domains at differentially private quantiles first: Q (upper "
             "bound at quantile Q, e.g. 0.95) or P,Q (both ends). Less noise on heavy-tailed "
             "columns, values beyond the bounds clamped.")
    clip_share: float | None = param(
        Optional(Interval(float, 0, 1, closed="neither")), default=None,
        help=f"With `clip`: the share of epsilon spent on the bounds (default {DEFAULT_SHARE}).")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.clip_share is not None:
            if self.clip is None:
                raise ParameterError("clip_share", "applies with `clip` only")
            object.__setattr__(self, "clip", Clipping(self.clip.low, self.clip.high,
                                                      self.clip_share))

    @property
    def k_or_none(self) -> int | None:
        return getattr(self, "k", None)

    def step(self, data: DPInput, budget: Budget, rng: np.random.Generator, *,
             threads: int | None, progress: Progress | None) -> DPStep:
        """The method's own work on the prepared input: spend ``budget`` (what clipping left
        of it) and return what to publish."""
        raise NotImplementedError

    def release(self, frame: pd.DataFrame, *, schema: Schema | None = None,
                columns: Sequence[str] | None = None, carry: Sequence[str] = (),
                bounds: Mapping[str, tuple[float, float]] | None = None,
                bounds_from_data: bool = False, rng: np.random.Generator | int | None = None,
                drop_incomplete: bool = False,
                roles: Mapping[str, Role | str] | None = None, threads: int | None = None,
                progress: Progress | None = None, household_size: int | None = None
                ) -> Release[PrivacyReport]:
        """The ε-DP release of ``frame``.

        Protects ``columns`` (default: every non-identifier column) and drops the others
        but ``carry``, copied unchanged (the table is then not DP). Domains are declared in
        the ``schema`` or ``bounds`` (never read off the data unless ``bounds_from_data``,
        and the report then says the release is not DP). Rows are written in random order.
        An integer ``rng`` is a seed: the report and a
        :class:`~microagg.errors.PrivacyLeakWarning` say that a known seed removes the noise;
        without one, OS entropy. ``threads`` caps the threads of the methods that split
        their passes; ``progress`` is called with the records clustered so far.
        ``household_size`` bounds the records of a household (the column of role household):
        the release then protects one household at ``epsilon``, every mechanism running at
        epsilon / household_size (:class:`~microagg.release.dp.unit.PrivacyUnit`).
        """
        from microagg.release.dp.publish import publish_dp

        if threads is not None and not self.uses_threads:
            raise ParameterError("threads", f"applies to the methods that split their passes "
                                 f"between threads, not {self.name}")
        seeded = rng is not None and not isinstance(rng, np.random.Generator)
        generator = make_rng(rng)
        data = prepare_dp(frame, schema=schema, columns=columns, carry=carry, bounds=bounds,
                          bounds_from_data=bounds_from_data, drop_incomplete=drop_incomplete,
                          roles=roles)
        if self.k_or_none is not None:
            check_k(self.k_or_none, data.n)
        unit = PrivacyUnit.of(frame, schema, roles, household_size)
        budget = Budget(unit.record_epsilon(self.epsilon))
        data, clip_entries = clip_domains(data, self.clip, budget, generator)
        step = self.step(data, budget, generator, threads=threads, progress=progress)
        return publish_dp(data, step, budget=budget, k=self.k_or_none, rng=generator,
                          seeded=seeded, clip_entries=clip_entries, unit=unit,
                          unit_epsilon=self.epsilon)
