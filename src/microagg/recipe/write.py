"""The files of a recipe run, written together or not at all: the released table ``OUT``,
its report ``OUT.report.json`` (:mod:`microagg.recipe.report`), the recipe as run
``OUT.recipe.yaml``, optionally the report as HTML and, when a step is differentially
private, ``OUT.privacy.json``: the table's guarantee and each DP step's privacy report.

What these files hold is decided by :mod:`microagg.release.reports.disclosure`. Without a DP step
they are the data owner's, as every k-anonymous release's report is: the whole report (risk before
and after each step, utility), and a recipe that reproduces the run byte for byte (the input's
SHA-256 and the seed included). With a DP step they go beside a DP release, so each holds its
public view only: the steps, their parameters and contexts, each DP step's privacy report and
the table's guarantee; the recipe without the input's hash, the seed or a category read off
the data, so that running it again repeats every step and draws fresh noise. The owner's
report, with every figure, is written only when asked for (``owner``: ``--owner-report``),
to a file of its own.

``microagg run`` and the web app write through :func:`write_run`, so a recipe downloaded from
the app and run again applies the same steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from microagg.data.atomic import beside
from microagg.data.io import atomic_paths, json_text, output_format, write_frame
from microagg.options import ReportKind
from microagg.recipe.families import adapter
from microagg.recipe.model import Recipe
from microagg.recipe.report import RecipeReport, privacy_of, recipe_html, recipe_report
from microagg.recipe.runner import RecipeRun
from microagg.release.reports.disclosure import Audience, view
from microagg.release.reports.report import PrivacyReport
from microagg.release.reports.sidecar import sidecar_path

__all__ = ["RunFiles", "owner_report_path", "privacy_of", "published", "recipe_document",
           "recipe_path", "recipe_text", "run_files", "write_into", "write_run"]

PRIVATE_RECIPE_HEADER = (
    "# The recipe of a differentially private release, as published beside it: the steps and\n"
    "# what the data owner declared, without the input's hash, the seed or any category read\n"
    "# off the data. `microagg run` applies the same steps again and draws fresh noise.\n")


def recipe_path(output: Path) -> Path:
    """Where the recipe as run goes: ``OUT.recipe.yaml``."""
    return beside(output, ".recipe.yaml")


def owner_report_path(output: Path) -> Path:
    """The usual name of the owner's report of a run to ``output``: ``OUT.owner.json``."""
    return beside(output, ".owner.json")


@dataclass(frozen=True)
class RunFiles:
    """The paths a run writes (``privacy``, ``html`` and ``owner`` may be absent)."""

    table: Path
    report: Path
    recipe: Path
    privacy: Path | None
    html: Path | None
    owner: Path | None = None

    @property
    def all(self) -> list[Path]:
        return [p for p in (self.table, self.report, self.recipe, self.privacy, self.html,
                            self.owner) if p is not None]

    @property
    def release(self) -> list[Path]:
        """The files that go with the release (all but the owner's report)."""
        return [p for p in self.all if p != self.owner]


def run_files(recipe: Recipe, output: Path, html: Path | None = None,
              owner: Path | None = None) -> RunFiles:
    """The files :func:`write_run` writes for ``recipe`` to ``output`` (known before the
    run, so a command reserves them before any work); ``owner``: the owner's report."""
    private = any(adapter(s.family).private for s in recipe.steps)
    return RunFiles(output, sidecar_path(output), recipe_path(output),
                    sidecar_path(output, private=True) if private else None, html, owner)


def published(run: RecipeRun) -> Audience:
    """Who may read the files a run writes by default: the public after a DP step, the data
    owner otherwise."""
    return Audience.PUBLIC if run.private else Audience.OWNER


