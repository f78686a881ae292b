"""The attacks on a release (singling out, linkability, inference: the ``attacks`` object of
``evaluate --json`` and of a recipe's report) as HTML: one row per risk with its 95 %
interval and the rates of the attack, of the baseline and on the control records, then each
risk in words for a data-protection officer (:func:`microagg.risk.attack_words.readings`).
A recipe's report and the web app's results show them so."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from microagg.risk.attack_words import Reading, readings
from microagg.risk.registry import percent

__all__ = ["ATTACK_HEAD", "attack_cells", "attack_readings", "attacks_html"]

ATTACK_HEAD = ("attack", "risk", "95 % interval", "attack's rate", "baseline's rate",
               "control's rate", "tries")
"""The columns of a risk's row."""

_NAMES = {"singling_out": "singling out", "linkability": "linkability",
          "inference": "inference"}


def attack_readings(found: Mapping[str, Any]) -> list[Reading]:
    """The risks of ``found`` with their sentences, read with the attacks' own settings
    (the number of columns of a predicate and the tolerance of a numeric guess are not
    options of the command, the recipe or the app)."""
    from microagg.risk.attacks import AttackSettings

    asked = AttackSettings()
    return readings(found, n_cols=asked.n_cols, tolerance=asked.tolerance)


def _named(reading: Reading) -> str:
    name = _NAMES[reading.kind]
    return name if reading.kind == "linkability" else f"{name} ({reading.label})"


def attack_cells(reading: Reading) -> list[str]:
    """A risk's row as text (:data:`ATTACK_HEAD`)."""
    f = reading.figures
    low, high = f["ci"]
    control = f.get("control_rate")
    return [_named(reading), percent(f["risk"]), f"{percent(low)} to {percent(high)}",
            percent(f["attack_rate"]), percent(f["baseline_rate"]),
            "—" if control is None else percent(control), f"{f['n_attacks']:,}"]


def attacks_html(found: Mapping[str, Any]) -> str:
    """``found`` as an HTML table and its sentences (module docstring); ``not_measured``
    said in one line.

    Examples
    --------
    >>> figures = {"risk": 0.25, "ci": [0.2, 0.3], "attack_rate": 0.4, "baseline_rate": 0.1,
    ...            "control_rate": 0.2, "n_attacks": 500}
    >>> page = attacks_html({"inference": {"income": figures}})
    >>> "inference (income)" in page, "guesses the person&#x27;s income" in page
    (True, True)
    """
    if "not_measured" in found:
        return (f'<p class="warning" id="attacks-not-measured">not measured: '
                f'{escape(str(found["not_measured"]))}</p>')
    read = attack_readings(found)
    head = "".join(f"<th>{escape(h)}</th>" for h in ATTACK_HEAD)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in attack_cells(r))
                   + "</tr>" for r in read)
    words = "".join(f"<li><b>{escape(_named(r))}</b>: {escape(r.words)}</li>" for r in read)
    parts = [f'<table id="attacks"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
             "</table>", f'<ul id="attacks-in-words">{words}</ul>']
    closest = found.get("closest_records")
    if closest is not None:
        parts.append(
            f"<p>Distance to closest record: {percent(closest['share_closer_to_original'])} "
            "of the release's records lie nearer an original than a control record "
            f"(expected {percent(closest['expected_share'])} when nothing leaks).</p>")
    return "\n".join(parts)
