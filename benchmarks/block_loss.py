"""Where block MDAV's extra SSE sits: by distance to the nearest cut, by formation order, by
distance from the mean (docs/benchmarks.md, "Block MDAV: what the blocks cost in SSE").

Usage:
  python benchmarks/block_loss.py [--n 100000] [--block-size 10000] [--d 10] [--k 5]

Runs exact MDAV and block MDAV on the same n × d standard-normal records (seed 0). A record's
cost is its squared distance to its cluster's mean; the excess is block MDAV's total cost
minus exact MDAV's, and every table gives the share of it in each bin.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from microagg.partition.blocks import block_mdav
from microagg.partition.mdav import mdav


def _boxes(X: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blocks of :func:`median_blocks` with each block's box (the cut values bounding it,
    ±inf where no cut does)."""
    d = X.shape[1]
    blocks = np.empty(X.shape[0], dtype=np.int64)
    low: list[np.ndarray] = []
    high: list[np.ndarray] = []
    stack = [(np.arange(X.shape[0]), np.full(d, -np.inf), np.full(d, np.inf))]
    while stack:
        rows, lo, hi = stack.pop()
        if rows.size <= block_size:
            blocks[rows] = len(low)
            low.append(lo)
            high.append(hi)
            continue
        values = X[rows]
        axis = int(np.argmax(values.max(axis=0) - values.min(axis=0)))
        order = rows[np.argsort(values[:, axis], kind="stable")]
        half = rows.size // 2
        cut = (X[order[half - 1], axis] + X[order[half], axis]) / 2
        upper, lower = hi.copy(), lo.copy()
        upper[axis], lower[axis] = cut, cut
        stack.append((order[half:], lower, hi))
        stack.append((order[:half], lo, upper))
    return blocks, np.array(low), np.array(high)


def _costs(X: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every record's squared distance to its cluster's mean, and the clusters' means."""
    counts = np.bincount(labels)
    means = np.stack([np.bincount(labels, X[:, j]) / counts for j in range(X.shape[1])], 1)
    return ((X - means[labels]) ** 2).sum(axis=1), means


def _table(title: str, edges: list[float], exact_key: np.ndarray, exact_cost: np.ndarray,
           block_key: np.ndarray, block_cost: np.ndarray, excess: float) -> None:
    print(title)
    for lo, hi in itertools.pairwise(edges):
        e = exact_cost[(exact_key >= lo) & (exact_key < hi)].sum()
        b = block_cost[(block_key >= lo) & (block_key < hi)].sum()
        print(f"  [{lo:g}, {hi:g}): exact {e:11.1f}  block {b:11.1f}  "
              f"share of the excess {(b - e) / excess * 100:6.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--block-size", type=int, default=10_000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    X = np.random.default_rng(0).standard_normal((args.n, args.d))
    blocks, low, high = _boxes(X, args.block_size)
    exact = mdav(X, args.k)
    block = block_mdav(X, args.k, args.block_size)
    exact_cost, exact_means = _costs(X, exact)
    block_cost, block_means = _costs(X, block)
    excess = block_cost.sum() - exact_cost.sum()
    print(f"SSE exact {exact_cost.sum():.1f}, block {block_cost.sum():.1f} "
          f"({excess / exact_cost.sum() * 100:+.1f} %), {low.shape[0]} blocks")
    # records, by distance to the nearest cut of their block: the same records in both
    gap = np.minimum(X - low[blocks], high[blocks] - X).min(axis=1)
    print("records by distance to the nearest cut (share of records, relative excess):")
    for lo, hi in zip([0, .05, .1, .2, .3, .5, .8, 1.2], [.05, .1, .2, .3, .5, .8, 1.2, np.inf],
                      strict=True):
        m = (gap >= lo) & (gap < hi)
        print(f"  [{lo:g}, {hi:g}): {m.mean() * 100:5.1f} % of records, excess "
              f"{(block_cost[m].sum() / exact_cost[m].sum() - 1) * 100:+6.1f} %, share "
              f"{(block_cost[m].sum() - exact_cost[m].sum()) / excess * 100:6.1f} %")
    # clusters, by the order MDAV formed them (labels count up in that order, block by block)
    exact_rank = np.arange(exact.max() + 1) / (exact.max() + 1)
    block_rank = np.empty(block.max() + 1)
    for b in range(low.shape[0]):
        own = np.unique(block[blocks == b])
        block_rank[own] = (own - own.min()) / own.size
    _table("clusters by formation order (fraction of their block's clusters formed before):",
           [0, .5, .9, .99, 1.01], exact_rank, np.bincount(exact, exact_cost), block_rank,
           np.bincount(block, block_cost), excess)
    _table("clusters by distance of their mean from the data's mean:",
           [0, 2, 3, 3.5, 4, np.inf], np.sqrt((exact_means ** 2).sum(axis=1)),
           np.bincount(exact, exact_cost), np.sqrt((block_means ** 2).sum(axis=1)),
           np.bincount(block, block_cost), excess)


if __name__ == "__main__":
    main()
