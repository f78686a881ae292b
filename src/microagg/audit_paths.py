"""The DP audit through every path a release can take: ``microagg dp``, ``microagg run`` (a
recipe) and the web app's own calls, on everything each writes or prints.

:mod:`microagg.evaluation.audit` attacks the table a DP method returns. A release is judged by
everything published beside it, so here one DP release (a :class:`Case`: the table, its
declared schema, the steps) is made through each :data:`PATHS` entry exactly as a user makes
it: the command line run in-process in a folder of its own, the recipe runner through
``microagg run``, the app through the functions its steps and download tabs call (and, in
:data:`RELOADED`, its recipe card loading a recipe back with its data file). Each returns
a :class:`Written`: the exit status, stdout, stderr, every file written beside the table, and
the table read back.

Two checks follow (tests/test_audit_paths.py). Everything but the table is a function of the
declarations only, so it must be *identical*, byte for byte once the date is set aside, on
two neighbouring inputs (:func:`side_outputs`): one record replaced, or one cell missing
where the schema declares what a missing cell is read as. And the table keeps the ε its own
privacy report claims (:func:`table_audit`, the Clopper-Pearson bound of
:mod:`~microagg.evaluation.audit`).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import MicroaggError
from microagg.evaluation.audit import AuditResult

__all__ = ["PATHS", "RELOADED", "Case", "Written", "side_outputs", "table_audit", "through_app",
           "through_dp", "through_resume", "through_run"]

TABLE = "out.csv"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\+00:00|Z)?")
# said once per installation, when the kernels are first compiled: not a function of the data
_COMPILING = re.compile(r"microagg: compiling the kernels[^\n]*\n")


@dataclass(frozen=True)
class Case:
    """One DP release: the declared ``schema`` and the recipe steps (mappings as a recipe
    holds them; the last is DP). ``dp`` says whether ``microagg dp`` can make it (one DP
    step); ``fmt`` is the input's format (csv, csv-bom: with a byte-order mark, parquet,
    xlsx, or sav with the value ``labels``)."""

    name: str
    schema: Schema
    steps: tuple[Mapping[str, Any], ...]
    fmt: str = "csv"
    # an SPSS input's value labels: column -> {code: label}
    labels: Mapping[str, Mapping[float, str]] = field(default_factory=dict)

    @property
    def dp(self) -> bool:
        return len(self.steps) == 1


@dataclass(frozen=True)
class Written:
    """What a path wrote and printed for one release."""

    code: int
    stdout: str
    stderr: str
    files: dict[str, bytes]  # every file but the input and the table, by name
    table: pd.DataFrame | None = field(repr=False)

    def side(self) -> tuple[Any, ...]:
        """Everything but the table, with dates set aside."""
        files = tuple(sorted((name, _DATE.sub("<date>", content.decode("utf-8", "replace")))
                             for name, content in self.files.items()))
        return (self.code, _DATE.sub("<date>", self.stdout),
                _DATE.sub("<date>", _COMPILING.sub("", self.stderr)), files)

    def privacy(self) -> dict[str, Any]:
        """The privacy report written beside the table."""
        name = next(n for n in self.files if n.endswith(".privacy.json"))
        return dict(json.loads(self.files[name]))


def _input(frame: pd.DataFrame, folder: Path, case: Case) -> Path:
    if case.fmt == "csv-bom":  # as a spreadsheet saves "CSV UTF-8"
        path = folder / "in.csv"
        frame.to_csv(path, index=False, encoding="utf-8-sig")
        return path
    path = folder / f"in.{case.fmt}"
    if case.fmt == "parquet":
        frame.to_parquet(path, index=False)
    elif case.fmt == "xlsx":
        frame.to_excel(path, index=False)
    elif case.fmt == "sav":
        import pyreadstat

        pyreadstat.write_sav(frame, str(path), variable_value_labels={
            name: dict(labels) for name, labels in case.labels.items()})
    else:
        frame.to_csv(path, index=False)
    return path


def _collect(folder: Path, code: int, stdout: str, stderr: str,
             table: str = TABLE) -> Written:
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())
             if p.is_file() and not p.name.startswith(("in.", "schema", "recipe"))
             and p.name != table}
    path = folder / table
    written = pd.read_csv(path) if path.exists() else None
    return Written(code, stdout, stderr, files, written)


def _cli(args: Sequence[str], folder: Path) -> tuple[int, str, str]:
    from microagg.cli.program import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.chdir(folder), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        code = main([str(a) for a in args])
    return code, stdout.getvalue(), stderr.getvalue()


def _options(step: Mapping[str, Any]) -> list[str]:
    """A DP step's parameters as ``microagg dp`` options."""
    out = ["--method", str(step["method"])]
    for name, value in step.items():
        if name in ("family", "method"):
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            out += [flag] if value else []
        elif name == "bounds":
            out += [flag, ",".join(f"{c}={lo}:{hi}" for c, (lo, hi) in value.items())]
        elif isinstance(value, list | tuple):
            out += [flag, ",".join(map(str, value))]
        else:
            out += [flag, str(value)]
    return out


def through_dp(case: Case, frame: pd.DataFrame, folder: Path) -> Written:
    """``microagg dp IN -o out.csv --schema schema.yaml … --report out.html``."""
    source = _input(frame, folder, case)
    case.schema.save(folder / "schema.yaml")
    code, stdout, stderr = _cli(["dp", source.name, "-o", TABLE, "--schema", "schema.yaml",
                                 "--report", "out.html", *_options(case.steps[0])], folder)
    return _collect(folder, code, stdout, stderr)


