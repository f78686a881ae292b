"""The attacks on a release (singling out, linkability, inference, closest records): the
compiled searches against direct computations, the risks of releases whose risk is known,
and the rates' intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microagg.errors import InputError
from microagg.risk._neighbours import brute_neighbours, nearest_neighbours
from microagg.risk.attack_data import attack_tables
from microagg.risk.attack_rates import attack_risk, wilson
from microagg.risk.attacks import AttackSettings, attack_risks
from microagg.risk.inference import inference
from microagg.risk.linkability import linkability
from microagg.risk.singling_out import Indexed, Predicates, count_matches, singling_out


def _people(n: int, seed: int) -> pd.DataFrame:
    draw = np.random.default_rng(seed)
    return pd.DataFrame({"age": draw.integers(18, 90, n),
                         "income": draw.normal(3e4, 1e4, n).round(-2),
                         "height": draw.normal(170, 10, n).round(1),
                         "city": draw.choice(list("abcdefgh"), n),
                         "job": draw.choice(["x", "y", "z", None], n)})


def _gower(a: pd.DataFrame, b: pd.DataFrame, spans: dict[str, float]) -> np.ndarray:
    """Every distance between rows of ``a`` and of ``b``, written out column by column."""
    total = np.zeros((len(a), len(b)))
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if c in spans:
            total += np.abs(x[:, None] - y[None, :]) / spans[c]
        else:
            total += np.array([[str(u) != str(v) for v in y] for u in x], dtype=float)
    return total


def test_the_tree_finds_the_neighbours_a_scan_finds() -> None:
    draw = np.random.default_rng(3)
    candidates = np.column_stack([draw.integers(0, 4, 700) / 4, draw.random(700),
                                  draw.integers(0, 5, 700)])
    queries = np.vstack([candidates[:50], np.column_stack(
        [draw.integers(0, 4, 80) / 4, draw.random(80), draw.integers(0, 6, 80)])])
    categorical = np.array([False, False, True])
    for k in (1, 4):
        rows, distances = nearest_neighbours(candidates, queries, categorical, k)
        expected_rows, expected = brute_neighbours(candidates, queries, categorical, k)
        assert np.array_equal(rows, expected_rows)
        assert np.array_equal(distances, expected)
    # the brute reference itself: the least by (distance, row)
    full = np.abs(candidates[None, :, :2] - queries[:, None, :2]).sum(axis=2) + (
        candidates[None, :, 2] != queries[:, None, 2])
    assert np.array_equal(rows[:, 0], np.argmin(full, axis=1))


def test_linkability_and_inference_count_what_a_direct_search_counts() -> None:
    original, release = _people(300, 1), _people(300, 2)
    release["age"] = original["age"]  # some signal to link by
    tables = attack_tables(original, release, None)
    spans = {}
    for c in ("age", "income", "height"):
        joined = pd.concat([original[c], release[c]])
        spans[c] = float(joined.max() - joined.min())
    split = (["age", "city"], ["height", "job"])
    nearest = [np.argmin(_gower(original[s], release[s], spans), axis=1) for s in split]
    linked = linkability(tables, split, n_attacks=len(original), rng=0)
    assert linked.attack.successes == int((nearest[0] == nearest[1]).sum())
    known = ["age", "income", "height", "job"]
    guess = release["city"].to_numpy()[
        np.argmin(_gower(original[known], release[known], spans), axis=1)]
    guessed = inference(tables, "city", n_attacks=len(original), rng=0)
    assert guessed.attack.successes == int((guess == original["city"].to_numpy()).sum())


def _brute_univariate(original: pd.DataFrame, release: pd.DataFrame) -> int:
    """How many distinct univariate predicates isolating one record of the release isolate
    one of the original, written out with pandas."""
    original, release = original.drop_duplicates(), release.drop_duplicates()
    terms = {}
    for c in release.columns:
        values = release[c]
        if values.isna().sum() == 1:
            terms[(c, "missing")] = lambda t, c=c: t[c].isna()
        if pd.api.types.is_numeric_dtype(values):
            low, high = values.min(), values.max()
            terms[(c, "<=", low)] = lambda t, c=c, v=low: t[c] <= v
            terms[(c, ">=", high)] = lambda t, c=c, v=high: t[c] >= v
        counts = values.dropna().astype(str).value_counts()
        for v in counts.index[counts == 1]:
            terms[(c, "==", v)] = lambda t, c=c, v=v: t[c].astype(str).where(t[c].notna()) == v
    isolating = [term for term in terms.values() if term(release).sum() == 1]
    return sum(int(term(original).sum() == 1) for term in isolating)


def test_univariate_singling_out_counts_what_pandas_counts() -> None:
    original = _people(400, 4)
    release = original.sample(frac=1, random_state=1).reset_index(drop=True)
    release.loc[::3, "income"] = release.loc[::3, "income"] + 100
    tables = attack_tables(original, release, None)
    found = singling_out(tables, mode="univariate", n_attacks=3000, rng=0)
    assert found.attack.successes == _brute_univariate(original, release)


def test_predicates_match_what_pandas_matches() -> None:
    data = np.array([[1.0, 0.0], [2.0, 1.0], [np.nan, 1.0], [2.0, np.nan]])
    predicates = Predicates(np.array([[0, -1], [0, 1], [0, 1], [1, -1], [0, -1]]),
                            np.array([[4, 0], [0, 0], [1, 0], [6, 0], [7, 0]]),
                            np.array([[2.0, 0], [2.0, 1.0], [1.0, 1.0], [0, 0], [0, 0]]))
    frame = pd.DataFrame(data, columns=["a", "b"])
    expected = [(frame.a >= 2).sum(), ((frame.a == 2) & (frame.b == 1)).sum(),
                ((frame.a.notna() & (frame.a != 1)) & (frame.b == 1)).sum(),
                frame.b.isna().sum(), frame.a.notna().sum()]
    assert count_matches(Indexed(data), predicates, cap=10).tolist() == expected
    assert count_matches(Indexed(data), predicates, cap=2).tolist() == [
        min(e, 2) for e in expected]
    # random conjunctions of every operator on data with missing values and ties
    draw = np.random.default_rng(5)
    data = draw.integers(0, 6, (300, 3)).astype(float)
    data[draw.random(data.shape) < 0.1] = np.nan
    columns = np.argsort(draw.random((400, 3)), axis=1)[:, :2]
    ops = draw.integers(0, 8, columns.shape)
    bounds = draw.integers(0, 6, columns.shape).astype(float)
    frame = pd.DataFrame(data)
    tests = {0: lambda x, v: x == v, 1: lambda x, v: x.notna() & (x != v),
             2: lambda x, v: x > v, 3: lambda x, v: x < v, 4: lambda x, v: x >= v,
             5: lambda x, v: x <= v, 6: lambda x, v: x.isna(), 7: lambda x, v: x.notna()}
    expected = [int((tests[ops[q, 0]](frame[columns[q, 0]], bounds[q, 0])
                     & tests[ops[q, 1]](frame[columns[q, 1]], bounds[q, 1])).sum())
                for q in range(len(columns))]
    found = count_matches(Indexed(data), Predicates(columns, ops, bounds), cap=1000)
    assert found.tolist() == expected


def test_a_copy_is_at_risk_and_an_independent_table_is_not() -> None:
    original, control, fresh = _people(1500, 5), _people(1500, 6), _people(1500, 7)
    asked = ["singling-out", "linkability", "inference", "closest-records"]
    settings = AttackSettings(n_attacks=300, secrets=["income", "city"],
                              linkability_columns=(["age", "income"], ["height", "city"]))
    copied = attack_risks(original, original, control, asked, settings=settings, rng=1)
    assert copied.linkability is not None and copied.linkability.risk > 0.5
    assert copied.inference is not None and copied.inference["income"].risk > 0.8
    assert copied.singling_out is not None
    assert copied.singling_out["multivariate"].risk > 0.8
    assert copied.closest_records is not None
    assert copied.closest_records.share_closer_to_original == 1.0
    independent = attack_risks(original, fresh, control, asked, settings=settings, rng=1)
    assert independent.linkability is not None and independent.inference is not None
    assert independent.singling_out is not None and independent.closest_records is not None
    for risk in [independent.linkability, *independent.inference.values(),
                 *independent.singling_out.values()]:
        assert risk.ci[0] < 0.05 and risk.risk < 0.1
    share = independent.closest_records.share_closer_to_original
    assert abs(share - independent.closest_records.expected_share) < 0.05
    found = copied.to_dict()
    assert set(found["singling_out"]) == {"univariate", "multivariate"}
    assert set(found["inference"]) == {"income", "city"}
    assert len(found["linkability"]["ci"]) == 2


def test_the_intervals_cover_the_rate() -> None:
    draw = np.random.default_rng(8)
    for p in (0.02, 0.3, 0.7):
        hits = draw.binomial(400, p, 2000)
        rates = [wilson(400, int(h)) for h in hits]
        covered = np.mean([abs(r.value - p) <= r.error for r in rates])
        assert 0.93 <= covered <= 0.975
    # the risk's interval over attack and control covers the true excess
    truth = (0.5 - 0.2) / (1 - 0.2)
    risks = [attack_risk(wilson(500, int(a)), wilson(500, 0), wilson(500, int(c)))
             for a, c in zip(draw.binomial(500, 0.5, 1000), draw.binomial(500, 0.2, 1000),
                             strict=True)]
    assert 0.92 <= np.mean([r.ci[0] <= truth <= r.ci[1] for r in risks]) <= 0.99


def test_bad_requests_are_refused() -> None:
    original, control = _people(50, 9), _people(50, 10)
    with pytest.raises(InputError, match="unknown secret"):
        attack_risks(original, original, control, ["inference"],
                     settings=AttackSettings(secrets=["salary"]))
    with pytest.raises(InputError, match="control has columns"):
        attack_risks(original, original, control.assign(extra=1))
    with pytest.raises(InputError, match="linkability columns"):
        attack_risks(original, original, control, ["linkability"],
                     settings=AttackSettings(linkability_columns=(["age"], [])))
    with pytest.raises(InputError, match="unknown attack"):
        attack_risks(original, original, control, ["membership"])
    with pytest.raises(InputError, match="numeric"):
        attack_risks(original, original.assign(age=original.age.astype(str)), control)


def test_evaluate_adds_the_attacks_to_its_json_and_words(run_cli, tmp_path) -> None:
    """``evaluate --attacks … --json``: the library's figures under ``attacks``, the same
    with the same seed; the words name each risk; bad requests are one line, exit 2."""
    import json

    original, control = _people(600, 11), _people(300, 12)
    paths = [tmp_path / f"{name}.csv" for name in ("original", "release", "control")]
    original.to_csv(paths[0], index=False)
    original.sample(frac=1, random_state=2).to_csv(paths[1], index=False)
    control.to_csv(paths[2], index=False)
    asked = ("evaluate", *paths[:2], "--columns", "age", "--control", paths[2], "--attacks",
             "singling-out,linkability,inference", "--secret", "city,income",
             "--linkability-columns", "age,income|height,city", "--attacks-n", "200",
             "--seed", "3")
    result = run_cli(*asked, "--json")
    assert result.code == 0, result.stderr
    said = json.loads(result.stdout)["attacks"]
    assert set(said) == {"singling_out", "linkability", "inference"}
    assert set(said["singling_out"]) == {"univariate", "multivariate"}
    assert set(said["inference"]) == {"city", "income"}
    for found in [said["linkability"], *said["inference"].values(),
                  *said["singling_out"].values()]:
        assert {"risk", "ci", "attack_rate", "baseline_rate", "control_rate",
                "n_attacks"} <= set(found)
        low, high = found["ci"]
        assert low <= found["risk"] <= high and found["n_attacks"] == 200
    read = [pd.read_csv(p) for p in paths]
    settings = AttackSettings(n_attacks=200, secrets=["city", "income"],
                              linkability_columns=(["age", "income"], ["height", "city"]))
    direct = attack_risks(read[0], read[1], read[2],
                          ["singling-out", "linkability", "inference"], settings=settings,
                          rng=3)
    assert said == json.loads(json.dumps(direct.to_dict()))
    assert said["linkability"]["risk"] > 0.5
    words = run_cli(*asked)
    assert words.code == 0 and "linkability" in words.stdout and "city: risk" in words.stdout
    # each risk read in words, its figure the JSON's
    linked = (f"{100 * said['linkability']['risk']:.3g} % of the people in the release that "
              "the same attack fails to link")
    assert ("holds age, income of a person from one source and height, city of the same "
            "person") in words.stdout and linked in words.stdout
    guessed = f"{100 * said['inference']['city']['risk']:.3g} % of the people"
    assert ("guesses the person's city (a number is right within 5 % of the guess) right "
            f"for {guessed}") in words.stdout
    assert words.stdout.count("in words") == 5
    for bad, named in ((("--secret", "salary"), "salary"), (("--attacks", "membership"),
                                                             "--attacks")):
        wrong = run_cli("evaluate", *paths[:2], "--control", paths[2], "--attacks",
                        "inference", *bad)
        assert wrong.code == 2 and len(wrong.stderr.strip().splitlines()) == 1
        assert named in wrong.stderr
    extra = tmp_path / "extra.csv"
    control.assign(extra=1).to_csv(extra, index=False)
    wrong = run_cli("evaluate", *paths[:2], "--control", extra, "--attacks", "inference")
    assert wrong.code == 2 and "--control" in wrong.stderr
    alone = run_cli("evaluate", *paths[:2], "--attacks", "inference")
    assert alone.code == 2 and "--control" in alone.stderr


def test_a_control_of_the_same_people_leaves_no_risk_whatever_its_size() -> None:
    # the originals are the control's people four times over: every attack succeeds on both
    # alike, so nothing is leaked, though the control is a quarter of the originals' size
    control = _people(40, 8)
    original = pd.concat([control] * 4, ignore_index=True)
    tables = attack_tables(original, original, control)
    found = [linkability(tables, (["age", "city"], ["income", "height"]), n_attacks=500,
                         rng=0), inference(tables, "income", n_attacks=500, rng=0)]
    for risk in found:
        assert risk.control is not None
        assert risk.attack.attacks == risk.control.attacks == 40
        assert risk.attack.value == pytest.approx(risk.control.value)
        assert risk.risk == 0.0


def test_a_number_is_guessed_right_whatever_its_sign() -> None:
    from microagg.risk.inference import right_guesses

    draw = np.random.default_rng(9)
    guesses, secrets = draw.normal(0, 10, 2000), draw.normal(0, 10, 2000)
    right = right_guesses(guesses, secrets, True, 0.05)
    assert np.array_equal(right, right_guesses(-guesses, -secrets, True, 0.05))
    assert np.array_equal(right, np.abs(guesses - secrets) <= 0.05 * np.abs(guesses) + 1e-12)
    assert right.mean() < 0.05  # independent draws: few guesses land within 5 %


def test_singling_out_is_a_rate_over_the_predicates_written() -> None:
    # a copy of 150 distinct records offers far fewer multivariate predicates than asked:
    # those it offers single out nearly everyone, and the predicates never written do not
    # dilute the rate
    draw = np.random.default_rng(10)
    original = pd.DataFrame(draw.normal(size=(150, 3)), columns=list("abc"))
    control = pd.DataFrame(draw.normal(size=(150, 3)), columns=list("abc"))
    tables = attack_tables(original, original, control)
    found = singling_out(tables, n_attacks=5000, max_attempts=20_000, rng=0)
    assert 0 < found.attack.attacks <= 150 and found.attack.attacks == found.baseline.attacks
    assert found.control is not None and found.control.attacks == found.attack.attacks
    assert found.attack.successes == found.attack.attacks and found.risk > 0.8


def test_a_small_control_is_scaled_to_the_originals_without_a_risk_of_its_own() -> None:
    # a release drawn independently of the originals leaks nothing: a control a quarter of
    # the originals' size, scaled to their size, must find that as a control of their size
    # does (a scaling fitted on one subsample size alone made a risk of about 0.19)
    draw = np.random.default_rng(0)
    risks: dict[int, list[float]] = {400: [], 100: []}
    for rep in range(6):
        frames = [pd.DataFrame(draw.normal(size=(n, 4)).round(2), columns=list("abcd"))
                  for n in (400, 400, 400, 100)]
        for control in frames[2:]:
            found = singling_out(attack_tables(frames[0], frames[1], control), n_attacks=300,
                                 max_attempts=20_000, rng=rep)
            risks[len(control)].append(found.risk)
    assert np.mean(risks[100]) < 0.1 and abs(np.mean(risks[100]) - np.mean(risks[400])) < 0.08


def test_an_attack_with_nothing_to_try_says_so_rather_than_zero(run_cli, tmp_path) -> None:
    """A release whose records are every pair of 5 ages and 4 cities offers no condition on
    one column that isolates one record (each value, the least and the largest too, is held
    by several): the attack makes no try, and its reading says so instead of "0 % single
    out"."""
    import json

    original, control = _people(400, 21)[["age", "city"]], _people(200, 22)[["age", "city"]]
    release = pd.DataFrame([(age, city) for age in (20, 30, 40, 50, 60) for city in "abcd"]
                           * 20, columns=["age", "city"])  # as many rows as the original
    paths = [tmp_path / f"{name}.csv" for name in ("original", "release", "control")]
    for frame, path in zip((original, release, control), paths, strict=True):
        frame.to_csv(path, index=False)
    asked = ("evaluate", *paths[:2], "--columns", "age", "--control", paths[2], "--attacks",
             "singling-out", "--attacks-n", "50", "--seed", "1")
    said = json.loads(run_cli(*asked, "--json").stdout)["attacks"]["singling_out"]
    assert said["univariate"]["n_attacks"] == 0 and said["multivariate"]["n_attacks"] > 0
    words = run_cli(*asked).stdout
    assert ("in words (univariate): no condition on 1 column met by exactly one record of the "
            "release could be written") in words
    assert "0 % single out" not in words and "single out exactly one person" in words
