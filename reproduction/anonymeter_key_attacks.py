"""Categorical keys attacked at their recoded level (evaluation/key_attacks.py) against
Anonymeter on UCI Adult.

Adult's keys age, sex, race, marital-status, education and occupation, its rows split at
random into halves: the records a release is made from and control records. The release:
age recoded to decades (global recoding), then local suppression to k = 5 on the six keys
(the methods of ``compare --keys``). ``compare --keys`` attacks a recoded key at its recoded
level: the original and control records recoded as the release recodes them
(``at_released_level``), every key a category (``as_categories``). Per seed, microagg's
attacks and Anonymeter's (in its own virtual environment, through a subprocess, as
reproduction/anonymeter_attacks.py runs it) attack those same three tables: multivariate and
univariate singling out (500 predicates of 3 columns), linkability of age, sex, race to
marital-status, education, occupation, and inference of occupation and marital-status. Each
risk agrees when each figure lies inside the other's 95 % interval.

Usage: python reproduction/anonymeter_key_attacks.py [--seeds 0,1,2] [--python PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))

from anonymeter_attacks import ours, theirs

from microagg import datasets
from microagg.evaluation.key_attacks import (
    KeyAttackMeasure,
    as_categories,
    at_released_level,
)
from microagg.evaluation.key_measures import KeyCoding, released_codes
from microagg.options import RiskKind
from microagg.release.methods import GlobalRecoding, LocalSuppression
from microagg.risk.attacks import AttackSettings

KEYS = ["age", "sex", "race", "marital-status", "education", "occupation"]
SPLIT = (["age", "sex", "race"], ["marital-status", "education", "occupation"])
SECRETS = ["occupation", "marital-status"]


def tables(seed: int = 0) -> list[pd.DataFrame]:
    """The original records, the release and the control records, at the recoded level."""
    frame = datasets.load("adult").frame[KEYS]
    order = np.random.default_rng(seed).permutation(len(frame))
    half = len(frame) // 2
    original = frame.iloc[order[:half]].reset_index(drop=True)
    control = frame.iloc[order[half:]].reset_index(drop=True)
    recoded = GlobalRecoding(breaks={"age": [0, 20, 30, 40, 50, 60, 70, np.inf]}).release(
        original, keys=KEYS).frame
    release = LocalSuppression(k=5).release(recoded, keys=KEYS).frame[KEYS]
    coding = KeyCoding.of(original, KEYS)
    codes = released_codes(coding, {key: release[key] for key in KEYS})
    measure = KeyAttackMeasure.of(RiskKind.SINGLING_OUT, coding, control, AttackSettings(),
                                  seed=0, drawn=False)
    at_level = at_released_level(coding.codes, measure.control, codes, coding)
    return [as_categories(at_level[0], coding), as_categories(codes, coding),
            as_categories(at_level[1], coding)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--python", default="/work/venv-anonymeter/bin/python")
    args = parser.parse_args()
    print("| seed | risk | microagg (95 % CI) | Anonymeter (95 % CI) | agree |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for table, label in zip(tables(), ("original", "release", "control"), strict=True):
            table.to_csv(folder / f"{label}.csv", index=False)
        read = [pd.read_csv(folder / f"{n}.csv", dtype=str, keep_default_na=False,
                            na_values=[""]) for n in ("original", "release", "control")]
        for seed in (int(s) for s in args.seeds.split(",")):
            mine, _ = ours(*read, seed, split=SPLIT, secrets=SECRETS)
            other = theirs(folder, seed, args.python, SECRETS, split=SPLIT)["risks"]
            for key, r in mine.items():
                a = other[key]
                both = (r["ci"][0] <= a["risk"] <= r["ci"][1],
                        a["ci"][0] <= r["risk"] <= a["ci"][1])
                agree = "yes" if all(both) else "one way" if any(both) else "no"
                print(f"| {seed} | {key} | {r['risk']:.3f} ({r['ci'][0]:.3f}-{r['ci'][1]:.3f})"
                      f" | {a['risk']:.3f} ({a['ci'][0]:.3f}-{a['ci'][1]:.3f}) | {agree} |")


if __name__ == "__main__":
    main()
