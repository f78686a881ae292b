"""Distance to closest record (DCR) and nearest-neighbour distance ratio (NNDR) against a
control set.

For each release record: its distance to the nearest original record and to the nearest
control record (the mixed-type distance of :mod:`microagg.risk._neighbours`), and the ratio
of its nearest to its second-nearest distance in each. A release that copies or barely moves
its records sits closer to the originals than to control records drawn from the same
population; a release that teaches only the population does not: each release record's
nearest record among the originals and the controls together is then an original with
probability ``n_original / (n_original + n_control)`` (the ``expected_share``), which
``share_closer_to_original`` (ties counting half) is to be read against. An NNDR near 0 means
the nearest record stands out from the next (SDMetrics' and synthcity's DCR and NNDR;
Anonymeter, Giomi et al. 2023, PoPETs 2023(2)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from microagg.core.rng import make_rng
from microagg.risk._neighbours import nearest_neighbours
from microagg.risk.attack_data import AttackTables

__all__ = ["ClosestRecords", "closest_records"]


@dataclass(frozen=True)
class ClosestRecords:
    """The DCR and NNDR of a release against its original and control records."""

    records: int
    median_dcr_original: float
    median_dcr_control: float
    share_closer_to_original: float
    expected_share: float
    median_nndr_original: float
    median_nndr_control: float

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form: every field by name."""
        return dict(self.__dict__)


def _nearest_two(candidates: np.ndarray, queries: np.ndarray, categorical: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    k = min(2, candidates.shape[0])
    _, distances = nearest_neighbours(candidates, queries, categorical, k)
    first = distances[:, 0]
    second = distances[:, -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(second > 0, first / second, 1.0)
    return first, ratio


def closest_records(tables: AttackTables, *, n_records: int | None = None,
                    rng: np.random.Generator | int | None = None) -> ClosestRecords:
    """The DCR and NNDR of the release (module docstring).

    Parameters
    ----------
    tables
        The original, the release and the control, which must be given
        (:func:`microagg.risk.attack_data.attack_tables`).
    n_records
        How many random release records to measure (default all).
    rng
        A numpy Generator or a seed (for the sample).

    Returns
    -------
    ClosestRecords
        The medians and the share.
    """
    if tables.control is None:
        raise ValueError("the distance to closest record needs control records")
    blocks, categorical = tables.encoded(tables.columns)
    release = blocks[1]
    if n_records is not None and n_records < release.shape[0]:
        release = release[make_rng(rng).choice(release.shape[0], n_records, replace=False)]
    to_original, ratio_original = _nearest_two(blocks[0], release, categorical)
    to_control, ratio_control = _nearest_two(blocks[2], release, categorical)
    closer = np.mean(np.where(to_original < to_control, 1.0,
                              np.where(to_original == to_control, 0.5, 0.0)))
    n_original, n_control = blocks[0].shape[0], blocks[2].shape[0]
    return ClosestRecords(
        records=int(release.shape[0]),
        median_dcr_original=float(np.median(to_original)),
        median_dcr_control=float(np.median(to_control)),
        share_closer_to_original=float(closer),
        expected_share=n_original / (n_original + n_control),
        median_nndr_original=float(np.median(ratio_original)),
        median_nndr_control=float(np.median(ratio_control)))
