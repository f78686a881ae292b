"""The statistics of cross-moment microaggregation (paper 004, Algorithms 1-3) and their
noise, post-processing and sampling; the method and its options are
:class:`~microagg.release.methods.cross_moment.CrossMoment`.

1. Partition (004 §4.1 step 1). ``insensitive`` (000 Alg. 2, the default): on neighbouring
   data sets the i-th clusters differ in at most one record, so every cluster's statistics
   may change and the sensitivities below are summed over the c clusters (000 §4): the
   release is ε-DP with respect to the records. ``mdav`` (the paper's experiments): the
   partition depends on the data, and the release is ε-DP with respect to the
   m-microaggregated data set X^m only (004 §4.1): its neighbours differ in one record of
   one cluster, so each cluster is a query of its own (parallel composition). ``ir-mdav``
   (Alg. 3): MDAV on each group of attributes separately (default: each attribute), ε
   split equally over the groups; which values of different groups share a record is
   data-dependent, so by default every group is written in its own random order.
2. Statistics (004 §4.1 step 2, :func:`~microagg.core.aggregate.cluster_moments`): per cluster the
   mean, for m >= 1 the covariance coefficients q_ij (``pure``: every i <= j; ``variances``:
   q_ii), for m = 2 the coskewness φ_ijl (``marginal`` φ_iii, which the sampler uses, 004
   §5.2; or ``all``). ``eigen`` releases instead the eigenvalues and eigenvectors of the
   covariance and of each coskewness slice, with noise from each cluster's eigengaps: ε-
   individual DP only (:mod:`microagg.release.dp.eigen`).
3. Sensitivities on the unit domain. Every attribute is scaled to [0, 1] by its declared
   domain before anything is computed, so Λ_i = 1 and the sensitivity of a cluster of k_i
   records is 1/k_i for every mean coordinate (Prop. 5), covariance coefficient (Prop. 6)
   and coskewness coefficient (Prop. 8; 2/k_i when k_i = 3, where Prop. 8 is wrong, see
   :func:`coefficient_sensitivity`); Theorem 11's Λ̂ is then the number r of released
   coefficients. In data units this is Λ_i Λ_j / k for q_ij etc.; the noise is the same. We
   do not apply Theorem 11 in data units: Λ̂ would add widths, squared widths and cubed
   widths, and the noise on a mean would grow with the cube of the other domains (see
   docs/algorithms.md).
4. Noise (all through :func:`~microagg.release.dp.mechanisms.laplace_mechanism`, exact discrete
   Laplace): ``joint`` (Alg. 1) perturbs the r coefficients of a cluster with one scale
   r / (k_i ε); ``separate`` (Alg. 2) gives each statistic (mean, covariance, coskewness)
   its share of ε by a masking strategy and the scale (its coefficients) / (k_i ε_s).
   One draw per cluster and coefficient, never per record (004 §4.3).
5. Post-processing (free): means clamped to [0, 1]; the covariance made the nearest PSD
   matrix inside the box a sample covariance with the released means can reach (variances
   at most μ (1 − μ) k / (k − 1), Bhatia-Davis; :mod:`microagg.core.synthesis`); marginal
   skewness φ_iii / q_ii^{3/2} kept inside the skew-normal's range.
6. Records: k_i draws per cluster from N(mean, cov) (m = 1) or Azzalini's skew-normal
   (m = 2), or the mean itself (m = 0), clamped to the domain; written in random order.
   The post-processed statistics are released too (:attr:`Release.statistics`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from microagg.core.synthesis import (
    covariance_bound,
    nearest_covariance,
    sample_normal,
    sample_skew_normal,
    skew_normal_parameters,
)
from microagg.options import (
    CoskewnessTerms,
    MomentVariant,
)
from microagg.release.dp.mechanisms import laplace_mechanism

if TYPE_CHECKING:
    from microagg.core.aggregate import ClusterMoments

__all__ = [
    "EIGEN_NOISE_NOTE",
    "KENDALL",
    "PAPER_STRATEGIES",
    "STATISTICS",
    "Released",
    "StatisticBlock",
    "coefficient_sensitivity",
    "joint_sensitivity",
    "perturb",
    "post_process",
    "records",
    "share_of",
    "statistic_blocks",
    "statistics_frame",
]

# The masking strategies of 004 §5.1 (shares of ε for mean, covariance[, coskewness]).
PAPER_STRATEGIES = {1: ((0.5, 0.5), (0.75, 0.25)), 2: ((0.5, 0.3, 0.2), (0.75, 0.15, 0.10))}
STATISTICS = ("mean", "covariance", "coskewness")
# Kendall's τ_a of a cluster of k records: replacing one record changes the sign product of
# its k − 1 pairs, each by at most 2, over k (k − 1) / 2 pairs: 4 / k (reached when a record
# concordant with every other becomes discordant with every other). The block is released as
# τ_a / 4, of sensitivity 1/k like the variances beside it, so that the L1 mechanism's noise
# is not set by the τ's larger sensitivity on the variances too.
KENDALL = "kendall tau"
KENDALL_SENSITIVITY = 4.0
EIGEN_NOISE_NOTE = ("at least this: each cluster's eigenvector noise adds an amount that depends "
                    "on its eigengaps (eigen variant, local sensitivity)")


@dataclass(frozen=True, eq=False)
class StatisticBlock:
    """One statistic of a cluster: its name and its coefficients, one row of attribute
    indices each (order 1, 2 or 3)."""

    statistic: str
    index: np.ndarray

    @property
    def count(self) -> int:
        return int(self.index.shape[0])


def statistic_blocks(d: int, moments: int, variant: MomentVariant,
                     coskewness: CoskewnessTerms) -> list[StatisticBlock]:
    """The statistics an m-microaggregation of d attributes releases (004 §4.1, §5.1); the
    ``kendall`` variant releases the variances and Kendall's τ_a of every pair instead of
    the covariances (:data:`KENDALL_SENSITIVITY`)."""

    from microagg.core.aggregate import moment_indices

    blocks = [StatisticBlock("mean", moment_indices(d, 1, marginal=True))]
    if moments >= 1:
        blocks.append(StatisticBlock("covariance", moment_indices(
            d, 2, marginal=variant in (MomentVariant.VARIANCES, MomentVariant.KENDALL))))
    if moments >= 1 and variant is MomentVariant.KENDALL and d > 1:  # one attribute: no pair
        pairs = moment_indices(d, 2, marginal=False)
        blocks.append(StatisticBlock(KENDALL, pairs[pairs[:, 0] < pairs[:, 1]]))
    if moments >= 2:
        blocks.append(StatisticBlock("coskewness", moment_indices(
            d, 3, marginal=coskewness is CoskewnessTerms.MARGINAL)))
    return blocks


def coefficient_sensitivity(widths: np.ndarray, index: Sequence[int], k: int) -> float:
    """L1 sensitivity of one coefficient of a cluster of k records whose attributes have
    domain widths Λ: Λ_i / k for a mean coordinate (004 Prop. 5, summed over i for the whole
    mean), Λ_i Λ_j / k for q_ij (Prop. 6), Λ_i Λ_j Λ_l / k for φ_ijl (Prop. 8) when k >= 4.

    Prop. 8 is wrong for k = 3 (its Lemma 7 argues "by virtue of k > 3"): the cluster
    {0, 0, Λ} has φ = Λ³/3 and its neighbour {0, Λ, Λ} has φ = −Λ³/3, a change of 2Λ³/3.
    So for k = 3 we use 2 Λ_i Λ_j Λ_l / k, which an adversarial search reaches and never
    exceeds (tests/test_dp_moments.py)."""
    factor = 2.0 if len(index) == 3 and k == 3 else 1.0
    return factor * float(np.prod(np.asarray(widths, dtype=np.float64)[list(index)])) / k


def joint_sensitivity(widths: np.ndarray, blocks: Sequence[StatisticBlock], k: int) -> float:
    """Theorem 11 (i): Λ̂ / k, Λ̂ the sum of the released coefficients' Λ products (the
    coskewness ones doubled when k = 3, see :func:`coefficient_sensitivity`); the Kendall
    block is released as τ_a / :data:`KENDALL_SENSITIVITY`, 1/k per pair like a unit-domain
    coefficient."""
    return math.fsum(1.0 / k if block.statistic == KENDALL
                     else coefficient_sensitivity(widths, row, k)
                     for block in blocks for row in block.index)


def share_of(block: StatisticBlock) -> str:
    """The statistic whose share of ε a block spends (Alg. 2): Kendall's τ_a stands for the
    covariances, so it spends the covariance share together with the variances."""
    return "covariance" if block.statistic == KENDALL else block.statistic


def _block_values(block: StatisticBlock, moments: ClusterMoments) -> np.ndarray:
    if block.statistic == KENDALL:  # scaled to sensitivity 1/k (KENDALL_SENSITIVITY)
        assert moments.kendall is not None
        return moments.kendall / KENDALL_SENSITIVITY
    if block.statistic == "mean":
        return moments.means
    return moments.covariance if block.statistic == "covariance" else moments.coskewness


def _block_bounds(block: StatisticBlock, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals holding every value of the block's coefficients on the unit domain (the
    mechanism clamps to them; any wider interval would do)."""
    c = sizes.size
    if block.statistic == "mean":
        return np.zeros((c, block.count)), np.ones((c, block.count))
    if block.statistic == KENDALL:
        bound = 1.0 / KENDALL_SENSITIVITY
        return np.full((c, block.count), -bound), np.full((c, block.count), bound)
    k = sizes.astype(np.float64)[:, None]
    if block.statistic == "covariance":
        widest = np.broadcast_to(covariance_bound(k), (c, block.count))
        diagonal = block.index[:, 0] == block.index[:, 1]
        return np.where(diagonal, 0.0, -widest), widest.copy()
    widest = np.broadcast_to(k * k / ((k - 1) * (k - 2)), (c, block.count))
    return -widest, widest.copy()


