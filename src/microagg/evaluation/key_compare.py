"""Compare methods for categorical keys at equal risk: "recode and suppress" against
"microaggregate the keys" against PRAM (the comparison of paper 003 §3 with the risk
measures of categorical keys).

For a target categorical risk (:class:`~microagg.options.RiskKind`: the expected number of
re-identifications, the global risk or the violations of k, measured on the released keys as
:mod:`microagg.evaluation.key_measures` says), each candidate's parameter
(:mod:`microagg.evaluation.key_candidates`) is calibrated by the search of
:mod:`microagg.evaluation.calibration` (grid, bisection, seeds with Student-t intervals, the
outcomes matched / exceeds / short / unsettled), and the methods are ranked by the
information they lose at that risk (:func:`~microagg.evaluation.key_measures.
information_loss`, smaller = better).

These risks move by steps (they count records, and k and the recoding level are integers),
so a value whose risk lies inside a narrow band around the target often does not exist. By
default (``match="at-most"``) a method is matched at its least protective value whose risk
is at most the target (its 95 % interval under target · (1 + tolerance)) — what a
statistical office asks of a release; ``match="within"`` asks, as 003, for a risk inside
target · (1 ± tolerance).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.schema import Role, Schema
from microagg.data.weights import sampling_weights
from microagg.errors import InputError
from microagg.evaluation.calibration import (
    UTILITY_SEEDS,
    Candidate,
    calibrate,
    interval,
    summarize,
)
from microagg.evaluation.comparison import Comparison, Evaluation
from microagg.evaluation.key_candidates import KeyInput, key_candidates, recodings
from microagg.evaluation.key_measures import (
    KeyCoding,
    KeyLoss,
    KeyRiskMeasure,
    KeyUtility,
    information_loss,
)
from microagg.evaluation.targets import (
    check_search,
    chosen_methods,
    is_integer,
    parse_target,
    ranking,
    require_reach,
    target_level,
)
from microagg.options import (
    CompareMethod,
    MissingValues,
    RiskKind,
    Target,
    TargetMatch,
    parse,
)
from microagg.release.design import Design
from microagg.release.families.keys import KeyData
from microagg.release.inputs import resolve_schema
from microagg.risk.categorical import categorical_risk
from microagg.version import installed_version

__all__ = ["DEFAULT_KEY_METHODS", "KeyCalibrator", "compare_keys"]

DEFAULT_KEY_METHODS = (CompareMethod.LOCAL_SUPPRESSION, CompareMethod.RECODE_THEN_SUPPRESS,
                       CompareMethod.GLOBAL_RECODING, CompareMethod.INVARIANT_PRAM,
                       CompareMethod.MDAV)
"""The methods compared by default (those the data allow: recoding needs a taxonomy or an
interval width)."""

UTILITY_DEFINITION = {
    "measure": "information loss: the share of each key's entropy that the released values "
               "leave unknown, H(X | released) / H(X), mean over the keys (non-uniform "
               "entropy: de Waal and Willenborg 1999; Gionis and Tassa 2009; smaller = "
               "better)",
    "label": "information loss",
    "suppressed cells": "a suppressed value stands for the whole domain: all the "
                        "information of the cell is lost",
    "beside it": "the shares of key cells changed and suppressed",
}
"""The utility ranked on, as the comparison states it."""


@dataclass(frozen=True)
class _Point:
    """The information loss of the first seed's release (exact: no bound)."""

    value: float
    bound: float = 0.0


