"""An attack's risk on released categorical keys: singling out, linkability or inference
(:mod:`microagg.risk.attacks`, Anonymeter's attacks: Giomi et al. 2023, PoPETs 2023(2)) as
the risk :func:`~microagg.evaluation.key_compare.compare_keys` holds equal, so that local
suppression, recoding, PRAM and MDAV on the keys are ranked at an equal GDPR risk.

The keys are attacked as categories, the original records the release was made from, the
release and the control records (held out of every release:
:func:`~microagg.evaluation.attack_compare.control_rows`, or a control table given) coded
against one list of values, so that the attacks compare values, not codes. A suppressed
value is missing, which the attacks read as missing. A key the release recodes (its values
are intervals or inner concepts the original does not hold, each original value becoming one
released value) is attacked at the recoded level: the original and control records are
recoded the same way before the attack, as an attacker who knows the published recoding
reads them (a predicate ``age = [20, 30)`` on the release is met by the people aged 20 to
29). A key whose new values do not follow from the original value alone (MDAV's inner
concepts of a taxonomy, given to some records of a value and not others) is compared as it
is: those values are categories no original record holds. The risk is
:func:`~microagg.evaluation.attack_compare.attack_level`'s, targets drawn from the
comparison's seed, the same for every release; a randomized method (PRAM) is attacked on
each of its seeds' releases as it is: an attacker who links a changed record links the wrong
person, which the attack counts as a failure.
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

__all__ = ["KeyAttackMeasure", "as_categories", "at_released_level"]


def as_categories(codes: np.ndarray, coding: KeyCoding) -> pd.DataFrame:
    """Keys coded against ``coding`` as a table of categories: a code of one of the
    original's values (0 up) as that value's category ``v…``, a code past them (a value the
    release holds and the original does not) as ``r…``, -1 as missing, and a code of -2 or
    less (a value a control record holds and the original does not) as ``c…``.

    Parameters
    ----------
    codes : numpy.ndarray
        One row per record, one column per key.
    coding : KeyCoding
        The original's values.

    Returns
    -------
    pandas.DataFrame
        Text categories, missing where -1.

    Examples
    --------
    >>> coding = KeyCoding.of(pd.DataFrame({"a": ["x", "y", "y"]}), ["a"])
    >>> column = as_categories(np.array([[0], [2], [-1], [-3]]), coding)["a"]
    >>> column.where(column.notna(), "missing").tolist()
    ['v0', 'r2', 'missing', 'c1']
    """
    columns = {}
    for j, key in enumerate(coding.keys):
        column = codes[:, j]
        text = np.where(column < len(coding.values[j]), "v", "r").astype(object)
        text[column <= -2] = "c"
        number = np.where(column <= -2, -column - 2, column).astype(str)
        text = (text + number).astype(object)
        text[column == -1] = None
        columns[key] = text
    return pd.DataFrame(columns)


def at_released_level(original: np.ndarray, control: np.ndarray, released: np.ndarray,
                      coding: KeyCoding) -> tuple[np.ndarray, np.ndarray]:
    """The original and control keys recoded as the release recodes them (module
    docstring): a key the release gives values the original does not hold, each original
    value always one released value (suppressed cells aside), has its original and control
    values mapped to those; other keys are left as they are.

    Parameters
    ----------
    original, control, released : numpy.ndarray
        Codes against ``coding`` (control values the original does not hold: -2 or less;
        the release's own new values: past the original's).
    coding : KeyCoding
        The original's values.

    Returns
    -------
    original, control : numpy.ndarray
        New arrays, at the release's level.

    Examples
    --------
    >>> coding = KeyCoding.of(pd.DataFrame({"a": ["x", "y", "z"]}), ["a"])
    >>> released = np.array([[3], [3], [2]])  # x and y recoded to one new value
    >>> o, c = at_released_level(coding.codes, np.array([[1], [-2]]), released, coding)
    >>> o.ravel().tolist(), c.ravel().tolist()
    ([3, 3, 2], [3, -2])
    """
    original, control = original.copy(), control.copy()
    for j in range(len(coding.keys)):
        known, given = len(coding.values[j]), released[:, j]
        if not (given >= known).any():
            continue  # no value the original lacks: nothing recoded
        own = original[:, j]
        both = (own >= 0) & (given >= 0)
        pairs = np.unique(np.stack([own[both], given[both]], axis=1), axis=0)
        if len(np.unique(pairs[:, 0])) != len(pairs):
            continue  # some original value became several released values: not a recoding
        mapping = np.arange(known)
        mapping[pairs[:, 0]] = pairs[:, 1]
        present = own >= 0
        original[present, j] = mapping[own[present]]
        theirs = control[:, j]
        shared = (theirs >= 0) & (theirs < known)
        control[shared, j] = mapping[theirs[shared]]
    return original, control


@dataclass(frozen=True)
class KeyAttackMeasure:
    """The risk of an attack ``kind`` on released keys (module docstring): the original
    records released (``coding``), the control records' keys coded against it, the attack's
    settings and the comparison's seed. Called as
    :class:`~microagg.evaluation.key_measures.KeyRiskMeasure` is, on the released keys'
    codes."""

    kind: RiskKind
    coding: KeyCoding
    control: np.ndarray = field(repr=False)
    settings: AttackSettings
    seed: int
    drawn: bool  # the control records were held out of the table at random

    @classmethod
    def of(cls, kind: RiskKind, coding: KeyCoding, control: pd.DataFrame,
           settings: AttackSettings, *, seed: int, drawn: bool) -> KeyAttackMeasure:
        """The measure, ``control`` (the control records' keys, as read) coded against
        ``coding`` and ``settings`` checked against the keys."""
        stand_in = KeyCoding(coding.keys, np.zeros((len(control), len(coding.keys)),
                                                    dtype=np.int64), coding.values)
        codes = released_codes(stand_in, {key: control[key].reset_index(drop=True)
                                          for key in coding.keys})
        for j in range(len(coding.keys)):  # a value the original lacks: -2 and less
            unseen = codes[:, j] >= len(coding.values[j])
            codes[unseen, j] = -codes[unseen, j] - 2
        probe = as_categories(coding.codes[:2], coding)
        settings = checked_settings(attack_tables(probe, probe, probe), settings)
        return cls(kind, coding, codes, settings, seed, drawn)

    @property
    def label(self) -> str:
        return f"{self.kind.value} risk"

    def __call__(self, codes: np.ndarray, own: np.ndarray | None = None) -> float:
        """The attack's risk on the released keys ``codes`` (``own`` is not used: every
        record is attacked, a changed one counting as the attack's failure)."""
        original, control = at_released_level(self.coding.codes, self.control, codes,
                                              self.coding)
        tables = attack_tables(as_categories(original, self.coding),
                               as_categories(codes, self.coding),
                               as_categories(control, self.coding))
        return attack_level(tables, self.kind, self.settings, self.seed)

    def definition(self, weight: str | None, level: float = 0.0) -> dict[str, str]:
        """The risk held, as a comparison states it (``weight`` has no part in an attack;
        ``level``: the target, read in words)."""
        stated = attack_definition(self.kind, self.settings, list(self.coding.keys),
                                   len(self.coding.codes), len(self.control), self.drawn,
                                   level)
        stated["keys"] = ("attacked as categories; a key the release recodes is attacked at "
                          "the recoded level (the original and control records recoded the "
                          "same way), a suppressed value is missing")
        return stated
