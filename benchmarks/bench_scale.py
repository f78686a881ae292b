"""Scale: block MDAV and the sort-bound DP releases on a LocalCluster, Parquet to Parquet.

Usage:
  python benchmarks/bench_scale.py block-mdav [--sizes 1000000,4000000] [--block-size 600000]
  python benchmarks/bench_scale.py ir-dp [--sizes 10000000]
  python benchmarks/bench_scale.py block-sse [--sizes 100000,1000000]
      [--blocks 10000,100000,600000]
  ... [--repeat 3] [--workers 2] [--d 10] [--k 5]

``block-mdav`` and ``ir-dp`` write n × d standard-normal records as Parquet files of 10⁵ rows
(not timed), start a LocalCluster of ``--workers`` single-threaded processes (timed apart as
``startup_seconds``) and time the release from the files to the written data set. Each line is
the median of ``--repeat`` fresh processes, with every run's seconds and the peak resident
memory of the driver and of the largest worker. ``block-sse`` compares the SSE of block MDAV
with exact MDAV on one machine (the table "Block MDAV" of docs/benchmarks.md); the exact line
also gives, for every block size, the share of exact MDAV's clusters that the cuts of
:func:`~microagg.partition.blocks.median_blocks` would split (``crossing_cuts``): the clusters
block MDAV cannot form.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _harness import median_of_runs, peak_rss_mib
from microagg.partition.blocks import DEFAULT_BLOCK_SIZE

FILE_ROWS = 100_000


def _write_input(folder: Path, n: int, d: int, seed: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, FILE_ROWS)):
        rows = min(FILE_ROWS, n - start)
        X = rng.standard_normal((rows, d))
        table = pa.table({f"x{j}": X[:, j] for j in range(d)})
        pq.write_table(table, folder / f"part-{i:05d}.parquet")


def _worker_peak(client) -> float:
    import resource

    def peak() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    return max(client.run(peak).values())


def _cluster_case(case: dict) -> dict:
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset

    work = Path(tempfile.mkdtemp(prefix="microagg-bench-"))
    try:
        (work / "in").mkdir()
        _write_input(work / "in", case["n"], case["d"], case["seed"])
        dataset = open_dataset(work / "in")
        start = time.perf_counter()
        with dask_client(workers=case["workers"]) as client:
            startup = time.perf_counter() - start
            start = time.perf_counter()
            if case["benchmark"] == "block-mdav":
                from microagg.at_scale.anonymize import block_microaggregate

                report = block_microaggregate(client, dataset, work / "out", k=case["k"],
                                              block_size=case["block_size"])
                extra = {"sse_over_sst": round(report.sse / report.sst, 6),
                         "blocks": report.blocks["count"]}
            else:
                from microagg.at_scale.dp import dp_release_at_scale

                bounds = {f"x{j}": (-6.0, 6.0) for j in range(case["d"])}
                report = dp_release_at_scale(client, dataset, work / "out", method=case[
                    "method"], epsilon=case["epsilon"], k=case["k"], bounds=bounds, rng=0)
                extra = {"method": case["method"], "epsilon": case["epsilon"]}
            seconds = time.perf_counter() - start
            workers_peak = _worker_peak(client)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {**case, **extra, "seconds": round(seconds, 3),
            "startup_seconds": round(startup, 3), "peak_rss_mib": round(peak_rss_mib(), 1),
            "worker_peak_rss_mib": round(workers_peak, 1)}


def _sse_case(case: dict) -> dict:
    from microagg.core.aggregate import replace_by_means
    from microagg.partition.blocks import block_mdav, median_blocks
    from microagg.partition.mdav import mdav

    rng = np.random.default_rng(case["seed"])
    X = rng.standard_normal((case["n"], case["d"]))
    mdav(X[:500], case["k"])  # compile
    start = time.perf_counter()
    if case["block_size"]:
        labels = block_mdav(X, case["k"], case["block_size"])
    else:
        labels = mdav(X, case["k"])
    seconds = time.perf_counter() - start
    sse = float(((X - replace_by_means(X, labels)) ** 2).sum())
    sst = float(((X - X.mean(axis=0)) ** 2).sum())
    extra = {}
    if not case["block_size"]:
        order = np.argsort(labels, kind="stable")
        first = np.searchsorted(labels[order], np.arange(labels.max() + 1))
        extra["crossing_cuts"] = {}
        for b in case.get("cuts", []):
            blocks = median_blocks(X, b)[order]
            split = np.minimum.reduceat(blocks, first) != np.maximum.reduceat(blocks, first)
            extra["crossing_cuts"][str(b)] = round(float(split.mean()), 4)
    return {**case, "seconds": round(seconds, 3), "sse": round(sse, 1),
            "sse_over_sst": round(sse / sst, 6), "peak_rss_mib": round(peak_rss_mib(), 1),
            **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", nargs="?", choices=["block-mdav", "ir-dp", "block-sse"])
    parser.add_argument("--case")
    parser.add_argument("--sizes")
    parser.add_argument("--blocks", default="10000,100000,600000")
    parser.add_argument("--block-size", type=int, default=DEFAULT_BLOCK_SIZE)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.case:
        case = json.loads(args.case)
        print(json.dumps(_sse_case(case) if case["benchmark"] == "block-sse"
                         else _cluster_case(case)))
        return
    if args.benchmark == "block-sse":
        for n in (args.sizes or "100000,1000000").split(","):
            sizes = [b for b in map(int, args.blocks.split(",")) if b < int(n)]
            for block in [0, *sizes]:
                case = {"benchmark": "block-sse", "n": int(n), "d": args.d, "k": args.k,
                        "block_size": block, "seed": 0}
                if not block:
                    case["cuts"] = sizes
                print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)
        return
    default = "1000000,4000000" if args.benchmark == "block-mdav" else "10000000"
    for n in (args.sizes or default).split(","):
        case = {"benchmark": args.benchmark, "n": int(n), "d": args.d, "k": args.k,
                "workers": args.workers, "seed": 0}
        if args.benchmark == "block-mdav":
            case["block_size"] = args.block_size
        else:
            case.update(method="individual-ranking", epsilon=1.0, k=max(args.k, 10))
        print(json.dumps(median_of_runs(__file__, case, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