class KeyCalibrator:
    """Measures the releases of candidates for categorical keys: the risk held (smaller is
    safer), and the information loss of the chosen releases (a
    :class:`~microagg.evaluation.calibration.Measurer`)."""

    target = Target.RISK
    better_above = False

    def __init__(self, inp: KeyInput, measure: KeyRiskMeasure, *, seeds: int, seed: int,
                 match: TargetMatch, progress: Callable[[str], None] | None) -> None:
        self.inp, self.measure = inp, measure
        self.seeds, self.seed, self.match = seeds, seed, match
        self.progress = progress

    @property
    def ceiling(self) -> bool:
        return self.match is TargetMatch.AT_MOST

    def release(self, c: Candidate, value: float, run: int) -> np.ndarray:
        """The released keys, coded against the original's."""
        return c.mask(self.inp.coding.codes, value, np.random.default_rng((self.seed, run)))

    def risk(self, c: Candidate, released: np.ndarray) -> float:
        """The risk of a release; of a randomized method's, over the records it left as
        they were (:mod:`~microagg.evaluation.key_measures`)."""
        own = (released == self.inp.coding.codes).all(axis=1) if c.randomized else None
        return self.measure(released, own)

    def loss(self, released: np.ndarray) -> KeyLoss:
        return information_loss(self.inp.coding, released)

    def evaluate(self, c: Candidate, value: float, runs: int,
                 known: Evaluation | None = None) -> Evaluation:
        """The risk at ``value`` over ``runs`` seeds; the runs of ``known`` are kept."""
        runs = runs if c.randomized else 1
        if self.progress is not None:
            self.progress(f"{c.method.value}: {c.parameter} = {value:.4g} ({runs} runs)")
        measures = list(known.measures) if known is not None else []
        first = None
        for run in range(len(measures), runs):
            released = self.release(c, value, run)
            measures.append(self.risk(c, released))
            if run == 0:  # the first seed's release stands for the value in the scatter
                first = self.loss(released).information_loss
        if known is not None:
            return summarize(value, measures, known.risk, known.loss, known.loss_bound)
        assert first is not None
        return summarize(value, measures, measures[0], first, 0.0)

    def utility(self, c: Candidate, value: float) -> tuple[KeyUtility, _Point]:
        """The utility at ``value`` over up to :data:`UTILITY_SEEDS` releases."""
        runs = min(self.seeds, UTILITY_SEEDS) if c.randomized else 1
        losses = [self.loss(self.release(c, value, run)) for run in range(runs)]
        values = np.array([loss.information_loss for loss in losses])
        low, high = interval(values)
        per_key = {key: float(np.mean([loss.per_key[key] for loss in losses]))
                   for key in losses[0].per_key}
        utility = KeyUtility(float(values.mean()), (high - low) / 2, per_key,
                             float(np.mean([loss.changed_percent for loss in losses])),
                             float(np.mean([loss.suppressed_percent for loss in losses])),
                             seeds=runs)
        return utility, _Point(losses[0].information_loss)


def _input(frame: pd.DataFrame, keys: list[str], weight: str | None, schema: Schema | None,
           recode: Sequence[str] | None, widths: Mapping[str, float] | str | None,
           recode_level: int) -> KeyInput:
    """The keys and the weight with their schema and design, the original coded, and the
    recodings; a schema's strata are refused (the comparison protects the file as one)."""
    roles: dict[str, Role | str] = {key: Role.QUASI for key in keys}
    if weight is not None:
        roles[weight] = Role.WEIGHT
    resolved, _ = resolve_schema(frame, schema, roles)
    strata = resolved.names_with_role(Role.STRATUM)
    if strata:
        raise InputError(f"the schema declares the strata {', '.join(strata)}; the comparison "
                         "of methods for keys protects the file as a whole: compare each "
                         "stratum's file on its own")
    columns = [*keys, *([weight] if weight is not None else [])]
    part = frame[columns].reset_index(drop=True)
    weights = None if weight is None else sampling_weights(part[weight], weight)
    design = Design(weight, weights, (), None, ())
    data = KeyData(part, resolved.select(columns), keys, design, [])
    found = recodings(part, resolved, keys, recode, widths)
    if found and not (is_integer(recode_level) and
                      1 <= recode_level <= max(r.height for r in found.values())):
        raise InputError(f"`recode_level` must be an integer from 1 to "
                         f"{max(r.height for r in found.values())} (the levels of the "
                         f"recoded keys), got {recode_level!r}")
    return KeyInput(data, KeyCoding.of(part, keys), found, recode_level)


def _measure(kind: RiskKind | str, k: int | None, weights: np.ndarray | None,
             missing: MissingValues) -> KeyRiskMeasure:
    kind = parse(RiskKind, kind, "risk kind")
    if kind is RiskKind.RANK:
        raise InputError("the rank risk is a risk of numeric attributes: compare them "
                         "with compare, not compare_keys")
    if kind is not RiskKind.VIOLATIONS and k is not None:
        raise InputError(f"`k` counts the violations of k; it applies to the risk kind "
                         f"violations, not {kind.value}")
    k = 5 if k is None else k
    if not is_integer(k) or k < 2:
        raise InputError(f"`k` must be an integer of at least 2, got {k!r}")
    return KeyRiskMeasure(kind, weights, missing, int(k))


