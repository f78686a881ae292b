"""Continuing from a recipe: a recipe file (the one the download tab offers, or one
``microagg run`` wrote or read) loaded back with its data file, or over the table on the
data tab, its schema set as the columns' roles and kinds and its steps run again, so that
the user goes on where the recipe stopped, as sdcApp reloads a problem instance.

The data are read as the recipe's ``read:`` says (missing-value tokens, separator,
header): its data file given on the card is read so and becomes the session's table; the
data tab's file is read again so when it was read otherwise, and when it cannot be (not a
CSV file) the steps run on it as read, and that is said.

The recipe must fit the table: every column its schema or a step names is one of the
table's, or it is refused in one line before anything runs. A recipe made on another file
(its SHA-256 differs) is run all the same, and said. The steps run in a worker, one after
the other with a progress bar; a step the table refuses is named with its error."""

from __future__ import annotations

import shutil
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from shiny import Inputs, reactive, render, ui
from shiny.session import require_active_session

from microagg.data.io import READ_KEY, table_format
from microagg.data.schema import Schema
from microagg.data.yamlfile import load_yaml
from microagg.errors import InputError, MicroaggError, SchemaError
from microagg.recipe.composition import check_steps
from microagg.recipe.families import OptionKind, adapter
from microagg.recipe.model import Recipe, Step
from microagg.recipe.runner import RecipeRun
from microagg.release.reports.sidecar import InputFile
from microagg.ui.data_tab import Loaded, read_again, read_loaded
from microagg.ui.limits import Limits
from microagg.ui.progress import Feed, follow
from microagg.ui.session import State, clear_errors, show_error
from microagg.ui.state import ColumnEdit, Reading, Workspace, begin_run

__all__ = ["Resumed", "column_edits", "read_recipe", "recipe_card", "recipe_table", "replay",
           "resume_server", "unknown_columns"]


def recipe_card() -> Any:
    """The card of the data tab that loads a recipe back."""
    return ui.card(
        ui.card_header("Continue from a recipe"),
        ui.p("Load the data file the recipe was made on here (or above), then its recipe "
             "(YAML: the download tab's, or one microagg run reads): the data are read as "
             "the recipe's read: says, its roles and kinds are set and its steps run again, "
             "and you go on from the last.", class_="text-muted"),
        ui.input_file("recipe_data", "Its data file (optional: else the table above)"),
        ui.input_file("recipe_upload", "Recipe (.yaml)", accept=[".yaml", ".yml"]),
        ui.div(id="err-recipe_upload", class_="field-error-slot"),
        ui.output_ui("resumed"))


def read_recipe(path: Path, name: str | None = None) -> Recipe:
    """The recipe in the YAML file ``path`` (uploaded as ``name``). Its schema must be
    inline, with its taxonomies (as the download tab and ``microagg run`` write it): the
    files a recipe names beside it were not uploaded."""
    try:
        data = load_yaml(path, "recipe file")
    except SchemaError as exc:  # named as the user knows the file
        raise SchemaError(str(exc).replace(str(path), name or path.name)) from None
    if isinstance(data, Mapping) and isinstance(data.get("schema"), str):
        raise InputError(f"the recipe names its schema file '{data['schema']}': load a recipe "
                         "whose schema is inline (as the download tab and microagg run write "
                         "it)")
    return Recipe.from_dict(data if data is not None else {}, base_dir=None)


def _named(step: Step) -> Iterator[str]:
    """The columns a step names: its family's column options, the columns of its bounds,
    and the columns its method's parameters name (levels, breaks, importance, groups)."""
    for name, value in step.options.items():
        kind = adapter(step.family).option(name).kind
        if kind is OptionKind.COLUMNS:
            yield from value
        elif kind is OptionKind.BOUNDS and isinstance(value, Mapping):
            yield from map(str, value)
    for name in ("levels", "breaks"):
        value = step.parameters.get(name)
        if isinstance(value, Mapping):
            yield from map(str, value)
    importance = step.parameters.get("importance")
    if isinstance(importance, list | tuple):
        yield from map(str, importance)


def unknown_columns(recipe: Recipe, frame: pd.DataFrame) -> str | None:
    """Why ``recipe`` does not fit ``frame`` (a column its schema or a step names that the
    table does not hold), or ``None`` when it fits."""
    held = {str(c) for c in frame.columns}
    missing = [a.name for a in recipe.schema or () if a.name not in held]
    if missing:
        return (f"the recipe's schema names {_columns(missing)}, which the table loaded does "
                "not hold: load the table the recipe was made on")
    for number, step in enumerate(recipe.steps, start=1):
        absent = [c for c in dict.fromkeys(_named(step)) if c not in held]
        if absent:
            return (f"step {number} ({step.family.value} {step.name}) names "
                    f"{_columns(absent)}, which the table loaded does not hold: load the "
                    "table the recipe was made on")
    return None


