"""The three risks by which Europe's data-protection authorities judge anonymisation —
singling out, linkability and inference (Article 29 Working Party, Opinion 05/2014) — measured
by attacking a release, as Anonymeter does (Giomi et al. 2023, "A Unified Framework for
Quantifying Privacy Risk in Synthetic Data", PoPETs 2023(2)); and the distance to closest
record against control records.

Each attack runs three times: on original records the release was made from, on control
records it was not made from (held out of the same table), and as a baseline guessing at
random. The risk is the attack's success on the originals beyond its success on the controls
(:mod:`microagg.risk.attack_rates`): what the release leaks about the people in it, apart from
what it teaches about anyone. The attacks are declared in
:data:`microagg.risk.registry.ATTACKS`; :func:`attack_risks` runs those asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from microagg.core.rng import make_rng
from microagg.errors import InputError, ParameterError
from microagg.risk.attack_data import AttackTables, attack_tables
from microagg.risk.attack_rates import AttackRisk
from microagg.risk.closest_record import ClosestRecords, closest_records
from microagg.risk.inference import inference
from microagg.risk.linkability import linkability
from microagg.risk.registry import ATTACKS, function
from microagg.risk.singling_out import singling_out

__all__ = ["TOO_FEW_TO_SPLIT", "AttackRisks", "AttackSettings", "attack_risks",
           "checked_settings", "release_attacks"]


@dataclass(frozen=True)
class AttackSettings:
    """What the attacks are asked: ``n_attacks`` records (or predicates) per attack, the
    ``linkability_columns`` split (default: the first half of the columns and the rest), the
    ``secrets`` of inference (default: every column), the ``n_neighbors`` of linkability,
    the ``n_cols`` of a multivariate predicate and the ``tolerance`` of a numeric guess."""

    n_attacks: int = 500
    linkability_columns: tuple[list[str], list[str]] | None = None
    secrets: list[str] | None = None
    n_neighbors: int = 1
    n_cols: int = 3
    tolerance: float = 0.05


@dataclass(frozen=True)
class AttackRisks:
    """The results of the attacks asked (None for one not asked)."""

    singling_out: dict[str, AttackRisk] | None = None
    linkability: AttackRisk | None = None
    inference: dict[str, AttackRisk] | None = None
    closest_records: ClosestRecords | None = None
    settings: AttackSettings = field(default_factory=AttackSettings)

    def to_dict(self) -> dict[str, Any]:
        """The ``attacks`` object of ``evaluate --json``: ``singling_out`` (``univariate``,
        ``multivariate``), ``linkability``, ``inference`` (per secret column), each with
        ``risk``, ``ci`` and the rates (:meth:`AttackRisk.to_dict`), ``closest_records``;
        the attacks not asked left out."""
        found: dict[str, Any] = {}
        if self.singling_out is not None:
            found["singling_out"] = {m: r.to_dict() for m, r in self.singling_out.items()}
        if self.linkability is not None:
            found["linkability"] = {**self.linkability.to_dict(),
                                    "columns": list(map(list, self._split()))}
        if self.inference is not None:
            found["inference"] = {c: r.to_dict() for c, r in self.inference.items()}
        if self.closest_records is not None:
            found["closest_records"] = self.closest_records.to_dict()
        return found

    def _split(self) -> tuple[list[str], list[str]]:
        assert self.settings.linkability_columns is not None
        return self.settings.linkability_columns


def singling_out_risks(tables: AttackTables, settings: AttackSettings,
                       rng: np.random.Generator) -> dict[str, AttackRisk]:
    """Univariate and multivariate singling out
    (:func:`microagg.risk.singling_out.singling_out`)."""
    return {mode: singling_out(tables, mode=mode, n_attacks=settings.n_attacks,
                               n_cols=settings.n_cols, rng=rng)
            for mode in ("univariate", "multivariate")}


def linkability_risk(tables: AttackTables, settings: AttackSettings,
                     rng: np.random.Generator) -> AttackRisk:
    """Linkability over the settings' split (:func:`microagg.risk.linkability.linkability`)."""
    if settings.linkability_columns is None:
        raise InputError(TOO_FEW_TO_SPLIT)
    return linkability(tables, settings.linkability_columns, n_attacks=settings.n_attacks,
                       n_neighbors=settings.n_neighbors, rng=rng)


