"""ε-DP records and statistics by cross-moment microaggregation (paper 004, Algorithms 1-3).

The statistics, their sensitivities, noise, post-processing and sampling are in
:mod:`microagg.release.dp.moments` (its docstring gives the six steps); this module holds the
method's options and runs the steps for each group of attributes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.errors import InputError, ParameterError
from microagg.options import Clustering, CoskewnessTerms, Linkage, MomentNoise, MomentVariant
from microagg.release.dp.eigen import INDIVIDUAL, perturb_eigen
from microagg.release.dp.mechanisms import Budget
from microagg.release.dp.moments import (
    EIGEN_NOISE_NOTE,
    KENDALL,
    PAPER_STRATEGIES,
    STATISTICS,
    StatisticBlock,
    perturb,
    post_process,
    records,
    share_of,
    statistic_blocks,
    statistics_frame,
)
from microagg.release.families.dp import DPMethod, DPStep, Progress
from microagg.release.inputs import DPInput
from microagg.release.methods.base import release_method
from microagg.release.methods.dp_individual_ranking import LINKAGE_HELP
from microagg.release.params import Choice, Interval, Optional, Predicate, param
from microagg.release.reports.report import NoiseLevel, numeric_noise

__all__ = ["CrossMoment"]


def _shares(name: str, value: Any) -> tuple[float, ...] | None:
    """``strategy``: shares of ε, given as numbers or as the text "0.75,0.25"."""
    if value is None:
        return None
    try:
        parts = value.split(",") if isinstance(value, str) else list(value)
        shares = tuple(float(part) for part in parts)
    except (TypeError, ValueError):
        raise ParameterError(name, f"takes comma-separated shares of epsilon, e.g. 0.75,0.25; "
                             f"got {value!r}") from None
    if any(not (s > 0 and math.isfinite(s)) for s in shares) or \
            not math.isclose(sum(shares), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ParameterError(name, f"needs positive shares that sum to 1 (fractions of "
                             f"epsilon), got {','.join(f'{s:g}' for s in shares)}")
    return shares


def _groups(name: str, value: Any) -> tuple[tuple[str, ...], ...] | None:
    """``groups``: attribute groups, given as lists of names or as the text "A,B;C"."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [[n.strip() for n in group.split(",") if n.strip()]
                 for group in value.split(";") if group.strip()]
    try:
        groups = tuple(tuple(str(n) for n in group) for group in value if len(group))
    except TypeError:
        raise ParameterError(name, f"takes groups of column names, e.g. 'A,B;C', got "
                             f"{value!r}") from None
    if not groups:
        raise ParameterError(name, "names no group")
    return groups


