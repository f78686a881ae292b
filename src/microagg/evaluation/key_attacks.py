"""An attack's risk on released categorical keys: singling out, linkability or inference
(:mod:`microagg.risk.attacks`, Anonymeter's attacks: Giomi et al. 2023, PoPETs 2023(2)) as
the risk :func:`~microagg.evaluation.key_compare.compare_keys` holds equal, so that local
suppression, recoding, PRAM and MDAV on the keys are ranked at an equal GDPR risk.

The keys are attacked as categories: a released value is the same category as an original
value when it is that value (recoded values, such as an interval or an inner concept of a
taxonomy, are categories of their own; a suppressed value is missing, which the attacks read
as missing). The original records the release was made from, the release and the control
records (held out of every release: :func:`~microagg.evaluation.attack_compare.control_rows`,
or a control table given) are coded against the same list of values, so that the attacks
compare values, not codes. The risk is :func:`~microagg.evaluation.attack_compare.
attack_level`'s, targets drawn from the comparison's seed, the same for every release; a
randomized method (PRAM) is attacked on each of its seeds' releases as it is, with no record
set apart: an attacker who links a changed record links the wrong person, which the attack
counts as a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microagg.evaluation.attack_compare import attack_definition, attack_level
from microagg.evaluation.key_measures import KeyCoding, released_codes
from microagg.options import RiskKind
from microagg.risk.attack_data import attack_tables
from microagg.risk.attacks import AttackSettings, checked_settings

__all__ = ["KeyAttackMeasure", "as_categories"]


def as_categories(codes: np.ndarray, coding: KeyCoding, new: str) -> pd.DataFrame:
    """Keys coded against ``coding`` as a table of categories: a code of one of the
    original's values as that value's name, a code past them (a value the original does not
    hold) as a category named with the prefix ``new``, -1 as missing.

    Parameters
    ----------
    codes : numpy.ndarray
        One row per record, one column per key (:func:`~microagg.evaluation.key_measures.
        released_codes`).
    coding : KeyCoding
        The original's values.
    new : str
        The prefix of values the original does not hold, told apart by table (a release's
        recoded values are not a control table's unseen values).

    Returns
    -------
    pandas.DataFrame
        Text categories, missing as None.

    Examples
    --------
    >>> frame = pd.DataFrame({"a": ["x", "y", "y"]})
    >>> coding = KeyCoding.of(frame, ["a"])
    >>> as_categories(np.array([[0], [2], [-1]]), coding, "r")["a"].tolist()
    ['v0', 'r2', None]
    """
    columns = {}
    for j, key in enumerate(coding.keys):
        known = len(coding.values[j])
        column = codes[:, j]
        text = np.where(column < known, np.char.add("v", column.astype(str)),
                        np.char.add(new, column.astype(str))).astype(object)
        text[column < 0] = None
        columns[key] = text
    return pd.DataFrame(columns)


@dataclass(frozen=True)
class KeyAttackMeasure:
    """The risk of an attack ``kind`` on released keys (module docstring): the original
    records released (``coding``), the control records' keys, the attack's settings and the
    comparison's seed. Called as :class:`~microagg.evaluation.key_measures.KeyRiskMeasure`
    is, on the released keys' codes."""

    kind: RiskKind
    coding: KeyCoding
    control: pd.DataFrame = field(repr=False)
    settings: AttackSettings
    seed: int
    drawn: bool  # the control records were held out of the table at random
    original: pd.DataFrame = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "original", as_categories(self.coding.codes, self.coding,
                                                           "o"))

    @classmethod
    def of(cls, kind: RiskKind, coding: KeyCoding, control: pd.DataFrame,
           settings: AttackSettings, *, seed: int, drawn: bool) -> KeyAttackMeasure:
        """The measure, ``control`` (the control records' keys, as read) coded against
        ``coding`` and ``settings`` checked against the keys."""
        held = as_categories(_coded(coding, control), coding, "c")
        probe = attack_tables(as_categories(coding.codes[:2], coding, "o"),
                              as_categories(coding.codes[:2], coding, "o"), held[:2])
        return cls(kind, coding, held, checked_settings(probe, settings), seed, drawn)

    @property
    def label(self) -> str:
        return f"{self.kind.value} risk"

    def __call__(self, codes: np.ndarray, own: np.ndarray | None = None) -> float:
        """The attack's risk on the released keys ``codes`` (``own`` is not used: every
        record is attacked, a changed one counting as the attack's failure)."""
        tables = attack_tables(self.original, as_categories(codes, self.coding, "r"),
                               self.control)
        return attack_level(tables, self.kind, self.settings, self.seed)

    def definition(self, weight: str | None, level: float = 0.0) -> dict[str, str]:
        """The risk held, as a comparison states it (``weight`` has no part in an attack;
        ``level``: the target, read in words)."""
        stated = attack_definition(self.kind, self.settings, list(self.coding.keys),
                                   len(self.coding.codes), len(self.control), self.drawn,
                                   level)
        stated["keys"] = ("attacked as categories: a recoded value (an interval, an inner "
                          "concept) is a category of its own, a suppressed one is missing")
        return stated


def _coded(coding: KeyCoding, control: pd.DataFrame) -> np.ndarray:
    """``control``'s keys coded against ``coding`` (its rows, not the original's)."""
    stand_in = KeyCoding(coding.keys, np.zeros((len(control), len(coding.keys)),
                                                dtype=np.int64), coding.values)
    return released_codes(stand_in, {key: control[key].reset_index(drop=True)
                                     for key in coding.keys})

