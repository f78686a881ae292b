"""Speed of CSV reading and writing, 10⁶ × 10 floats: pandas' writer against microagg's
(pyarrow's writer with pandas' values), plain and as a release (15 significant digits), and
pandas' C reader (microagg's) against pyarrow's. Each file microagg writes is read back and
compared with the one pandas writes, bit for bit. The compiled writer of releases is loaded
(numba's cache) before the timing, as a command has loaded its kernels by the time it writes.

Usage: python benchmarks/bench_io.py [--rows N] [--columns P]
(named bench_io, not io: a script's folder comes first on sys.path, and io.py would shadow
the standard library's io)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np


def _seconds(action, *args, **kwargs) -> float:
    start = time.perf_counter()
    action(*args, **kwargs)
    return round(time.perf_counter() - start, 3)


def main() -> None:
    import pandas as pd
    import pyarrow.csv as pacsv

    from microagg.data.csvwrite import RELEASE_FLOAT_FORMAT, write_csv
    from microagg.data.io import read_table

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--columns", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(args.rows, args.columns)) * 1000,
                         columns=[f"x{j}" for j in range(args.columns)])
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        write_csv(frame.head(100), base / "warm-up.csv", release=True)  # loads the kernels
        for release in (False, True):
            ours, theirs = base / "microagg.csv", base / "pandas.csv"
            pandas_write = _seconds(frame.to_csv, theirs, index=False,
                                    float_format=RELEASE_FLOAT_FORMAT if release else None)
            microagg_write = _seconds(write_csv, frame, ours, release=release)
            equal = np.array_equal(read_table(ours).to_numpy(), read_table(theirs).to_numpy())
            print(json.dumps({"benchmark": "csv write", "rows": args.rows,
                              "columns": args.columns, "release": release,
                              "pandas_seconds": pandas_write,
                              "microagg_seconds": microagg_write,
                              "read_back_equal": bool(equal)}))
        path = base / "pandas.csv"
        pandas_read = _seconds(read_table, path)
        arrow_read = _seconds(lambda: pacsv.read_csv(path).to_pandas())
        print(json.dumps({"benchmark": "csv read", "rows": args.rows, "columns": args.columns,
                          "pandas_c_engine_seconds": pandas_read,
                          "pyarrow_seconds": arrow_read, "chosen": "pandas"}))


if __name__ == "__main__":
    main()
