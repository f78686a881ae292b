"""Linkability: joining two halves of a person's record through the release.

The attacker holds two sets of columns of the same people (an auxiliary split of the
columns), finds in the release the ``n_neighbors`` records nearest to each half and links the
two halves when the two lists share a release record (Article 29 Working Party, Opinion
05/2014; Anonymeter, Giomi et al. 2023, PoPETs 2023(2)). The attack targets ``n_attacks``
random original records; the control attack the same number of control records; the
baseline draws each list at random from the release. Distances are the mixed-type distance
of :mod:`microagg.risk._neighbours`.
"""

from __future__ import annotations

import numpy as np

from microagg.core.rng import make_rng
from microagg.risk._neighbours import nearest_neighbours
from microagg.risk.attack_data import AttackTables
from microagg.risk.attack_rates import AttackRisk, attack_risk, wilson

__all__ = ["linkability", "linked"]


def linked(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Whether each row of the (m, k) neighbour lists ``first`` and ``second`` shares a
    release record."""
    return (first[:, :, None] == second[:, None, :]).any(axis=(1, 2))


def _links(tables: AttackTables, split: tuple[list[str], list[str]], target: int,
           n_attacks: int, n_neighbors: int, rng: np.random.Generator) -> tuple[int, int]:
    """How many of ``n_attacks`` random records of table ``target`` (0 original, 2
    control) are linked, and how many were attacked."""
    rows = None
    lists = []
    for columns in split:
        blocks, categorical = tables.encoded(columns)
        targets = blocks[target]
        if rows is None:
            count = min(n_attacks, targets.shape[0])
            rows = rng.choice(targets.shape[0], count, replace=False)
        found, _ = nearest_neighbours(blocks[1], targets[rows], categorical, n_neighbors)
        lists.append(found)
    assert rows is not None
    return int(linked(lists[0], lists[1]).sum()), len(rows)


def linkability(tables: AttackTables, split: tuple[list[str], list[str]], *,
                n_attacks: int = 500, n_neighbors: int = 1,
                rng: np.random.Generator | int | None = None) -> AttackRisk:
    """The linkability risk of the release (module docstring).

    Parameters
    ----------
    tables
        The original, the release and the control
        (:func:`microagg.risk.attack_data.attack_tables`).
    split
        The two sets of columns the attacker holds.
    n_attacks
        How many original (and control) records to attack.
    n_neighbors
        How many nearest release records each half is linked through.
    rng
        A numpy Generator or a seed.

    Returns
    -------
    AttackRisk
        The rates and the risk.
    """
    generator = make_rng(rng)
    size = len(tables.release)
    k = min(n_neighbors, size)
    hits, attacked = _links(tables, split, 0, n_attacks, k, generator)
    guesses = [np.array([generator.choice(size, k, replace=False) for _ in range(attacked)])
               for _ in range(2)]
    baseline = wilson(attacked, int(linked(*guesses).sum()))
    control = None
    if tables.control is not None:
        control = wilson(*reversed(_links(tables, split, 2, n_attacks, k, generator)))
    return attack_risk(wilson(attacked, hits), baseline, control)
