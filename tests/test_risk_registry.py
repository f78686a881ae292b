"""A risk measure declared in the registry (:mod:`microagg.risk.registry`) and nowhere else
reaches every place that shows the measures: ``categorical_risk``'s records and JSON form, the
``risk`` command's options, lines and ``--records-out``, the recipe's risk summary, the Dask
path (computed, or listed as skipped), and the web app's risk-tab panels. The measure below
is registered here, through the registry's API only, as a new measure's module would."""

from __future__ import annotations

import json

import dask
import numpy as np
import pandas as pd
import pytest

from microagg import categorical_risk
from microagg.at_scale.dataset import open_dataset
from microagg.at_scale.risk import risk_at_scale
from microagg.options import RiskKind
from microagg.recipe.risk import measure_risk
from microagg.risk.registry import (
    MEASURES,
    Figure,
    Measured,
    MeasureInput,
    Need,
    Parameter,
    RiskMeasure,
    register,
    unregister,
)

KEYS = ["sex", "region", "age"]


def below(given: MeasureInput, threshold: float) -> Measured:
    """The records whose population frequency F_k is below ``threshold``."""
    flags = (np.asarray(given.Fk) < threshold).astype(np.int64)
    count = int((flags * given.multiplicity()).sum())
    return Measured({"below_threshold": flags},
                    {"records_below": count, "share_below": count / given.multiplicity().sum()})


def sensitive_values(given: MeasureInput) -> Measured:
    """The distinct values of the sensitive attribute (a measure that needs it)."""
    return Measured({}, {"values": int(np.unique(given.sensitive).size)})


TOY = RiskMeasure(
    "population_below", "records of small population classes",
    compute=f"{__name__}:below",
    parameters=(Parameter("threshold", 10.0, "Count the records whose F_k is below this."),),
    columns=("below_threshold",),
    figures=(Figure("records_below", "records below the threshold", ","),
             Figure("share_below", "their share", "percent")),
    at_scale=True)
NEEDY = RiskMeasure("sensitive_values", "values of the sensitive attribute",
                    compute=f"{__name__}:sensitive_values",
                    needs=frozenset({Need.KEYS, Need.SENSITIVE}),
                    figures=(Figure("values", "distinct values", "d"),))


def _rebuild_the_command():
    """Drop the program's built ``risk`` command, so that it is built again from the
    registry (a process builds it once, after its measures' modules are imported)."""
    from microagg.cli.program import _click_command

    _click_command().commands.pop("risk", None)


@pytest.fixture
def toy():
    register(TOY)
    register(NEEDY)
    _rebuild_the_command()
    yield TOY
    unregister(TOY.name)
    unregister(NEEDY.name)
    _rebuild_the_command()


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(11)
    n = 120
    return pd.DataFrame({"sex": rng.choice(["f", "m"], n),
                         "region": rng.choice(["north", "south", "east"], n),
                         "age": rng.choice([20, 30, 40, 50], n),
                         "w": rng.uniform(1, 20, n).round(2),
                         "illness": rng.choice(["flu", "cold", "none"], n)})


def test_the_library_measures_it(toy, frame):
    plain = categorical_risk(frame, KEYS, weight="w").to_dict()
    result = categorical_risk(frame, KEYS, weight="w", parameters={"threshold": 25.0})
    expected = int((result.Fk < 25.0).sum())
    report = result.to_dict()
    assert 0 < expected < len(frame)
    assert report[TOY.name] == {"records_below": expected,
                                "share_below": expected / len(frame)}
    assert report["sensitive_values"] is None  # no sensitive attribute: not measured
    assert list(report)[:len(plain)] == list(plain)  # the first release's keys come first
    assert result.records()["below_threshold"].tolist() == (result.Fk < 25.0).astype(
        int).tolist()
    # a parameter not given takes its declared default
    assert categorical_risk(frame, KEYS, weight="w").to_dict()[TOY.name]["records_below"] == \
        int((result.Fk < 10.0).sum())
    needy = categorical_risk(frame, KEYS, sensitive="illness").to_dict()["sensitive_values"]
    assert needy == {"values": frame["illness"].nunique()}


def test_without_it_nothing_changes(frame):
    report = categorical_risk(frame, KEYS).to_dict()
    assert TOY.name not in report and TOY.name not in MEASURES
    assert list(report)[-1] == "l_diversity"


def test_the_command_offers_prints_and_writes_it(toy, frame, run_cli, tmp_path):
    source = tmp_path / "survey.csv"
    frame.to_csv(source, index=False)
    helped = run_cli("risk", "--help")
    assert "--threshold" in helped.stdout and "F_k is below this" in helped.stdout
    records = tmp_path / "records.csv"
    printed = run_cli("risk", source, "--keys", ",".join(KEYS), "--weight", "w",
                      "--threshold", "25", "--records-out", records)
    assert printed.code == 0, printed.stderr
    expected = categorical_risk(frame, KEYS, weight="w", parameters={"threshold": 25.0})
    count = expected.to_dict()[TOY.name]["records_below"]
    line = next(x for x in printed.stdout.splitlines() if TOY.title in x)
    assert f"records below the threshold {count:,}" in line
    assert pd.read_csv(records)["below_threshold"].sum() == count
    as_json = json.loads(run_cli("risk", source, "--keys", ",".join(KEYS), "--weight", "w",
                                 "--threshold", "25", "--json").stdout)
    assert as_json[TOY.name]["records_below"] == count
    wrong = run_cli("risk", source, "--keys", ",".join(KEYS), "--threshold", "x")
    assert wrong.code == 2 and len(wrong.stderr.strip().splitlines()) == 1


