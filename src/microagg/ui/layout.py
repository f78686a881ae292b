"""The web app's page: five tabs, in the order of the work (data, risk, steps, comparison,
download). The fields of a step are not here: they are written from the method objects
(:mod:`microagg.ui.forms`)."""

from __future__ import annotations

from typing import Any, cast

from shiny import ui

from microagg.evaluation.key_compare import DEFAULT_KEY_METHODS
from microagg.options import CompareMethod, LDiversityKind, TargetMatch
from microagg.recipe.families import ADAPTERS
from microagg.release.methods import family
from microagg.risk.registry import MEASURES
from microagg.ui.attack_panel import attack_card
from microagg.ui.limits import DEFAULT, Limits
from microagg.ui.resume import recipe_card
from microagg.ui.risk_measures import measure_panels

__all__ = ["page"]

STYLE = """
html { overflow-y: scroll; }  /* a scroll bar that comes and goes would redraw every plot */
.field-error { color: #b02a37; font-size: 0.9em; margin-top: 0.2em; }
.guarantee { background: #eef6ee; border-left: 4px solid #4a4; padding: 0.5em 0.8em; }
.context { background: #fff4e5; border-left: 4px solid #e90; padding: 0.5em 0.8em; }
table.steps td, table.steps th, table.columns td, table.columns th {
  padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; vertical-align: middle; }
table.columns .form-group, table.columns .shiny-input-container { margin: 0; width: 11em; }
iframe.report { width: 100%; height: 75vh; border: 1px solid #ccc; }
div.records { overflow-x: auto; font-size: 0.9em; }
#steps_table { display: block; overflow-x: auto; }  /* a wide table of steps scrolls */
"""

FORMATS = {"csv": "CSV", "parquet": "Parquet", "sav": "SPSS .sav", "dta": "Stata .dta",
           "xlsx": "Excel .xlsx"}


def _slot(name: str) -> ui.Tag:
    """Where the one-line error about field ``name`` is shown."""
    return ui.div(id=f"err-{name}", class_="field-error-slot")


def _data(limits: Limits) -> Any:
    return ui.nav_panel(
        "1 · Data",
        ui.layout_columns(
            ui.card(
                ui.card_header("Load a table"),
                ui.input_file("upload", "CSV, Parquet, SPSS (.sav), Stata (.dta) or Excel "
                              "(.xlsx)", accept=[".csv", ".parquet", ".pq", ".sav", ".dta",
                                                 ".xlsx", ".sas7bdat"]),
                ui.p(limits.said(), class_="text-muted", id="upload-limits"),
                ui.layout_columns(
                    ui.input_text("upload_na", "Missing-value tokens besides empty, NA, "
                                  "NaN, NULL (CSV)", value="", placeholder="?, -99"),
                    ui.input_text("upload_separator", "Separator (CSV; empty: read off the "
                                  "header)", value="", placeholder=", ; | tab"),
                    ui.input_select("upload_decimal", "Decimal mark (CSV)",
                                    choices={".": "point: 1234.5", ",": "comma: 1234,5"}),
                    ui.div(ui.input_checkbox("upload_header", "First row names the columns",
                                             value=True),
                           ui.input_action_button("upload_again", "Read again",
                                                  class_="btn-sm")),
                    col_widths=(4, 3, 2, 3)),
                _slot("upload"),
                ui.output_ui("loaded"),
            ),
            ui.card(
                ui.card_header("A column's domain, missing value and taxonomy"),
                ui.input_select("detail_column", "Column", choices=[]),
                ui.output_ui("detail_now"),
                ui.input_text("detail_domain", "Domain (numeric: low, high; categories: a, "
                              "b, c in order)", value=""),
                _slot("domain"),
                ui.input_text("detail_missing", "DP releases: the value a missing cell "
                              "stands for (schema's missing:; which cells are missing is set "
                              "at the upload)", value=""),
                _slot("missing"),
                ui.input_file("detail_taxonomy", "Taxonomy (ARX hierarchy: leaf;parent;…;"
                              "root per line)", accept=[".csv", ".txt", ".yaml", ".yml"]),
                _slot("taxonomy"),
                ui.input_action_button("detail_apply", "Apply to the column"),
                _slot("detail"),
                ui.output_ui("declared"),
            ),
            col_widths=(8, 4),
        ),
        recipe_card(),
        ui.card(ui.card_header("Columns: roles read off the data, to check and edit"),
                ui.output_ui("columns"), _slot("roles")),
        value="data",
    )


