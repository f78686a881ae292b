"""Empirical privacy audits of releases as written.

An audit runs a release many times on two neighbouring data sets, reads back the table exactly
as the command line writes it (CSV, no index), and counts how often an event the attacker
chooses occurs. With p and p' the event's probabilities, ε-DP requires p <= e^ε p'; the
Clopper-Pearson bounds of both probabilities give a lower confidence bound of the privacy loss,
``log(lower(p) / upper(p'))``. A correct release keeps it below its ε; a bound above ε is proof
(at the stated confidence) that the written table is not ε-DP.

The same event is also counted on the release's values in input order (:meth:`Release.aligned`),
which is what a release that kept its rows in order would have written: the control that shows
the audit would catch that leak.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microagg.release.base import Release

__all__ = ["AuditResult", "Scenario", "audit", "epsilon_lower_bound", "missing_scenarios",
           "scenarios", "type_scenarios"]

# Two-sided confidence of each Clopper-Pearson interval.
CONFIDENCE = 1 - 1e-4


def _clopper_pearson(hits: int, trials: int) -> tuple[float, float]:
    from scipy.stats import beta

    alpha = 1 - CONFIDENCE
    low = beta.ppf(alpha / 2, hits, trials - hits + 1) if hits else 0.0
    high = beta.ppf(1 - alpha / 2, hits + 1, trials - hits) if hits < trials else 1.0
    return float(low), float(high)


def epsilon_lower_bound(hits_a: int, hits_b: int, trials: int) -> float:
    """Lower confidence bound of the privacy loss from an event seen ``hits_a`` and ``hits_b``
    times in ``trials`` runs on each of two neighbours (0 when nothing can be concluded)."""
    (low_a, high_a), (low_b, high_b) = (_clopper_pearson(hits_a, trials),
                                        _clopper_pearson(hits_b, trials))
    ratio = max(low_a / high_b, low_b / high_a)
    return math.log(ratio) if ratio > 1 else 0.0


def written(frame: pd.DataFrame, fmt: str = "csv") -> pd.DataFrame:
    """The table as the command line writes it (``fmt``: CSV or Parquet, no index) and reads
    it back: values, order and, for Parquet, the column types. ``"frame"`` is the table as
    the Python API returns it, whose types Parquet keeps."""
    if fmt == "frame":
        return frame
    if fmt == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        buffer.seek(0)
        return pd.read_parquet(buffer)
    return pd.read_csv(io.StringIO(frame.to_csv(index=False)))


@dataclass(frozen=True)
class AuditResult:
    """Event counts on two neighbours and the privacy losses they prove."""

    trials: int
    hits_written: tuple[int, int]
    hits_input_order: tuple[int, int]

    @property
    def epsilon_written(self) -> float:
        """Lower bound of ε from the table as written."""
        return epsilon_lower_bound(*self.hits_written, self.trials)

    @property
    def epsilon_input_order(self) -> float:
        """Lower bound of ε had the rows been written in input order."""
        return epsilon_lower_bound(*self.hits_input_order, self.trials)


def audit(release: Callable[[pd.DataFrame, np.random.Generator], Release],
          neighbours: Sequence[pd.DataFrame], event: Callable[[pd.DataFrame], bool], *,
          trials: int, seed: int = 2024, fmt: str = "csv") -> AuditResult:
    """Run ``release`` ``trials`` times on each of the two ``neighbours`` and count ``event``
    on the written table (written as ``fmt``, CSV or Parquet) and on the table in input
    order."""
    if len(neighbours) != 2:
        raise ValueError("an audit compares two neighbouring data sets")
    rng = np.random.default_rng(seed)
    counts_written, counts_aligned = [], []
    for frame in neighbours:
        hits_written = hits_aligned = 0
        for _ in range(trials):
            out = release(frame, rng)
            hits_written += bool(event(written(out.frame, fmt)))
            hits_aligned += bool(event(written(out.aligned(), fmt)))
        counts_written.append(hits_written)
        counts_aligned.append(hits_aligned)
    return AuditResult(trials, (counts_written[0], counts_written[1]),
                       (counts_aligned[0], counts_aligned[1]))


# -- the worst-case neighbours of each DP release ---------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """A release on two worst-case neighbours and the event that would expose it."""

    name: str
    epsilon: float
    release: Callable[[pd.DataFrame, np.random.Generator], Release]
    neighbours: tuple[pd.DataFrame, pd.DataFrame]
    event: Callable[[pd.DataFrame], bool]
    leaks_in_input_order: bool  # whether rows in input order would break ε
    fmt: str = "csv"  # how the table is written before the event is read off it
    trials: int = 1500  # runs on each neighbour


def _pairs(values: Sequence[object]) -> list[tuple[int, ...]] | None:
    """The two pairs of rows sharing a value, if the values form exactly two pairs."""
    groups: dict[object, list[int]] = {}
    for row, value in enumerate(values):
        groups.setdefault(value, []).append(row)
    return sorted(map(tuple, groups.values())) if len(groups) == 2 else None


def _correlated(table: pd.DataFrame) -> bool:
    """Whether the written columns x and y correlate above 0.5 (not when one is constant)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return bool(np.corrcoef(table["x"], table["y"])[0, 1] > 0.5)


