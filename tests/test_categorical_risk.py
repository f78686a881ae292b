"""Risk of categorical keys (microagg.risk): every measure against its definition computed
record by record (tests/reference.py) on random tables with missing values, and on examples
checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg import categorical_risk
from microagg.core.frequencies import combination_ids, matching_counts
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError
from microagg.risk import household_risk, individual_risk, l_diversity, suda2
from tests import reference

SEMANTICS = ("matches-any", "category")


@st.composite
def key_tables(draw, max_rows: int = 14, max_keys: int = 4, missing: bool = True):
    """Small (n, m) key codes with values 0-2 and, if ``missing``, -1 for a missing value."""
    n = draw(st.integers(1, max_rows))
    m = draw(st.integers(1, max_keys))
    low = -1 if missing else 0
    cells = draw(st.lists(st.integers(low, 2), min_size=n * m, max_size=n * m))
    return np.array(cells, dtype=np.int64).reshape(n, m)


# --- frequencies -------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(key_tables(), st.sampled_from(SEMANTICS), st.integers(0, 2 ** 31))
def test_frequencies_are_the_matches_of_every_record(codes, missing, seed):
    weights = np.random.default_rng(seed).uniform(1, 50, codes.shape[0])
    assert matching_counts(codes, missing).tolist() == reference.frequencies_direct(
        codes.tolist(), missing)
    np.testing.assert_allclose(matching_counts(codes, missing, weights),
                               reference.frequencies_direct(codes.tolist(), missing, weights),
                               rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(1, 5), st.sampled_from([3, 1 << 20, 1 << 40]),
       st.integers(0, 2 ** 31))
def test_combination_ids_number_equal_rows_in_order_of_appearance(n, m, width, seed):
    # widths of 2^40 per column overflow int64 after two columns: the packing renumbers
    codes = np.random.default_rng(seed).integers(-1, 3, (n, m)) * (width // 3)
    ids = combination_ids(codes, range(m))
    rows = [tuple(r) for r in codes.tolist()]
    first = list(dict.fromkeys(rows))
    assert ids.tolist() == [first.index(r) for r in rows]


# --- individual and household risk -------------------------------------------------------

def test_individual_risk_by_hand():
    fk = np.array([1, 2, 3, 4, 2])
    Fk = np.array([10.0, 4.0, 6.0, 4.0, 2.0])
    expected = [0.1 / 0.9 * math.log(10),  # p = 0.1
                1 - math.log(2),  # p = 1/2: odds 1
                0.5 / 2.5,  # p/(f - (1 - p))
                0.25, 0.5]  # F_k = f_k: 1/f_k
    np.testing.assert_allclose(individual_risk(fk, Fk), expected, rtol=1e-15)
    assert individual_risk(np.array([1, 4])).tolist() == [1.0, 0.25]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.floats(1.0, 1e6)), min_size=1,
                max_size=30))
def test_individual_risk_is_the_formula_for_every_record(pairs):
    fk = np.array([f for f, _ in pairs])
    Fk = np.array([f * factor for f, factor in pairs])
    expected = [reference.individual_risk_direct(int(f), float(F)) for f, F in zip(fk, Fk,
                                                                                   strict=True)]
    risk = individual_risk(fk, Fk)
    np.testing.assert_allclose(risk, expected, rtol=1e-12)
    assert ((risk > 0) & (risk <= 1)).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 5)), min_size=1, max_size=25))
def test_household_risk_is_one_minus_the_product(members):
    risk = np.array([r for r, _ in members])
    households = np.array([h for _, h in members])
    _, codes = np.unique(households, return_inverse=True)
    np.testing.assert_allclose(household_risk(risk, codes),
                               reference.household_risk_direct(risk.tolist(), codes.tolist()),
                               rtol=1e-9, atol=1e-15)


# --- l-diversity -------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(key_tables(), st.sampled_from(SEMANTICS), st.data(), st.sampled_from([0.5, 1, 2, 3]))
def test_l_diversity_is_the_definition_on_every_class(codes, missing, data, c):
    sensitive = np.array(data.draw(st.lists(st.integers(-1, 3), min_size=codes.shape[0],
                                            max_size=codes.shape[0])), dtype=np.int64)
    result = l_diversity(codes, sensitive, missing, c=c)
    expected = reference.l_diversity_direct(codes.tolist(), sensitive.tolist(), missing, c)
    assert result.distinct.tolist() == [d for d, _, _ in expected]
    np.testing.assert_allclose(result.entropy, [e for _, e, _ in expected], rtol=1e-12)
    assert result.recursive.tolist() == [r for _, _, r in expected]


def test_recursive_l_diversity_by_hand():
    # one class with counts 4, 2, 1, 1: (c, l) holds while 4 < c (r_l + ... + r_4)
    codes = np.zeros((8, 1), dtype=np.int64)
    sensitive = np.array([0, 0, 0, 0, 1, 1, 2, 3])
    assert l_diversity(codes, sensitive, c=1).recursive[0] == 1  # 4 < 1·4 fails at l = 2
    assert l_diversity(codes, sensitive, c=2).recursive[0] == 2  # 4 < 2·4; not 4 < 2·2
    assert l_diversity(codes, sensitive, c=3).recursive[0] == 3  # 4 < 3·2; not 4 < 3·1
    assert l_diversity(codes, sensitive, c=5).recursive[0] == 4  # 4 < 5·1
    entropy = l_diversity(codes, sensitive).entropy[0]
    assert entropy == pytest.approx(math.exp(-(0.5 * math.log(0.5) + 0.25 * math.log(0.25)
                                              + 2 * 0.125 * math.log(0.125))))


# --- SUDA2 -------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(key_tables(max_rows=16, max_keys=5), st.sampled_from(SEMANTICS))
def test_suda_finds_every_minimal_sample_unique(codes, missing):
    result = suda2(codes, missing=missing)
    scores, shares, dis, msus = reference.suda_direct(codes.tolist(), missing)
    np.testing.assert_allclose(result.scores, scores, rtol=1e-15)
    np.testing.assert_allclose(result.record_contributions, shares, rtol=1e-12)
    np.testing.assert_allclose(result.dis_scores, dis, rtol=1e-12)
    sizes = [sum(len(s) == size for found in msus for s in found)
             for size in range(1, codes.shape[1] + 1)]
    assert result.msus_by_size == sizes


SEARCHES = ("records", "subsets", "nodes")  # risk.suda: _suda_records, _suda_kernels, Python


def _searched(codes, missing, way):
    """The MSUs' scores, contributions and counts by size as one way of searching finds
    them, whichever :func:`~microagg.risk.suda.search_cost` would take."""
    from microagg.options import MissingValues
    from microagg.risk.suda import _Search

    fk = matching_counts(codes, missing)
    search = _Search.prepare(codes, np.flatnonzero(fk == 1), MissingValues(missing))
    {"records": search.run_records, "subsets": search.run_compiled, "nodes": search.run}[way]()
    return fk, search.score, search.contribution, search.by_size


@settings(max_examples=100, deadline=None)
@given(key_tables(max_rows=18, max_keys=5), st.sampled_from(SEMANTICS))
def test_every_search_finds_the_minimal_sample_uniques_of_the_exhaustive_one(codes, missing):
    # the record search and both subset searches against every subset tried on every record
    _, _, _, msus = reference.suda_direct(codes.tolist(), missing)
    m = codes.shape[1]
    for way in SEARCHES:
        fk, score, contribution, by_size = _searched(codes, missing, way)
        uniques = np.flatnonzero(fk == 1)
        expected = [[frozenset(s) for s in msus[r]] for r in uniques]
        assert score.tolist() == [sum(math.factorial(m - len(s)) for s in found)
                                  for found in expected], way
        assert contribution.tolist() == [[sum(math.factorial(m - len(s)) for s in found
                                              if v in s) for v in range(m)]
                                         for found in expected], way
        assert by_size.tolist() == [sum(len(s) == size for found in expected for s in found)
                                    for size in range(1, m + 1)], way
    assert all(not msus[r] for r in np.flatnonzero(fk != 1))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2 ** 31), st.sampled_from(SEMANTICS))
def test_the_searches_agree_on_larger_tables(seed, missing):
    # beyond brute force: 300 records, 9 keys of 2 to 5 values, some missing
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, rng.integers(2, 6, 9), (300, 9))
    codes[rng.random(codes.shape) < 0.03] = -1
    found = [_searched(codes, missing, way) for way in SEARCHES]
    for other in found[1:]:
        for mine, theirs in zip(found[0], other, strict=True):
            np.testing.assert_array_equal(mine, theirs)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2 ** 31), st.sampled_from(SEMANTICS))
def test_suda_on_larger_tables_with_many_keys(seed, missing):
    # more rows and keys than the property above, still within reach of brute force
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, rng.integers(2, 5), (40, 6))
    codes[rng.random(codes.shape) < 0.05] = -1
    result = suda2(codes, missing=missing)
    scores, _, _, _ = reference.suda_direct(codes.tolist(), missing)
    np.testing.assert_allclose(result.scores, scores, rtol=1e-15)


@pytest.mark.parametrize("missing", SEMANTICS)
def test_suda_renumbers_by_hashing_past_the_dense_table(monkeypatch, missing):
    # high-cardinality keys make the dense renumbering table too large: a hash takes over
    import microagg.risk.suda as suda_module

    monkeypatch.setattr(suda_module, "_SCRATCH", 16)
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 6, (30, 4))
    codes[rng.random(codes.shape) < 0.1] = -1
    scores, _, _, _ = reference.suda_direct(codes.tolist(), missing)
    np.testing.assert_allclose(suda2(codes, missing=missing).scores, scores, rtol=1e-15)


def test_suda_and_dis_by_hand():
    # record 2 is the only sample unique; its MSUs are {b} (weight 2!) and {a, c} (weight 1!)
    codes = np.array([[0, 0, 0], [0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 0, 1]])
    result = suda2(codes, ["a", "b", "c"])
    assert result.scores.tolist() == [0, 0, 3, 0, 0]
    assert result.msus_by_size == [1, 1, 0]
    assert result.record_contributions[2].tolist() == pytest.approx([1 / 3, 2 / 3, 1 / 3])
    assert result.contributions == pytest.approx({"a": 100 / 3, "b": 200 / 3, "c": 100 / 3})
    # one unique, four records in pairs: Dis = 0.01 / (0.01 + 4 · 0.99); with a single scored
    # record the DIS score is Dis itself
    assert (result.sample_uniques, result.pairs) == (1, 4)
    assert result.dis_scores[2] == pytest.approx(0.01 / 3.97, rel=1e-12)


def test_missing_keys_in_suda():
    # under matches-any record 2's missing b matches both 0 and 1; under category it is a
    # value of its own and an MSU by itself
    codes = np.array([[0, 0], [0, 1], [0, -1], [1, 0]])
    any_value = suda2(codes, missing="matches-any")
    assert any_value.scores.tolist() == [0, 0, 0, 1]  # record 3: {a = 1}, weight (2 - 1)!
    category = suda2(codes, missing="category")
    # {a, b} for record 0, {b} for records 1 and 2 (b missing is a value), {a} for record 3
    assert category.scores.tolist() == [1, 1, 1, 1]
    assert category.msus_by_size == [3, 1]


def test_suda_refuses_bad_parameters():
    with pytest.raises(InputError, match="dis_fraction"):
        suda2(np.zeros((3, 2), dtype=np.int64), dis_fraction=1.5)
    with pytest.raises(InputError, match="dis_fraction"):
        suda2(np.array([[0, 0], [0, 1], [1, 1]])).at_fraction(0)


@pytest.mark.parametrize("missing", SEMANTICS)
@pytest.mark.parametrize("fraction", [0.001, 0.2, 0.9])
def test_dis_scores_at_another_fraction_need_no_new_search(missing, fraction):
    """The DIS scores of a search rescored at another sampling fraction are the definition's
    at that fraction; the MSUs and the scores are the search's."""
    rng = np.random.default_rng(8)
    codes = rng.integers(0, 3, (40, 5))
    codes[rng.random(codes.shape) < 0.05] = -1
    first = suda2(codes, missing=missing)
    again = first.at_fraction(fraction)
    _, _, dis, _ = reference.suda_direct(codes.tolist(), missing, fraction)
    np.testing.assert_allclose(again.dis_scores, dis, rtol=1e-12)
    assert again.dis_fraction == fraction and again.scores is first.scores
    assert again.to_dict() == suda2(codes, missing=missing, dis_fraction=fraction).to_dict()