def _risk() -> Any:
    kinds = {LDiversityKind.DISTINCT.value: "distinct: the number of values",
             LDiversityKind.ENTROPY.value: "entropy: exp of their entropy",
             LDiversityKind.RECURSIVE.value: "recursive (c, l)"}
    return ui.nav_panel(
        "2 · Risk",
        ui.layout_columns(
            ui.input_select("missing_semantics", "A missing key value matches",
                            choices={"matches-any": "any value (sdcMicro's default)",
                                     "category": "only another missing value"}),
            ui.output_ui("keys_text"), col_widths=(4, 8)),
        ui.output_ui("risk_boxes"),
        ui.navset_card_underline(
            ui.nav_panel(
                "Record risk",
                ui.output_plot("risk_plot", height="300px"),
                ui.h6("The records at highest risk (current table)"),
                ui.output_ui("top_risk"), value="records"),
            ui.nav_panel(
                "SUDA2: special uniques",
                ui.layout_columns(
                    ui.div(ui.input_numeric("dis_fraction", "Sampling fraction of the DIS "
                                            "score (the sample's share of the population)",
                                            value=0.01, step=0.01),
                           _slot("dis_fraction")),
                    ui.output_ui("suda_summary"), col_widths=(3, 9)),
                ui.layout_columns(
                    ui.output_plot("suda_plot", height="300px"),
                    ui.output_ui("suda_contributions"), col_widths=(8, 4)),
                ui.h6("The records with the highest DIS scores"),
                ui.output_ui("top_dis"), value="suda"),
            ui.nav_panel(
                "l-diversity",
                ui.layout_columns(
                    ui.input_select("sensitive", "Sensitive attribute (not a key)",
                                    choices=[]),
                    ui.input_select("l_kind", "l-diversity", choices=kinds),
                    ui.panel_conditional(
                        "input.l_kind === 'recursive'",
                        ui.input_numeric("l_c", "c of recursive (c, l)-diversity", value=2,
                                         step=0.5),
                        _slot("l_c")),
                    col_widths=(4, 4, 4)),
                ui.output_ui("diversity_boxes"),
                ui.output_plot("diversity_plot", height="260px"),
                ui.h6("The records whose class is least diverse (largest classes first)"),
                ui.output_ui("least_diverse"), value="ldiv"),
            *measure_panels(),
            id="risk_view"),
        value="risk",
    )


def _steps() -> Any:
    families = {f.value: f"{f.value}: " + ", ".join(m.name for m in family(f))
                for f in ADAPTERS}
    return ui.nav_panel(
        "3 · Steps",
        ui.layout_sidebar(
            ui.sidebar(
                ui.input_select("family", "Family", choices=families),
                ui.input_select("method", "Method", choices=[]),
                ui.output_ui("form"),
                ui.input_numeric("seed", "Seed of the recipe (empty: fresh randomness; a "
                                 "seeded DP step is NOT differentially private)",
                                 value=cast(float, None)),
                _slot("seed"),
                ui.output_ui("dp_preview"),
                ui.input_task_button("run_step", "Run this step", label_busy="Running…"),
                _slot("run"),
                width="26em", open="always",
            ),
            ui.card(ui.card_header("Steps run: risk and utility after each"),
                    ui.output_ui("steps_table"),
                    ui.div(ui.input_action_button("undo", "Undo the last step"),
                           _slot("undo"))),
            ui.layout_columns(
                ui.card(ui.card_header("Before and after: a column's distribution"),
                        ui.input_select("plot_column", "Column", choices=[]),
                        ui.output_plot("distribution_plot", height="300px")),
                ui.card(ui.card_header("Records by re-identification risk, before and after"),
                        ui.output_plot("risk_steps_plot", height="300px")),
                col_widths=(6, 6)),
            ui.card(ui.card_header("Change of the correlations (after minus before)"),
                    ui.output_plot("correlation_plot", height="380px")),
            attack_card(),
        ),
        value="steps",
    )


