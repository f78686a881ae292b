"""Method options generated from the method objects' fields.

A family command (``microaggregate``, ``tclose``, ``mask``, ``dp``) is written as a template
function of its own options (input, output, schema …) and an ``options`` mapping; its method
options are made here from the fields of every method of the family, so a new method's
parameters appear in ``--help`` without editing the command. A method with a command of its
own (``recode``, ``suppress``, ``pram``, ``topcode``) gets its options from its fields the
same way (:func:`method_command`). Which method takes an option is
said in its help; an option given that the chosen method does not take is refused by the one
rule of :func:`~microagg.release.methods.base.build`. The family options a template takes
(``--columns``, ``--carry``, the role options …) are made by :func:`option` from their one
declaration in :mod:`microagg.release.family_options`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import Field
from typing import Any

import typer

from microagg.cli.app import command as app_command
from microagg.data.schema import Role
from microagg.errors import InputError
from microagg.release.family_options import FAMILY_OPTIONS, OptionKind, family_option
from microagg.release.flags import render
from microagg.release.methods import Family, ReleaseMethod, family
from microagg.release.params import (
    Choice,
    Constraint,
    Interval,
    Optional,
    flag_of,
    method_fields,
)

__all__ = ["ROLE_OPTIONS", "family_command", "family_fields", "method_command", "option",
           "roles_given"]


def family_fields(of: Family) -> dict[str, tuple[Field, list[str]]]:
    """Every command-line field of the family's methods, by name, with the methods that take
    it (in registry order; the first method's help and flag stand for all)."""
    found: dict[str, tuple[Field, list[str]]] = {}
    for method in family(of):
        for f in method_fields(method):
            if not f.metadata.get("cli", True):
                continue
            found.setdefault(f.name, (f, []))[1].append(method.name)
    return found


def _python_type(constraint: Constraint) -> type:
    """The type the command line parses an option of ``constraint`` into (text by default,
    checked and converted by the constraint itself)."""
    if isinstance(constraint, Optional):
        return _python_type(constraint.inner)
    if isinstance(constraint, Interval):
        return int if constraint.kind is int else float
    if isinstance(constraint, Choice):
        return str
    return str


def _option(f: Field, takers: list[str], everyone: int) -> inspect.Parameter:
    help_text = render(f.metadata["help"])
    if len(takers) < everyone:
        help_text += f" (--method {', '.join(takers)})"
    repeated = bool(f.metadata.get("repeat"))
    option = typer.Option(None, flag_of(f), *f.metadata.get("aliases", ()), help=help_text,
                          metavar="TEXT" if repeated else None)
    kind: Any = _python_type(f.metadata["constraint"])
    if repeated:
        kind = list[kind]
    return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=option,
                             annotation=kind | None)


_METAVARS = {OptionKind.COLUMNS: "A,B", OptionKind.BOUNDS: "NAME=LO:HI,..."}


def option(name: str, command: str) -> Any:
    """The typer option of the family option ``name`` in ``command``, made from its one
    declaration (:mod:`microagg.release.family_options`): its flag, default and help."""
    declared = family_option(name)
    if not declared.cli:
        raise KeyError(f"{name} is not a command-line option")
    return typer.Option(declared.default, declared.flag, help=declared.help_for(command),
                        metavar=_METAVARS.get(declared.kind))


ROLE_OPTIONS = {o.name: (o.flag, o.role, o.help_for("")) for o in FAMILY_OPTIONS
                if o.role is not None}
"""The role options every family command takes: they set columns' roles over the schema
(without one, over the roles read off the data); flag, role and help by name."""


def _role_option(name: str) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                             default=option(name, ""), annotation=str | None)


def roles_given(given: dict[str, Any]) -> dict[str, Role]:
    """The roles the role options name (column -> role), popped from ``given``."""
    from microagg.cli.common import names

    roles: dict[str, Role] = {}
    for name, (flag, role, _) in ROLE_OPTIONS.items():
        for column in names(given.pop(name), flag) or []:
            if column in roles and roles[column] is not role:
                raise InputError(f"column '{column}' is given two roles ({roles[column]} "
                                 f"and {role})")
            roles[column] = role
    return roles


def family_command(of: Family, *, after: str = "method"
                   ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register the command of family ``of``: the template's own options, with the method
    options of the family placed after its option ``after``, and the role options
    (:data:`ROLE_OPTIONS`) after ``--schema``. The template receives the method options as
    ``options`` (name -> value, ``None`` when not given) and the roles as ``roles``."""
    return _command(of.value, family_fields(of), len(family(of)), after)


def method_command(method: type[ReleaseMethod], name: str, *, after: str
                   ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register the command ``name`` of one method (a method with a command of its own):
    the template's own options, the method's options (from its fields) after the option
    ``after``, and the role options after ``--schema``; the template receives them as
    ``options`` and ``roles``, like a family's command."""
    fields = {f.name: (f, [method.name]) for f in method_fields(method)
              if f.metadata.get("cli", True)}
    return _command(name, fields, 1, after)


def _joined(f: Field, value: Any) -> Any:
    """A repeated option's values joined by the field's separator (``None`` when not
    given)."""
    if isinstance(value, list | tuple) and f.metadata.get("repeat"):
        return f.metadata["repeat"].join(value) if value else None
    return value


def _command(name: str, fields: dict[str, tuple[Field, list[str]]], everyone: int, after: str
             ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    def register(template: Callable[..., None]) -> Callable[..., None]:
        generated = [_option(f, takers, everyone) for f, takers in fields.values()]
        own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
               for p in inspect.signature(template, eval_str=True).parameters.values()
               if p.name not in ("options", "roles")]
        at = next(i for i, p in enumerate(own) if p.name == after) + 1
        own = [*own[:at], *generated, *own[at:]]
        at = next(i for i, p in enumerate(own) if p.name == "schema") + 1
        parameters = [*own[:at], *(_role_option(n) for n in ROLE_OPTIONS), *own[at:]]

        def command(**given: Any) -> None:
            options = {name: _joined(fields[name][0], given.pop(name)) for name in fields}
            template(options=options, roles=roles_given(given), **given)

        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in parameters}
        command.__doc__ = template.__doc__
        command.__name__ = name
        command.__module__ = template.__module__
        app_command(name)(command)
        return template

    return register