def inference_risks(tables: AttackTables, settings: AttackSettings,
                    rng: np.random.Generator) -> dict[str, AttackRisk]:
    """Inference of each secret (:func:`microagg.risk.inference.inference`)."""
    secrets = tables.columns if settings.secrets is None else settings.secrets
    return {c: inference(tables, c, n_attacks=settings.n_attacks,
                         tolerance=settings.tolerance, rng=rng) for c in secrets}


def closest_record_distances(tables: AttackTables, settings: AttackSettings,
                             rng: np.random.Generator) -> ClosestRecords:
    """DCR and NNDR (:func:`microagg.risk.closest_record.closest_records`)."""
    return closest_records(tables, rng=rng)


TOO_FEW_TO_SPLIT = "linkability needs at least two columns to split"
"""The refusal of linkability over a single column."""


def checked_settings(tables: AttackTables, settings: AttackSettings) -> AttackSettings:
    """``settings`` checked against the columns, the defaults filled in (no linkability
    split for a single column: :func:`linkability_risk` refuses it)."""
    columns = tables.columns
    if settings.n_attacks < 1:
        raise InputError(f"the number of attacks must be at least 1, got {settings.n_attacks}")
    if settings.n_neighbors < 1 or settings.n_cols < 1:
        raise InputError("the neighbours of linkability and the columns of a predicate "
                         "must be at least 1")
    unknown = [c for c in settings.secrets or [] if c not in columns]
    if unknown:
        raise InputError(f"unknown secret column(s): {', '.join(unknown)} (the columns are "
                         f"{', '.join(columns)})")
    split = settings.linkability_columns
    if split is None:
        if len(columns) < 2:  # no default split: linkability, if asked, refuses
            return replace(settings, linkability_columns=None)
        half = len(columns) // 2
        split = (columns[:half], columns[half:])
    named = [c for part in split for c in part]
    unknown = list(dict.fromkeys(c for c in named if c not in columns))
    if any(not part for part in split) or unknown:
        raise InputError("the linkability columns must be two non-empty sets of the "
                         f"columns ({', '.join(columns)}), as A,B|C,D"
                         + (f"; not among them: {', '.join(unknown)}" if unknown else ""))
    if set(split[0]) == set(split[1]):
        raise InputError("the two linkability sets hold the same columns: the attacker's "
                         "two sources must differ (each half would find the same record)")
    return AttackSettings(settings.n_attacks, (list(split[0]), list(split[1])),
                          settings.secrets, settings.n_neighbors, settings.n_cols,
                          settings.tolerance)


