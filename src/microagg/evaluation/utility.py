"""Utility (information-loss) measures between an original and a masked numeric matrix.

All functions take two ``(n, p)`` float arrays, original ``X`` and masked ``Y``, with the same
rows in the same order. They are the measures of the papers:

* SSE on the raw scale (000 §5.2): Σ_i Σ_j (x_ij - y_ij)²;
* SSE/SST in percent on standardized data, the usual "IL" of the microaggregation literature:
  100 · Σ_j SSE_j / s_j² / Σ_j SST_j / s_j², with s_j the standard deviation of original column
  j and SST_j = Σ_i (x_ij - mean_j)²;
* relative error RE (001 §4.2): mean over all values of ``|x - y| / max(|x|, s_j)``, with the sanity
  bound s_j = (b_j - a_j) / 100 tied to the attribute domain [a_j, b_j];
* variation of variances and of means (000 §5.4, 001 §4.2): ``|Θ' - Θ| / |Θ|`` per attribute;
* Jensen-Shannon divergence (001 §4.2), base 2 so it lies in [0, 1], between histograms of
  original and masked values with 100 equal bins over the attribute domain;
* the earth mover's distance of 003 eq. 1 between the original and the masked distributions
  (:func:`emd`), which needs no row alignment and so also measures synthetic releases.

Missing values (NaN) are skipped, measure by measure: SSE, SSE/SST and the relative error run
over the values present in both tables (SST_j over the rows where column j is present in
both), variances, means and histograms over each table's own values present (a column with
no value present has NaN measures); the EMD needs complete records
(:func:`microagg.evaluation.evaluate.evaluate` passes those). Without a missing value every
figure is computed exactly as before.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from itertools import pairwise

import numba
import numpy as np

from microagg.core.aggregate import cluster_means
from microagg.errors import InputError
from microagg.partition.mdav import mdav

__all__ = [
    "EMD_EXACT_LIMIT",
    "JSD_BINS",
    "EarthMovers",
    "emd",
    "js_divergence",
    "jsd",
    "mean_variation",
    "paired_matrices",
    "relative_error",
    "relative_errors",
    "sse",
    "sse_percent",
    "variance_variation",
]

JSD_BINS = 100


def paired_matrices(original: np.ndarray, masked: np.ndarray, *, aligned: bool = True,
                    finite_for: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Original and masked data as float matrices (a vector is one attribute), checked: the
    same attributes, rows in both, the same rows too when ``aligned`` (row i of one is row i
    of the other), and finite values when ``finite_for`` names the measure that needs them."""
    x = np.asarray(original, dtype=np.float64)
    y = np.asarray(masked, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if y.ndim == 1:
        y = y[:, None]
    if x.ndim != 2 or y.ndim != 2 or (x.shape != y.shape if aligned
                                      else x.shape[1] != y.shape[1]):
        what = "shape" if aligned else "their attributes"
        raise InputError(f"original and masked data differ in {what}: {x.shape} vs {y.shape}")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise InputError("the table has no rows")
    if finite_for is not None and not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError(f"{finite_for} needs finite values")
    return x, y


def sse(original: np.ndarray, masked: np.ndarray) -> float:
    """Sum of squared errors on the raw scale (000 §5.2), over the values present in both."""
    x, y = paired_matrices(original, masked)
    return float(np.nansum((x - y) ** 2))


def sse_percent(original: np.ndarray, masked: np.ndarray) -> float:
    """SSE/SST · 100 on data standardized by the original's mean and standard deviation.

    Constant original columns (SST = 0) are left out; NaN if every column is constant. With
    missing values, column j is compared on the rows where it is present in both tables
    (SSE_j and SST_j alike).
    """
    x, y = paired_matrices(original, masked)
    missing = np.isnan(x) | np.isnan(y)
    if missing.any():
        x = np.where(missing, np.nan, x)
        y = np.where(missing, np.nan, y)
        centred = x - _moment(x, "mean")
        sst = np.nansum(centred**2, axis=0)
        keep = sst > 0
        if not keep.any():
            return float("nan")
        sse_j = np.nansum((x - y) ** 2, axis=0)
        return float(100.0 * np.mean(sse_j[keep] / sst[keep]))
    centred = x - x.mean(axis=0)
    sst = np.sum(centred**2, axis=0)
    keep = sst > 0
    if not keep.any():
        return float("nan")
    # Standardizing column j divides both SSE_j and SST_j by s_j²; the ratio per column is
    # what remains, weighted equally: Σ_j SSE_j/SST_j / p.
    sse_j = np.sum((x - y) ** 2, axis=0)
    return float(100.0 * np.mean(sse_j[keep] / sst[keep]))


def relative_errors(original: np.ndarray, masked: np.ndarray, widths: np.ndarray
                    ) -> np.ndarray:
    """``|x - y| / max(|x|, width_j / 100)`` for every value present in both (001 §4.2),
    flattened."""
    x, y = paired_matrices(original, masked)
    widths = np.broadcast_to(np.asarray(widths, dtype=np.float64), (x.shape[1],))
    if np.any(widths <= 0):
        raise InputError("relative error needs positive domain widths")
    denominator = np.maximum(np.abs(x), widths / 100.0)
    errors = (np.abs(x - y) / denominator).ravel()
    return errors[~np.isnan(errors)]


def relative_error(original: np.ndarray, masked: np.ndarray, widths: np.ndarray) -> float:
    """Mean of ``|x - y| / max(|x|, width_j / 100)`` over all values (001 §4.2)."""
    return float(np.mean(relative_errors(original, masked, widths)))


def _moment(values: np.ndarray, moment: str) -> np.ndarray:
    """Per column, the mean or the variance of the values present (NaN where none is)."""
    if not np.isnan(values).any():
        return values.mean(axis=0) if moment == "mean" else values.var(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column without any value: NaN
        return np.nanmean(values, axis=0) if moment == "mean" else np.nanvar(values, axis=0)


def variance_variation(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """``|Var(y) - Var(x)| / Var(x)`` per attribute (NaN where Var(x) = 0), each variance over
    the values present; the rows of the two need not be the same ones."""
    x, y = paired_matrices(original, masked, aligned=False)
    vx, vy = _moment(x, "var"), _moment(y, "var")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(vx > 0, np.abs(vy - vx) / vx, np.nan)


def mean_variation(original: np.ndarray, masked: np.ndarray) -> np.ndarray:
    """``|mean(y) - mean(x)| / |mean(x)|`` per attribute (NaN where mean(x) = 0), each mean over
    the values present; the rows of the two need not be the same ones."""
    x, y = paired_matrices(original, masked, aligned=False)
    mx, my = _moment(x, "mean"), _moment(y, "mean")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mx != 0, np.abs(my - mx) / np.abs(mx), np.nan)


def _histogram(values: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """Shares of the values present per bin (NaN everywhere when none is)."""
    values = values[~np.isnan(values)]
    if not values.size:
        return np.full(bins, np.nan)
    position = np.floor((values - lo) / (hi - lo) * bins)
    position = np.clip(position, 0, bins - 1).astype(np.int64)  # outside the domain: edge bins
    return np.bincount(position, minlength=bins) / values.size


def js_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """Jensen-Shannon divergence, base 2, of two discrete distributions (NaN when either is
    undefined: a column without any value present)."""
    if np.isnan(p).any() or np.isnan(q).any():
        return float("nan")
    m = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl_p = np.where(p > 0, p * np.log2(p / m), 0.0).sum()
        kl_q = np.where(q > 0, q * np.log2(q / m), 0.0).sum()
    return float(max(0.0, 0.5 * (kl_p + kl_q)))


def jsd(original: np.ndarray, masked: np.ndarray, lows: np.ndarray, highs: np.ndarray,
        bins: int = JSD_BINS) -> np.ndarray:
    """Jensen-Shannon divergence (base 2) per attribute between binned distributions.

    Bins split each domain [low_j, high_j] into ``bins`` equal parts; masked values outside the
    domain fall into the edge bins. The rows of the two need not be the same ones. Each
    histogram holds the shares of the values present (NaN for a column with none).
    """
    x, y = paired_matrices(original, masked, aligned=False)
    p_count = x.shape[1]
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), (p_count,))
    highs = np.broadcast_to(np.asarray(highs, dtype=np.float64), (p_count,))
    out = np.empty(p_count)
    for j in range(p_count):
        if not highs[j] > lows[j]:
            raise InputError("JSD needs domains with high > low")
        out[j] = js_divergence(
            _histogram(x[:, j], lows[j], highs[j], bins),
            _histogram(y[:, j], lows[j], highs[j], bins),
        )
    return out


EMD_EXACT_LIMIT = 5000
"""Up to this many distinct records per data set, :func:`emd` is exact; above it, the
distinct records are grouped so that the transport problem stays at most this size squared
(200 MB), and the exact EMD is bracketed by certified bounds."""


@dataclass(frozen=True)
class EarthMovers:
    """The EMD of 003 eq. 1 and how it was computed.

    ``clusters`` = (h, k), the numbers of groups of the original and the masked records. When
    ``exact`` the value is the EMD between the two empirical distributions. Otherwise the
    records were grouped (MDAV on the distinct records) and the exact EMD is only known to lie
    in [``low``, ``high``]: ``value`` is the centre of that interval and ``bound`` its half
    width, so the exact EMD is ``value ± bound`` (certified bounds, not a confidence
    interval: see :func:`emd`).
    """

    value: float
    exact: bool
    clusters: tuple[int, int]
    bound: float
    low: float
    high: float


@dataclass(frozen=True)
class _Groups:
    """A data set's distinct records (``points``, with their shares ``weights``) grouped into
    ``len(masses)`` groups: ``labels`` per distinct record, the groups' weighted ``means``
    and total ``masses``."""

    points: np.ndarray
    weights: np.ndarray
    labels: np.ndarray
    means: np.ndarray
    masses: np.ndarray

    @property
    def exact(self) -> bool:
        return self.masses.size == self.points.shape[0]

    def members(self) -> list[np.ndarray]:
        """The distinct records of every group."""
        order = np.argsort(self.labels, kind="stable")
        return np.split(order, np.cumsum(np.bincount(self.labels,
                                                     minlength=self.masses.size))[:-1])


def _distinct(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct records of ``points`` and their shares."""
    distinct, counts = np.unique(points, axis=0, return_counts=True)
    return distinct, counts / points.shape[0]


def _grouped(points: np.ndarray, weights: np.ndarray, centres: np.ndarray | None) -> _Groups:
    """Distinct records in groups: each its own (``centres`` None), or the Voronoi cells of
    ``centres`` (every record with its nearest centre; empty cells dropped)."""
    if centres is None:
        labels = np.arange(points.shape[0], dtype=np.int64)
        return _Groups(points, weights, labels, points, weights)
    from scipy.spatial import cKDTree  # 0.1 s to import: only when needed

    _, nearest = cKDTree(centres).query(points, k=1)
    _, labels = np.unique(nearest, return_inverse=True)
    labels = labels.reshape(-1).astype(np.int64)
    masses = np.bincount(labels, weights=weights)
    means = np.column_stack([np.bincount(labels, weights=weights * points[:, j])
                             for j in range(points.shape[1])]) / masses[:, None]
    return _Groups(points, weights, labels, means, masses)


def _group_both(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[_Groups, _Groups]:
    """Both data sets as distinct records, each side kept exact when it has at most
    ``max_points`` of them, else grouped into the Voronoi cells of at most ``max_points``
    centres: the means of MDAV groups of the two sides' distinct records pooled, so that the
    cells are small wherever either side has records (a masking that moves records little
    puts each record and its masked version in the same or a neighbouring cell)."""
    (px, wx), (py, wy) = _distinct(x), _distinct(y)
    centres = None
    if max(px.shape[0], py.shape[0]) > max_points:
        pooled = np.unique(np.vstack([px, py]), axis=0)
        size = math.ceil(pooled.shape[0] / max_points)
        centres = cluster_means(pooled, mdav(pooled, size)) if size > 1 else pooled
    return (_grouped(px, wx, centres if px.shape[0] > max_points else None),
            _grouped(py, wy, centres if py.shape[0] > max_points else None))


@numba.njit(cache=True, parallel=True)
def _potential(points: np.ndarray, centres: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """f(z) = min_j (||z − c_j|| − offsets_j) at every point: a 1-Lipschitz function."""
    out = np.empty(points.shape[0])
    for i in numba.prange(points.shape[0]):
        best = np.inf
        for j in range(centres.shape[0]):
            total = 0.0
            for c in range(points.shape[1]):
                diff = points[i, c] - centres[j, c]
                total += diff * diff
            best = min(best, math.sqrt(total) - offsets[j])
        out[i] = best
    return out


def _lower_bound(x: _Groups, y: _Groups, u: np.ndarray, v: np.ndarray) -> float:
    """Kantorovich-Rubinstein: E_X f − E_Y f <= EMD(X, Y) for every 1-Lipschitz f. Two are
    built from the grouped problem's dual potentials (u, v): f(z) = min_j (||z − ŷ_j|| − v_j)
    and f(z) = −min_i (||z − x̂_i|| − u_i); the larger bound is returned."""
    from_y = (x.weights @ _potential(x.points, y.means, v)
              - y.weights @ _potential(y.points, y.means, v))
    from_x = (y.weights @ _potential(y.points, x.means, u)
              - x.weights @ _potential(x.points, x.means, u))
    return float(max(from_y, from_x))


def _upper_bound(x: _Groups, y: _Groups, plan: np.ndarray) -> float:
    """The cost of a transport plan between the records, so >= EMD(X, Y): every mass m the
    grouped plan moves from group A to group B leaves A's records in proportion to their
    shares, and each group B distributes all it receives to its own records optimally (a small
    exact problem per group)."""
    import ot  # POT imports scikit-learn (0.2 s): only when an EMD is computed

    members_x, members_y = x.members(), y.members()
    sources, targets = np.nonzero(plan)
    order = np.argsort(targets, kind="stable")
    sources, targets = sources[order], targets[order]
    bounds = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1], True])
    total = 0.0
    for start, stop in pairwise(bounds):
        b = targets[start]
        feeding = sources[start:stop]
        points = np.vstack([x.points[members_x[a]] for a in feeding])
        masses = np.concatenate([plan[a, b] * x.weights[members_x[a]] / x.masses[a]
                                 for a in feeding])
        py = y.points[members_y[b]]
        wy = y.weights[members_y[b]]
        from scipy.spatial.distance import cdist

        cost = cdist(points, py)
        if points.shape[0] == 1 or py.shape[0] == 1:
            total += float(masses @ cost @ (wy / wy.sum()))
        else:
            total += float(masses.sum()) * float(
                ot.emd2(masses / masses.sum(), wy / wy.sum(), cost))
    return total


def _marginal_bound(x: np.ndarray, y: np.ndarray) -> float:
    """The largest EMD between the two data sets' values of one attribute: a lower bound of
    the EMD, since a coordinate is a 1-Lipschitz function of the record (exact, O(n log n))."""
    return max(wasserstein_1d(x[:, j], y[:, j]) for j in range(x.shape[1]))


def wasserstein_1d(u: np.ndarray, v: np.ndarray) -> float:
    """The EMD between the empirical distributions of the values ``u`` and ``v`` on the line:
    the integral of |F_u(t) - F_v(t)| (as scipy.stats.wasserstein_distance computes it,
    without the 0.4 s import of scipy.stats).

    Examples
    --------
    >>> wasserstein_1d(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    1.0
    """
    u, v = np.sort(u), np.sort(v)
    points = np.sort(np.concatenate([u, v]))
    steps = np.diff(points)
    cdf_u = np.searchsorted(u, points[:-1], side="right") / u.size
    cdf_v = np.searchsorted(v, points[:-1], side="right") / v.size
    return float(np.sum(np.abs(cdf_u - cdf_v) * steps))


def emd(original: np.ndarray, masked: np.ndarray, lows: np.ndarray, highs: np.ndarray, *,
        max_points: int = EMD_EXACT_LIMIT) -> EarthMovers:
    """Earth mover's distance (003 eq. 1, Rubner et al. 2000) between the distributions of the
    original and the masked records, the ground distance being Euclidean on attributes scaled
    to [0, 1] by the domain [low_j, high_j] (the scale that reproduces 003 Table 1).

    Records are first merged into distinct records weighted by their share. With at most
    ``max_points`` distinct records on each side the value is the exact EMD between the two
    empirical distributions. Above, the larger side's distinct records are grouped (003 §2.2
    clusters the data likewise; :func:`_group_both` says how) and the grouped problem is
    solved; the exact EMD is then bracketed by two certified bounds: below, E_X f − E_Y f for
    1-Lipschitz functions f built from the grouped problem's dual potentials
    (Kantorovich-Rubinstein duality, :func:`_lower_bound`); above, the cost of the grouped
    plan carried out record by record (:func:`_upper_bound`). The lower bound is at least the
    largest EMD of one attribute's values; with as many masked records as original ones, the
    upper bound is at most the mean distance between row i of one and row i of the other (the
    cost of that pairing: tight for a masking that keeps its rows in order and moves records
    little). The result is the interval's centre ± its half
    width. The transport problems are solved exactly by POT's network
    simplex. Masked data may have another number of records.
    """
    x, y = paired_matrices(original, masked, aligned=False, finite_for="the EMD")
    if max_points < 1:
        raise InputError(f"`max_points` must be at least 1, got {max_points}")
    lows = np.broadcast_to(np.asarray(lows, dtype=np.float64), (x.shape[1],))
    widths = np.broadcast_to(np.asarray(highs, dtype=np.float64), (x.shape[1],)) - lows
    if np.any(~(widths > 0)):
        raise InputError("the EMD needs domains with high > low")
    x, y = (x - lows) / widths, (y - lows) / widths
    gx, gy = _group_both(x, y, max_points)
    import ot

    cost = ot.dist(gx.means, gy.means, metric="euclidean")
    plan, log = ot.emd(gx.masses, gy.masses, cost, numItermax=max(100_000, 50 * cost.size),
                       log=True)
    if log["warning"] is not None:
        raise RuntimeError(f"the transport problem was not solved: {log['warning']}")
    clusters = (gx.masses.size, gy.masses.size)
    value = float(log["cost"])
    if gx.exact and gy.exact:
        return EarthMovers(value, True, clusters, 0.0, value, value)
    low = max(0.0, _lower_bound(gx, gy, log["u"], log["v"]), _marginal_bound(x, y))
    high = _upper_bound(gx, gy, plan)
    if x.shape == y.shape:
        high = min(high, float(np.mean(np.linalg.norm(x - y, axis=1))))
    high = max(low, high)
    return EarthMovers((low + high) / 2, False, clusters, (high - low) / 2, low, high)
