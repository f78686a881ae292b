"""The web app's figures (matplotlib): the record risk histogram before and after (bins down
to the smallest risk), the DIS scores of SUDA2, the l-diversity of the records, a column's
distribution before and after (in value order; two panels once recoded), and the change of
the correlations between numeric columns (said in words when none changed)."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from microagg.recipe.risk import percent

__all__ = ["L_LABELS", "as_numbers", "category_counts", "correlation_change", "dis_histogram",
           "distribution", "l_histogram", "percent", "recoded", "risk_bins", "risk_histogram"]

UPPER_EDGES = (0.01, 0.05, 0.1, 0.2, 1 / 3 + 1e-9, 0.5 + 1e-9, 1.0 + 1e-9)
"""The thresholds of a record's risk from 1 % up, as a statistical office reads them."""
DECADES = 6
"""Decades below 1 % the histogram of the risk may show (a smaller risk joins the first)."""


def _percent_edge(share: float) -> str:
    return np.format_float_positional(100 * round(share, 12), precision=3, fractional=False,
                                      trim="-")


def risk_bins(*risks: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The edges and labels of the histogram of the record risks ``risks``: the thresholds
    1, 5, 10, 20, 33 and 50 %, and below 1 % one bin per decade down to the smallest risk
    (at most :data:`DECADES`), so that a weighted individual risk, often far below 1 % for
    every record, is not drawn as one bar.

    Examples
    --------
    >>> edges, labels = risk_bins(np.array([2e-5, 3e-4, 0.5]))
    >>> labels[:4], len(edges) == len(labels) + 1
    (['< 0.01 %', '0.01-0.1 %', '0.1-1 %', '1-5 %'], True)
    """
    present = [r[r > 0] for r in risks if r.size]
    smallest = min((float(r.min()) for r in present if r.size), default=0.01)
    lowest = max(int(np.floor(np.log10(min(smallest, 0.01)))), -2 - DECADES)
    lower = [10.0 ** e for e in range(lowest + 1, -2)]  # the first bin holds the smallest
    edges = np.array([0.0, *lower, *UPPER_EDGES])
    labels = [f"< {_percent_edge(edges[1])} %"]
    labels += [f"{_percent_edge(lo)}-{_percent_edge(hi)} %" for lo, hi in
               pairwise(edges[1:-1])]
    labels.append("> 50 %")
    return edges, labels


def risk_histogram(before: np.ndarray, after: np.ndarray | None = None,
                   label: str = "1 / f_k") -> Figure:
    """The records by re-identification risk (``label`` says which: 1/f_k, or the individual
    risk under a sampling weight), before (and after) the steps, in the bins of
    :func:`risk_bins`; each bar says its count."""
    fig = Figure(figsize=(7.0, 3.0))
    ax = fig.subplots()
    edges, labels = risk_bins(before, *(() if after is None else (after,)))
    x = np.arange(len(labels))
    width = 0.4 if after is not None else 0.8
    bars = [ax.bar(x - (width / 2 if after is not None else 0), np.histogram(before, edges)[0],
                   width, label="input", color="C3")]
    if after is not None:
        bars.append(ax.bar(x + width / 2, np.histogram(after, edges)[0], width,
                           label="after the steps", color="C0"))
        ax.legend()
    for group in bars:
        counts = np.asarray(group.datavalues, dtype=float)
        ax.bar_label(group, labels=[f"{int(v):,}" if v else "" for v in counts], fontsize=7)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_xlabel(f"risk of the record: {label}")
    ax.set_ylabel("records")
    ax.margins(y=0.15)
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


MOST_BARS = 30
"""Categories drawn at most (the most frequent, when a column has more)."""
SEPARATE = 0.5
"""The share of the values after the steps not found before above which a column is drawn
in two panels (recoded: its categories are others)."""


def as_numbers(series: pd.Series) -> pd.Series | None:
    """``series`` as numbers when it holds numbers (text such as ``36`` included), else
    ``None``: a numeric column read as text is drawn in value order, not by count. A
    column of categories is not (its categories have an order of their own)."""
    if isinstance(series.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(series):
        return None
    if pd.api.types.is_numeric_dtype(series):
        return series.astype(float)
    present = series.dropna()
    numbers = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    if present.empty or numbers.isna().any():
        return None
    return pd.to_numeric(series.astype("string").str.strip(), errors="coerce").astype(float)


def _leading_number(label: str) -> float | None:
    """The first number of a label (``[30, 40)`` → 30), or ``None``."""
    found = re.search(r"-?\d+(?:\.\d+)?", label)
    return float(found.group()) if found else None


def category_counts(series: pd.Series) -> pd.Series:
    """The records per value of ``series`` (missing values as ``missing``), in the column's
    order: its categories' order, else the order of the numbers the labels begin with
    (intervals), else the most frequent first; at most :data:`MOST_BARS`.

    Examples
    --------
    >>> category_counts(pd.Series(["[30, 40)", "[0, 30)", "[30, 40)", None])).to_dict()
    {'[0, 30)': 1, '[30, 40)': 2, 'missing': 1}
    """
    counts = series.astype("string").fillna("missing").value_counts(sort=False)
    if isinstance(series.dtype, pd.CategoricalDtype):
        order = [str(c) for c in series.cat.categories if str(c) in counts.index]
        order += [c for c in counts.index if c not in order]
        return counts[order].head(MOST_BARS)
    labels = [str(c) for c in counts.index if c != "missing"]
    starts = [_leading_number(c) for c in labels]
    if labels and all(v is not None for v in starts):
        order = [c for _, c in sorted(zip(starts, labels, strict=True),
                                      key=lambda pair: (pair[0], pair[1]))]
        order += ["missing"] if "missing" in counts.index else []
        return counts[order].head(MOST_BARS)
    return counts.sort_values(ascending=False, kind="stable").head(MOST_BARS)


def _colour(name: str) -> str:
    """The input in red, the table after the steps in blue, in every figure."""
    return "C3" if name == "input" else "C0"


def _numbers_panel(ax: Any, columns: list[tuple[str, pd.Series]]) -> None:
    """Numbers: bars per value when they are few whole numbers, else a histogram; in value
    order."""
    values = [(name, v.dropna().to_numpy(float)) for name, v in columns]
    every = np.concatenate([v for _, v in values])
    if not every.size:
        ax.text(0.5, 0.5, "every value is missing", ha="center", va="center")
        return
    distinct = np.unique(every)
    if distinct.size <= MOST_BARS and np.all(distinct == np.round(distinct)):
        edges = np.append(distinct - 0.5, distinct[-1] + 0.5)
    else:
        edges = np.linspace(distinct[0], distinct[-1] if distinct[-1] > distinct[0]
                            else distinct[0] + 1, 31)
    for name, v in values:
        ax.hist(v, edges.tolist(), alpha=0.55, label=name, color=_colour(name))


def _categories_panel(ax: Any, columns: list[tuple[str, pd.Series]]) -> None:
    """Categories: paired bars in the first column's order (then any value only the second
    holds)."""
    counts = pd.DataFrame({name: category_counts(v) for name, v in columns})
    first = category_counts(columns[0][1]).index.tolist()
    counts = counts.loc[first + [c for c in counts.index if c not in first]].fillna(0)
    counts = counts.head(MOST_BARS)
    x = np.arange(len(counts))
    width = 0.8 / counts.shape[1]
    for j, column in enumerate(counts.columns):
        ax.bar(x + j * width, counts[column].to_numpy(), width, label=column,
               color=_colour(str(column)))
    ax.set_xticks(x + 0.4 - width / 2, [str(i) for i in counts.index], rotation=60,
                  ha="right", fontsize=7)


def _panel(ax: Any, columns: list[tuple[str, pd.Series]]) -> None:
    numbers = [as_numbers(v) for _, v in columns]
    if all(n is not None for n in numbers):
        _numbers_panel(ax, [(name, n) for (name, _), n in zip(columns, numbers, strict=True)
                            if n is not None])
    else:
        _categories_panel(ax, columns)
    ax.set_ylabel("records")
    ax.legend(fontsize=8)


def recoded(before: pd.Series, after: pd.Series) -> bool:
    """Whether ``after`` holds other values than ``before`` (a recoding, intervals for
    numbers): then each is drawn in a panel of its own, in its own order."""
    if (as_numbers(before) is None) != (as_numbers(after) is None):
        return True
    if as_numbers(after) is not None:
        return False
    values = after.dropna().astype(str)
    if values.empty:
        return False
    return float((~values.isin(set(before.dropna().astype(str)))).mean()) > SEPARATE


def distribution(before: pd.Series, after: pd.Series | None, name: str) -> Figure:
    """The distribution of column ``name`` in the input and in the current table: numbers
    in value order (a histogram, or a bar per value when they are few whole numbers),
    categories in their order; a column the steps recoded is drawn in two panels, before
    and after, each in its own values."""
    fig = Figure(figsize=(7.0, 3.0))
    if after is not None and recoded(before, after):
        left, right = fig.subplots(1, 2)
        _panel(left, [("input", before)])
        _panel(right, [("after the steps", after)])
        fig.suptitle(f"{name} (recoded by the steps)", fontsize=10)
    else:
        ax = fig.subplots()
        _panel(ax, [("input", before)] + ([] if after is None else
                                          [("after the steps", after)]))
        ax.set_title(name)
    fig.tight_layout()
    return fig


def correlation_change(before: pd.DataFrame, after: pd.DataFrame) -> Figure:
    """The Pearson correlations of the numeric columns both tables hold: after minus
    before, each cell written; when none changed (no step touched a numeric column) the
    figure says so rather than drawing a blank map, and it names the columns that are
    no longer numeric (recoded)."""
    fig = Figure(figsize=(6.0, 4.2))
    ax = fig.subplots()
    numeric = [c for c in before.columns if pd.api.types.is_numeric_dtype(before[c])]
    names = [c for c in numeric if c in after.columns
             and pd.api.types.is_numeric_dtype(after[c])]
    gone = [str(c) for c in numeric if c not in names]
    note = (f"not compared (no longer numeric, or dropped): {', '.join(gone)}"
            if gone else "")
    if len(names) < 2:
        ax.text(0.5, 0.5, "fewer than two numeric columns in both tables"
                + (f"\n{note}" if note else ""), ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return fig
    change = (after[names].astype(float).corr() - before[names].astype(float).corr()).fillna(0)
    largest = float(change.abs().to_numpy().max())
    if largest < 5e-4:
        ax.text(0.5, 0.5, f"No correlation between the numeric columns changed by 0.001 "
                f"or more\n({', '.join(map(str, names))}: largest change {largest:.1g})"
                + (f"\n{note}" if note else ""), ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return fig
    span = max(0.05, largest)
    image = ax.imshow(change.to_numpy(), cmap="RdBu_r", vmin=-span, vmax=span)
    if len(names) <= 12:
        for (i, j), value in np.ndenumerate(change.to_numpy()):
            ax.text(j, i, f"{value:+.2f}", ha="center", va="center", fontsize=6)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    if note:
        ax.set_title(note, fontsize=7)
    fig.colorbar(image, ax=ax, label="correlation after - before")
    fig.tight_layout()
    return fig
