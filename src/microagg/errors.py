"""Exceptions and warnings raised by microagg.

Messages name a parameter by its Python name between backticks (```columns```); the command
line writes the parameter's flag in its place.

Every error a data owner can cause (a bad file, a bad schema, an impossible parameter) is a
:class:`MicroaggError`; the command line turns it into a one-line message and exit code 2.
Errors about bad values also derive from :class:`ValueError`, so callers that catch
``ValueError`` catch them too. A release whose guarantee is weaker than plain ε-differential
privacy emits a :class:`PrivacyLeakWarning` (the command line prints it on stderr).
"""

from __future__ import annotations


class MicroaggError(Exception):
    """Base class of every error microagg raises on purpose."""


class InputError(MicroaggError, ValueError):
    """The data or a parameter is unusable (missing file, NaN, unknown column, k > n ...)."""


class ParameterError(InputError):
    """A parameter's value is unusable. ``parameter`` is its Python name and ``detail`` what
    is wrong with it. Messages write a parameter's name between backticks (here
    ``"`k` must be ..."``); the command line writes its flag in their place (``--k``)."""

    def __init__(self, parameter: str, detail: str) -> None:
        self.parameter = parameter
        self.detail = detail
        super().__init__(f"`{parameter}` {detail}")


class SchemaError(MicroaggError, ValueError):
    """A schema is malformed or does not fit the data."""


class DataNotFoundError(InputError):
    """A reference data set is not where microagg looks for it."""


class PrivacyError(MicroaggError, ValueError):
    """A request would break a privacy rule (e.g. DP bounds taken from the data without consent)."""


class PrivacyLeakWarning(UserWarning):
    """A release is weaker than plain ε-differential privacy: bounds or categories taken from
    the data, the paper calibration, a linked table of separately clustered columns, a
    carried column, or a known seed. The privacy report says which and why."""
