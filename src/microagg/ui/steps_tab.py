"""The server of the steps tab: the form of the chosen method, the DP preview, running a
step (in a worker thread, with a busy button and a progress bar; the first step also reads
the upload again and measures its risk there), undo, and the risk and utility after each
step in a table and in figures."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from shiny import Inputs, reactive, render, ui

from microagg.data.coverage import check_covered
from microagg.errors import InputError, MicroaggError
from microagg.recipe import preview as previews
from microagg.recipe.composition import dp_context
from microagg.recipe.families import OptionKind, adapter, step_seed
from microagg.recipe.model import Step
from microagg.recipe.runner import RecipeRun
from microagg.release.methods import Family, family, lookup
from microagg.release.params import method_fields
from microagg.release.reports.sidecar import ReleaseRecord
from microagg.release.reports.swap_report import swap_lines
from microagg.ui.forms import (
    field_at_fault,
    field_id,
    method_form,
    read_form,
    step_field_names,
)
from microagg.ui.plots import correlation_change, distribution, percent, risk_histogram
from microagg.ui.progress import Feed, follow
from microagg.ui.risk_tab import _count as expected_count
from microagg.ui.session import State, clear_errors, show_error
from microagg.ui.state import begin_run

__all__ = ["Planned", "plan", "plan_step", "steps_html", "steps_server", "typed_seed"]


def _number(value: Any, digits: int = 4) -> str:
    """A figure of the steps table: ``digits`` significant digits, a large one in full with
    thousands separators (never ``2e+04``)."""
    if value is None:
        return "—"
    if isinstance(value, int) or abs(value) >= 10**digits:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def _risk_cells(risk: Any) -> list[str]:
    return [percent(risk.global_risk), expected_count(risk.expected_reidentifications),
            f"{risk.violations[2]:,}", f"{risk.violations[5]:,}",
            f"{risk.unique_percent:.2f}"]


def steps_html(run: RecipeRun) -> Any:
    """The input and every step: parameters, records, risk after it, information loss
    against its input, time; under a step, its DP context and warnings."""
    head = ["step", "method and parameters", "records", "global risk",
            "expected re-identifications", "unique records", "records in classes < 5",
            "unique %", "SSE/SST % vs its input", "seconds"]
    rows = [ui.tags.tr(ui.tags.td("input"), ui.tags.td("—"), ui.tags.td(f"{run.risk_before.n:,}"),
                       *(ui.tags.td(c) for c in _risk_cells(run.risk_before)),
                       ui.tags.td("—"), ui.tags.td("—"))]
    for index, result in enumerate(run.results):
        loss = (result.record.utility.sse_percent
                if isinstance(result.record, ReleaseRecord)
                and result.record.utility is not None else None)
        rows.append(ui.tags.tr(
            ui.tags.td(str(index + 1)), ui.tags.td(result.step.describe()),
            ui.tags.td(f"{len(result.frame):,}"),
            *(ui.tags.td(c) for c in _risk_cells(result.risk)),
            ui.tags.td(_number(loss)), ui.tags.td(f"{result.seconds:.1f}"),
            id=f"step-{index + 1}"))
        notes = ([result.context.statement] if result.context else []) + list(result.warnings)
        if isinstance(result.record, ReleaseRecord):
            notes.insert(0, result.record.guarantee.statement)
            if "households_swapped" in result.record.report:  # a targeted record swap
                notes[1:1] = swap_lines(result.record.report)
        for note in notes:
            rows.append(ui.tags.tr(ui.tags.td(""), ui.tags.td(note, colspan=len(head) - 1,
                                                             class_="context")))
    return ui.TagList(
        ui.p(run.guarantee, class_="guarantee", id="recipe-guarantee"),
        ui.tags.table(ui.tags.thead(ui.tags.tr(*(ui.tags.th(h) for h in head))),
                      ui.tags.tbody(*rows), class_="steps", id="steps"))


def _preview_html(preview: Any) -> Any:
    report = preview.report
    items = [("guarantee", report.guarantee)]
    items += [(f"ε for {p['part']}", f"{p['epsilon']:.6g}") for p in report.epsilon_split]
    items += [(f"noise on {name}", f"sd {level['standard_deviation']:.4g} = "
               f"{level['fraction_of_width']:.1%} of the domain width")
              for name, level in report.noise.items() if "fraction_of_width" in level]
    items += [("warning", w) for w in (*preview.warnings, *report.warnings)]
    items += [("note", n) for n in preview.notes]
    body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in items)
    return ui.HTML(f'<table class="steps" id="preview-ledger">{body}</table>')


Chosen = tuple[Family, Any]
"""A family and the class of one of its methods."""


def _chosen(input: Inputs) -> Chosen | None:
    try:
        of = Family(input.family())
        return of, lookup(of, input.method())
    except (InputError, ValueError):
        return None


def _names(cls: Any, of: Family) -> list[str]:
    """The fields of a method's form: its parameters, its family's options and the step's
    own fields."""
    return ([f.name for f in method_fields(cls)] + [o.name for o in adapter(of).options]
            + step_field_names(adapter(of)))


def _fault(input: Inputs, exc: MicroaggError, fallback: str) -> str:
    """The field beside which an error about the chosen method is shown."""
    picked = _chosen(input)
    where = field_at_fault(exc, _names(picked[1], picked[0])) if picked else None
    return where or fallback


@dataclass(frozen=True)
class Planned:
    """A step checked on the event loop and run in a worker: the run it extends (``None``:
    the first step, whose run a worker begins from the upload) and the session's
    generation then (:meth:`State.fresh`: a result arriving after a new upload, undo or
    other step is dropped)."""

    current: RecipeRun | None
    step: Step
    begin: Callable[[], RecipeRun]
    generation: int = 0

    def run(self) -> RecipeRun:
        return self.current if self.current is not None else self.begin()


def steps_server(input: Inputs, state: State) -> Callable[[Planned], None]:
    """Register the outputs and effects of the steps tab: the method's form, running and
    undoing a step, the DP preview, the table of steps and the figures. Returns what runs a
    planned step as the Run button does (for a step another tab adds); it raises
    :class:`~microagg.errors.InputError` while a step runs."""
    preview: reactive.Value[previews.Preview | None] = reactive.value(None)
    _form_panel(input, state, preview)
    run = _run_panel(input, state, preview)
    _preview_panel(input, state, preview)
    _figures_panel(input, state)
    return run


def _form_panel(input: Inputs, state: State,
                preview: reactive.Value[previews.Preview | None]) -> None:
    """The methods of the family chosen and the form of the method chosen."""

    @reactive.effect
    @reactive.event(input.family)
    def _methods() -> None:
        of = Family(input.family())
        ui.update_select("method", choices=[m.name for m in family(of)])
        preview.set(None)

    def columns_now() -> list[str]:
        frame = state.current()
        return [] if frame is None else [str(c) for c in frame.columns]

    @render.ui
    def form() -> Any:
        picked = _chosen(input)
        if picked is None:
            return None
        of, cls = picked
        with reactive.isolate():  # a step run keeps the form as it was filled
            columns = columns_now()
        # the method named on the form: a field filled before its form arrives is lost
        return ui.div(method_form(cls, adapter(of), columns), data_method=cls.name)

    @reactive.effect
    def _column_choices() -> None:
        columns = columns_now()
        with reactive.isolate():
            picked = _chosen(input)
        if picked is None:
            return
        for option in adapter(picked[0]).options:
            if option.kind is OptionKind.COLUMNS:
                ui.update_selectize(field_id(option.name), choices=columns)


def typed_seed(input: Inputs, current: RecipeRun | None) -> int | None:
    """The seed typed on the Steps tab (``None``: fresh randomness); raises when it cannot
    be."""
    seed = input.seed()
    if seed is not None and (not float(seed).is_integer() or seed < 0):
        raise InputError(f"the seed must be a non-negative integer, got {seed}")
    seed = None if seed is None else int(seed)
    if current is not None and current.recipe.seed != seed:
        raise InputError("the seed is fixed once a step has run: undo every step to change "
                         "it")
    return seed


def plan_step(input: Inputs, state: State) -> Planned | None:
    """The step the form describes, checked (quickly, on the event loop: nothing is read
    or measured here); its errors are shown beside their fields."""
    picked = _chosen(input)
    if picked is None or state.frame() is None:
        show_error("run", InputError("load a table and choose a method first"))
        return None
    of, cls = picked

    def read(field: str) -> Any:
        try:
            return input[field]()
        except Exception:
            return None

    current = state.run()
    try:
        seed = typed_seed(input, current)
    except MicroaggError as exc:
        show_error("seed", exc)
        return None
    try:
        step = Step.of({"family": of.value, "method": cls.name,
                        **read_form(cls, adapter(of), read)})
        return plan(state, step, seed, input.missing_semantics())
    except MicroaggError as exc:
        show_error(field_at_fault(exc, _names(cls, of)) or "run", exc)
        return None


def plan(state: State, step: Step, seed: int | None, missing: str) -> Planned:
    """``step`` as the next step of the session's run, checked (quickly, on the event loop):
    its DP context after the steps before it, and, for a first step, that the schema covers
    the table; the first step's run begins from the upload with ``seed`` and ``missing``
    (what a missing key matches).

    Raises
    ------
    MicroaggError
        The step cannot follow the steps before it, or the schema does not cover the table.
    """
    current = state.run()
    dp_context(step, current.recipe.steps if current is not None else ())
    source, frame, schema = state.source(), state.frame(), state.schema()
    if current is None and frame is not None and schema is not None:  # it covers it
        check_covered(frame, schema)
    return Planned(current, step, lambda: begin_run(source, frame, schema, seed, missing),
                   state.generation)


def _run_panel(input: Inputs, state: State,
               preview: reactive.Value[previews.Preview | None]
               ) -> Callable[[Planned], None]:
    """Running a step in a worker (with its progress bar), and undoing the last; returns
    what runs a planned step."""

    @ui.bind_task_button(button_id="run_step")
    @reactive.extended_task
    async def step_task(planned: Planned, bar: ui.Progress) -> tuple[int, RecipeRun]:
        step = planned.step
        feed = Feed(f"step {len(planned.current.results) + 1 if planned.current else 1}: "
                    f"{step.describe()}")
        check = state.checker()

        def work() -> tuple[int, RecipeRun]:
            current = planned.run()
            report = feed.records(len(current.frame))

            def records(done: int) -> None:
                check()
                report(done)

            return planned.generation, current.then(step, records=records)

        return await follow(bar, feed, work)

    @reactive.effect
    @reactive.event(input.run_step)
    def _run() -> None:
        clear_errors()
        planned = plan_step(input, state)
        if planned is not None:
            step_task(planned, ui.Progress())

    @reactive.effect
    def _finished() -> None:
        try:
            began, done = step_task.result()
        except MicroaggError as exc:
            show_error(_fault(input, exc, "run"), exc)
            return
        with reactive.isolate():
            if not state.fresh(began):
                show_error("run", InputError("the table or the steps changed while the step "
                                             "ran: its result is dropped, run it again"))
                return
            state.set_run(done)
            preview.set(None)

    @reactive.effect
    @reactive.event(input.undo)
    def _undo() -> None:
        clear_errors()
        current = state.run()
        if current is None or not current.results:
            show_error("undo", InputError("no step to undo"))
            return
        after = current.undo()
        state.set_run(after if after.results else None)

    @render.ui
    def steps_table() -> Any:
        run = state.run()
        if run is None:
            return ui.p("No step yet: choose a family and a method on the left, then run.",
                        id="no-steps")
        return steps_html(run)

    def run(planned: Planned) -> None:
        with reactive.isolate():
            if step_task.status() == "running":  # it would follow a run that is no more
                raise InputError("a step is running: apply this one once it has ended")
        step_task(planned, ui.Progress())

    return run


def _preview_panel(input: Inputs, state: State,
                   preview: reactive.Value[previews.Preview | None]) -> None:
    """A DP step's ε ledger and noise, computed in a worker before the step runs."""

    @render.ui
    def dp_preview() -> Any:
        picked = _chosen(input)
        if picked is None or not adapter(picked[0]).private:
            return None
        shown = preview()
        return ui.div(
            ui.input_action_button("preview", "Preview: ε ledger and noise, before running"),
            ui.div(id="err-preview", class_="field-error-slot"),
            _preview_html(shown) if shown is not None else None, class_="mb-2")

    @reactive.extended_task
    async def preview_task(planned: Planned) -> tuple[int, previews.Preview]:
        def work() -> tuple[int, previews.Preview]:
            current = planned.run()
            seed = step_seed(current.recipe.seed, len(current.recipe.steps))
            return planned.generation, previews.dp_preview(planned.step, current.frame,
                                                           current.schema, seed)

        return await state.jobs.run(work)

    @reactive.effect
    @reactive.event(input.preview)
    def _preview() -> None:
        clear_errors()
        planned = plan_step(input, state)
        if planned is not None:
            preview_task(planned)

    @reactive.effect
    def _previewed() -> None:
        try:
            began, done = preview_task.result()
        except MicroaggError as exc:
            show_error(_fault(input, exc, "preview"), exc)
            return
        with reactive.isolate():
            if state.fresh(began):  # else the steps or table changed: a preview of no step
                preview.set(done)


def _figures_panel(input: Inputs, state: State) -> None:
    """A column before and after, the risk before and after, the change of the
    correlations."""

    @render.plot(alt="a column before and after")
    def distribution_plot() -> Any:
        run, name, frame = state.run(), input.plot_column(), state.frame()
        if frame is None or not name:
            return None
        before = frame[name]
        after = run.frame[name] if run is not None and name in run.frame.columns else None
        return distribution(before, after, name)

    @render.plot(alt="records by risk before and after the steps")
    def risk_steps_plot() -> Any:
        run = state.run()
        if run is None:
            return None
        return risk_histogram(run.risk_before.record_risk, run.results[-1].risk.record_risk,
                              label=run.risk_before.risk_label)

    @render.plot(alt="change of the correlations")
    def correlation_plot() -> Any:
        run = state.run()
        if run is None:
            return None
        return correlation_change(run.original, run.frame)
