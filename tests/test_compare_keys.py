"""The comparison of methods for categorical keys at equal risk (evaluation/key_compare.py):
the search with a ceiling, the risk and information loss of a release against their direct
definitions (tests/reference.py), the calibrated releases re-made by the method objects, the
ranking, the methods that cannot reach the target, the report and the command."""

import json
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError
from microagg.evaluation.calibration import Candidate, calibrate, summarize
from microagg.evaluation.compare import compare
from microagg.evaluation.html import comparison_html
from microagg.evaluation.key_compare import compare_keys
from microagg.evaluation.key_measures import (
    KeyCoding,
    KeyRiskMeasure,
    KeyUtility,
    information_loss,
    released_codes,
)
from microagg.options import CompareMethod, MatchStatus, RiskKind, Target
from microagg.release.methods import MDAV, GlobalRecoding, InvariantPram, LocalSuppression
from tests.reference import information_loss_direct, released_key_risk_direct

KEYS = ["age", "region", "sex", "job"]

# -- the search with a ceiling, on a measure known in advance ------------------------------


@dataclass
class _Steps:
    """A measurer whose risk at an integer k is ``risk(k)`` (smaller = safer) and whose
    utility loss is k itself, with a ceiling."""

    risk: object
    seeds: int = 1
    target: Target = Target.RISK
    better_above: bool = False
    ceiling: bool = True

    def evaluate(self, c, value, runs, known=None):
        return summarize(value, [self.risk(value)], self.risk(value), value, 0.0)

    def utility(self, c, value):
        return KeyUtility(value, 0.0, {}, 0.0, 0.0), SimpleNamespace(value=value, bound=0.0)


def _candidate(low=2, high=400):
    return Candidate(CompareMethod.LOCAL_SUPPRESSION, "k", low, high, True, False, True,
                     True, lambda x, v, r: x, log=True)


@pytest.mark.parametrize("threshold", [2, 3, 17, 100, 399])
def test_a_ceiling_finds_the_least_protective_value_that_meets_it(threshold):
    """A step function: risk 10 below the threshold, 0 from it on. Every value from the
    threshold meets a target of 0; the search returns the threshold itself."""
    result = calibrate(_Steps(lambda k: 10.0 if k < threshold else 0.0), _candidate(), 0.0, 0.0)
    expected = MatchStatus.EXCEEDS if threshold == 2 else MatchStatus.MATCHED
    assert (result.value, result.status, result.risk) == (threshold, expected, 0.0)


def test_a_ceiling_on_a_falling_measure_stops_at_the_crossing():
    """risk(k) = 100 / k: the least k with risk ≤ 3.3 (+ 1 % tolerance) is 31."""
    result = calibrate(_Steps(lambda k: 100.0 / k), _candidate(), 3.3, 0.033)
    assert result.status is MatchStatus.MATCHED and result.value == 31
    assert 100 / 30 > 3.3 + 0.033 >= result.risk


def test_a_ceiling_out_of_reach_is_short_with_its_reason():
    result = calibrate(_Steps(lambda k: 50.0 / k + 1), _candidate(), 0.5, 0.0)
    assert result.status is MatchStatus.SHORT and not result.ranked
    assert result.reason.startswith("out of reach: over k in [2, 400] the risk goes from")


# -- the measures of a release against their definitions -----------------------------------


def _frame(n=240, seed=0, missing=True):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 80, n),
        "region": rng.choice(["north-a", "north-b", "south-a", "south-b", "east"], n,
                             p=[0.3, 0.25, 0.2, 0.15, 0.1]),
        "sex": rng.choice(["f", "m"], n),
        "job": rng.choice(["clerk", "nurse", "farmer", "teacher", "miner", "judge"], n,
                          p=[0.3, 0.25, 0.2, 0.15, 0.07, 0.03]).astype(object),
        "w": rng.uniform(1.0, 60.0, n).round(1),
    })
    if missing:
        frame.loc[rng.random(n) < 0.05, "job"] = None
    return frame


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    path = tmp_path_factory.mktemp("taxonomy") / "region.csv"
    path.write_text("north-a;north;*\nnorth-b;north;*\nsouth-a;south;*\nsouth-b;south;*\n"
                    "east;eastern;*\n", encoding="utf-8")
    return Schema((Attribute("age", Role.QUASI, Kind.NUMERIC, domain=(0, 120)),
                   Attribute("region", Role.QUASI, Kind.NOMINAL, taxonomy=path),
                   Attribute("sex", Role.QUASI, Kind.NOMINAL),
                   Attribute("job", Role.QUASI, Kind.NOMINAL),
                   Attribute("w", Role.WEIGHT, Kind.NUMERIC)))


