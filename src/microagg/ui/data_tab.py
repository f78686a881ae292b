"""The server of the data tab: upload, roles and kinds, and a column's domain, missing value
and taxonomy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from shiny import Inputs, reactive, render, ui
from shiny.session import get_current_session
from shiny.types import SafeException, SilentException

from microagg.data.coverage import check_covered
from microagg.data.io import READ_KEY
from microagg.data.roles import suggested_roles
from microagg.data.schema import Kind, Role, Schema
from microagg.data.taxonomy import Taxonomy
from microagg.errors import InputError, MicroaggError
from microagg.ui.limits import Limits, check_file, check_frame, too_large
from microagg.ui.session import State, Upload, clear_errors, guarded, one_line, safely, show_error
from microagg.ui.state import ColumnEdit, Reading, Workspace, not_a_number, read_upload

__all__ = ["MANY_KEYS", "Loaded", "data_server", "many_keys_note", "numbers_refused",
           "read_again", "read_loaded"]


def _role_select(i: int, name: str, role: str) -> Any:
    return ui.input_select(f"role_{i}", None, choices=[r.value for r in Role], selected=role)


def _kind_select(i: int, kind: str) -> Any:
    return ui.input_select(f"kind_{i}", None, choices=[k.value for k in Kind], selected=kind)


def data_server(input: Inputs, state: State) -> Callable[[Loaded], None]:
    """Register the outputs and effects of the data tab: the upload, the columns' roles and
    kinds, and a column's details. Returns what makes a table read elsewhere (a recipe's
    data file) the session's table, as an upload is."""
    shown: reactive.Value[int] = reactive.value(0)  # the tables read in this session

    def adopt(loaded: Loaded) -> None:
        with reactive.isolate():
            shown.set(shown() + 1)
            state.reading.set(loaded.notes)
            state.run.set(None)
            state.edits.set({})
            state.suggestions.set(loaded.suggestions)
            state.inferred.set(loaded.inferred)
            state.source.set(loaded.path)
            state.upload.set(loaded.upload)
            state.frame.set(loaded.frame)
        ui.update_select("detail_column", choices=list(loaded.inferred.names))
        ui.update_select("plot_column", choices=list(loaded.inferred.names))

    _upload_panel(input, state, adopt)
    _columns_panel(input, state, shown)
    _detail_panel(input, state)
    return adopt


@dataclass(frozen=True)
class Loaded:
    """An upload read in a worker: the table and what the tab shows of it."""

    path: Path
    frame: pd.DataFrame
    inferred: Schema
    notes: list[str]
    suggestions: dict[str, tuple[Role, str]]
    upload: Upload


def read_loaded(space: Workspace, datapath: str, name: str, limits: Limits,
                reading: Reading | None = None) -> Loaded:
    """The uploaded file ``datapath`` (named ``name`` by the user) moved into the session's
    folder, checked against ``limits`` and read as ``reading`` says (in a worker: this can
    take a while). Any error is a one-line :class:`~microagg.errors.InputError` naming the
    file only."""
    path = space.adopt(datapath, name)
    try:
        return read_again(path, limits, reading)
    except MicroaggError:
        path.unlink(missing_ok=True)  # refused: the session keeps nothing of it
        raise


def read_again(path: Path, limits: Limits, reading: Reading | None = None) -> Loaded:
    """The file ``path`` already in the session's folder, checked against ``limits`` and
    read as ``reading`` says; the file stays whatever happens (the table read before is
    kept on an error)."""
    try:
        check_file(path, limits)
        frame, inferred, notes = read_upload(path, reading)
        check_frame(path.name, frame, limits)
    except MicroaggError:
        raise
    except Exception as exc:  # a reader's own error: said in one line, as ours are
        raise InputError(f"cannot read {path.name}: {one_line(exc)}") from None
    samples = {str(c): ", ".join(map(str, pd.unique(frame[c].dropna())[:4]))
               for c in frame.columns}
    missing = {str(c): int(n) for c, n in frame.isna().sum().items()}
    upload = Upload(path.name, len(frame), frame.shape[1], sum(missing.values()), samples,
                    missing)
    return Loaded(path, frame, inferred, notes, suggested_roles(frame), upload)


MANY_KEYS = 30
"""Past this many quasi-identifiers, the columns' table says to choose the keys."""


def many_keys_note(schema: Schema) -> Any:
    """A line over the columns' table when every column of a wide table is a key by default:
    an intruder knows a few of them, over hundreds every record is unique, and SUDA2's
    search grows as 2^keys. ``None`` up to :data:`MANY_KEYS` keys."""
    keys = sum(a.role is Role.QUASI for a in schema)
    if keys <= MANY_KEYS:
        return None
    return ui.p(f"{keys:,} columns are quasi-identifiers: set the role of those an intruder "
                "cannot know to other or confidential (the risk over this many keys finds "
                "nearly every record unique, and SUDA2 waits to be asked).",
                class_="context", id="many-keys")


