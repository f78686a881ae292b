"""Linkability: joining two halves of a person's record through the release.

The attacker holds two sets of columns of the same people (an auxiliary split of the
columns), finds in the release the ``n_neighbors`` records nearest to each half and links the
two halves when the two lists share a release record (Article 29 Working Party, Opinion
05/2014; Anonymeter, Giomi et al. 2023, PoPETs 2023(2)). The attack targets ``n_attacks``
random original records; the control attack the same number of control records (fewer of
both when either table is smaller: two rates over different counts would differ for the same
success, Wilson's centre leaning to 1/2 more for the fewer); the
baseline draws each list at random from the release. Distances are the mixed-type distance
of :mod:`microagg.risk._neighbours`.
"""

from __future__ import annotations

import numpy as np

from microagg.core.rng import make_rng
from microagg.risk._neighbours import nearest_neighbours
from microagg.risk.attack_data import AttackTables
from microagg.risk.attack_rates import AttackRisk, attack_risk, attacked_count, wilson

__all__ = ["linkability", "linked"]


def linked(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Whether each row of the (m, k) neighbour lists ``first`` and ``second`` shares a
    release record."""
    return (first[:, :, None] == second[:, None, :]).any(axis=(1, 2))


def _links(tables: AttackTables, split: tuple[list[str], list[str]], n_attacks: int,
           n_neighbors: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """For the originals and (when given) the controls: how many of ``n_attacks`` random
    records are linked, and how many were attacked; one search of the release's tree per
    half for both."""
    targets = [0] if tables.control is None else [0, 2]
    chosen: list[np.ndarray] = []
    lists = []
    for columns in split:
        blocks, categorical = tables.encoded(columns)
        if not chosen:
            count = attacked_count(n_attacks, [blocks[t].shape[0] for t in targets])
            chosen = [rng.choice(blocks[t].shape[0], count, replace=False) for t in targets]
        queries = np.vstack([blocks[t][rows] for t, rows in zip(targets, chosen, strict=True)])
        found, _ = nearest_neighbours(blocks[1], queries, categorical, n_neighbors)
        lists.append(found)
    joined = linked(lists[0], lists[1])
    counts = []
    for rows in chosen:
        counts.append((int(joined[:len(rows)].sum()), len(rows)))
        joined = joined[len(rows):]
    return counts


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
    counts = _links(tables, split, n_attacks, k, generator)
    hits, attacked = counts[0]
    guesses = [np.array([generator.choice(size, k, replace=False) for _ in range(attacked)])
               for _ in range(2)]
    baseline = wilson(attacked, int(linked(*guesses).sum()))
    control = wilson(counts[1][1], counts[1][0]) if len(counts) > 1 else None
    return attack_risk(wilson(attacked, hits), baseline, control)