def attack_risks(original: pd.DataFrame, release: pd.DataFrame,
                 control: pd.DataFrame | None, attacks: list[str] | None = None, *,
                 settings: AttackSettings | None = None, columns: list[str] | None = None,
                 rng: np.random.Generator | int | None = None,
                 between: Callable[[], None] | None = None) -> AttackRisks:
    """Attack ``release`` as a data-protection authority would (module docstring).

    Parameters
    ----------
    original
        The records the release was made from.
    release
        The release, over the same columns (its rows need not be the original's).
    control
        Records of the same table the release was not made from (None: each risk is the
        attack's rate on the originals alone, which counts what the release teaches about
        anyone; the distance to closest record is then not measured).
    attacks
        Options of :data:`microagg.risk.registry.ATTACKS` (default: singling out,
        linkability and inference).
    settings
        The number of attacks, linkability's split, the secrets (:class:`AttackSettings`).
    columns
        The columns attacked (default: the original's).
    rng
        A numpy Generator or a seed.
    between
        Called before each attack (it may raise to stop the measurement: the web app's
        stop); it draws nothing, so the figures are the same with or without it.

    Returns
    -------
    AttackRisks
        The attacks' rates and risks with their 95 % intervals.

    Raises
    ------
    InputError
        For an unknown attack, bad settings or tables that do not fit each other.

    Examples
    --------
    A release that is the original itself links everyone; one drawn independently of it,
    nobody beyond chance:

    >>> import numpy as np, pandas as pd
    >>> draw = np.random.default_rng(0)
    >>> people = lambda n: pd.DataFrame({"age": draw.integers(18, 90, n),
    ...                                  "income": draw.normal(3e4, 1e4, n).round(),
    ...                                  "height": draw.normal(170, 10, n).round(1),
    ...                                  "city": draw.choice(list("abcdefgh"), n)})
    >>> original, control = people(2000), people(2000)
    >>> copied = attack_risks(original, original, control, ["linkability"], rng=1)
    >>> copied.linkability.risk > 0.5
    True
    >>> fresh = attack_risks(original, people(2000), control, ["linkability"], rng=1)
    >>> fresh.linkability.ci[0] < 0.05
    True
    """
    chosen = ["singling-out", "linkability", "inference"] if attacks is None else attacks
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown:
        raise InputError(f"unknown attack(s): {', '.join(unknown)} (choose among "
                         f"{', '.join(ATTACKS)})")
    tables = attack_tables(original, release, control, columns)
    if "closest-records" in chosen and control is None:
        raise InputError("the distance to closest record needs control records")
    asked = checked_settings(tables, settings or AttackSettings())
    generator = make_rng(rng)
    found = {}
    for a in ATTACKS:
        if a in chosen:
            if between is not None:
                between()
            found[ATTACKS[a].name] = function(ATTACKS[a].compute)(tables, asked, generator)
    return AttackRisks(**found, settings=asked)


def release_attacks(original: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame,
                    attacks: list[str], *, settings: AttackSettings | None = None,
                    rng: np.random.Generator | int | None = None,
                    between: Callable[[], None] | None = None) -> AttackRisks:
    """The attacks on a release as ``microagg evaluate --attacks`` and a recipe's
    ``attacks`` section run them: ``control`` holds held-out records of the original's
    table (its columns exactly), and the columns attacked are the original's that the
    release still has (a release may drop identifiers).

    Parameters
    ----------
    original, release, control
        As :func:`attack_risks`; ``control`` is required here.
    attacks
        Options of :data:`microagg.risk.registry.ATTACKS`.
    settings
        As :func:`attack_risks`.
    rng
        A numpy Generator or a seed: the same seed, the same figures.
    between
        As :func:`attack_risks`.

    Returns
    -------
    AttackRisks
        :func:`attack_risks` over the shared columns.

    Raises
    ------
    ParameterError
        For a ``control`` whose columns are not the original's.
    InputError
        As :func:`attack_risks`.

    Examples
    --------
    >>> import pandas as pd
    >>> people = pd.DataFrame({"age": range(40), "zip": list("abcd") * 10, "id": range(40)})
    >>> found = release_attacks(people.iloc[:30], people.iloc[:30, :2], people.iloc[30:],
    ...                         ["linkability"], rng=0)
    >>> found.settings.linkability_columns  # the identifier the release dropped is not attacked
    (['age'], ['zip'])
    >>> release_attacks(people.iloc[:30], people, people.iloc[30:, :2], ["linkability"])
    Traceback (most recent call last):
    ...
    microagg.errors.ParameterError: `control` must have the columns of the original ...
    """
    if set(map(str, control.columns)) != set(map(str, original.columns)):
        raise ParameterError("control", "must have the columns of the original (held-out "
                             "records of the same table); it has "
                             f"{', '.join(map(str, control.columns))}")
    columns = [c for c in original.columns if c in release.columns]
    return attack_risks(original, release, control, attacks, settings=settings,
                        columns=columns, rng=rng, between=between)
