"""The options of the release families, each declared once.

A family option is a keyword of a family's ``release`` that is not a method parameter (the
columns it protects, the columns it carries, the declared bounds …), or a role given over
the schema (``--weight``). Each is one :class:`FamilyOption`: its name, what it holds
(:class:`OptionKind`), its default, its help text (one text, or one per command where the
option means something else there), the families that take it, and where it is offered: the
command line (``cli/``: :func:`microagg.cli.methods.option` makes the typer option),
a recipe step (``recipe/``: the family's adapter lists the declarations its family takes
and checks a value with :meth:`FamilyOption.check`) and the web app's step form (``ui/forms``:
one field per recipe option). So the three say the same name, default and help.

This module imports neither pandas nor numba: a command's ``--help`` is written from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from microagg.data.schema import Role
from microagg.errors import ParameterError
from microagg.options import parse
from microagg.release.methods.base import Family, ReleaseMethod

__all__ = ["FAMILY_OPTIONS", "FamilyOption", "OptionKind", "Protects", "command_of",
           "family_option", "step_fields",
           "step_options"]


class OptionKind(StrEnum):
    """What a family option holds, and so how each place reads it (the web app: which
    field it shows)."""

    COLUMNS = "columns"  # a list of column names
    FLAG = "flag"  # true or false
    BOUNDS = "bounds"  # column -> [low, high]
    COUNT = "count"  # a positive integer
    CHOICE = "choice"  # one value of an enum (`choices`)
    COLUMN = "column"  # one column name (a role: the weight, the household)
    FILE = "file"  # a path (the schema)
    SEED = "seed"  # a non-negative integer


class Protects(StrEnum):
    """What a differentially private step's guarantee is about."""

    ORIGINAL = "original"  # the recipe's input table (refused after a data-dependent step)
    STEP_INPUT = "step-input"  # the table the steps before it left, said in the report


_ALL = tuple(Family)


@dataclass(frozen=True)
class FamilyOption:
    """One option of one or more families, declared once (see the module docstring).

    ``help`` is one text, or a mapping from a command name (``dp``, ``topcode`` …) to the
    text the option has there (the key ``""`` for every other command). ``recipe``: a recipe
    step and the web app's form take it (``step_field``: as a field of the step itself, not
    among its options); ``cli``: the release commands do; ``role``: the role a column named
    by it takes over the schema (role options only).
    """

    name: str
    kind: OptionKind
    help: str | Mapping[str, str]
    families: tuple[Family, ...]
    default: Any = None
    recipe: bool = True
    cli: bool = True
    choices: type[StrEnum] | None = None
    role: Role | None = None
    step_field: bool = False  # a field of the step itself (``Step.protects``), not an option

    @property
    def flag(self) -> str:
        """The command-line flag (``--drop-incomplete``)."""
        return "--" + self.name.replace("_", "-")

    def help_for(self, command: str) -> str:
        """The help text of the option in ``command`` (a release command's name)."""
        if isinstance(self.help, str):
            return self.help
        return self.help.get(command, self.help[""])

    def texts(self) -> tuple[str, ...]:
        """Every help text of the option (one per command where it differs)."""
        return (self.help,) if isinstance(self.help, str) else tuple(self.help.values())

    def check(self, value: Any) -> Any:
        """``value`` in the form ``release`` takes it; a :class:`ParameterError` naming the
        option otherwise.

        Examples
        --------
        >>> family_option("columns").check(" age ")
        ['age']
        """
        if value is None:
            return None
        if self.kind is OptionKind.COLUMNS:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list | tuple) or not all(isinstance(c, str) for c in items):
                raise ParameterError(self.name, f"is a list of column names, got {value!r}")
            if isinstance(value, str) and not value.strip():
                return None  # an empty field: the default
            named = [c.strip() for c in items if c.strip()]
            if not named:
                raise ParameterError(self.name, "names no column: leave it out for the "
                                     "default columns")
            return named
        if self.kind is OptionKind.FLAG:
            if not isinstance(value, bool):
                raise ParameterError(self.name, f"is true or false, got {value!r}")
            return value
        if self.kind is OptionKind.COUNT:
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not float(value).is_integer() or value < 1:
                raise ParameterError(self.name, f"is a positive integer, got {value!r}")
            return int(value)
        if self.kind is OptionKind.CHOICE and self.choices is not None:
            return parse(self.choices, value, f"`{self.name}`")
        if self.kind is OptionKind.BOUNDS:
            return _bounds(self.name, value)
        return value


def _bounds(name: str, value: Any) -> dict[str, tuple[float, float]]:
    if not isinstance(value, Mapping):
        raise ParameterError(name, f"maps each column to [low, high], got {value!r}")
    out = {}
    for column, pair in value.items():
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ParameterError(name, f"of '{column}' is [low, high], got {pair!r}") from None
        if not low < high:
            raise ParameterError(name, f"of '{column}' needs low < high, got [{low:g}, "
                                 f"{high:g}]")
        out[str(column)] = (low, high)
    return out


_QUASI_DEFAULT = "(default: the schema's quasi-identifiers, else every"
_KEYS_DEFAULT = "(default: the schema's quasi-identifiers)."

