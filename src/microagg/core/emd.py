"""Earth Mover's Distance of t-closeness: ground distances and the EMD of a class.

t-Closeness (paper 002, Definition 2) compares the distribution P of a confidential attribute
in an equivalence class with its distribution Q in the whole table, by the EMD under a ground
distance between values (002 §2.2; Li, Li & Venkatasubramanian 2007, §4):

* **ordered** (numeric and ordinal attributes): with v_1 < ... < v_m the distinct values of
  the attribute in the table, ``d(v_i, v_j) = |i - j| / (m - 1)``, and
  ``EMD(P, Q) = 1/(m-1) · Σ_i |Σ_{j<=i} (p_j - q_j)|``;
* **equal** (nominal): every pair of distinct values at distance 1, ``EMD = ½ Σ_i |p_i - q_i|``;
* **hierarchical** (nominal with a taxonomy): d(u, v) = h(lca(u, v)) / H, the height of the
  lowest common ancestor over the height of the taxonomy (Li et al. §4.2). The height h(N) of
  a concept is the longest path from N down to a leaf, so h grows strictly towards the root
  and d is an ultrametric. Li et al.'s formula EMD = Σ_N h(N)/H · min(pos_extra(N),
  neg_extra(N)) then equals ``Σ_{C ≠ root} w(C) · |extra(C)|``, the flow across each tree edge,
  with w(C) = (h(parent(C)) - h(C)) / (2H) and extra(C) = Σ_{leaves under C} (p - q).
  The equal distance is the hierarchical one of a flat taxonomy (H = 1, w = ½).

:class:`GroundModel` holds what the EMD of any class needs for one attribute over one table
(value ranks and the table's cumulative distribution, or the tree's weights and shares);
:func:`emd_by_class` gives the EMD of every class at once (O(n log n)), and the compiled
:func:`class_emd` the EMD of one class from its rows, which the t-closeness partitioners
evaluate incrementally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from microagg.errors import InputError
from microagg.options import GroundDistance

__all__ = ["EMDTables", "GroundModel", "class_emd", "emd_by_class", "emd_of_counts",
           "largest_emd", "stack"]

ORDERED_KIND = 0
TREE_KIND = 1


@dataclass(frozen=True, eq=False)
class GroundModel:
    """One confidential attribute of one table, ready for EMD computations.

    ``values`` are, per row, the rank 0..m-1 of the row's value among the distinct values
    (ordered distance) or its concept number in ``parent`` (equal and hierarchical
    distances). Build it with :meth:`ordered` or :meth:`tree`.
    """

    name: str
    distance: GroundDistance
    values: np.ndarray
    m: int  # distinct values (ordered) or concepts (tree)
    cdf: np.ndarray  # ordered: Q(i) for i = 0..m-2
    prefix: np.ndarray  # ordered: prefix[i] = Σ_{j<i} Q(j), i = 0..m-1
    ancestors: np.ndarray  # tree: (m, depth) each concept and its ancestors but the root, -1 pad
    weights: np.ndarray  # tree: w(C) per concept, 0 for the root
    share: np.ndarray  # tree: Q(C), the share of the table's rows under concept C

    @classmethod
    def ordered(cls, name: str, values: np.ndarray, records: np.ndarray | None = None
                ) -> GroundModel:
        """Ordered distance over the distinct values of ``values`` (numbers, or ordinal codes
        whose order is the attribute's order), each standing for ``records`` rows of the
        table (default one)."""
        values = np.asarray(values)
        if values.size == 0:
            raise InputError("the table has no rows")
        _, ranks = np.unique(values, return_inverse=True)
        ranks = ranks.astype(np.int64).ravel()
        m = int(ranks.max()) + 1
        counts = np.bincount(ranks, weights=records, minlength=m)
        cdf = np.cumsum(counts)[: m - 1] / counts.sum()
        prefix = np.concatenate(([0.0], np.cumsum(cdf)))
        empty = np.empty((0, 0), dtype=np.int64)
        return cls(name=name, distance=GroundDistance.ORDERED, values=ranks, m=m, cdf=cdf,
                   prefix=prefix, ancestors=empty, weights=np.empty(0), share=np.empty(0))

    @classmethod
    def tree(cls, name: str, concepts: np.ndarray, parent: np.ndarray | None = None,
             records: np.ndarray | None = None) -> GroundModel:
        """Hierarchical distance on the taxonomy ``parent`` (concept -> parent, -1 for the
        root), or the equal distance when ``parent`` is None (a flat taxonomy over the
        distinct values); each of ``concepts`` stands for ``records`` rows (default one)."""
        concepts = np.asarray(concepts)
        if concepts.size == 0:
            raise InputError("the table has no rows")
        if parent is None:
            _, codes = np.unique(concepts, return_inverse=True)
            codes = codes.astype(np.int64).ravel()
            leaves = int(codes.max()) + 1
            parent = np.r_[np.full(leaves, leaves, dtype=np.int64), -1]
            distance = GroundDistance.EQUAL
        else:
            codes = concepts.astype(np.int64)
            parent = np.asarray(parent, dtype=np.int64)
            distance = GroundDistance.HIERARCHICAL
        ancestors, weights = _tree_weights(parent)
        count = parent.size
        share = np.zeros(count)
        per_concept = np.bincount(codes, weights=records, minlength=count)
        rows_per_concept = per_concept / per_concept.sum()
        for level in range(ancestors.shape[1]):
            node = ancestors[:, level]
            ok = node >= 0
            np.add.at(share, node[ok], rows_per_concept[ok])
        return cls(name=name, distance=distance, values=codes, m=count, cdf=np.empty(0),
                   prefix=np.empty(0), ancestors=ancestors, weights=weights, share=share)


def _tree_weights(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ancestors, w): each concept's path to (not including) the root, and the edge weight
    w(C) = (h(parent(C)) - h(C)) / (2H) of the edge above C."""
    count = parent.size
    paths = []
    for concept in range(count):
        path = []
        node = concept
        while parent[node] >= 0:
            path.append(node)
            node = int(parent[node])
        paths.append(path)
    depth = max((len(p) for p in paths), default=0)
    ancestors = np.full((count, max(depth, 1)), -1, dtype=np.int64)
    for concept, path in enumerate(paths):
        ancestors[concept, : len(path)] = path
    height = np.zeros(count, dtype=np.int64)
    for path in paths:  # a leaf-to-root path gives each ancestor a lower bound on its height
        for steps, node in enumerate(path):
            height[node] = max(height[node], steps)
        if path:
            root = int(parent[path[-1]])
            height[root] = max(height[root], len(path))
    top = int(height.max())
    if top == 0:
        raise InputError("a taxonomy needs at least two levels")
    weights = np.zeros(count)
    has_parent = parent >= 0
    weights[has_parent] = (height[parent[has_parent]] - height[has_parent]) / (2.0 * top)
    return ancestors, weights


def emd_by_class(classes: np.ndarray, model: GroundModel) -> np.ndarray:
    """EMD of ``model``'s attribute in each class (labels 0..c-1) to the whole table."""
    classes = np.asarray(classes, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    pairs = _class_value_pairs(classes, model.values, model.m)
    if model.distance is GroundDistance.ORDERED:
        return _ordered_by_class(*pairs, n_classes, model)
    return _tree_by_class(*pairs, n_classes, model)


def emd_of_counts(classes: np.ndarray, values: np.ndarray, counts: np.ndarray,
                  model: GroundModel, n_classes: int) -> np.ndarray:
    """EMD of ``model``'s attribute in each of ``n_classes`` classes to the whole table, each
    class given as (class, value, count) triples: class ``classes[i]`` holds ``counts[i]``
    rows of value ``values[i]`` (a rank or concept of ``model``; triples may repeat). A class
    may be any multiset of the table's rows, e.g. the records that match a record when a
    missing value matches any value (:func:`microagg.core.verifiers.t_closeness`); every
    class must hold a row."""
    classes = np.asarray(classes, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    m = model.m
    keys, inverse = np.unique(classes * m + values, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=np.asarray(counts, dtype=np.float64))
    pairs = (keys // m, keys % m, summed)
    if model.distance is GroundDistance.ORDERED:
        return _ordered_by_class(*pairs, n_classes, model)
    return _tree_by_class(*pairs, n_classes, model)


def largest_emd(classes: np.ndarray, models: Sequence[GroundModel]) -> np.ndarray:
    """Per class, the largest EMD over the confidential attributes ``models``."""
    return np.max([emd_by_class(classes, model) for model in models], axis=0)


def _class_value_pairs(classes: np.ndarray, values: np.ndarray, m: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (class, value) pairs sorted by class then value, with their counts."""
    pair_key, pair_count = np.unique(classes * m + values, return_counts=True)
    return pair_key // m, pair_key % m, pair_count


def _ordered_by_class(pair_class: np.ndarray, pair_value: np.ndarray, pair_count: np.ndarray,
                      n_classes: int, model: GroundModel) -> np.ndarray:
    """Ordered EMD of every class from its distinct (class, value) pairs, sorted by class then
    value, and their counts."""
    m = model.m
    if m == 1:
        return np.zeros(n_classes)
    cdf, prefix = model.cdf, model.prefix
    sizes = np.bincount(pair_class, weights=pair_count, minlength=n_classes)
    first = np.r_[True, pair_class[1:] != pair_class[:-1]]
    last = np.r_[first[1:], True]
    running = np.cumsum(pair_count)
    before_class = np.maximum.accumulate(np.where(first, running - pair_count, 0))
    level = (running - before_class) / sizes[pair_class]  # class CDF P on [value_j, next value)
    start = pair_value
    stop = np.where(last, m - 1, np.r_[pair_value[1:], 0])
    # Σ_{i in [start, stop)} |level - Q(i)|, with Q non-decreasing: split where Q reaches level.
    split = np.clip(np.searchsorted(cdf, level, side="left"), start, stop)
    below = level * (split - start) - (prefix[split] - prefix[start])
    above = (prefix[stop] - prefix[split]) - level * (stop - split)
    total = np.bincount(pair_class, weights=below + above, minlength=n_classes)
    # Before a class's first value P = 0, which adds Σ_{i<v0} Q(i).
    total[pair_class[first]] += prefix[pair_value[first]]
    return total / (m - 1)


def _tree_by_class(pair_class: np.ndarray, pair_value: np.ndarray, pair_count: np.ndarray,
                   n_classes: int, model: GroundModel) -> np.ndarray:
    """Tree EMD of every class from its (class, concept) pairs and their counts."""
    sizes = np.bincount(pair_class, weights=pair_count, minlength=n_classes)
    nodes = model.ancestors[pair_value]  # (pairs, depth)
    row_class = np.repeat(pair_class, nodes.shape[1])
    row_count = np.repeat(np.asarray(pair_count, dtype=np.float64), nodes.shape[1])
    flat = nodes.ravel()
    keep = flat >= 0
    node_key, inverse = np.unique(row_class[keep] * model.m + flat[keep], return_inverse=True)
    node_count = np.bincount(inverse.reshape(-1), weights=row_count[keep])
    node_class, node = node_key // model.m, node_key % model.m
    p = node_count / sizes[node_class]
    q = model.share[node]
    w = model.weights[node]
    # Σ_C w(C)|p_C - q_C| = Σ_C w(C) q_C + Σ_{C in the class} w(C) (|p_C - q_C| - q_C).
    inside = np.bincount(node_class, weights=w * (np.abs(p - q) - q), minlength=n_classes)
    return float(np.dot(model.weights, model.share)) + inside


# -- one class at a time (compiled) ---------------------------------------------------------

@dataclass(frozen=True, eq=False)
class EMDTables:
    """Several :class:`GroundModel` packed into padded arrays for the compiled kernels."""

    kinds: np.ndarray  # (a,) ORDERED_KIND or TREE_KIND
    values: np.ndarray  # (a, n)
    m: np.ndarray  # (a,)
    cdf: np.ndarray  # (a, M)
    prefix: np.ndarray  # (a, M + 1)
    ancestors: np.ndarray  # (a, C, D)
    weights: np.ndarray  # (a, C)
    share: np.ndarray  # (a, C)
    base: np.ndarray  # (a,) Σ_C w(C) q_C

    @property
    def arrays(self) -> tuple:
        return (self.kinds, self.values, self.m, self.cdf, self.prefix, self.ancestors,
                self.weights, self.share, self.base)


def stack(models: Sequence[GroundModel]) -> EMDTables:
    """Pack ``models`` (same table, hence same rows) for :func:`class_emd`."""
    if not models:
        raise InputError("at least one confidential attribute is needed")
    a = len(models)
    n = models[0].values.size
    width = max(max(mo.cdf.size for mo in models), 1)
    concepts = max(max(mo.weights.size for mo in models), 1)
    depth = max(max(mo.ancestors.shape[1] if mo.ancestors.size else 1 for mo in models), 1)
    kinds = np.array([ORDERED_KIND if mo.distance is GroundDistance.ORDERED else TREE_KIND
                      for mo in models], dtype=np.int64)
    values = np.empty((a, n), dtype=np.int64)
    cdf = np.zeros((a, width))
    prefix = np.zeros((a, width + 1))
    ancestors = np.full((a, concepts, depth), -1, dtype=np.int64)
    weights = np.zeros((a, concepts))
    share = np.zeros((a, concepts))
    base = np.zeros(a)
    for j, mo in enumerate(models):
        values[j] = mo.values
        cdf[j, : mo.cdf.size] = mo.cdf
        prefix[j, : mo.prefix.size] = mo.prefix
        if mo.ancestors.size:
            ancestors[j, : mo.ancestors.shape[0], : mo.ancestors.shape[1]] = mo.ancestors
            weights[j, : mo.weights.size] = mo.weights
            share[j, : mo.share.size] = mo.share
            base[j] = float(np.dot(mo.weights, mo.share))
    return EMDTables(kinds=kinds, values=values, m=np.array([mo.m for mo in models]),
                     cdf=cdf, prefix=prefix, ancestors=ancestors, weights=weights,
                     share=share, base=base)


@numba.njit(cache=True)
def _ordered_class(ranks, cdf, prefix, m):
    """EMD of one class given its value ranks sorted ascending (the sweep of
    :func:`_ordered_by_class` for a single class), in O(size · log(m / size)) or less."""
    if m == 1:
        return 0.0
    size = ranks.shape[0]
    total = prefix[ranks[0]]
    j = 0
    while j < size:
        start = ranks[j]
        while j < size and ranks[j] == start:
            j += 1
        level = j / size
        stop = ranks[j] if j < size else m - 1
        # where the whole table's cdf crosses the level, clamped to [start, stop]: a search
        # of that window alone, O(log(stop - start))
        split = start + np.searchsorted(cdf[start:stop], level)
        total += level * (split - start) - (prefix[split] - prefix[start])
        total += (prefix[stop] - prefix[split]) - level * (stop - split)
    return total / (m - 1)


@numba.njit(cache=True)
def _tree_class(nodes, ancestors, weights, share, base, scratch):
    """EMD of one class whose rows have concepts ``nodes`` (hierarchical or equal distance).
    ``scratch`` is a zero array with one slot per concept, left zeroed."""
    size = nodes.shape[0]
    for r in range(size):
        for level in range(ancestors.shape[1]):
            node = ancestors[nodes[r], level]
            if node < 0:
                break
            scratch[node] += 1.0
    total = base
    for r in range(size):
        for level in range(ancestors.shape[1]):
            node = ancestors[nodes[r], level]
            if node < 0:
                break
            if scratch[node] > 0.0:
                p = scratch[node] / size
                q = share[node]
                total += weights[node] * (abs(p - q) - q)
                scratch[node] = 0.0
    return total


@numba.njit(cache=True)
def attribute_emd(a, codes, tables, scratch):
    """EMD of one class for confidential attribute ``a`` given the value codes of its rows
    sorted ascending (``tables`` and ``scratch`` as in :func:`class_emd`)."""
    kinds, _, m, cdf, prefix, ancestors, weights, share, base = tables
    if kinds[a] == ORDERED_KIND:
        return _ordered_class(codes, cdf[a], prefix[a], m[a])
    return _tree_class(codes, ancestors[a], weights[a], share[a], base[a], scratch)


@numba.njit(cache=True)
def class_emd(rows, tables, scratch):
    """The largest EMD over the confidential attributes of the class made of ``rows``.
    ``tables`` is :attr:`EMDTables.arrays`; ``scratch`` a zero float array of at least the
    largest number of concepts, left zeroed."""
    kinds, values = tables[0], tables[1]
    worst = 0.0
    for a in range(kinds.shape[0]):
        picked = np.empty(rows.shape[0], dtype=np.int64)
        for r in range(rows.shape[0]):
            picked[r] = values[a, rows[r]]
        picked.sort()
        worst = max(worst, attribute_emd(a, picked, tables, scratch))
    return worst
