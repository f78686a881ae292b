"""The subsets of t-closeness-first (002 Alg. 3) as coded blocks: the arrays that hold them
(:class:`Subsets`), built and updated by :mod:`._subsets` and searched by
:mod:`._subset_search`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["GRID", "Subsets"]

# The grid of one subset's codes: x^ = low + c * step, ||x - x^|| <= delta over its live
# records.
GRID = np.dtype([("step", np.float64), ("delta", np.float64)])


class Subsets(NamedTuple):
    """The subsets as coded blocks (:func:`build`). Subset g has ``fill.shape[1]`` blocks of
    ``width`` columns; the live records of block b are its first ``fill[g, b]`` columns.

    Attributes
    ----------
    values : ndarray of float64, shape (size, d, capacity)
        Numeric values, column-major per subset.
    codes : ndarray of uint8, shape (size, d, capacity)
        Their codes on the subset's grid, x^ = low[g] + c * step[g].
    row_of : ndarray of int64, shape (size, capacity)
        The record at each column (-1 in unused columns).
    column_of : ndarray of int64, shape (n,)
        The column of each record in its subset (-1 once taken).
    concept_columns : ndarray of int64, shape (size, q, capacity)
        Concepts of the categorical attributes, column-major per subset.
    low : ndarray of float64, shape (size, d)
        Each subset's grid origin.
    grid : ndarray of :data:`GRID`, shape (size,)
        Each subset's grid step (``grid[g].step``) and an upper bound on ||x - x^|| over its
        live records (``grid[g].delta``).
    fill : ndarray of int64, shape (size, blocks)
        Live records per block.
    box_lo, box_hi : ndarray of int32, shape (size, d, blocks)
        Least and greatest code per attribute of each block's live records.
    live : ndarray of int64, shape (size,)
        Live records per subset.
    width : int
        Columns per block.
    """

    values: np.ndarray
    codes: np.ndarray
    row_of: np.ndarray
    column_of: np.ndarray
    concept_columns: np.ndarray
    low: np.ndarray
    grid: np.ndarray
    fill: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    live: np.ndarray
    width: np.int64
