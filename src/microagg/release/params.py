"""The parameters of the method objects: declarative constraints, checked in one place.

A method is a frozen, keyword-only dataclass; each of its fields is made by :func:`param`,
which records the field's constraint (an :class:`Interval`, one of an enum's
:class:`Choice`, …), a one-line help text and, where the command line spells it otherwise,
its flag. :func:`validate` checks and converts every field of a method when it is made (a
method object is never invalid), in the manner of scikit-learn's ``_param_validation``.
Messages name the Python parameter (:class:`~microagg.errors.ParameterError`); the command
line writes its flag in their place (:func:`flag_of`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, dataclass, field, fields
from enum import StrEnum
from typing import Any

from microagg.errors import ParameterError

__all__ = ["Choice", "Constraint", "Interval", "Optional", "Predicate", "flag_of",
           "numpydoc_parameters", "param", "validate"]


class Constraint:
    """What a parameter's value must be; :meth:`check` returns it converted, or raises."""

    def check(self, name: str, value: Any) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Interval(Constraint):
    """A number of ``kind`` (``int`` or ``float``) in [low, high] (either end open with
    ``closed``, absent when ``None``)."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # both | left | right | neither
    hint: str = ""  # why, said after the bounds

    def describe(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        parts = []
        if self.low is not None:
            parts.append((">= " if self.closed in ("both", "left") else "> ") + f"{self.low:g}")
        if self.high is not None:
            parts.append(("<= " if self.closed in ("both", "right") else "< ") +
                         f"{self.high:g}")
        return what + (" " + " and ".join(parts) if parts else "")

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(name, f"must be {self.describe()}, got {value!r}")
        if self.kind is int:
            if not float(value).is_integer():
                raise ParameterError(name, f"must be {self.describe()}, got {value!r}")
            value = int(float(value))
        else:
            value = float(value)
            if not math.isfinite(value):
                raise ParameterError(name, f"must be {self.describe()}, got {value!r}")
        low_ok = self.low is None or (value >= self.low if self.closed in ("both", "left")
                                      else value > self.low)
        high_ok = self.high is None or (value <= self.high if self.closed in ("both", "right")
                                        else value < self.high)
        if not (low_ok and high_ok):
            why = f" ({self.hint})" if self.hint else ""
            raise ParameterError(name, f"must be {self.describe()}, got {value:g}{why}")
        return value


@dataclass(frozen=True)
class Choice(Constraint):
    """One of the members of a string enum (given as the member or its value)."""

    enum: type[StrEnum]

    def describe(self) -> str:
        return "one of " + ", ".join(m.value for m in self.enum)

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, self.enum):
            return value
        try:
            return self.enum(str(value).strip().lower())
        except ValueError:
            raise ParameterError(name, f"must be {self.describe()}, got {value!r}") from None


@dataclass(frozen=True)
class Optional(Constraint):
    """``None``, or what ``inner`` allows."""

    inner: Constraint

    def describe(self) -> str:
        return f"{self.inner.describe()}, or None"

    def check(self, name: str, value: Any) -> Any:
        return None if value is None else self.inner.check(name, value)


@dataclass(frozen=True)
class Predicate(Constraint):
    """Checked by a function that returns the converted value or raises a
    :class:`~microagg.errors.ParameterError` (for structured values: a list of shares, a
    clipping rule)."""

    convert: Callable[[str, Any], Any]
    text: str

    def describe(self) -> str:
        return self.text

    def check(self, name: str, value: Any) -> Any:
        return self.convert(name, value)


def param(constraint: Constraint, *, help: str, default: Any = MISSING,
          flag: str | None = None, aliases: tuple[str, ...] = (), cli: bool = True,
          repeat: str | None = None) -> Any:
    """A method field: its ``constraint``, a one-line ``help``, its ``default`` (none: the
    parameter is required), its command-line ``flag`` when it is not ``--name`` with dashes,
    older spellings of the flag the command line still takes (``aliases``), ``cli`` False
    to keep it off the command line (a Python-only parameter), and ``repeat``: the option
    may be given more than once, its values joined by this separator (``--similar a
    --similar b,c`` is ``"a;b,c"``)."""
    metadata = {"constraint": constraint, "help": help, "flag": flag, "aliases": aliases,
                "cli": cli, "repeat": repeat}
    return field(default=default, metadata=metadata)


def method_fields(obj: Any) -> tuple[Field, ...]:
    """The fields of a method class or object made by :func:`param`."""
    return tuple(f for f in fields(obj) if "constraint" in f.metadata)


def validate(obj: Any) -> None:
    """Check and convert every :func:`param` field of the frozen dataclass ``obj``."""
    for f in method_fields(obj):
        value = f.metadata["constraint"].check(f.name, getattr(obj, f.name))
        object.__setattr__(obj, f.name, value)


def flag_of(f: Field) -> str:
    """The command-line flag of a method field."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def names_of(fields_: Sequence[Field]) -> tuple[str, ...]:
    return tuple(f.name for f in fields_)


def _default_text(f: Field) -> str:
    if f.default is MISSING:
        return ""
    value = f.default.value if isinstance(f.default, StrEnum) else f.default
    return f", default {value!r}"


def numpydoc_parameters(fields_: Sequence[Field]) -> str:
    """The numpydoc ``Parameters`` section of a method, written from its fields: each field's
    type, default, help and constraint (so the docstring and the check never disagree)."""
    lines = ["Parameters", "----------"]
    for f in fields_:
        kind = str(f.type).replace("ClassVar[", "").rstrip("]") if isinstance(f.type, str) \
            else getattr(f.type, "__name__", str(f.type))
        lines.append(f"{f.name} : {kind}{_default_text(f)}")
        help_text = f.metadata["help"].rstrip(".")
        lines.append(f"    {help_text}; {f.metadata['constraint'].describe()}.")
    return "\n".join(lines)
