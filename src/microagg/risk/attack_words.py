"""What an attack's risk means, in words for a data-protection officer: one sentence per
attack of :mod:`microagg.risk.attacks`, said the same way wherever a risk is shown
(``evaluate``'s lines, a comparison's report).

Every risk of an attack is its success on the people in the release beyond its success on
people who are not in it (the control records): ``(attack - control) / (1 - control)``.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["inference_words", "linkability_words", "singling_out_words"]


def _share(risk: float) -> str:
    return f"{100 * risk:.3g} %"


def singling_out_words(risk: float, columns: Sequence[str] | None, n_cols: int,
                       at_most: bool = False) -> str:
    """Singling out: conditions on the release's columns (``columns``; None: all of them)
    that only one person meets.

    Examples
    --------
    >>> text = singling_out_words(0.1, ["age", "zip"], 2)
    >>> "conditions on age, zip (up to 2 at once)" in text, "singles out 10 % more" in text
    (True, True)
    """
    bound = "at most " if at_most else ""
    on = "its columns" if columns is None else ", ".join(columns)
    return (f"an attacker who reads the release and writes conditions on {on} (up to "
            f"{n_cols} at once) that only one person meets "
            f"singles out {bound}{_share(risk)} more of the people in the release than of "
            "people who are not in it")


def linkability_words(risk: float, split: tuple[Sequence[str], Sequence[str]],
                      at_most: bool = False) -> str:
    """Linkability: two sources of the same person joined through the release.

    Examples
    --------
    >>> text = linkability_words(0.02, (["fnlwgt"], ["age", "sex"]), at_most=True)
    >>> "holds fnlwgt of a person" in text, "for at most 2 % more of the people" in text
    (True, True)
    """
    first, second = (", ".join(part) for part in split)
    bound = "at most " if at_most else ""
    return (f"an attacker who holds {first} of a person from one source and {second} of "
            "the same person from another, and joins them through the release, links the "
            f"two for {bound}{_share(risk)} more of the people in the release than of "
            "people who are not in it")


def inference_words(risk: float, secret: str, tolerance: float | None,
                    at_most: bool = False) -> str:
    """Inference: a column guessed from the others through the nearest release record
    (``tolerance``: the relative error a guessed number may have; None for a category).

    Examples
    --------
    >>> text = inference_words(0.25, "income", None)
    >>> "guesses the person's income right for 25 % more" in text
    True
    """
    bound = "at most " if at_most else ""
    near = "" if tolerance is None else f" (within {100 * tolerance:.3g} % for a number)"
    return (f"an attacker who knows a person's other columns and looks for the nearest "
            f"record in the release guesses the person's {secret}{near} right for "
            f"{bound}{_share(risk)} more of the people in the release than of people who "
            "are not in it")
