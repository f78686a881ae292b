"""The sampling weight: one rule for every command and function that uses one.

A sampling weight (``--weight``, ``weight=``, role ``weight`` in a schema) is the number of
population units a record stands for, the inverse of its inclusion probability: a number of
at least 1 in every row. A missing value, a text, an infinite number, zero, a negative number
and a number below 1 are refused, naming the column, the row and the value. The releases
(cluster means weighted by it, PRAM's weighted marginal, the strata's design) and the risk of
the keys (F_k, the sum of the weights of a record's class, estimates how many units of the
population share its keys, never fewer than the f_k of the sample) hold to the same rule, so
a column that one command takes as a weight every other command takes too. Weights scaled to
the sample size (summing to n, some below 1) are multiplied by N / n first: no weighted mean
or share changes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from microagg.errors import InputError

__all__ = ["LEAST_WEIGHT", "sampling_weights", "shown"]

LEAST_WEIGHT = 1.0
"""The smallest sampling weight: a record stands for itself at least."""


def sampling_weights(values: pd.Series, name: str, rows: np.ndarray | None = None,
                     where: str = "") -> np.ndarray:
    """The sampling weights ``values`` of the column ``name`` as float64, checked (module
    docstring). ``rows`` are the positions in the file of ``values`` (counted from 0; by
    default their order), so that a refusal names the row as the file counts it; ``where``
    names the file when the column alone does not say which (" of part-3.parquet").

    Examples
    --------
    >>> sampling_weights(pd.Series([1.5, 20]), "w").tolist()
    [1.5, 20.0]
    >>> sampling_weights(pd.Series([1.5, float("nan")]), "w")
    Traceback (most recent call last):
    ...
    microagg.errors.InputError: weight column 'w': row 2 holds no value; a sampling weight is \
the number of population units a record stands for: a number of at least 1 in every row
    """
    if pd.api.types.is_bool_dtype(values):  # True and False are not weights
        numbers = np.full(len(values), np.nan)
    else:
        series = (values.astype(object) if isinstance(values.dtype, pd.CategoricalDtype)
                  else values)
        numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64,
                                                                  na_value=np.nan)
    bad = np.flatnonzero(~(np.isfinite(numbers) & (numbers >= LEAST_WEIGHT)))
    if bad.size == 0:
        return numbers
    first = int(bad[0])
    row = (first if rows is None else int(rows[first])) + 1
    value = values.iloc[first]
    hint = ""
    if 0 < numbers[first] < LEAST_WEIGHT:
        hint = (" (weights scaled to the sample size: multiply them by the population size "
                "over the sample size, which changes no weighted mean)")
    raise InputError(f"weight column '{name}'{where}: row {row} holds {shown(value)}; a "
                     "sampling weight is the number of population units a record stands for: "
                     f"a number of at least 1 in every row{hint}")


def shown(value: Any) -> str:
    """A cell's value as a message writes it: text in quotes, numbers plainly (``-3``,
    ``0.5``, ``inf``), a missing value as ``no value``."""
    if isinstance(value, str):
        return repr(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return "no value"
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "no value"
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return repr(value)
