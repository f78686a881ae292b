"""A recipe on a Dask cluster (``microagg run --engine dask``): its steps in order, each a
release of :mod:`microagg.at_scale.release` that reads the data set the step before it wrote,
and the risk of the key variables before the recipe and after every step, by the group-by of
:func:`~microagg.at_scale.risk.risk_at_scale`.

Where the steps' data sets go: step ``i`` writes a data set under a hidden working prefix
beside the output (``.OUT.microagg-<pid>-<random>.tmp/step-i``, in the output's folder or
bucket), which the next step's tasks read themselves; no folder is shared. Once the last
step's data set is written and its risk measured, it is put in place as the output together
with the files beside it (the report, the recipe as run), in one block that no signal cuts:
a local folder is renamed, a URL's parts are copied and its ``_SUCCESS`` marker written
(:mod:`~microagg.at_scale.storage`). The working prefix is deleted when the run ends, whether
it succeeded, failed or was interrupted; a run killed hard leaves it (a local one is deleted
by the next run to the same output, one at a URL may be deleted by hand).

What runs there: the methods the cluster runs (:func:`~microagg.at_scale.release.release_refusal`):
block MDAV, correlated and multiplicative noise, top and bottom coding, global recoding, local
suppression, PRAM and targeted record swapping. A recipe that holds a differentially private
step, a t-closeness step, an ``attacks`` section or ``read`` options is refused before any step
runs, naming what to do instead. Every step of a seeded recipe draws from its own stream
(:func:`~microagg.recipe.families.step_seed`), as on one machine; the deterministic steps
(recoding, suppression, top and bottom coding) give the table one machine's ``microagg run``
gives, value for value.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import microagg.interrupts as interrupts
from microagg.at_scale.dataset import Dataset, open_dataset, remove_folder, replace_folder
from microagg.at_scale.release import release_at_scale, release_refusal
from microagg.at_scale.risk import risk_at_scale
from microagg.at_scale.storage import Location, public_url, remove_prefix, temporary_prefix_of
from microagg.data.atomic import temporary_prefix
from microagg.data.schema import Role, Schema
from microagg.errors import InputError, ParameterError
from microagg.recipe.families import step_seed
from microagg.recipe.model import Recipe, Step
from microagg.recipe.risk import DEFAULT_VIOLATION_KS, risk_keys

__all__ = ["RecipeAtScale", "StepAtScale", "recipe_refusal", "run_recipe_at_scale"]

GUARANTEE = ("no differentially private step: the guarantees are those of each step's report "
             "(k-anonymity over the masked columns, or none for a masking)")


@dataclass(frozen=True)
class StepAtScale:
    """One step run on the cluster: what the recipe says of it, the seconds it took, the
    report of the module that ran it and the risk of the key variables after it."""

    step: int
    family: str
    method: str
    parameters: dict[str, Any]
    options: dict[str, Any]
    seconds: float
    report: dict[str, Any]
    risk_after: dict[str, Any]


@dataclass(frozen=True)
class RecipeAtScale:
    """A recipe run on the cluster: its input and output (as they may be shown), the records
    and partitions read, the key variables of its risk, the risk before the first step, every
    step (:class:`StepAtScale`) and the guarantee."""

    input: str
    output: str
    records: int
    partitions: int
    keys: list[str]
    weight: str | None
    risk_before: dict[str, Any]
    steps: list[StepAtScale]
    guarantee: str = GUARANTEE
    engine: str = "dask"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the report written beside the output)."""
        return {"engine": self.engine, "input": self.input, "output": self.output,
                "records": self.records, "partitions": self.partitions, "keys": self.keys,
                "weight": self.weight, "risk_before": self.risk_before,
                "steps": [vars(s) for s in self.steps], "guarantee": self.guarantee,
                "notes": self.notes}


def _step_refusal(step: Step) -> str | None:
    """Why ``step`` cannot run on the cluster, or ``None``."""
    from microagg.release.methods import Family

    if step.family is Family.T_CLOSENESS:
        return ("t-closeness runs on one machine: run the steps before it with `run --engine "
                "dask`, then `microagg tclose` on a machine that holds its output")
    if step.options.get("drop_incomplete"):
        return "drop_incomplete applies on one machine only: drop those records beforehand"
    return release_refusal(step.method())


