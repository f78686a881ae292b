"""The Release object every release function returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


@dataclass(frozen=True, eq=False)
class Release:
    """A masked table and how it was made.

    ``frame`` has the input's rows (minus rows dropped as incomplete, when asked), in the same
    order, with the same columns except identifiers, which are dropped. ``labels`` is the
    partition: one cluster label per row, or one per row and attribute for univariate methods.
    ``report`` is JSON-serializable.
    """

    frame: pd.DataFrame
    labels: np.ndarray
    report: dict[str, Any] = field(default_factory=dict)

    def labels_frame(self) -> pd.DataFrame:
        """The partition as a table: column ``cluster``, or ``cluster_<attribute>`` per
        attribute for univariate methods."""
        if self.labels.ndim == 1:
            return pd.DataFrame({"cluster": self.labels}, index=self.frame.index)
        columns = self.report["columns"]
        return pd.DataFrame({f"cluster_{c}": self.labels[:, j] for j, c in enumerate(columns)},
                            index=self.frame.index)
