"""The attack-based risks (singling out, linkability, inference) against Anonymeter on UCI Adult.

UCI Adult over ten columns (age, education-num, hours-per-week, capital-gain, workclass,
marital-status, occupation, race, sex, income), its rows split at random into halves: the
records a release is made from (16,280) and control records it is not made from (16,281).
Halves, because singling out scales the control's successes to the original's size by a
curve fitted to the successes on subsamples of the control, and Anonymeter 1.1.0 fits it to
the number of predicates instead (``_measure_queries_success`` takes ``len`` of the counts of
every predicate, a constant), which scales by the ratio of the sizes (0.33 for 7,099 distinct
control records against 21,645 originals, where microagg's fit to the successes gives 0.69);
between tables of equal size both scale by about 1.
The release: MDAV with k = 5 over age, education-num, hours-per-week, capital-gain,
marital-status and occupation (the categories replaced by their cluster's mode), the other
columns unchanged. Per seed, both tools attack the same three tables with the same settings
(500 attacks; multivariate predicates of 3 columns; linkability of age, education-num,
hours-per-week, capital-gain to workclass, marital-status, occupation, race, sex with one
neighbour; inference of income and occupation, exact, and of age within 5 %), Anonymeter in
its own virtual environment (it pins an older numpy) through a subprocess. Each risk agrees
when Anonymeter's figure lies inside microagg's 95 % interval and microagg's inside
Anonymeter's. The attacks draw their targets and predicates at random, so the two figures of
a seed are two draws of the same attack; over seeds about one in twenty intervals may miss.

Needs anonymeter in a virtual environment of its own:
``python3 -m venv /work/venv-anonymeter && /work/venv-anonymeter/bin/pip install anonymeter``.
Usage: python reproduction/anonymeter_attacks.py [--seeds 0,1,2] [--python PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from microagg import datasets
from microagg.release.functions import microaggregate
from microagg.risk.attacks import AttackSettings, attack_risks

COLUMNS = ["age", "education-num", "hours-per-week", "capital-gain", "workclass",
           "marital-status", "occupation", "race", "sex", "income"]
MASKED = ["age", "education-num", "hours-per-week", "capital-gain", "marital-status",
          "occupation"]
SPLIT = (["age", "education-num", "hours-per-week", "capital-gain"],
         ["workclass", "marital-status", "occupation", "race", "sex"])
SECRETS = ["income", "occupation", "age"]
N_ATTACKS = 500

ANONYMETER = r'''
import json, sys, time
import pandas as pd
from anonymeter.evaluators import (InferenceEvaluator, LinkabilityEvaluator,
                                   SinglingOutEvaluator)
folder, seed, split, secrets, n = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), \
    json.loads(sys.argv[4]), int(sys.argv[5])
ori, syn, control = (pd.read_csv(f"{folder}/{name}.csv") for name in
                     ("original", "release", "control"))
def out(evaluator):
    risk = evaluator.risk()
    r = evaluator.results()
    return {"risk": risk.value, "ci": list(risk.ci), "attack_rate": r.attack_rate.value,
            "baseline_rate": r.baseline_rate.value, "control_rate": r.control_rate.value}
found, seconds = {}, {}
for mode in ("univariate", "multivariate"):
    start = time.perf_counter()
    e = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=n, n_cols=3,
                             seed=seed)
    found["singling_out_" + mode] = out(e.evaluate(mode=mode))
    seconds["singling_out_" + mode] = time.perf_counter() - start
start = time.perf_counter()
e = LinkabilityEvaluator(ori=ori, syn=syn, control=control, n_attacks=n,
                         aux_cols=tuple(split), n_neighbors=1)
found["linkability"] = out(e.evaluate(n_jobs=-1))
seconds["linkability"] = time.perf_counter() - start
for secret in secrets:
    start = time.perf_counter()
    aux = [c for c in ori.columns if c != secret]
    e = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=aux, secret=secret,
                           n_attacks=n, regression=pd.api.types.is_numeric_dtype(ori[secret]))
    found["inference_" + secret] = out(e.evaluate(n_jobs=-1))
    seconds["inference_" + secret] = time.perf_counter() - start
print(json.dumps({"risks": found, "seconds": seconds}))
'''


def tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Adult's original part, its MDAV k = 5 release and its control part."""
    frame = datasets.load("adult").frame[COLUMNS]
    order = np.random.default_rng(seed).permutation(len(frame))
    half = len(frame) // 2
    original = frame.iloc[order[:half]].reset_index(drop=True)
    control = frame.iloc[order[half:]].reset_index(drop=True)
    release = microaggregate(original, k=5, columns=MASKED).frame[COLUMNS]
    return original, release, control


