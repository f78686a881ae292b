"""The server of the download tab: the release, its report (JSON, HTML) and the recipe,
written together by :func:`~microagg.recipe.write.write_run` in the session's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiny import Inputs, render, ui

from microagg.errors import InputError, MicroaggError
from microagg.recipe.runner import RecipeRun
from microagg.recipe.write import RunFiles, write_run
from microagg.ui.compare_tab import iframe
from microagg.ui.session import State, show_error

__all__ = ["output_server"]


def output_server(input: Inputs, state: State) -> None:
    """Register the outputs and effects of the download tab."""
    written: dict[tuple[Any, ...], RunFiles] = {}

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
                          iframe(path.read_text(encoding="utf-8"), "release-report"))
