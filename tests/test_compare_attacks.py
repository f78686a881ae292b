"""Methods compared at an equal attack-based risk (evaluation/attack_compare.py): the risk
held is the one ``evaluate --attacks`` measures on the same tables, the value kept is the
least protective that meets the ceiling, methods are ranked by EMD, the control records are
held out of every release, the report reads the target in words, and the command refuses
what does not belong."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from microagg.core.aggregate import replace_by_means
from microagg.errors import InputError
from microagg.evaluation.attack_compare import CONTROL_SHARE, compare_attacks
from microagg.options import CompareMethod, MatchStatus, RiskKind
from microagg.partition.mdav import mdav
from microagg.risk.attacks import AttackSettings, attack_risks

COLUMNS = list("abcd")


def _table(n: int, seed: int) -> pd.DataFrame:
    """Four continuous columns, two of them correlated: every record is unique, so a copy
    of the table links nearly all of its people."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 1))
    values = np.hstack([base + 0.5 * rng.normal(size=(n, 2)), rng.normal(size=(n, 2))])
    return pd.DataFrame(values, columns=COLUMNS)


def _mdav_release(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    X = frame[COLUMNS].to_numpy(float)
    z = (X - X.mean(axis=0)) / X.std(axis=0)
    return pd.DataFrame(replace_by_means(X, mdav(z, k)), columns=COLUMNS)


def _linkability(frame: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame) -> float:
    """The linkability risk as ``evaluate --attacks linkability`` measures it, every record
    attacked (so that no draw of targets differs)."""
    settings = AttackSettings(n_attacks=10_000, linkability_columns=(["a", "b"], ["c", "d"]))
    found = attack_risks(frame, release, control, ["linkability"], settings=settings, rng=3)
    assert found.linkability is not None
    return found.linkability.risk


def test_mdav_is_kept_at_the_least_protective_k_that_meets_the_ceiling():
    # as many control records as originals: every record of both is attacked, so that no
    # draw of targets differs between the comparison and evaluate
    frame, control = _table(200, 0), _table(200, 1)
    target = 0.01  # k = 2 to 4 link more
    result = compare_attacks(frame, target_risk=target, risk_kind="linkability",
                             methods=["mdav"], control=control, attacks_n=10_000,
                             linkability_columns=(["a", "b"], ["c", "d"]), seeds=2)
    m = result.by_method()[CompareMethod.MDAV]
    k = int(m.value)
    ceiling = target * (1 + 0.0025)
    # the risk held is the one evaluate measures on the release made with that k
    measured = _linkability(frame, _mdav_release(frame, k), control)
    assert m.risk == pytest.approx(measured, abs=1e-12)
    assert measured <= ceiling
    # and k is the least protective that meets it: the copy and k - 1 do not
    assert _linkability(frame, frame, control) > 0.5
    assert m.status is MatchStatus.MATCHED and k > 2
    assert _linkability(frame, _mdav_release(frame, k - 1), control) > ceiling
    assert result.data == {**result.data, "rows": 200, "control_rows": 200}
    assert result.risk_kind is RiskKind.LINKABILITY and result.match.value == "at-most"


def test_ranked_methods_meet_the_target_and_are_ranked_by_emd():
    frame = _table(300, 2)
    result = compare_attacks(frame, target_risk=0.3, risk_kind="linkability",
                             methods=["mdav", "correlated-noise", "rank-swap"], seeds=3)
    assert result.data["control_rows"] == round(CONTROL_SHARE * 300)
    assert result.data["rows"] + result.data["control_rows"] == 300
    ranked = [result.by_method()[m] for m in result.ranking]
    assert ranked, result.methods
    for m in ranked:
        assert m.risk_ci[1] <= 0.3 * 1.0025 + 1e-12
    losses = [m.utility.loss for m in ranked]
    assert losses == sorted(losses)
    noise = result.by_method()[CompareMethod.CORRELATED_NOISE]
    if noise.status is MatchStatus.MATCHED:  # less noise than the value kept is riskier
        riskier = [e for e in noise.evaluations if e.value < noise.value]
        assert riskier and all(e.ci[1] > 0.3 * 1.0025 or e.mean > 0.3 * 0.9 for e in riskier)


@pytest.mark.parametrize("kind", ["singling-out", "inference"])
def test_the_other_attacks_hold_their_ceiling(kind):
    frame = _table(200, 4)
    # a numpy integer is a count, and one secret may be named by itself
    result = compare_attacks(frame, target_risk=0.2, risk_kind=kind, methods=["mdav"],
                             attacks_n=np.int64(200), seeds=1,
                             secrets="a" if kind == "inference" else None)
    m = result.by_method()[CompareMethod.MDAV]
    assert m.ranked and m.risk <= 0.2 * 1.0025
    reading = result.risk_definition["reading"]
    assert kind in reading
    if kind == "inference":  # the attack's rule: within 5 % of the guess
        assert "within 5 % of the guess" in reading
        assert result.risk_definition["attack"].startswith("inference of a from")
    else:  # a multivariate predicate names 3 of the 4 columns, exactly
        assert "conditions on 3 of a, b, c, d at once" in reading


def test_bad_requests_are_refused():
    frame = _table(100, 5)
    with pytest.raises(InputError, match=r"lies in \[0, 1\]"):
        compare_attacks(frame, target_risk=2, risk_kind="linkability")
    with pytest.raises(InputError, match="not rank"):
        compare_attacks(frame, target_risk=0.1, risk_kind="rank")
    with pytest.raises(InputError, match="too few"):
        compare_attacks(frame.head(5), target_risk=0.1, risk_kind="linkability")
    with pytest.raises(InputError, match="lacks the column"):
        compare_attacks(frame, target_risk=0.1, control=frame[["a", "b"]])
    with pytest.raises(InputError, match="linkability columns"):
        compare_attacks(frame, target_risk=0.1, linkability_columns=(["a"], ["zz"]))


def test_the_command_reads_the_target_in_words(run_cli, tmp_path):
    data = tmp_path / "table.csv"
    _table(200, 6).to_csv(data, index=False)
    report = tmp_path / "report.html"
    run = run_cli(*["compare", str(data), "--target-risk-kind", "linkability",
                   "--target-risk", "0.25", "--methods", "mdav,correlated-noise",
                   "--linkability-columns", "a,b|c,d", "--seeds", "2", "--report",
                   str(report), "--json"])
    assert run.code == 0, run.stderr
    found = json.loads(run.stdout)
    assert found["risk_kind"] == "linkability" and found["match"] == "at-most"
    assert found["data"]["control_rows"] == 40
    page = report.read_text(encoding="utf-8")
    assert "an attacker who holds a, b of a person" in page
    assert ("links the two for at most 25 % of the people in the release that the same "
            "attack fails to link among people who are not in it") in page
    assert "40 released and 40 control records per release" in page
    assert "160 records released and 40 control records held out of each" in page
    text = run_cli(*["compare", str(data), "--target-risk-kind", "linkability",
                    "--target-risk", "0.25", "--methods", "mdav", "--seeds", "1"])
    assert text.code == 0 and "linkability risk, at most the target" in text.stdout
    # a ceiling is one-sided: the tolerance is added to it, the figure shows no band
    target_line = next(line for line in text.stdout.splitlines() if line.startswith("target"))
    assert "tolerance + 0.000625" in target_line and "±" not in target_line
    assert "with the target ceiling and the matched value" in page
    assert "target band" not in page


@pytest.mark.parametrize(("args", "fragment"), [
    (["--target-risk", "1", "--attacks-n", "50"], "--attacks-n applies to the attack risks"),
    (["--target-risk-kind", "violations", "--target-risk", "0", "--secret", "a"],
     "--secret applies to the attack risks"),
    (["--target-risk-kind", "linkability", "--target-risk", "0.1", "--risk-scale", "unit"],
     "--risk-scale applies to the rank risk"),
    (["--target-risk-kind", "inference", "--target-risk", "0.1", "--keys", "a,b",
      "--weight", "c"], "--weight applies to the categorical risks"),
    (["--target-risk-kind", "singling-out"], "--target-risk is needed"),
    (["--target-risk-kind", "linkability", "--target-risk", "1.5"], "lies in [0, 1]"),
    (["--target-risk-kind", "inference", "--target-risk", "0.1", "--linkability-columns",
      "a|b"], "--linkability-columns applies to the linkability risk, not to inference"),
    (["--target-risk-kind", "singling-out", "--target-risk", "0.1", "--secret", "a"],
     "--secret applies to the inference risk, not to singling-out"),
    (["--target-risk-kind", "inference", "--target-risk", "0.1", "--columns", "a"],
     "inference needs at least two columns"),
    (["--target-risk-kind", "linkability", "--target-risk", "0.1", "--columns", "a"],
     "linkability needs at least two columns"),
])
def test_the_command_refuses_options_of_another_risk(run_cli, tmp_path, args, fragment):
    data = tmp_path / "table.csv"
    _table(60, 7).to_csv(data, index=False)
    run = run_cli("compare", str(data), *args)
    assert run.code == 2 and fragment in run.stderr and run.stderr.count("\n") <= 1


@pytest.mark.parametrize(("edit", "args", "fragment"), [
    ("missing", [], "the compared methods take complete records"),
    ("control missing", ["--control", "control.csv"],
     "the control table: column 'a' has a missing"),
    ("control text", ["--control", "control.csv"], "the control table: column 'a' is numeric"),
    ("control empty", ["--control", "control.csv"], "the control table: "),
    ("", ["--linkability-columns", "a,b|b,a"], "the same columns"),
    ("", ["--columns", "a,b,c", "--linkability-columns", "a,b|d"], "not among them: d"),
    ("", ["--target-risk-kind", "singling-out", "--report", "table.csv"], "an .html file"),
])
def test_the_command_refuses_bad_tables_in_one_line(run_cli, tmp_path, edit, args, fragment):
    frame, control = _table(60, 8), _table(20, 9)
    if edit == "missing":
        frame.loc[3, "a"] = np.nan
    elif edit == "control missing":
        control.loc[3, "a"] = np.nan
    elif edit == "control text":
        control["a"] = control["a"].astype(str) + "x"
    elif edit == "control empty":
        control = control.head(0)
    frame.to_csv(tmp_path / "table.csv", index=False)
    control.to_csv(tmp_path / "control.csv", index=False)
    kind = [] if "--target-risk-kind" in args else ["--target-risk-kind", "linkability"]
    report = [] if "--report" in args else ["--report", str(tmp_path / "out.html")]
    before = (tmp_path / "table.csv").read_bytes()
    args = [str(tmp_path / a) if a.endswith(".csv") else a for a in args]
    run = run_cli("compare", str(tmp_path / "table.csv"), *kind, "--target-risk", "0.2",
                  "--methods", "mdav", "--seeds", "1", *args, *report)
    assert run.code == 2 and fragment in run.stderr and run.stderr.count("\n") <= 1
    assert "drop-incomplete" not in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "out.html").exists()
    assert (tmp_path / "table.csv").read_bytes() == before


