"""Categorical attributes in the partition kernels: the tables of their distances, the
concept counts of the rows still to cluster and the marginality centroid (000 eq. 5).
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from microagg.core.distance import Categorical


class Categories(NamedTuple):
    """The categorical attributes of a run, padded to a common number K of concepts.

    Attributes
    ----------
    distances : ndarray of float64, shape (q, K, K)
        Distances δ_j between concepts (000 eq. 3).
    parents : ndarray of int64, shape (q, K)
        Taxonomy parents, -1 for roots, ordinal chains and padding.
    ordinal : ndarray of bool, shape (q,)
        Whether attribute j is an ordinal chain.
    counts : ndarray of int64, shape (q, K)
        Rows per concept among the rows still to cluster (updated as rows are clustered);
        a missing value (code -1) is not counted.
    squared : ndarray of float64, shape (q, K, K)
        Squared normalized contributions to the record distance (000 eq. 8).
    """

    distances: np.ndarray
    parents: np.ndarray
    ordinal: np.ndarray
    counts: np.ndarray
    squared: np.ndarray


def categories(categorical: Categorical) -> Categories:
    """The tables of ``categorical`` and the concept counts of all its rows.

    Parameters
    ----------
    categorical : Categorical
        The categorical attributes (none for purely numeric data).

    Returns
    -------
    Categories
        Empty tables of the right dimensions when there are no categorical attributes.
    """
    q = categorical.codes.shape[1]
    counts = np.zeros((q, categorical.width if q else 1), dtype=np.int64)
    for j in range(q):
        column = categorical.codes[:, j]
        counts[j] = np.bincount(column[column >= 0], minlength=counts.shape[1])
    return Categories(
        distances=categorical.distances() if q else np.zeros((0, 1, 1)),
        parents=categorical.parents() if q else np.zeros((0, 1), dtype=np.int64),
        ordinal=np.array([m.ordinal for m in categorical.metrics], dtype=np.bool_),
        counts=counts,
        squared=categorical.squared() if q else np.zeros((0, 1, 1)))


# C901 waived: a numba kernel; its branches share the loop's local state, and a split
# into functions would pass that state through calls in the innermost loop.
@numba.njit(cache=True)
def category_centroid(counts, delta, parent, ordinal):  # noqa: C901
    """Marginality centroid (000 eq. 5) of the sample with ``counts`` per concept: among the
    concepts of the minimal sub-taxonomy covering it (for an ordinal chain, the levels between
    its smallest and largest), the least marginal; ties to the lowest concept number.
    Marginality sums run over the sample's concepts in increasing order (as
    :func:`microagg.data.taxonomy.marginality`). An empty sample (every value missing) has
    no centroid: -1."""
    size = counts.shape[0]
    first = -1
    lowest = size
    highest = -1
    for c in range(size):
        if counts[c] > 0:
            if first < 0:
                first = c
            lowest = min(lowest, c)
            highest = max(highest, c)
    if first < 0:
        return -1
    candidate = np.zeros(size, dtype=np.bool_)
    if ordinal:
        for c in range(lowest, highest + 1):
            candidate[c] = True
    else:
        common = np.zeros(size, dtype=np.bool_)
        c = first
        while c >= 0:
            common[c] = True
            c = parent[c]
        above = np.zeros(size, dtype=np.bool_)
        for present in range(size):
            if counts[present] > 0 and present != first:
                above[:] = False
                c = present
                while c >= 0:
                    above[c] = True
                    c = parent[c]
                for a in range(size):
                    common[a] = common[a] and above[a]
        lca = first
        while not common[lca]:
            lca = parent[lca]
        for present in range(size):
            if counts[present] > 0:
                c = present
                while True:
                    candidate[c] = True
                    if c == lca:
                        break
                    c = parent[c]
    best = -1
    best_score = np.inf
    for a in range(size):
        if candidate[a]:
            score = 0.0
            for c in range(size):
                if counts[c] > 0:
                    score += counts[c] * delta[c, a]
            if score < best_score:
                best = a
                best_score = score
    return best


@numba.njit(cache=True)
def centroid_concepts(counts, cats, out):
    """The marginality centroid of every categorical attribute of a sample.

    Parameters
    ----------
    counts : ndarray of int64, shape (q, K)
        The sample's rows per concept, attribute by attribute.
    cats : Categories
        The attributes' tables.
    out : ndarray of int64, shape (q,)
        Receives the centroid concept of each attribute (:func:`category_centroid`).
    """
    for j in range(counts.shape[0]):
        out[j] = category_centroid(counts[j], cats.distances[j], cats.parents[j],
                                   cats.ordinal[j])
