"""A recipe's ``attacks`` section: the three risks by which data-protection authorities judge
a release (singling out, linkability, inference: :mod:`microagg.risk.attacks`), measured on
the recipe's final table against its input, as ``microagg evaluate --attacks`` measures them.

::

    attacks:
      kinds: [linkability, inference]       # as --attacks: singling-out, linkability,
                                            # inference, closest-records
      control: held_out.csv                 # as --control (required), relative to the recipe
      secret: [income]                      # as --secret (inference; default: every column)
      linkability_columns: [[age, sex], [zip, income]]   # as --linkability-columns
      n: 2000                               # as --attacks-n (default 500)
      seed: 0                               # as --seed (default: fresh draws)

The control records are original records of the same table that the recipe's input does not
hold: what the release leaks about the people in it is told apart from what it teaches about
anyone only against them, so, as ``evaluate --attacks`` refuses to run without
``--control``, the section refuses to be without ``control``. The control file is read as the
input was: the recipe's ``read`` options, and as text the columns the input holds as text.
The figures are computed from the raw data: they are the data owner's
(:mod:`microagg.release.reports.disclosure`), never written beside a DP release.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from microagg.errors import InputError
from microagg.risk.registry import ATTACKS

if TYPE_CHECKING:
    import pandas as pd

    from microagg.data.schema import Schema
    from microagg.risk.attacks import AttackSettings

__all__ = ["FIELDS", "RecipeAttacks"]

FIELDS = ("kinds", "control", "secret", "linkability_columns", "n", "seed")
"""The keys of the section, in the order written."""

_WHERE = "the recipe's 'attacks'"


def _refuse(field: str, detail: str) -> InputError:
    return InputError(f"{_WHERE}: '{field}' {detail}")


def _names(value: Any, field: str) -> tuple[str, ...]:
    """A list of column names (a single name alone is a list of one)."""
    if isinstance(value, str):
        value = [value]
    if (not isinstance(value, Sequence) or not value
            or not all(isinstance(v, str) and v for v in value)):
        raise _refuse(field, f"is a list of column names, got {value!r}")
    return tuple(value)


def _count(value: Any, field: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _refuse(field, f"is a whole number of at least {least}, got {value!r}")
    return value


@dataclass(frozen=True)
class RecipeAttacks:
    """The section (module docstring), checked when made.

    Examples
    --------
    >>> section = RecipeAttacks.of({"kinds": ["inference"], "control": "held.csv",
    ...                             "secret": "income", "n": 200})
    >>> section.secret, section.to_dict()["control"]
    (('income',), 'held.csv')
    >>> RecipeAttacks.of({"kinds": ["membership"], "control": "held.csv"})
    Traceback (most recent call last):
    ...
    microagg.errors.InputError: the recipe's 'attacks': 'kinds' ... got 'membership'
    """

    kinds: tuple[str, ...]
    control: Path
    secret: tuple[str, ...] | None = None
    linkability_columns: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    n: int = 500
    seed: int | None = None

    @classmethod
    def of(cls, spec: Any, base_dir: Path | None = None) -> RecipeAttacks:
        """The section of a recipe's mapping; ``control`` relative to ``base_dir``."""
        if not isinstance(spec, Mapping):
            raise InputError(f"{_WHERE} is a mapping with keys {', '.join(FIELDS)}")
        unknown = sorted(set(map(str, spec)) - set(FIELDS))
        if unknown:
            raise InputError(f"{_WHERE}: unknown key '{unknown[0]}' (allowed: "
                             f"{', '.join(FIELDS)})")
        kinds = _names(spec.get("kinds"), "kinds") if "kinds" in spec else ()
        wrong = [k for k in kinds if k not in ATTACKS]
        if not kinds or wrong:
            raise _refuse("kinds", f"lists attacks among {', '.join(ATTACKS)}; got "
                          + (repr(wrong[0]) if wrong else "none"))
        if not isinstance(spec.get("control"), str) or not spec["control"]:
            raise _refuse("control", "is required: the path of original records the input "
                          "does not hold, so that what the release leaks about the people in "
                          "it is told apart from what it teaches about anyone")
        control = Path(spec["control"])
        if base_dir is not None and not control.is_absolute():
            control = base_dir / control
        secret = _names(spec["secret"], "secret") if spec.get("secret") is not None else None
        if secret is not None and "inference" not in kinds:
            raise _refuse("secret", "goes with the inference attack (add it to 'kinds')")
        split = spec.get("linkability_columns")
        if split is not None:
            if "linkability" not in kinds:
                raise _refuse("linkability_columns", "goes with the linkability attack (add "
                              "it to 'kinds')")
            if isinstance(split, str) or not isinstance(split, Sequence) or len(split) != 2:
                raise _refuse("linkability_columns", "is two lists of column names, as "
                              f"[[a, b], [c, d]]; got {split!r}")
            split = (_names(split[0], "linkability_columns"),
                     _names(split[1], "linkability_columns"))
        seed = spec.get("seed")
        return cls(kinds, control, secret, split, _count(spec.get("n", 500), "n", 1),
                   None if seed is None else _count(seed, "seed", 0))

    def to_dict(self, base_dir: Path | None = None) -> dict[str, Any]:
        """The section as a recipe holds it: the control's path relative to ``base_dir``
        (default: its name alone), the defaults left out."""
        import os

        path = (os.path.relpath(self.control.resolve(), base_dir.resolve())
                if base_dir is not None else self.control.name)
        out: dict[str, Any] = {"kinds": list(self.kinds), "control": Path(path).as_posix()}
        if self.secret is not None:
            out["secret"] = list(self.secret)
        if self.linkability_columns is not None:
            out["linkability_columns"] = [list(p) for p in self.linkability_columns]
        out["n"] = self.n
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    def check(self, columns: Sequence[str]) -> None:
        """Refuse a ``secret`` or a linkability column the input does not have."""
        named = [*(self.secret or ()), *(c for p in self.linkability_columns or () for c in p)]
        unknown = list(dict.fromkeys(c for c in named if c not in set(map(str, columns))))
        if unknown:
            field = "secret" if unknown[0] in (self.secret or ()) else "linkability_columns"
            raise _refuse(field, f"names {', '.join(unknown)}, not a column of the input "
                          f"({', '.join(map(str, columns))})")

    def read_control(self, like: pd.DataFrame, read: Mapping[str, Any],
                     schema: Schema | None) -> pd.DataFrame:
        """The control records, read as ``like`` (the input) was read (module docstring)
        and checked to have its columns."""
        import pandas as pd

        from microagg.data.io import declared_text, read_table

        declared = declared_text(schema)
        text = {str(c): declared.get(str(c), frozenset()) for c in like.columns
                if not pd.api.types.is_numeric_dtype(like[c])}
        try:
            control = read_table(self.control, **dict(read), text=text)
        except InputError as exc:
            raise _refuse("control", f"cannot be read: {exc}") from None
        if set(map(str, control.columns)) != set(map(str, like.columns)):
            raise _refuse("control", f"({self.control.name}) must have the columns of the "
                          f"input (held-out records of the same table); it has "
                          f"{', '.join(map(str, control.columns))}")
        return control

    def settings(self) -> AttackSettings:
        """What the attacks are asked (:class:`~microagg.risk.attacks.AttackSettings`)."""
        from microagg.risk.attacks import AttackSettings

        split = self.linkability_columns
        return AttackSettings(n_attacks=self.n,
                              linkability_columns=None if split is None
                              else (list(split[0]), list(split[1])),
                              secrets=None if self.secret is None else list(self.secret))

    def measure(self, original: pd.DataFrame, release: pd.DataFrame,
                control: pd.DataFrame, between: Callable[[], None] | None = None
                ) -> dict[str, Any]:
        """The ``attacks`` object of the recipe's report: what ``microagg evaluate
        --attacks … --json`` gives on the same tables, settings and seed
        (:func:`~microagg.risk.attacks.release_attacks`)."""
        from microagg.risk.attacks import release_attacks

        return release_attacks(original, release, control, list(self.kinds),
                               settings=self.settings(), rng=self.seed,
                               between=between).to_dict()
