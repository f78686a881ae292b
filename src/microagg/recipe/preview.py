"""What a differentially private step will spend and add, before it runs.

A DP release's privacy report holds only public quantities: the ε ledger (every split of ε),
the sensitivities and the noise as a share of each domain width are functions of n, k, ε and
the declared domains, never of the values (docs/design.md, "Differential privacy: the
rules"). So the report of the step run on a *stand-in* table, with the same number of records
and the protected columns filled with values spread over their declared domains, is the
report the real run will have, and its warnings are those the command line prints. Clipping
(``clip``) chooses domains from the values, so it is left out of the preview and said.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Role, Schema
from microagg.data.taxonomy import Taxonomy
from microagg.recipe.model import Step
from microagg.release.reports.report import PrivacyReport

__all__ = ["Preview", "dp_preview"]

CLIP_NOTE = ("clipping narrows the domains when the step runs, from the values: the noise "
             "below is on the declared domains, and the real run's is smaller")


@dataclass(frozen=True)
class Preview:
    """The privacy report a DP step will have, the warnings it will raise, and notes."""

    report: PrivacyReport
    warnings: tuple[str, ...]
    notes: tuple[str, ...]


def _categories(schema: Schema, name: str) -> tuple[str, ...]:
    attribute = schema[name]
    if attribute.categories is not None:
        return attribute.categories
    if attribute.taxonomy is not None:
        return Taxonomy.load(attribute.taxonomy).leaves
    return ("",)  # undeclared: the release refuses it, as the real run would


def _stand_in(frame: pd.DataFrame, schema: Schema, columns: list[str],
              bounds: dict[str, Any]) -> pd.DataFrame:
    n = len(frame)
    out: dict[str, Any] = {}
    for name in columns:
        attribute = schema[name]
        if attribute.is_numeric:
            low, high = bounds.get(name) or attribute.bounds or (0.0, 0.0)
            out[name] = np.linspace(float(low), float(high), n) if n else []
        else:
            categories = _categories(schema, name)
            out[name] = [categories[i % len(categories)] for i in range(n)]
    return pd.DataFrame(out)


def dp_preview(step: Step, frame: pd.DataFrame, schema: Schema | None,
               seed: int | None = None) -> Preview:
    """The preview of the DP ``step`` on ``frame`` (module docstring): only the number of
    records, the schema and the step's options are read; a household column is read for the
    sizes of the households when the step protects households.

    Examples
    --------
    >>> import microagg
    >>> data = microagg.datasets.synthetic(500, 2, seed=0)
    >>> step = Step.of({"family": "dp", "method": "laplace", "epsilon": 1.0,
    ...                 "columns": ["age"]})
    >>> preview = dp_preview(step, data.frame, data.schema)
    >>> round(sum(part["epsilon"] for part in preview.report.epsilon_split), 9)
    1.0
    """
    if schema is None:
        schema = Schema.infer(frame, default_role=Role.QUASI)
    options = dict(step.options)
    columns = options.get("columns") or [
        a.name for a in schema if a.role not in (Role.IDENTIFIER, Role.WEIGHT, Role.STRATUM,
                                                 Role.HOUSEHOLD)]
    options["columns"] = list(columns)
    options.pop("carry", None)
    options.pop("drop_incomplete", None)
    table = _stand_in(frame, schema, list(columns), options.get("bounds") or {})
    kept = list(columns)
    if options.get("household_size"):
        households = [a.name for a in schema if a.role is Role.HOUSEHOLD]
        for name in households:
            table[name] = frame[name].to_numpy()
        kept += households
    method = step.method()
    notes = []
    if getattr(method, "clip", None) is not None:
        method = replace(method, **{"clip": None, "clip_share": None})
        notes.append(CLIP_NOTE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        release = method.release(table, schema=schema.select(kept), rng=seed, **options)
    said = tuple(dict.fromkeys(str(w.message) for w in caught))
    return Preview(release.report, said, tuple(notes))