def _columns(names: list[str]) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:3]) + (" …" if len(names) > 3 else "")
    return ("column " if len(names) == 1 else "columns ") + shown


def column_edits(schema: Schema | None, folder: Path) -> dict[str, ColumnEdit]:
    """The data tab's edits that set each column of ``schema`` as the recipe declares it:
    role, kind, domain, missing value and taxonomy (copied into the session's ``folder``,
    since the recipe's own copy lives as long as its schema). Categories read off the data
    (``observed``) are not declared by the edit: they are read off the data again."""
    edits: dict[str, ColumnEdit] = {}
    for attribute in schema or ():
        domain = ""
        if attribute.domain is not None and not attribute.observed:
            items = [str(v) for v in attribute.domain]
            if not any("," in item for item in items):  # the field separates by commas
                domain = ", ".join(items)
        taxonomy = None
        if attribute.taxonomy is not None and attribute.taxonomy.is_file():
            target = folder / f"recipe-taxonomy-{len(edits)}{attribute.taxonomy.suffix}"
            shutil.copyfile(attribute.taxonomy, target)
            taxonomy = str(target)
        edits[attribute.name] = ColumnEdit(
            role=attribute.role.value, kind=attribute.kind.value, domain=domain,
            missing="" if attribute.missing is None else str(attribute.missing),
            taxonomy=taxonomy)
    return edits


@dataclass(frozen=True)
class Resumed:
    """A recipe loaded back: the run of its steps on the table, the data tab's edits that
    declare its schema, what the user is told (its file, a different input), and the table
    read for it (``None``: the data tab's, as it was read)."""

    run: RecipeRun
    edits: dict[str, ColumnEdit]
    notes: tuple[str, ...]
    loaded: Loaded | None = None


def _said(read: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in dict(read).items()) or "the defaults"


def recipe_table(recipe: Recipe, given: tuple[Path, str] | None, source: Path | None,
                 frame: pd.DataFrame | None, space: Workspace, limits: Limits
                 ) -> tuple[Loaded | None, list[str]]:
    """The table ``recipe`` runs on, read as its ``read:`` says, and what the user is told:
    its data file ``given`` (the upload's path and name; a path already in the session's
    folder ``space`` is read again there), else the data tab's ``frame`` (read from
    ``source``) as it is when it was read so, else ``source`` read again so (a CSV file),
    else ``frame`` as it is, said. ``None`` for the table: ``frame`` as it is.

    Raises
    ------
    MicroaggError
        No table, or the file cannot be read as the recipe says (one line).
    """
    reading = Reading.of(recipe.read)
    if given is not None:
        path, name = given
        loaded = (read_again(path, limits, reading) if path.parent == space.folder
                  else read_loaded(space, str(path), name, limits, reading))
        return loaded, ([f"{name} read as the recipe reads it: {_said(recipe.read)}"]
                        if reading.options() else [])
    if frame is None:
        raise InputError("load the recipe's data file (here or above) first, then the recipe")
    was = dict(frame.attrs.get(READ_KEY) or {})
    if Reading.of(was).options() == reading.options():
        return None, []
    if source is not None and table_format(source) == "csv":
        return read_again(source, limits, reading), [
            f"{source.name} was read again as the recipe reads it ({_said(recipe.read)}), "
            f"not as the data tab read it ({_said(was)})"]
    return None, [f"the recipe reads its input with {_said(recipe.read)}, the table above "
                  f"was read with {_said(was)}: the steps ran on it as read"]


def replay(recipe: Recipe, source: Path | None, frame: pd.DataFrame, folder: Path,
           feed: Feed | None = None, check: Callable[[], None] | None = None) -> Resumed:
    """Run the steps of ``recipe`` on ``frame`` (read from ``source``), as the steps tab
    would have run them one by one: with the recipe's schema, seed and missing-value
    semantics. ``feed`` is told each step and its records, ``check`` is called as they go
    (it raises to stop). An error of a step is raised naming the step; DP steps that cannot
    compose are refused before any step runs, as ``microagg run`` refuses them."""
    why = unknown_columns(recipe, frame)
    if why is not None:
        raise InputError(why)
    check_steps(recipe.steps)
    notes = []
    given = InputFile.of(source) if source is not None else None
    if recipe.input_sha256 and given is not None and given.sha256 not in (
            None, recipe.input_sha256):
        notes.append(f"{given.name} is not the file the recipe was made on (its SHA-256 "
                     "differs): the steps ran on it, and their output differs from the "
                     "recipe's")
    with warnings.catch_warnings():  # the file's hash: said above, once
        warnings.filterwarnings("ignore", message=".*is not the file the recipe was made on")
        run = begin_run(source, frame, recipe.schema, recipe.seed, recipe.missing.value)
    for number, step in enumerate(recipe.steps, start=1):
        report = None
        if feed is not None:
            feed.set(None, f"step {number} of {len(recipe.steps)}: {step.describe()}")
            report = feed.records(len(run.frame))

        def records(done: int, report: Callable[[int], None] | None = report) -> None:
            if check is not None:
                check()
            if report is not None:
                report(done)

        try:
            run = run.then(step, records=records)
        except MicroaggError as exc:
            raise type(exc)(f"step {number} ({step.describe()}): {exc}") from None
    if run.private and recipe.seed is None:
        notes.append("its differentially private steps drew fresh noise: the table differs "
                     "from the one released with the recipe")
    return Resumed(run, column_edits(recipe.schema, folder), tuple(notes))