@release_method
class CrossMoment(DPMethod):
    """ε-DP records (and statistics) by m-microaggregation and noise (paper 004): per cluster
    the mean and, for m = 1 or 2, the covariance and the marginal coskewness, released with
    Laplace noise on the unit domain, and each cluster's records drawn from a normal (m = 1)
    or skew-normal (m = 2) with those moments (:mod:`microagg.release.dp.moments`).

    References
    ----------
    Paper 004, Algorithms 1-3, Propositions 5, 6, 8 and Theorem 11.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(2000, 3, seed=0)
    >>> release = CrossMoment(epsilon=1.0, k=500).release(
    ...     data.frame, schema=data.schema, columns=["age", "income"])
    >>> release.report.moments["m"], release.statistics is not None
    (1, True)
    """

    name: ClassVar[str] = "cross-moment"
    summary: ClassVar[str] = "cross-moment: noisy cluster means and covariances"
    uses_threads: ClassVar[bool] = True

    k: int = param(Interval(int, 1), help="Cluster size.")
    moments: int = param(Interval(int, 0, 2), default=1,
                         help="0 (means) | 1 (default; + covariance) | 2 (+ coskewness).")
    noise: MomentNoise | None = param(
        Optional(Choice(MomentNoise)), default=None,
        help="How the statistics of a cluster get their noise: joint (default; one noise "
             "scale for mean and moments together) | separate (each statistic its own "
             "share of epsilon, set by `strategy`).")
    strategy: tuple[float, ...] | None = param(
        Predicate(_shares, "shares of epsilon summing to 1"), default=None,
        help="With `noise` separate: shares of epsilon for mean, covariance[, coskewness], "
             "summing to 1 (default 0.5,0.5 or 0.5,0.3,0.2).")
    clustering: Clustering = param(
        Choice(Clustering), default=Clustering.INSENSITIVE,
        help="insensitive (default; epsilon-DP of the records) | mdav | ir-mdav "
             "(clusters read off the data, each attribute group apart for ir-mdav: then only "
             "the microaggregated table is epsilon-DP, not the records).")
    variant: MomentVariant | None = param(
        Optional(Choice(MomentVariant)), default=None,
        help="pure (default; every covariance) | variances | kendall (variances and "
             "Kendall's tau per pair, a Gaussian copula; m = 1) | eigen (eigenvalues and "
             "eigenvectors: individual DP only, NOT DP).")
    coskewness: CoskewnessTerms | None = param(
        Optional(Choice(CoskewnessTerms)), default=None,
        help="m = 2: marginal (default; what the sampler uses) | all (the only choice of "
             "`variant` eigen).")
    groups: tuple[tuple[str, ...], ...] | None = param(
        Predicate(_groups, "groups of column names"), default=None,
        help="With `clustering` ir-mdav: attribute groups clustered separately, 'A,B;C' "
             "(default: one per attribute).")
    linkage: Linkage | None = param(Optional(Choice(Linkage)), default=None,
                                    help=LINKAGE_HELP)

    def __post_init__(self) -> None:
        super().__post_init__()
        given = {"noise": self.noise, "strategy": self.strategy, "variant": self.variant}
        if self.moments == 0:
            for name, value in given.items():
                if value is not None:
                    raise ParameterError(name, "shapes the covariance and higher moments; "
                                         "`moments` 0 releases the means only")
        if self.coskewness is not None and self.moments != 2:
            raise ParameterError("coskewness", f"applies to `moments` 2 only (the coskewness "
                                 f"is the third moment), not `moments` {self.moments}")
        if self.resolved_variant is MomentVariant.KENDALL and self.moments == 2:
            raise ParameterError("variant", "kendall releases variances and rank "
                                 "correlations for a normal (Gaussian-copula) sampler: it is "
                                 "for `moments` 1")
        if self.strategy is not None and self.resolved_noise is MomentNoise.JOINT:
            raise ParameterError("strategy", "applies to `noise` separate only (joint noise "
                                 "uses one scale for every statistic)")
        if self.strategy is not None and len(self.strategy) != self.moments + 1:
            raise ParameterError("strategy", f"needs {self.moments + 1} shares ("
                                 f"{', '.join(STATISTICS[:self.moments + 1])}) for `moments` "
                                 f"{self.moments}, got {len(self.strategy)}")
        if self.groups is not None and self.clustering is not Clustering.IR_MDAV:
            raise ParameterError("groups", "applies to `clustering` ir-mdav only")
        if self.clip is not None and self.clustering is not Clustering.INSENSITIVE:
            raise ParameterError("clip", "needs `clustering` insensitive: with a data-dependent "
                                 "partition the release is DP of X^m only, and bounds chosen "
                                 "on the records would not compose with that guarantee")
        self.coskewness_terms  # noqa: B018 (refuses marginal terms with the eigen variant)

    @property
    def resolved_noise(self) -> MomentNoise:
        return self.noise or MomentNoise.JOINT

    @property
    def resolved_variant(self) -> MomentVariant:
        return self.variant or MomentVariant.PURE

    @property
    def eigen(self) -> bool:
        return self.resolved_variant is MomentVariant.EIGEN and self.moments >= 1

    @property
    def coskewness_terms(self) -> CoskewnessTerms:
        """marginal by default; the eigen variant decomposes the whole coskewness (all)."""
        if self.resolved_variant is not MomentVariant.EIGEN:
            return self.coskewness or CoskewnessTerms.MARGINAL
        if self.coskewness is CoskewnessTerms.MARGINAL:
            raise ParameterError("coskewness", "must be all (or left out) with `variant` eigen, "
                                 "which releases the eigen-decomposition of every coskewness "
                                 "slice")
        return CoskewnessTerms.ALL

    @property
    def shares_of_statistics(self) -> tuple[float, ...]:
        if self.resolved_noise is MomentNoise.JOINT:
            return (1.0,)
        return self.strategy or (PAPER_STRATEGIES[self.moments][0] if self.moments else (1.0,))

    def column_sets(self, data: DPInput) -> list[list[str]]:
        """The attribute groups clustered separately (one group but with ir-mdav)."""
        if data.categorical:
            raise InputError(f"cross-moment microaggregation is for numeric attributes; "
                             f"'{data.categorical[0]}' is categorical: leave it out with "
                             "`columns`")
        if self.k < self.moments + 1:
            raise ParameterError("k", f"must be at least {self.moments + 1} with `moments` "
                                 f"{self.moments} (a {STATISTICS[self.moments]} of fewer "
                                 f"records is undefined), got {self.k}")
        if self.clustering is not Clustering.IR_MDAV:
            return [list(data.numeric)]
        if self.groups is None:
            return [[name] for name in data.numeric]
        seen: list[str] = []
        for group in self.groups:
            for name in group:
                if name not in data.numeric:
                    raise ParameterError("groups", f"names '{name}', which is not a protected "
                                         f"column (protected: {', '.join(data.numeric)})")
                if name in seen:
                    raise ParameterError("groups", f"puts column '{name}' in two groups")
                seen.append(name)
        missing = [c for c in data.numeric if c not in seen]
        if missing:
            raise ParameterError("groups", f"puts column '{missing[0]}' in no group (every "
                                 "protected column must be in exactly one)")
        return [list(g) for g in self.groups]

    def step(self, data: DPInput, budget: Budget, rng: np.random.Generator, *,
             threads: int | None, progress: Progress | None) -> DPStep:
        column_sets = self.column_sets(data)
        if self.linkage is not None and len(column_sets) < 2:
            raise ParameterError("linkage", "applies when attribute groups are clustered "
                                 "separately (`clustering` ir-mdav with two groups or more)")
        linkage = (self.linkage or Linkage.UNLINKED) if len(column_sets) > 1 else None
        names = [", ".join(g) for g in column_sets]
        group_epsilon = budget.split(
            {name: 1.0 for name in names},
            "sequential composition over attribute groups clustered separately"
            if len(column_sets) > 1 else "the whole budget on the one attribute group")
        run = _Run(self, data, budget, rng)
        for g, group in enumerate(column_sets):
            report = (None if progress is None else
                      (lambda rows, g=g: progress((g * data.n + rows) // len(column_sets))))
            run.group(g, group, names[g], group_epsilon[names[g]], threads, report)
        return run.result(column_sets, linkage)


class _Run:
    """One cross-moment release: every attribute group's clusters, noisy statistics and
    records, gathered for :class:`~microagg.release.families.dp.DPStep`."""

    def __init__(self, method: CrossMoment, data: DPInput, budget: Budget,
                 rng: np.random.Generator) -> None:
        self.method, self.data, self.budget, self.rng = method, data, budget, rng
        self.U = (data.X - data.lows) / data.widths
        self.labels = np.empty((data.n, len(data.numeric)), dtype=np.int64)
        self.values = np.empty_like(self.U)
        self.noise: dict[str, NoiseLevel] = {}
        self.sensitivities: list[dict[str, Any]] = []
        self.tables: list[pd.DataFrame] = []
        self.parts: list[tuple[str, float]] = []
        self.clusters = 0

    def partition(self, columns: list[int], threads: int | None,
                  progress: Progress | None) -> np.ndarray:
        from microagg.partition.insensitive import insensitive
        from microagg.partition.mdav import mdav

        data, method = self.data, self.method
        if method.clustering is Clustering.INSENSITIVE:
            return insensitive(data.X, method.k, data.lows, data.highs, threads=threads,
                               progress=progress)
        return mdav(self.U[:, columns], method.k, threads=threads, progress=progress)

    def plan(self, blocks: list[StatisticBlock], name: str, epsilon: float
             ) -> tuple[dict[str, float], list[tuple[str, list[StatisticBlock]]]]:
        """Each part of the statistics with its ε: all together (joint noise), or each
        statistic its share (separate noise, split in the ledger)."""
        if self.method.resolved_noise is MomentNoise.JOINT:
            return {"all statistics": epsilon}, [("all statistics", blocks)]
        statistics = list(dict.fromkeys(share_of(b) for b in blocks))
        shares = self.budget.split_part(
            name, dict(zip(statistics, self.method.shares_of_statistics, strict=True)),
            "sequential composition over the statistics of a cluster")
        return shares, [(s, [b for b in blocks if share_of(b) == s]) for s in statistics]

    def group(self, g: int, group: list[str], name: str, epsilon: float,
              threads: int | None, progress: Progress | None) -> None:
        from microagg.core.aggregate import cluster_kendall, cluster_moments

        data, method = self.data, self.method
        columns = [data.numeric.index(c) for c in group]
        d = len(columns)
        labels = self.partition(columns, threads, progress)
        blocks = statistic_blocks(d, method.moments, method.resolved_variant,
                                  method.coskewness_terms)
        computed = cluster_moments(
            self.U[:, columns], labels,
            covariance=next((b.index for b in blocks if b.statistic == "covariance"), None),
            coskewness=next((b.index for b in blocks if b.statistic == "coskewness"), None))
        rank_pairs = next((b.index for b in blocks if b.statistic == KENDALL), None)
        if rank_pairs is not None:
            computed = replace(computed, kendall=cluster_kendall(self.U[:, columns], labels,
                                                                 rank_pairs))
        self.clusters += computed.sizes.size
        shares, plan = self.plan(blocks, name, epsilon)
        noisy: dict[str, np.ndarray] = {}
        across = method.clustering is Clustering.INSENSITIVE
        for part, members in plan:
            what = (f"{part} ({', '.join(b.statistic for b in members)}) of [{group[0]}"
                    f"{', ...' if d > 1 else ''}] on the unit domain")
            if method.eigen and any(b.statistic != "mean" for b in members):
                part_noisy, entries, sd = perturb_eigen(
                    computed, [b.statistic for b in members], epsilon=shares[part],
                    across_clusters=across, rng=self.rng, what=what)
            else:
                part_noisy, entries, sd = perturb(computed, members, epsilon=shares[part],
                                                  across_clusters=across, rng=self.rng,
                                                  what=what)
            noisy.update(part_noisy)
            self.sensitivities += entries
            if "mean" in part_noisy:
                self.note_noise(columns, sd, eigen=method.eigen and len(members) > 1)
        released = post_process(blocks, noisy, computed.sizes, d)
        group_values, released = records(released, labels, self.rng)
        self.values[:, columns] = group_values
        self.labels[:, columns] = labels[:, None]
        self.tables.append(statistics_frame(released, group, name, data.lows[columns],
                                            data.widths[columns], self.rng))
        self.parts.append((f"({name})", epsilon))

    def note_noise(self, columns: list[int], sd: float, *, eigen: bool) -> None:
        for j in columns:
            width = float(self.data.widths[j])
            self.noise[self.data.numeric[j]] = numeric_noise(
                width, sd * width, EIGEN_NOISE_NOTE if eigen else None)

    def options(self, column_sets: Sequence[Sequence[str]]) -> dict[str, Any]:
        """The ``moments`` entry of the privacy report."""
        method = self.method
        clip = method.clip
        return {"m": method.moments, "noise": method.resolved_noise.value,
                "clustering": method.clustering.value,
                "variant": method.resolved_variant.value if method.moments >= 1 else None,
                "coskewness": method.coskewness_terms.value if method.moments >= 2 else None,
                "strategy": (list(method.shares_of_statistics)
                             if method.resolved_noise is MomentNoise.SEPARATE else None),
                "groups": [list(g) for g in column_sets],
                "clipping": clip.as_dict() if clip is not None else None,
                "unit_domain": "every attribute scaled to [0, 1] by its "
                               + ("clipped" if clip is not None else "declared") + " domain: "
                               "each coefficient's sensitivity is 1/k_i (Prop. 5, 6, 8 "
                               "with Λ = 1)",
                "statistics_released": ("coefficients rebuilt from the noisy eigenvalues and "
                                        "eigenvectors, " if method.eigen else "") +
                                       "post-processed (PSD covariance, feasible skewness); "
                                       "the records are drawn from them, so the guarantee "
                                       "covers the statistics and the records together"}

    def result(self, column_sets: list[list[str]], linkage: Linkage | None) -> DPStep:
        method, data = self.method, self.data
        target = None
        if method.clustering is not Clustering.INSENSITIVE:
            target = ("the m-microaggregated data set X^m (the records replaced by the "
                      f"statistics of their {method.clustering.value.upper()} clusters)")
        algorithm = ("Alg. 3, attribute groups" if len(column_sets) > 1 else
                     "Alg. 1, joint noise" if method.resolved_noise is MomentNoise.JOINT else
                     "Alg. 2, separate noise")
        return DPStep(
            numeric_values=data.lows + self.values * data.widths,
            concepts=np.empty((data.n, 0), dtype=np.int64),
            labels=self.labels[:, 0] if len(column_sets) == 1 else self.labels,
            description=f"cross-moment microaggregation, m = {method.moments} ("
                        f"{algorithm}; {method.clustering.value} clusters)",
            groups=self.clusters, sensitivities=self.sensitivities, noise=self.noise,
            linkage=linkage, column_groups=column_sets, parts=self.parts,
            microaggregated=target, individual=INDIVIDUAL if method.eigen else None,
            moments=self.options(column_sets),
            statistics=pd.concat(self.tables, ignore_index=True))
