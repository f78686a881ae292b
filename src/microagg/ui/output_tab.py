"""The server of the download tab: the release, its report (JSON, HTML) and the recipe,
written together by :func:`~microagg.recipe.write.write_run` in the session's folder.

After a differentially private step, what the tab offers as the release (the table, its
privacy report, its report and the recipe) holds public figures only
(:mod:`microagg.release.disclosure`); the owner's report, with every figure, is offered apart
and named as the owner's. The files are written in one of the session's workers, once for
a run, a format and a report kind; the buttons show when they are written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from shiny import Inputs, reactive, render, ui

from microagg.errors import InputError, MicroaggError
from microagg.recipe.runner import RecipeRun
from microagg.recipe.write import RunFiles
from microagg.ui.compare_tab import iframe
from microagg.ui.session import Pending, State, show_error
from microagg.ui.state import write_downloads

__all__ = ["output_server"]


def output_server(input: Inputs, state: State) -> None:
    """Register the outputs and effects of the download tab: the files, written in a worker
    once for a run, format and report kind, are offered when they are written."""

    @reactive.calc
    def written() -> tuple[RunFiles, str] | Pending | None:
        """The files of the current run and its HTML report's text (read in the worker
        too); ``None`` before a step has run."""
        run, source = state.run(), state.source()
        if run is None or source is None:
            return None
        fmt, kind = input.release_format(), input.report_kind()

        def write(_: Callable[..., None]) -> tuple[RunFiles, str]:
            files = write_downloads(run, source, fmt, kind)
            assert files.html is not None
            return files, files.html.read_text(encoding="utf-8")

        try:
            return state.remembered(run, ("files", fmt, kind), write,
                                    what="Writing the release and its reports…")
        except MicroaggError as exc:
            show_error("download", exc)
            return None

    @render.ui
    def downloads() -> Any:
        run: RecipeRun | None = state.run()
        if run is None:
            return ui.p("Run at least one step (tab 3) to download a release.")
        done = written()
        if not isinstance(done, tuple):
            return ui.p(done.what if isinstance(done, Pending) else "", class_="text-muted")
        return _files_html(run)

    def serve(pick: str) -> str:
        with reactive.isolate():
            done = written()
        if not isinstance(done, tuple):
            error = InputError("the files are being written: try again in a moment"
                               if isinstance(done, Pending) else "run at least one step first")
            show_error("download", error)
            raise error
        return str(getattr(done[0], pick))

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

    @render.download_button(filename=lambda: Path(serve("owner")).name)
    def dl_owner() -> str:
        return serve("owner")

    @render.ui
    def report_view() -> Any:
        done = written()
        if not isinstance(done, tuple):
            return None
        return ui.TagList(ui.h4("The report, as downloaded"),
                          iframe(done[1], "release-report"))


def _files_html(run: RecipeRun) -> Any:
    """The buttons of the release's files, and the owner's apart after a DP step."""
    owner = (ui.div(
        ui.h5("For the data owner only: not for publication"),
        ui.p("Every figure of the run: the risk before and after each step, the utility, "
             "what each step said about the data, the recipe with its seed and the "
             "input's hash. None of these is in the release above.", class_="text-muted"),
        ui.download_button("dl_owner", "The owner's report (JSON)"), id="owner-files")
        if run.private else None)
    again = ("The recipe applies the same steps again with: microagg run RECIPE.yaml -o "
             "OUT (keep the input file beside the recipe); a DP step draws fresh noise."
             if run.private else
             "The recipe reproduces this release with: microagg run RECIPE.yaml -o OUT "
             "(keep the input file beside the recipe). Its report holds figures computed "
             "from the raw data: it is the owner's.")
    return ui.TagList(
        ui.p(run.guarantee, class_="guarantee"),
        ui.h5("The release" + (": every file holds public figures only"
                               if run.private else "")),
        ui.div(ui.download_button("dl_release", "The table"),
               ui.download_button("dl_privacy", "The privacy report (JSON)")
               if run.private else None,
               ui.download_button("dl_report_json", "Its report (JSON)"),
               ui.download_button("dl_report_html", "Its report (HTML)"),
               ui.download_button("dl_recipe", "The recipe (YAML)"),
               class_="d-flex gap-2 flex-wrap", id="release-files"),
        ui.p(again, class_="text-muted"), owner)