def recipe_refusal(recipe: Recipe) -> str | None:
    """Why ``recipe`` cannot run on a Dask cluster, or ``None`` (module docstring).

    Parameters
    ----------
    recipe : Recipe
        The recipe.

    Returns
    -------
    str or None
        The first reason, naming the step and what to do instead.

    Examples
    --------
    >>> from microagg.recipe import Recipe
    >>> recode = {"family": "keys", "method": "global-recoding", "breaks": {"age": [0, 50, 99]}}
    >>> recipe_refusal(Recipe(steps=[recode])) is None
    True
    >>> print(recipe_refusal(Recipe(steps=[recode, {"family": "dp", "method": "laplace",
    ...                                               "epsilon": 1.0}])))
    step 2 (laplace): a differentially private release has its own path and public report: \
run `microagg dp --engine dask` on its input
    """
    if recipe.attacks is not None:
        return ("the recipe's attacks are measured on one machine: remove its 'attacks' "
                "section, then run `microagg evaluate ORIGINAL RELEASE --attacks ...` on a "
                "machine that holds both")
    if dict(recipe.read):
        return ("the recipe's 'read' options are the local CSV reader's: the cluster reads "
                "Parquet data sets and plain CSV files; remove 'read' (or convert the input "
                "to Parquet)")
    for number, step in enumerate(recipe.steps, start=1):
        refusal = _step_refusal(step)
        if refusal:
            return f"step {number} ({step.name}): {refusal}"
    return None


def run_recipe_at_scale(client: Any, recipe: Recipe, dataset: Dataset,
                        output: Path | Location, *,
                        storage_options: Mapping[str, Any] | None = None,
                        progress: Callable[[int], None] | None = None,
                        said: Callable[[str], None] | None = None,
                        beside: Callable[[RecipeAtScale], Mapping[str, str]] | None = None,
                        keep: Sequence[str | Path] = ()) -> RecipeAtScale:
    """Run the steps of ``recipe`` on ``dataset`` and put the last step's data set in place
    as ``output``, with the files ``beside`` it (module docstring).

    Parameters
    ----------
    client
        A ``distributed.Client``.
    recipe : Recipe
        The recipe (its input is ``dataset``).
    dataset : Dataset
        The input's partitions (:func:`~microagg.at_scale.dataset.open_dataset`).
    output : Path or Location
        The output data set, checked
        (:func:`~microagg.at_scale.dataset.check_dataset_output`).
    storage_options : mapping, optional
        The storage options of a URL's file system (the working prefix's too).
    progress : callable, optional
        Called with the records each step has written so far.
    said : callable, optional
        Told each step as it starts ("step 2: ...").
    beside : callable, optional
        Given the run's report, the texts to write beside the output, by suffix
        (``{".report.json": …}``): written with the data set, all or none of them.
    keep : sequence of str or Path
        The command's inputs: a working folder of a run that died is not deleted when it is
        one of them.

    Returns
    -------
    RecipeAtScale
        The run's report.

    Raises
    ------
    ParameterError
        For a recipe the cluster cannot run (:func:`recipe_refusal`), before any step.
    """
    refusal = recipe_refusal(recipe)
    if refusal:
        raise ParameterError("engine", f"dask cannot run this recipe: {refusal}")
    if not recipe.steps:
        raise InputError("the recipe has no step")
    schema = _present(recipe.schema, dataset)
    named = tuple(dict.fromkeys(str(key) for step in recipe.steps
                                for key in step.options.get("keys") or ()))
    keys = risk_keys(schema, pd.DataFrame(columns=list(dataset.columns)), named)
    weights = [a.name for a in schema or () if a.role is Role.WEIGHT]
    weight = weights[0] if len(weights) == 1 else None
    before = _risk(client, dataset, keys, weight, recipe)
    steps: list[StepAtScale] = []
    source, records, partitions = dataset.source, dataset.n, len(dataset.pieces)
    with _working(output, keep) as place:
        for index, step in enumerate(recipe.steps):
            if said is not None:
                said(f"step {index + 1}: {step.describe()}")
            target = place(f"step-{index + 1}")
            method = step.method()
            started = time.perf_counter()
            report = release_at_scale(
                client, method, dataset, target, columns=_columns(step), schema=schema,
                seed=step_seed(recipe.seed, index), storage_options=storage_options,
                progress=progress, refuse_unchanged=False)
            interrupts.unwrote([target])  # a working data set, not an output
            seconds = time.perf_counter() - started
            dataset = open_dataset(target, storage_options=storage_options)
            schema = _present(method.output_schema(schema) if schema is not None else None,
                              dataset)
            held = [key for key in keys if key in dataset.columns]
            after = _risk(client, dataset, held, weight if weight in dataset.columns else None,
                          recipe)
            entry = step.to_dict()
            steps.append(StepAtScale(
                index + 1, entry.pop("family"), entry.pop("method"),
                {k: v for k, v in entry.items() if k in step.parameters},
                {k: v for k, v in entry.items() if k in step.options}, seconds,
                report.to_dict(), after))
        shown = public_url(str(output)) if isinstance(output, Location) else str(output)
        result = RecipeAtScale(source, shown, records, partitions, keys, weight, before, steps)
        _put_in_place(target, output, {} if beside is None else beside(result))
    return result


