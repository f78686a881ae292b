"""A recipe applied: each step's release, its record and the risk after it, with undo.

A :class:`RecipeRun` holds the input table once and the output of every step (each step
reads the one before), so that :meth:`RecipeRun.undo` drops the last step without running
anything, and :meth:`RecipeRun.then` applies one more. Step ``i`` of a seeded recipe draws
from its own stream (:func:`~microagg.recipe.families.step_seed`): the same recipe on the
same input gives the same tables, byte for byte, however it was built step by step.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.recipe.composition import (
    DPContext,
    RecipePrivacy,
    check_steps,
    dp_context,
    recipe_guarantee,
    recipe_privacy,
)
from microagg.recipe.families import adapter, step_seed
from microagg.recipe.model import Recipe, Step
from microagg.recipe.risk import RiskSummary, measure_risk, risk_keys, risk_weight
from microagg.release.base import Release
from microagg.release.reports.report import PrivacyReport
from microagg.release.reports.sidecar import InputFile, PrivacyRecord, ReleaseRecord

__all__ = ["RecipeRun", "StepResult"]

Progress = Callable[[str], None]


class Measured:
    """The risk of one table over its key variables, measured when first asked for: the
    owner's figure, which a DP recipe never publishes, so that whether it can be measured on
    this data never decides whether the release is made."""

    def __init__(self, frame: pd.DataFrame, schema: Any, missing: Any,
                 named: tuple[str, ...] = ()) -> None:
        self._args = (frame, schema, missing, named)
        self._value: RiskSummary | None = None

    def value(self) -> RiskSummary:
        if self._value is None:
            frame, schema, missing, named = self._args
            self._value = measure_risk(frame, risk_keys(schema, frame, named),
                                       missing=missing, weight=risk_weight(schema, frame))
        return self._value


@dataclass(frozen=True, eq=False)
class StepResult:
    """One step applied: the step, the release it made (table and typed report), its record
    (``OUT.report.json`` or, for a DP step, ``OUT.privacy.json`` content), the risk of its
    output over the key variables, how the steps before it affect a DP guarantee, the
    warnings the release raised, the seconds it took and the schema of its output
    (:meth:`~microagg.release.methods.base.ReleaseMethod.output_schema`)."""

    step: Step
    release: Release[Any]
    record: ReleaseRecord | PrivacyRecord
    measured: Measured
    context: DPContext | None
    warnings: tuple[str, ...]
    seconds: float
    schema: Schema | None = None  # the schema of its output, which the next step reads

    @property
    def frame(self) -> pd.DataFrame:
        return self.release.frame

    @property
    def risk(self) -> RiskSummary:
        """The risk of the step's output over the key variables (measured on first use)."""
        return self.measured.value()

    @property
    def rows_aligned(self) -> bool:
        """Whether the output's rows are the step input's, in order."""
        return isinstance(self.record, ReleaseRecord)


