"""Inference: guessing a secret column of a person from the other columns and the release.

The attacker knows every column of a target but the secret, takes the release record nearest
to it (the mixed-type distance of :mod:`microagg.risk._neighbours`) and guesses its secret
(Article 29 Working Party, Opinion 05/2014; Anonymeter, Giomi et al. 2023, PoPETs 2023(2)).
A guess of a category is right when equal (a missing value matching a missing one); of a
number, when within ``tolerance`` of the guess relatively (``|guess - secret| / |guess|``:
Anonymeter's rule, whose denominator ``guess`` would count every negative guess right). The
attack targets ``n_attacks`` random original records, the control attack as many control
records (fewer of both when either table is smaller); the baseline guesses the secret of a
random release record.
"""

from __future__ import annotations

import numpy as np

from microagg.core.rng import make_rng
from microagg.risk._neighbours import nearest_neighbours
from microagg.risk.attack_data import AttackTables
from microagg.risk.attack_rates import AttackRisk, attack_risk, attacked_count, wilson

__all__ = ["inference", "right_guesses"]


def right_guesses(guesses: np.ndarray, secrets: np.ndarray, numeric: bool,
                  tolerance: float = 0.05) -> np.ndarray:
    """Which guesses are right (module docstring); a category as its code, NaN missing."""
    both_missing = np.isnan(guesses) & np.isnan(secrets)
    with np.errstate(divide="ignore", invalid="ignore"):
        if numeric:
            close = np.abs(guesses - secrets) / (np.abs(guesses) + 1e-12) <= tolerance
        else:
            close = guesses == secrets
    return both_missing | close


def inference(tables: AttackTables, secret: str, *, n_attacks: int = 500,
              tolerance: float = 0.05,
              rng: np.random.Generator | int | None = None) -> AttackRisk:
    """The inference risk of the release on the column ``secret`` (module docstring).

    Parameters
    ----------
    tables
        The original, the release and the control
        (:func:`microagg.risk.attack_data.attack_tables`).
    secret
        The column to guess; the attacker knows the others.
    n_attacks
        How many original (and control) records to attack.
    tolerance
        The relative error of a right guess of a number.
    rng
        A numpy Generator or a seed.

    Returns
    -------
    AttackRisk
        The rates and the risk.
    """
    generator = make_rng(rng)
    known = [c for c in tables.columns if c != secret]
    blocks, categorical = tables.encoded(known)
    numeric = secret in tables.numeric
    secrets = [s[:, 0] for s in tables.raw([secret])[0]]
    release_secret = secrets[1]

    targets = [0] if tables.control is None else [0, 2]
    count = attacked_count(n_attacks, [blocks[t].shape[0] for t in targets])
    chosen = [generator.choice(blocks[t].shape[0], count, replace=False) for t in targets]
    queries = np.vstack([blocks[t][rows] for t, rows in zip(targets, chosen, strict=True)])
    if known:  # one search of the release's tree for the originals and the controls
        found, _ = nearest_neighbours(blocks[1], queries, categorical, 1)
        guesses = release_secret[found[:, 0]]
    else:
        guesses = release_secret[generator.integers(0, len(release_secret), len(queries))]
    rates = []
    for t, rows in zip(targets, chosen, strict=True):
        right = right_guesses(guesses[:len(rows)], secrets[t][rows], numeric, tolerance)
        guesses = guesses[len(rows):]
        rates.append(wilson(len(rows), int(right.sum())))
    hit = rates[0]
    count = min(hit.attacks, len(release_secret))
    rows = generator.choice(blocks[0].shape[0], count, replace=False)
    picks = release_secret[generator.choice(len(release_secret), count, replace=False)]
    baseline = wilson(count, int(right_guesses(picks, secrets[0][rows], numeric,
                                               tolerance).sum()))
    control = rates[1] if len(rates) > 1 else None
    return attack_risk(hit, baseline, control)
