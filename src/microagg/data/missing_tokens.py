"""The tokens a table's reader takes for a missing value: the defaults, a file's own, less
a column's declared categories."""

from __future__ import annotations

from collections.abc import Collection, Sequence

__all__ = ["MISSING_TOKENS", "missing_tokens"]

MISSING_TOKENS = ["", "NA", "N/A", "NaN", "nan", "NULL", "null"]
"""The tokens read as missing by default."""


def missing_tokens(kept: Collection[str] = (), extra: Sequence[str] = ()) -> list[str]:
    """The tokens read as missing (the defaults and a file's own ``extra`` ones), but the
    ``kept`` ones (a column's declared categories)."""
    return [t for t in dict.fromkeys((*MISSING_TOKENS, *extra)) if t not in kept]
