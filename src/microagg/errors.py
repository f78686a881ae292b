"""Exceptions raised by microagg.

Every error a data owner can cause (a bad file, a bad schema, an impossible parameter) is a
:class:`MicroaggError`; the command line turns it into a one-line message and exit code 2.
"""

from __future__ import annotations


class MicroaggError(Exception):
    """Base class of every error microagg raises on purpose."""


class InputError(MicroaggError):
    """The data or a parameter is unusable (missing file, NaN, unknown column, k > n ...)."""


class SchemaError(MicroaggError):
    """A schema is malformed or does not fit the data."""


class DataNotFoundError(InputError):
    """A reference data set is not where microagg looks for it."""


class PrivacyError(MicroaggError):
    """A request would break a privacy rule (e.g. DP bounds taken from the data without consent)."""