def numbers_refused(frame: pd.DataFrame | None,
                    edits: dict[str, ColumnEdit]) -> InputError | None:
    """Why a column read as text cannot be given the numeric kind (a value that is not a
    number, such as ``28107,0`` read without the decimal comma), or ``None``."""
    for name, edit in edits.items():
        if edit.kind == Kind.NUMERIC.value and frame is not None and name in frame.columns:
            value = not_a_number(frame[name])
            if value is not None:
                return InputError(f"column '{name}': '{value}' is not a number: set the "
                                  "decimal mark and read the file again, or keep its kind")
    return None


def _reading(input: Inputs) -> Reading:
    """How the upload's fields say the file is written."""
    return Reading(na=input.upload_na() or "", separator=input.upload_separator() or "",
                   header=bool(input.upload_header()), decimal=input.upload_decimal() or ".")


def _show_reading(how: Reading) -> None:
    """Set the upload's fields to ``how`` (a new file read with automatic detection)."""
    ui.update_text("upload_separator", value=how.separator)
    ui.update_checkbox("upload_header", value=how.header)
    ui.update_select("upload_decimal", selected=how.decimal)


def _refuse_large_uploads(limits: Limits) -> None:
    """Refuse a file larger than ``limits`` when the browser announces it, before a byte is
    sent (the page shows why under the field); the server's guard refuses it again if the
    browser says less than it sends."""
    session = get_current_session()
    handlers = getattr(session, "_message_handlers", None)
    if session is None or not isinstance(handlers, dict) or "uploadInit" not in handlers:
        return
    original = handlers["uploadInit"][0]

    async def upload_init(file_infos: list[dict[str, Any]]) -> Any:
        for info in file_infos:
            refusal = too_large(Path(str(info.get("name", "the file"))).name,
                                int(info.get("size") or 0), limits)
            if refusal is not None:  # the whole line beside the field, a word in the bar
                show_error("upload", refusal)
                raise SafeException("refused")
        return await original(file_infos)

    session.set_message_handler("uploadInit", upload_init)


def _upload_panel(input: Inputs, state: State, adopt: Callable[[Loaded], None]) -> None:
    """The upload, read in a worker as the fields say the file is written (and read again
    with them on request, until a step has run); what was read, or why not. ``adopt``
    makes a table read the session's."""
    _refuse_large_uploads(state.limits)
    reading: reactive.Value[str | None] = reactive.value(None)
    last: list[Reading | None] = [None]  # how the last file was read

    @reactive.extended_task
    async def load_task(work: Callable[[], Loaded]) -> Loaded:
        return await state.jobs.read(work)

    @reactive.effect
    @reactive.event(input.upload)
    def _load() -> None:
        clear_errors()
        upload, fields = input.upload(), _reading(input)
        if upload:
            how = last[0] = fields.for_next_file(last[0])
            if how != fields:  # the last file's separator, header and mark do not carry over
                _show_reading(how)
            datapath, name = upload[0]["datapath"], upload[0]["name"]
            reading.set(Path(name).name)
            state.retire()  # the measures of the table shown stop: it is being replaced
            load_task(lambda: read_loaded(state.space, datapath, name, state.limits, how))

    @reactive.effect
    @reactive.event(input.upload_again)
    def _load_again() -> None:
        clear_errors()
        path, how = state.source(), _reading(input)
        if path is None:
            show_error("upload", InputError("load a table first"))
            return
        if state.run() is not None:
            show_error("upload", InputError("the table is fixed once a step has run: undo "
                                            "every step to read it again"))
            return
        reading.set(path.name)
        last[0] = how
        state.retire()
        load_task(lambda: read_again(path, state.limits, how))

    @reactive.effect
    @safely("upload")
    def _loaded() -> None:
        try:
            loaded = load_task.result()
        except MicroaggError as exc:
            show_error("upload", exc)
            return
        except Exception as exc:  # not a refusal: a bug, said in one line all the same
            if isinstance(exc, SilentException):
                raise
            show_error("upload", InputError(f"cannot read the file: {one_line(exc)}"))
            return
        finally:
            with reactive.isolate():
                if load_task.status() != "running":
                    reading.set(None)
                    state.resume()
        adopt(loaded)

    @render.ui
    def loaded() -> Any:
        upload, name = state.upload(), reading()
        said = ui.p(f"Reading {name}…", id="reading-text") if name else None
        if upload is None:
            return said or ui.p("No table yet. Missing cells are read as missing: empty, NA, "
                                "NaN, NULL.")
        notes = [ui.tags.li(n) for n in state.reading()]
        frame = state.frame()
        tokens = (frame.attrs.get(READ_KEY) or {}).get("na", []) if frame is not None else []
        read_as = ", ".join(dict.fromkeys(["empty", "NA", "NaN", "NULL", *tokens]))
        return ui.TagList(
            said,
            ui.p(f"{upload.name}: {upload.records:,} records, {upload.columns} columns, "
                 f"{upload.missing_cells:,} missing cells (read as missing: {read_as}).",
                 id="loaded-text"),
            ui.tags.ul(*notes, id="reading-notes", class_="context") if notes else None)