def ours(original: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame,
         seed: int, split: tuple[list[str], list[str]] = SPLIT,
         secrets: list[str] = SECRETS) -> tuple[dict[str, dict], float]:
    """microagg's risks, keyed as :data:`ANONYMETER` keys them, and its seconds."""
    start = time.perf_counter()
    found = attack_risks(original, release, control, ["singling-out", "linkability",
                                                      "inference"], rng=seed,
                         settings=AttackSettings(n_attacks=N_ATTACKS,
                                                 linkability_columns=split, secrets=secrets))
    seconds = time.perf_counter() - start
    assert found.singling_out is not None and found.linkability is not None
    assert found.inference is not None
    risks = {"singling_out_" + m: r for m, r in found.singling_out.items()}
    risks["linkability"] = found.linkability
    risks |= {"inference_" + c: r for c, r in found.inference.items()}
    return {k: r.to_dict() for k, r in risks.items()}, seconds


def theirs(folder: Path, seed: int, python: str, secrets: list[str] | None = None,
           split: tuple[list[str], list[str]] = SPLIT) -> dict:
    """Anonymeter's risks and seconds per attack (``risks``, ``seconds``) on the tables
    ``original.csv``, ``release.csv`` and ``control.csv`` of ``folder``, run in ``python``."""
    asked = SECRETS if secrets is None else secrets
    done = subprocess.run([python, "-c", ANONYMETER, str(folder), str(seed), json.dumps(split),
                           json.dumps(asked), str(N_ATTACKS)], capture_output=True,
                          text=True, check=True)
    found: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--python", default="/work/venv-anonymeter/bin/python")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    original, release, control = tables()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, table in (("original", original), ("release", release),
                            ("control", control)):
            table.to_csv(Path(folder) / f"{name}.csv", index=False)
        read = [pd.read_csv(Path(folder) / f"{n}.csv")
                for n in ("original", "release", "control")]
        for seed in (int(s) for s in args.seeds.split(",")):
            mine, my_seconds = ours(*read, seed)
            other = theirs(Path(folder), seed, args.python)
            for key, r in mine.items():
                a = other["risks"][key]
                rows.append({
                    "seed": seed, "risk": key, "microagg": r["risk"], "microagg_ci": r["ci"],
                    "anonymeter": a["risk"], "anonymeter_ci": a["ci"],
                    "theirs_in_ours": r["ci"][0] <= a["risk"] <= r["ci"][1],
                    "ours_in_theirs": a["ci"][0] <= r["risk"] <= a["ci"][1]})
            rows.append({"seed": seed, "risk": "seconds", "microagg": my_seconds,
                         "anonymeter": sum(other["seconds"].values())})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| seed | risk | microagg (95 % CI) | Anonymeter (95 % CI) | agree |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["risk"] == "seconds":
            print(f"| {r['seed']} | seconds | {r['microagg']:.1f} | {r['anonymeter']:.1f} | |")
            continue
        agree = "yes" if r["theirs_in_ours"] and r["ours_in_theirs"] else (
            "one way" if r["theirs_in_ours"] or r["ours_in_theirs"] else "no")
        print(f"| {r['seed']} | {r['risk']} | {r['microagg']:.3f} "
              f"({r['microagg_ci'][0]:.3f}-{r['microagg_ci'][1]:.3f}) | "
              f"{r['anonymeter']:.3f} ({r['anonymeter_ci'][0]:.3f}-"
              f"{r['anonymeter_ci'][1]:.3f}) | {agree} |")


if __name__ == "__main__":
    main()