def _put_in_place(last: Path | Location, output: Path | Location,
                  texts: Mapping[str, str]) -> None:
    """The last step's data set in place as ``output`` and ``texts`` beside it (suffix ->
    text), in one block no signal cuts: a local folder renamed, a URL's parts copied and
    its ``_SUCCESS`` written (:func:`~microagg.at_scale.storage.commit`), each text written
    whole."""
    from microagg.at_scale.storage import PART, commit, write_beside
    from microagg.data.io import write_text

    with interrupts.held():
        if isinstance(output, Location):
            assert isinstance(last, Location)
            fs = last.filesystem()
            fs.invalidate_cache()
            parts = [p for p in fs.ls(last.inner(), detail=False)
                     if PART.fullmatch(p.rstrip("/").rpartition("/")[2])]
            commit(output, last.inner(), len(parts))
            written: list[str | Path] = [output.url]
            for suffix, text in texts.items():
                written.append(write_beside(output, suffix, text).url)
        else:
            assert isinstance(last, Path)
            replace_folder(last, output)
            written = [output]
            for suffix, text in texts.items():
                path = output.with_name(output.name + suffix)
                write_text(path, text)
                written.append(path)
        interrupts.wrote(written)


def _present(schema: Schema | None, dataset: Dataset) -> Schema | None:
    """``schema`` restricted to the data set's columns."""
    if schema is None:
        return None
    return schema.select([name for name in schema.names if name in dataset.columns])


def _columns(step: Step) -> list[str] | None:
    """The columns a step names (``keys`` of a method for keys, ``columns`` of the others)."""
    chosen = step.options.get("keys") or step.options.get("columns")
    return [str(c) for c in chosen] if chosen else None


def _risk(client: Any, dataset: Dataset, keys: list[str], weight: str | None,
          recipe: Recipe) -> dict[str, Any]:
    """The risk of ``keys`` over ``dataset`` (its JSON form), or why it was not measured."""
    if not keys:
        return {"not_measured": "no key variable: declare quasi-identifiers in the schema"}
    return risk_at_scale(client, dataset, keys, weight=weight, missing=recipe.missing,
                         k=DEFAULT_VIOLATION_KS).to_dict()


@contextlib.contextmanager
def _working(output: Path | Location, keep: Sequence[str | Path]) -> Any:
    """A function from a step's name to where its data set goes, under a hidden working
    prefix beside ``output`` (in the same folder, or bucket and prefix, and with the same
    credentials) that is deleted when the block ends (module docstring)."""
    if isinstance(output, Location):
        prefix = temporary_prefix_of(output)
        hidden = prefix.rpartition("/")[2]
        above = (output.given or output.url).rstrip("/").rpartition("/")[0]
        ended = False

        def remote(name: str) -> Location:
            given = f"{above}/{hidden}/{name}"
            return Location(public_url(given), given, dict(output.options))

        try:
            yield remote
            ended = True
        finally:
            with interrupts.held():  # no task writes any more once the run has ended
                remove_prefix(output, prefix, patience=0.0 if ended else 2.0)
        return
    from microagg.data.atomic import remove_stale_temporaries

    parent = output.parent if str(output.parent) else Path(".")
    remove_stale_temporaries(output, lambda stale: remove_folder(stale), keep=keep)
    folder: Path | None = None
    try:
        with interrupts.held():  # the folder is made and recorded, or not made
            folder = Path(tempfile.mkdtemp(prefix=f"{temporary_prefix(output)}{os.getpid()}-",
                                           suffix=".tmp", dir=parent))
        work = folder
        yield lambda name: work / name
    finally:
        if folder is not None:
            with interrupts.held():
                remove_folder(folder)
