"""The comparison form takes the global risk as a percentage, as the app shows it
everywhere, and the library holds it as a fraction."""

import pandas as pd
import pytest

from microagg.errors import InputError
from microagg.evaluation.key_compare import compare_keys
from microagg.options import RiskKind
from microagg.risk.categorical import categorical_risk
from microagg.ui.compare_tab import shown_risk, summary_html, typed_target
from microagg.ui.plots import percent


@pytest.mark.parametrize("typed", ["0", "0.5", "12.5", "100"])
def test_a_global_risk_typed_in_percent_is_shown_as_typed(typed):
    held = typed_target(typed, RiskKind.GLOBAL_RISK.value)
    assert held == pytest.approx(float(typed) / 100)
    assert shown_risk(held, RiskKind.GLOBAL_RISK) == percent(float(typed) / 100)


def test_other_targets_and_a_methods_value_are_taken_as_typed():
    assert typed_target("mdav=5", RiskKind.GLOBAL_RISK.value) == "mdav=5"
    for kind in (RiskKind.EXPECTED_REIDENTIFICATIONS, RiskKind.VIOLATIONS):
        assert typed_target(" 3 ", kind.value) == "3"
        assert shown_risk(3.0, kind) == "3"


@pytest.mark.parametrize("typed", ["-1", "100.5"])
def test_a_global_risk_outside_0_to_100_percent_is_refused_naming_the_target(typed):
    with pytest.raises(InputError, match="target global risk is a percentage"):
        typed_target(typed, RiskKind.GLOBAL_RISK.value)


def test_the_comparison_holds_the_fraction_and_its_summary_shows_the_percentage():
    frame = pd.DataFrame({"sex": list("mmmmmfffffmf"), "region": list("aaabcaabbdcd")})
    original = categorical_risk(frame, ["sex", "region"]).global_risk
    typed = f"{100 * original / 2:g}"  # half the original risk, in percent
    result = compare_keys(frame, target_risk=typed_target(typed, "global-risk"),
                          risk_kind="global-risk", keys=["sex", "region"],
                          methods=["local-suppression"], seeds=2)
    assert result.target_value == pytest.approx(float(typed) / 100)
    text = str(summary_html(result))
    assert f"{percent(result.target_value)} (given)" in text
    for m in result.methods:
        assert percent(m.risk) in text
