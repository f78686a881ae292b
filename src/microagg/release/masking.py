"""A masked release by one of the methods of :mod:`microagg.core.masking` (003 §5): the chosen
numeric columns are masked, identifiers dropped, every other column and every row kept in
order. A masking method gives no ex-ante guarantee; the report says so and points to the
measures of its risk."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from microagg.core.masking import correlated_noise, multiplicative_noise, rank_swap
from microagg.core.mechanisms import make_rng
from microagg.data.schema import Role, Schema
from microagg.data.table import encode
from microagg.errors import InputError
from microagg.options import MaskMethod, parse
from microagg.release.base import Release
from microagg.release.inputs import masked_columns
from microagg.release.report import MaskingReport

__all__ = ["PARAMETERS", "mask"]

PARAMETERS = {
    MaskMethod.CORRELATED_NOISE: "gamma",
    MaskMethod.MULTIPLICATIVE_NOISE: "s",
    MaskMethod.RANK_SWAP: "fraction",
}
"""The name of each method's parameter (γ of Y = X + N(0, γΣ); Höhne's s; the swap window as
a fraction of the records)."""

_MASKS = {
    MaskMethod.CORRELATED_NOISE: correlated_noise,
    MaskMethod.MULTIPLICATIVE_NOISE: multiplicative_noise,
    MaskMethod.RANK_SWAP: rank_swap,
}


UNCHANGED = 1e-9
"""A masking that moves no value by more than this fraction of its column's range changes
nothing a reader could see (a CSV release prints 15 significant digits)."""


def _check_masked(values: np.ndarray, masked: np.ndarray, names: Sequence[str],
                  method: MaskMethod, param: float) -> None:
    """Refuse a masked table that is not one: values that overflowed, or no value changed."""
    what = f"{method.value} with {PARAMETERS[method]} = {param:g}"
    bad = ~np.isfinite(masked)
    if bad.any():
        column = names[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise InputError(f"{what} overflows: column '{column}' would hold values beyond the "
                         "floating-point range; use a smaller parameter")
    spread = np.ptp(values, axis=0)
    moved = np.abs(masked - values).max(axis=0)
    if np.all(moved <= UNCHANGED * np.where(spread > 0, spread, np.abs(values).max(axis=0))):
        raise InputError(f"{what} changes no value beyond rounding (every value moves by less "
                         f"than {UNCHANGED:g} of its column's range): the table would be "
                         "written as it is and called masked; use a larger parameter")


def mask(frame: pd.DataFrame, *, method: MaskMethod | str, param: float,
         columns: Sequence[str] | None = None, schema: Schema | None = None,
         rng: np.random.Generator | int | None = None) -> Release:
    """Mask ``columns`` of ``frame`` (default: the schema's quasi-identifiers, else every
    numeric non-identifier column; the report lists the columns written unchanged) with
    ``method`` and its parameter ``param``."""
    method = parse(MaskMethod, method, "method")
    declared = schema is not None
    schema = schema.complete(frame) if schema is not None else Schema.infer(frame)
    if columns or declared:
        names = masked_columns(schema, columns, declared=declared)
    else:
        names = [a.name for a in schema if a.role is not Role.IDENTIFIER and a.is_numeric]
        if not names:
            raise InputError("no numeric column to mask: name them with --columns")
    text = [c for c in names if not schema[c].is_numeric]
    if text:
        raise InputError(f"column '{text[0]}' is not numeric; {method.value} masks numeric "
                         "attributes only (choose others with --columns)")
    undeclared = Schema(tuple(replace(schema[c], domain=None) for c in names))
    values = encode(frame[names], undeclared).numeric_matrix(names)
    if not param > 0:
        raise InputError(f"the parameter {PARAMETERS[method]} must be positive, got "
                         f"{param:g}: {method.value} with {PARAMETERS[method]} = 0 masks "
                         "nothing")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below
        try:
            masked = _MASKS[method](values, param, rng=make_rng(rng))
        except np.linalg.LinAlgError:  # a covariance that overflowed has no eigenvalues
            masked = np.full_like(values, np.nan)
    _check_masked(values, masked, names, method, param)
    identifiers = [a.name for a in schema if a.role is Role.IDENTIFIER]
    out = frame.drop(columns=identifiers).copy()
    for j, name in enumerate(names):
        out[name] = masked[:, j]
    report = MaskingReport(
        method=method.value, parameter=PARAMETERS[method], value=float(param), columns=names,
        records=len(frame), identifiers_dropped=identifiers,
        released_unchanged=[c for c in out.columns if c not in names],
        seeded=isinstance(rng, int | np.integer))
    return Release(out, np.arange(len(frame), dtype=np.int64), report)