def test_a_huge_number_of_attacks_is_bounded_by_what_the_release_offers():
    # 40 released records and 3 of 4 columns make at most 160 multivariate predicates:
    # asking a million neither hangs nor dilutes the rate with predicates never written
    frame = _table(50, 10)
    found = [compare_attacks(frame, target_risk=0.3, risk_kind="singling-out",
                             methods=["mdav"], attacks_n=n, seeds=1) for n in (10**6, 160)]
    huge, bounded = (r.by_method()[CompareMethod.MDAV] for r in found)
    assert [(e.value, e.mean) for e in huge.evaluations] == [
        (e.value, e.mean) for e in bounded.evaluations]
    assert max(e.mean for e in huge.evaluations) > 0.3
    assert "up to 1,000,000 predicates" in found[0].risk_definition["records attacked"]


def test_no_release_draws_the_noise_the_split_or_the_attack_draws():
    # a release's run r draws from default_rng((seed, r)); the records held out and the
    # records attacked must not follow the noise of any run (seeds are doubled up to 4x)
    from microagg.evaluation.attack_compare import ATTACK_STREAM, SPLIT_STREAM, stream

    for seed in (0, 3):
        runs = {tuple(np.random.default_rng((seed, r)).random(4)) for r in range(200)}
        drawn = {tuple(stream(seed, key).random(4)) for key in (SPLIT_STREAM, ATTACK_STREAM)}
        assert len(drawn) == 2 and not drawn & runs


