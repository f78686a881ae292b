"""Recipes: a protection as a sequence of steps, in one YAML file that reproduces it.

:class:`Recipe` (the input, the schema, the seed and the steps), :class:`Step` (a method of a
family with its parameters), :class:`RecipeRun` (the steps applied, with the risk after each
and undo), the report (:func:`recipe_report`) and the files of a run (:func:`write_run`).
``microagg run RECIPE.yaml -o OUT`` applies a recipe from the command line; the web app
(``microagg ui``) builds one step by step and offers it for download.
"""

from microagg.recipe.composition import DPContext, dp_context
from microagg.recipe.families import ADAPTERS, Adapter, Option, OptionKind, adapter
from microagg.recipe.model import RECIPE_FORMAT, Protects, Recipe, Step
from microagg.recipe.report import RecipeReport, recipe_html, recipe_report
from microagg.recipe.risk import RiskSummary, measure_risk, risk_keys
from microagg.recipe.runner import RecipeRun, StepResult
from microagg.recipe.write import write_run

__all__ = ["ADAPTERS", "RECIPE_FORMAT", "Adapter", "DPContext", "Option", "OptionKind",
           "Protects", "Recipe", "RecipeReport", "RecipeRun", "RiskSummary", "Step",
           "StepResult", "adapter", "dp_context", "measure_risk", "recipe_html",
           "recipe_report", "risk_keys", "write_run"]