def recipe_document(run: RecipeRun, base_dir: Path | None = None,
                    audience: Audience | None = None) -> dict[str, Any]:
    """The recipe as run (:meth:`~microagg.recipe.model.Recipe.to_dict`) as ``audience``
    (default :func:`published`) may see it. For the public, besides what
    :mod:`~microagg.release.reports.disclosure` withholds, the schema keeps the attributes of the
    columns the release writes and of the columns a step names: what a column the release
    drops was read as (its kind, from its values) is not published; and a DP step that
    protected the default columns names them (the released columns' names are public), so
    that the steps apply to the same columns again."""
    audience = published(run) if audience is None else audience
    document = run.recipe.to_dict(base_dir)
    if audience is Audience.PUBLIC:
        named = set(map(str, run.frame.columns))
        for index, result in enumerate(run.results):
            step = document["steps"][index]
            report = result.release.report
            if isinstance(report, PrivacyReport) and "columns" not in step:
                step["columns"] = list(report.columns)
            named |= _names(step)
        attributes = (document.get("schema") or {}).get("attributes")
        if attributes is not None:  # and the households a release counts, by their role
            document["schema"]["attributes"] = {
                **{n: {"role": "household"} for n, a in attributes.items()
                   if a.get("role") == "household" and n not in named},
                **{n: a for n, a in attributes.items() if n in named}}
    return view(document, audience)


def _names(step: Mapping[str, Any]) -> set[str]:
    """The column names a step's parameters and options name (lists of names, mappings keyed
    by column)."""
    out: set[str] = set()
    for key, value in step.items():
        if key in ("family", "method", "protects"):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            out |= set(value)
        elif isinstance(value, Mapping):
            out |= {str(k) for k in value}
    return out


def recipe_text(run: RecipeRun, base_dir: Path | None = None,
                audience: Audience | None = None) -> str:
    """The recipe as run, as YAML: :func:`recipe_document` for ``audience``."""
    audience = published(run) if audience is None else audience
    text = yaml.safe_dump(recipe_document(run, base_dir, audience), sort_keys=False,
                          allow_unicode=True, default_flow_style=None, width=100)
    return (PRIVATE_RECIPE_HEADER if audience is Audience.PUBLIC else "") + text


def write_into(run: RecipeRun, files: RunFiles, temporaries: Mapping[Path, Path], *,
               kind: ReportKind | str = ReportKind.INTERNAL) -> RecipeReport:
    """Write the files of ``run`` into the ``temporaries`` of ``files`` (each target's
    temporary file, renamed into place by the caller); returns the report (every figure:
    what is written is its view for :func:`published`)."""
    from microagg.data.formats import carry_labels

    audience = published(run)
    # the risk is the owner's: measured only for the owner's files
    report = recipe_report(run, measured=audience is Audience.OWNER or files.owner is not None)
    whole = report.to_dict()
    write_frame(carry_labels(run.original, run.frame, private=run.private),
                temporaries[files.table],
                output_format(files.table), release=True)
    shown = view(whole, audience)
    if "recipe" in shown:
        shown["recipe"] = recipe_document(run, None, audience)
    temporaries[files.report].write_text(json_text(shown), encoding="utf-8")
    temporaries[files.recipe].write_text(recipe_text(run, files.table.parent, audience),
                                         encoding="utf-8")
    if files.privacy is not None:
        temporaries[files.privacy].write_text(json_text(report.privacy), encoding="utf-8")
    if files.html is not None:
        temporaries[files.html].write_text(recipe_html(report, kind, audience),
                                           encoding="utf-8")
    if files.owner is not None:
        temporaries[files.owner].write_text(json_text(whole), encoding="utf-8")
    return report


def write_run(run: RecipeRun, output: Path, *, html: Path | None = None,
              kind: ReportKind | str = ReportKind.INTERNAL, sources: list[Path] | None = None,
              owner: Path | None = None) -> tuple[RunFiles, RecipeReport]:
    """Write the files of ``run`` (module docstring) to ``output`` and beside it, all or
    nothing, never over one of ``sources``; ``owner`` names the owner's report, with every
    figure. Returns the paths and the report."""
    files = run_files(run.recipe, output, html, owner)
    output_format(output)
    with atomic_paths(files.all, sources or []) as temporaries:
        report = write_into(run, files, dict(zip(files.all, temporaries, strict=True)),
                            kind=kind)
    return files, report

