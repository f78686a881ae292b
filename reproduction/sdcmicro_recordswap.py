"""Targeted record swapping: microagg's ``swap`` beside sdcMicro's ``recordSwap``.

Two censuses: sdcMicro's own synthetic one (``createDat``; and again with more risk variables
k = 5 and a narrow similarity profile, ``createdat-tight``, where some households at risk
find no donor) and UCI Adult's persons put into synthetic households (1-5 persons) in a synthetic
three-level geography of uneven areas.
Both methods run on the same integer-coded table with the same parameters over several
seeds. Printed, one JSON object per census:

* the households at risk: microagg's set against sdcMicro's own (its ``setRisk`` and
  ``setLevels``), which must be identical;
* per method, the mean and standard deviation over the seeds of the realised swap rate, of
  the share of the households at risk still in their own area at each level (the risk
  after: no higher for microagg), of the households swapped per area of the coarsest level
  and per level (the coarsest at which a household's area changed), and of the seconds;
* the largest difference between the two methods' means of those counts, in standard errors
  of the difference;
* the guarantees checked on every output of both: households whole, the households of
  every area at every level kept, the household size of swapped partners equal;
* on createDat, sdcMicro's own example (hierarchy nuts1, nuts2, no carry-along): the share of
  records whose nuts3 no longer lies in their nuts2 (microagg refuses such a table).

Usage: python reproduction/sdcmicro_recordswap.py [--data createdat,createdat-tight,adult]
       [--seeds 12]
       [--households 20000] [--rate 0.05] [--k 3]
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

from microagg.core.swapping import area_codes, household_risk
from microagg.release.methods import RecordSwap

HERE = Path(__file__).resolve().parent
R_SCRIPT = HERE / "sdcmicro_recordswap.R"


def createdat(households: int, folder: Path, tight: bool = False
              ) -> tuple[pd.DataFrame, dict]:
    """sdcMicro's census; ``tight``: more risk variables, k = 5 and a narrow profile
    (household size, type and income), so that some households at risk find no donor."""
    path = folder / "createdat.csv"
    if not path.exists():
        subprocess.run(["Rscript", str(R_SCRIPT), "create", str(households), "2021",
                        str(path)], check=True)
    return pd.read_csv(path), {
        "hierarchy": ["nuts1", "nuts2", "nuts3"],
        "risk": ["ageGroup", "gender", "national"] if tight else ["ageGroup", "national"],
        "similar": ["hsize", "htype", "hincome"] if tight else ["hsize"],
        "carry": ["lau2"], **({"k": 5} if tight else {})}


def adult(folder: Path, seed: int = 7) -> tuple[pd.DataFrame, dict]:
    """Adult's persons in synthetic households and areas (integer codes, as sdcMicro needs)."""
    from microagg.data.datasets import load

    frame = load("adult").frame
    rng = np.random.default_rng(seed)
    frame = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    sizes = []
    while sum(sizes) < len(frame):
        sizes.append(int(rng.choice([1, 2, 3, 4, 5], p=[0.3, 0.3, 0.2, 0.15, 0.05])))
    sizes[-1] -= sum(sizes) - len(frame)
    size = np.array(sizes)
    households = size.size
    # uneven areas: 4 regions, 3-5 districts each, 4-8 municipalities each
    nuts1 = rng.choice(4, households, p=[0.4, 0.3, 0.2, 0.1])
    nuts2 = nuts1 * 10 + (rng.random(households) ** 2 * (3 + nuts1 % 3)).astype(int)
    nuts3 = nuts2 * 10 + (rng.random(households) ** 1.5 * (4 + nuts2 % 5)).astype(int)
    coded = pd.DataFrame({
        "hid": np.repeat(np.arange(1, households + 1), size),
        "nuts1": np.repeat(nuts1 + 1, size), "nuts2": np.repeat(nuts2 + 10, size),
        "nuts3": np.repeat(nuts3 + 100, size), "hsize": np.repeat(size, size),
        "agegroup": (frame["age"].to_numpy() // 10).astype(int),
        "sex": pd.factorize(frame["sex"])[0] + 1,
        "race": pd.factorize(frame["race"])[0] + 1,
        "country": pd.factorize(frame["native-country"].fillna("?"))[0] + 1,
        "income": pd.factorize(frame["income"])[0] + 1})
    return coded, {"hierarchy": ["nuts1", "nuts2", "nuts3"],
                   "risk": ["agegroup", "sex", "race", "country"], "similar": ["hsize"],
                   "carry": []}


def _households(frame: pd.DataFrame, hierarchy: list[str]) -> pd.DataFrame:
    return frame.groupby("hid", sort=True)[[*hierarchy, "hsize"]].first()


def _figures(before: pd.DataFrame, written: pd.DataFrame, hierarchy: list[str],
             at_risk: dict[int, list]) -> dict:
    """The figures of one output: rate, risk after, swaps per area and level, guarantees."""
    whole = bool((written.groupby("hid")[hierarchy].nunique() == 1).all().all())
    old, new = _households(before, hierarchy), _households(written, hierarchy)
    changed = (old[hierarchy] != new[hierarchy]).to_numpy()
    swapped = changed.any(axis=1)
    kept = all(old.groupby(hierarchy[:i + 1]).size().equals(
        new.groupby(hierarchy[:i + 1]).size()) for i in range(len(hierarchy)))
    first = np.where(swapped, changed.argmax(axis=1), -1)
    in_place = [float(np.mean([not changed[old.index.get_loc(h), :level + 1].any()
                               for h in households])) if households else 0.0
                for level, households in sorted(at_risk.items())]
    per_area = old.loc[swapped].groupby(hierarchy[0]).size().reindex(
        sorted(old[hierarchy[0]].unique()), fill_value=0)
    return {"rate": float(swapped.mean()), "in_place": in_place,
            "per_area": per_area.tolist(),
            "per_level": [int((first == i).sum()) for i in range(len(hierarchy))],
            "whole": whole, "household_counts_kept": bool(kept)}


def _summary(runs: list[dict], seconds: list[float]) -> dict:
    def stats(key: str) -> dict:
        values = np.array([r[key] for r in runs], dtype=float)
        return {"mean": np.round(values.mean(axis=0), 4).tolist(),
                "sd": np.round(values.std(axis=0, ddof=1), 4).tolist()}
    return {"swap_rate": stats("rate"), "at_risk_in_place_after": stats("in_place"),
            "swapped_per_area": stats("per_area"), "swapped_per_level": stats("per_level"),
            "seconds": {"mean": round(float(np.mean(seconds)), 3)},
            "households_whole": all(r["whole"] for r in runs),
            "household_counts_kept": all(r["household_counts_kept"] for r in runs)}


def _largest_z(ours: list[dict], theirs: list[dict], key: str) -> float:
    a = np.array([r[key] for r in ours], dtype=float)
    b = np.array([r[key] for r in theirs], dtype=float)
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    diff = np.abs(a.mean(axis=0) - b.mean(axis=0))
    return round(float(np.max(np.where(se > 0, diff / np.where(se > 0, se, 1), 0))), 2)


def _our_at_risk(frame: pd.DataFrame, spec: dict, k: int) -> pd.Series:
    """The first level at which each household is at risk, by microagg's functions."""
    household, hids = pd.factorize(frame["hid"], sort=True)
    first = np.full(hids.size, len(frame))
    np.minimum.at(first, household, np.arange(len(frame)))
    geography = np.stack([pd.factorize(frame[c], sort=True)[0] for c in spec["hierarchy"]])
    areas = area_codes(geography[:, first])
    keys = pd.factorize(pd.MultiIndex.from_frame(frame[spec["risk"]]))[0]
    risk = household_risk(areas[:, household], keys, household, hids.size)
    exceeds = risk > 1 / k
    level = np.where(exceeds.any(axis=0), exceeds.argmax(axis=0), len(spec["hierarchy"]))
    return pd.Series(level, index=hids)


def compare(name: str, frame: pd.DataFrame, spec: dict, args: argparse.Namespace,
            folder: Path) -> dict:
    hierarchy, k = spec["hierarchy"], spec.get("k", args.k)
    seeds = list(range(1, args.seeds + 1))
    path = folder / f"{name}.csv"
    frame.to_csv(path, index=False)
    out = folder / name
    out.mkdir()
    subprocess.run(["Rscript", str(R_SCRIPT), "swap", str(path), str(out), ",".join(hierarchy),
                    ",".join(spec["risk"]), ",".join(spec["similar"]), str(args.rate),
                    str(k), ",".join(map(str, seeds)), ",".join(spec["carry"])],
                   check=True, capture_output=True)
    levels = pd.read_csv(out / "levels.csv").set_index("hid")["level"].sort_index()
    ours_level = _our_at_risk(frame, spec, k).sort_index()
    at_risk = {lv: list(ours_level.index[ours_level <= lv]) for lv in range(len(hierarchy))}
    method = RecordSwap(hierarchy=hierarchy, similar=[spec["similar"]],
                        risk_variables=spec["risk"], swap_rate=args.rate, k=k,
                        carry_along=spec["carry"] or None)
    ours, theirs, our_seconds = [], [], []
    for seed in seeds:
        started = time.perf_counter()
        written = method.release(frame, roles={"hid": "household"}, rng=seed).frame
        our_seconds.append(time.perf_counter() - started)
        ours.append(_figures(frame, written, hierarchy, at_risk))
        swapped = pd.read_csv(out / f"swapped_{seed}.csv")
        theirs.append(_figures(frame, swapped, hierarchy, at_risk))
        pairs = pd.read_csv(out / f"pairs_{seed}.csv").set_index("hid")["hid_swapped"]
        moved = pairs[pairs.index != pairs]
        profile = frame.groupby("hid")[spec["similar"]].first()
        theirs[-1]["profiles_kept"] = bool(
            (profile.loc[moved.index].to_numpy() == profile.loc[moved.to_numpy()].to_numpy()
             ).all())
    their_seconds = pd.read_csv(out / "times.csv")["seconds"].tolist()
    result = {
        "data": name, "persons": len(frame), "households": int(frame["hid"].nunique()),
        "hierarchy": hierarchy, "risk_variables": spec["risk"], "similar": spec["similar"],
        "carry_along": spec["carry"], "swap_rate": args.rate, "k": k, "seeds": len(seeds),
        "at_risk_households": {str(lv): len(h) for lv, h in at_risk.items()},
        "at_risk_identical": bool(levels.index.equals(ours_level.index)
                                  and (levels.to_numpy() == ours_level.to_numpy()).all()),
        "microagg": _summary(ours, our_seconds),
        "sdcmicro": {**_summary(theirs, their_seconds),
                     "profiles_kept": all(r["profiles_kept"] for r in theirs)},
        "largest_z": {key: _largest_z(ours, theirs, key)
                      for key in ("rate", "per_area", "per_level")}}
    return result


def contradiction(frame: pd.DataFrame, folder: Path) -> float:
    """sdcMicro's own example (nuts1, nuts2; no carry-along): the share of records whose
    nuts3 no longer lies in their nuts2."""
    path, out = folder / "example.csv", folder / "example"
    out.mkdir()
    frame.to_csv(path, index=False)
    subprocess.run(["Rscript", str(R_SCRIPT), "swap", str(path), str(out), "nuts1,nuts2",
                    "ageGroup,national", "hsize", "0.05", "1", "2021", ""],
                   check=True, capture_output=True)
    swapped = pd.read_csv(out / "swapped_2021.csv")
    return round(float((swapped["nuts3"] // 100 != swapped["nuts2"]).mean()), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="createdat,createdat-tight,adult")
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--households", type=int, default=20000)
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for data in args.data.split(","):
            frame, spec = (adult(folder) if data == "adult" else
                           createdat(args.households, folder, tight=data == "createdat-tight"))
            row = compare(data, frame, spec, args, folder)
            if data == "createdat":
                row["sdcmicro_example_nuts3_outside_nuts2"] = contradiction(frame, folder)
            print(json.dumps(row))


if __name__ == "__main__":
    main()