def _rank_inputs() -> Any:
    """The comparison of numeric attributes at the rank (record-linkage) risk of 003."""
    return ui.panel_conditional(
        "input.compare_mode === 'rank'",
        ui.input_text("target_risk", "Target risk (a number, or METHOD=VALUE: the risk that "
                      "method has)", value="mdav=5"),
        _slot("target_risk"),
        ui.input_checkbox_group("compare_methods", "Methods",
                                choices=[m.value for m in CompareMethod if not m.keys_only],
                                selected=["mdav", "correlated-noise", "multiplicative-noise",
                                          "rank-swap"]),
        _slot("methods"),
        ui.input_selectize("compare_columns", "Columns (numeric; default the numeric "
                           "quasi-identifiers)", choices=[], multiple=True),
        _slot("columns"))


def _keys_inputs() -> Any:
    """The comparison of methods for categorical keys at a categorical risk."""
    kinds = {kind: label for measure in MEASURES.values() for kind, label in measure.targets}
    return ui.panel_conditional(
        "input.compare_mode === 'keys'",
        ui.input_select("key_risk_kind", "Risk of the released keys", choices=kinds),
        ui.input_text("key_target", "Target risk (a number: the global risk in %; or "
                      "METHOD=VALUE: the risk that method has)", value="local-suppression=5"),
        _slot("key_target"),
        ui.panel_conditional("input.key_risk_kind === 'violations'",
                             ui.input_numeric("key_k", "k of the violations (default 5)",
                                              value=cast(float, None), step=1),
                             _slot("key_k")),
        ui.input_checkbox_group("key_methods", "Methods (none checked: every method the "
                                "data allow)", choices=[m.value for m in DEFAULT_KEY_METHODS]),
        _slot("key_methods"),
        ui.input_selectize("key_keys", "Key variables (default the quasi-identifiers)",
                           choices=[], multiple=True),
        _slot("key_keys"),
        ui.input_selectize("key_recode", "Keys the recodings recode (default: those with a "
                           "taxonomy or a width)", choices=[], multiple=True),
        _slot("key_recode"),
        ui.input_text("key_widths", "Interval width of numeric keys at level 1", value="",
                      placeholder="age=5"),
        _slot("key_widths"),
        ui.input_numeric("key_recode_level", "Level of recode-then-suppress", value=1, step=1),
        _slot("key_recode_level"),
        ui.input_select("key_match", "A method matches at its least protective value with "
                        "a risk",
                        choices={TargetMatch.AT_MOST.value: "at most the target",
                                 TargetMatch.WITHIN.value: "within the tolerance of the "
                                 "target, above or below"}),
        _slot("key_match"),
        ui.output_ui("key_missing_text"))


def _compare() -> Any:
    return ui.nav_panel(
        "4 · Compare",
        ui.layout_sidebar(
            ui.sidebar(
                ui.input_radio_buttons(
                    "compare_mode", "Compare",
                    choices={"rank": "numeric attributes at the record-linkage (rank) risk",
                             "keys": "categorical keys at a categorical risk"}),
                _rank_inputs(),
                _keys_inputs(),
                ui.input_numeric("compare_seeds", "Seeds per evaluation", value=3, min=2),
                _slot("seeds"),
                ui.input_task_button("run_compare", "Compare at equal risk",
                                     label_busy="Comparing…"),
                _slot("compare"),
                width="24em", open="always",
            ),
            ui.output_ui("comparison"),
        ),
        value="compare",
    )


def _download() -> Any:
    return ui.nav_panel(
        "5 · Download",
        ui.layout_columns(
            ui.input_select("release_format", "Format of the release", choices=FORMATS),
            ui.input_select("report_kind", "HTML report",
                            choices={"internal": "internal: every figure, for the owner",
                                     "external": "external: to share"}),
            col_widths=(4, 4)),
        _slot("download"),
        ui.output_ui("downloads"),
        ui.output_ui("report_view"),
        value="download",
    )


def page(limits: Limits = DEFAULT) -> Any:
    """The whole page (the upload's ``limits`` stated on the data tab)."""
    return ui.page_navbar(
        _data(limits), _risk(), _steps(), _compare(), _download(),
        title="microagg", id="tabs",
        header=ui.TagList(ui.tags.style(STYLE),  # no icon: the browser asks for none (404)
                          ui.head_content(ui.tags.link(rel="icon", href="data:,"))),
        window_title="microagg: protect a table")
