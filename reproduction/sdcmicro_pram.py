"""Invariant PRAM: microagg's transition matrix beside sdcMicro's pram on its testdata.

sdcMicro draws the diagonal of P uniformly in [pd, 1] (one value per category); the R script
reads those draws (the first after its seed) and the matrix sdcMicro applied, and microagg's
:func:`~microagg.core.pram.invariant_matrix` builds the matrix from the same marginal and
diagonal. Prints one JSON object per variable: the largest absolute difference between the
two matrices, and how far each is from invariance (max |p'R - p'|).

Usage: python reproduction/sdcmicro_pram.py [--variables roof,walls,water,relat]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from microagg.core.pram import invariant_matrix

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variables", default="roof,walls,water,relat")
    parser.add_argument("--pd", type=float, default=0.8)
    parser.add_argument("--alpha", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for seed, variable in enumerate(args.variables.split(","), start=1):
            path = Path(folder) / f"{variable}.json"
            subprocess.run(["Rscript", str(HERE / "sdcmicro_pram.R"), variable, str(args.pd),
                            str(args.alpha), str(seed), str(path)], check=True)
            theirs = json.loads(path.read_text())
            counts = np.array(theirs["counts"], dtype=float)
            p = counts / counts.sum()
            reference = np.array(theirs["matrix"], dtype=float)
            ours = invariant_matrix(counts, np.array(theirs["pds"]), args.alpha)
            print(json.dumps({
                "variable": variable, "categories": len(counts), "pd": args.pd,
                "alpha": args.alpha, "sdcmicro": theirs["sdcmicro"],
                "max_abs_difference": float(np.abs(ours - reference).max()),
                "invariance_microagg": float(np.abs(p @ ours - p).max()),
                "invariance_sdcmicro": float(np.abs(p @ reference - p).max())}))


if __name__ == "__main__":
    main()