def through_run(case: Case, frame: pd.DataFrame, folder: Path) -> Written:
    """``microagg run recipe.yaml -o out.csv --report out.html`` of the recipe of the case's
    schema and steps on the input."""
    from microagg.recipe.model import Recipe, Step

    source = _input(frame, folder, case)
    recipe = Recipe(input=source, schema=case.schema,
                    steps=tuple(Step.of(s) for s in case.steps))
    (folder / "recipe.yaml").write_text(recipe.dumps(folder), encoding="utf-8")
    code, stdout, stderr = _cli(["run", "recipe.yaml", "-o", TABLE, "--report", "out.html"],
                                folder)
    return _collect(folder, code, stdout, stderr)


def through_app(case: Case, frame: pd.DataFrame, folder: Path) -> Written:
    """The web app's calls: the uploaded table read and its schema read off it
    (:func:`~microagg.data.schema.Schema.infer`, the roles suggested) with the user's edits
    declaring the case's roles, kinds, domains and missing values; the run begun with no
    seed; each step run; the files of the download tab (what it offers as the release)."""
    from microagg.recipe.model import Step
    from microagg.ui.state import (
        ColumnEdit,
        begin_run,
        build_schema,
        read_upload,
        write_downloads,
    )

    source = _input(frame, folder, case)
    table, inferred, _ = read_upload(source)
    edits = {a.name: ColumnEdit(role=a.role.value, kind=a.kind.value,
                                domain=", ".join(str(v) for v in a.domain or ()),
                                missing="" if a.missing is None else str(a.missing),
                                taxonomy=str(a.taxonomy) if a.taxonomy else None)
             for a in case.schema}
    schema = build_schema(inferred, edits)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            run = begin_run(source, table, schema, None, "matches-any")
            for step in case.steps:
                run = run.then(Step.of(step))
            files = write_downloads(run, source, "csv", "external")
    except MicroaggError as exc:  # what the app shows beside the field
        return Written(2, "", str(exc), {}, None)
    released = {p.name: p.read_bytes() for p in files.release if p != files.table}
    return Written(0, "", stderr.getvalue(), released, pd.read_csv(files.table))


def through_resume(case: Case, frame: pd.DataFrame, folder: Path) -> Written:
    """The web app's recipe card: the recipe of the case's schema and steps loaded back
    with its data file (:func:`~microagg.ui.resume.read_recipe`,
    :func:`~microagg.ui.resume.recipe_table`), its steps run again
    (:func:`~microagg.ui.resume.replay`) and the files of the download tab; what the card
    says (its notes) stands for stdout."""
    import shutil

    from microagg.recipe.model import Recipe, Step
    from microagg.ui.limits import Limits
    from microagg.ui.resume import read_recipe, recipe_table, replay
    from microagg.ui.state import Workspace, write_downloads

    source = _input(frame, folder, case)
    recipe = Recipe(input=source, schema=case.schema,
                    steps=tuple(Step.of(s) for s in case.steps))
    (folder / "recipe.yaml").write_text(recipe.dumps(folder), encoding="utf-8")
    (folder / "session").mkdir()
    space = Workspace(folder / "session")
    upload = folder / "upload.tmp"  # as the browser hands a file over
    shutil.copyfile(source, upload)
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            loaded = read_recipe(folder / "recipe.yaml", "recipe.yaml")
            table, _ = recipe_table(loaded, (upload, source.name), None, None, space,
                                    Limits())
            assert table is not None  # its data file was given
            resumed = replay(loaded, table.path, table.frame, space.folder)
            files = write_downloads(resumed.run, table.path, "csv", "external")
    except MicroaggError as exc:
        return Written(2, "", str(exc), {}, None)
    released = {p.name: p.read_bytes() for p in files.release if p != files.table}
    return Written(0, "\n".join(resumed.notes), stderr.getvalue(), released,
                   pd.read_csv(files.table))


PATHS: dict[str, Callable[[Case, pd.DataFrame, Path], Written]] = {
    "dp": through_dp, "run": through_run, "app": through_app}
"""Every path a DP release can take, by name."""

RELOADED: dict[str, Callable[[Case, pd.DataFrame, Path], Written]] = {
    "resume": through_resume}
"""The paths that make a release again from its recipe, by name: they run the steps the
app's path runs, so the tests audit them on a few cases rather than all."""


def release(path: str, case: Case, frame: pd.DataFrame) -> Written:
    """The release of ``frame`` by ``case`` through ``path``, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="microagg-audit-") as folder:
        return {**PATHS, **RELOADED}[path](case, frame, Path(folder))


def side_outputs(path: str, case: Case, neighbours: Sequence[pd.DataFrame],
                 runs: int = 2) -> set[tuple[Any, ...]]:
    """The distinct side outputs (:meth:`Written.side`) of ``runs`` releases of each of the
    ``neighbours`` through ``path``: one element when nothing but the table tells them
    apart."""
    return {release(path, case, frame).side() for frame in neighbours for _ in range(runs)}


def table_audit(path: str, case: Case, neighbours: Sequence[pd.DataFrame],
                event: Callable[[pd.DataFrame], bool], trials: int
                ) -> tuple[AuditResult, float]:
    """Count ``event`` on the table written by ``trials`` releases of each neighbour through
    ``path``; returns the counts (the table in input order is not written by any path, so
    its counts repeat the written ones) and the ε the privacy report claims."""
    counts, claimed = [], np.inf
    for frame in neighbours:
        hits = 0
        for _ in range(trials):
            written = release(path, case, frame)
            if written.code != 0 or written.table is None:
                raise AssertionError(f"{path}: the release failed: {written.stderr}")
            hits += bool(event(written.table))
            claimed = float(written.privacy()["epsilon"])
        counts.append(hits)
    pair = (counts[0], counts[1])
    return AuditResult(trials, pair, pair), claimed
