"""Missing values in DP releases (read as the schema's declared value) and the unit of privacy
(one record, or one household of bounded size)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import ParameterError, PrivacyError, SchemaError
from microagg.evaluation.audit import audit, missing_scenarios
from microagg.release import dp_individual_ranking, dp_insensitive, dp_laplace
from microagg.release.dp.unit import PrivacyUnit


def _schema(missing_x=None, missing_c=None):
    return Schema((
        Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 100), missing=missing_x),
        Attribute("c", Role.QUASI, Kind.NOMINAL, domain=("a", "b", "unknown"),
                  missing=missing_c),
    ))


def _frame(rng, n=60, missing=True):
    x = rng.uniform(0, 100, n).round(1)
    c = rng.choice(["a", "b"], n).astype(object)
    if missing:
        x[rng.random(n) < 0.2] = np.nan
        c[rng.random(n) < 0.2] = None
    return pd.DataFrame({"x": x, "c": c})


# -- the schema's declaration ---------------------------------------------------------------

def test_a_declared_missing_value_lies_in_the_domain():
    with pytest.raises(SchemaError, match="outside its domain"):
        Attribute("x", kind=Kind.NUMERIC, domain=(0, 10), missing=11)
    with pytest.raises(SchemaError, match="not one of its declared categories"):
        Attribute("c", kind=Kind.NOMINAL, domain=("a", "b"), missing="z")
    with pytest.raises(SchemaError, match="not a number"):
        Attribute("x", kind=Kind.NUMERIC, missing="none")
    with pytest.raises(SchemaError, match="unknown key"):
        Schema.from_dict({"attributes": {"x": {"kind": "numeric", "missng": 1}}})


def test_the_declaration_round_trips_through_yaml(tmp_path):
    schema = _schema(missing_x=40, missing_c="unknown")
    schema.save(tmp_path / "s.yaml")
    again = Schema.load(tmp_path / "s.yaml")
    assert again["x"].missing == 40.0 and again["c"].missing == "unknown"
    assert "missing: 40" in (tmp_path / "s.yaml").read_text()


# -- the release ----------------------------------------------------------------------------

@pytest.mark.parametrize("release", [
    lambda f, s, rng: dp_insensitive(f, epsilon=1.0, k=4, schema=s, rng=rng),
    lambda f, s, rng: dp_individual_ranking(f, epsilon=1.0, k=4, schema=s, rng=rng),
    lambda f, s, rng: dp_laplace(f, epsilon=1.0, schema=s, rng=rng),
], ids=["insensitive", "individual-ranking", "laplace"])
def test_missing_cells_are_read_as_the_declared_value_before_the_mechanism(release):
    """The release of a table with missing values is, draw for draw, the release of the table
    whose missing cells hold the declared values: the mechanism never sees which cells were
    missing, and nothing missing is written."""
    frame = _frame(np.random.default_rng(3))
    schema = _schema(missing_x=50, missing_c="unknown")
    filled = frame.assign(x=frame["x"].fillna(50.0), c=frame["c"].fillna("unknown"))
    with_missing = release(frame, schema, np.random.default_rng(11))
    full = release(filled, schema, np.random.default_rng(11))
    pd.testing.assert_frame_equal(with_missing.frame, full.frame)
    assert not with_missing.frame.isna().to_numpy().any()
    assert "read as 50" in with_missing.report.domains["x"]["missing"]
    assert "read as unknown" in with_missing.report.domains["c"]["missing"]
    assert with_missing.report.differentially_private


def test_a_missing_value_without_a_declaration_is_refused_naming_the_column_and_the_way_out():
    frame = _frame(np.random.default_rng(4))
    with pytest.raises(PrivacyError, match=r"column 'x' has a missing value in row \d+; .*"
                       r"missing: a value of its domain.*`drop_incomplete`"):
        dp_insensitive(frame, epsilon=1.0, k=4, schema=_schema(missing_c="unknown"))
    with pytest.raises(PrivacyError, match=r"column 'c'.*one of its declared categories"):
        dp_insensitive(frame, epsilon=1.0, k=4, schema=_schema(missing_x=1))


def test_the_number_of_missing_values_is_the_owners_not_the_reports():
    frame = _frame(np.random.default_rng(5))
    release = dp_insensitive(frame, epsilon=1.0, k=4, schema=_schema(50, "unknown"))
    missing = int(frame["x"].isna().sum())
    assert any(f"{missing:,} missing value(s) of 'x'" in n for n in release.notices)
    text = json.dumps(release.report.to_dict())
    assert f" {missing} " not in text and "missing value(s)" not in text


def test_missingness_audit_has_power():
    """A release that wrote missing cells back where the input had them would be caught: the
    audit proves a loss above twice ε on it, and none on the release as made."""
    scenario = next(s for s in missing_scenarios() if s.name.startswith("plain Laplace, miss"
                                                                          "ingness"))

    def leaky(frame, rng):
        release = scenario.release(frame, rng)
        out = release.frame.copy()
        if frame["x"].isna().any():
            out.loc[0, "x"] = np.nan
        return type(release)(frame=out, labels=release.labels, report=release.report,
                             source_rows=release.source_rows,
                             source_index=release.source_index)

    caught = audit(leaky, scenario.neighbours, scenario.event, trials=200)
    assert caught.epsilon_written > 2 * scenario.epsilon
    clean = audit(scenario.release, scenario.neighbours, scenario.event, trials=60)
    assert clean.epsilon_written == 0


# -- the unit of privacy --------------------------------------------------------------------

def _households(rng, n=48, largest=3):
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, largest + 1)))
    ids = np.repeat(np.arange(len(sizes)), sizes)[:n]
    return pd.DataFrame({"hh": ids, "x": rng.uniform(0, 100, n)})


def test_a_household_bound_runs_every_mechanism_at_epsilon_over_the_bound():
    frame = _households(np.random.default_rng(6))
    schema = Schema((Attribute("hh", Role.HOUSEHOLD, Kind.NUMERIC),
                     Attribute("x", Role.QUASI, Kind.NUMERIC, domain=(0, 100))))
    with pytest.warns(Warning):
        household = dp_insensitive(frame, epsilon=1.5, k=4, schema=schema, rng=8,
                                   household_size=3)
    with pytest.warns(Warning):
        record = dp_insensitive(frame, epsilon=0.5, k=4, schema=schema, rng=8)
    pd.testing.assert_frame_equal(household.frame, record.frame)
    report = household.report
    assert report.epsilon == report.unit_epsilon == 1.5  # the household's guarantee
    assert report.record_epsilon == pytest.approx(0.5)
    assert report.unit == "one household of at most 3 records (column hh)"
    assert sum(p["epsilon"] for p in report.epsilon_split) <= 0.5
    assert "e^1.5" in report.guarantee and "hh" not in household.frame.columns
    assert record.report.unit == "one record"
    assert "household_size" in record.report.guarantee  # households declared, no bound


def test_a_household_larger_than_the_bound_or_no_household_column_is_refused():
    frame = _households(np.random.default_rng(7), largest=4)
    largest = int(frame["hh"].value_counts().max())
    with pytest.raises(PrivacyError, match=f"has {largest} records, more than"):
        dp_laplace(frame, epsilon=1.0, bounds={"x": (0, 100)}, roles={"hh": "household"},
                   household_size=largest - 1)
    with pytest.raises(ParameterError, match="0 household columns"):
        dp_laplace(frame[["x"]], epsilon=1.0, bounds={"x": (0, 100)}, household_size=2)
    with pytest.raises(ParameterError, match="positive integer"):
        PrivacyUnit.of(frame, None, {"hh": "household"}, household_size=0)


def test_the_command_line_protects_households_and_keeps_missing_counts_to_the_owner(tmp_path,
                                                                                    run_cli):
    frame = _households(np.random.default_rng(9))
    frame.loc[[2, 5], "x"] = np.nan
    frame.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.yaml").write_text(
        "attributes:\n  hh: {role: household}\n"
        "  x: {kind: numeric, domain: [0, 100], missing: 50}\n")
    run = run_cli("dp", tmp_path / "in.csv", "-o", tmp_path / "out.csv", "--schema",
                  tmp_path / "s.yaml", "--epsilon", "2", "--k", "4", "--household-size", "3")
    assert run.code == 0, run.stderr
    assert "missing value(s)" not in run.stderr
    report = json.loads((tmp_path / "out.csv.privacy.json").read_text())
    assert report["unit"].startswith("one household of at most 3")
    assert report["epsilon"] == 2 and report["record_epsilon"] == pytest.approx(2 / 3)
    assert not pd.read_csv(tmp_path / "out.csv").isna().to_numpy().any()