# --- the whole measure -------------------------------------------------------------------

def _survey(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(["north", "south", "east"], n),
        "age": rng.choice([20, 30, 40, 50], n).astype(float),
        "w": rng.uniform(1, 200, n),
        "hh": rng.integers(0, n // 3, n),
        "illness": rng.choice(["flu", "cold", "none", None], n),
    })
    frame.loc[rng.random(n) < 0.1, "region"] = None
    frame.loc[rng.random(n) < 0.1, "age"] = np.nan
    return frame


@pytest.mark.parametrize("missing", SEMANTICS)
def test_categorical_risk_agrees_with_each_definition(missing):
    frame = _survey()
    keys = ["sex", "region", "age"]
    result = categorical_risk(frame, keys, weight="w", household="hh", sensitive="illness",
                              missing=missing, k=[4])
    columns = [pd.factorize(frame[key])[0].tolist() for key in keys]  # -1 where missing
    codes = [list(row) for row in zip(*columns, strict=True)]
    fk = reference.frequencies_direct(codes, missing)
    Fk = reference.frequencies_direct(codes, missing, frame["w"].tolist())
    assert result.fk.tolist() == fk
    np.testing.assert_allclose(result.Fk, Fk, rtol=1e-12)
    risk = [reference.individual_risk_direct(int(f), F) for f, F in zip(fk, Fk, strict=True)]
    np.testing.assert_allclose(result.risk, risk, rtol=1e-12)
    assert result.expected_reidentifications == pytest.approx(math.fsum(risk), rel=1e-12)
    assert result.global_risk == pytest.approx(math.fsum(risk) / len(frame), rel=1e-12)
    np.testing.assert_allclose(result.household_risk,
                               reference.household_risk_direct(risk, frame["hh"].tolist()),
                               rtol=1e-9)
    assert result.violations == {q: sum(f < q for f in fk) for q in (2, 3, 4, 5)}
    assert result.weighted_violations == {q: sum(F < q for F in Fk) for q in (2, 3, 4, 5)}
    illness = [-1 if pd.isna(v) else ["flu", "cold", "none"].index(v) for v in frame["illness"]]
    expected = reference.l_diversity_direct(codes, illness, missing)
    assert result.l_diversity.distinct.tolist() == [d for d, _, _ in expected]
    scores, _, dis, _ = reference.suda_direct(codes, missing)
    np.testing.assert_allclose(result.suda.scores, scores, rtol=1e-15)
    np.testing.assert_allclose(result.suda.dis_scores, dis, rtol=1e-12)


