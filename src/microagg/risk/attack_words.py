"""What an attack's risk means, in words for a data-protection officer: one sentence per
attack of :mod:`microagg.risk.attacks`, said the same way wherever a risk is shown
(``evaluate``'s lines, a comparison's report).

The risk of an attack is ``(a - c) / (1 - c)`` (:mod:`microagg.risk.attack_rates`): of the
attacks that fail on people who are not in the release (the control records), the share of
those that succeed on people who are in it. Each sentence says that share for its attack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Reading", "inference_words", "linkability_words", "nothing_tried_words",
           "readings", "singling_out_words"]


def _share(risk: float, at_most: bool) -> str:
    return ("at most " if at_most else "") + f"{100 * risk:.3g} %"


def singling_out_words(risk: float, columns: Sequence[str] | None, n_cols: int,
                       at_most: bool = False) -> str:
    """Singling out: conditions on ``n_cols`` of the release's ``columns`` (None: its
    columns) at once, each met by exactly one release record.

    Examples
    --------
    >>> text = singling_out_words(0.1, ["age", "zip"], 2)
    >>> "conditions on 2 of age, zip at once" in text, "10 % single out exactly one" in text
    (True, True)
    """
    on = "its columns" if columns is None else ", ".join(columns)
    return (f"an attacker who reads the release and writes conditions on {n_cols} of {on} "
            "at once, each met by exactly one record of the release, finds that of his "
            "conditions that single out no one among people who are not in the release, "
            f"{_share(risk, at_most)} single out exactly one person among the people in it")


def linkability_words(risk: float, split: tuple[Sequence[str], Sequence[str]],
                      at_most: bool = False) -> str:
    """Linkability: two sources of the same person joined through the release.

    Examples
    --------
    >>> text = linkability_words(0.02, (["fnlwgt"], ["age", "sex"]), at_most=True)
    >>> "holds fnlwgt of a person" in text, "for at most 2 % of the people" in text
    (True, True)
    """
    first, second = (", ".join(part) for part in split)
    return (f"an attacker who holds {first} of a person from one source and {second} of "
            "the same person from another, and joins them through the release, links the "
            f"two for {_share(risk, at_most)} of the people in the release that the same "
            "attack fails to link among people who are not in it")


def inference_words(risk: float, secret: str, tolerance: float, at_most: bool = False,
                    worst: bool = False) -> str:
    """Inference: ``secret`` guessed from the other columns through the nearest release
    record (a number right within ``tolerance`` of the guess, relatively; ``worst``: the
    secret names several columns, the worst of them held).

    Examples
    --------
    >>> text = inference_words(0.25, "income", 0.05)
    >>> "guesses the person's income (a number is right within 5 %" in text
    True
    """
    worst_of = "the worst of them; " if worst else ""
    return (f"an attacker who knows the other columns of a person and takes the nearest "
            f"record of the release guesses the person's {secret} ({worst_of}a number is "
            f"right within {100 * tolerance:.3g} % of the guess) right for "
            f"{_share(risk, at_most)} of the people in the release that the same attack "
            "guesses wrong among people who are not in it")


def nothing_tried_words(kind: str, n_cols: int = 1) -> str:
    """An attack that made no try: what it could not write, said instead of a share (its
    risk of 0 measures nothing).

    Examples
    --------
    >>> text = nothing_tried_words("singling_out", 1)
    >>> text.startswith("no condition on 1 column met by exactly one"), "not a risk of 0" in text
    (True, True)
    """
    columns = f"{n_cols} column{'s at once' if n_cols > 1 else ''}"
    what = {"singling_out": f"no condition on {columns} met by exactly one record of the "
                            "release could be written",
            "linkability": "no record could be linked",
            "inference": "no guess could be made"}.get(kind, "no attack could be made")
    return (f"{what}: this attack had nothing to try, so its 0 % measures nothing (it is "
            "not a risk of 0)")


@dataclass(frozen=True)
class Reading:
    """One risk of an ``attacks`` object read in words: its attack's JSON key (``kind``),
    which of the attack's risks it is (``label``: the singling-out mode, ``linked``, the
    secret column), its figures (``risk``, ``ci`` and the rates, as
    :meth:`~microagg.risk.attack_rates.AttackRisk.to_dict` writes them) and its sentence."""

    kind: str
    label: str
    figures: Mapping[str, Any]
    words: str


def readings(found: Mapping[str, Any], *, n_cols: int, tolerance: float) -> list[Reading]:
    """Each risk of ``found`` (the ``attacks`` object of ``evaluate --json`` and of a
    recipe's report: :meth:`~microagg.risk.attacks.AttackRisks.to_dict`) with its sentence,
    in the order reported; ``n_cols`` and ``tolerance`` are those the attacks were run
    with. The distance to closest record is a distance, not a risk: it has no sentence.

    Examples
    --------
    >>> risk = {"risk": 0.5, "ci": [0.4, 0.6]}
    >>> found = {"linkability": {**risk, "columns": [["age"], ["zip"]]},
    ...          "inference": {"income": risk}}
    >>> [(r.kind, r.label) for r in readings(found, n_cols=3, tolerance=0.05)]
    [('linkability', 'linked'), ('inference', 'income')]
    """
    out = []
    for mode, figures in (found.get("singling_out") or {}).items():
        terms = 1 if mode == "univariate" else n_cols
        out.append(Reading("singling_out", mode, figures,
                           _said(figures, "singling_out", terms) or
                           singling_out_words(figures["risk"], None, terms)))
    linked = found.get("linkability")
    if linked is not None:
        first, second = linked["columns"]
        out.append(Reading("linkability", "linked", linked,
                           _said(linked, "linkability") or
                           linkability_words(linked["risk"], (first, second))))
    for secret, figures in (found.get("inference") or {}).items():
        out.append(Reading("inference", secret, figures,
                           _said(figures, "inference") or
                           inference_words(figures["risk"], secret, tolerance)))
    return out


def _said(figures: Mapping[str, Any], kind: str, n_cols: int = 1) -> str | None:
    """:func:`nothing_tried_words` for an attack of no try, else ``None``."""
    return nothing_tried_words(kind, n_cols) if figures.get("n_attacks") == 0 else None