def resume_server(input: Inputs, state: State, adopt: Callable[[Loaded], None]) -> None:
    """Register the recipe upload (and its data file): read, checked against the table and
    run in a worker, then set as the session's table (``adopt``, when its data were read
    for it), schema edits, seed, missing-value semantics and run."""
    said: reactive.Value[tuple[str, ...] | None] = reactive.value(None)
    session = require_active_session(None)
    began = [0]  # the session's generation when the recipe began (State.fresh)
    taken: dict[str, Path] = {}  # a data file uploaded: where the session's folder holds it
    retired = [False]  # the recipe's own data file is being read: measures wait

    @reactive.extended_task
    async def resume_task(datapath: str, name: str, given: tuple[Path, str] | None,
                          source: Path | None, frame: pd.DataFrame | None,
                          bar: ui.Progress) -> Resumed:
        feed = Feed(f"the steps of {name}")
        check = state.checker()

        def work() -> Resumed:
            recipe = read_recipe(Path(datapath), name)
            loaded, notes = recipe_table(recipe, given, source, frame, state.space,
                                         state.limits)
            table, path = (frame, source) if loaded is None else (loaded.frame, loaded.path)
            resumed = replay(recipe, path, table, state.space.folder,  # type: ignore[arg-type]
                             feed, check)
            return Resumed(resumed.run, resumed.edits,
                           (f"{name}: {len(recipe.steps)} step(s) run again", *notes,
                            *resumed.notes), loaded)

        return await follow(bar, feed, work)

    @reactive.effect
    @reactive.event(input.recipe_upload, input.recipe_data)
    def _load() -> None:
        upload, data = input.recipe_upload(), input.recipe_data()
        if not upload:
            return  # a data file alone waits for its recipe
        clear_errors()
        given = None
        if data:
            datapath, name = data[0]["datapath"], Path(data[0]["name"]).name
            given = (taken.get(datapath, Path(datapath)), name)
            taken[datapath] = state.space.place(name)
            state.retire()  # the measures of the table shown stop: it is being replaced
            retired[0] = True
        said.set(None)
        began[0] = state.generation
        resume_task(upload[0]["datapath"], Path(upload[0]["name"]).name, given,
                    state.source(), state.frame(), ui.Progress())

    @reactive.effect
    def _resumed() -> None:
        try:
            done = resume_task.result()
        except MicroaggError as exc:
            show_error("recipe_upload", exc)
            return
        finally:
            with reactive.isolate():
                if retired[0] and resume_task.status() != "running":
                    retired[0] = False
                    state.resume()
        with reactive.isolate():
            if not state.fresh(began[0]):
                show_error("recipe_upload", InputError(
                    "the table or the steps changed while the recipe ran: load it again"))
                return
            if done.loaded is not None:
                adopt(done.loaded)
                _show_reading(done.run.recipe.read)
            state.edits.set(done.edits)
            state.set_run(done.run)
            said.set(done.notes)
        recipe = done.run.recipe
        # the steps tab's seed is the recipe's (empty: fresh randomness), which
        # update_numeric cannot say: it leaves a field alone when given no value
        session.send_input_message("seed", {"value": "" if recipe.seed is None
                                            else recipe.seed})
        ui.update_select("missing_semantics", selected=recipe.missing.value)

    @render.ui
    def resumed() -> Any:
        notes = said()
        if not notes:
            return None
        return ui.tags.ul(*(ui.tags.li(n) for n in notes), id="resumed-notes",
                          class_="context")


def _show_reading(read: Mapping[str, Any]) -> None:
    """The data tab's reading fields set to how the recipe's data were read."""
    reading = Reading.of(read)
    ui.update_text("upload_na", value=reading.na)
    ui.update_text("upload_separator", value=reading.separator)
    ui.update_checkbox("upload_header", value=reading.header)
