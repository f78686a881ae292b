"""Direct, unoptimized implementations of the definitions, for tests to compare against.

A record is a row of numeric values plus, optionally, one concept per categorical attribute
(a :class:`microagg.core.distance.Categorical`). Squared distances are summed over the numeric
attributes in column order, then over the categorical ones, like the compiled kernels, so that
the comparison is exact (bit-for-bit equal distances, hence identical tie-breaking).
"""

from __future__ import annotations

import decimal
import itertools
import math

import numpy as np

from microagg.core.distance import Categorical, no_categories


def _cat(X, categorical):
    return no_categories(X.shape[0]) if categorical is None else categorical


def squared_distances(X, rows, q, categorical=None, qc=()):
    total = np.zeros(rows.size)
    for j in range(X.shape[1]):
        total += (X[rows, j] - q[j]) ** 2
    if categorical is not None and categorical.metrics:
        squared = categorical.squared()
        for j in range(len(categorical.metrics)):
            total += squared[j, qc[j], categorical.codes[rows, j]]
    return total


def farthest(X, rows, q, categorical=None, qc=()):
    d = squared_distances(X, rows, q, categorical, qc)
    return int(rows[d == d.max()].min())


def nearest(X, rows, q, count, exclude, categorical=None, qc=()):
    rows = rows[rows != exclude]
    d = squared_distances(X, rows, q, categorical, qc)
    order = np.lexsort((rows, d))
    return [int(r) for r in rows[order[:count]]]


def centroid(X, rows, categorical=None):
    """Correctly rounded mean of the numeric attributes, marginality centroids (000 eq. 5) of
    the categorical ones."""
    numeric = np.array([math.fsum(X[rows, j]) for j in range(X.shape[1])]) / rows.size
    concepts = []
    if categorical is not None:
        for j, metric in enumerate(categorical.metrics):
            counts = np.bincount(categorical.codes[rows, j], minlength=metric.n_concepts)
            concepts.append(metric.centroid(counts))
    return numeric, concepts


def _record(X, categorical, row):
    return X[row], ([] if categorical is None else list(categorical.codes[row]))


def has_missing(X, categorical=None):
    return bool(np.isnan(X).any() or (categorical is not None and (categorical.codes < 0).any()))


def distances_to(X, rows, q, categorical=None, qc=(), any_missing=False):
    """Squared distances, or on records with missing values (``any_missing``) the rescaled
    distance over the attributes both have (:func:`_missing_distances`)."""
    if not any_missing:
        return squared_distances(X, rows, q, categorical, qc)
    cat = _cat(X, categorical)
    squared = cat.squared() if cat.metrics else np.zeros((0, 1, 1))
    return _missing_distances(X, cat.codes, squared, np.asarray(rows), q,
                              np.asarray(qc, dtype=np.int64))


def present_centroid(X, rows, categorical=None):
    """Means over the values present (NaN where none is), marginality centroids over the
    concepts present (-1 where none is); sums correctly rounded."""
    numeric = []
    for j in range(X.shape[1]):
        values = X[rows, j][~np.isnan(X[rows, j])]
        numeric.append(math.fsum(values) / values.size if values.size else np.nan)
    concepts = []
    if categorical is not None:
        for j, metric in enumerate(categorical.metrics):
            codes = categorical.codes[rows, j]
            codes = codes[codes >= 0]
            concepts.append(metric.centroid(np.bincount(codes, minlength=metric.n_concepts))
                            if codes.size else -1)
    return np.array(numeric), concepts


def _extreme(X, rows, q, categorical, qc, any_missing, far):
    d = distances_to(X, rows, q, categorical, qc, any_missing)
    return rows[np.lexsort((rows, -d if far else d))]


def mdav(X: np.ndarray, k: int, categorical: Categorical | None = None) -> np.ndarray:
    """MDAV as paper 000 Alg. 1 states it (x_s taken after x_r's cluster is removed)."""
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    label = 0

    def take(cluster):
        nonlocal remaining, label
        labels[cluster] = label
        label += 1
        remaining = np.setdiff1d(remaining, cluster)

    def around(seed):
        q, qc = _record(X, categorical, seed)
        return [seed, *nearest(X, remaining, q, k - 1, seed, categorical, qc)]

    while remaining.size >= 3 * k:
        c, cc = centroid(X, remaining, categorical)
        r = farthest(X, remaining, c, categorical, cc)
        take(around(r))
        q, qc = _record(X, categorical, r)
        s = farthest(X, remaining, q, categorical, qc)
        take(around(s))
    if remaining.size >= 2 * k:
        c, cc = centroid(X, remaining, categorical)
        take(around(farthest(X, remaining, c, categorical, cc)))
    if remaining.size:
        take(list(remaining))
    return labels


