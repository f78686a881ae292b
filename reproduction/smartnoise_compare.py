"""Cross-moment releases (paper 004) against smartnoise-synth's MST and AIM, the DP data
releases a user could pick instead, on Census FICA, FEDTAX, INTVAL, POTHVAL with domains
[0, 1.5 max] (as for smartnoise: 20 bins per attribute; not DP, since the bounds come from the
data, and the same for everyone here).

Measures (means over --seeds runs), attribute by attribute then averaged: relative error of
the mean |m' − m| / |m|, relative error of the variance |v' − v| / v, the Frobenius norm of
the difference of the correlation matrices, and the Wasserstein-1 distance of the marginals
divided by the domain width.

Besides the releases of paper 004 as written, the same releases with the domains clipped at a
DP upper quantile (release/dp/clipping.py): the covariance noise then scales with the clipped
widths, for the paper's covariances (pure) and for the Kendall variant (variances and rank
correlations). The default quantile and share are the ones chosen on EIA for pure
(reproduction/clip_settings.py), not on Census; the Kendall variant's own held-out choice is
--clip 0.8 --clip-share 0.1 (docs/reproduction.md gives the rows of each).

smartnoise-synth is not a dependency of microagg (it pulls torch): install it in any
environment and name its interpreter, e.g.
    python -m venv /tmp/sn && /tmp/sn/bin/pip install smartnoise-synth
    python reproduction/smartnoise_compare.py --smartnoise-python /tmp/sn/bin/python
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

from microagg import datasets
from microagg.errors import PrivacyLeakWarning
from microagg.release import dp_cross_moment, dp_laplace
from microagg.release.dp.clipping import Clipping

COLUMNS = ["FICA", "FEDTAX", "INTVAL", "POTHVAL"]
BINS = 20

SYNTHESIZE = f"""
import json, sys
import pandas as pd
from snsynth import Synthesizer
from snsynth.transform import BinTransformer, TableTransformer
data = pd.read_csv(sys.argv[1])
bounds = json.loads(sys.argv[2])
transformer = TableTransformer([BinTransformer(bins={BINS}, lower=bounds[c][0],
                                               upper=bounds[c][1]) for c in data.columns])