def scenarios() -> list[Scenario]:
    """The attacks of the independent audit, one per DP release type:

    * insensitive, k = 2, ε = 4: D = (.40, .41, .60, .61), D' with the first record at .62;
      event "rows 0 and 1 hold the same value, inside the domain";
    * individual ranking on two attributes, n = 4, k = 2, ε = 4: D groups records {0, 1} in
      both attributes, D' moves record 1 to (.2, .95) so that y groups {0, 2} and {1, 3};
      event "the two rows sharing an x value share a y value";
    * plain Laplace, ε = 1: one record moves from 0 to 1; event "row 0 is at most 0.5";
    * insensitive on a nominal attribute with declared categories, k = 2, ε = 2: one record
      changes from 'a' to 'c'; event "row 0 is 'a'";
    * cross-moment, m = 0, insensitive clusters, k = 2, ε = 4: the first scenario's data and
      event (the released records are the noisy means, repeated);
    * cross-moment, m = 1, insensitive clusters, k = 2, ε = 4: D = (0, 0, 1, 1), D' moves the
      first record to 1, so that one cluster's variance goes from 0 to its maximum; event
      "some row lies in (0.25, 0.75)";
    * cross-moment, m = 1, Kendall variant, one cluster of 4, ε = 4: x = y = (.1, .2, .3, .4)
      (τ_a = 1), D' moves the last record to (.4, .05), discordant with every other record
      (τ_a = 0, the largest change, 4/k); event "the written columns correlate above 0.5".

    and, for every DP release type, the column-type attack of :func:`type_scenarios`, and the
    missing-value attacks of :func:`missing_scenarios`.
    """
    from microagg.data.schema import Attribute, Kind, Role, Schema
    from microagg.release import (
        dp_cross_moment,
        dp_individual_ranking,
        dp_insensitive,
        dp_laplace,
    )

    def numeric(*names: str) -> Schema:
        return Schema(tuple(Attribute(n, Role.QUASI, Kind.NUMERIC, domain=(0, 1))
                            for n in names))

    nominal = Schema((Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b", "c")),))

    def same_pairs(table: pd.DataFrame) -> bool:
        x = _pairs(table["x"].tolist())
        return x is not None and x == _pairs(table["y"].tolist())

    return [
        Scenario("insensitive, k = 2", 4.0,
                 lambda f, rng: dp_insensitive(f, epsilon=4.0, k=2, schema=numeric("x"),
                                               rng=rng),
                 (pd.DataFrame({"x": [0.40, 0.41, 0.60, 0.61]}),
                  pd.DataFrame({"x": [0.62, 0.41, 0.60, 0.61]})),
                 lambda t: bool(t["x"][0] == t["x"][1] and 0 < t["x"][0] < 1), True),
        Scenario("individual ranking, 2 attributes, k = 2", 4.0,
                 lambda f, rng: dp_individual_ranking(f, epsilon=4.0, k=2,
                                                      schema=numeric("x", "y"), rng=rng),
                 (pd.DataFrame({"x": [0.1, 0.2, 0.8, 0.9], "y": [0.1, 0.2, 0.8, 0.9]}),
                  pd.DataFrame({"x": [0.1, 0.2, 0.8, 0.9], "y": [0.1, 0.95, 0.8, 0.9]})),
                 same_pairs, True),
        Scenario("plain Laplace", 1.0,
                 lambda f, rng: dp_laplace(f, epsilon=1.0, schema=numeric("x"), rng=rng),
                 (pd.DataFrame({"x": [0.0, 0.5, 0.5]}), pd.DataFrame({"x": [1.0, 0.5, 0.5]})),
                 lambda t: bool(t["x"][0] <= 0.5), False),
        Scenario("insensitive, nominal, k = 2", 2.0,
                 lambda f, rng: dp_insensitive(f, epsilon=2.0, k=2, schema=nominal, rng=rng),
                 (pd.DataFrame({"c": ["a", "a", "b", "b"]}),
                  pd.DataFrame({"c": ["c", "a", "b", "b"]})),
                 lambda t: bool(t["c"][0] == "a"), False),
        Scenario("cross-moment, m = 0, insensitive, k = 2", 4.0,
                 lambda f, rng: dp_cross_moment(f, epsilon=4.0, k=2, moments=0,
                                                schema=numeric("x"), rng=rng),
                 (pd.DataFrame({"x": [0.40, 0.41, 0.60, 0.61]}),
                  pd.DataFrame({"x": [0.62, 0.41, 0.60, 0.61]})),
                 lambda t: bool(t["x"][0] == t["x"][1] and 0 < t["x"][0] < 1), True),
        Scenario("cross-moment, m = 1, insensitive, k = 2", 4.0,
                 lambda f, rng: dp_cross_moment(f, epsilon=4.0, k=2, moments=1,
                                                schema=numeric("x"), rng=rng),
                 (pd.DataFrame({"x": [0.0, 0.0, 1.0, 1.0]}),
                  pd.DataFrame({"x": [1.0, 0.0, 1.0, 1.0]})),
                 lambda t: bool(((t["x"] > 0.25) & (t["x"] < 0.75)).any()), False),
        Scenario("cross-moment, m = 1, kendall, k = 4", 4.0,
                 lambda f, rng: dp_cross_moment(f, epsilon=4.0, k=4, moments=1,
                                                variant="kendall", schema=numeric("x", "y"),
                                                rng=rng),
                 (pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "y": [0.1, 0.2, 0.3, 0.4]}),
                  pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.4], "y": [0.1, 0.2, 0.3, 0.05]})),
                 _correlated, False),
        *type_scenarios(),
        *missing_scenarios(),
    ]