FAMILY_OPTIONS: tuple[FamilyOption, ...] = (
    FamilyOption("columns", OptionKind.COLUMNS, {
        "": f"The columns to mask {_QUASI_DEFAULT} non-identifier column).",
        "mask": f"The columns to mask {_QUASI_DEFAULT} numeric non-identifier column).",
        "topcode": f"The numeric columns to code {_QUASI_DEFAULT} numeric non-identifier "
                   "column).",
        "dp": "The columns to protect (default: every non-identifier column). Other columns "
              "are dropped."},
        (Family.K_ANONYMITY, Family.MASKING, Family.DIFFERENTIAL_PRIVACY)),
    FamilyOption("quasi", OptionKind.COLUMNS, "Quasi-identifiers (default: the schema's).",
                 (Family.T_CLOSENESS,)),
    FamilyOption("confidential", OptionKind.COLUMNS,
                 "Confidential attribute(s) (default: the schema's).", (Family.T_CLOSENESS,)),
    FamilyOption("keys", OptionKind.COLUMNS, {
        "": f"The key variables {_KEYS_DEFAULT}",
        "recode": "The key variables whose frequencies the report gives (default: the "
                  "recoded columns and the schema's quasi-identifiers).",
        "suppress": f"The key variables to make k-anonymous {_KEYS_DEFAULT}",
        "pram": f"The variables to post-randomize {_KEYS_DEFAULT}",
        "swap": "The key variables whose frequencies the report gives (default: the "
                "hierarchy and the risk variables)."}, (Family.KEYS,)),
    FamilyOption("carry", OptionKind.COLUMNS, "Columns copied unchanged: the table is then "
                 "NOT differentially private.", (Family.DIFFERENTIAL_PRIVACY,)),
    FamilyOption("schema", OptionKind.FILE, "Schema file (YAML): roles, kinds, domains, "
                 "taxonomies.", _ALL, recipe=False),
    FamilyOption("bounds", OptionKind.BOUNDS, "Domains of numeric columns (override the "
                 "schema's).", (Family.DIFFERENTIAL_PRIVACY,)),
    FamilyOption("bounds_from_data", OptionKind.FLAG, "Take undeclared domains from the data "
                 "(1.5 x max; observed categories): the release is then NOT differentially "
                 "private.", (Family.DIFFERENTIAL_PRIVACY,), default=False),
    FamilyOption("household_size", OptionKind.COUNT, "Protect one household (the household "
                 "column) of at most this many records rather than one record: every "
                 "mechanism runs at epsilon / size. A larger household is refused.",
                 (Family.DIFFERENTIAL_PRIVACY,)),
    FamilyOption("drop_incomplete", OptionKind.FLAG, "Drop the rows with a missing value "
                 "first.", (Family.K_ANONYMITY, Family.T_CLOSENESS,
                            Family.DIFFERENTIAL_PRIVACY), default=False),
    FamilyOption("clamp", OptionKind.FLAG, "Clamp values outside their declared domain.",
                 (Family.K_ANONYMITY, Family.T_CLOSENESS), default=False, recipe=False),
    FamilyOption("seed", OptionKind.SEED, {
        "": "Seed (default: OS entropy).",
        "dp": "Seed of the noise, for research only: a known seed removes the noise "
              "(default: OS entropy)."},
        (Family.MASKING, Family.KEYS, Family.DIFFERENTIAL_PRIVACY), recipe=False),
    FamilyOption("protects", OptionKind.CHOICE, (
        "original (default): the guarantee is about the table as uploaded, and the step is "
        "refused after a step that reads other records | step-input: about the table the "
        "steps before it left, said in the report"), (Family.DIFFERENTIAL_PRIVACY,),
        default=Protects.ORIGINAL, cli=False, choices=Protects, step_field=True),
    FamilyOption("identifiers", OptionKind.COLUMNS, "Identifier columns: dropped from the "
                 "release.", _ALL, recipe=False, role=Role.IDENTIFIER),
    FamilyOption("weight", OptionKind.COLUMN, "The sampling weight column: never masked; "
                 "weights the cluster means.", _ALL, recipe=False, role=Role.WEIGHT),
    FamilyOption("strata", OptionKind.COLUMNS, "Stratum columns: each stratum is protected "
                 "on its own.", _ALL, recipe=False, role=Role.STRATUM),
    FamilyOption("household", OptionKind.COLUMN, "The household identifier column: written "
                 "unchanged, never masked.", _ALL, recipe=False, role=Role.HOUSEHOLD),
)
"""Every family option (the only declaration of each), in the order a recipe step and a
form list them."""


def family_option(name: str) -> FamilyOption:
    """The declaration of the family option ``name``."""
    for option in FAMILY_OPTIONS:
        if option.name == name:
            return option
    raise KeyError(name)


def step_options(of: Family) -> tuple[FamilyOption, ...]:
    """The options a recipe step of family ``of`` takes (and its form shows), in order."""
    return tuple(o for o in FAMILY_OPTIONS
                 if o.recipe and not o.step_field and of in o.families)


def step_fields(of: Family) -> tuple[FamilyOption, ...]:
    """The fields of a recipe step of family ``of`` beyond its method's parameters and its
    options (``protects`` for a DP step)."""
    return tuple(o for o in FAMILY_OPTIONS if o.step_field and of in o.families)


def command_of(method: type[ReleaseMethod]) -> str:
    """The command that runs ``method``: its own (``recode``, ``topcode``), else its
    family's."""
    return str(getattr(method, "command", None) or method.family.value)