synth = Synthesizer.create(sys.argv[3], epsilon=float(sys.argv[4]), verbose=False)
import numpy as np, random
np.random.seed(int(sys.argv[5])); random.seed(int(sys.argv[5]))
synth.fit(data, transformer=transformer, preprocessor_eps=0.0)
synth.sample(len(data)).to_csv(sys.argv[6], index=False)
"""


def measures(original: pd.DataFrame, released: pd.DataFrame,
             bounds: dict[str, tuple[float, float]],
             columns: list[str] = COLUMNS) -> dict[str, float]:
    X, Y = original[columns].to_numpy(float), released[columns].to_numpy(float)
    widths = np.array([bounds[c][1] - bounds[c][0] for c in columns])
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.nan_to_num(np.corrcoef(Y.T))
    return {
        "mean_relative_error": float(np.mean(np.abs(Y.mean(0) - X.mean(0)) / np.abs(X.mean(0)))),
        "variance_relative_error": float(np.mean(np.abs(Y.var(0) - X.var(0)) / X.var(0))),
        "correlation_frobenius": float(np.linalg.norm(corr - np.corrcoef(X.T))),
        "w1_over_range": float(np.mean([wasserstein_distance(X[:, j], Y[:, j]) / widths[j]
                                        for j in range(len(columns))])),
    }


def smartnoise(python: str, method: str, data: pd.DataFrame, bounds, epsilon: float,
               seed: int) -> pd.DataFrame:
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.csv", Path(tmp) / "out.csv"
        data.to_csv(source, index=False)
        subprocess.run([python, "-c", SYNTHESIZE, str(source), json.dumps(bounds), method,
                        str(epsilon), str(seed), str(target)], check=True,
                       capture_output=True, text=True)
        return pd.read_csv(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smartnoise-python", default=None,
                        help="interpreter with smartnoise-synth installed (default: skip it)")
    parser.add_argument("--seeds", type=int, default=10, help="runs of each of our releases")
    parser.add_argument("--smartnoise-seeds", type=int, default=3,
                        help="runs of MST and AIM (minutes each)")
    parser.add_argument("--ks", default="100,270,540,1080")
    parser.add_argument("--errors", action="store_true",
                        help="print each mean ± its standard error over the runs")
    parser.add_argument("--clip", type=float, default=0.95,
                        help="upper quantile of the clipped releases (chosen on EIA by "
                             "reproduction/clip_settings.py)")
    parser.add_argument("--clip-share", type=float, default=0.2,
                        help="share of ε for the clipped bounds (idem)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    data = datasets.load("census").frame[COLUMNS]
    bounds = {c: (0.0, 1.5 * float(data[c].max())) for c in COLUMNS}
    releases = {}
    for epsilon in (1.0, 2.0):
        if args.smartnoise_python:
            for method in ("mst", "aim"):
                releases[(method.upper(), "-", epsilon)] = [
                    lambda s, m=method, e=epsilon: smartnoise(args.smartnoise_python, m, data,
                                                              bounds, e, s)]
        releases[("plain Laplace", "-", epsilon)] = [
            lambda s, e=epsilon: dp_laplace(data, epsilon=e, bounds=bounds, rng=s).frame]
        for k in (int(v) for v in args.ks.split(",")):
            for m in (0, 1, 2):
                releases[(f"cross-moment m = {m}, insensitive (ε-DP)", k, epsilon)] = [
                    lambda s, k=k, m=m, e=epsilon: dp_cross_moment(
                        data, epsilon=e, k=k, moments=m, bounds=bounds, rng=s).frame]
            for shares in ((0.25, 0.75), (0.1, 0.9)):  # more of ε for the covariances
                releases[(f"cross-moment m = 1, insensitive, separate {shares} (ε-DP)", k,
                          epsilon)] = [
                    lambda s, k=k, e=epsilon, shares=shares: dp_cross_moment(
                        data, epsilon=e, k=k, moments=1, noise="separate", strategy=shares,
                        bounds=bounds, rng=s).frame]
            clip = Clipping(0.0, args.clip, args.clip_share)
            name = f"clipped at the DP {args.clip:g} quantile ({args.clip_share:g} of ε)"
            releases[(f"cross-moment m = 0, insensitive, {name} (ε-DP)", k, epsilon)] = [
                lambda s, k=k, e=epsilon, clip=clip: dp_cross_moment(
                    data, epsilon=e, k=k, moments=0, bounds=bounds, clip=clip, rng=s).frame]
            for variant, shares in (("pure", None), ("pure", (0.25, 0.75)),
                                    ("pure", (0.1, 0.9)), ("kendall", (0.25, 0.75)),
                                    ("kendall", (0.1, 0.9))):
                label = "joint" if shares is None else f"separate {shares}"
                releases[(f"cross-moment m = 1, {variant}, insensitive, {name}, {label} "
                          "(ε-DP)", k, epsilon)] = [
                    lambda s, k=k, e=epsilon, shares=shares, clip=clip, variant=variant:
                    dp_cross_moment(data, epsilon=e, k=k, moments=1,
                                    noise="joint" if shares is None else "separate",
                                    strategy=shares, variant=variant, bounds=bounds,
                                    clip=clip, rng=s).frame]
            if k < len(data):
                releases[("cross-moment m = 1, MDAV (DP of X^m)", k, epsilon)] = [
                    lambda s, k=k, e=epsilon: dp_cross_moment(
                        data, epsilon=e, k=k, moments=1, clustering="mdav", bounds=bounds,
                        rng=s).frame]
    print("| method | k | ε | mean rel. error | variance rel. error | correlation (Frobenius) "
          "| W1 / range |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (method, k, epsilon), (make,) in releases.items():
        seeds = args.smartnoise_seeds if method in ("MST", "AIM") else args.seeds
        rows = [measures(data, make(seed), bounds) for seed in range(seeds)]
        cells = []
        for key in rows[0]:
            values = np.array([r[key] for r in rows])
            error = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else np.nan
            cells.append(f"{values.mean():.3f} ± {error:.3f}" if args.errors
                         else f"{values.mean():.3f}")
        print(f"| {method} | {k} | {epsilon:g} | " + " | ".join(cells) + " |", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
