"""Global recoding: every value of a column replaced by a coarser one, the same way in every
record (Hundepool et al. 2012 §3.4.3; sdcMicro ``globalRecode`` and ``groupAndRename``).

* To a level of a taxonomy (an ARX hierarchy ``leaf;level 1;…;root``): a category becomes
  its ancestor ``level`` steps up (level 0 is the category itself; a category closer to the
  root than that becomes the root).
* To intervals: a number x becomes the label of the interval of the declared breaks
  b_0 < b_1 < … < b_m that holds it: closed on the left, [b_i, b_{i+1}), the last interval
  closed on both ends ([b_{m-1}, b_m]); or closed on the right, (b_i, b_{i+1}], as sdcMicro's
  ``globalRecode`` (R's ``cut``, ``right = TRUE``) cuts, the first interval closed on both
  ends ([b_0, b_1], R's ``include.lowest = TRUE``: ``globalRecode`` leaves it open and makes
  a value equal to b_0 missing). A value outside [b_0, b_m] is refused.

Missing values stay missing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from microagg.data.taxonomy import Taxonomy
from microagg.errors import InputError
from microagg.options import Closed, parse

__all__ = ["interval_labels", "to_intervals", "to_level"]


def to_level(labels: Sequence[str | None], taxonomy: Taxonomy, level: int, *, name: str = "column"
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


def interval_labels(breaks: Sequence[float], closed: Closed | str = Closed.LEFT) -> list[str]:
    """The labels of the intervals of ``breaks``: closed on the left "[a, b)", the last
    "[a, b]"; closed on the right "(a, b]", the first "[a, b]" (an infinite end open:
    "[a, inf)", "(-inf, b]").

    Examples
    --------
    >>> interval_labels([0, 18, 65, 120], "right")
    ['[0, 18]', '(18, 65]', '(65, 120]']
    >>> interval_labels([-np.inf, 18, np.inf], "right")
    ['(-inf, 18]', '(18, inf)']
    """
    closed = parse(Closed, closed, "`closed`")
    text = [format(float(b), ".15g") for b in breaks]
    last = len(breaks) - 2
    if closed is Closed.LEFT:
        labels = [f"[{text[i]}, {text[i + 1]}" + ("]" if i == last and np.isfinite(breaks[-1])
                                                    else ")") for i in range(last + 1)]
    else:
        labels = [("[" if i == 0 and np.isfinite(breaks[0]) else "(")
                  + f"{text[i]}, {text[i + 1]}" + ("]" if np.isfinite(breaks[i + 1]) else ")")
                  for i in range(last + 1)]
    return labels


def to_intervals(values: np.ndarray, breaks: Sequence[float], *, name: str = "column",
                 closed: Closed | str = Closed.LEFT) -> np.ndarray:
    """The interval of each of ``values`` (NaN: missing) among ``breaks``, as an index into
    :func:`interval_labels` (-1 for a missing value), intervals ``closed`` on the left or
    on the right (module docstring). A value outside [b_0, b_m] is refused.

    Examples
    --------
    >>> breaks = [0, 18, 65, 120]
    >>> to_intervals(np.array([17.0, 18.0, np.nan, 120.0]), breaks).tolist()
    [0, 1, -1, 2]
    >>> interval_labels(breaks)
    ['[0, 18)', '[18, 65)', '[65, 120]']
    >>> to_intervals(np.array([0.0, 18.0, 18.5, 120.0]), breaks, closed="right").tolist()
    [0, 0, 1, 2]
    """
    closed = parse(Closed, closed, "`closed`")
    edges = np.asarray(breaks, dtype=np.float64)
    present = ~np.isnan(values)
    outside = present & ((values < edges[0]) | (values > edges[-1]))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise InputError(f"column '{name}': value {values[row]:g} (row {row + 1}) is outside "
                         f"the breaks [{edges[0]:g}, {edges[-1]:g}]; add a break below or "
                         "above it (-inf and inf are allowed)")
    codes = np.full(values.size, -1, dtype=np.int64)
    if closed is Closed.LEFT:  # b_i <= x < b_{i+1}; b_m in the last interval
        codes[present] = np.minimum(np.searchsorted(edges, values[present], side="right") - 1,
                                    edges.size - 2)
    else:  # b_i < x <= b_{i+1}; b_0 in the first interval
        codes[present] = np.maximum(np.searchsorted(edges, values[present], side="left") - 1, 0)
    return codes
