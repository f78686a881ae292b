"""What the steps of a recipe do to the guarantee of differential privacy.

A DP mechanism M is ε-DP with respect to *its input*: two tables that differ in one record
give outputs whose probabilities differ by at most e^ε. In a recipe its input is what the
steps before it left, and microagg follows, step by step, which columns of that table still
hold values of the recipe's input that no DP step protected (*raw* columns) and whether one
raw row may depend on several input records (Dwork and Roth 2014: Prop. 2.1 for
post-processing, Thm 3.16 for sequential composition, §2.3 for why a transformation that mixes
records breaks the neighbouring relation):

1. **Before any DP step** every column is raw. Steps that transform each record on its own by
   public parameters (top coding at a declared value) keep two tables that differ in one
   record one record apart, so the first DP step is ε-DP with respect to the input. Global
   recoding is such a map when it is fixed in advance and total: a level of a declared
   taxonomy (a value that is no leaf lies outside the declared universe), or intervals whose
   outer breaks are -inf and inf (finite outer breaks refuse a value beyond them, so whether
   the step runs would follow one record's value). A step
   that reads other records (a partition, a quantile, a frequency:
   :meth:`~microagg.release.methods.base.ReleaseMethod.reads_other_records`) mixes them: a DP
   step after it protects the masked table, not the input, and is refused unless it says
   ``protects: step-input``.
2. **After a DP step**, the raw columns are those it carried (copied unchanged). When there
   are none, every later step, DP or not, is post-processing: it reads only DP output and
   spends nothing more of the input's privacy (its own ε protects that output).
3. **A DP step that reads raw columns after another DP step** (the earlier step carried them)
   reads the input again: its ε adds to the earlier one's (sequential composition), and the
   table is (ε₁ + ε₂)-DP when it protects or drops every raw column. Composing needs one unit
   of privacy (the same household bound). A step that reads other records while raw columns
   remain mixes them again, as in case 1.

The table's guarantee (:func:`recipe_privacy`) is the weakest one: ε is the sum over the DP
steps that read raw data, the guarantee holds for the input only if each of them does, a raw
column left in the released table makes it not differentially private, and whatever weakens
one of those steps (a seed, domains from the data, linked columns …) weakens the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from microagg.errors import PrivacyError
from microagg.recipe.families import adapter
from microagg.recipe.model import Protects, Step
from microagg.release.dp.unit import GROUPED
from microagg.release.reports.report import GuaranteeScope, PrivacyReport

__all__ = ["DPContext", "RecipePrivacy", "check_steps", "dp_context", "recipe_guarantee",
           "recipe_privacy"]

ALL = None
"""Every column of the table is raw (before the first DP step)."""


@dataclass(frozen=True)
class DPContext:
    """How the steps before a DP step affect its guarantee: ``holds_for_input`` is whether
    the guarantee it contributes is about the recipe's input, ``spends`` whether the step
    reads raw data (its ε counts against the input's; otherwise it is post-processing),
    ``statement`` says it in words."""

    holds_for_input: bool
    statement: str
    spends: bool = True


@dataclass(frozen=True)
class _Flow:
    """The table between two steps: its raw columns (``ALL``: every column), why one raw row
    may depend on several input records (``None``: it does not), the DP steps that spent ε
    so far (their indices), whether their guarantees hold for the input, and the household
    bound they protect (``None``: one record)."""

    raw: frozenset[str] | None = ALL
    mixed: str | None = None
    spent: tuple[int, ...] = ()
    for_input: bool = True
    unit: int | None = None
    unnamed: str | None = None  # a step before any DP step that does not name its columns


RECORD_BY_RECORD = (
    "Only a step that maps each record on its own by parameters fixed in advance keeps the "
    "guarantee for the input: top or bottom coding at a value, global recoding to a level "
    "of a declared taxonomy or to intervals whose outer breaks are -inf and inf.")
"""The rule a refusal states: which steps before a DP step are record-by-record maps."""


def _dp(step: Step) -> bool:
    return adapter(step.family).private


def _after(flow: _Flow, index: int, step: Step) -> tuple[_Flow, DPContext | None]:
    """The flow after ``step`` (number ``index`` from 0) and, for a DP step, its context."""
    if not _dp(step):
        why = step.method().reads_other_records()
        if why is None and flow.raw is ALL and flow.unnamed is None and not _names(step):
            flow = replace(flow, unnamed=f"step {index + 1} ({step.name})")
        if why is None or flow.raw == frozenset():
            return flow, None
        return _Flow(ALL, flow.mixed or f"step {index + 1} ({step.name}: {why})", flow.spent,
                     flow.for_input, flow.unit), None
    carried = frozenset(step.options.get("carry") or ())
    unit = step.options.get("household_size")
    if flow.raw == frozenset():  # nothing raw left: post-processing of DP output
        last = flow.spent[-1] + 1
        context = DPContext(flow.for_input, (
            f"post-processing: this step reads only differentially private output (step "
            f"{last} and the steps after it copied no column of the input), so the table keeps "
            "the guarantee the steps before it gave it; this step's own epsilon protects that "
            "output and spends nothing more of the input's privacy"), spends=False)
        return flow, context
    if flow.spent and unit != flow.unit:
        raise PrivacyError(
            f"step {index + 1} reads columns of the input that step {flow.spent[-1] + 1} "
            "copied unprotected, so its epsilon adds to that step's, and composing the two "
            "needs one unit of privacy: give both the same `household_size` (or neither)")
    raw = carried if flow.raw is ALL else flow.raw & carried
    if flow.mixed is not None:
        if step.protects is not Protects.STEP_INPUT:
            raise PrivacyError(
                f"a differentially private step after {flow.mixed} would protect the masked "
                "table, not the input: one changed input record can change many records of "
                f"the masked table. {RECORD_BY_RECORD} Move the DP step first, or give the "
                "step 'protects: step-input' to release a DP version of the masked table, "
                "and the report will say so")
        context = DPContext(False, (
            "the guarantee of this step holds for the table as the steps before it left it "
            f"(the masked table), NOT for the recipe's input: {flow.mixed} reads other "
            "records, so one changed input record can change many records of this step's "
            "input"))
        return _Flow(raw, flow.mixed if raw else None, (*flow.spent, index), False, unit), \
            context
    if flow.unnamed is not None and not flow.spent:
        raise PrivacyError(
            f"{flow.unnamed} does not name the columns it reads: with the defaults, which "
            "columns it reads follows the data (their kinds, the roles read off them), and "
            "a differentially private step after it must not depend on that; name them "
            "(`columns`)")
    if flow.spent:
        earlier = ", ".join(str(i + 1) for i in flow.spent)
        statement = (
            f"this step reads columns of the input that step(s) {earlier} copied unprotected "
            "(carried), so it reads the input again: its epsilon adds to theirs (sequential "
            "composition), and the table's guarantee is their sum")
    elif index == 0:
        statement = "the guarantee holds for the recipe's input: no step before it"
    else:
        statement = ("the guarantee holds for the recipe's input: the steps before it "
                     "transform each record on its own by public parameters, so tables that "
                     "differ in one record stay one record apart")
    return _Flow(raw, None, (*flow.spent, index), flow.for_input, unit), \
        DPContext(flow.for_input, statement)


def _names(step: Step) -> bool:
    """Whether ``step`` names every set of columns its family reads (its options of kind
    columns, carried columns apart)."""
    from microagg.recipe.families import OptionKind

    if step.method().named_columns():
        return True
    wanted = [o.name for o in adapter(step.family).options
              if o.kind is OptionKind.COLUMNS and o.name != "carry"]
    return all(step.options.get(name) for name in wanted)


def _flow(steps: Sequence[Step]) -> tuple[_Flow, list[DPContext | None]]:
    flow, contexts = _Flow(), []
    for index, step in enumerate(steps):
        flow, context = _after(flow, index, step)
        contexts.append(context)
    return flow, contexts


def check_steps(steps: Sequence[Step]) -> None:
    """Refuse a recipe of ``steps`` whose DP steps cannot compose (:func:`dp_context`'s
    :class:`PrivacyError`), before any step runs: the refusal follows the steps alone, where
    one raised when the DP step is reached would be preceded by an earlier step's refusal of
    the data (finite breaks and a value beyond them), which one record can switch.

    Examples
    --------
    >>> mdav = Step.of({"family": "microaggregate", "method": "mdav", "k": 5})
    >>> check_steps([mdav, Step.of({"family": "dp", "method": "laplace", "epsilon": 1.0})])
    Traceback (most recent call last):
    ...
    microagg.errors.PrivacyError: a differentially private step after step 1 (mdav: ...
    """
    _flow(steps)


def dp_context(step: Step, before: Sequence[Step]) -> DPContext | None:
    """The context of ``step`` after the steps ``before`` (``None`` for a step that is not
    DP); a :class:`PrivacyError` for a DP step that would protect the masked table without
    saying ``protects: step-input``, or that composes with an earlier one of another unit.

    Examples
    --------
    >>> mdav = Step.of({"family": "microaggregate", "method": "mdav", "k": 5})
    >>> laplace = {"family": "dp", "method": "laplace", "epsilon": 1.0}
    >>> dp_context(Step.of(laplace), []).holds_for_input
    True
    >>> dp_context(Step.of({**laplace, "protects": "step-input"}), [mdav]).holds_for_input
    False
    >>> carry = Step.of({**laplace, "columns": ["age"], "carry": ["income"]})
    >>> dp_context(Step.of({**laplace, "columns": ["age", "income"]}), [carry]).spends
    True
    """
    flow, _ = _flow(before)
    return _after(flow, len(before), step)[1]


@dataclass(frozen=True)
class RecipePrivacy:
    """The guarantee of a recipe's released table (:func:`recipe_privacy`): whether it is
    differentially private and with respect to what, the ε spent on the input (the sum over
    the DP steps that read raw data), the unit, the weaknesses, in one sentence."""

    differentially_private: bool
    guarantee_scope: str
    guarantee: str
    epsilon: float | None
    unit: str
    weaker_than_plain_dp: list[str]
    spending_steps: list[int]
    raw_columns: list[str]  # written unprotected ("*": every column may be)

    def to_dict(self) -> dict[str, Any]:
        return {"differentially_private": self.differentially_private,
                "guarantee_scope": self.guarantee_scope, "guarantee": self.guarantee,
                "epsilon": self.epsilon, "unit": self.unit,
                "weaker_than_plain_dp": list(self.weaker_than_plain_dp)}


def _level(report: PrivacyReport) -> float:
    """The ε a DP step's report guarantees for its unit."""
    return report.unit_epsilon if report.unit_epsilon is not None else report.epsilon


CARRIED = "carried columns "
"""How a step's report starts the weakness of its carried columns (release/dp/publish.py): in a
recipe, the table's raw columns decide it instead."""


def _private_apart_from_carry(report: PrivacyReport) -> bool:
    return report.differentially_private or (
        report.guarantee_scope is GuaranteeScope.PROTECTED_COLUMNS
        and not [w for w in report.weaker_than_plain_dp if not w.startswith(CARRIED)])


def recipe_privacy(steps: Sequence[Step], reports: Sequence[PrivacyReport | None]
                   ) -> RecipePrivacy | None:
    """The guarantee of the table a recipe of ``steps`` released, from the privacy report of
    each DP step (``None`` for the other steps); ``None`` when no step is DP.

    Examples
    --------
    >>> import microagg
    >>> from microagg.recipe import Recipe
    >>> data = microagg.datasets.synthetic(300, 2, seed=0)
    >>> run = Recipe(schema=data.schema).add({"family": "dp", "method": "laplace",
    ...     "epsilon": 0.5, "columns": ["age"], "carry": ["income"]}).add(
    ...     {"family": "dp", "method": "laplace", "epsilon": 0.25,
    ...      "columns": ["age", "income"]}).run(data.frame)
    >>> privacy = run.privacy
    >>> privacy.epsilon, privacy.differentially_private, privacy.spending_steps
    (0.75, True, [1, 2])
    """
    flow, contexts = _flow(steps)
    spending = [(i, report) for i, (context, report) in enumerate(zip(contexts, reports,
                                                                      strict=True))
                if context is not None and context.spends and report is not None]
    if not spending:
        return None
    epsilon = math.fsum(_level(r) for _, r in spending)
    numbers = [i + 1 for i, _ in spending]
    weaker = [f"step {i + 1}: {w}" for i, r in spending for w in r.weaker_than_plain_dp
              if not w.startswith(CARRIED)]
    for_input = all(c.holds_for_input for c in contexts if c is not None and c.spends)
    raw = ["*"] if flow.raw is ALL else sorted(flow.raw)
    unit = spending[-1][1].unit
    if flow.raw is ALL:
        weaker.append(f"every column may hold values of the input: {flow.mixed} mixes records "
                      "after a DP step copied columns of the input unprotected")
    elif raw:
        weaker.append(f"columns {', '.join(raw)} copied unchanged from the input")
    if not for_input:
        weaker.append("differentially private with respect to the masked table that a step "
                      "before the DP step left, not to the recipe's input")
    weak = [r for _, r in spending if not _private_apart_from_carry(r)]
    private = not (raw or weak or not for_input)
    if private:
        scopes = {r.guarantee_scope for _, r in spending} - {GuaranteeScope.PROTECTED_COLUMNS}
        scope = scopes.pop().value if len(scopes) == 1 else GuaranteeScope.TABLE.value
    elif raw:
        scope = GuaranteeScope.PROTECTED_COLUMNS.value
    elif weak:
        scope = weak[0].guarantee_scope.value
    else:
        scope = "masked table"
    where = "the recipe's input" if for_input else "the masked table"
    spent = " + ".join(f"{_level(r):g} (step {i + 1})" for i, r in spending)
    total = f"{epsilon:g}" + (f" = {spent}" if len(spending) > 1 else "")
    how = (f"step(s) {', '.join(map(str, numbers))} spend epsilon = {total} with respect to "
           f"{where} (unit of privacy: {unit}); every other step is post-processing of "
           "differentially private output, or runs before the first DP step on each record "
           "alone.")
    if private:
        sentence = (f"The released table satisfies {epsilon:g}-differential privacy with "
                    f"respect to {where}: {how}")
    else:
        sentence = (f"The released table is NOT differentially private: {'; '.join(weaker)}. "
                    f"Apart from that, {how}")
    # households with no bound: protected by group privacy only, as each step's report says
    sentence += "".join(dict.fromkeys(r.guarantee[r.guarantee.index(GROUPED):]
                                      for _, r in spending if GROUPED in r.guarantee))
    return RecipePrivacy(private, scope, sentence, epsilon, unit, weaker, numbers, raw)


def recipe_guarantee(steps: Sequence[Step], reports: Sequence[PrivacyReport | None]
                     ) -> str:
    """The recipe's guarantee in one sentence (:func:`recipe_privacy`)."""
    privacy = recipe_privacy(steps, reports)
    if privacy is not None:
        return privacy.guarantee
    return ("no differentially private step: the guarantees are those of each step's report "
            "(k-anonymity or t-closeness over the masked columns, or none for a masking)")