def test_without_a_weight_the_sample_is_the_population():
    frame = _survey()
    result = categorical_risk(frame, ["sex", "region"])
    assert result.Fk.tolist() == result.fk.tolist()
    np.testing.assert_allclose(result.risk, 1 / result.fk)
    assert result.weighted_violations is None
    assert result.to_dict()["weighted_violations"] is None


def test_records_one_row_per_record_in_row_order():
    frame = _survey().sample(frac=1, random_state=3)  # a shuffled index
    result = categorical_risk(frame, ["sex", "region"], household="hh", sensitive="illness")
    records = result.records()
    assert list(records.columns) == ["fk", "Fk", "risk", "household_risk", "suda_score",
                                     "dis_score", "l_distinct", "l_entropy", "l_recursive"]
    assert len(records) == len(frame)
    alone = categorical_risk(frame.iloc[[0]].reset_index(drop=True).pipe(
        lambda one: pd.concat([one, frame.iloc[1:]], ignore_index=True)), ["sex", "region"])
    assert records["fk"].tolist() == alone.fk.tolist()
    plain = categorical_risk(frame, ["sex", "region"]).records()
    assert list(plain.columns) == ["fk", "Fk", "risk", "suda_score", "dis_score"]


def test_json_form_has_the_documented_shape():
    result = categorical_risk(_survey(), ["sex", "region", "age"], weight="w", k=[7])
    out = result.to_dict()
    for key in ("n", "global_risk", "expected_reidentifications", "violations",
                "suda_contributions"):
        assert key in out
    assert list(out["violations"]) == ["2", "3", "5", "7"]
    assert set(out["suda_contributions"]) == {"sex", "region", "age"}
    assert out["n"] == 60


