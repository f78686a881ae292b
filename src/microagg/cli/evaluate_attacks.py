"""``microagg evaluate --attacks``: what the attacks on the release are asked, and their
results in words (:mod:`microagg.risk.attacks`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microagg.cli.common import fmt, names, read_input
from microagg.errors import InputError
from microagg.risk.registry import ATTACKS, percent

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["attack_lines", "attack_request", "linkability_split"]

Attacks = Callable[["pd.DataFrame", "pd.DataFrame"], dict[str, Any]]


def linkability_split(value: str | None) -> tuple[list[str], list[str]] | None:
    """``A,B|C,D`` as the two column sets of linkability."""
    if value is None:
        return None
    parts = value.split("|")
    if len(parts) != 2:
        raise InputError("--linkability-columns takes two column sets, as A,B|C,D")
    first, second = (names(p, "--linkability-columns") or [] for p in parts)
    return first, second


def attack_request(attacks: str | None, control: Path | None, *, linkability_columns: str | None,
                   secrets: str | None, n_attacks: int, seed: int | None,
                   decimal: str | None, thousands: str | None) -> Attacks | None:
    """The attacks ``--attacks`` asks, run on (original, release) as the JSON ``attacks``
    entry; None when none is asked.

    Raises
    ------
    InputError
        For an unknown attack, an option of the attacks without ``--attacks``, or
        ``--attacks`` without ``--control``.
    """
    if attacks is None:
        if control is not None or linkability_columns is not None or secrets is not None:
            raise InputError("--control, --linkability-columns and --secret go with --attacks "
                             f"({', '.join(ATTACKS)})")
        return None
    chosen = names(attacks, "--attacks") or []
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown or not chosen:
        raise InputError(f"--attacks takes {', '.join(ATTACKS)}, comma-separated; got "
                         f"{attacks!r}")
    if control is None:
        raise InputError("--attacks needs --control: original records the release was not "
                         "made from, so that what it leaks about the people in it is told "
                         "apart from what it teaches about anyone")
    if n_attacks < 1:
        raise InputError(f"--attacks-n must be at least 1, got {n_attacks}")
    if seed is not None and seed < 0:
        raise InputError(f"--seed must be 0 or more, got {seed}")
    split = linkability_split(linkability_columns)
    secret_columns = names(secrets, "--secret")
    held = read_input(control, decimal, thousands)

    def run(original: pd.DataFrame, release: pd.DataFrame) -> dict[str, Any]:
        from microagg.risk.attacks import AttackSettings, release_attacks

        settings = AttackSettings(n_attacks=n_attacks, linkability_columns=split,
                                  secrets=secret_columns)
        return release_attacks(original, release, held, chosen, settings=settings,
                               rng=seed).to_dict()

    return run


def _risk_line(label: str, found: dict[str, Any]) -> str:
    low, high = found["ci"]
    control = "" if found["control_rate"] is None else (
        f", on control records {percent(found['control_rate'])}")
    return (f"  {label}: risk {percent(found['risk'])} (95 % interval {percent(low)} to "
            f"{percent(high)}); the attack succeeds on {percent(found['attack_rate'])} of "
            f"{found['n_attacks']:,} tries{control}, guessing on "
            f"{percent(found['baseline_rate'])}")


def attack_lines(found: dict[str, Any]) -> list[str]:
    """The attacks' results, one line per risk, each risk then read in words
    (:func:`microagg.risk.attack_words.readings`)."""
    from microagg.risk.attack_words import readings
    from microagg.risk.attacks import AttackSettings

    asked = AttackSettings()
    heads = {"singling_out": "singling out (predicates that isolate one person):",
             "inference": "inference (a column guessed from the others):"}
    if "linkability" in found:
        a, b = found["linkability"]["columns"]
        heads["linkability"] = (f"linkability (joining {', '.join(a)} to {', '.join(b)} "
                                "through the release):")
    lines: list[str] = []
    for reading in readings(found, n_cols=asked.n_cols, tolerance=asked.tolerance):
        if heads[reading.kind] not in lines:
            lines.append(heads[reading.kind])
        lines.append(_risk_line(reading.label, dict(reading.figures)))
        named = f" ({reading.label})" if reading.kind == "singling_out" else ""
        lines.append(f"    in words{named}: {reading.words}")
    if "closest_records" in found:
        c = found["closest_records"]
        lines.append(f"distance to closest record: median {fmt(c['median_dcr_original'])} to "
                     f"the originals, {fmt(c['median_dcr_control'])} to the controls; "
                     f"{percent(c['share_closer_to_original'])} of release records nearer an "
                     f"original (expected {percent(c['expected_share'])} when nothing leaks); "
                     f"median NNDR {fmt(c['median_nndr_original'])} / "
                     f"{fmt(c['median_nndr_control'])}")
    return lines
