"""Option values parsed without pydantic.

Typer turns each option's text into its declared type through a pydantic ``TypeAdapter``;
importing pydantic and building the adapters costs about 0.15 s of CPU, a tenth of a small
command. Every option of a command on its usual path is a plain ``str``, ``int``, ``float``,
``bool`` or ``Path`` without bounds: :func:`plain_value` parses those (ASCII integers and
decimals, paths) exactly as pydantic would, and anything else (a bound, a parser, a choice, an
unusual spelling such as ``1_000`` or ``nan``, an error) goes to Typer's own coercion, which
gives the same value or the same message as before. :func:`install` puts this in front of
Typer's coercion; it changes nothing when Typer's internals are laid out otherwise.
"""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Any

__all__ = ["PLAIN_TYPES", "UNHANDLED", "install", "plain_value"]

PLAIN_TYPES: tuple[type, ...] = (str, int, float, bool, Path)
"""The declared types :func:`plain_value` may parse."""

UNHANDLED: Any = object()
"""What :func:`plain_value` returns for a value it leaves to Typer's coercion."""

_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,3})?")


def plain_value(value: Any, annotation: Any) -> Any:
    """``value`` (an option's text, or its default) as the plain type ``annotation``, or
    :data:`UNHANDLED`.

    Parameters
    ----------
    value : object
        What the command line or the option's default gave.
    annotation : type
        The option's declared type, one of :data:`PLAIN_TYPES` (any other is unhandled).

    Returns
    -------
    object
        The parsed value, equal to (and of the same type as) what Typer's pydantic adapter
        returns for it, or :data:`UNHANDLED` when the value is not in the simple forms
        parsed here.
    """
    kind = type(value)
    if annotation is str and kind is str:
        return value
    if annotation is bool and kind is bool:
        return value
    if annotation is int:
        if kind is int:
            return value
        if kind is str and _INT.fullmatch(value):
            return int(value)
    if annotation is float:
        if kind is float:
            return value
        if kind is str and _FLOAT.fullmatch(value):
            number = float(value)
            return number if math.isfinite(number) else UNHANDLED
    if annotation is Path:
        if kind is str:
            return Path(value)
        if isinstance(value, Path):
            return value
    return UNHANDLED


def _plain(info: Any) -> bool:
    """Whether an option's declaration leaves its value to the type alone (no bound, parser,
    path type or path checks beyond Typer's own, which run after the value is parsed)."""
    return (info.min is None and info.max is None and not info.clamp and info.parser is None
            and getattr(info, "path_type", None) is None)


def install() -> bool:
    """Put :func:`plain_value` in front of Typer's coercion of option values, once; returns
    whether it is in place (False when Typer's internals are not those expected)."""
    try:
        core = importlib.import_module("typer.core")
        coercion = importlib.import_module("typer._coercion")
        path_check = importlib.import_module("typer._param_types").coerce_cli_path
        build = core.build_runtime_param
        base = coercion.RuntimeParam
    except (ImportError, AttributeError):
        return False
    if getattr(build, "plain_first", False):
        return True

    class PlainFirst(base):  # type: ignore[misc, valid-type]
        """Typer's coercion of one option, tried after :func:`plain_value`."""

        def __init__(self, descriptor: Any) -> None:
            super().__init__(parameter_info=descriptor.parameter_info,
                             annotation=descriptor.annotation)
            object.__setattr__(self, "descriptor", descriptor)
            object.__setattr__(self, "typer_param", None)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            parsed = plain_value(value, self.annotation)
            if parsed is not UNHANDLED:
                if self.annotation is not Path:
                    return parsed
                try:  # Typer's checks of a path (exists, dash, resolve), given a Path
                    return path_check(parsed, self.parameter_info, path_type=Path,
                                      param=param, ctx=ctx)
                except Exception:  # Typer's own coercion says what is wrong
                    pass
            if self.typer_param is None:
                object.__setattr__(self, "typer_param", build(self.descriptor))
            return self.typer_param._coerce_value(value, param=param, ctx=ctx)

    class Deferred(PlainFirst):
        """Typer's coercion of an option of another type (a list), built only when the
        option is given: an option left out keeps its default of ``None``."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if value is None or value == ():
                return None
            if self.typer_param is None:
                object.__setattr__(self, "typer_param", build(self.descriptor))
            return self.typer_param._coerce_value(value, param=param, ctx=ctx)

    def plain_first(descriptor: Any) -> Any:
        if descriptor.file_annotation is None and _plain(descriptor.parameter_info):
            if descriptor.annotation in PLAIN_TYPES:
                return PlainFirst(descriptor)
            if descriptor.parameter_info.default is None:
                return Deferred(descriptor)
        return build(descriptor)

    plain_first.plain_first = True  # type: ignore[attr-defined]
    core.build_runtime_param = plain_first  # type: ignore[attr-defined]
    return True