def _formula(members: Sequence[StatisticBlock]) -> str:
    moments_ = sum(b.count for b in members if b.statistic != KENDALL)
    ranks = sum(b.count for b in members if b.statistic == KENDALL)
    return " + ".join(([f"{moments_} coefficients / k_i"] if moments_ else [])
                      + ([f"{ranks} Kendall tau_a / {KENDALL_SENSITIVITY:g}, each 1 / k_i"]
                         if ranks else []))


def perturb(computed: ClusterMoments, members: Sequence[StatisticBlock], *, epsilon: float,
             across_clusters: bool, rng: np.random.Generator, what: str
             ) -> tuple[dict[str, np.ndarray], list[dict[str, Any]], float]:
    """Laplace noise on the (clusters × coefficients) matrix of the statistics ``members``.
    On the unit domain a cluster of k_i records has the sensitivity s(k_i) of
    :func:`joint_sensitivity` with Λ = 1 (about the number of coefficients over k_i).
    ``across_clusters`` (insensitive partition): every cluster may change, so the matrix is one
    query of sensitivity Σ_i s(k_i). Otherwise (X^m) each cluster is its own query, composed
    in parallel: one call per cluster size, with one cluster's coefficients changing.
    Returns the noisy coefficients of each statistic, the report entries and the standard
    deviation of the noise on a mean coordinate (of the smallest clusters, the largest)."""
    sizes = computed.sizes
    values = np.hstack([_block_values(b, computed) for b in members])
    bounds = [_block_bounds(b, sizes) for b in members]
    lows = np.hstack([lo for lo, _ in bounds])
    highs = np.hstack([hi for _, hi in bounds])
    out = np.empty_like(values)
    entries = []
    coefficients = values.shape[1]
    unit = np.ones(int(max(b.index.max() for b in members)) + 1)
    if across_clusters:
        distinct, counts = np.unique(sizes, return_counts=True)
        sensitivity = math.fsum(int(count) * joint_sensitivity(unit, members, int(size))
                                for size, count in zip(distinct, counts, strict=True))
        out[:], info = laplace_mechanism(values, sensitivity=sensitivity, epsilon=epsilon,
                                         lows=lows, highs=highs, rng=rng)
        entries.append({"statistic": f"{what}, all {sizes.size} clusters",
                        "mechanism": "Laplace",
                        "formula": f"sum over clusters of {_formula(members)} (insensitive "
                                   "partition: every cluster may change)",
                        **info.as_dict()})
    else:
        for size in np.unique(sizes):
            rows = sizes == size
            out[rows], info = laplace_mechanism(
                values[rows], sensitivity=joint_sensitivity(unit, members, int(size)),
                epsilon=epsilon, lows=lows[rows], highs=highs[rows], rng=rng,
                changing=coefficients)
            entries.append({"statistic": f"{what}, {int(rows.sum())} cluster(s) of {size}",
                            "mechanism": "Laplace",
                            "formula": f"{_formula(members)} (one cluster changes; "
                                       "parallel composition over clusters)",
                            **info.as_dict()})
    noisy = {}
    start = 0
    for b in members:
        noisy[b.statistic] = out[:, start:start + b.count]
        start += b.count
    return noisy, entries, entries[0]["standard_deviation"]