def test_the_inference_held_is_the_worst_secret_evaluate_measures():
    # as many controls as originals and every record attacked: the draw of targets cannot
    # differ, so the comparison's risk is evaluate's worst secret on the same release
    frame, control = _table(150, 11), _table(150, 12)
    result = compare_attacks(frame, target_risk=0.1, risk_kind="inference", methods=["mdav"],
                             control=control, attacks_n=10_000, seeds=1)
    m = result.by_method()[CompareMethod.MDAV]
    settings = AttackSettings(n_attacks=10_000)

    def worst(k: int) -> float:
        found = attack_risks(frame, _mdav_release(frame, k), control, ["inference"],
                             settings=settings, rng=5)
        assert found.inference is not None
        return max(r.risk for r in found.inference.values())

    k = int(m.value)
    assert m.status is MatchStatus.MATCHED and m.risk == pytest.approx(worst(k), abs=1e-12)
    assert worst(k) <= 0.1 * 1.0025 < worst(k - 1)


def test_no_control_record_shapes_a_release():
    # the DP candidate reads its bounds off the data: off the released records only, so a
    # far outlier among the controls moves the attack's risk, never a release's utility
    frame, control = _table(100, 13), _table(30, 14)
    far = control.copy()
    far.loc[0, "a"] = 50.0
    losses = []
    for held in (control, far):
        result = compare_attacks(frame, target_risk=0.2, risk_kind="linkability",
                                 methods=["dp-laplace"], control=held, seeds=1)
        m = result.by_method()[CompareMethod.DP_LAPLACE]
        losses.append({e.value: e.loss for e in m.evaluations})
    common = losses[0].keys() & losses[1].keys()
    assert common and all(losses[0][v] == losses[1][v] for v in common)


