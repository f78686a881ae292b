"""Sample frequencies f_k of a table with missing values, microagg against sdcMicro.

For every record, microagg's f_k under ``matches-any`` (microagg.core.frequencies, what
``microagg check`` and the release reports use) and sdcMicro's ``freqCalc(alpha = 1)``
(a missing key matches any value), on the same CSV file read by both; prints one JSON object
per file with the records, the smallest f_k of each and the number of records whose f_k
differ.

Usage: python reproduction/sdcmicro_missing_fk.py FILE.csv KEY1,KEY2,... [FILE.csv ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
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


def compare(path: Path, keys: list[str]) -> dict:
    frame = read_table(path)
    ours = sample_frequencies(frame, keys)
    with tempfile.TemporaryDirectory() as folder:
        script, out = Path(folder) / "fk.R", Path(folder) / "fk.csv"
        script.write_text(R_SCRIPT, encoding="utf-8")
        subprocess.run(["Rscript", str(script), str(path), ",".join(keys), str(out)],
                       check=True)
        theirs = pd.read_csv(out)["fk"].to_numpy()
    return {"file": path.name, "records": len(frame), "keys": len(keys),
            "missing_keys": int(frame[keys].isna().sum().sum()),
            "microagg_smallest_fk": int(ours.min()), "sdcMicro_smallest_fk": int(theirs.min()),
            "records_whose_fk_differ": int((ours != np.round(theirs)).sum())}


def main() -> None:
    arguments = sys.argv[1:]
    if not arguments or len(arguments) % 2:
        sys.exit(__doc__)
    for path, keys in zip(arguments[::2], arguments[1::2], strict=True):
        print(json.dumps(compare(Path(path), keys.split(","))))


if __name__ == "__main__":
    main()