def _integer_column(name: str) -> Callable[[pd.DataFrame], bool]:
    def event(table: pd.DataFrame) -> bool:
        return bool(pd.api.types.is_integer_dtype(table[name]))
    return event


def type_scenarios(epsilon: float = 0.5) -> list[Scenario]:
    """The column-type attack on every DP release type, on the table as the Python API
    returns it (Parquet writes its types): D holds whole numbers only, so that
    pandas reads it as int64, and D' differs in one record by a value x.5 inside the domain
    (float64); event "the written column is an integer column". A release whose written
    types followed the input's would show it on D and never on D' (ε ≥ 4.5 for a claimed 0.5
    at 400 runs). The nominal case declares the categories ('1', '2', 'x') and moves one
    record from 1 to 'x', which turns the input column from int64 into text."""
    from microagg.data.schema import Attribute, Kind, Role, Schema
    from microagg.release import (
        dp_cross_moment,
        dp_individual_ranking,
        dp_insensitive,
        dp_laplace,
    )

    schema = Schema(tuple(Attribute(n, Role.QUASI, Kind.NUMERIC, domain=(0, 2))
                          for n in ("x", "y")))
    whole = pd.DataFrame({"x": [0, 1, 2, 1], "y": [0, 2, 1, 1]})
    half = whole.assign(x=[0.5, 1, 2, 1])
    releases: list[tuple[str, Callable[[pd.DataFrame, np.random.Generator], Release]]] = [
        ("insensitive", lambda f, rng: dp_insensitive(
            f, epsilon=epsilon, k=2, schema=schema, rng=rng)),
        ("individual ranking", lambda f, rng: dp_individual_ranking(
            f, epsilon=epsilon, k=2, schema=schema, rng=rng)),
        ("plain Laplace", lambda f, rng: dp_laplace(f, epsilon=epsilon, schema=schema,
                                                    rng=rng)),
        ("cross-moment, m = 0", lambda f, rng: dp_cross_moment(
            f, epsilon=epsilon, k=2, moments=0, schema=schema, rng=rng)),
        ("cross-moment, m = 1", lambda f, rng: dp_cross_moment(
            f, epsilon=epsilon, k=2, moments=1, schema=schema, rng=rng)),
        ("cross-moment, m = 1, kendall", lambda f, rng: dp_cross_moment(
            f, epsilon=epsilon, k=4, moments=1, variant="kendall", schema=schema, rng=rng)),
    ]
    out = [Scenario(f"{name}: written column type", epsilon, release, (whole, half),
                    _integer_column("x"), False, fmt="frame", trials=400)
           for name, release in releases]
    nominal = Schema((Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("1", "2", "x")),))
    codes = pd.DataFrame({"c": [1, 2, 1, 2]})
    out.append(Scenario(
        "insensitive, nominal: written column type", epsilon,
        lambda f, rng: dp_insensitive(f, epsilon=epsilon, k=2, schema=nominal, rng=rng),
        (codes, codes.assign(c=["x", 2, 1, 2])), _integer_column("c"), False,
        fmt="frame", trials=400))
    return out


