"""A masked release by one of the methods of :mod:`microagg.masking` (003 §5): the chosen
numeric columns are masked, identifiers dropped, every other column and every row kept in
order. A masking method gives no ex-ante guarantee; the report says so and points to the
measures of its risk."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from microagg.errors import InputError
from microagg.masking import correlated_noise, multiplicative_noise, rank_swap
from microagg.mechanisms import make_rng
from microagg.options import MaskMethod, parse
from microagg.release.base import Release
from microagg.release.inputs import masked_columns
from microagg.release.report import MaskingReport
from microagg.schema import Role, Schema

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
    values = frame[names].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        bad = names[int(np.flatnonzero(~np.isfinite(values).all(axis=0))[0])]
        raise InputError(f"column '{bad}' has missing or infinite values")
    masked = _MASKS[method](values, param, rng=make_rng(rng))
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