def vmdav(X: np.ndarray, k: int, gamma: float, categorical: Categorical | None = None
          ) -> np.ndarray:
    """V-MDAV as documented in microagg.partition.mdav.vmdav, by direct computation."""
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    c, cc = centroid(X, remaining, categorical)
    label = 0
    while remaining.size >= k:
        r = farthest(X, remaining, c, categorical, cc)
        q, qc = _record(X, categorical, r)
        group = [r, *nearest(X, remaining, q, k - 1, r, categorical, qc)]
        remaining = np.setdiff1d(remaining, group)
        while len(group) < 2 * k - 1 and remaining.size:
            gaps = np.min([squared_distances(X, remaining, X[g], categorical,
                                             _record(X, categorical, g)[1])
                           for g in group], axis=0)
            order = np.lexsort((remaining, gaps))
            e_in, d_in = int(remaining[order[0]]), gaps[order[0]]
            q, qc = _record(X, categorical, e_in)
            others = nearest(X, remaining, q, 1, e_in, categorical, qc)
            if others:
                d_out = squared_distances(X, np.array(others), q, categorical, qc)[0]
                if not np.sqrt(d_in) < gamma * np.sqrt(d_out):
                    break
            group.append(e_in)
            remaining = remaining[remaining != e_in]
        labels[group] = label
        label += 1
    if remaining.size:
        cat = _cat(X, categorical)
        means = np.array([X[labels == g].mean(axis=0) for g in range(label)])
        concepts = np.array([centroid(X, np.flatnonzero(labels == g), cat)[1]
                             for g in range(label)], dtype=np.int64).reshape(label, -1)
        squared = cat.squared()
        for row in remaining:
            d = np.zeros(label)
            for j in range(X.shape[1]):
                d += (means[:, j] - X[row, j]) ** 2
            for j in range(len(cat.metrics)):
                d += squared[j, concepts[:, j], cat.codes[row, j]]
            labels[row] = int(np.argmin(d))
    return labels


