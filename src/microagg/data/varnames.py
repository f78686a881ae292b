"""Legal variable names for SPSS and Stata files, the original name kept as the variable
label.

A table's column names are free text (UCI Adult's ``education-num``, ``capital-gain``), while
SPSS and Stata name a variable by rules of their own:

* SPSS: letters, digits, ``_`` and ``.``, beginning with a letter, not ending with ``.``, at
  most 64 bytes (UTF-8), none of the reserved words ALL, AND, BY, EQ, GE, GT, LE, LT, NE,
  NOT, OR, TO, WITH (in any case), unique regardless of case; a variable label holds 256
  bytes.
* Stata: letters, digits and ``_``, beginning with a letter or ``_``, at most 32
  characters, none of its reserved words (``byte``, ``if``, ``in``, ``_n`` …), unique; a
  variable label holds 80 characters.

:func:`legal_names` gives every column a name its format takes: a column whose name is legal
keeps it, any other character becomes ``_``, a name that cannot begin as it does is
prefixed with ``v``, a reserved word gets a trailing ``_``, a name too long is cut, and a
name met twice gets ``_2``, ``_3`` … The writer (:mod:`microagg.data.formats`) writes the
original name as the variable's label when the column had none, so nothing the user named
is lost; where the label cannot hold it whole the write is refused in one line.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RULES", "NameRules", "legal_names"]


@dataclass(frozen=True)
class NameRules:
    """What one format takes as a variable name and label."""

    format_name: str
    extra: str  # characters allowed beside letters and digits
    first: str  # characters allowed first beside letters
    longest: int  # the longest name, in ``unit``
    unit: str  # "bytes" (UTF-8) or "characters"
    reserved: frozenset[str]
    ignore_case: bool  # whether names (and reserved words) are compared regardless of case
    label_longest: int  # the longest variable label, in ``unit``

    def size(self, text: str) -> int:
        return len(text.encode("utf-8")) if self.unit == "bytes" else len(text)

    def key(self, name: str) -> str:
        return name.casefold() if self.ignore_case else name

    def legal(self, name: str) -> bool:
        """Whether ``name`` is a legal variable name on its own."""
        return bool(name) and name == self._shaped(name) and self.key(name) not in self.reserved

    def _allowed(self, char: str) -> bool:
        return char.isalpha() or char in string.digits or char in self.extra

    def _shaped(self, name: str) -> str:
        """``name`` with its characters, its first character, its end and its length
        made legal (reserved words and duplicates apart)."""
        text = "".join(c if self._allowed(c) else "_" for c in name)
        if not text or not (text[0].isalpha() or text[0] in self.first):
            text = "v" + text
        if "." in self.extra:
            text = text.rstrip(".") or "v"
        return self.cut(text, self.longest)

    def cut(self, text: str, longest: int) -> str:
        while self.size(text) > longest:
            text = text[:-1]
        return text

    def name(self, original: str, taken: set[str]) -> str:
        """A legal name for ``original``, not among ``taken`` (keys of :meth:`key`)."""
        base = self._shaped(original)
        if self.key(base) in self.reserved:
            base = self.cut(base, self.longest - 1) + "_"
        candidate, number = base, 2
        while self.key(candidate) in taken:
            suffix = f"_{number}"
            candidate = self.cut(base, self.longest - self.size(suffix)) + suffix
            number += 1
        return candidate


_STATA_RESERVED = frozenset({
    "_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long",
    "_n", "_N", "_pi", "_pred", "_rc", "_skip", "strL", "using", "with",
    *(f"str{n}" for n in range(1, 2046))})

RULES = {
    "sav": NameRules("SPSS", extra="_.", first="", longest=64, unit="bytes",
                     reserved=frozenset({"all", "and", "by", "eq", "ge", "gt", "le", "lt",
                                         "ne", "not", "or", "to", "with"}),
                     ignore_case=True, label_longest=256),
    "dta": NameRules("Stata", extra="_", first="_", longest=32, unit="characters",
                     reserved=_STATA_RESERVED, ignore_case=False, label_longest=80),
}
"""The rules of each format that names variables ("sav", "dta")."""


def legal_names(names: Sequence[str], fmt: str) -> dict[str, str]:
    """Each of ``names`` (distinct) and the name format ``fmt`` ("sav" or "dta") writes it
    under: itself when it is legal and not taken, else a legal name (module docstring).
    Legal names are kept first, so that a renamed column never takes one.

    Examples
    --------
    >>> legal_names(["age", "education-num", "education_num", "1st", "with"], "dta")
    {'age': 'age', 'education-num': 'education_num_2', 'education_num': 'education_num', \
'1st': 'v1st', 'with': 'with_'}
    >>> legal_names(["Income", "income", "AND"], "sav")
    {'Income': 'Income', 'income': 'income_2', 'AND': 'AND_'}
    """
    rules = RULES[fmt]
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        if rules.legal(name) and rules.key(name) not in taken:
            out[name] = name
            taken.add(rules.key(name))
    for name in names:
        if name not in out:
            out[name] = rules.name(name, taken)
            taken.add(rules.key(out[name]))
    return {name: out[name] for name in names}