def test_schema_roles_give_the_defaults():
    frame = _survey()
    schema = Schema((Attribute("sex", Role.QUASI, Kind.NOMINAL),
                     Attribute("region", Role.QUASI, Kind.NOMINAL),
                     Attribute("w", Role.WEIGHT, Kind.NUMERIC),
                     Attribute("hh", Role.HOUSEHOLD, Kind.NOMINAL)))
    result = categorical_risk(frame, schema=schema)
    assert (result.keys, result.weight, result.household) == (["sex", "region"], "w", "hh")
    explicit = categorical_risk(frame, ["sex", "region"], weight="w", household="hh")
    np.testing.assert_array_equal(result.household_risk, explicit.household_risk)


@pytest.mark.parametrize(("changes", "message"), [
    ({"weight": "region"}, "weight column 'region': row 1 holds"),
    ({"weight": "sex"}, "`weight` column 'sex' is also a key"),
    ({"household": "region"}, "household column 'region': row"),
    ({"sensitive": "sex"}, "`sensitive` column 'sex' is also a key"),
    ({"keys": ["sex", "nowhere"]}, "unknown column 'nowhere'"),
    ({"keys": None}, "`keys` is needed"),
    ({"k": [0]}, "`k` must be whole numbers"),
    ({"missing": "ignore"}, "unknown `missing` 'ignore'"),
])
def test_bad_requests_are_refused_with_the_reason(changes, message):
    arguments = {"keys": ["sex", "age"], **changes}
    with pytest.raises(InputError, match=message):
        categorical_risk(_survey(), **arguments)