def _columns_panel(input: Inputs, state: State, shown: reactive.Value[int]) -> None:
    """The columns' roles and kinds. The selects are named by position (``role_0``), so
    after a new table the page holds the previous table's choices until it draws the new
    selects: the table carries a hidden field with its number (``columns_of``), which the
    browser sends once it has drawn them, and a choice counts only when that number is the
    current table's (a new table starts from its own suggested roles)."""

    @render.ui
    def columns() -> Any:
        inferred, upload = state.inferred(), state.upload()
        if inferred is None or upload is None:
            return None
        locked = state.run() is not None
        with reactive.isolate():
            schema = guarded("roles", state.schema) or inferred
        suggestions = state.suggestions()
        rows = []
        for i, attribute in enumerate(schema):
            role, reason = suggestions[attribute.name]
            rows.append(ui.tags.tr(
                ui.tags.td(ui.tags.strong(attribute.name)),
                ui.tags.td(upload.samples.get(attribute.name, "")),
                ui.tags.td(f"{upload.missing.get(attribute.name, 0):,}",
                           **{"data-missing": attribute.name}),
                ui.tags.td(f"{role.value}" + (f" ({reason})" if reason else "")),
                ui.tags.td(_role_select(i, attribute.name, attribute.role.value)),
                ui.tags.td(_kind_select(i, attribute.kind.value))))
        table = ui.tags.table(
            ui.tags.thead(ui.tags.tr(*(ui.tags.th(h) for h in (
                "column", "values", "missing", "suggested role", "role", "kind")))),
            ui.tags.tbody(*rows), class_="columns")
        note = (ui.p("Roles are fixed once a step has run: undo every step to edit them.",
                     class_="context") if locked else
                ui.p("Quasi-identifiers are the keys an intruder may know: they are "
                     "measured for risk and masked by default. Identifiers are dropped; "
                     "weight, stratum and household columns are never masked. A role the "
                     "column's name gives is set; one its values suggest (every value "
                     "distinct, numbers counting the rows) is shown beside it, for you to "
                     "set if it is right."))
        with reactive.isolate():
            number = shown()
        marker = ui.div(ui.input_text("columns_of", None, value=str(number)),
                        style="display: none")
        return ui.TagList(note, many_keys_note(schema), ui.tags.fieldset(
            table, disabled=locked or None), marker)

    @reactive.effect
    def _roles() -> None:
        inferred = state.inferred()
        if inferred is None or state.run() is not None:
            return
        try:
            drawn = input.columns_of()
        except Exception:  # the table is not on the page yet
            return
        with reactive.isolate():
            if drawn != str(shown()):  # the page still shows the previous table's choices
                return
        chosen = {}
        for i, attribute in enumerate(inferred):
            try:
                chosen[attribute.name] = (input[f"role_{i}"](), input[f"kind_{i}"]())
            except Exception:  # the selects are not on the page yet
                return
        with reactive.isolate():
            edits = dict(state.edits())
        changed = False
        for name, (role, kind) in chosen.items():
            if role is None or kind is None:
                return
            edit = edits.get(name, ColumnEdit())
            if (edit.role, edit.kind) != (role, kind):
                edits[name] = replace(edit, role=role, kind=kind)
                changed = True
        if changed:
            clear_errors()
            with reactive.isolate():
                refusal = numbers_refused(state.frame(), edits)
            if refusal is not None:
                show_error("roles", refusal)
                return
            previous = state.edits()
            state.edits.set(edits)
            if guarded("roles", state.schema) is None:
                state.edits.set(previous)



