"""Paper 001 on Census: Figures 1 and 3 (RE and JSD of ε-DP via individual ranking against k,
for several numbers m of protected attributes, against plain Laplace noise, plain individual
ranking, insensitive MDAV and paper 000's method) and Table 1 (variance variations with m = 8).

The m protected attributes are the first m columns of the CASC Census file (AFNLWGT, AGI,
EMCONTRB, FEDTAX, PTOTVAL, STATETAX, TAXINC, POTHVAL, ...): with saturating noise the variance
variations of the first 8 match the paper's Table 1 rows 1-8 (see docs/reproduction.md). The
values of m were lost in the text extraction; we use 1, 4, 8 and 13 (1, 8 and 13 are named in
§4.4). Domains [0, 1.5 max] taken from the data, as in the paper (so no release here is DP: the
reports say so). ε in {0.1, 1, 10}; averages of 10 runs with seeds 0..9.

Releases:
* ``IR-DP``: microagg's 001 Alg. 1 (ε/m per attribute, scale m (b_j − a_j) / (k ε), one draw
  per group).
* ``plain Laplace``: 001 §3.3's baseline, scale m (b_j − a_j) / ε per value; it is IR-DP with
  k = 1 (every record its own group), which is how it is computed.
* ``000 (paper calibration)``: insensitive microaggregation + noise of scale
  c (b_j − a_j) / (k ε) per attribute, the reading of 000 that 001 §4.4 compares against (its
  noise "does not depend on m"); (m·ε)-DP. ``000 (correct)``: the ε-DP calibration.
* ``IR`` and ``insensitive MDAV``: the microaggregations alone (k-anonymous, not DP).

Usage: python reproduction/paper001_census.py [--runs 10]
Prints JSON lines: one per (release, m, ε, k) with RE, JSD (means over attributes) and the
per-attribute variance variations.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd

from microagg import datasets
from microagg.aggregate import replace_by_means
from microagg.metrics.utility import jsd, relative_error, variance_variation
from microagg.partition.insensitive import insensitive
from microagg.partition.univariate import individual_ranking
from microagg.release.dp_insensitive import dp_insensitive
from microagg.release.dp_ranking import dp_individual_ranking

MS = [1, 4, 8, 13]
EPSILONS = [0.1, 1.0, 10.0]
KS = [2, 5, 10, 25, 50, 75, 100]


def ranked(X: np.ndarray, k: int) -> np.ndarray:
    """Individual ranking alone: every attribute replaced by its group means."""
    labels = individual_ranking(X, k)
    return np.column_stack([replace_by_means(X[:, [j]], labels[:, j])[:, 0]
                            for j in range(X.shape[1])])


def dp_release(method: str, frame: pd.DataFrame, epsilon: float, k: int,
               bounds: dict[str, tuple[float, float]], seed: int) -> np.ndarray:
    """One noisy release of ``frame`` as a matrix (see the module docstring for the methods)."""
    if method == "plain Laplace":
        release = dp_individual_ranking(frame, epsilon, 1, bounds=bounds, rng=seed)
    elif method == "IR-DP":
        release = dp_individual_ranking(frame, epsilon, k, bounds=bounds, rng=seed)
    else:
        calibration = method.removeprefix("000 (").removesuffix(")")
        release = dp_insensitive(frame, epsilon, k, bounds=bounds, calibration=calibration,
                                 rng=seed)
    return release.frame[list(frame.columns)].to_numpy(float)


def measures(X: np.ndarray, masked: list[np.ndarray], lows: np.ndarray, highs: np.ndarray
             ) -> dict[str, object]:
    """RE, JSD (means over attributes) and variance variations, averaged over the runs."""
    return {"re": float(np.mean([relative_error(X, y, highs - lows) for y in masked])),
            "jsd": float(np.mean([jsd(X, y, lows, highs).mean() for y in masked])),
            "variance_variation": np.mean([variance_variation(X, y) for y in masked], axis=0)
            .round(4).tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    census = datasets.load("census").frame
    for m in MS:
        frame = census.iloc[:, :m]
        X = frame.to_numpy(float)
        lows, highs = np.zeros(m), 1.5 * X.max(axis=0)
        bounds = {c: (0.0, float(hi)) for c, hi in zip(frame.columns, highs, strict=True)}
        for k in KS:
            for method, masked in (("IR", ranked(X, k)),
                                   ("insensitive MDAV",
                                    replace_by_means(X, insensitive(X, k, lows, highs)))):
                print(json.dumps({"release": method, "m": m, "epsilon": None, "k": k,
                                  **measures(X, [masked], lows, highs)}), flush=True)
        for epsilon in EPSILONS:
            for method in ("plain Laplace", "IR-DP", "000 (paper)", "000 (correct)"):
                for k in [1] if method == "plain Laplace" else KS:
                    masked = [dp_release(method, frame, epsilon, k, bounds, seed)
                              for seed in range(runs)]
                    print(json.dumps({"release": method, "m": m, "epsilon": epsilon, "k": k,
                                      **measures(X, masked, lows, highs)}), flush=True)


if __name__ == "__main__":
    main()
