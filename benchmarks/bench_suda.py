"""SUDA2's searches on UCI Adult's default keys (the first 9 or all 14 of the keys the app
reads as quasi-identifiers): each way of searching (``records``: the record search;
``subsets``: the compiled subset search; ``nodes``: the subset search node by node from
Python; ``chosen``: whichever ``risk.suda.search_cost`` picks), its kernels loaded first.

Each case runs in a fresh process and prints one JSON line: ``cpu_seconds`` (the search's
CPU time: the clock says little on a shared machine), ``seconds`` (its clock), the search
``search_cost`` states before (``stated_search``, ``stated_seconds``), the MSUs found and
the peak RSS. ``--ways`` picks the searches, ``--keys`` the key counts.

Usage: MICROAGG_DATA=../shared/datasets python benchmarks/bench_suda.py
       [--keys 9,14] [--ways chosen,records,subsets,nodes]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _harness import peak_rss_mib, run_cases


def _adult_codes(keys: int) -> tuple[Any, list[str]]:
    from microagg import datasets
    from microagg.core.frequencies import key_codes
    from microagg.data.schema import Role
    from microagg.ui.state import build_schema, read_upload

    found = datasets.data_dir("adult.csv")
    if found is None:
        raise SystemExit("adult.csv is not in the reference data (MICROAGG_DATA)")
    frame, inferred, _ = read_upload(found / "adult.csv")
    names = [a.name for a in build_schema(inferred, {}) if a.role is Role.QUASI][:keys]
    return key_codes(frame, names), names


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from dataclasses import replace

    from microagg.risk import suda as suda_module

    codes, names = _adult_codes(case["keys"])
    stated = suda_module.search_cost(len(codes), len(names))
    if case["way"] != "chosen":
        chosen = replace(stated, search=case["way"])
        suda_module.search_cost = lambda records, keys: chosen  # type: ignore[assignment]
    suda_module.suda2(codes[:50])  # the kernels loaded
    cpu, started = time.process_time(), time.perf_counter()
    result = suda_module.suda2(codes, names)
    return {**case, "cpu_seconds": round(time.process_time() - cpu, 2),
            "seconds": round(time.perf_counter() - started, 2),
            "stated_search": stated.search, "stated_seconds": round(stated.seconds, 1),
            "msus": sum(result.msus_by_size), "sample_uniques": result.sample_uniques,
            "peak_rss_mib": round(peak_rss_mib(), 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case")
    parser.add_argument("--keys", default="9,14")
    parser.add_argument("--ways", default="chosen,records,subsets,nodes")
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return
    cases = [{"case": "suda2", "data": "adult", "keys": int(keys), "way": way}
             for keys in args.keys.split(",") for way in args.ways.split(",")]
    run_cases(__file__, cases, timeout=1800)


if __name__ == "__main__":
    main()
