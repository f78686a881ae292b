"""Every family option is declared once (release/family_options.py): the release commands'
options, the recipe steps' options and the web app's form fields are made from that
declaration, so they share its name, flag and help text; none is declared again beside it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from microagg.cli.app import app
from microagg.recipe.families import ADAPTERS
from microagg.release.family_options import (
    FAMILY_OPTIONS,
    command_of,
    family_option,
    step_fields,
    step_options,
)
from microagg.release.methods import Family, family

COMMANDS = {"microaggregate": "microaggregate", "tclose": "tclose", "mask": "mask",
            "dp": "dp", "recode": "keys", "suppress": "keys", "pram": "keys",
            "topcode": "keys"}
"""The release commands and the module of each."""

CLI = Path(__file__).parents[1] / "src" / "microagg" / "cli"


@pytest.fixture(scope="module")
def commands() -> dict[str, Any]:
    """The click command of every release command, by name."""
    for module in set(COMMANDS.values()):
        importlib.import_module(f"microagg.cli.{module}")
    group: Any = typer.main.get_command(app)
    return {name: group.get_command(None, name) for name in COMMANDS}


def _declared_options(command: Any) -> dict[str, Any]:
    """The options of ``command`` whose flag is a declared family option's, by its name."""
    by_flag = {o.flag: o.name for o in FAMILY_OPTIONS}
    return {by_flag[flag]: p for p in command.params if p.param_type_name == "option"
            for flag in p.opts if flag in by_flag}


def test_each_option_is_declared_once_under_one_flag() -> None:
    names = [o.name for o in FAMILY_OPTIONS]
    assert len(set(names)) == len(names)
    assert len({o.flag for o in FAMILY_OPTIONS}) == len(names)
    assert all(o.families and all(text.strip() for text in o.texts())
               for o in FAMILY_OPTIONS)


def test_every_release_command_option_is_its_declaration(commands) -> None:
    seen = set()
    for name, command in commands.items():
        for option_name, parameter in _declared_options(command).items():
            declared = family_option(option_name)
            assert declared.cli, f"{name} offers {declared.flag}, declared for recipes only"
            assert parameter.name == declared.name
            assert parameter.help == declared.help_for(name), f"{name} {declared.flag}"
            assert parameter.default == declared.default or (
                parameter.default is None and declared.default is False)
            seen.add(option_name)
    # every option declared for the command line is offered by some release command
    assert seen == {o.name for o in FAMILY_OPTIONS if o.cli}


def test_role_options_on_every_release_command(commands) -> None:
    roles = {o.name for o in FAMILY_OPTIONS if o.role is not None}
    assert roles == {"identifiers", "weight", "strata", "household"}
    for command in commands.values():
        assert roles <= set(_declared_options(command))


def test_recipe_options_and_form_fields_are_the_declarations() -> None:
    from microagg.ui.forms import method_form, step_field_names

    for of, adapter in ADAPTERS.items():
        assert adapter.options == step_options(of)
        assert all(any(o is d for d in FAMILY_OPTIONS) for o in adapter.options)
        assert step_field_names(adapter) == [o.name for o in step_fields(of)]
        for cls in family(of):
            html = str(method_form(cls, adapter, ["age", "sex"]))
            for option in (*adapter.options, *step_fields(of)):
                text = option.help_for(command_of(cls))
                assert _escaped(text) in html, f"{cls.name}: {option.name}"


def test_the_form_and_the_command_say_the_same(commands) -> None:
    """Where a command runs a method and takes a recipe option, its help is the text the
    form of a step of that method shows."""
    compared = 0
    for of, adapter in ADAPTERS.items():
        for cls in family(of):
            command = commands.get(command_of(cls))
            if command is None:
                continue
            offered = _declared_options(command)
            for option in adapter.options:
                if option.name in offered:
                    assert offered[option.name].help == option.help_for(command_of(cls))
                    compared += 1
    assert compared >= 10


def test_a_dp_step_has_protects_and_no_other_family_does() -> None:
    assert [o.name for o in step_fields(Family.DIFFERENTIAL_PRIVACY)] == ["protects"]
    assert all(not step_fields(of) for of in Family if of is not Family.DIFFERENTIAL_PRIVACY)


_TYPER_OPTION = re.compile(r"typer\.Option\((?:[^()]|\([^()]*\))*\)", re.DOTALL)


@pytest.mark.parametrize("module", sorted(set(COMMANDS.values())))
def test_no_release_command_declares_a_family_option_again(module: str) -> None:
    source = (CLI / f"{module}.py").read_text(encoding="utf-8")
    flags = {o.flag for o in FAMILY_OPTIONS}
    for made in _TYPER_OPTION.findall(source):
        again = {flag for flag in flags if f'"{flag}"' in made}
        assert not again, f"cli/{module}.py declares {again} again: {made[:80]}"


def test_the_source_check_finds_a_redeclared_option() -> None:
    made = _TYPER_OPTION.findall('x = typer.Option(None, "--carry", help=f("a"))')
    assert made and '"--carry"' in made[0]


def test_a_declared_option_checks_a_recipe_value() -> None:
    from microagg.errors import ParameterError

    assert family_option("keys").check(["a ", " b"]) == ["a", "b"]
    assert family_option("household_size").check(3.0) == 3
    assert family_option("protects").check("step-input").value == "step-input"
    with pytest.raises(ParameterError, match="household_size"):
        family_option("household_size").check(0)
    with pytest.raises(ParameterError, match="bounds"):
        family_option("bounds").check({"age": [5, 1]})


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
