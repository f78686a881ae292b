"""The files of a recipe run, written together or not at all: the released table ``OUT``,
its report ``OUT.report.json`` (:mod:`microagg.recipe.report`), the recipe as run
``OUT.recipe.yaml`` (which reproduces the run), optionally the report as HTML and, when a
step is differentially private, ``OUT.privacy.json``: the privacy record of the first DP step,
whose guarantee the table carries, with how the steps around it affect it.

``microagg run`` and the web app write through :func:`write_run`, so a recipe downloaded from
the app and run again writes the same bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microagg.data.io import atomic_paths, json_text, output_format, write_frame
from microagg.options import ReportKind
from microagg.recipe.families import adapter
from microagg.recipe.model import Recipe
from microagg.recipe.report import RecipeReport, recipe_html, recipe_report
from microagg.recipe.runner import RecipeRun
from microagg.release.sidecar import PrivacyRecord, sidecar_path

__all__ = ["RunFiles", "privacy_of", "recipe_path", "run_files", "write_into", "write_run"]


def recipe_path(output: Path) -> Path:
    """Where the recipe as run goes: ``OUT.recipe.yaml``."""
    return output.with_name(output.name + ".recipe.yaml")


@dataclass(frozen=True)
class RunFiles:
    """The paths a run writes (``privacy`` and ``html`` may be absent)."""

    table: Path
    report: Path
    recipe: Path
    privacy: Path | None
    html: Path | None

    @property
    def all(self) -> list[Path]:
        return [p for p in (self.table, self.report, self.recipe, self.privacy, self.html)
                if p is not None]


def run_files(recipe: Recipe, output: Path, html: Path | None = None) -> RunFiles:
    """The files :func:`write_run` writes for ``recipe`` to ``output`` (known before the
    run, so a command reserves them before any work)."""
    private = any(adapter(s.family).private for s in recipe.steps)
    return RunFiles(output, sidecar_path(output), recipe_path(output),
                    sidecar_path(output, private=True) if private else None, html)


def privacy_of(run: RecipeRun) -> dict[str, Any] | None:
    """The published privacy record of ``run``: its first DP step's, with the recipe's
    context (``recipe``: the step, what the steps before it do to its guarantee, and the
    steps after it, post-processing)."""
    for index, result in enumerate(run.results):
        if isinstance(result.record, PrivacyRecord) and result.context is not None:
            after = [r.step.describe() for r in run.results[index + 1:]]
            return {**result.record.to_dict(),
                    "recipe": {"step": index + 1, "steps": len(run.results),
                               "context": result.context.statement,
                               "post_processing": after,
                               "guarantee": run.guarantee}}
    return None


def write_into(run: RecipeRun, files: RunFiles, temporaries: Mapping[Path, Path], *,
               kind: ReportKind | str = ReportKind.INTERNAL) -> RecipeReport:
    """Write the files of ``run`` into the ``temporaries`` of ``files`` (each target's
    temporary file, renamed into place by the caller); returns the report."""
    from microagg.data.formats import carry_labels

    report = recipe_report(run)
    write_frame(carry_labels(run.original, run.frame), temporaries[files.table],
                output_format(files.table), release=True)
    temporaries[files.report].write_text(json_text(report.to_dict()), encoding="utf-8")
    temporaries[files.recipe].write_text(run.recipe.dumps(files.table.parent),
                                         encoding="utf-8")
    if files.privacy is not None:
        temporaries[files.privacy].write_text(json_text(privacy_of(run)), encoding="utf-8")
    if files.html is not None:
        temporaries[files.html].write_text(recipe_html(report, kind), encoding="utf-8")
    return report


def write_run(run: RecipeRun, output: Path, *, html: Path | None = None,
              kind: ReportKind | str = ReportKind.INTERNAL, sources: list[Path] | None = None
              ) -> tuple[RunFiles, RecipeReport]:
    """Write the files of ``run`` (module docstring) to ``output`` and beside it, all or
    nothing, never over one of ``sources``; returns the paths and the report."""
    files = run_files(run.recipe, output, html)
    output_format(output)
    with atomic_paths(files.all, sources or []) as temporaries:
        report = write_into(run, files, dict(zip(files.all, temporaries, strict=True)),
                            kind=kind)
    return files, report