@dataclass(frozen=True, eq=False)
class Released:
    """The post-processed statistics of a group's clusters on the unit domain."""

    sizes: np.ndarray
    means: np.ndarray  # (c, d)
    covariance: np.ndarray | None  # (c, d, d), PSD
    covariance_index: np.ndarray | None  # the released coefficients (i, j)
    coskewness: np.ndarray | None  # (c, s) released coefficients
    coskewness_index: np.ndarray | None
    skewness: np.ndarray | None  # (c, d) marginal skewness the sampler used
    kendall: np.ndarray | None = None  # (c, pairs) noisy τ_a, clamped to [-1, 1]
    kendall_index: np.ndarray | None = None


def post_process(blocks: Sequence[StatisticBlock], noisy: Mapping[str, np.ndarray],
                  sizes: np.ndarray, d: int) -> Released:
    """004 §4.3 line 12 / §5.2: a PSD covariance within reach of a sample covariance, and a
    marginal skewness the skew-normal accepts."""

    from microagg.core.aggregate import moment_indices

    means = noisy["mean"]
    covariance = coskewness = index = skewness = pairs = None
    by_name = {b.statistic: b for b in blocks}
    tau = KENDALL_SENSITIVITY * noisy[KENDALL] if KENDALL in noisy else None
    if "covariance" in noisy:
        block = by_name["covariance"]
        pairs = block.index
        c = sizes.size
        matrix = np.zeros((c, d, d))
        i, j = block.index[:, 0], block.index[:, 1]
        matrix[:, i, j] = noisy["covariance"]
        matrix[:, j, i] = noisy["covariance"]
        # Bhatia-Davis: values in [0, 1] with mean μ have variance at most μ (1 − μ), times
        # k/(k − 1) for the unbiased estimator; never above the bound for any mean.
        k = sizes.astype(np.float64)[:, None]
        variance = np.minimum(covariance_bound(sizes)[:, None],
                              means * (1 - means) * k / (k - 1))
        if tau is not None:
            # Greiner's relation of a Gaussian copula, ρ = sin(π τ / 2), scaled by the
            # released standard deviations (kept within their caps)
            rank_pairs = by_name[KENDALL].index
            a, b = rank_pairs[:, 0], rank_pairs[:, 1]
            spread = np.sqrt(np.clip(np.diagonal(matrix, axis1=1, axis2=2), 0.0, variance))
            matrix[:, a, b] = spread[:, a] * spread[:, b] * np.sin(np.pi / 2 * tau)
            matrix[:, b, a] = matrix[:, a, b]
            pairs = moment_indices(d, 2, marginal=False)
        highs = np.sqrt(variance[:, :, None] * variance[:, None, :])
        lows = np.where(np.eye(d, dtype=bool), 0.0, -highs)
        covariance = nearest_covariance(matrix, lows, highs)
    if "coskewness" in noisy:
        index = by_name["coskewness"].index
        coskewness = noisy["coskewness"]
        marginal = np.flatnonzero((index[:, 0] == index[:, 1]) & (index[:, 1] == index[:, 2]))
        assert covariance is not None, "m = 2 releases the covariance with the coskewness"
        variances = np.diagonal(covariance, axis1=1, axis2=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            skewness = np.where(variances > 1e-12,
                                coskewness[:, marginal] / variances ** 1.5, 0.0)
    return Released(sizes=sizes, means=means, covariance=covariance,
                     covariance_index=pairs, coskewness=coskewness, coskewness_index=index,
                     skewness=skewness,
                     kendall=tau,
                     kendall_index=by_name[KENDALL].index if KENDALL in by_name else None)


def records(released: Released, labels: np.ndarray, rng: np.random.Generator
             ) -> tuple[np.ndarray, Released]:
    """k_i records per cluster drawn from its released statistics (004 §5.2), clamped to the
    unit domain; the skew-normal's feasible skewness replaces the requested one."""
    if released.covariance is None:
        values = released.means[labels]
    elif released.skewness is None:
        values = sample_normal(released.means, released.covariance, labels, rng)
    else:
        model = skew_normal_parameters(released.means, released.covariance, released.skewness)
        values = sample_skew_normal(model, labels, rng)
        released = replace(released, skewness=model.skewness)
    return np.clip(values, 0.0, 1.0), released


def statistics_frame(released: Released, names: Sequence[str], group: str,
                      lows: np.ndarray, widths: np.ndarray, rng: np.random.Generator
                      ) -> pd.DataFrame:
    """The released statistics in data units, one row per cluster and coefficient, clusters
    numbered in a random order: group, cluster, size, statistic (mean, covariance,
    coskewness, and the dimensionless marginal skewness the sampler used), a, b, c (the
    attributes of the coefficient), value."""

    from microagg.core.aggregate import moment_indices

    c, d = released.means.shape
    order = rng.permutation(c)  # cluster order[i] is written as cluster i
    parts = []

    def add(statistic: str, index: np.ndarray, values: np.ndarray) -> None:
        scale = (1.0 if statistic in ("skewness", KENDALL)
                 else np.prod(widths[index], axis=1))
        shift = lows[index[:, 0]] if statistic == "mean" else 0.0
        table = pd.DataFrame({
            "group": group,
            "cluster": np.repeat(np.arange(c), index.shape[0]),
            "size": np.repeat(released.sizes[order], index.shape[0]),
            "statistic": statistic,
            "a": np.tile([names[i] for i in index[:, 0]], c),
            "b": np.tile([names[i[1]] if len(i) > 1 else "" for i in index], c),
            "c": np.tile([names[i[2]] if len(i) > 2 else "" for i in index], c),
            "value": (shift + values[order] * scale).ravel()})
        parts.append(table)

    add("mean", moment_indices(d, 1, marginal=True), released.means)
    if released.covariance is not None and released.covariance_index is not None:
        pairs = released.covariance_index
        add("covariance", pairs, released.covariance[:, pairs[:, 0], pairs[:, 1]])
    if released.kendall is not None and released.kendall_index is not None:
        add(KENDALL, released.kendall_index, released.kendall)
    if released.coskewness is not None and released.coskewness_index is not None:
        add("coskewness", released.coskewness_index, released.coskewness)
        if released.skewness is not None:
            add("skewness", moment_indices(d, 1, marginal=True), released.skewness)
    return pd.concat(parts, ignore_index=True).sort_values(
        "cluster", kind="stable", ignore_index=True)