def test_the_recipe_summary_holds_its_figures(toy, frame):
    summary = measure_risk(frame, KEYS, weight="w").to_dict()
    expected = categorical_risk(frame, KEYS, weight="w").to_dict()[TOY.name]
    assert summary[TOY.name] == expected
    assert "sensitive_values" not in summary  # its needs are not met by a recipe


class _SyncClient:
    """A stand-in for a ``distributed.Client`` that computes in this thread."""

    @staticmethod
    def compute(tasks, sync):
        return list(dask.compute(*tasks, scheduler="sync"))


def test_the_dask_path_computes_or_skips_it(toy, frame, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, start in enumerate(range(0, len(frame), 40)):
        frame.iloc[start:start + 40].to_parquet(folder / f"part{i}.parquet")
    result = risk_at_scale(_SyncClient(), open_dataset(folder), KEYS, weight="w",
                           parameters={"threshold": 25.0}).to_dict()
    local = categorical_risk(frame, KEYS, weight="w", parameters={"threshold": 25.0})
    assert result[TOY.name]["records_below"] == local.to_dict()[TOY.name]["records_below"]
    assert result["skipped"] == ["suda", "l_diversity", "household_risk", "sensitive_values"]


def test_the_app_has_its_panel(toy):
    from microagg.ui.layout import page
    from microagg.ui.risk_measures import field_id, measure_panels

    values = [panel.get_value() for panel in measure_panels()]
    assert values == [f"measure_{TOY.name}", "measure_sensitive_values"]
    html = str(page())
    assert f'id="{field_id(TOY, "threshold")}"' in html
    assert f'id="measure_{TOY.name}"' in html


def test_the_comparison_targets_are_the_registry_s():
    declared = [kind for m in MEASURES.values() for kind, _ in m.targets]
    assert declared == [k.value for k in RiskKind if not k.on_numeric]
    # a comparison at an attack's risk holds an attack the registry declares
    from microagg.risk.registry import ATTACKS

    attacked = [k.value for k in RiskKind if k.by_attack]
    assert attacked and set(attacked) <= set(ATTACKS)
    with pytest.raises(ValueError, match="first release"):
        RiskMeasure("x", "x", compute=f"{__name__}:below", targets=(("x", "x"),))


def test_a_name_is_declared_once():
    with pytest.raises(ValueError, match="registered already"):
        register(RiskMeasure("suda", "again", compute=f"{__name__}:below"))
    with pytest.raises(ValueError, match="declared already"):
        register(RiskMeasure("other", "other", compute=f"{__name__}:below",
                             columns=("fk",)))
    with pytest.raises(ValueError, match="declared already"):
        register(RiskMeasure("other", "other", compute=f"{__name__}:below",
                             parameters=(Parameter("keys", 1, "clash"),)))
    assert "other" not in MEASURES



def test_a_module_named_in_the_registry_declares_its_measure(tmp_path, monkeypatch, frame):
    """The two files of a new measure: its module (holding its function and declaration)
    and its name in ``MODULES``."""
    import microagg.risk.registry as registry

    (tmp_path / "risk_toy_module.py").write_text(
        "import numpy as np\n"
        "from microagg.risk.registry import Figure, Measured, RiskMeasure, register\n\n"
        "def classes(given):\n"
        "    return Measured({}, {'classes': int(np.unique(given.codes, axis=0).shape[0])})\n\n"
        "register(RiskMeasure('toy_classes', 'classes of the keys',\n"
        "                     compute='risk_toy_module:classes',\n"
        "                     figures=(Figure('classes', 'classes', 'd'),)))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "MODULES", ("risk_toy_module",))
    try:
        report = categorical_risk(frame, KEYS).to_dict()
    finally:
        MEASURES.pop("toy_classes", None)
    assert report["toy_classes"] == {"classes": len(frame[KEYS].drop_duplicates())}


def test_the_names_a_measure_may_not_take_are_the_risk_commands_own_options() -> None:
    """A measure's parameter becomes an option of ``microagg risk``: the names reserved are
    exactly the command's own, so that none collides with one of them."""
    import inspect

    from microagg.cli import risk as risk_command
    from microagg.risk import registry

    declared = {name for name, p in inspect.signature(risk_command.risk).parameters.items()
                if p.kind is not inspect.Parameter.VAR_KEYWORD}
    measures = {p.name for m in registry.MEASURES.values() for p in m.parameters}
    assert measures and declared - measures == set(registry._COMMAND_OPTIONS)
