"""The server of the download tab: the release, its report (JSON, HTML) and the recipe,
written together by :func:`~microagg.recipe.write.write_run` in the session's folder.

After a differentially private step, what the tab offers as the release (the table, its
privacy report, its report and the recipe) holds public figures only
(:mod:`microagg.release.reports.disclosure`); the owner's report, with every figure, is offered
apart and named as the owner's. The files are written in one of the session's workers, once for
a run, a format and a report kind; the buttons show when they are written. A file that could
not be written is said in one line beside the format (gone once another is written), and a
button clicked then gives that line as text, never a server error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from shiny import Inputs, reactive, render, ui

from microagg.errors import InputError, MicroaggError
from microagg.recipe.runner import RecipeRun
from microagg.recipe.write import RunFiles
from microagg.ui.compare_tab import iframe
from microagg.ui.session import Pending, State, clear_error, show_error
from microagg.ui.state import write_downloads

__all__ = ["NOT_WRITTEN", "output_server"]

NOT_WRITTEN = "not-written.txt"
"""The name of what a download button gives when its file could not be written: one line
saying why (the same line is shown beside the format)."""


def output_server(input: Inputs, state: State) -> None:
    """Register the outputs and effects of the download tab: the files, written in a worker
    once for a run, format and report kind, are offered when they are written."""

    @reactive.calc
    def written() -> tuple[RunFiles, str] | Pending | MicroaggError | None:
        """The files of the current run and its HTML report's text (read in the worker
        too); the error that stopped them, shown beside the format (and gone once another
        format or run is written); ``None`` before a step has run."""
        clear_error("download")
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
            return exc

    @render.ui
    def downloads() -> Any:
        run: RecipeRun | None = state.run()
        if run is None:
            return ui.p("Run at least one step (tab 3) to download a release.")
        done = written()
        if not isinstance(done, tuple):
            return ui.p(done.what if isinstance(done, Pending) else "", class_="text-muted")
        return _files_html(run)

    def ready(pick: str) -> Path | str:
        """The written file ``pick``, or the one line that says why there is none (shown
        beside the format too): a download is never answered with a server error."""
        with reactive.isolate():
            done = written()
        if isinstance(done, tuple):
            return Path(getattr(done[0], pick))
        error = (done if isinstance(done, MicroaggError) else InputError(
            "the files are being written: try again in a moment"
            if isinstance(done, Pending) else "run at least one step first"))
        show_error("download", error)
        return str(error)

    def name(pick: str) -> str:
        found = ready(pick)
        return found.name if isinstance(found, Path) else NOT_WRITTEN

    def serve(pick: str) -> str | list[str]:
        found = ready(pick)
        return str(found) if isinstance(found, Path) else [f"not written: {found}\n"]

    @render.download_button(filename=lambda: name("table"))
    def dl_release() -> str | list[str]:
        return serve("table")

    @render.download_button(filename=lambda: name("report"))
    def dl_report_json() -> str | list[str]:
        return serve("report")

    @render.download_button(filename=lambda: name("html"))
    def dl_report_html() -> str | list[str]:
        return serve("html")

    @render.download_button(filename=lambda: name("recipe"))
    def dl_recipe() -> str | list[str]:
        return serve("recipe")

    @render.download_button(filename=lambda: name("privacy"))
    def dl_privacy() -> str | list[str]:
        return serve("privacy")

    @render.download_button(filename=lambda: name("owner"))
    def dl_owner() -> str | list[str]:
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