def test_a_weight_below_one_is_refused():
    frame = _survey()
    frame.loc[5, "w"] = 0.5
    with pytest.raises(InputError, match=r"row 6 holds 0\.5;"):
        categorical_risk(frame, ["sex"], weight="w")


@settings(max_examples=60, deadline=None)
@given(key_tables(max_rows=16, max_keys=5, missing=False))
def test_key_contributions_are_percentages_of_the_scores_not_shares(codes):
    """A key's contribution is the percentage of all the SUDA scores carried by the MSUs
    holding it (sdcMicro's attribute_contributions): each out of 100, summing to 100 times
    the score-weighted mean MSU size, so past 100 whenever an MSU holds two keys."""
    result = suda2(codes)
    m = codes.shape[1]
    msus = reference.msus_direct(codes.tolist(), "matches-any")
    weights = [(math.factorial(m - len(s)), s) for found in msus for s in found]
    total = sum(w for w, _ in weights)
    if total == 0:
        return
    for v, share in enumerate(result.contributions.values()):
        assert share == pytest.approx(100 * sum(w for w, s in weights if v in s) / total)
        assert share <= 100 + 1e-9
    mean_size = sum(w * len(s) for w, s in weights) / total
    assert sum(result.contributions.values()) == pytest.approx(100 * mean_size)
