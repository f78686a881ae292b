"""The unit a differentially private release protects: one record, or one household.

A DP release protects one record: two data sets that differ in one record give outputs whose
probabilities differ by at most e^ε. When records come in households (a ``household`` column),
a household of s records differs in s records, and group privacy (Dwork & Roth 2014, Thm 2.2)
only bounds its outputs by e^(s ε). To protect whole households at ε, the data owner declares
a bound m on their size (``household_size``): every mechanism then runs at ε/m, so a change of
at most m records (one household) changes the probability of any output by at most e^ε. A
household larger than m would break the bound and is refused (told to the owner only: no
output is written).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from microagg.data.schema import Role, Schema
from microagg.errors import ParameterError, PrivacyError

__all__ = ["GROUPED", "PrivacyUnit"]

GROUPED = " The unit of privacy is one record; the records come in households"
"""How the guarantee's closing sentence starts when records come in households with no bound
on their size (protected by group privacy only): a recipe's guarantee repeats that sentence."""


@dataclass(frozen=True)
class PrivacyUnit:
    """One record (``size`` 1), or one household of at most ``size`` records of column
    ``household``.

    Examples
    --------
    >>> frame = pd.DataFrame({"hh": [1, 1, 2], "x": [0.1, 0.2, 0.3]})
    >>> unit = PrivacyUnit.of(frame, None, {"hh": "household"}, household_size=2)
    >>> unit.record_epsilon(1.0), unit.name
    (0.5, 'one household of at most 2 records (column hh)')
    """

    household: str | None = None
    size: int = 1

    @classmethod
    def of(cls, frame: pd.DataFrame, schema: Schema | None,
           roles: Mapping[str, Role | str] | None, household_size: int | None
           ) -> PrivacyUnit:
        """The unit of a release of ``frame``: its household column (role ``household`` in
        ``schema`` or ``roles``) and the declared bound ``household_size``, checked."""
        from microagg.release.inputs import resolve_schema

        households = [name for name, role in (roles or {}).items()
                      if str(role) == Role.HOUSEHOLD.value]
        if not households and schema is not None:
            households = [a.name for a in schema if a.role is Role.HOUSEHOLD]
        if household_size is None:
            return cls(households[0] if households else None, 1)
        if not households:
            resolved, _ = resolve_schema(frame, schema, roles, strict=False)
            households = list(resolved.names_with_role(Role.HOUSEHOLD))
        if isinstance(household_size, bool) or not isinstance(household_size, int) \
                or household_size < 1:
            raise ParameterError("household_size", f"is a positive integer, got "
                                 f"{household_size!r}")
        if len(households) != 1:
            raise ParameterError("household_size", "bounds the size of a household, and "
                                 f"the data declares {len(households)} household columns "
                                 "(give one the role household)")
        column = households[0]
        if frame[column].isna().any():
            raise PrivacyError(f"household column '{column}' has a missing value; every "
                               "record belongs to one household")
        largest = int(frame[column].value_counts(sort=False).max())
        if largest > household_size:
            raise PrivacyError(f"a household of column '{column}' has {largest} records, more "
                               f"than `household_size` {household_size}: raise the bound (the "
                               "noise grows with it) or split the largest households")
        return cls(column, household_size)

    @property
    def name(self) -> str:
        """The unit in words, as the privacy report states it."""
        if self.size == 1:
            return "one record"
        return f"one household of at most {self.size} records (column {self.household})"

    def record_epsilon(self, epsilon: float) -> float:
        """The ε every mechanism runs at so that the unit is protected at ``epsilon``."""
        return epsilon / self.size

    def statement(self, epsilon: float, mechanisms: float | None = None) -> str:
        """The sentence the privacy report adds to its guarantee of ``epsilon`` for the unit;
        ``mechanisms``: the epsilon every mechanism ran at, when not epsilon / size (the
        paper's calibration spends it once per attribute)."""
        if self.size > 1:
            ran = self.record_epsilon(epsilon) if mechanisms is None else mechanisms
            return (f" The unit of privacy is {self.name}: every mechanism ran at "
                    f"{ran:g} (epsilon / {self.size} per record), so by group privacy two "
                    f"data sets that differ in one household's records (at most {self.size}) "
                    f"give outputs whose probabilities differ by at most a factor "
                    f"e^{epsilon:g}.")
        if self.household is not None:
            return (f"{GROUPED} (column {self.household}), and a household of s records is "
                    f"protected at s times this epsilon only (group privacy): declare a bound "
                    f"on their size (household_size) to protect whole households.")
        return ""