def _rows(frame):
    return [list(row) for row in frame[KEYS].astype(object).itertuples(index=False)]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["expected-reidentifications", "global-risk", "violations"])
def test_the_risk_of_a_release_is_its_definition(seed, kind):
    """Released keys with suppressed cells (matching any value) and changed values, with and
    without a weight, over every record and over the records whose keys are their own."""
    frame = _frame(60, seed)
    rng = np.random.default_rng(seed)
    released = frame.copy()
    released.loc[rng.random(60) < 0.15, "age"] = None
    released.loc[rng.random(60) < 0.2, "region"] = "elsewhere"
    coding = KeyCoding.of(frame, KEYS)
    codes = released_codes(coding, {key: released[key] for key in KEYS})
    own = (codes == coding.codes).all(axis=1)
    for weights in (None, frame["w"].to_numpy()):
        measure = KeyRiskMeasure(RiskKind(kind), weights, k=3)
        for mask in (None, own):
            expected = released_key_risk_direct(_rows(frame), _rows(released), kind, 3,
                                                weights, own_only=mask is not None)
            assert measure(codes, mask) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_information_loss_is_its_definition(seed):
    frame = _frame(80, seed)
    rng = np.random.default_rng(seed + 100)
    released = frame.copy()
    released.loc[rng.random(80) < 0.2, "job"] = None  # suppressed
    released["region"] = released["region"].str[:5]  # recoded: north, south, east
    released.loc[rng.random(80) < 0.3, "sex"] = rng.choice(["f", "m"], 80)[:1][0]  # redrawn
    released["age"] = (frame["age"] // 10 * 10).astype(str)  # intervals, new labels
    coding = KeyCoding.of(frame, KEYS)
    loss = information_loss(coding, released_codes(coding, {k: released[k] for k in KEYS}))
    expected = information_loss_direct([frame[k].tolist() for k in KEYS],
                                       [released[k].tolist() for k in KEYS])
    assert loss.information_loss == pytest.approx(expected, rel=1e-12)
    assert loss.suppressed["job"] == pytest.approx(
        (released["job"].isna() & frame["job"].notna()).sum() / frame["job"].notna().sum())


def test_information_loss_ends():
    """Nothing changed loses nothing; every value suppressed, or recoded to one value, loses
    all; a key with one value has nothing to lose."""
    frame = _frame(50, 3).assign(one="same")
    keys = [*KEYS, "one"]
    coding = KeyCoding.of(frame, keys)
    assert information_loss(coding, coding.codes).information_loss == 0.0
    gone = np.where(coding.codes >= 0, -1, -1)
    assert information_loss(coding, gone).per_key == {**dict.fromkeys(KEYS, 1.0), "one": 0.0}
    star = released_codes(coding, {k: pd.Series(["*"] * 50) for k in keys})
    assert information_loss(coding, star).per_key == {**dict.fromkeys(KEYS, 1.0), "one": 0.0}


# -- the comparison -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def comparison(schema):
    return compare_keys(_frame(), target_risk=2.0, keys=KEYS, weight="w", schema=schema,
                        widths={"age": 5}, seeds=4, tolerance=0.01)


def _remade(method, value, frame, schema, run=0):
    """The keys as the method object's own release writes them at ``value``."""
    roles = {"w": "weight"}
    if method is CompareMethod.LOCAL_SUPPRESSION:
        return LocalSuppression(k=int(value)).release(frame, keys=KEYS, schema=schema,
                                                      roles=roles).frame
    if method is CompareMethod.MDAV:
        return MDAV(k=int(value)).release(frame, schema=schema, columns=KEYS).frame
    if method is CompareMethod.INVARIANT_PRAM:
        return InvariantPram(retention=value).release(
            frame, keys=KEYS, schema=schema, roles=roles,
            rng=np.random.default_rng((0, run))).frame
    level = int(value)
    recoding = GlobalRecoding(levels={"region": min(level, 2)},
                              breaks={"age": [5 * 2 ** (level - 1) * i for i in
                                              range(math.ceil(120 / (5 * 2 ** (level - 1)))
                                                    + 1)]})
    recoded = recoding.release(frame, keys=KEYS, schema=schema, roles=roles).frame
    if method is CompareMethod.GLOBAL_RECODING:
        return recoded
    assert method is CompareMethod.RECODE_THEN_SUPPRESS
    return recoded  # recoded at level 1; suppression follows in the caller


def test_the_calibrated_releases_have_the_risk_and_utility_reported(comparison, schema):
    """Each method's value, released again by its method object and measured by the
    definitions, gives the risk and the information loss the comparison reports; a matched
    value meets the ceiling and the next less protective value does not."""
    frame = _frame()
    weights = frame["w"].to_numpy()
    target = comparison.target_value + comparison.tolerance
    by = comparison.by_method()
    assert set(by) == {CompareMethod.LOCAL_SUPPRESSION, CompareMethod.RECODE_THEN_SUPPRESS,
                       CompareMethod.GLOBAL_RECODING, CompareMethod.INVARIANT_PRAM,
                       CompareMethod.MDAV}

    def measured(method, value):
        if method is CompareMethod.RECODE_THEN_SUPPRESS:
            recoded = _remade(CompareMethod.GLOBAL_RECODING, 1, frame, schema)
            written = LocalSuppression(k=int(value)).release(recoded, keys=KEYS).frame
        else:
            written = _remade(method, value, frame, schema)
        return (released_key_risk_direct(_rows(frame), _rows(written),
                                          "expected-reidentifications", weights=weights),
                information_loss_direct([frame[k].tolist() for k in KEYS],
                                        [written[k].tolist() for k in KEYS]))

    for method, m in by.items():
        if method is CompareMethod.INVARIANT_PRAM:
            continue
        risk, loss = measured(method, m.value)
        assert m.risk == pytest.approx(risk, rel=1e-9)
        assert m.utility.loss == pytest.approx(loss, rel=1e-9)
        if m.status is MatchStatus.MATCHED:
            assert m.risk <= target < measured(method, m.value - 1)[0]
        elif m.status is MatchStatus.EXCEEDS:
            assert m.value == (1 if method is CompareMethod.GLOBAL_RECODING else 2)
            assert m.risk <= target
    order = [by[m].utility.loss for m in comparison.ranking]
    assert order == sorted(order) and len(order) >= 3


def test_pram_counts_only_the_records_it_left_as_they_were(comparison, schema):
    """PRAM's risk at its value is the mean over the seeds of the risk of the records whose
    keys it kept, each seed's release made again by the method object."""
    frame = _frame()
    m = comparison.by_method()[CompareMethod.INVARIANT_PRAM]
    chosen = next(e for e in m.evaluations if e.value == m.value)
    risks = []
    for run in range(len(chosen.measures)):
        written = _remade(CompareMethod.INVARIANT_PRAM, m.value, frame, schema, run)
        risks.append(released_key_risk_direct(_rows(frame), _rows(written),
                                              "expected-reidentifications",
                                              weights=frame["w"].to_numpy(), own_only=True))
    assert m.risk == pytest.approx(np.mean(risks), rel=1e-9)


def test_the_report_says_which_risk_and_utility(comparison):
    d = comparison.to_dict()
    assert d["risk_kind"] == "expected-reidentifications" and d["match"] == "at-most"
    assert d["risk_definition"]["label"] == "expected re-identifications"
    assert "Benedetti-Franconi" in d["risk_definition"]["individual risk"]
    assert d["utility_definition"]["label"] == "information loss"
    assert "suppressed" in d["utility_definition"]["suppressed cells"]
    assert d["data"]["original_risk"] > comparison.target_value
    assert {"information_loss", "cells_changed_percent", "cells_suppressed_percent"} <= set(
        d["methods"][0]["utility"])
    assert "information_loss" in d["methods"][0]["evaluations"][0]
    html = comparison_html(comparison)
    for text in ("expected re-identifications", "information loss ± uncertainty",
                 "Benedetti-Franconi", "cells suppressed %", 'id="figure-curves"',
                 'id="figure-scatter"', "at most 2"):
        assert text in html


def test_the_report_shows_the_global_risk_in_percent(schema):
    """The global risk is held as a fraction and shown in percent, as everywhere else."""
    from microagg.risk.registry import percent

    result = compare_keys(_frame(120, 2), target_risk=0.2, risk_kind="global-risk",
                          keys=KEYS, schema=schema, methods=["local-suppression"], seeds=2)
    html = comparison_html(result)
    assert result.target_value == 0.2 and percent(0.2) in html
    matched = result.methods[0]
    assert percent(matched.risk) in html and f"{matched.risk:.4g}<" not in html


def test_violations_reach_zero_where_a_method_can_and_pram_cannot(schema):
    """No record in a class smaller than 3: suppression and MDAV reach it at k = 3 exactly;
    PRAM always keeps some unique records as they are, so it is short, with its reason."""
    result = compare_keys(_frame(120, 1), target_risk=0, risk_kind="violations", k=3,
                          keys=KEYS, schema=schema,
                          methods=["local-suppression", "mdav", "invariant-pram"], seeds=3)
    by = result.by_method()
    for method in (CompareMethod.LOCAL_SUPPRESSION, CompareMethod.MDAV):
        assert by[method].status is MatchStatus.MATCHED and by[method].value == 3
        assert by[method].risk == 0.0
    pram = by[CompareMethod.INVARIANT_PRAM]
    assert pram.status is MatchStatus.SHORT and pram.reason.startswith("out of reach")
    assert CompareMethod.INVARIANT_PRAM not in result.ranking
    assert "invariant-pram cannot reach the target" in result.recommendation()


def test_within_the_band_pram_matches_the_target_with_fresh_seeds(schema):
    """Asked for a risk inside target · (1 ± tolerance), PRAM's retention is found so that
    fresh seeds give that risk."""
    frame = _frame()
    result = compare_keys(frame, target_risk=13.0, keys=KEYS, weight="w", schema=schema,
                          methods=["invariant-pram"], match="within", seeds=10,
                          tolerance=0.1)
    m = result.methods[0]
    assert m.status is MatchStatus.MATCHED
    assert 13.0 * 0.9 <= m.risk_ci[0] <= m.risk_ci[1] <= 13.0 * 1.1
    fresh = []
    for run in range(100, 130):
        written = InvariantPram(retention=m.value).release(
            frame, keys=KEYS, schema=schema, roles={"w": "weight"},
            rng=np.random.default_rng(run)).frame
        fresh.append(released_key_risk_direct(_rows(frame), _rows(written),
                                              "expected-reidentifications",
                                              weights=frame["w"].to_numpy(), own_only=True))
    error = 3 * np.std(fresh, ddof=1) / np.sqrt(len(fresh))
    assert abs(np.mean(fresh) - 13.0) <= 13.0 * 0.1 + error


def test_a_target_given_by_a_method(schema):
    result = compare_keys(_frame(), target_risk="local-suppression=4", keys=KEYS, weight="w",
                          schema=schema, methods=["local-suppression", "mdav"])
    ls = result.by_method()[CompareMethod.LOCAL_SUPPRESSION]
    assert result.target_source == "local-suppression with k = 4"
    assert ls.value <= 4 and ls.risk <= result.target_value


@pytest.mark.parametrize(("options", "message"), [
    ({"risk_kind": "rank"}, "compare them with compare"),
    ({"k": 3}, "`k` counts the violations of k"),
    ({"risk_kind": "violations", "k": 1}, "`k` must be an integer of at least 2"),
    ({"methods": ["rank-swap"]}, "rank-swap is not compared here"),
    ({"methods": ["global-recoding"], "recode": []}, "global-recoding cannot be compared"),
    ({"widths": {"sex": 2}}, "`widths`: key 'sex' is nominal"),
    ({"widths": {"age": -1}}, "must be a positive number"),
    ({"recode": ["sex"]}, "`recode` names 'sex', which has no taxonomy"),
    ({"recode_level": 9, "widths": {"age": 5}}, "`recode_level` must be an integer from 1"),
    ({"match": "nearly"}, "unknown match 'nearly'"),
    ({"target_risk": "mdav=1"}, "outside its range"),
    ({"target_risk": "rank-swap=0.1"}, "names a method this comparison does not offer"),
    ({"keys": ["age", "nope"]}, "unknown column 'nope'"),
    ({"seeds": 0}, "`seeds` must be an integer"),
])
def test_bad_requests_are_refused(schema, options, message):
    arguments = {"target_risk": 1.0, "keys": KEYS, "schema": schema, **options}
    with pytest.raises(InputError, match=message):
        compare_keys(_frame(40), **arguments)


def test_strata_are_refused_and_key_methods_stay_out_of_the_rank_comparison(schema):
    frame = _frame(40)
    strata = Schema((*schema, Attribute("zone", Role.STRATUM, Kind.NOMINAL)))
    with pytest.raises(InputError, match="declares the strata zone"):
        compare_keys(frame.assign(zone="a"), target_risk=1.0, keys=KEYS, schema=strata)
    with pytest.raises(InputError, match="local-suppression is not compared here"):
        compare(frame[["age", "w"]], target_risk=1.0, methods=["local-suppression"])


# -- the command ----------------------------------------------------------------------------


def test_cli_compares_methods_for_keys(run_cli, tmp_path, schema):
    table = tmp_path / "survey.csv"
    _frame(120, 2).to_csv(table, index=False)
    schema_path = tmp_path / "survey.yaml"
    schema.save(schema_path)
    report = tmp_path / "keys.html"
    result = run_cli("compare", table, "--schema", schema_path, "--target-risk-kind",
                     "violations", "--k", "3", "--target-risk", "0", "--keys",
                     ",".join(KEYS), "--widths", "age=5", "--methods",
                     "local-suppression,global-recoding,mdav", "--report", report, "--json")
    assert result.code == 0, result.stderr
    d = json.loads(result.stdout)
    assert d["risk_kind"] == "violations" and d["risk_definition"]["label"] == \
        "violations of k = 3"
    assert [m["method"] for m in d["methods"]] == ["local-suppression", "global-recoding",
                                                   "mdav"]
    assert "information loss" in report.read_text(encoding="utf-8")
    text = run_cli("compare", table, "--schema", schema_path, "--target-risk-kind",
                   "violations", "--k", "3", "--target-risk", "0", "--keys", ",".join(KEYS),
                   "--methods", "local-suppression")
    assert text.code == 0 and "information loss" in text.stdout
    assert "violations of k = 3, at most the target" in text.stdout


@pytest.mark.parametrize(("args", "fragment"), [
    (["--target-risk-kind", "violations", "--target-risk", "0", "--columns", "age"],
     "--columns applies to the rank risk"),
    (["--target-risk", "3", "--keys", "age"], "--keys applies to the categorical risks"),
    (["--target-risk-kind", "violations", "--target-risk", "0", "--keys", "age",
      "--widths", "age"], "--widths takes KEY=WIDTH pairs"),
    (["--target-risk-kind", "global-risk", "--target-risk", "0.1", "--keys", "age",
      "--k", "3"], "--k counts the violations of k; it applies to the risk kind"),
    (["--target-risk-kind", "loud", "--target-risk", "1"], "unknown --target-risk-kind"),
    (["--target-risk-kind", "violations", "--keys", "age"], "--target-risk is needed"),
])
def test_cli_refuses_options_of_the_other_risk(run_cli, tmp_path, args, fragment):
    table = tmp_path / "survey.csv"
    _frame(40).to_csv(table, index=False)
    report = tmp_path / "never.html"
    result = run_cli("compare", table, *args, "--report", report)
    assert result.code == 2 and fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not report.exists()