def _detail_panel(input: Inputs, state: State) -> None:
    """A column's domain, missing value and taxonomy."""

    @render.ui
    def declared() -> Any:
        try:
            schema = state.schema()
        except MicroaggError:
            return None
        return None if schema is None else _declared(schema, state.edits())

    @reactive.effect
    @reactive.event(input.detail_column)
    def _show_detail() -> None:
        name = input.detail_column()
        edit = state.edits().get(name, ColumnEdit()) if name else ColumnEdit()
        ui.update_text("detail_domain", value=edit.domain)
        ui.update_text("detail_missing", value=edit.missing)

    @render.ui
    def detail_now() -> Any:
        """Which column the fields below hold, drawn with them (a field typed in before
        they arrive would be overwritten: the page can wait for this line)."""
        name = input.detail_column()
        if not name:
            return None
        return ui.p(f"The fields below are those of ‘{name}’.",
                    class_="text-muted small", data_column=name)

    taken: set[str] = set()  # the taxonomy files already applied (moved to the folder)

    @reactive.effect
    @reactive.event(input.detail_apply)
    def _apply_detail() -> None:
        clear_errors()
        name, frame = input.detail_column(), state.frame()
        if not name or state.inferred() is None:
            show_error("detail", InputError("load a table and choose a column first"))
            return
        if state.run() is not None:
            show_error("detail", InputError("the schema is fixed once a step has run: undo "
                                            "every step to edit it"))
            return
        edits = dict(state.edits())
        edit = edits.get(name, ColumnEdit())
        taxonomy = edit.taxonomy
        upload = input.detail_taxonomy()
        if upload and upload[0]["datapath"] not in taken:  # a file chosen is applied once
            taken.add(upload[0]["datapath"])
            path = state.space.adopt(upload[0]["datapath"], f"{name}.taxonomy"
                                     f"{_suffix(upload[0]['name'])}")
            try:
                Taxonomy.load(path)
            except MicroaggError as exc:
                show_error("taxonomy", exc)
                return
            taxonomy = str(path)
        edits[name] = replace(edit, domain=input.detail_domain().strip(),
                              missing=input.detail_missing().strip(), taxonomy=taxonomy)
        previous = state.edits()
        state.edits.set(edits)
        try:
            schema = state.schema()
        except MicroaggError as exc:
            state.edits.set(previous)
            text = str(exc)
            field = ("taxonomy" if "taxonom" in text else "missing" if "missing" in text
                     else "domain")
            show_error(field, exc)
            return
        try:
            if schema is not None and frame is not None:
                check_covered(frame, schema, [name])
        except MicroaggError as exc:  # the declaration leaves values of the column out
            state.edits.set(previous)
            show_error("taxonomy" if schema is not None and schema[name].categories is None
                       else "domain", exc)
            return
        note = held_note(frame, name, edits[name].missing)
        if note:
            show_error("missing", note)


def held_note(frame: pd.DataFrame | None, name: str, missing: str) -> str | None:
    """What to say when the value a missing cell stands for in a DP release (``missing``)
    is a value some cells of column ``name`` hold: those cells are not missing (a file's
    own missing-value token is given at the upload), ``None`` otherwise (and for a numeric
    column, whose declared value may well be one its cells hold).

    Examples
    --------
    >>> frame = pd.DataFrame({"work": ["Private", "?", "?", None]})
    >>> held_note(frame, "work", "?")[:40]
    "'?' is the value of 2 cells of 'work', w"
    >>> held_note(frame, "work", "Unknown") is None
    True
    >>> held_note(pd.DataFrame({"age": [40, 41]}), "age", "40") is None
    True
    """
    if (frame is None or not missing or name not in frame.columns
            or pd.api.types.is_numeric_dtype(frame[name])):
        return None
    cells = int((frame[name].astype(str).str.strip() == missing).sum())
    if not cells:
        return None
    return (f"'{missing}' is the value of {cells:,} cell{'s' if cells > 1 else ''} of "
            f"'{name}', which are not missing: to read them as missing, give '{missing}' "
            "as a missing-value token at the upload and read the table again")


def _declared(schema: Schema, edits: dict[str, ColumnEdit]) -> Any:
    """The domains, missing values and taxonomies the user declared, as the schema holds
    them."""
    items = []
    for name, edit in edits.items():
        if not (edit.domain or edit.missing or edit.taxonomy) or name not in schema.names:
            continue
        attribute = schema[name]
        said = []
        if edit.domain and attribute.domain is not None:
            said.append("domain " + (f"[{attribute.domain[0]:g}, {attribute.domain[1]:g}]"
                                     if attribute.is_numeric
                                     else ", ".join(map(str, attribute.domain))))
        if attribute.missing is not None:
            said.append(f"in a DP release a missing cell stands for {attribute.missing}")
        if attribute.taxonomy is not None:
            taxonomy = Taxonomy.load(attribute.taxonomy)
            said.append(f"taxonomy of {int(taxonomy.depth().max()) - 1} level(s) above "
                        f"its {len(taxonomy.leaves):,} categories")
        items.append(ui.tags.li(ui.tags.strong(name), ": ", "; ".join(said),
                                **{"data-column": name}))
    if not items:
        return None
    return ui.div(ui.tags.strong("Declared"), ui.tags.ul(*items), id="declared")


def _suffix(name: str) -> str:
    lower = name.lower()
    return next((s for s in (".yaml", ".yml") if lower.endswith(s)), ".csv")
