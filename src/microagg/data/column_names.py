"""Column names as microagg compares and says them: text, stripped, in Unicode normal form C;
quoted with their control characters escaped; a header refused when a name is empty or given
twice."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from microagg.errors import InputError

__all__ = ["check_names", "column_name", "quoted"]


def column_name(name: object) -> str:
    """A column name as microagg compares it: text, stripped, in Unicode normal form C (so
    that 'naïve' typed on the command line matches 'naïve' written decomposed by a file)."""
    return unicodedata.normalize("NFC", str(name).strip())


def quoted(name: object) -> str:
    """A column name as a message writes it: in quotes, its line breaks, tabs and other
    control characters as escapes, so that the message stays one line and says which name.

    Examples
    --------
    >>> print(quoted("income"), quoted("net" + chr(10) + "income"))
    'income' 'net\\nincome'
    """
    text = "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c
                   for c in str(name))
    return f"'{text}'"


def check_names(names: list[str], path: Path) -> None:
    """Refuse a header with an unnamed column or a name given twice."""
    seen: set[str] = set()
    for position, raw in enumerate(names, start=1):
        name = column_name(raw)
        if not name:
            raise InputError(f"column {position} of {path} has no name: name every column in "
                             "the header")
        if name in seen:
            raise InputError(f"column name '{name}' appears more than once in {path}")
        seen.add(name)
