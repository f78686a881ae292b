"""Methods compared at an equal attack-based risk: singling out, linkability or inference,
the three risks of the Article 29 Working Party (Opinion 05/2014), measured by attacking each
release as :mod:`microagg.risk.attacks` does (Anonymeter: Giomi et al. 2023, PoPETs 2023(2)).

The search is 003's (Domingo-Ferrer, Ricci and Soria-Comas 2016, §5.1;
:mod:`microagg.evaluation.calibration`) on the numeric candidates of
:func:`microagg.evaluation.compare.candidates`, with the risk of an attack in place of the
rank risk. An attack needs records the release was not made from: the table is split once,
at random, into the records every candidate releases and the control records held out of
every release (:data:`CONTROL_SHARE` of them, or a control table the owner gives). The risk
of a release is the attack's success on the released people beyond its success on the
control people, ``(attack - control) / (1 - control)``, clipped to [0, 1]; smaller is safer.
Every release is attacked on the same records (common random numbers: a difference between
two methods is not a difference between two draws of targets), and a randomized method's
risk is the mean over its seeds. The target is a ceiling: of the values whose 95 % interval
lies at or below the target (plus the tolerance), the least protective is kept, and methods
are ranked by the EMD they keep there (003 eq. 1). The least protective of the values
evaluated: the search assumes that the risk falls as protection grows, which an attack on a
sample of records need not do from one value to the next (singling out on a few hundred
records can rise with MDAV's k before it falls), so a value between two evaluated may meet
the target too; the report's curves show every value evaluated. Inference is held at its
worst secret column.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Schema
from microagg.errors import InputError
from microagg.evaluation.calibration import Calibrator, calibrate
from microagg.evaluation.compare import DEFAULT_METHODS, candidates, compared_matrix, stated_domains
from microagg.evaluation.comparison import EMD_DEFINITION, Comparison
from microagg.evaluation.evaluate import attribute_domains
from microagg.evaluation.targets import (
    check_search,
    chosen_methods,
    parse_target,
    ranking,
    require_reach,
    target_level,
)
from microagg.options import (
    CompareMethod,
    RankScale,
    RiskAggregate,
    RiskKind,
    Target,
    TargetMatch,
    parse,
)
from microagg.risk.attack_data import AttackTables, attack_tables
from microagg.risk.attack_rates import attacked_count
from microagg.risk.attack_words import inference_words, linkability_words, singling_out_words
from microagg.risk.attacks import TOO_FEW_TO_SPLIT, AttackSettings, checked_settings
from microagg.risk.inference import inference
from microagg.risk.linkability import linkability
from microagg.risk.singling_out import singling_out
from microagg.version import installed_version

__all__ = ["ATTACKS_N", "CONTROL_SHARE", "PREDICATE_TRIES", "AttackCalibrator", "attack_definition",
           "attack_level", "attack_target", "check_attack", "compare_attacks", "control_rows"]

CONTROL_SHARE = 0.2
"""The share of the records held out as control records when no control table is given."""
ATTACKS_N = 2000
"""Records (predicates for singling out) attacked per release, by default."""
PREDICATE_TRIES = 20
"""Singling out draws at most this many candidate predicates per predicate asked (and at
least ten thousand): a release with few distinct records (MDAV's at a large k) offers few
predicates that isolate one of them, and the search would otherwise run to Anonymeter's ten
million tries at every value searched."""


SPLIT_STREAM, ATTACK_STREAM = 1, 2
"""The streams of the control split and of the attacks' draws (:func:`stream`)."""


def stream(seed: int, key: int) -> np.random.Generator:
    """The generator of the draw ``key`` of ``seed``: a child of ``seed``'s seed sequence,
    which no release's run ``np.random.default_rng((seed, run))`` can take, so that neither
    the records held out nor the records attacked follow the noise of a release."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))


class AttackCalibrator(Calibrator):
    """Measures a release by an attack on it (module docstring): the rank risk of
    :class:`~microagg.evaluation.calibration.Calibrator` replaced by the attack's risk,
    smaller = safer, held as a ceiling."""

    ceiling = True

    def __init__(self, X: np.ndarray, control: np.ndarray, names: Sequence[str],
                 lows: np.ndarray, highs: np.ndarray, *, kind: RiskKind,
                 settings: AttackSettings, seeds: int, seed: int,
                 progress: Callable[[str], None] | None) -> None:
        super().__init__(X, lows, highs, target=Target.RISK, seeds=seeds, seed=seed,
                         scale=RankScale.RANKS, aggregate=RiskAggregate.MEAN_OF_LOGS,
                         progress=progress)
        self.names, self.kind, self.settings = list(names), kind, settings
        self.original = pd.DataFrame(X, columns=self.names)
        self.control = pd.DataFrame(control, columns=self.names)

    @property
    def better_above(self) -> bool:
        """A smaller attack risk is safer."""
        return False

    def tables(self, Y: np.ndarray) -> AttackTables:
        """The original (released part), the release ``Y`` and the control records."""
        return attack_tables(self.original, pd.DataFrame(Y, columns=self.names),
                             self.control)

    def risk(self, Y: np.ndarray) -> float:
        """The attack's risk on the release ``Y``, its targets drawn from the same seed for
        every release."""
        return attack_level(self.tables(Y), self.kind, self.settings, self.seed)


def attack_level(tables: AttackTables, kind: RiskKind, settings: AttackSettings,
                 seed: int) -> float:
    """The risk of the attack ``kind`` on ``tables`` (module docstring): its targets drawn
    from the stream :data:`ATTACK_STREAM` of ``seed``, the same for every release; for
    inference, the worst of the secret columns (default: every column).

    Parameters
    ----------
    tables : AttackTables
        The released part of the original, the release and the control records.
    kind : RiskKind
        ``singling-out`` (multivariate), ``linkability`` or ``inference``.
    settings : AttackSettings
        Checked settings (:func:`~microagg.risk.attacks.checked_settings`).
    seed : int
        The comparison's seed.

    Returns
    -------
    float
        The risk, in [0, 1].
    """
    rng = stream(seed, ATTACK_STREAM)
    if kind is RiskKind.LINKABILITY:
        assert settings.linkability_columns is not None
        return linkability(tables, settings.linkability_columns, n_attacks=settings.n_attacks,
                           n_neighbors=settings.n_neighbors, rng=rng).risk
    names = tables.columns
    if kind is RiskKind.SINGLING_OUT:
        n_cols = min(settings.n_cols, len(names))
        # no more predicates are sought than a release record and n_cols columns make
        wanted = min(settings.n_attacks, len(tables.release) * math.comb(len(names), n_cols))
        return singling_out(tables, mode="multivariate", n_attacks=wanted, n_cols=n_cols,
                            max_attempts=max(10_000, PREDICATE_TRIES * wanted), rng=rng).risk
    return max(inference(tables, c, n_attacks=settings.n_attacks,
                         tolerance=settings.tolerance, rng=stream(seed, ATTACK_STREAM)).risk
               for c in settings.secrets or names)


def attack_target(target_risk: str | float) -> float | tuple[str, float]:
    """The target of an attack's risk (:func:`~microagg.evaluation.targets.parse_target`),
    a number refused outside [0, 1]."""
    spec = parse_target(target_risk)
    if not isinstance(spec, tuple) and spec > 1:
        raise InputError(f"an attack's risk lies in [0, 1], got the target {spec:g}")
    return spec


def check_attack(kind: RiskKind, settings: AttackSettings, columns: int) -> None:
    """Refuse an attack that ``columns`` attacked columns cannot take: linkability without
    a split of them, inference on fewer than two."""
    if kind is RiskKind.LINKABILITY and settings.linkability_columns is None:
        raise InputError(TOO_FEW_TO_SPLIT)
    if kind is RiskKind.INFERENCE and columns < 2:
        raise InputError("inference needs at least two columns: the attacker guesses one "
                         "from the others")


def control_rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows released and the rows held out as control records: :data:`CONTROL_SHARE`
    of ``n`` drawn at random (seeded), each in row order.

    Examples
    --------
    >>> released, held = control_rows(10, seed=0)
    >>> len(released), len(held), sorted([*released, *held]) == list(range(10))
    (8, 2, True)
    """
    held = round(CONTROL_SHARE * n)
    if held < 2 or n - held < 4:
        raise InputError(f"the attacks need control records: {n} records are too few to hold "
                         f"{CONTROL_SHARE:.0%} out (give a control table)")
    order = stream(seed, SPLIT_STREAM).permutation(n)
    return np.sort(order[held:]), np.sort(order[:held])


def _split(X: np.ndarray, control: np.ndarray | None, seed: int
           ) -> tuple[np.ndarray, np.ndarray, int]:
    """The records released and the control records: ``control`` as given, else
    :data:`CONTROL_SHARE` of ``X`` drawn at random (seeded)."""
    if control is not None:
        return X, control, 0
    released, held = control_rows(X.shape[0], seed)
    return X[released], X[held], len(held)


def _reading(kind: RiskKind, level: float, settings: AttackSettings,
             names: Sequence[str]) -> str:
    """What a risk ``level`` of ``kind`` means, in words for a data-protection officer
    (:mod:`microagg.risk.attack_words`), with what its two ends mean."""
    if kind is RiskKind.LINKABILITY:
        assert settings.linkability_columns is not None
        return (f"at a linkability risk of {level:.3g}, "
                + linkability_words(level, settings.linkability_columns, at_most=True)
                + " (0 = the release links its people no better than anyone's; 1 = it "
                "links every one of them)")
    if kind is RiskKind.SINGLING_OUT:
        return (f"at a singling-out risk of {level:.3g}, "
                + singling_out_words(level, names, min(settings.n_cols, len(names)),
                                     at_most=True)
                + " (0 = his conditions single out the people in the release no better "
                "than anyone; 1 = every one singles one out)")
    secrets = settings.secrets or names
    return (f"at an inference risk of {level:.3g}, "
            + inference_words(level, ", ".join(secrets), settings.tolerance, at_most=True,
                              worst=len(secrets) > 1)
            + " (0 = no better than for anyone; 1 = right for every one)")


def compare_attacks(frame: pd.DataFrame, *, target_risk: str | float,
                    risk_kind: RiskKind | str = RiskKind.LINKABILITY,
                    methods: Sequence[CompareMethod | str] | None = None,
                    columns: Sequence[str] | None = None, schema: Schema | None = None,
                    control: pd.DataFrame | None = None,
                    linkability_columns: tuple[list[str], list[str]] | None = None,
                    secrets: Sequence[str] | None = None, attacks_n: int = ATTACKS_N,
                    seeds: int = 10, tolerance: float = 0.0025, seed: int = 0,
                    progress: Callable[[str], None] | None = None,
                    source: str | None = None, regression: str | None = None) -> Comparison:
    """Calibrate every method of ``methods`` to at most ``target_risk`` of an attack and
    rank them by the EMD they keep (module docstring).

    Parameters
    ----------
    frame
        The original records.
    target_risk
        The risk to hold: a number in [0, 1], or ``METHOD=VALUE`` (the risk of that method
        with that parameter value on the data).
    risk_kind
        ``singling-out``, ``linkability`` or ``inference``.
    methods
        The numeric candidates compared (default: the four of Domingo-Ferrer, Ricci and
        Soria-Comas 2016).
    columns
        The numeric columns released and attacked (default: the schema's
        quasi-identifiers, else every numeric column).
    schema
        Declared domains and roles.
    control
        Original records no release is made from; default: :data:`CONTROL_SHARE` of
        ``frame`` held out at random.
    linkability_columns
        The two sets of columns the linkability attacker holds (default: the first half
        of ``columns`` and the rest).
    secrets
        The columns inference guesses (default: every column; the worst is held); one
        column may be named alone.
    attacks_n
        Records (or predicates) attacked per release: an integer, Python's or numpy's.
    seeds, tolerance, seed, progress, source
        As :func:`microagg.evaluation.compare.compare` takes them.
    regression : str, optional
        A model ``y ~ a + b + …`` of the analyst's (:func:`~microagg.evaluation.analysis.
        regression_utility`): each ranked method's release at its value (the first seed's)
        is then judged by the mean overlap of the model's confidence intervals on it and on
        the records released (Karr et al. 2006), and the methods are ranked by it too, in
        the comparison's ``data["analysis"]``; the model may name columns the methods do
        not mask, which the release carries unchanged.

    Returns
    -------
    Comparison
        Its ``risk_definition`` says which attack and its ``reading`` what the target means.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> frame = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    >>> result = compare_attacks(frame, target_risk=0.1, risk_kind="linkability",
    ...                          methods=["mdav"], seeds=2)
    >>> result.match.value, result.by_method()[CompareMethod.MDAV].risk <= 0.1 * 1.0025
    ('at-most', True)
    """
    kind = parse(RiskKind, risk_kind, "risk kind")
    if not kind.by_attack:
        raise InputError(f"compare_attacks holds an attack's risk (singling-out, linkability "
                         f"or inference), not {kind.value}")
    spec = attack_target(target_risk)
    check_search(seeds, tolerance, seed)
    if (not isinstance(attacks_n, numbers.Integral) or isinstance(attacks_n, bool | np.bool_)
            or attacks_n < 1):
        raise InputError(f"the number of attacks must be a positive integer, got {attacks_n}")
    if linkability_columns is not None and kind is not RiskKind.LINKABILITY:
        raise InputError(f"`linkability_columns` applies to the linkability risk, not to "
                         f"{kind.value}")
    if secrets is not None and kind is not RiskKind.INFERENCE:
        raise InputError(f"`secrets` applies to the inference risk, not to {kind.value}")
    offered = {m: "" for m in CompareMethod if not m.keys_only}
    chosen = chosen_methods(methods, DEFAULT_METHODS, offered,
                            "it protects categorical keys: compare_keys compares it")
    names, selected, X = compared_matrix(frame, schema, columns)
    held = None
    if control is not None:
        lacking = [c for c in names if c not in control.columns]
        if lacking:
            raise InputError(f"the control table lacks the column(s) {', '.join(lacking)}")
        try:
            held = compared_matrix(control[names], selected, names)[2]
        except InputError as error:
            raise InputError(f"the control table: {error}") from None
    released, held_out, drawn = _split(X, held, seed)
    probe = attack_tables(pd.DataFrame(released[:2], columns=names),
                          pd.DataFrame(released[:2], columns=names),
                          pd.DataFrame(held_out[:2], columns=names))
    settings = checked_settings(probe, AttackSettings(
        n_attacks=int(attacks_n), linkability_columns=linkability_columns,
        secrets=None if secrets is None else [secrets] if isinstance(secrets, str)
        else list(secrets)))
    check_attack(kind, settings, len(names))
    lows, highs, sources = attribute_domains(selected, released)
    table = candidates(released, lows, highs, declared=all(s == "schema" for s in sources))
    cal = AttackCalibrator(released, held_out, names, lows, highs, kind=kind,
                           settings=settings, seeds=int(seeds), seed=seed, progress=progress)
    target_value, target_source = target_level(cal, table, spec)
    band = abs(target_value) * tolerance
    results = tuple(calibrate(cal, table[m], target_value, band) for m in chosen)
    require_reach(results, Target.RISK, target_value)
    definition = attack_definition(kind, settings, names, released.shape[0],
                                   held_out.shape[0], bool(drawn), target_value)
    data = {"rows": int(released.shape[0]), "control_rows": int(held_out.shape[0]),
            "columns": names, "domains": stated_domains(names, lows, highs, sources)}
    if regression is not None:
        part = frame if not drawn else frame.iloc[control_rows(len(frame), seed)[0]]
        data["analysis"] = _analysis(part.reset_index(drop=True), released, names, table,
                                     results, regression, seed)
    return replace(Comparison(
        Target.RISK, float(target_value), target_source, band, int(seeds), definition,
        data,
        results, ranking(results, Target.RISK),
        {"input": source, "created": datetime.now(UTC).isoformat(timespec="seconds"),
         "microagg": installed_version(),
         "columns_left_out": [str(c) for c in frame.columns if c not in names]},
        dict(EMD_DEFINITION)), risk_kind=kind, match=TargetMatch.AT_MOST)


def attack_definition(kind: RiskKind, settings: AttackSettings, names: Sequence[str],
                      released: int, held_out: int, drawn: bool, level: float
                      ) -> dict[str, str]:
    """The risk held, as a comparison states it: the attack, its control records (``drawn``
    at random from the table, else a control table's), the records it attacks and what the
    risk ``level`` means in words.

    Parameters
    ----------
    kind : RiskKind
        The attack.
    settings : AttackSettings
        Its checked settings.
    names : sequence of str
        The columns attacked.
    released, held_out : int
        The records released and the control records.
    drawn : bool
        Whether the control records were held out of the table at random.
    level : float
        The target risk.

    Returns
    -------
    dict
        ``measure``, ``label``, ``attack``, ``control records``, ``records attacked``,
        ``interval`` and ``reading``.
    """
    return {
        "measure": f"{kind.value} risk of an attack on each release (Anonymeter's, Giomi et "
                   "al. 2023): the attack's success on the released people beyond its "
                   "success on control people, (attack - control) / (1 - control) "
                   "(smaller = safer)",
        "label": f"{kind.value} risk",
        "attack": _attack_words(kind, settings, names),
        "control records": (f"{held_out:,} records held out of every release at random"
                            if drawn else f"{held_out:,} records of the control table given"),
        "records attacked": _attacked(kind, settings, released, held_out),
        "interval": "a value's 95 % interval is over the releases of a randomized method's "
                    "seeds (a point for a method without randomness); the attack's own "
                    "sampling error on the records attacked is not in it",
        "reading": _reading(kind, level, settings, names),
    }


def _analysis(part: pd.DataFrame, released: np.ndarray, names: Sequence[str], table: Any,
              results: Sequence[Any], formula: str, seed: int) -> dict[str, Any]:
    """Each ranked method judged by the regression ``formula`` (:func:`compare_attacks`):
    its release at its value, drawn as the search's first seed drew it (``(seed, 0)``),
    beside the released records ``part``; the methods ranked by the mean CI overlap."""
    from microagg.evaluation.analysis import regression_utility

    overlap: dict[str, float | None] = {}
    for r in results:
        if not r.ranked:
            continue
        release = part.copy()
        release[list(names)] = table[r.method].mask(released, r.value,
                                                    np.random.default_rng((seed, 0)))
        overlap[r.method.value] = regression_utility(part, release, formula).mean_ci_overlap
    return {"regression": formula,
            "measure": "mean overlap of the model's 95 % confidence intervals on the release "
                       "and on the records released, per coefficient (Karr et al. 2006; 1 = "
                       "the same inference, larger = better), the first seed's release",
            "ci_overlap": overlap,
            "ranking": sorted((m for m, v in overlap.items() if v is not None),
                              key=lambda m: -(overlap[m] or 0.0))}


def _attack_words(kind: RiskKind, settings: AttackSettings, names: Sequence[str]) -> str:
    """The attack's settings, in a few words."""
    if kind is RiskKind.LINKABILITY:
        assert settings.linkability_columns is not None
        first, second = (",".join(part) for part in settings.linkability_columns)
        return (f"linkability of {first} with {second} through the nearest "
                f"{settings.n_neighbors} release record(s) of each")
    if kind is RiskKind.SINGLING_OUT:
        return (f"multivariate singling out, predicates on {min(settings.n_cols, len(names))} "
                "columns each")
    return (f"inference of {', '.join(settings.secrets or names)} from the other columns "
            "(the worst column held)")


def _attacked(kind: RiskKind, settings: AttackSettings, released: int, held_out: int) -> str:
    """How many records (or predicates) each release's attack tries, in words."""
    if kind is RiskKind.SINGLING_OUT:
        return (f"up to {settings.n_attacks:,} predicates per release, those its records "
                "offer (each rate is over the predicates written), drawn from the same random "
                "stream for every release")
    count = attacked_count(settings.n_attacks, [released, held_out])
    return (f"{count:,} released and {count:,} control records per release, the same for "
            "every release")
