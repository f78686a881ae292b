"""Speed of the attack-based risks against Anonymeter's at 10^4 and 10^5 records.

Tables drawn from UCI Adult's ten columns of reproduction/anonymeter_attacks.py: ``n``
records drawn with replacement, their age and hours-per-week moved by a few units so that
the records are mostly distinct (the original); the release is the original with its age,
hours-per-week and capital-gain moved again; the control ``n / 4`` other records drawn the
same way. Both tools run the same attacks with the same settings (500 attacks: univariate and
multivariate singling out, linkability of the numbers to the categories, inference of income
and age), microagg after its kernels are loaded, Anonymeter in its own virtual environment
through reproduction/anonymeter_attacks.py's runner (its own timers, per attack).

Usage: python benchmarks/bench_attacks.py [--sizes 10000,100000] [--python PATH]
Prints one JSON object per size: seconds per attack and in all, for each tool, and the ratio.
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

sys.path.insert(0, str(Path(__file__).parents[1] / "reproduction"))
from anonymeter_attacks import COLUMNS, SPLIT, theirs

from microagg import datasets
from microagg.risk.attacks import AttackSettings, attack_risks

SECRETS = ["income", "age"]


def _drawn(adult: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    frame = adult.iloc[rng.integers(0, len(adult), n)].reset_index(drop=True)
    frame["age"] = (frame["age"] + rng.integers(-2, 3, n)).clip(17, 90)
    frame["hours-per-week"] = (frame["hours-per-week"] + rng.integers(-3, 4, n)).clip(1, 99)
    return frame


def tables(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The original, its release and the control (module docstring)."""
    rng = np.random.default_rng(seed)
    adult = datasets.load("adult").frame[COLUMNS]
    original = _drawn(adult, n, rng)
    release = original.copy()
    release["age"] = (release["age"] + rng.integers(-2, 3, n)).clip(17, 90)
    release["hours-per-week"] = (release["hours-per-week"] + rng.integers(-2, 3, n)).clip(1, 99)
    release["capital-gain"] = (release["capital-gain"] * rng.normal(1, 0.05, n)).round()
    return original, release, _drawn(adult, n // 4, rng)


def ours(original: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame
         ) -> dict[str, float]:
    """microagg's seconds per attack."""
    settings = AttackSettings(n_attacks=500, linkability_columns=SPLIT, secrets=SECRETS)
    seconds = {}
    for attack in ("singling-out", "linkability", "inference"):
        start = time.perf_counter()
        attack_risks(original, release, control, [attack], settings=settings, rng=0)
        seconds[attack] = time.perf_counter() - start
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--python", default="/work/venv-anonymeter/bin/python")
    args = parser.parse_args()
    small = tables(2000)
    ours(*small)  # load the compiled kernels
    for n in (int(s) for s in args.sizes.split(",")):
        original, release, control = tables(n)
        mine = ours(original, release, control)
        with tempfile.TemporaryDirectory() as folder:
            for name, table in (("original", original), ("release", release),
                                ("control", control)):
                table.to_csv(Path(folder) / f"{name}.csv", index=False)
            other = theirs(Path(folder), 0, args.python, secrets=SECRETS)["seconds"]
        grouped = {"singling-out": sum(v for k, v in other.items() if "singling" in k),
                   "linkability": other["linkability"],
                   "inference": sum(v for k, v in other.items() if "inference" in k)}
        total_mine, total_other = sum(mine.values()), sum(grouped.values())
        print(json.dumps({
            "records": n, "control": len(control), "attacks": 500,
            "microagg_seconds": {k: round(v, 2) for k, v in mine.items()},
            "anonymeter_seconds": {k: round(v, 2) for k, v in grouped.items()},
            "microagg_total": round(total_mine, 2), "anonymeter_total": round(total_other, 2),
            "speedup": round(total_other / total_mine, 1),
            "speedup_per_attack": {k: round(grouped[k] / mine[k], 1) for k in mine}}),
            flush=True)


if __name__ == "__main__":
    main()