def compare_keys(frame: pd.DataFrame, *, target_risk: str | float,
                 risk_kind: RiskKind | str = RiskKind.EXPECTED_REIDENTIFICATIONS,
                 keys: Sequence[str] | None = None, weight: str | None = None,
                 k: int | None = None, schema: Schema | None = None,
                 missing: MissingValues | str = MissingValues.MATCHES_ANY,
                 methods: Sequence[CompareMethod | str] | None = None,
                 recode: Sequence[str] | None = None,
                 widths: Mapping[str, float] | str | None = None, recode_level: int = 1,
                 match: TargetMatch | str = TargetMatch.AT_MOST, seeds: int = 10,
                 tolerance: float = 0.0025, seed: int = 0,
                 progress: Callable[[str], None] | None = None,
                 source: str | None = None, control: pd.DataFrame | None = None,
                 linkability_columns: tuple[list[str], list[str]] | None = None,
                 secrets: Sequence[str] | None = None,
                 attacks_n: int | None = None) -> Comparison:
    """Calibrate methods for categorical keys to a target categorical risk, or to an
    attack's risk on the released keys, and rank them by the information they lose (module
    docstring; docs/algorithms.md).

    Parameters
    ----------
    frame
        The original table.
    target_risk
        The risk to reach: a number, or ``METHOD=VALUE`` such as ``local-suppression=5``
        (the risk that method has with that parameter value on the data).
    risk_kind
        ``expected-reidentifications`` (Σ individual risk), ``global-risk`` (its mean) or
        ``violations`` (records with f_k < ``k``), of the released keys.
    keys, weight
        The key variables and the sampling weight (default: the schema's).
    k
        The k of ``violations`` (default 5).
    schema
        Roles, kinds, numeric domains and the taxonomies recoding climbs.
    missing
        What a missing key value matches (``matches-any``, sdcMicro's default, or
        ``category``).
    methods
        Among local-suppression, recode-then-suppress, global-recoding, invariant-pram and
        mdav (default: those the data allow).
    recode, widths, recode_level
        The keys recoding recodes (default: those with a taxonomy or a width), the interval
        width of each numeric one at level 1 (a mapping, or text such as ``age=5``), and the
        fixed level of recode-then-suppress.
    match
        ``at-most`` (default): the least protective value whose risk is at most the
        target; ``within``: a risk inside target · (1 ± tolerance), as 003.
    seeds, tolerance, seed, progress, source
        As :func:`~microagg.evaluation.compare.compare`.
    control, linkability_columns, secrets, attacks_n
        With an attack's ``risk_kind`` (``singling-out``, ``linkability``, ``inference``:
        :mod:`~microagg.evaluation.key_attacks`), as
        :func:`~microagg.evaluation.attack_compare.compare_attacks` takes them, over the
        keys: the control records (default: a share of ``frame`` held out of every
        release), the linkability split, the secret keys and the records attacked.

    Returns
    -------
    Comparison
        Its ``risk_definition`` and ``utility_definition`` say what was held and ranked.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"sex": list("mmmmmfffff"), "region": list("aaabcaabbd")})
    >>> result = compare_keys(frame, target_risk=0, risk_kind="violations", k=3,
    ...                       keys=["sex", "region"], methods=["local-suppression", "mdav"])
    >>> [(m.method.value, m.value, m.risk, m.status.value) for m in result.methods]
    [('local-suppression', 3.0, 0.0, 'matched'), ('mdav', 3.0, 0.0, 'matched')]
    >>> [m.value for m in result.ranking]  # local suppression loses less information
    ['local-suppression', 'mdav']
    """
    check_search(seeds, tolerance, seed)
    match = parse(TargetMatch, match, "match")
    missing = parse(MissingValues, missing, "missing")
    kind = parse(RiskKind, risk_kind, "risk kind")
    asked = {"control": control, "linkability_columns": linkability_columns,
             "secrets": secrets, "attacks_n": attacks_n}
    held: pd.DataFrame | None = None
    if kind.by_attack:
        from microagg.evaluation.attack_compare import attack_target

        attack_target(target_risk)
        frame, held, drawn = _held_out(frame, control, seed, match, k, weight)
    else:
        given = next((name for name, value in asked.items() if value is not None), None)
        if given is not None:
            raise InputError(f"`{given}` applies to an attack's risk (singling-out, "
                             f"linkability or inference), not to {kind.value}")
    original = categorical_risk(frame, keys, weight=weight, schema=schema, missing=missing)
    keys, weight = original.keys, original.weight
    if len(frame) < 4:
        raise InputError(f"the comparison needs at least 4 records, got {len(frame)}")
    inp = _input(frame, keys, weight, schema, recode, widths, recode_level)
    measure: Any
    if held is not None:
        from microagg.evaluation.attack_compare import ATTACKS_N, check_attack
        from microagg.evaluation.key_attacks import KeyAttackMeasure
        from microagg.risk.attacks import AttackSettings

        lacking = [key for key in keys if key not in held.columns]
        if lacking:
            raise InputError(f"the control table lacks the key(s) {', '.join(lacking)}")
        measure = KeyAttackMeasure.of(kind, inp.coding, held, AttackSettings(
            n_attacks=ATTACKS_N if attacks_n is None else int(attacks_n),
            linkability_columns=linkability_columns,
            secrets=None if secrets is None else [secrets] if isinstance(secrets, str)
            else list(secrets)), seed=seed, drawn=drawn)
        check_attack(kind, measure.settings, len(keys))
    else:
        measure = _measure(kind, k, inp.data.design.weights, missing)
    table, reasons = key_candidates(inp)
    chosen = chosen_methods(methods or [m for m in DEFAULT_KEY_METHODS if not reasons[m]],
                            DEFAULT_KEY_METHODS, reasons,
                            "it masks numeric attributes: compare compares it at the rank "
                            "risk")
    spec = parse_target(target_risk)
    cal = KeyCalibrator(inp, measure, seeds=int(seeds), seed=seed, match=match,
                        progress=progress)
    target_value, target_source = target_level(cal, table, spec)
    band = abs(target_value) * tolerance
    results = tuple(calibrate(cal, table[m], target_value, band) for m in chosen)
    require_reach(results, Target.RISK, target_value)
    definition = (measure.definition(weight, float(target_value)) if held is not None
                  else measure.definition(weight))
    data = _data(inp, measure, reasons, chosen)
    if held is not None:
        data["control_rows"] = len(held)
    return Comparison(
        Target.RISK, float(target_value), target_source, band, int(seeds),
        definition, data, results,
        ranking(results, Target.RISK),
        {"input": source, "created": datetime.now(UTC).isoformat(timespec="seconds"),
         "microagg": installed_version(),
         "columns_left_out": [str(c) for c in frame.columns
                              if c not in keys and c != weight]},
        dict(UTILITY_DEFINITION), measure.kind, match)


