"""Sample frequencies f_k of a table with missing values, microagg against sdcMicro.

For every record, microagg's f_k under ``matches-any`` (microagg.core.frequencies, what
``microagg check``, ``microagg risk`` and the release reports use) and sdcMicro's
``freqCalc(alpha = 1)`` (a missing key matches any value), on the same CSV file read by
both; prints one JSON object per file with the records, the records whose keys are all
missing, the smallest f_k of each, the records below k = 3 by each (sdcMicro's
``kAnon_violations``) and the number of records whose f_k differ.

Usage: python reproduction/sdcmicro_missing_fk.py [--blank N] FILE.csv KEY1,KEY2,... [...]

FILE may be ``free1``: sdcMicro's own data set (4,000 records), written by R to a
temporary CSV file. ``--blank N`` makes every key of the first N records missing before
both read the file (records whose keys are all missing, which sdcMicro counts apart).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from microagg.core.frequencies import sample_frequencies
from microagg.data.io import read_table

R_SCRIPT = """
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1], na.strings = "", check.names = FALSE, stringsAsFactors = TRUE)
keys <- make.names(strsplit(args[2], ",")[[1]])  # sdcMicro needs syntactic names
names(x) <- make.names(names(x))
f <- freqCalc(x, keyVars = keys, alpha = 1)
write.csv(data.frame(fk = f$fk), args[3], row.names = FALSE)
"""

R_FREE1 = """
suppressMessages(library(sdcMicro))
data(free1, package = "sdcMicro")
write.csv(as.data.frame(free1), commandArgs(trailingOnly = TRUE)[1], row.names = FALSE)
"""


def _rscript(folder: Path, name: str, text: str, *args: str) -> None:
    script = folder / name
    script.write_text(text, encoding="utf-8")
    subprocess.run(["Rscript", str(script), *args], check=True)


def compare(path: Path, keys: list[str], blank: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if str(path) == "free1":
            source = folder / "free1.csv"
            _rscript(folder, "free1.R", R_FREE1, str(source))
        else:
            source = path
        frame = read_table(source)
        if blank:
            frame.loc[frame.index[:blank], keys] = None
            source = folder / "blank.csv"
            frame.to_csv(source, index=False)
            frame = read_table(source)
        ours = sample_frequencies(frame, keys)
        out = folder / "fk.csv"
        _rscript(folder, "fk.R", R_SCRIPT, str(source), ",".join(keys), str(out))
        theirs = pd.read_csv(out)["fk"].to_numpy()
    return {"file": path.name, "records": len(frame), "keys": len(keys),
            "missing_keys": int(frame[keys].isna().sum().sum()),
            "all_keys_missing": int(frame[keys].isna().all(axis=1).sum()),
            "microagg_smallest_fk": int(ours.min()), "sdcMicro_smallest_fk": int(theirs.min()),
            "microagg_below_3": int((ours < 3).sum()), "sdcMicro_below_3": int((theirs < 3).sum()),
            "records_whose_fk_differ": int((ours != np.round(theirs)).sum())}


def main() -> None:
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--blank", type=int, default=0)
    parser.add_argument("pairs", nargs="+")
    arguments = parser.parse_args()
    if len(arguments.pairs) % 2:
        parser.error("give FILE KEYS pairs")
    for path, keys in zip(arguments.pairs[::2], arguments.pairs[1::2], strict=True):
        print(json.dumps(compare(Path(path), keys.split(","), arguments.blank)))


if __name__ == "__main__":
    main()
