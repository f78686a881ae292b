"""One entry point for the DP releases, which checks that every option given applies to the
chosen method (an option a method would ignore is an error, not silence)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.options import DPMethod, parse
from microagg.release.base import Release
from microagg.release.baselines import dp_laplace
from microagg.release.clipping import Clipping
from microagg.release.dp_insensitive import dp_insensitive
from microagg.release.dp_moments import dp_cross_moment
from microagg.release.dp_ranking import dp_individual_ranking

__all__ = ["dp_release"]


def _refuse(option: str, value: object, method: DPMethod, applies: str) -> None:
    if value is not None:
        raise InputError(f"{option} applies to {applies} only, not --method {method.value}")


def dp_release(frame: pd.DataFrame, *, method: DPMethod | str, epsilon: float,
               k: int | None = None, schema: Schema | None = None,
               columns: Sequence[str] | None = None, carry: Sequence[str] = (),
               bounds: Mapping[str, tuple[float, float]] | None = None,
               bounds_from_data: bool = False, reference: str | None = None,
               calibration: str | None = None, linkage: str | None = None,
               rng: np.random.Generator | int | None = None, drop_incomplete: bool = False,
               threads: int | None = None,
               progress: Callable[[int], None] | None = None,
               moments: int | None = None, noise: str | None = None,
               strategy: Sequence[float] | None = None, clustering: str | None = None,
               variant: str | None = None, coskewness: str | None = None,
               groups: Sequence[Sequence[str]] | None = None,
               clip: Clipping | None = None) -> Release:
    """The DP release of ``method`` (``insensitive``: 000 Alg. 3-4; ``individual-ranking``:
    001 Alg. 1-2; ``laplace``: noise on every record; ``cross-moment``: 004 Alg. 1-3).
    Options left ``None`` take the method's default; an option the method does not use is
    refused. ``clip`` (every method) first clips the numeric domains at DP quantiles."""
    method = parse(DPMethod, method, "method")
    common = {"schema": schema, "columns": columns, "carry": carry, "bounds": bounds,
              "bounds_from_data": bounds_from_data, "rng": rng,
              "drop_incomplete": drop_incomplete, "clip": clip}
    if method not in (DPMethod.INSENSITIVE, DPMethod.CROSS_MOMENT):
        _refuse("--threads", threads, method, "--method insensitive and cross-moment")
    if method is not DPMethod.INSENSITIVE:
        _refuse("--reference", reference, method, "--method insensitive")
    if method is not DPMethod.CROSS_MOMENT:
        for option, value in (("--moments", moments), ("--noise", noise),
                              ("--strategy", strategy), ("--clustering", clustering),
                              ("--variant", variant), ("--coskewness", coskewness),
                              ("--groups", groups)):
            _refuse(option, value, method, "--method cross-moment")
    if method not in (DPMethod.INDIVIDUAL_RANKING, DPMethod.CROSS_MOMENT):
        _refuse("--linkage", linkage, method, "--method individual-ranking and cross-moment")
    if method is DPMethod.LAPLACE:
        _refuse("--k", k, method, "microaggregation methods (insensitive, individual-ranking)")
        return dp_laplace(frame, epsilon=epsilon, calibration=calibration or "correct",
                          **common)
    if k is None:
        raise InputError(f"--method {method.value} needs --k")
    if method is DPMethod.CROSS_MOMENT:
        if moments == 0:
            for option, value in (("--variant", variant), ("--noise", noise),
                                  ("--strategy", strategy)):
                if value is not None:
                    raise InputError(f"{option} shapes the covariance and higher moments; "
                                     "--moments 0 releases the means only")
        _refuse("--calibration", calibration, method,
                "--method insensitive and laplace (cross-moment works on the unit domain, "
                "docs/algorithms.md)")
        return dp_cross_moment(
            frame, epsilon=epsilon, k=k, moments=1 if moments is None else moments,
            noise=noise or "joint", strategy=strategy, clustering=clustering or "insensitive",
            variant=variant or "pure", coskewness=coskewness, groups=groups,
            linkage=linkage, threads=threads, progress=progress, **common)
    if method is DPMethod.INDIVIDUAL_RANKING:
        _refuse("--calibration", calibration, method,
                "--method insensitive and laplace (individual ranking always gives each "
                "attribute ε/m, 001 Alg. 1)")
        return dp_individual_ranking(frame, epsilon=epsilon, k=k,
                                     linkage=linkage or "unlinked", **common)
    return dp_insensitive(frame, epsilon=epsilon, k=k, reference=reference or "corners",
                          calibration=calibration or "correct", threads=threads,
                          progress=progress, **common)
