"""The web app's step forms, written from the method objects' fields, the family's
options and the step's own fields (``protects``), both declared in
:mod:`microagg.release.family_options` with their help texts: a method
registered in ``METHODS`` gets its form with no code here. Each field is ``f_<name>``; an
error about it is shown in the element ``err-<name>`` beside it (:func:`field_at_fault`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field
from enum import StrEnum
from typing import Any, cast

from shiny import ui

from microagg.recipe.families import Adapter
from microagg.release.family_options import (
    FamilyOption,
    OptionKind,
    command_of,
    family_option,
    step_fields,
)
from microagg.release.methods import ReleaseMethod
from microagg.release.params import Choice, Constraint, Interval, Optional, method_fields

__all__ = ["PROTECTS", "field_at_fault", "field_id", "method_form", "parse_bounds_text",
           "read_form", "step_field_names"]

Read = Callable[[str], Any]


def field_id(name: str) -> str:
    return f"f_{name}"


def _default(f: Field) -> Any:
    if f.default is MISSING:
        return None
    return f.default.value if isinstance(f.default, StrEnum) else f.default


def _inner(constraint: Constraint) -> Constraint:
    return constraint.inner if isinstance(constraint, Optional) else constraint


def _label(name: str, required: bool) -> str:
    return name.replace("_", " ") + (" *" if required else "")


def _with_error(name: str, field: Any, help_text: str) -> Any:
    return ui.div(field, ui.div(help_text, class_="form-text"),
                  ui.div(id=f"err-{name}", class_="field-error-slot"), class_="mb-2")


def _parameter_field(f: Field) -> Any:
    constraint = _inner(f.metadata["constraint"])
    required = f.default is MISSING
    label = _label(f.name, required)
    default = _default(f)
    if isinstance(constraint, Interval):
        step = 1 if constraint.kind is int else None
        field = ui.input_numeric(field_id(f.name), label, value=cast(float, default),
                                 step=step)
    elif isinstance(constraint, Choice):
        choices = [m.value for m in constraint.enum]
        if default is None:
            choices = ["", *choices]
        field = ui.input_select(field_id(f.name), label, choices=choices,
                                selected=default if default is not None else "")
    else:
        empty = default is None or (isinstance(default, tuple | list) and not default)
        field = ui.input_text(field_id(f.name), label, value="" if empty else str(default))
    help_text = f"{f.metadata['help']} ({f.metadata['constraint'].describe()})"
    return _with_error(f.name, field, help_text)


def _option_field(option: FamilyOption, command: str, columns: Sequence[str]) -> Any:
    label = _label(option.name, False)
    if option.kind is OptionKind.COLUMNS:
        field = ui.input_selectize(field_id(option.name), label, choices=list(columns),
                                   multiple=True)
    elif option.kind is OptionKind.FLAG:
        field = ui.input_checkbox(field_id(option.name), label, value=False)
    elif option.kind is OptionKind.COUNT:
        field = ui.input_numeric(field_id(option.name), label, value=cast(float, None),
                                 step=1)
    else:
        field = ui.input_text(field_id(option.name), label, value="",
                              placeholder="age=0:120, hours=0:99")
    return _with_error(option.name, field, option.help_for(command))


PROTECTS = family_option("protects").name
"""The field of what a DP step's guarantee is about (a recipe step's ``protects``)."""


def step_field_names(adapter: Adapter) -> list[str]:
    """The fields a recipe step of ``adapter``'s family has beyond its method's parameters
    and its family's options: ``protects`` for a DP step."""
    return [o.name for o in step_fields(adapter.family)]


def _step_field(option: FamilyOption) -> Any:
    choices = [c.value for c in option.choices or ()]
    field = ui.input_select(field_id(option.name), _label(option.name, False),
                            choices=choices, selected=str(option.default))
    return _with_error(option.name, field, option.help_for(""))


def method_form(cls: type[ReleaseMethod], adapter: Adapter, columns: Sequence[str]) -> Any:
    """The form of a step by ``cls``: its parameters, then the family's options, then the
    step's own fields (:func:`step_field_names`)."""
    fields = [f for f in method_fields(cls) if f.metadata.get("cli", True)]
    return ui.TagList(
        ui.p(cls.summary, class_="text-muted"),
        *(_parameter_field(f) for f in fields),
        *(_option_field(o, command_of(cls), columns) for o in adapter.options),
        *(_step_field(o) for o in step_fields(adapter.family)))


def parse_bounds_text(text: str) -> dict[str, list[float]]:
    """``age=0:120, hours=0:99`` as a mapping of column to [low, high] (checked by the
    family's option)."""
    from microagg.errors import ParameterError

    out: dict[str, list[float]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, interval = item.partition("=")
        low, _, high = interval.partition(":")
        try:
            out[name.strip()] = [float(low), float(high)]
        except ValueError:
            raise ParameterError("bounds", f"'{item}' should read NAME=LO:HI") from None
    return out


def _value(f: Field, raw: Any) -> Any:
    if raw is None or raw == "":
        return None
    constraint = _inner(f.metadata["constraint"])
    if isinstance(constraint, Interval) and constraint.kind is int and isinstance(
            raw, float) and raw.is_integer():
        return int(raw)
    return raw


def read_form(cls: type[ReleaseMethod], adapter: Adapter, read: Read
              ) -> dict[str, Any]:
    """The step's mapping (method parameters and family options, flat) from the form's
    fields, read by ``read(field id)``; blank fields are left out."""
    spec: dict[str, Any] = {}
    for f in method_fields(cls):
        if f.metadata.get("cli", True):
            value = _value(f, read(field_id(f.name)))
            if value is not None and value != _default(f):
                spec[f.name] = value
    for option in adapter.options:
        raw = read(field_id(option.name))
        if option.kind is OptionKind.COLUMNS:
            value = list(raw) if raw else None
        elif option.kind is OptionKind.FLAG:
            value = bool(raw) or None
        elif option.kind is OptionKind.COUNT:
            value = None if raw in (None, "") else raw
        else:
            value = parse_bounds_text(raw) if raw else None
        if value is not None:
            spec[option.name] = value
    for own in step_fields(adapter.family):
        raw = read(field_id(own.name))
        if raw and raw != str(own.default):
            spec[own.name] = raw
    return spec


_NAMED = re.compile(r"`([a-z][a-z0-9_]*)`|'([a-z][a-z0-9_]*): ")
"""A parameter named in a message (`k`), or a recipe step's key with its value
('protects: step-input')."""


def field_at_fault(error: Exception, names: Sequence[str]) -> str | None:
    """The field among ``names`` that ``error`` is about: the parameter of a
    :class:`~microagg.errors.ParameterError`, else the first parameter or recipe key its
    message names.

    Examples
    --------
    >>> field_at_fault(ValueError("give the step 'protects: step-input'"), ["k", "protects"])
    'protects'
    """
    parameter = getattr(error, "parameter", None)
    if parameter in names:
        return parameter
    for match in _NAMED.finditer(str(error)):
        name = match.group(1) or match.group(2)
        if name in names:
            return name
    return None