# -- methods for categorical keys at an attack's risk (evaluation/key_attacks.py) ------------

KEYS = ["sex", "region", "age", "job"]


def _keys_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"sex": rng.choice(["f", "m"], n),
                         "region": rng.choice(["n", "s", "e", "w", "c"], n),
                         "age": rng.choice([f"{a}-{a + 9}" for a in range(20, 80, 10)], n),
                         "job": rng.choice(list("pqrstuvw"), n)})


def test_local_suppression_is_held_at_the_singling_out_of_the_values_it_releases():
    """The risk held at the k kept is that of Anonymeter's multivariate singling out on the
    values local suppression releases with that k (not their codes), drawn from the same
    stream; the raw keys single out most people."""
    import math

    from microagg.evaluation.attack_compare import ATTACK_STREAM, PREDICATE_TRIES, stream
    from microagg.evaluation.key_compare import compare_keys
    from microagg.release.methods import LocalSuppression
    from microagg.risk.attack_data import attack_tables
    from microagg.risk.singling_out import singling_out

    frame, control = _keys_table(300, 4), _keys_table(300, 5)

    def measured(k: int) -> float:
        released = (frame if k == 1 else
                    LocalSuppression(k=k).release(frame, keys=KEYS).frame[KEYS])
        wanted = min(500, len(frame) * math.comb(len(KEYS), 3))
        return singling_out(attack_tables(frame, released, control), mode="multivariate",
                            n_attacks=wanted, n_cols=3,
                            max_attempts=max(10_000, PREDICATE_TRIES * wanted),
                            rng=stream(0, ATTACK_STREAM)).risk

    target = 0.05
    result = compare_keys(frame, target_risk=target, risk_kind="singling-out", keys=KEYS,
                          methods=["local-suppression"], control=control, attacks_n=500,
                          seeds=2)
    m = result.by_method()[CompareMethod.LOCAL_SUPPRESSION]
    assert m.status is MatchStatus.MATCHED and int(m.value) > 2
    assert m.risk == pytest.approx(measured(int(m.value)), abs=1e-12)
    assert m.risk <= target * 1.0025 < measured(2) < measured(1)
    assert result.risk_kind is RiskKind.SINGLING_OUT and result.data["control_rows"] == 300
    assert "at most 5 % single out exactly one person" in result.risk_definition["reading"]
    assert result.utility_definition["label"] == "information loss"


