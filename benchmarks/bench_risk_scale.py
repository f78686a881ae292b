"""The frequency-based risk measures of categorical keys on the Dask engine: n records x 8
skewed categorical keys (two with 1 % missing values) and a weight, as Parquet files of 10^6
rows, on a LocalCluster; and the same measures on one machine (key_frequencies and
individual_risk on the whole table in memory), with the largest difference between the two.

Usage: python benchmarks/bench_risk_scale.py [--n 10000000] [--workers 2] [--folder DIR]
       [--missing matches-any] [--no-local]
Prints one JSON object: seconds of the cluster run without and with the per-record output,
of the one-machine run, the combinations found, and the largest relative differences of the
global risk and of every record's f_k, F_k and risk.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _harness import peak_rss_mib

CARDINALITIES = {"sex": 2, "age_band": 19, "region": 20, "marital": 6, "education": 10,
                 "occupation": 12, "household_size": 8, "citizenship": 3}
WITH_MISSING = ("education", "occupation")
FILE_ROWS = 1_000_000


def write(folder: Path, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for i, start in enumerate(range(0, n, FILE_ROWS)):
        size = min(FILE_ROWS, n - start)
        columns = {}
        for name, levels in CARDINALITIES.items():
            p = 1.0 / np.arange(1, levels + 1)  # Zipf-like: a few common values
            values = rng.choice(levels, size, p=p / p.sum()).astype(np.float64)
            if name in WITH_MISSING:
                values[rng.random(size) < 0.01] = np.nan
            columns[name] = values
        columns["weight"] = rng.uniform(1, 500, size)
        pd.DataFrame(columns).to_parquet(folder / f"part-{i:05d}.parquet")


def local(folder: Path, missing: str) -> tuple[float, pd.DataFrame, float]:
    from microagg.core.frequencies import key_codes, key_frequencies
    from microagg.risk import individual_risk

    frame = pd.read_parquet(folder)
    start = time.perf_counter()
    fk, Fk = key_frequencies(key_codes(frame, list(CARDINALITIES)), missing,
                             frame["weight"].to_numpy())
    risk = individual_risk(fk, Fk)
    seconds = time.perf_counter() - start
    return seconds, pd.DataFrame({"fk": fk, "Fk": Fk, "risk": risk}), float(risk.mean())


def relative(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.abs(b))) if a.size else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", help="write the data here (kept); default a temporary one")
    parser.add_argument("--missing", default="matches-any")
    parser.add_argument("--no-local", action="store_true")
    args = parser.parse_args()
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.risk import risk_at_scale

    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(args.folder or temporary) / "data"
        folder.mkdir(parents=True, exist_ok=True)
        if not any(folder.iterdir()):
            write(folder, args.n)
        dataset = open_dataset(folder)
        keys = list(CARDINALITIES)
        case = {"benchmark": "risk-at-scale", "rows": dataset.n, "keys": len(keys),
                "workers": args.workers, "missing": args.missing}
        with dask_client(workers=args.workers) as client:
            start = time.perf_counter()
            result = risk_at_scale(client, dataset, keys, weight="weight", missing=args.missing)
            case["seconds"] = round(time.perf_counter() - start, 2)
            out = Path(temporary) / "records"
            start = time.perf_counter()
            risk_at_scale(client, dataset, keys, weight="weight", missing=args.missing,
                          records_out=out)
            case["seconds_with_records"] = round(time.perf_counter() - start, 2)
            records = pd.read_parquet(out)
        case["combinations"] = len(result.combinations)
        case["global_risk"] = result.global_risk
        if not args.no_local:
            seconds, expected, global_risk = local(folder, args.missing)
            case["local_seconds"] = round(seconds, 2)
            case["global_risk_relative_difference"] = abs(result.global_risk / global_risk - 1)
            case["fk_equal"] = bool((records["fk"].to_numpy() == expected["fk"].to_numpy()).all())
            case["Fk_relative_difference"] = relative(records["Fk"], expected["Fk"])
            case["risk_relative_difference"] = relative(records["risk"], expected["risk"])
        case["peak_rss_mib_client"] = round(peak_rss_mib(), 1)
    print(json.dumps(case))


if __name__ == "__main__":
    main()
