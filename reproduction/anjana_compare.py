"""k-anonymous t-closeness: anjana (generalization with hierarchies, as ARX) beside microagg's
three algorithms of paper 002, on Census MCD and on UCI Adult.

* ``--data census`` (default k = 5, t = 0.09): quasi-identifiers TAXINC and POTHVAL,
  confidential FEDTAX (002's MCD). anjana gets quantile hierarchies for both
  quasi-identifiers (values; deciles; quartiles; halves; *).
* ``--data adult`` (default k = 5, t = 0.15): the complete rows of the seven quasi-identifiers
  age, workclass, education, marital-status, race, sex, native-country (Li et al. 2007's
  choice) and the confidential income; anjana gets ARX's hierarchies (MICROAGG_DATA's
  ``hierarchies/``), microagg the taxonomies of its Adult schema (the same files).

No suppression for anjana. Reported per method: run time, number of classes, smallest and
average class, and the normalized SSE of 002 eq. (5) over the numeric quasi-identifiers; for
Adult also the mean absolute error of age and the share of distinct quasi-identifier values
lost (per attribute, the share of its original values that no longer appear in the written
column, averaged over the seven). A generalized value carries no number, so for anjana each
record's numeric quasi-identifiers are replaced by the means of its class (the best a user can
recover from the intervals; this favours anjana).

Needs anjana (pip install anjana), which is not a dependency of microagg.
Usage: python reproduction/anjana_compare.py [--data census|adult] [--k K] [--t T]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg import datasets
from microagg.data.schema import Schema
from microagg.release import tclose


@dataclass(frozen=True)
class Setting:
    frame: pd.DataFrame
    schema: Schema | None
    quasi: list[str]
    numeric: list[str]
    confidential: str
    hierarchies: dict[str, dict[int, np.ndarray]]
    given: pd.DataFrame  # the frame as anjana gets it (values spelled as its hierarchies)


def quantile_hierarchy(values: pd.Series) -> dict[int, np.ndarray]:
    levels = {0: values.to_numpy()}
    for level, parts in enumerate((10, 4, 2), start=1):
        bins = pd.qcut(values, parts, duplicates="drop")
        levels[level] = bins.astype(str).to_numpy()
    levels[4] = np.full(values.size, "*")
    return levels


def arx_hierarchy(values: pd.Series, path: str) -> dict[int, np.ndarray]:
    table = pd.read_csv(path, sep=";", header=None, dtype=str)
    levels = {row[0]: list(row) for row in table.itertuples(index=False)}
    keys = values.astype(str)
    return {level: np.array([levels[v][level] for v in keys]) for level in range(table.shape[1])}


def census() -> Setting:
    quasi = ["TAXINC", "POTHVAL"]
    frame = datasets.load("census").frame[[*quasi, "FEDTAX"]].copy()
    return Setting(frame, None, quasi, quasi, "FEDTAX",
                   {c: quantile_hierarchy(frame[c]) for c in quasi}, frame)


def adult() -> Setting:
    quasi = ["age", "workclass", "education", "marital-status", "race", "sex",
             "native-country"]
    data = datasets.load("adult")
    frame = data.frame[[*quasi, "income"]].dropna().reset_index(drop=True)
    folder = datasets.data_dir("adult.csv")
    hierarchies = {c: arx_hierarchy(frame[c], str(folder / "hierarchies" /
                                                   f"adult_hierarchy_{c}.csv"))
                   for c in quasi}
    return Setting(frame, data.schema.select([*quasi, "income"]), quasi, ["age"], "income",
                   hierarchies, frame.astype({"age": str}))


def summary(name: str, setting: Setting, written: pd.DataFrame, seconds: float) -> dict:
    original = setting.frame
    classes = written.groupby(setting.quasi, sort=False).ngroup().to_numpy()
    sizes = np.bincount(classes)
    sse = 0.0
    recovered = {}
    for column in setting.numeric:
        values = original[column].to_numpy(dtype=float)
        if pd.api.types.is_numeric_dtype(written[column]):
            recovered[column] = written[column].to_numpy(dtype=float)
        else:  # generalized: the class means
            recovered[column] = (np.bincount(classes, weights=values) / sizes)[classes]
        sse += np.mean(((values - recovered[column]) / values.std()) ** 2)
    row = {"method": name, "seconds": round(seconds, 2), "classes": int(sizes.size),
           "smallest": int(sizes.min()), "average": round(float(sizes.mean()), 1),
           "normalized_sse": round(sse / len(setting.numeric), 4)}
    if "age" in setting.numeric:
        row["age_mae"] = round(float(np.mean(np.abs(original["age"] - recovered["age"]))), 2)
        lost = []
        for column in setting.quasi:
            numbers = pd.api.types.is_numeric_dtype(written[column])
            before = set(original[column].astype(float if numbers else str))
            after = set(written[column].astype(float if numbers else str))
            lost.append(len(before - after) / len(before))
        row["distinct_values_lost"] = round(float(np.mean(lost)), 3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=("census", "adult"), default="census")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--t", type=float)
    args = parser.parse_args()
    setting = census() if args.data == "census" else adult()
    t = args.t if args.t is not None else (0.09 if args.data == "census" else 0.15)
    # exact class means (round_values=False), as the paper's SSE is defined and as the
    # figures of docs/reproduction.md were measured; a release rounds them by default
    options = {"quasi": setting.quasi, "confidential": [setting.confidential],
               "schema": setting.schema, "round_values": False}
    for method in ("t-closeness-first", "k-anonymity-first", "merge"):
        tclose(setting.frame.head(300), k=args.k, t=0.3, method=method,
               **options)  # compile first
        start = time.perf_counter()
        release = tclose(setting.frame, k=args.k, t=t, method=method, **options)
        seconds = time.perf_counter() - start
        print(json.dumps(summary(f"microagg {method}", setting, release.frame, seconds)))
    from anjana.anonymity import t_closeness

    start = time.perf_counter()
    written = t_closeness(setting.given, [], setting.quasi, setting.confidential, args.k, t, 0,
                          setting.hierarchies)
    seconds = time.perf_counter() - start
    row = summary("anjana", setting, written, seconds)
    row["generalized"] = {c: sorted(map(str, written[c].unique()))[:4] for c in setting.quasi}
    print(json.dumps(row))


if __name__ == "__main__":
    main()