@pytest.mark.parametrize("kind", ["singling-out", "inference"])
def test_methods_for_keys_hold_the_other_attacks_and_draw_their_control_records(kind):
    from microagg.evaluation.key_compare import compare_keys

    frame = _keys_table(500, 6)
    result = compare_keys(frame, target_risk=0.1, risk_kind=kind, keys=KEYS,
                          methods=["local-suppression", "invariant-pram", "mdav"], seeds=2,
                          attacks_n=300)
    assert result.data["rows"] == 400 and result.data["control_rows"] == 100  # 20 % held
    matched = [m for m in result.methods if m.status is MatchStatus.MATCHED]
    assert matched and all(m.risk <= 0.1 * 1.0025 for m in matched)
    assert [r.value for r in result.ranking] == sorted(
        [m.method.value for m in matched],
        key=lambda name: result.by_method()[CompareMethod(name)].utility.information_loss)
    with pytest.raises(InputError, match=r"lies in \[0, 1\]"):
        compare_keys(frame, target_risk=2, risk_kind=kind, keys=KEYS)
    with pytest.raises(InputError, match="`k` applies to the categorical risks"):
        compare_keys(frame, target_risk=0.1, risk_kind=kind, keys=KEYS, k=3)


def test_the_command_compares_methods_for_keys_at_an_attack_risk(run_cli, tmp_path):
    frame = _keys_table(400, 7)
    frame.to_csv(tmp_path / "keys.csv", index=False)
    asked = ("compare", tmp_path / "keys.csv", "--target-risk", "0.05",
             "--target-risk-kind", "singling-out", "--keys", ",".join(KEYS), "--methods",
             "local-suppression,mdav", "--seeds", "2", "--attacks-n", "300")
    done = run_cli(*asked, "--report", tmp_path / "c.html", "--json")
    assert done.code == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["risk_definition"]["label"] == "singling-out risk"
    assert "attacked as categories" in said["risk_definition"]["keys"]
    html = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "at a singling-out risk of 0.05, an attacker who reads the release" in html
    for extra, named in ((("--k", "3"), "--k applies to the categorical risks"),
                         (("--columns", "sex"), "--columns names numeric attributes"),
                         (("--match", "within"), "--match applies")):
        wrong = run_cli(*asked, *extra)
        assert wrong.code == 2 and named in wrong.stderr, wrong.stderr
    wrong = run_cli("compare", tmp_path / "keys.csv", "--target-risk", "3",
                    "--target-risk-kind", "violations", "--keys", "sex,job", "--control",
                    tmp_path / "keys.csv")
    assert wrong.code == 2 and "--control applies to the attack risks" in wrong.stderr


