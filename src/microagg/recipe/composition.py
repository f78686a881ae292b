"""What the steps before a differentially private step do to its guarantee.

A DP mechanism M is ε-DP with respect to *its input*: two tables that differ in one record
give outputs whose probabilities differ by at most e^ε. In a recipe its input is the output
of the steps before it, f(D), and three cases follow (Dwork and Roth 2014, Prop. 2.1 for
post-processing; §2.3 of the same for why a transformation that mixes records breaks the
neighbouring relation):

1. **Nothing before, or only steps that transform each record on its own** by public
   parameters (top coding at a declared value): f maps two tables that differ in one record
   to two tables that differ in one record, so M(f(D)) is ε-DP with respect to D.
2. **A DP step before**: this step only reads the earlier DP output, so the table stays as
   private as that output was (post-processing); this step's ε protects the earlier output,
   and it spends nothing more of the input's budget.
3. **A step that reads other records before** (a partition, a quantile, a covariance:
   :meth:`~microagg.release.methods.base.ReleaseMethod.reads_other_records`): one changed
   record of D may change many records of f(D), so M(f(D)) is ε-DP with respect to f(D),
   the masked table, and not with respect to D. Such a step is refused unless it says
   ``protects: step-input``, and the report then states the guarantee of the masked table.

Steps after a DP step are post-processing of it; the recipe's guarantee with respect to the
input is that of its first DP step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from microagg.errors import PrivacyError
from microagg.recipe.families import adapter
from microagg.recipe.model import Protects, Step

__all__ = ["DPContext", "dp_context", "recipe_guarantee"]


@dataclass(frozen=True)
class DPContext:
    """How the steps before a DP step affect its guarantee: ``holds_for_input`` is whether
    it is a guarantee about the recipe's input, ``statement`` says it in words."""

    holds_for_input: bool
    statement: str


def _earlier_dp(before: Sequence[Step]) -> int | None:
    for index, step in enumerate(before):
        if adapter(step.family).private:
            return index
    return None


def dp_context(step: Step, before: Sequence[Step]) -> DPContext | None:
    """The context of ``step`` after the steps ``before`` (``None`` for a step that is not
    DP); a :class:`PrivacyError` for a DP step after a step that reads other records, unless
    the step says ``protects: step-input``.

    Examples
    --------
    >>> mdav = Step.of({"family": "microaggregate", "method": "mdav", "k": 5})
    >>> laplace = {"family": "dp", "method": "laplace", "epsilon": 1.0}
    >>> dp_context(Step.of(laplace), []).holds_for_input
    True
    >>> dp_context(Step.of({**laplace, "protects": "step-input"}), [mdav]).holds_for_input
    False
    """
    if not adapter(step.family).private:
        return None
    earlier = _earlier_dp(before)
    if earlier is not None:
        return DPContext(True, f"post-processing: this step reads only the output of step "
                         f"{earlier + 1} ({before[earlier].name}), which is differentially "
                         "private, so the table keeps that step's guarantee with respect to "
                         "the input; this step's own epsilon protects step "
                         f"{earlier + 1}'s output and spends nothing more of the input's")
    readers = [(i, s, why) for i, s in enumerate(before)
               if (why := s.method().reads_other_records()) is not None]
    if not readers:
        said = ("no step before it" if not before else
                "the steps before it transform each record on its own by public parameters, "
                "so tables that differ in one record stay one record apart")
        return DPContext(True, f"the guarantee holds for the recipe's input: {said}")
    index, reader, why = readers[0]
    where = f"step {index + 1} ({reader.name}: {why})"
    if step.protects is not Protects.STEP_INPUT:
        raise PrivacyError(
            f"a differentially private step after {where} would protect the masked table, "
            "not the input: one changed input record can change many records of the masked "
            "table. Move the DP step first, or give the step 'protects: step-input' to "
            "release a DP version of the masked table, and the report will say so")
    return DPContext(False, f"the guarantee holds for the table as the steps before it left "
                     f"it (the masked table), NOT for the recipe's input: {where} reads other "
                     "records, so one changed input record can change many records of this "
                     "step's input")


def recipe_guarantee(steps: Sequence[Step], contexts: Sequence[DPContext | None]) -> str:
    """The recipe's guarantee in one sentence, from its first DP step's context."""
    for index, (step, context) in enumerate(zip(steps, contexts, strict=True)):
        if context is None:
            continue
        epsilon = step.parameters.get("epsilon")
        after = len(steps) - index - 1
        tail = (f"; the {after} step(s) after it are post-processing of its output"
                if after else "")
        scope = "the recipe's input" if context.holds_for_input else "the masked table"
        return (f"differentially private (epsilon = {epsilon}) with respect to {scope}, by "
                f"step {index + 1} ({step.name}), within the limits its privacy report "
                f"states{tail}")
    return ("no differentially private step: the guarantees are those of each step's report "
            "(k-anonymity or t-closeness over the masked columns, or none for a masking)")
