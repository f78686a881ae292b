"""Global recoding: every value of a column replaced by a coarser one, the same way in every
record (Hundepool et al. 2012 §3.4.3; sdcMicro ``globalRecode`` and ``groupAndRename``).

* To a level of a taxonomy (an ARX hierarchy ``leaf;level 1;…;root``): a category becomes
  its ancestor ``level`` steps up (level 0 is the category itself; a category closer to the
  root than that becomes the root).
* To intervals: a number x becomes the label of the interval [b_i, b_{i+1}) of the declared
  breaks b_0 < b_1 < … < b_m that holds it, the last interval closed ([b_{m-1}, b_m]).

Missing values stay missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from microagg.data.taxonomy import Taxonomy
from microagg.errors import InputError

__all__ = ["interval_labels", "to_intervals", "to_level"]


def to_level(labels: Sequence[str], taxonomy: Taxonomy, level: int, *, name: str = "column"
             ) -> tuple[np.ndarray, list[str]]:
    """The concept ``level`` steps above each category of ``labels`` (None: missing), as an
    index into the returned list of concepts (-1 for a missing value), the concepts in the
    taxonomy's order.

    Examples
    --------
    >>> tree = Taxonomy.from_paths([["cat", "pet", "*"], ["dog", "pet", "*"],
    ...                             ["cow", "farm", "*"]])
    >>> codes, concepts = to_level(["dog", None, "cow", "cat"], tree, 1)
    >>> [concepts[c] if c >= 0 else None for c in codes]
    ['pet', None, 'farm', 'pet']
    """
    leaf = {label: i for i, label in enumerate(taxonomy.leaves)}
    target = np.full(len(labels), -1, dtype=np.int64)
    for row, label in enumerate(labels):
        if label is None:
            continue
        if label not in leaf:
            raise InputError(f"column '{name}': value '{label}' (row {row + 1}) is not a "
                             "category of its taxonomy")
        path = taxonomy.path_to_root(leaf[label])
        target[row] = path[min(level, len(path) - 1)]
    used = np.unique(target[target >= 0])
    concepts = [taxonomy.labels[c] for c in used]
    codes = np.full(len(labels), -1, dtype=np.int64)
    present = target >= 0
    codes[present] = np.searchsorted(used, target[present])
    return codes, concepts


def interval_labels(breaks: Sequence[float]) -> list[str]:
    """The labels of the intervals of ``breaks``: "[a, b)", the last "[a, b]" (an infinite
    end open: "[a, inf)")."""
    text = [format(float(b), ".15g") for b in breaks]
    labels = [f"[{text[i]}, {text[i + 1]})" for i in range(len(breaks) - 1)]
    if np.isfinite(breaks[-1]):
        labels[-1] = labels[-1][:-1] + "]"
    return labels


def to_intervals(values: np.ndarray, breaks: Sequence[float], *, name: str = "column"
                 ) -> np.ndarray:
    """The interval of each of ``values`` (NaN: missing) among ``breaks``, as an index into
    :func:`interval_labels` (-1 for a missing value). A value outside [b_0, b_m] is refused.

    Examples
    --------
    >>> breaks = [0, 18, 65, 120]
    >>> to_intervals(np.array([17.0, 18.0, np.nan, 120.0]), breaks).tolist()
    [0, 1, -1, 2]
    >>> interval_labels(breaks)
    ['[0, 18)', '[18, 65)', '[65, 120]']
    """
    edges = np.asarray(breaks, dtype=np.float64)
    present = ~np.isnan(values)
    outside = present & ((values < edges[0]) | (values > edges[-1]))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise InputError(f"column '{name}': value {values[row]:g} (row {row + 1}) is outside "
                         f"the breaks [{edges[0]:g}, {edges[-1]:g}]; add a break below or "
                         "above it (-inf and inf are allowed)")
    codes = np.full(values.size, -1, dtype=np.int64)
    codes[present] = np.minimum(np.searchsorted(edges, values[present], side="right") - 1,
                                edges.size - 2)
    return codes
