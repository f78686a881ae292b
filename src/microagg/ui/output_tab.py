"""The server of the comparison and download tabs: the equal-risk comparison (paper 003) with
its report in the page, and the release, its report (JSON, HTML) and the recipe, written
together by :func:`~microagg.recipe.write.write_run` in the session's folder."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

from shiny import Inputs, reactive, render, ui

from microagg.data.schema import Role
from microagg.errors import InputError, MicroaggError
from microagg.recipe.runner import RecipeRun
from microagg.recipe.write import RunFiles, write_run
from microagg.ui.session import State, clear_errors, show_error

__all__ = ["output_server"]


def _iframe(html: str, name: str) -> Any:
    """A report page shown inside the app (a data URL: no file is served)."""
    data = base64.b64encode(html.encode("utf-8")).decode("ascii")
    return ui.tags.iframe(src=f"data:text/html;charset=utf-8;base64,{data}", class_="report",
                          id=name)


def output_server(input: Inputs, state: State) -> None:
    """Register the outputs and effects of the comparison and download tabs."""
    compared: reactive.Value[str | None] = reactive.value(None)
    written: dict[tuple[Any, ...], RunFiles] = {}

    @reactive.effect
    def _compare_columns() -> None:
        frame = state.frame()
        if frame is None:
            return
        try:
            schema = state.schema()
        except MicroaggError:
            return
        if schema is None:
            return
        numeric = [a.name for a in schema if a.is_numeric and a.role is Role.QUASI]
        ui.update_selectize("compare_columns", choices=[a.name for a in schema if a.is_numeric],
                            selected=numeric)

    @ui.bind_task_button(button_id="run_compare")
    @reactive.extended_task
    async def compare_task(arguments: dict[str, Any]) -> str:
        from microagg.evaluation.compare import compare
        from microagg.evaluation.html import comparison_html

        def work() -> str:
            return comparison_html(compare(**arguments))

        return await asyncio.to_thread(work)

    @reactive.effect
    @reactive.event(input.run_compare)
    def _compare() -> None:
        clear_errors()
        frame = state.frame()
        if frame is None:
            show_error("compare", InputError("load a table first"))
            return
        columns = list(input.compare_columns()) or None
        methods = list(input.compare_methods())
        if not methods:
            show_error("methods", InputError("choose at least one method"))
            return
        seeds = input.compare_seeds()
        if seeds is None or seeds < 2 or not float(seeds).is_integer():
            show_error("seeds", InputError(f"`seeds` must be an integer >= 2, got {seeds}"))
            return
        source = state.source()
        compare_task({"frame": frame, "target_risk": input.target_risk().strip(),
                      "methods": methods, "columns": columns, "schema": state.schema(),
                      "seeds": int(seeds), "source": source.name if source else None})

    @reactive.effect
    def _compared() -> None:
        try:
            html = compare_task.result()
        except MicroaggError as exc:
            text = str(exc)
            where = ("target_risk" if "target" in text else "columns" if "column" in text
                     else "compare")
            show_error(where, exc)
            return
        with reactive.isolate():
            compared.set(html)

    @render.ui
    def comparison() -> Any:
        html = compared()
        if html is None:
            return ui.p("Choose a target risk and the methods, then compare: each method's "
                        "parameter is calibrated to the target and the methods are ranked "
                        "by the utility they keep (paper 003).")
        return _iframe(html, "comparison-report")

    def files() -> RunFiles:
        run = state.run()
        source = state.source()
        if run is None or source is None:
            raise InputError("run at least one step first")
        fmt, kind = input.release_format(), input.report_kind()
        key = (id(run), fmt, kind)
        if key not in written:
            output = source.with_name(f"{source.stem}_protected.{fmt}")
            html = output.with_name(output.name + ".html")
            written.clear()
            written[key] = write_run(run, output, html=html, kind=kind,
                                     sources=[source])[0]
        return written[key]

    @render.ui
    def downloads() -> Any:
        run: RecipeRun | None = state.run()
        if run is None:
            return ui.p("Run at least one step (tab 3) to download a release.")
        return ui.TagList(
            ui.p(run.guarantee, class_="guarantee"),
            ui.div(ui.download_button("dl_release", "The release"),
                   ui.download_button("dl_report_json", "Its report (JSON)"),
                   ui.download_button("dl_report_html", "Its report (HTML)"),
                   ui.download_button("dl_recipe", "The recipe (YAML)"),
                   ui.download_button("dl_privacy", "The privacy report (JSON)")
                   if any(r.context for r in run.results) else None,
                   class_="d-flex gap-2 flex-wrap"),
            ui.p("The recipe reproduces this release with: microagg run RECIPE.yaml -o "
                 "OUT (keep the input file beside the recipe).", class_="text-muted"))

    def serve(pick: str) -> str:
        try:
            chosen = getattr(files(), pick)
        except MicroaggError as exc:
            show_error("download", exc)
            raise
        return str(chosen)

    @render.download_button(filename=lambda: Path(serve("table")).name)
    def dl_release() -> str:
        return serve("table")

    @render.download_button(filename=lambda: Path(serve("report")).name)
    def dl_report_json() -> str:
        return serve("report")

    @render.download_button(filename=lambda: Path(serve("html")).name)
    def dl_report_html() -> str:
        return serve("html")

    @render.download_button(filename=lambda: Path(serve("recipe")).name)
    def dl_recipe() -> str:
        return serve("recipe")

    @render.download_button(filename=lambda: Path(serve("privacy")).name)
    def dl_privacy() -> str:
        return serve("privacy")

    @render.ui
    def report_view() -> Any:
        run = state.run()
        if run is None:
            return None
        try:
            path = files().html
        except MicroaggError as exc:
            show_error("download", exc)
            return None
        assert path is not None
        return ui.TagList(ui.h4("The report, as downloaded"),
                          _iframe(path.read_text(encoding="utf-8"), "release-report"))
