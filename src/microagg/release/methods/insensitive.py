"""Insensitive microaggregation (paper 000 Alg. 2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from microagg.data.table import Table
from microagg.errors import InputError
from microagg.options import Reference
from microagg.release.families.kanonymity import (
    KAnonymityMethod,
    Progress,
    categorical_part,
    numeric_part,
)
from microagg.release.methods.base import release_method
from microagg.release.params import Choice, param

__all__ = ["REFERENCE_HELP", "Insensitive"]

REFERENCE_HELP = ("The orders of the records: corners (default; each cluster from the next "
                  "corner of the domain) | single (one reference point).")


def declared_bounds(table: Table, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The declared domains of the numeric ``columns``: insensitive orders must not depend on
    the data, so every one must be declared."""
    numeric = [c for c in columns if table.schema[c].is_numeric]
    undeclared = [c for c in numeric if table.schema[c].bounds is None]
    if undeclared:
        raise InputError(
            f"insensitive microaggregation needs a declared domain for every numeric column; "
            f"'{undeclared[0]}' has none (declare it in the schema: its order must not "
            "depend on the data)")
    lows = np.array([table.schema[c].bounds[0] for c in numeric])  # type: ignore[index]
    highs = np.array([table.schema[c].bounds[1] for c in numeric])  # type: ignore[index]
    return lows, highs


@release_method
class Insensitive(KAnonymityMethod):
    """Insensitive microaggregation (paper 000 Alg. 2): clusters formed in orders fixed by the
    declared domains (from the domain's corners), so that neighbouring data sets give
    clusters that differ in at most one record. Needs a declared domain for every numeric
    column.

    References
    ----------
    Paper 000, Algorithm 2 (§4.1-4.3).

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(200, 3, seed=0)
    >>> clusters = Insensitive(k=10).release(data.frame, schema=data.schema).report.clusters
    >>> clusters["count"], clusters["smallest"], clusters["largest"]
    (20, 10, 10)
    """

    name: ClassVar[str] = "insensitive"
    summary: ClassVar[str] = "insensitive: clusters in orders fixed by the declared domains"
    uses_threads: ClassVar[bool] = True

    reference: Reference = param(Choice(Reference), default=Reference.CORNERS,
                                 help=REFERENCE_HELP)

    def labels(self, table: Table, columns: Sequence[str], *, threads: int | None = None,
               progress: Progress | None = None) -> np.ndarray:
        from microagg.partition.insensitive import insensitive

        X, _ = numeric_part(table, columns)
        lows, highs = declared_bounds(table, columns)
        return insensitive(X, self.k, lows, highs, categorical=categorical_part(table, columns),
                           reference=self.reference, threads=threads, progress=progress)

    def reported(self, has_categories: bool) -> dict[str, Any]:
        return {"reference": self.reference.value}
