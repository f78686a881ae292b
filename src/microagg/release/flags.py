"""The one table between the library's parameter names and the command line's flags.

The library names a parameter by its Python name between backticks in its messages
(```columns``` …); :func:`render` writes the flag in its place. A parameter's flag is
``--`` and its name with dashes (``drop_incomplete``: ``--drop-incomplete``), a method
field's own ``flag`` when it declares one, or the exception listed in :data:`FLAGS`.
"""

from __future__ import annotations

import re

from microagg.release.methods import METHODS
from microagg.release.params import flag_of, method_fields

__all__ = ["FLAGS", "flag", "labelled", "render"]

FLAGS = {
    "rng": "--seed",
    "seed": "--seed",
    "frame": "IN",
    "target_risk": "--target-risk",
    "target_utility": "--target-utility",
    "risk_kind": "--target-risk-kind",
    "secrets": "--secret",
    "roles": "--identifiers/--weight/--strata/--household",
}
"""Parameters whose flag is not ``--name`` with dashes (and no method field says which)."""


def _field_flags() -> dict[str, str]:
    return {f.name: flag_of(f) for m in METHODS for f in method_fields(m)}


def flag(name: str) -> str:
    """The command-line flag of the library parameter ``name``."""
    return FLAGS.get(name) or _field_flags().get(name) or "--" + name.replace("_", "-")


_NAMED = re.compile(r"`([a-z][a-z0-9_]*)`")


def render(message: str) -> str:
    """A library message as the command line says it: each ```name``` becomes its flag."""
    return _NAMED.sub(lambda match: flag(match.group(1)), message)


def labelled(message: str) -> str:
    """A library message as the web app says it: each ```name``` becomes its field's label
    (the name with spaces), quoted, instead of a flag the app has no use for.

    Examples
    --------
    >>> labelled("pass `bounds` age=LO:HI (`bounds_from_data` is not DP)")
    "pass 'bounds' age=LO:HI ('bounds from data' is not DP)"
    """
    return _NAMED.sub(lambda match: f"'{match.group(1).replace('_', ' ')}'", message)