def insensitive(X: np.ndarray, k: int, lows, highs, corners: np.ndarray,
                categorical: Categorical | None = None) -> np.ndarray:
    """000 Alg. 2 by full sorts: cluster i = the k smallest remaining records under the order of
    corners[i] (bits over numeric then categorical attributes): distance on domain-normalized
    values and eq. 8 categories, then lexicographic (numeric values, then categories by
    alphabetical label), then row."""
    cat = _cat(X, categorical)
    U = (X - lows) / (highs - lows)
    p = X.shape[1]
    ties = [X[:, j] for j in range(p)]
    for j, metric in enumerate(cat.metrics):
        alphabetical = np.argsort(np.argsort(np.array(metric.labels, dtype=object)))
        ties.append(alphabetical[cat.codes[:, j]].astype(float))
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    for i in range(n // k - 1):
        bits = corners[i]
        qc = [m.top if bits[p + j] else m.bottom for j, m in enumerate(cat.metrics)]
        d = squared_distances(U, remaining, bits[:p].astype(float), cat, qc)
        keys = [remaining] + [t[remaining] for t in reversed(ties)] + [d]
        chosen = remaining[np.lexsort(keys)[:k]]
        labels[chosen] = i
        remaining = np.setdiff1d(remaining, chosen)
    labels[remaining] = n // k - 1
    return labels


# -- t-closeness (paper 002) -----------------------------------------------------------------

def class_emd_direct(values: np.ndarray, members, distance: str, parent=None) -> float:
    """EMD of the class ``members`` to the whole column ``values`` by the printed formulas:
    ordered 1/(m-1) Σ_i |Σ_{j<=i} p_j - q_j| over the distinct values; equal ½ Σ |p - q|;
    hierarchical Σ_N h(N)/H · min(pos_extra(N), neg_extra(N)) (Li et al. 2007 §4.2)."""
    distinct, codes = np.unique(values, return_inverse=True)
    m = distinct.size
    q = np.bincount(codes, minlength=m) / codes.size
    p = np.bincount(codes[np.asarray(members)], minlength=m) / len(members)
    if distance == "ordered":
        return 0.0 if m == 1 else float(np.abs(np.cumsum(p - q)).sum() / (m - 1))
    if distance == "equal":
        return float(0.5 * np.abs(p - q).sum())
    # hierarchical: values are concept numbers of the tree ``parent``
    concepts = len(parent)
    extra_leaf = np.zeros(concepts)
    for code, value in enumerate(distinct):
        extra_leaf[int(value)] += p[code] - q[code]
    children = [[] for _ in range(concepts)]
    for c in range(concepts):
        if parent[c] >= 0:
            children[parent[c]].append(c)

    def height(c):
        return 0 if not children[c] else 1 + max(height(x) for x in children[c])

    def extra(c):
        return extra_leaf[c] + sum(extra(x) for x in children[c])

    root = next(c for c in range(concepts) if parent[c] < 0)
    top = height(root)
    total = 0.0
    for node in range(concepts):
        if children[node]:
            parts = [extra(x) for x in children[node]]
            if extra_leaf[node]:  # a value sitting on an inner concept: its own zero edge
                parts.append(extra_leaf[node])
            pos = sum(x for x in parts if x > 0)
            neg = -sum(x for x in parts if x < 0)
            total += height(node) / top * min(pos, neg)
    return total


def t_closeness_first(X, rank_key, size, categorical=None):
    """002 Alg. 3 as listed, for a given cluster size, by direct computation (on records with
    missing values, with the distance and centroid of :func:`present_centroid`)."""
    any_missing = has_missing(X, categorical)
    n = X.shape[0]
    base, extra = divmod(n, size)
    counts = [base] * size
    if size % 2:
        counts[size // 2] += extra
    else:
        counts[size // 2 - 1] += extra - extra // 2
        counts[size // 2] += extra // 2
    order = np.lexsort((np.arange(n), rank_key))
    subsets, at = [], 0
    for c in counts:
        subsets.append([int(r) for r in order[at:at + c]])
        at += c
    labels = np.full(n, -1)
    label = 0
    extras = [c - base for c in counts]

    def cluster(seed):
        nonlocal label
        q, qc = _record(X, categorical, seed)
        chosen = []
        for i in range(size):
            takes = 2 if extras[i] and len(chosen) == i else 1  # one extra record per class
            if takes == 2:
                extras[i] -= 1
            for _ in range(takes):
                rows = np.array(subsets[i])
                if not rows.size:
                    break
                row = int(_extreme(X, rows, q, categorical, qc, any_missing, far=False)[0])
                subsets[i].remove(row)
                chosen.append(row)
        labels[chosen] = label
        label += 1

    while (labels < 0).any():
        remaining = np.flatnonzero(labels < 0)
        c, cc = (present_centroid if any_missing else centroid)(X, remaining, categorical)
        x0 = int(_extreme(X, remaining, c, categorical, cc, any_missing, far=True)[0])
        cluster(x0)
        remaining = np.flatnonzero(labels < 0)
        if remaining.size:
            q, qc = _record(X, categorical, x0)
            cluster(int(_extreme(X, remaining, q, categorical, qc, any_missing, far=True)[0]))
    return labels


def k_anonymity_first(X, emd, k, t, categorical=None):
    """002 Alg. 2 as listed; ``emd(members)`` gives a class's largest EMD (on records with
    missing values, with the distance and centroid of :func:`present_centroid`)."""
    any_missing = has_missing(X, categorical)
    n = X.shape[0]
    labels = np.full(n, -1)
    label = 0

    def generate(seed):
        nonlocal label
        remaining = np.flatnonzero(labels < 0)
        if remaining.size < 2 * k:
            chosen = list(remaining)
        else:
            q, qc = _record(X, categorical, seed)
            order = [int(r) for r in _extreme(X, remaining, q, categorical, qc, any_missing,
                                              far=False)]
            chosen, candidates = order[:k], order[k:]
            current = emd(chosen)
            for y in candidates:
                if current <= t + 1e-9:
                    break
                trials = [emd([*chosen[:at], y, *chosen[at + 1:]]) for at in range(k)]
                best = int(np.argmin(trials))
                if trials[best] < current:
                    chosen[best] = y
                    current = trials[best]
        labels[chosen] = label
        label += 1

    while (labels < 0).any():
        remaining = np.flatnonzero(labels < 0)
        c, cc = (present_centroid if any_missing else centroid)(X, remaining, categorical)
        x0 = int(_extreme(X, remaining, c, categorical, cc, any_missing, far=True)[0])
        generate(x0)
        remaining = np.flatnonzero(labels < 0)
        if remaining.size:
            q, qc = _record(X, categorical, x0)
            generate(int(_extreme(X, remaining, q, categorical, qc, any_missing, far=True)[0]))
    return labels


def merge(X, labels, emd, t, categorical=None):
    """002 Alg. 1's merging: the class of greatest EMD (lowest label on ties) joins the class
    with the nearest centroid (lowest label on ties) until every class satisfies t. On records
    with missing values, centroids over the values present and the distance over the attributes both
    centroids have (the lowest class when the worst shares none with any)."""
    cat = _cat(X, categorical)
    any_missing = has_missing(X, categorical)
    squared = cat.squared()
    groups = {int(g): list(np.flatnonzero(labels == g)) for g in np.unique(labels)}
    merges = 0
    while True:
        emds = {g: emd(rows) for g, rows in groups.items()}
        worst = min(groups, key=lambda g: (-emds[g], g))
        if emds[worst] <= t + 1e-9 or len(groups) == 1:
            break

        def centre(rows):
            rows = np.array(rows)
            if any_missing:
                return present_centroid(X, rows, cat)
            numeric = np.array([X[rows, j].sum() for j in range(X.shape[1])]) / rows.size
            return numeric, centroid(X, rows, cat)[1]

        q, qc = centre(groups[worst])
        best, best_d = None, np.inf
        for g in sorted(groups):
            if g == worst:
                continue
            c, cc = centre(groups[g])
            if any_missing:
                d = _missing_distances(c[None, :], np.asarray([cc], dtype=np.int64).reshape(1, -1),
                                       squared if cat.metrics else np.zeros((0, 1, 1)),
                                       np.array([0]), q, np.asarray(qc, dtype=np.int64))[0]
            else:
                d = sum((c[j] - q[j]) ** 2 for j in range(X.shape[1]))
                d += sum(squared[j, qc[j], cc[j]] for j in range(len(cat.metrics)))
            if d < best_d or best is None:
                best, best_d = g, d
        keep, gone = min(worst, best), max(worst, best)
        groups[keep] = groups[keep] + groups.pop(gone)
        merges += 1
    out = np.empty(X.shape[0], dtype=np.int64)
    for g, rows in groups.items():
        out[rows] = g
    return out, merges


def _missing_distances(X, codes, squared, rows, q, qc):
    """d² of :mod:`microagg.partition.mdav_missing`: over the attributes both have, times
    p / |both| (+inf when they share none), summed in the kernel's order."""
    p = X.shape[1] + codes.shape[1]
    out = np.empty(rows.size)
    for t, row in enumerate(rows):
        total, both = 0.0, 0
        for j in range(X.shape[1]):
            if not (np.isnan(X[row, j]) or np.isnan(q[j])):
                total += (X[row, j] - q[j]) ** 2
                both += 1
        for j in range(codes.shape[1]):
            if codes[row, j] >= 0 and qc[j] >= 0:
                total += squared[j, qc[j], codes[row, j]]
                both += 1
        out[t] = total * p / both if both else np.inf
    return out


def mdav_missing(X: np.ndarray, k: int, categorical: Categorical | None = None) -> np.ndarray:
    """MDAV (000 Alg. 1) with missing values, as microagg.partition.mdav_missing states it:
    the distance over the attributes both records have, centroids over the values present
    (correctly rounded means, :func:`present_centroid`)."""
    categorical = _cat(X, categorical)
    codes = categorical.codes
    squared = categorical.squared() if categorical.metrics else np.zeros((0, 1, 1))
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    label = 0

    def centre(rows):
        c, cc = present_centroid(X, rows, categorical)
        return c, np.array(cc, dtype=np.int64)

    def extreme(rows, q, qc, far):
        d = _missing_distances(X, codes, squared, rows, q, qc)
        order = np.lexsort((rows, -d if far else d))
        return rows[order]

    def take(cluster):
        nonlocal remaining, label
        labels[cluster] = label
        label += 1
        remaining = np.setdiff1d(remaining, cluster)

    def around(seed):
        others = remaining[remaining != seed]
        return [seed, *extreme(others, X[seed], codes[seed], far=False)[:k - 1]]

    while remaining.size >= 2 * k:
        last_round = remaining.size < 3 * k
        r = int(extreme(remaining, *centre(remaining), far=True)[0])
        take(around(r))
        if last_round:
            break
        s = int(extreme(remaining, X[r], codes[r], far=True)[0])
        take(around(s))
    if remaining.size:
        take(list(remaining))
    return labels


def matching_counts(codes, columns=None):
    """f of every record of the int code matrix (-1: missing) by its definition: the records
    that agree with it on every key (of ``columns``) both have, a record without any key
    counting for no record that has every key (sdcMicro's freqCalc)."""
    codes = np.asarray(codes)
    if columns is not None:
        codes = codes[:, list(columns)]
    blank = (codes < 0).all(axis=1)
    out = []
    for i in range(codes.shape[0]):
        same = np.ones(codes.shape[0], dtype=bool)
        for j in range(codes.shape[1]):
            same &= (codes[:, j] == codes[i, j]) | (codes[:, j] < 0) | (codes[i, j] < 0)
        if (codes[i] >= 0).all():
            same &= ~blank
        out.append(int(same.sum()))
    return np.array(out)


def sdcmicro_pram_matrix(p, pds, alpha):
    """sdcMicro's ``calcTransitionMatrix`` (R/pram.R) loop by loop, its random diagonal
    ``pds`` given: P with diagonal pds and (1 - pds_i)/(L - 1) elsewhere in row i,
    Qest[k, j] = P[j, k] p[j] / sum(p * P[, k]), R = P Qest, alpha R + (1 - alpha) I."""
    p = np.asarray(p, dtype=float) / np.sum(p)
    size = p.size
    P = np.empty((size, size))
    for i in range(size):
        P[i, :] = (1 - pds[i]) / (size - 1)
        P[i, i] = pds[i]
    Q = np.empty((size, size))
    for k in range(size):
        s = sum(p[j] * P[j, k] for j in range(size))
        for j in range(size):
            Q[k, j] = P[j, k] * p[j] / s
    R = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            R[i, j] = sum(P[i, m] * Q[m, j] for m in range(size))
    return alpha * R + (1 - alpha) * np.eye(size)


# --- Risk of categorical keys: the definitions, record by record -------------------------

def key_match(a, b, missing: str) -> bool:
    """Whether key row ``b`` (codes, -1 missing) counts for key row ``a``: equal on every
    key (``category``), or on every key both have (``matches-any``), where a row with no
    key counts for no row that has every key (sdcMicro's freqCalc)."""
    if missing == "category":
        return all(x == y for x, y in zip(a, b, strict=True))
    if missing == "any-value":  # on a subset of the keys: any missing value matches
        return all(x == y or x < 0 or y < 0 for x, y in zip(a, b, strict=True))
    return (all(x == y or x < 0 or y < 0 for x, y in zip(a, b, strict=True))
            and not blank_for_complete(a, b))


def blank_for_complete(a, b) -> bool:
    """Whether ``b`` has no key and ``a`` every key (``b`` then does not count for ``a``)."""
    return all(y < 0 for y in b) and all(x >= 0 for x in a)


def frequencies_direct(codes, missing: str, weights=None) -> list[float]:
    """f_k (or F_k with ``weights``) of every record: O(n²) pairs."""
    n = len(codes)
    w = [1] * n if weights is None else list(weights)
    return [math.fsum(w[j] for j in range(n) if key_match(codes[i], codes[j], missing))
            for i in range(n)]


def individual_risk_direct(fk: int, Fk: float | None) -> float:
    """Benedetti-Franconi as sdcMicro's indivRisk(method = "approx"), one record, its
    formulas evaluated in 60-digit decimal arithmetic (no cancellation)."""
    if Fk is None or fk == Fk:
        return 1 / fk
    with decimal.localcontext() as context:
        context.prec = 60
        f, F = decimal.Decimal(fk), decimal.Decimal(Fk)
        p = f / F
        odds = p / (1 - p)
        if fk == 1:
            return float(odds * (1 / p).ln())
        if fk == 2:
            return float(odds - odds ** 2 * (1 / p).ln())
        return float(p / (f - (1 - p)))


def household_risk_direct(risk, household) -> list[float]:
    """1 − Π (1 − r) over the members of each record's household."""
    out = []
    for h in household:
        product = 1.0
        for r, g in zip(risk, household, strict=True):
            if g == h:
                product *= 1 - r
        out.append(1 - product)
    return out


def l_diversity_direct(codes, sensitive, missing: str, c: float = 2.0):
    """(distinct, entropy, recursive) l of every record's class, a missing sensitive value
    (-1) counted as one value."""
    out = []
    for i in range(len(codes)):
        values = [sensitive[j] for j in range(len(codes))
                  if key_match(codes[i], codes[j], missing)]
        counts = sorted((values.count(v) for v in set(values)), reverse=True)
        total = sum(counts)
        entropy = math.exp(-sum(r / total * math.log(r / total) for r in counts))
        recursive = max([1] + [l for l in range(2, len(counts) + 1)  # noqa: E741
                               if counts[0] < c * sum(counts[l - 1:])])
        out.append((len(counts), entropy, recursive))
    return out


def msus_direct(codes, missing: str) -> list[list[tuple[int, ...]]]:
    """The minimal sample uniques of every record, by brute force over all subsets of the
    keys: a unique subset none of whose proper subsets is unique. Under ``matches-any`` a
    key a record misses is never in its MSUs."""
    n, m = len(codes), len(codes[0])
    found = []
    for i in range(n):
        usable = [v for v in range(m) if missing == "category" or codes[i][v] >= 0]

        def unique(subset, i=i):
            return sum(key_match([codes[i][v] for v in subset], [codes[j][v] for v in subset],
                                 "category" if missing == "category" else "any-value")
                       and (missing == "category"
                            or not blank_for_complete(codes[i], codes[j]))
                       for j in range(n)) == 1

        is_unique = {s: unique(s) for size in range(len(usable) + 1)
                     for s in itertools.combinations(usable, size)}
        found.append([s for s, u in is_unique.items() if s and u and not any(
            is_unique[tuple(x for x in s if x != v)] for v in s)])
    return found


def suda_direct(codes, missing: str, fraction: float = 0.01):
    """SUDA scores (Σ (m − |MSU|)! per record), per-record key contributions, and DIS
    scores (sdcMicro's formula), from :func:`msus_direct`."""
    n, m = len(codes), len(codes[0])
    msus = msus_direct(codes, missing)
    scores = [math.fsum(math.factorial(m - len(s)) for s in found) for found in msus]
    shares = [[math.fsum(math.factorial(m - len(s)) for s in found if v in s) / score
               if score else 0.0 for v in range(m)] for found, score in zip(msus, scores,
                                                                            strict=True)]
    fk = frequencies_direct(codes, missing)
    uniques, pairs = fk.count(1), fk.count(2)
    dis = [0.0] * n
    if any(scores):
        d = uniques * fraction / (uniques * fraction + pairs * (1 - fraction))
        q = 1 + (8 - m) / 20
        adjust = math.fsum(s ** -q for s in scores if s > 0)
        dis = [1 / (1 + (uniques / d - uniques) / (s ** q * adjust)) if s > 0 else 0.0
               for s in scores]
    return scores, shares, dis, msus


# -- classes when a quasi-identifier value may be missing ------------------------------------

def matching_sets(frame, keys, matches_any=True):
    """For every row, the rows that agree with it on every key: where one of the two is
    missing, any value matches (``matches_any``) or only another missing value."""
    values = frame[list(keys)].astype(str).to_numpy()
    missing = frame[list(keys)].isna().to_numpy()
    sets = []
    for i in range(len(frame)):
        same = np.ones(len(frame), dtype=bool)
        for j in range(len(keys)):
            equal = (values[:, j] == values[i, j]) & ~missing[:, j] & ~missing[i, j]
            if matches_any:
                equal |= missing[:, j] | missing[i, j]
            else:
                equal |= missing[:, j] & missing[i, j]
            same &= equal
        if matches_any and not missing[i].any():  # a row without any key: apart (freqCalc)
            same &= ~missing.all(axis=1)
        sets.append(np.flatnonzero(same))
    return sets


def largest_matching_emd(frame, keys, confidential, distance, matches_any=True):
    """The largest EMD (:func:`class_emd_direct`) of the confidential column over the
    matching sets of every row; a missing confidential value is a category of its own."""
    column = frame[confidential]
    values = (column.to_numpy(dtype=float) if distance == "ordered"
              else column.astype(object).where(column.notna(), "<missing>").astype(str)
              .to_numpy())
    return max(class_emd_direct(values, members, distance)
               for members in matching_sets(frame, keys, matches_any))


def record_linkage_with_missing(x, y, cx=None, cy=None, squared=None):
    """Record linkage (000 §5.2) by its definition, distances by :func:`_missing_distances` (over
    the attributes both records have, rescaled): each masked record links to the originals
    at minimum distance, a right link counting 1 / (their number)."""
    n = x.shape[0]
    cx = np.empty((n, 0), dtype=np.int64) if cx is None else cx
    cy = np.empty((n, 0), dtype=np.int64) if cy is None else cy
    squared = np.zeros((0, 1, 1)) if squared is None else squared
    total = 0.0
    for i in range(n):
        d = _missing_distances(x, cx, squared, np.arange(n), y[i], cy[i])
        nearest = np.flatnonzero(d == d.min())
        if i in nearest:
            total += 1.0 / nearest.size
    return 100.0 * total / n


# --- A release of categorical keys: its risk and its information loss --------------------

def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        value is not None and str(value) in ("<NA>", "nan", ""))


def released_key_risk_direct(original_rows, released_rows, kind: str, k: int = 5,
                             weights=None, missing: str = "matches-any",
                             own_only: bool = False) -> float:
    """The risk of released key rows (lists of values, None missing), from the released
    combinations' f_k (and F_k): Σ risk, its mean, or the count of f_k < k, over every record
    or (``own_only``) over the records whose released values are all their own."""
    values = {}

    def code(v):
        return -1 if _is_missing(v) else values.setdefault(v, len(values))

    codes = [[code(v) for v in row] for row in released_rows]
    fk = frequencies_direct(codes, missing)
    Fk = None if weights is None else frequencies_direct(codes, missing, weights)
    counted = [not own_only or all(
        (_is_missing(a) and _is_missing(b)) or a == b for a, b in zip(o, r, strict=True))
        for o, r in zip(original_rows, released_rows, strict=True)]
    if kind == "violations":
        return float(sum(c and f < k for c, f in zip(counted, fk, strict=True)))
    risks = [individual_risk_direct(int(f), None if Fk is None else F)
             for f, F in zip(fk, Fk or [None] * len(fk), strict=True)]
    total = math.fsum(r for r, c in zip(risks, counted, strict=True) if c)
    return total / len(fk) if kind == "global-risk" else total


def information_loss_direct(original_columns, released_columns) -> float:
    """The mean over the keys of Σ −log₂ P(x | r) / Σ −log₂ P(x) over the records with an
    original value, P(x | r) counted among the records released as r, and P(x) for a
    suppressed (missing) r; 0 for a key with one value."""
    shares = []
    for original, released in zip(original_columns, released_columns, strict=True):
        pairs = [(x, r) for x, r in zip(original, released, strict=True) if not _is_missing(x)]
        n = len(pairs)
        count_x, count_r, count_xr = {}, {}, {}
        for x, r in pairs:
            count_x[x] = count_x.get(x, 0) + 1
            if not _is_missing(r):
                count_r[r] = count_r.get(r, 0) + 1
                count_xr[(x, r)] = count_xr.get((x, r), 0) + 1
        own = math.fsum(-math.log2(count_x[x] / n) for x, _ in pairs)
        lost = math.fsum(-math.log2(count_x[x] / n) if _is_missing(r)
                         else -math.log2(count_xr[(x, r)] / count_r[r]) for x, r in pairs)
        shares.append(lost / own if own > 0 else 0.0)
    return math.fsum(shares) / len(shares)


def _f_of(codes, i, columns):
    """f of record i alone (:func:`matching_counts`, one row)."""
    sub = np.asarray(codes)[:, list(columns)]
    same = ((sub == sub[i]) | (sub < 0) | (sub[i] < 0)).all(axis=1)
    if (sub[i] >= 0).all():
        same &= ~(sub < 0).all(axis=1)
    return int(same.sum())


def _all_f(codes, columns):
    """:func:`matching_counts` of every record, all pairs at once."""
    sub = np.asarray(codes)[:, list(columns)]
    a, b = sub[:, None, :], sub[None, :, :]
    same = ((a == b) | (a < 0) | (b < 0)).all(axis=2)
    complete, blank = (sub >= 0).all(axis=1), (sub < 0).all(axis=1)
    same &= ~(complete[:, None] & blank[None, :])
    return same.sum(axis=1)


def _bits(s):
    return [c for c in range(s.bit_length()) if (s >> c) & 1]


def _keys_of(codes, i, mask):
    return sum(1 << c for c in _bits(mask) if codes[i, c] >= 0)


def _f_after(codes, i, S, columns):
    trial = codes.copy()
    trial[i, _bits(S)] = -1
    return _f_of(trial, i, columns)


def local_suppression_sweeps(codes, rank, constraints, auto=False):
    """Local suppression by the sweeps of microagg.core.suppression's module docstring,
    every frequency counted afresh from its definition; ``auto``: the records left below k
    done a record at a time once they are no more than the sets of the next size. Returns
    the suppressed table."""
    X0 = np.asarray(codes)
    X = X0.copy()
    weight = lambda s: sum(1 << int(rank[c]) for c in _bits(s))  # noqa: E731
    below = True
    while below:
        below = False
        for con in constraints:
            f = _all_f(X, con.columns)
            order = [int(i) for i in np.argsort(f, kind="stable") if f[i] < con.k]
            if order:
                below = True
                _greedy_sweeps(X, con, order, weight, auto)
    _restore_by_key(X, X0, rank, constraints)
    return X


def _greedy_sweeps(X, con, pending, weight, auto):
    mask, k = con.mask(), con.k
    sets = sorted(range(1, mask + 1), key=lambda s: (s.bit_count(), weight(s)))
    sets = [s for s in sets if s & ~mask == 0]
    singles = [s for s in sets if s.bit_count() == 1]

    def below():
        f = _all_f(X, con.columns)
        return [i for i in pending if f[i] < k]

    def sweep(S):
        candidates = [i for i in below() if _keys_of(X, i, mask) & S == S]
        done = 0
        for p in sorted({_keys_of(X, i, mask) for i in candidates}):
            for i in [i for i in candidates if _keys_of(X, i, mask) == p]:
                if _f_of(X, i, con.columns) < k and _f_after(X, i, S, con.columns) >= k:
                    X[i, _bits(S)] = -1
                    done += 1
        return done

    for S in sets:
        pending = below()
        if not pending:
            return
        if auto and len(pending) <= math.comb(len(con.columns), S.bit_count()):
            break
        if sweep(S) and S.bit_count() > 1:
            for single in singles:
                sweep(single)
    for i in below():  # a record at a time, with its copies
        if _f_of(X, i, con.columns) >= k:
            continue
        keys = _keys_of(X, i, mask)
        best = next(S for S in sets if S & ~keys == 0
                    and _f_after(X, i, S, con.columns) >= k)
        copies = (X[:, _bits(mask)] == X[i, _bits(mask)]).all(axis=1)
        X[np.ix_(copies, _bits(best))] = -1


def _restore_by_key(X, X0, rank, constraints):
    """Pass 2: a value is put back when every constraint stays k-anonymous; the keys from
    the most important, then the records with more keys, then by their keys and row."""
    everything = (1 << X.shape[1]) - 1
    raised = True
    while raised:
        raised = False
        for c in sorted(range(X.shape[1]), key=lambda c: -rank[c]):
            rows = [j for j in range(X.shape[0]) if X[j, c] < 0 <= X0[j, c]]
            keys = {j: _keys_of(X, j, everything) for j in rows}
            rows.sort(key=lambda j: (-keys[j].bit_count(), -keys[j], j))
            for j in rows:
                trial = X.copy()
                trial[j, c] = X0[j, c]
                if all(_all_f(trial, con.columns).min() >= con.k for con in constraints
                       if (con.mask() >> c) & 1):
                    raised |= any(keys[j] & con.mask() == 0 for con in constraints
                                  if (con.mask() >> c) & 1)
                    X[j, c] = X0[j, c]