def _has_missing(table: pd.DataFrame) -> bool:
    return bool(table.isna().to_numpy().any())


def missing_scenarios(epsilon: float = 1.0) -> list[Scenario]:
    """The attacks on missing values read as the schema's declared value (``missing:``):

    * plain Laplace: D = (missing, .5, .5) with missing read as 0, D' = (1, .5, .5); event
      "row 0 is at most 0.5" (a record at the far end of the domain from its declared value);
    * the same neighbours; event "a written cell is missing" (the missingness itself, which a
      release that passed missing cells through would show on D and never on D');
    * insensitive on a nominal attribute, k = 2, categories (a, b, c) with missing read as c:
      D = (missing, a, b, b), D' = (a, a, b, b); event "a written cell is missing".
    """
    from microagg.data.schema import Attribute, Kind, Role, Schema
    from microagg.release import dp_insensitive, dp_laplace

    numeric = Schema((Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 1), missing=0),))
    nominal = Schema((Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b", "c"),
                                missing="c"),))
    numbers = (pd.DataFrame({"x": [np.nan, 0.5, 0.5]}), pd.DataFrame({"x": [1.0, 0.5, 0.5]}))
    categories = (pd.DataFrame({"c": [None, "a", "b", "b"]}),
                  pd.DataFrame({"c": ["a", "a", "b", "b"]}))

    def laplace(f: pd.DataFrame, rng: np.random.Generator) -> Release:
        return dp_laplace(f, epsilon=epsilon, schema=numeric, rng=rng)

    def insensitive(f: pd.DataFrame, rng: np.random.Generator) -> Release:
        return dp_insensitive(f, epsilon=epsilon, k=2, schema=nominal, rng=rng)

    return [
        Scenario("plain Laplace, missing read as 0", epsilon, laplace, numbers,
                 lambda t: bool(t["x"][0] <= 0.5), False),
        Scenario("plain Laplace, missingness written", epsilon, laplace, numbers,
                 _has_missing, False, trials=400),
        Scenario("insensitive, nominal, missingness written", epsilon, insensitive,
                 categories, _has_missing, False, trials=400),
    ]
