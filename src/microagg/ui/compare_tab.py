"""The server of the comparison tab: methods compared at equal risk (paper 003), as
``microagg compare`` does, in one of two modes: numeric attributes at the rank
(record-linkage) risk (:func:`~microagg.evaluation.compare.compare`), or methods for
categorical keys at a categorical risk, the expected re-identifications, the global risk or
the violations of k (:func:`~microagg.evaluation.key_compare.compare_keys`, ``--target-risk-
kind``). The comparison runs in a worker thread with a progress bar and a button that stops
it before its next evaluation; its report is shown in the page, under a summary of each
method's calibrated value. A method compared at equal rank risk (the winner by default) is
applied as the next step with the value and columns the comparison used
(:func:`~microagg.evaluation.as_step.step_spec`), run as the Steps tab runs a step."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from html import escape
from typing import Any

from shiny import Inputs, reactive, render, ui

from microagg.data.coverage import check_covered
from microagg.data.schema import Role
from microagg.errors import InputError, MicroaggError
from microagg.evaluation.as_step import applicable, step_spec
from microagg.evaluation.comparison import Comparison
from microagg.evaluation.key_compare import DEFAULT_KEY_METHODS
from microagg.options import MatchStatus, RiskKind
from microagg.recipe.model import Step
from microagg.recipe.runner import RecipeRun
from microagg.ui.forms import field_at_fault
from microagg.ui.plots import percent
from microagg.ui.progress import Calibration, Feed, follow
from microagg.ui.session import Cancelled, State, clear_errors, show_error
from microagg.ui.steps_tab import Planned, plan, typed_seed

__all__ = ["applied_step", "apply_choices", "compare_server", "comparison_view", "iframe",
           "shown_risk", "typed_target"]

RANK_FIELDS = {"target_risk": "target_risk", "methods": "methods", "columns": "columns",
               "seeds": "seeds"}
KEY_FIELDS = {"target_risk": "key_target", "risk_kind": "key_target", "k": "key_k",
              "methods": "key_methods", "keys": "key_keys", "recode": "key_recode",
              "widths": "key_widths", "recode_level": "key_recode_level",
              "match": "key_match", "seeds": "seeds"}
"""The field beside which an error about each parameter of the comparison is shown."""


def iframe(html: str, name: str) -> Any:
    """A report page shown inside the app (a data URL: no file is served)."""
    data = base64.b64encode(html.encode("utf-8")).decode("ascii")
    return ui.tags.iframe(src=f"data:text/html;charset=utf-8;base64,{data}", class_="report",
                          id=name)


def typed_target(text: str, kind: str) -> str | float:
    """The target typed in the form, as the library takes it: the global risk is typed as a
    percentage (as the app shows it everywhere) and held as a fraction; ``METHOD=VALUE`` (a
    method's parameter) and the other risks as typed.

    Examples
    --------
    >>> typed_target("2.5", "global-risk"), typed_target("mdav=5", "global-risk")
    (0.025, 'mdav=5')
    >>> typed_target("2.5", "expected-reidentifications")
    '2.5'
    """
    text = text.strip()
    if kind != RiskKind.GLOBAL_RISK.value or "=" in text:
        return text
    try:
        value = float(text)
    except ValueError:
        return text  # the library says what a target may be
    if not 0 <= value <= 100:
        raise InputError(f"the target global risk is a percentage from 0 to 100, got {text}")
    return value / 100


def shown_risk(value: float, kind: RiskKind) -> str:
    """A risk of a comparison as the app shows it: the global risk as a percentage."""
    return percent(value) if kind is RiskKind.GLOBAL_RISK else f"{value:.6g}"


def summary_html(result: Comparison) -> Any:
    """Each method at its calibrated value, as ``microagg compare`` prints it."""
    status = {MatchStatus.MATCHED: "matched", MatchStatus.EXCEEDS: "ranked at its closest "
              "value"}
    rows = "".join(
        f'<tr data-method="{m.method.value}"><td>{m.method.value}</td>'
        f"<td>{escape(m.parameter)} = {m.value:.4g}</td>"
        f"<td>{shown_risk(m.risk, result.risk_kind)}</td>"
        f"<td>{escape(m.utility.summary())}</td>"
        f"<td>{escape(status.get(m.status, 'left out: ' + m.reason))}</td></tr>"
        for m in result.methods)
    ranked = ", ".join(m.value for m in result.ranking) or "(none ranked)"
    return ui.TagList(
        ui.p(f"Target: {result.risk_label} {shown_risk(result.target_value, result.risk_kind)} "
             f"({result.target_source}); ranking: {ranked}.", id="comparison-target"),
        ui.HTML('<table class="steps" id="comparison-summary"><thead><tr><th>method</th>'
                f"<th>calibrated value</th><th>{escape(result.risk_label)}</th><th>utility"
                f"</th><th>outcome</th></tr></thead><tbody>{rows}</tbody></table>"))


def _fault(exc: MicroaggError, fields: dict[str, str], fallback: str) -> str:
    """The field an error of the comparison is shown beside."""
    named = field_at_fault(exc, list(fields))
    if named is not None:
        return fields[named]
    return fields["target_risk"] if "target" in str(exc) else fallback


def apply_choices(result: Comparison) -> dict[str, str]:
    """The methods a comparison offers to apply as a step (:func:`applicable`), the ranked
    first (best first), each labelled with its calibrated value and outcome."""
    by = result.by_method()
    order = [*result.ranking, *(m.method for m in result.methods
                                if m.method not in result.ranking)]
    labels = {}
    for place, method in enumerate(order):
        m = by[method]
        if not applicable(result, method):
            continue
        said = ("best" if place == 0 else f"ranked {place + 1}") if m.ranked else "not ranked"
        labels[method.value] = f"{method.value} ({m.parameter} = {m.value:.4g}; {said})"
    return labels


def applied_step(result: Comparison, method: str, run: RecipeRun | None) -> Step:
    """The step that applies ``method`` as ``result`` calibrated it, as the next step of
    ``run``. Refused after a differentially private step: the comparison measured the
    uploaded records, so its calibrated value is a figure of them, and a step after a DP
    step is published with its parameters beside the release (as post-processing, which
    it would not be).

    Raises
    ------
    MicroaggError
        ``run`` holds a DP step, or :func:`~microagg.evaluation.as_step.step_spec` refuses.
    """
    if run is not None and run.private:
        raise InputError("the comparison measured the uploaded records: after a "
                         "differentially private step, a value calibrated on them would be "
                         "published beside the release; set the step on the Steps tab with "
                         "a value chosen without the data")
    return Step.of(step_spec(result, method))


def compare_server(input: Inputs, state: State,
                   run_step: Callable[[Planned], None]) -> None:
    """Register the outputs and effects of the comparison tab; ``run_step`` runs a step
    applied from the comparison as the Steps tab runs one."""
    compared: reactive.Value[tuple[Comparison, str] | None] = reactive.value(None)
    compared_on: list[Any] = [None]  # the table the shown comparison measured
    stopping = threading.Event()  # set by the Stop button: the comparison running ends
    stopped: reactive.Value[bool] = reactive.value(False)

    @reactive.effect
    def _columns() -> None:
        frame, schema = state.frame(), state.usable_schema()
        if frame is None or schema is None:
            return
        names = [a.name for a in schema]
        ui.update_selectize("compare_columns", choices=[a.name for a in schema
                                                        if a.is_numeric],
                            selected=[a.name for a in schema
                                      if a.is_numeric and a.role is Role.QUASI])
        ui.update_selectize("key_keys", choices=names, selected=list(schema.quasi_identifiers))
        ui.update_selectize("key_recode", choices=names, selected=[])

    @render.ui
    def key_missing_text() -> Any:
        chosen = input.missing_semantics()
        said = "any value" if chosen == "matches-any" else "only another missing value"
        return ui.p(f"A missing key value matches {said}, as set on the Risk tab.",
                    class_="text-muted")

    @ui.bind_task_button(button_id="run_compare")
    @reactive.extended_task
    async def compare_task(run: Callable[[Callable[[str], None]], Comparison], order: list[str],
                           target_first: bool, bar: ui.Progress
                           ) -> tuple[Comparison, str] | None:
        from microagg.evaluation.html import comparison_html

        feed = Feed("comparing")
        stopping.clear()
        check = state.checker(stopping)  # stopped, or the session ended: it ends there
        calibration = Calibration(feed, order, target_first)

        def progress(text: str) -> None:
            check()
            calibration(text)

        def work() -> tuple[Comparison, str] | None:
            try:
                result = run(progress)
            except Cancelled:
                return None
            feed.set(1.0, "writing the report")
            return result, comparison_html(result)

        return await follow(bar, feed, work)

    def rank_run(common: dict[str, Any]) -> tuple[Callable[[Callable[[str], None]], Comparison],
                                                  list[str], str] | None:
        from microagg.evaluation.compare import compare

        methods = list(input.compare_methods())
        if not methods:
            show_error("methods", InputError("`methods` names no method"))
            return None
        target = input.target_risk().strip()
        arguments = {**common, "target_risk": target, "methods": methods,
                     "columns": list(input.compare_columns()) or None}
        return lambda progress: compare(**arguments, progress=progress), methods, target

    def keys_run(common: dict[str, Any]) -> tuple[Callable[[Callable[[str], None]], Comparison],
                                                  list[str], str]:
        from microagg.evaluation.key_compare import compare_keys

        methods = list(input.key_methods())
        target = input.key_target().strip()
        level, k = input.key_recode_level(), input.key_k()
        kind = input.key_risk_kind()
        arguments = {**common, "risk_kind": kind,
                     "keys": list(input.key_keys()) or None,
                     "k": None if k is None else (int(k) if float(k).is_integer() else k),
                     "missing": input.missing_semantics(), "methods": methods or None,
                     "recode": list(input.key_recode()) or None,
                     "widths": input.key_widths().strip() or None,
                     "recode_level": 1 if level is None else (
                         int(level) if float(level).is_integer() else level),
                     "match": input.key_match()}
        order = methods or [m.value for m in DEFAULT_KEY_METHODS]
        return (lambda progress: compare_keys(  # a target out of range: said beside it
            **arguments, target_risk=typed_target(target, kind), progress=progress),
            order, target)

    @reactive.effect
    @reactive.event(input.run_compare)
    def _compare() -> None:
        clear_errors()
        frame, source = state.frame(), state.source()
        if frame is None:
            show_error("compare", InputError("load a table first"))
            return
        seeds = input.compare_seeds()
        if seeds is None or seeds < 2 or not float(seeds).is_integer():
            show_error("seeds", InputError(f"`seeds` must be an integer >= 2, got {seeds}"))
            return
        schema = state.usable_schema()
        if input.compare_mode() == "keys" and not _keys_covered(input, frame, schema):
            return
        compared_on[0] = frame
        common = {"frame": frame, "schema": schema, "seeds": int(seeds),
                  "source": source.name if source else None}
        made = keys_run(common) if input.compare_mode() == "keys" else rank_run(common)
        if made is not None:
            run, order, target = made
            compare_task(run, order, "=" in target, ui.Progress())

    @reactive.effect
    def _compared() -> None:
        try:
            done = compare_task.result()
        except MicroaggError as exc:
            with reactive.isolate():
                keys = input.compare_mode() == "keys"
            show_error(_fault(exc, KEY_FIELDS if keys else RANK_FIELDS, "compare"), exc)
            return
        with reactive.isolate():
            compared.set(done)
            stopped.set(done is None)

    _apply_panel(input, state, compared, compared_on, run_step)

    @reactive.effect
    @reactive.event(input.stop_compare)
    def _stop() -> None:
        stopping.set()  # the comparison ends before its next evaluation

    @render.ui
    def comparison() -> Any:
        return comparison_view(compared(), running=compare_task.status() == "running",
                               stopped=stopped())


def _keys_covered(input: Inputs, frame: Any, schema: Any) -> bool:
    """Whether the declarations of the keys compared cover the table (refused now, beside
    the keys, not at the end of the comparison)."""
    if schema is None:
        return True
    try:
        check_covered(frame, schema, list(input.key_keys()) or list(schema.quasi_identifiers))
    except MicroaggError as exc:
        show_error("key_keys", exc)
        return False
    return True


def _apply_panel(input: Inputs, state: State,
                 compared: reactive.Value[tuple[Comparison, str] | None],
                 compared_on: list[Any], run_step: Callable[[Planned], None]) -> None:
    """Applying the method chosen (the winner by default) as the next step, as the Steps tab
    plans and runs one; the page then shows the Steps tab."""

    @reactive.effect
    @reactive.event(input.apply_compare)
    def _apply() -> None:
        clear_errors()
        done = compared()
        if done is None or state.frame() is not compared_on[0]:
            show_error("apply_compare", InputError("the table changed since the comparison: "
                                                   "compare again"))
            return
        try:
            seed = typed_seed(input, state.run())
            step = applied_step(done[0], input.apply_method(), state.run())
            run_step(plan(state, step, seed, input.missing_semantics()))
        except MicroaggError as exc:
            show_error("apply_compare", exc)
            return
        ui.update_navset("tabs", selected="steps")


def comparison_view(done: tuple[Comparison, str] | None, *, running: bool,
                    stopped: bool) -> Any:
    """The comparison tab's result: while a comparison runs, the button that stops it; then
    its summary and report, or that it was stopped."""
    if running:
        return ui.div(ui.p("Comparing: the progress bar says how far (bottom right)."),
                      ui.input_action_button("stop_compare", "Stop the comparison"))
    if done is None and stopped:
        return ui.p("The comparison was stopped; nothing was compared.", id="compare-stopped")
    if done is None:
        return ui.p("Choose what to compare, a target risk and the methods, then compare: "
                    "each method's parameter is calibrated to the target and the methods "
                    "are ranked by the utility they keep.")
    result, html = done
    return ui.TagList(summary_html(result), _apply_row(result),
                      iframe(html, "comparison-report"))


def _apply_row(result: Comparison) -> Any:
    """The method to apply as the next step (the winner first), and the button."""
    choices = apply_choices(result)
    if not choices:
        return ui.p("No method compared here is one step: set it on the Steps tab.",
                    class_="text-muted", id="apply-none")
    return ui.div(
        ui.input_select("apply_method", "Apply as the next step", choices=choices),
        ui.input_action_button("apply_compare", "Apply this method"),
        ui.div(id="err-apply_compare", class_="field-error-slot"),
        ui.p("The step protects the compared columns (or keys) with the value above (the "
             "Steps tab's seed); after other steps it applies to the table they left.",
             class_="text-muted"), id="apply-row", class_="mb-2")
