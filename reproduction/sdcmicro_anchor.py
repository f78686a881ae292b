"""microagg's MDAV releases against sdcMicro run live, value by value.

For each case the same CSV file goes to ``Rscript`` (sdcMicro's
``microaggregation(x, variables=, aggr=k, method="mdav", weights=)``, its masked table written
to CSV with 15 significant digits) and to ``microagg.microaggregate`` (MDAV, z-scores, exact
means: ``round_values=False``; the weight column declared with ``roles``). Prints one JSON
object per case: the largest relative difference between the two masked tables, and, for the
weighted cases, the same difference against microagg's *unweighted* release (which shows that
the weights change the means, so the agreement is not an accident of equal weights). It
shows that sdcMicro's ``method="mdav"`` ignores the sampling weights (its ``mdav`` call passes
``weights=NULL``; the weights of the compiled Mdav are per variable). The last case compares
the weighted means themselves on the partition of ``method="onedims"``: sdcMicro weights each
sorted value by the weight of the record at that position in *input* order (``means`` indexes
the unsorted weights with positions in the sorted matrix); microagg weights each value by its
own record's weight, and the script reproduces sdcMicro's figures exactly with its indexing.

Cases: sdcMicro's own ``testdata`` (4,580 records; expend, income, savings; weight
sampling_weight, constant over large groups of records, or household_weights, which varies
inside clusters) at k = 3 and 5, and CASC Census (1,080 records; all 13 attributes, and FICA,
FEDTAX, INTVAL, POTHVAL) at k = 3, 5 and 10. Needs R with sdcMicro built from source
(docs/reproduction.md) and MICROAGG_DATA for Census.

Usage: python reproduction/sdcmicro_anchor.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import microagg
from microagg import datasets

R_MICROAGGREGATION = """
args <- commandArgs(trailingOnly=TRUE)
suppressPackageStartupMessages(library(sdcMicro))
x <- read.csv(args[1], check.names=FALSE)
vars <- strsplit(args[3], ",")[[1]]
w <- if (length(args) >= 5) x[[args[5]]] else NULL
m <- microaggregation(x, variables=vars, aggr=as.integer(args[4]), method="mdav", weights=w)
write.csv(format(m$mx[, vars, drop=FALSE], digits=15), args[2], row.names=FALSE)
"""

R_ONEDIMS = R_MICROAGGREGATION.replace('method="mdav"', 'method="onedims"')

R_TESTDATA = """
suppressPackageStartupMessages(library(sdcMicro))
data(testdata)
write.csv(testdata, commandArgs(trailingOnly=TRUE)[1], row.names=FALSE)
"""


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)))


def _sdcmicro(rscript: str, folder: Path, data: Path, columns: list[str], k: int,
              weight: str | None) -> np.ndarray:
    script = folder / "microaggregation.R"
    script.write_text(R_MICROAGGREGATION)
    out = folder / "sdcmicro.csv"
    subprocess.run([rscript, str(script), str(data), str(out), ",".join(columns), str(k),
                    *([weight] if weight else [])], check=True, capture_output=True)
    return pd.read_csv(out).to_numpy(np.float64)


def _ours(frame: pd.DataFrame, columns: list[str], k: int, weight: str | None) -> np.ndarray:
    release = microagg.microaggregate(frame, k=k, columns=columns, scaling="zscore",
                                      roles={weight: "weight"} if weight else None,
                                      round_values=False)
    return release.frame[columns].to_numpy(np.float64)


def _onedims(rscript: str, folder: Path, data: Path, columns: list[str], k: int, weight: str
             ) -> dict[str, float]:
    """sdcMicro's ``method="onedims"`` (each column sorted, groups of k consecutive values)
    against microagg's cluster means over the same partition (a stable sort, as R's ``order``),
    unweighted and weighted. Returns the largest relative differences."""
    from microagg.core.aggregate import replace_by_means

    script = folder / "onedims.R"
    script.write_text(R_ONEDIMS)
    frame = pd.read_csv(data)
    w = frame[weight].to_numpy(np.float64)
    out: dict[str, float] = {}
    for label, weights in (("unweighted", None), ("weighted", w)):
        target = folder / f"onedims_{label}.csv"
        subprocess.run([rscript, str(script), str(data), str(target), ",".join(columns),
                        str(k), *([weight] if weights is not None else [])], check=True,
                       capture_output=True)
        theirs = pd.read_csv(target).to_numpy(np.float64)
        ours = np.empty_like(theirs)
        as_indexed = np.empty_like(theirs)  # the weight of the record at each sorted position
        for j, column in enumerate(columns):
            x = frame[column].to_numpy(np.float64)
            order = np.argsort(x, kind="stable")
            groups = np.arange(x.size) // k
            if x.size % k:  # the rest joins the last full group (sdcMicro's indexMicro)
                groups[groups == groups[-1]] = groups[-1] - 1
            labels = np.empty(x.size, np.int64)
            labels[order] = groups
            ours[:, j] = replace_by_means(x[:, None], labels, weights)[:, 0]
            if weights is not None:
                means = (np.bincount(groups, x[order] * weights)
                         / np.bincount(groups, weights))
                as_indexed[order, j] = means[groups]
        out[f"{label}: microagg"] = _relative(ours, theirs)
        if weights is not None:
            out[f"{label}: sdcMicro's weight indexing"] = _relative(as_indexed, theirs)
    return out


def main() -> None:
    rscript = shutil.which("Rscript")
    if rscript is None:
        raise SystemExit("Rscript is not installed (docs/reproduction.md says how to build "
                         "sdcMicro from source)")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        testdata = folder / "testdata.csv"
        (folder / "testdata.R").write_text(R_TESTDATA)
        subprocess.run([rscript, str(folder / "testdata.R"), str(testdata)], check=True,
                       capture_output=True)
        census = folder / "census.csv"
        datasets.load("census").frame.to_csv(census, index=False)
        cases = [("testdata", testdata, ["expend", "income", "savings"], k, weight)
                 for weight in ("sampling_weight", "household_weights") for k in (3, 5)]
        every = list(pd.read_csv(census, nrows=1).columns)
        cases += [("census", census, columns, k, None)
                  for columns in (every, ["FICA", "FEDTAX", "INTVAL", "POTHVAL"])
                  for k in (3, 5, 10)]
        for label, data, columns, k, weight in cases:
            frame = pd.read_csv(data)
            theirs = _sdcmicro(rscript, folder, data, columns, k, weight)
            result = {"data": label, "records": len(frame), "columns": len(columns), "k": k,
                      "weight": weight,
                      "largest_relative_difference": _relative(
                          _ours(frame, columns, k, weight), theirs)}
            if weight:
                result["against_our_unweighted_release"] = _relative(
                    _ours(frame, columns, k, None), theirs)
            print(json.dumps(result), flush=True)
        print(json.dumps({"data": "testdata", "method": "onedims", "k": 5,
                          "weight": "household_weights",
                          "largest_relative_difference": _onedims(
                              rscript, folder, testdata, ["expend", "income", "savings"], 5,
                              "household_weights")}), flush=True)


if __name__ == "__main__":
    main()
