"""The web app's figures (matplotlib): the record risk histogram before and after, the DIS
scores of SUDA2, the l-diversity of the records, a column's distribution before and after,
and the change of the correlations between numeric columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from microagg.recipe.risk import percent

__all__ = ["L_LABELS", "correlation_change", "dis_histogram", "distribution", "l_histogram",
           "percent", "risk_histogram"]

BINS = np.array([0.0, 0.01, 0.05, 0.1, 0.2, 1 / 3 + 1e-9, 0.5 + 1e-9, 1.0 + 1e-9])
LABELS = ["< 1 %", "1-5 %", "5-10 %", "10-20 %", "20-33 %", "33-50 %", "> 50 %"]


def risk_histogram(before: np.ndarray, after: np.ndarray | None = None,
                   label: str = "1 / f_k") -> Figure:
    """The records by re-identification risk (``label`` says which: 1/f_k, or the individual
    risk under a sampling weight), before (and after) the steps."""
    fig = Figure(figsize=(7.0, 3.0))
    ax = fig.subplots()
    x = np.arange(len(LABELS))
    width = 0.4 if after is not None else 0.8
    ax.bar(x - (width / 2 if after is not None else 0), np.histogram(before, BINS)[0],
           width, label="input", color="C3")
    if after is not None:
        ax.bar(x + width / 2, np.histogram(after, BINS)[0], width, label="after the steps",
               color="C0")
        ax.legend()
    ax.set_xticks(x, LABELS, rotation=30, ha="right")
    ax.set_xlabel(f"risk of the record: {label}")
    ax.set_ylabel("records")
    fig.tight_layout()
    return fig


DIS_BINS = np.linspace(0.0, 1.0, 21)
L_EDGES = np.array([0.0, 2.0, 3.0, 4.0, 5.0, 6.0, 11.0, np.inf])
L_LABELS = ["1", "2", "3", "4", "5", "6-10", "> 10"]
"""The l of the records' classes, by bin (an entropy l of 2.5 is counted under 2)."""


def dis_histogram(dis_scores: np.ndarray) -> Figure:
    """The records with a special unique by their DIS score (SUDA2), on a log scale: most
    records have none (their score is 0, left out)."""
    fig = Figure(figsize=(7.0, 3.0))
    ax = fig.subplots()
    scored = dis_scores[dis_scores > 0]
    counts, edges = np.histogram(scored, DIS_BINS)
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="C3",
           edgecolor="white")
    if counts.any():
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())  # minor log ticks cost 0.1 s
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"DIS score (probability that a match on the keys is correct); "
                  f"{scored.size:,} records with a special unique")
    ax.set_ylabel("records")
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.96)  # tight_layout: 0.05 s
    return fig


def l_histogram(values: np.ndarray, label: str) -> Figure:
    """The records by the l-diversity of their class (``label`` names the measure)."""
    fig = Figure(figsize=(7.0, 2.6))
    ax = fig.subplots()
    x = np.arange(len(L_LABELS))
    ax.bar(x, np.histogram(values, L_EDGES)[0], 0.8, color="C0")
    ax.set_xticks(x, L_LABELS)
    ax.set_xlabel(label)
    ax.set_ylabel("records")
    fig.tight_layout()
    return fig


def distribution(before: pd.Series, after: pd.Series | None, name: str) -> Figure:
    """The distribution of column ``name`` in the input and in the current table."""
    fig = Figure(figsize=(7.0, 3.0))
    ax = fig.subplots()
    numeric = pd.api.types.is_numeric_dtype(before) and (
        after is None or pd.api.types.is_numeric_dtype(after))
    if numeric:
        values = [before.dropna().to_numpy(float)]
        if after is not None:
            values.append(after.dropna().to_numpy(float))
        low = min(v.min() for v in values if v.size)
        high = max(v.max() for v in values if v.size)
        bins = np.linspace(low, high if high > low else low + 1, 31).tolist()
        ax.hist(values[0], bins, alpha=0.55, label="input", color="C3")
        if after is not None:
            ax.hist(values[1], bins, alpha=0.55, label="after the steps", color="C0")
    else:
        counts = pd.DataFrame({"input": before.astype("string").value_counts(dropna=False)})
        if after is not None:
            counts["after the steps"] = after.astype("string").value_counts(dropna=False)
        counts = counts.fillna(0).sort_values("input", ascending=False).head(20)
        counts.index = [str(i) for i in counts.index]
        x = np.arange(len(counts))
        width = 0.8 / counts.shape[1]
        for j, column in enumerate(counts.columns):
            ax.bar(x + j * width, counts[column].to_numpy(), width, label=column,
                   color="C3" if j == 0 else "C0")
        ax.set_xticks(x + 0.4 - width / 2, counts.index, rotation=60, ha="right",
                      fontsize=7)
    ax.set_title(name)
    ax.set_ylabel("records")
    ax.legend()
    fig.tight_layout()
    return fig


def correlation_change(before: pd.DataFrame, after: pd.DataFrame) -> Figure:
    """The Pearson correlations of the numeric columns both tables hold: after minus
    before."""
    fig = Figure(figsize=(6.0, 4.2))
    ax = fig.subplots()
    names = [c for c in before.columns if c in after.columns
             and pd.api.types.is_numeric_dtype(before[c])
             and pd.api.types.is_numeric_dtype(after[c])]
    if len(names) < 2:
        ax.text(0.5, 0.5, "fewer than two numeric columns", ha="center", va="center")
        ax.set_axis_off()
        return fig
    change = (after[names].astype(float).corr() - before[names].astype(float).corr()).fillna(0)
    span = max(0.05, float(change.abs().to_numpy().max()))
    image = ax.imshow(change.to_numpy(), cmap="RdBu_r", vmin=-span, vmax=span)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(image, ax=ax, label="correlation after - before")
    fig.tight_layout()
    return fig