def test_a_recoded_key_is_attacked_at_the_recoded_level():
    """Ages released as decades: the attack reads the original and control ages as the
    same decades (an attacker who knows the published recoding), so its risk is that of
    singling out on tables recoded by hand, and not the 0 of decades no original holds."""
    from microagg.evaluation.attack_compare import ATTACK_STREAM, stream
    from microagg.evaluation.key_attacks import KeyAttackMeasure
    from microagg.evaluation.key_measures import KeyCoding, released_codes
    from microagg.risk.attack_data import attack_tables
    from microagg.risk.singling_out import singling_out

    rng = np.random.default_rng(9)

    def people(n: int) -> pd.DataFrame:
        return pd.DataFrame({"sex": rng.choice(["f", "m"], n),
                             "region": rng.choice(list("nsewc"), n),
                             "age": rng.integers(18, 90, n).astype(str)})

    frame, control = people(300), people(300)

    def decades(table: pd.DataFrame) -> pd.DataFrame:
        return table.assign(age=[f"{int(a) // 10 * 10}s" for a in table["age"]])

    keys = ["sex", "region", "age"]
    coding = KeyCoding.of(frame, keys)
    codes = released_codes(coding, {"age": decades(frame)["age"]})
    settings = AttackSettings(n_attacks=500, n_cols=2)
    measure = KeyAttackMeasure.of(RiskKind.SINGLING_OUT, coding, control, settings, seed=0,
                                  drawn=False)
    by_hand = singling_out(attack_tables(decades(frame), decades(frame), decades(control)),
                           mode="multivariate", n_attacks=500, n_cols=2,
                           max_attempts=10_000, rng=stream(0, ATTACK_STREAM)).risk
    assert measure(codes) == pytest.approx(by_hand, abs=1e-12) and by_hand > 0.1
    # a key left raw keeps its values, and a suppressed cell is missing, not a value
    assert measure(coding.codes) > measure(codes)


def test_the_analysts_regression_judges_each_ranked_release(run_cli, tmp_path):
    """With a model, each ranked method's release at its value is judged by the model's CI
    overlap (statsmodels' OLS, by analysis.regression_utility) on the records released, as
    computed by hand on MDAV's release; the methods are ranked by it too."""
    from microagg.evaluation.analysis import regression_utility

    frame, control = _table(200, 0), _table(200, 1)
    rng = np.random.default_rng(3)
    frame = frame.assign(y=frame["a"] * 2 + frame["c"] + rng.normal(size=200),
                         group=rng.choice(["u", "v"], 200))  # columns no method masks
    control = control.assign(y=0.0, group="u")
    formula = "y ~ a + c + group"
    result = compare_attacks(frame, target_risk=0.05, risk_kind="linkability",
                             methods=["mdav", "correlated-noise"], columns=COLUMNS,
                             control=control[COLUMNS], attacks_n=10_000,
                             linkability_columns=(["a", "b"], ["c", "d"]), seeds=2,
                             regression=formula)
    analysis = result.data["analysis"]
    k = int(result.by_method()[CompareMethod.MDAV].value)
    by_hand = regression_utility(frame, frame.assign(**_mdav_release(frame, k)), formula)
    assert analysis["ci_overlap"]["mdav"] == pytest.approx(by_hand.mean_ci_overlap, abs=1e-12)
    assert 0 < by_hand.mean_ci_overlap < 1
    ranked = [m.value for m in result.ranking]
    assert sorted(analysis["ranking"]) == sorted(ranked)
    assert [analysis["ci_overlap"][m] for m in analysis["ranking"]] == sorted(
        analysis["ci_overlap"].values(), reverse=True)
    frame.to_csv(tmp_path / "t.csv", index=False)
    asked = ("compare", tmp_path / "t.csv", "--target-risk-kind", "linkability",
             "--target-risk", "0.05", "--columns", ",".join(COLUMNS), "--methods", "mdav",
             "--seeds", "1", "--regression", formula)
    done = run_cli(*asked, "--report", tmp_path / "r.html")
    assert done.code == 0, done.stderr
    assert f"by the regression {formula} (CI overlap, 1 = the same): mdav " in done.stdout
    assert "The analyst's regression at the matched" in (tmp_path / "r.html").read_text()
    wrong = run_cli("compare", tmp_path / "t.csv", "--target-risk", "1", "--regression",
                    formula)
    assert wrong.code == 2 and "--regression applies to the attack risks" in wrong.stderr