def _held_out(frame: pd.DataFrame, control: pd.DataFrame | None, seed: int,
              match: TargetMatch, k: int | None, weight: str | None
              ) -> tuple[pd.DataFrame, pd.DataFrame, bool]:
    """The records released and the control records of an attack's risk (``control``, else
    a share of ``frame`` held out at random), and whether they were drawn; the options of
    the categorical risks are refused."""
    from microagg.evaluation.attack_compare import control_rows

    if match is not TargetMatch.AT_MOST:
        raise InputError("an attack's risk is held as a ceiling: `match` at-most only")
    for name, value in (("k", k), ("weight", weight)):
        if value is not None:
            raise InputError(f"`{name}` applies to the categorical risks, not to an attack's")
    if control is not None:
        return frame.reset_index(drop=True), control.reset_index(drop=True), False
    released, held = control_rows(len(frame), seed)
    return (frame.iloc[released].reset_index(drop=True),
            frame.iloc[held].reset_index(drop=True), True)


def _data(inp: KeyInput, measure: Any, reasons: dict[CompareMethod, str],
          chosen: Sequence[CompareMethod]) -> dict[str, Any]:
    """The data as the comparison states it: the keys, the original's risk, the recodings
    and the methods the data do not allow."""
    codes = inp.coding.codes
    return {
        "rows": inp.n, "columns": list(inp.coding.keys), "weight": inp.data.design.weight,
        "original_risk": measure(codes),
        "keys": {key: {"values": len(inp.coding.values[j]),
                       "missing": int((codes[:, j] < 0).sum()),
                       "recoding": (inp.recodings[key].describe() if key in inp.recodings
                                    else None)}
                 for j, key in enumerate(inp.coding.keys)},
        "recode_level": inp.recode_level if inp.recodings else None,
        "methods_left_out": {m.value: why for m, why in reasons.items()
                             if why and m not in chosen},
    }
