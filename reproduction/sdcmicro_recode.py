"""Global recoding to intervals: microagg's classes beside sdcMicro's ``globalRecode`` on the
same numbers and the same breaks (UCI Adult's age by default).

sdcMicro cuts with R's ``cut(x, breaks, labels, dig.lab = 8)``: intervals closed on the
right, (a, b], the lowest break itself left out. The script runs ``globalRecode`` on the
column, then microagg's ``GlobalRecoding`` with ``closed="right"`` and with the default
``closed="left"``, and prints one JSON object: the records, the records whose class differs
from sdcMicro's under each closure, the records sdcMicro leaves without a class, and both
sets of labels.

Usage: python reproduction/sdcmicro_recode.py [--column age] [--breaks 0:20:30:...:100]
(needs Rscript with sdcMicro; MICROAGG_DATA or ../shared/datasets for adult.csv)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from microagg.data.datasets import data_dir
from microagg.release.methods import GlobalRecoding

R_SCRIPT = """
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1], na.strings = c("?", ""), strip.white = TRUE, check.names = FALSE)
breaks <- as.numeric(strsplit(args[3], ":")[[1]])
g <- globalRecode(x[[args[2]]], breaks = breaks)
write.csv(data.frame(class = as.integer(g)), args[4], row.names = FALSE, na = "")
writeLines(levels(g), args[5])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="adult.csv")
    parser.add_argument("--column", default="age")
    parser.add_argument("--breaks", default="0:20:30:40:50:60:70:100")
    args = parser.parse_args()
    folder = data_dir(args.data)
    if folder is None:
        sys.exit(f"{args.data} not found: set MICROAGG_DATA")
    source = folder / args.data
    frame = pd.read_csv(source, skipinitialspace=True, na_values=["?"])[[args.column]]
    with tempfile.TemporaryDirectory() as name:
        work = Path(name)
        script, classes, levels = work / "recode.R", work / "classes.csv", work / "levels.txt"
        script.write_text(R_SCRIPT, encoding="utf-8")
        subprocess.run(["Rscript", str(script), str(source), args.column, args.breaks,
                        str(classes), str(levels)], check=True)
        theirs = pd.read_csv(classes, skip_blank_lines=False)["class"].to_numpy(float) - 1
        their_labels = levels.read_text(encoding="utf-8").splitlines()
    edges = [float(b) for b in args.breaks.split(":")]
    result: dict[str, object] = {"data": args.data, "column": args.column,
                                 "breaks": args.breaks, "records": len(frame),
                                 "sdcMicro_without_class": int(np.isnan(theirs).sum()),
                                 "sdcMicro_labels": their_labels}
    for closed in ("right", "left"):
        written = GlobalRecoding(breaks={args.column: edges}, closed=closed).release(
            frame, keys=[args.column]).frame[args.column]
        ours = written.cat.codes.to_numpy().astype(float)
        ours[ours < 0] = np.nan
        both = ~np.isnan(theirs)
        result[f"records_differing_{closed}"] = int((ours[both] != theirs[both]).sum())
        result[f"microagg_labels_{closed}"] = list(written.cat.categories)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