@dataclass(frozen=True, eq=False)
class RecipeRun:
    """The input table, its risk, and the results of the recipe's steps so far."""

    recipe: Recipe
    original: pd.DataFrame
    source: InputFile
    measured: Measured
    results: tuple[StepResult, ...] = ()
    named_keys: tuple[str, ...] = ()  # the keys the recipe's steps name, for its risk
    control: pd.DataFrame | None = None  # the control records of the recipe's attacks

    @property
    def risk_before(self) -> RiskSummary:
        """The risk of the input over the key variables (measured on first use)."""
        return self.measured.value()

    @classmethod
    def start(cls, recipe: Recipe, frame: pd.DataFrame | None = None, *,
              source: Path | None = None) -> RecipeRun:
        """A run of no step yet on ``frame`` (default: the recipe's input, read with its
        dialect); ``source`` is the file ``frame`` was read from, for the report. The steps
        of ``recipe`` are applied by :meth:`then` (:meth:`Recipe.run` applies them all);
        whether its DP steps compose is checked first, on the steps alone
        (:func:`~microagg.recipe.composition.check_steps`), and the control records of its
        ``attacks`` section are read and checked before any step runs."""
        check_steps(recipe.steps)
        if frame is None:
            if recipe.input is None:
                raise InputError("the recipe names no input: give the table")
            from microagg.data.io import read_table

            frame = read_table(recipe.input, **dict(recipe.read))
            source = recipe.input if source is None else source
        entry = InputFile.of(source)
        if recipe.input_sha256 and entry.sha256 and entry.sha256 != recipe.input_sha256:
            warnings.warn(f"{entry.name} is not the file the recipe was made on (its SHA-256 "
                          "differs): the release will differ from the one the recipe "
                          "reproduces", UserWarning, stacklevel=2)
        named = tuple(dict.fromkeys(str(key) for step in recipe.steps
                                    for key in step.options.get("keys") or ()))
        control = None
        if recipe.attacks is not None:
            recipe.attacks.check(list(map(str, frame.columns)))
            control = recipe.attacks.read_control(frame, recipe.read, recipe.schema)
        recipe = replace(recipe, steps=(), input=source or recipe.input,
                         input_sha256=entry.sha256 or recipe.input_sha256)
        return cls(recipe, frame, entry, Measured(frame, recipe.schema, recipe.missing, named),
                   named_keys=named, control=control)

    @property
    def frame(self) -> pd.DataFrame:
        """The table as the last step left it (the input before any step)."""
        return self.results[-1].frame if self.results else self.original

    def then(self, step: Step | dict[str, Any], progress: Progress | None = None,
             records: Callable[[int], None] | None = None) -> RecipeRun:
        """This run with one more step applied to :attr:`frame`; ``progress`` is told the
        step, ``records`` the records its method has processed so far (the families that
        count them: k-anonymity, t-closeness, DP)."""
        step = step if isinstance(step, Step) else Step.of(step)
        before = self.recipe.steps
        index = len(before)
        context = dp_context(step, before)
        if progress is not None:
            progress(f"step {index + 1}: {step.describe()}")
        family = adapter(step.family)
        source = self.source if index == 0 else InputFile(f"the output of step {index}")
        method = step.method()
        started = time.perf_counter()
        applied = family.apply(method, self._step_input(), self.schema, step.options,
                               step_seed(self.recipe.seed, index), source, records)
        seconds = time.perf_counter() - started
        schema = method.output_schema(self.schema) if self.schema is not None else None
        measured = Measured(applied.release.frame, schema, self.recipe.missing,
                            self.named_keys)
        result = StepResult(step, applied.release, applied.record, measured, context,
                            applied.warnings, seconds, schema)
        return replace(self, recipe=replace(self.recipe, steps=(*before, step)),
                       results=(*self.results, result))

    @property
    def schema(self) -> Schema | None:
        """The schema of :attr:`frame`: the recipe's, as the steps so far changed its kinds
        (a column recoded to intervals is ordinal from then on)."""
        return self.results[-1].schema if self.results else self.recipe.schema

    def _step_input(self) -> pd.DataFrame:
        """:attr:`frame` with what the input file said about how its cells are written (its
        CSV dialect, its SPSS/Stata labels), so that a later step reads a column the steps
        before it carried exactly as the first step would."""
        from microagg.data.formats import LABELS_KEY
        from microagg.data.io import DIALECT_KEY

        frame = self.frame
        said = {k: v for k, v in self.original.attrs.items()
                if k in (DIALECT_KEY, LABELS_KEY) and k not in frame.attrs}
        if said:
            frame = frame.copy(deep=False)
            frame.attrs.update(said)
        return frame

    def undo(self) -> RecipeRun:
        """This run without its last step (nothing is run again)."""
        if not self.results:
            raise InputError("no step to undo")
        return replace(self, recipe=self.recipe.undo(), results=self.results[:-1])

    @property
    def rows_aligned(self) -> bool:
        """Whether the final table's rows are the input's, in order (no DP step, no row
        dropped)."""
        return all(r.rows_aligned for r in self.results) and len(self.frame) == len(
            self.original)

    @property
    def private(self) -> bool:
        """Whether a step is differentially private: the files written beside the release
        then hold public figures only (:mod:`microagg.release.reports.disclosure`)."""
        return any(isinstance(r.record, PrivacyRecord) for r in self.results)

    @property
    def privacy(self) -> RecipePrivacy | None:
        """The guarantee of the table (:func:`~microagg.recipe.composition.recipe_privacy`);
        ``None`` without a DP step."""
        return recipe_privacy(self.recipe.steps, self._reports())

    @property
    def guarantee(self) -> str:
        return recipe_guarantee(self.recipe.steps, self._reports())

    def _reports(self) -> list[PrivacyReport | None]:
        return [r.release.report if isinstance(r.release.report, PrivacyReport) else None
                for r in self.results]
