"""Attributes and schemas: what each column of a microdata table is and what values it may take.

A :class:`Schema` is an ordered collection of :class:`Attribute`. It is stored as YAML::

    attributes:
      AGE:        {role: quasi, kind: numeric, domain: [0, 120]}
      EDUCATION:  {role: quasi, kind: ordinal, domain: [primary, secondary, tertiary]}
      OCCUPATION: {role: quasi, kind: nominal, taxonomy: occupation.csv}
      INCOME:     {role: confidential, kind: numeric, domain: [0, 1000000]}
      NAME:       {role: identifier, kind: nominal}
      HOURS:      {role: quasi, kind: numeric, domain: [0, 99], missing: 40}

``missing`` declares the value a missing cell is read as before a differentially private
release (a number inside a numeric domain, one of the declared categories, or a leaf of the
taxonomy, checked when the schema is read): a rule of the data owner's, applied record by
record, that puts missingness inside the declared domain.

``observed`` lists categories read off the data (the categories of a Parquet, SPSS or Stata
column), as ``microagg schema`` writes them: they order and name the categories for every
method, but they are not declared, so a differentially private release refuses them until the
data owner checks them against the codebook and lists them under ``domain``.

Domains are declared by the data owner. A numeric domain ``[lo, hi]`` bounds the values an
attribute can take in the population, not in this sample; differential privacy depends on that
distinction (see docs/design.md, "Differential privacy: the rules"). A categorical domain lists the
categories; for ordinal attributes the list order is the order of the categories.
"""

from __future__ import annotations

import functools
import math
import os
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from microagg.data.column_checks import refuse_numbers_read_as_text
from microagg.errors import InputError, SchemaError

__all__ = ["Attribute", "Kind", "Role", "Schema"]


class Role(StrEnum):
    """What an attribute is to a disclosure scenario."""

    IDENTIFIER = "identifier"  # names, ids: dropped from every release
    QUASI = "quasi"  # linkable to external sources: masked
    CONFIDENTIAL = "confidential"  # sensitive values (t-closeness protects their distribution)
    OTHER = "other"  # carried through unchanged
    WEIGHT = "weight"  # a sampling weight: never masked; weights centroids and risk measures
    STRATUM = "stratum"  # each stratum is protected separately; written unchanged
    HOUSEHOLD = "household"  # a household identifier: written unchanged, never masked


class Kind(StrEnum):
    """The measurement scale of an attribute."""

    NUMERIC = "numeric"
    ORDINAL = "ordinal"
    NOMINAL = "nominal"


_ALLOWED_KEYS = {"role", "kind", "domain", "observed", "taxonomy", "missing"}

LARGEST_BOUND = 1e150
"""The largest magnitude of a domain bound or a value (sums and squares overflow beyond)."""


def _parse_enum(enum: type[Enum], value: Any, attribute: str, what: str) -> Any:
    if isinstance(value, enum):
        return value
    try:
        return enum(str(value).strip().lower())
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise SchemaError(
            f"attribute '{attribute}': unknown {what} '{value}' (allowed: {allowed})"
        ) from None


@dataclass(frozen=True)
class Attribute:
    """One column of a microdata table.

    ``domain`` is ``(lo, hi)`` for numeric attributes and the tuple of categories for ordinal
    and nominal ones; ``None`` means "not declared". ``taxonomy`` is the path of a taxonomy file
    for a nominal attribute (resolved against the schema file's folder when loaded from YAML).
    ``missing`` is the value a missing cell is read as by a DP release (``None``: not declared).
    ``observed``: the categories of ``domain`` were read off the data, not declared (written
    as ``observed:`` in a schema file, refused by a DP release).
    """

    name: str
    role: Role = Role.QUASI
    kind: Kind = Kind.NUMERIC
    domain: tuple[Any, ...] | None = None
    taxonomy: Path | None = None
    missing: Any = None
    # the kind was read off the data (Schema.infer), not declared: not part of its identity
    inferred: bool = field(default=False, compare=False, repr=False)
    observed: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise SchemaError(f"attribute name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "role", _parse_enum(Role, self.role, self.name, "role"))
        object.__setattr__(self, "kind", _parse_enum(Kind, self.kind, self.name, "kind"))
        if self.domain is not None:
            object.__setattr__(self, "domain", self._checked_domain(self.domain))
        if self.taxonomy is not None:
            if self.kind is not Kind.NOMINAL:
                raise SchemaError(
                    f"attribute '{self.name}': a taxonomy is only meaningful for a nominal "
                    f"attribute, this one is {self.kind}"
                )
            object.__setattr__(self, "taxonomy", Path(self.taxonomy))
        if self.role is Role.WEIGHT and self.kind is not Kind.NUMERIC:
            raise SchemaError(f"attribute '{self.name}': a weight is numeric, this one is "
                              f"declared {self.kind}")
        if self.observed and (self.domain is None or self.kind is Kind.NUMERIC):
            raise SchemaError(f"attribute '{self.name}': `observed` lists the categories read "
                              "off the data of a categorical attribute")
        if self.missing is not None and self.role is Role.HOUSEHOLD:
            raise SchemaError(f"attribute '{self.name}': a household identifier takes no "
                              "`missing` value: every record belongs to one household")
        if self.missing is not None:
            object.__setattr__(self, "missing", self._checked_missing(self.missing))

    def _checked_missing(self, value: Any) -> Any:
        """The declared value of a missing cell: a number inside the numeric domain, or a
        category of the declared list (a taxonomy's leaves are checked when it is read)."""
        where = f"attribute '{self.name}': missing values are read as {value!r}, which"
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise SchemaError(f"{where} is not a single value")
        if self.kind is Kind.NUMERIC:
            try:
                number = float(value)
            except ValueError:
                raise SchemaError(f"{where} is not a number") from None
            bounds = self.bounds
            if not math.isfinite(number) or (
                    bounds is not None and not bounds[0] <= number <= bounds[1]):
                raise SchemaError(f"{where} lies outside its domain {list(self.domain or ())}")
            return number
        label = str(value).strip()
        if self.domain is not None and label not in self.domain:
            raise SchemaError(f"{where} is not one of its declared categories")
        if self.taxonomy is not None and label not in _leaves(self.taxonomy):
            raise SchemaError(f"{where} is not a leaf of its taxonomy {self.taxonomy.name} "
                              "(add it, e.g. a line 'Unknown;Not-stated;*')")
        return label

    def _checked_domain(self, domain: Any) -> tuple[Any, ...]:
        if isinstance(domain, (str, bytes)) or not isinstance(domain, Iterable):
            raise SchemaError(f"attribute '{self.name}': domain must be a list, got {domain!r}")
        values = tuple(domain)
        if self.kind is Kind.NUMERIC:
            if len(values) != 2:
                raise SchemaError(
                    f"attribute '{self.name}': a numeric domain is [lo, hi], got {list(values)}"
                )
            if any(isinstance(v, bool) for v in values):  # YAML's true/false are not bounds
                raise SchemaError(
                    f"attribute '{self.name}': domain bounds must be numbers, got ["
                    + ", ".join(str(v).lower() if isinstance(v, bool) else str(v)
                                for v in values) + "]")
            try:
                lo, hi = float(values[0]), float(values[1])
            except (TypeError, ValueError):
                raise SchemaError(
                    f"attribute '{self.name}': domain bounds must be numbers, got {list(values)}"
                ) from None
            if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
                raise SchemaError(
                    f"attribute '{self.name}': domain must be [lo, hi] with finite lo < hi, "
                    f"got [{values[0]}, {values[1]}]"
                )
            if max(abs(lo), abs(hi)) > LARGEST_BOUND:
                raise SchemaError(
                    f"attribute '{self.name}': domain [{lo:g}, {hi:g}] reaches beyond "
                    f"±{LARGEST_BOUND:g}, where widths and their squares overflow; rescale the "
                    "column (e.g. express it in millions)")
            return (lo, hi)
        if not values:
            raise SchemaError(f"attribute '{self.name}': the list of categories is empty")
        for value in values:
            if isinstance(value, bool):
                raise SchemaError(
                    f"attribute '{self.name}': category {value} is a boolean: YAML reads yes, "
                    "no, true, false, on and off as booleans unless they are quoted; write "
                    "'yes' and 'no' in quotes")
            if value is None or not isinstance(value, str | int | float):
                raise SchemaError(
                    f"attribute '{self.name}': category {value!r} is not a single value; list "
                    "the categories one by one ([a, b, c])")
        labels = tuple(str(v) for v in values)
        seen: set[str] = set()
        for label in labels:
            if label in seen:
                raise SchemaError(f"attribute '{self.name}': category '{label}' is listed twice")
            seen.add(label)
        return labels

    @property
    def is_numeric(self) -> bool:
        return self.kind is Kind.NUMERIC

    @property
    def is_categorical(self) -> bool:
        return self.kind is not Kind.NUMERIC

    @property
    def bounds(self) -> tuple[float, float] | None:
        """``(lo, hi)`` of a numeric attribute's declared domain, or ``None``."""
        if self.kind is not Kind.NUMERIC or self.domain is None:
            return None
        return (float(self.domain[0]), float(self.domain[1]))

    @property
    def categories(self) -> tuple[str, ...] | None:
        """Declared categories of an ordinal or nominal attribute, or ``None``."""
        if self.kind is Kind.NUMERIC or self.domain is None:
            return None
        return tuple(self.domain)

    def to_dict(self, base_dir: Path | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role.value, "kind": self.kind.value}
        if self.domain is not None:
            out["observed" if self.observed else "domain"] = [_plain_number(v)
                                                              for v in self.domain]
        if self.taxonomy is not None:
            path = self.taxonomy.resolve()
            if base_dir is not None:  # relative to the schema file, so both can move together
                path = Path(os.path.relpath(path, base_dir.resolve()))
            out["taxonomy"] = str(path)
        if self.missing is not None:
            out["missing"] = _plain_number(self.missing)
        return out

    @classmethod
    def from_dict(cls, name: str, spec: Mapping[str, Any] | None,
                  base_dir: Path | None = None) -> Attribute:
        spec = {} if spec is None else spec
        if not isinstance(spec, Mapping):
            raise SchemaError(
                f"attribute '{name}': expected a mapping of role/kind/domain/taxonomy, got {spec!r}"
            )
        unknown = sorted(set(spec) - _ALLOWED_KEYS)
        if unknown:
            raise SchemaError(
                f"attribute '{name}': unknown key '{unknown[0]}' "
                f"(allowed: {', '.join(sorted(_ALLOWED_KEYS))})"
            )
        if "domain" in spec and "observed" in spec:
            raise SchemaError(f"attribute '{name}': give its categories under `domain` "
                              "(declared) or `observed` (read off the data), not both")
        taxonomy = spec.get("taxonomy")
        if taxonomy is not None:
            taxonomy = Path(str(taxonomy))
            if base_dir is not None and not taxonomy.is_absolute():
                taxonomy = base_dir / taxonomy
        return cls(
            name=str(name),
            role=spec.get("role", Role.QUASI),
            kind=spec.get("kind", Kind.NUMERIC),
            domain=spec["observed"] if "observed" in spec else spec.get("domain"),
            taxonomy=taxonomy,
            missing=spec.get("missing"),
            observed="observed" in spec,
        )


@dataclass(frozen=True)
class Schema:
    """An ordered set of attributes with unique names."""

    attributes: tuple[Attribute, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        attributes = tuple(self.attributes)
        seen: set[str] = set()
        for attribute in attributes:
            if not isinstance(attribute, Attribute):
                raise SchemaError(f"a schema holds Attribute objects, got {attribute!r}")
            if attribute.name in seen:
                raise SchemaError(f"attribute '{attribute.name}' is declared twice")
            seen.add(attribute.name)
        object.__setattr__(self, "attributes", attributes)

    # -- collection protocol -------------------------------------------------------------
    def __iter__(self) -> Iterator[Attribute]:
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def __contains__(self, name: object) -> bool:
        return any(a.name == name for a in self.attributes)

    def __getitem__(self, name: str) -> Attribute:
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute
        raise SchemaError(f"unknown attribute '{name}' (the schema has: {', '.join(self.names)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    def names_with_role(self, role: Role | str) -> tuple[str, ...]:
        role = _parse_enum(Role, role, "?", "role")
        return tuple(a.name for a in self.attributes if a.role is role)

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.names_with_role(Role.QUASI)

    def select(self, names: Sequence[str]) -> Schema:
        """The sub-schema of ``names``, in the order given."""
        return Schema(tuple(self[name] for name in names))

    def with_roles(self, roles: Mapping[str, Role | str]) -> Schema:
        """A copy where the attributes named in ``roles`` get the given role."""
        for name in roles:
            self[name]  # raises on an unknown name
        return Schema(
            tuple(
                replace(a, role=_parse_enum(Role, roles[a.name], a.name, "role"))
                if a.name in roles
                else a
                for a in self.attributes
            )
        )

    # -- construction --------------------------------------------------------------------
    @classmethod
    def infer(
        cls,
        frame: pd.DataFrame,
        roles: Mapping[str, Role | str] | None = None,
        default_role: Role | str = Role.OTHER,
        strict: bool = True,
    ) -> Schema:
        """Build a schema from a DataFrame's columns.

        Numeric columns (integer, float) become numeric attributes, every other column a
        nominal one. Domains are *not* inferred: a domain read off the sample is not a declared
        domain, and the tools that need one (range scaling, DP) say so when it is missing. A
        pandas ``Categorical`` column (a Parquet dictionary column, an SPSS or Stata file's
        value labels, :mod:`microagg.data.formats`) becomes an ordinal attribute (ordered
        categories) or a nominal one whose categories are *observed* (``observed``): they name
        and order the categories, but they may have been read off the data, so a DP release
        refuses them until a schema declares them. Columns named in ``roles`` get that role,
        the others ``default_role``. A column that is mostly numbers but holds some text
        (numbers written in another dialect) is refused, unless not ``strict``: it is then a
        nominal attribute, as a column that no release reads needs to be (its values must
        not decide whether a release is made).

        Examples
        --------
        >>> import pandas as pd
        >>> frame = pd.DataFrame({"age": [30, 41], "edu": pd.Categorical(
        ...     ["low", "high"], categories=["low", "mid", "high"], ordered=True)})
        >>> [(a.name, a.kind.value, a.domain, a.observed) for a in Schema.infer(frame)]
        [('age', 'numeric', None, False), ('edu', 'ordinal', ('low', 'mid', 'high'), True)]
        """
        roles = dict(roles or {})
        _check_column_names(frame)
        missing = [name for name in roles if name not in frame.columns]
        if missing:
            raise SchemaError(
                f"unknown column '{missing[0]}' "
                f"(the data has: {', '.join(map(str, frame.columns))})"
            )
        attributes = []
        for name in frame.columns:
            series = frame[name]
            role = Role(roles.get(name, default_role))
            if isinstance(series.dtype, pd.CategoricalDtype):
                try:
                    attributes.append(_categorical_attribute(str(name), series.dtype, role))
                except (InputError, SchemaError):
                    if strict:  # no category, or two that are one once stripped
                        raise
                    attributes.append(Attribute(str(name), role, Kind.NOMINAL, inferred=True))
                continue
            numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(
                series
            )
            if strict and not numeric and not pd.api.types.is_bool_dtype(series):
                refuse_numbers_read_as_text(str(name), series)
            attributes.append(
                Attribute(
                    name=str(name),
                    role=role,
                    kind=Kind.NUMERIC if numeric else Kind.NOMINAL,
                    inferred=True,
                )
            )
        return cls(tuple(attributes))

    def complete(self, frame: pd.DataFrame, role: Role | str = Role.OTHER,
                 strict: bool = True) -> Schema:
        """This schema plus inferred attributes (with ``role``) for the frame's undeclared columns
        (read as :meth:`infer` reads them, ``strict`` or not).

        The result follows the frame's column order. Raises if the schema declares a column the
        frame lacks.
        """
        _check_column_names(frame)
        absent = [name for name in self.names if name not in frame.columns]
        if absent:
            raise SchemaError(
                f"column '{absent[0]}' is declared in the schema but is not in the data "
                f"(the data has: {', '.join(map(str, frame.columns))})"
            )
        extra = [str(c) for c in frame.columns if c not in self]
        inferred = (Schema.infer(frame[extra], default_role=role, strict=strict) if extra
                    else Schema())
        by_name = {a.name: a for a in (*self.attributes, *inferred.attributes)}
        return Schema(tuple(by_name[str(c)] for c in frame.columns))

    # -- YAML ----------------------------------------------------------------------------
    def to_dict(self, base_dir: Path | None = None) -> dict[str, Any]:
        return {"attributes": {a.name: a.to_dict(base_dir) for a in self.attributes}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: Path | None = None) -> Schema:
        if not isinstance(data, Mapping) or "attributes" not in data:
            raise SchemaError("a schema is a mapping with one key 'attributes'")
        extra = sorted(set(data) - {"attributes"})
        if extra:
            raise SchemaError(f"unknown top-level key '{extra[0]}' in schema (allowed: attributes)")
        attributes = data["attributes"]
        if not isinstance(attributes, Mapping) or not attributes:
            raise SchemaError("'attributes' must map each column name to its description")
        schema = cls(tuple(Attribute.from_dict(unicodedata.normalize("NFC", str(n).strip()), s,
                                               base_dir) for n, s in attributes.items()))
        households = schema.names_with_role(Role.HOUSEHOLD)
        if len(households) > 1:
            raise SchemaError(f"attributes '{households[0]}' and '{households[1]}' both have "
                              "the role household: a record belongs to one household, named "
                              "by one column")
        return schema

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        """Read a schema from a YAML file; taxonomy paths are relative to the file's folder."""
        from microagg.data.yamlfile import load_yaml

        path = Path(path)
        data = load_yaml(path, "schema file")
        try:
            return cls.from_dict(data, base_dir=path.parent)
        except SchemaError as exc:
            raise SchemaError(f"schema file {path}: {exc}") from None

    def dumps(self, base_dir: Path | None = None) -> str:
        """The schema as YAML text (taxonomy paths relative to ``base_dir``)."""
        import yaml

        return yaml.safe_dump(
            self.to_dict(base_dir), sort_keys=False, allow_unicode=True, default_flow_style=None
        )

    def save(self, path: str | Path) -> None:
        """Write the schema as YAML (atomically)."""
        from microagg.data.atomic import write_text

        path = Path(path)
        write_text(path, self.dumps(base_dir=path.parent))


def _categorical_attribute(name: str, dtype: pd.CategoricalDtype, role: Role) -> Attribute:
    """The attribute of a Categorical column: its categories (as text, in their order) are its
    declared domain; ordered categories make it ordinal."""
    categories = [category_text(c) for c in dtype.categories]
    if not categories:
        raise InputError(f"column '{name}' is a categorical column with no category")
    return Attribute(name=name, role=role, kind=Kind.ORDINAL if dtype.ordered else Kind.NOMINAL,
                     domain=tuple(categories), inferred=True, observed=True)


def taxonomy_leaves(path: Path) -> tuple[str, ...]:
    """The leaves of the taxonomy file ``path`` (read once per version of the file)."""
    return _leaves(path)


def _leaves(path: Path) -> tuple[str, ...]:
    """The leaves of the taxonomy file ``path`` (read once per version of the file)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise SchemaError(f"cannot read the taxonomy file {path}: {exc.strerror or exc}"
                          ) from None
    return _leaves_of(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _leaves_of(path: str, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    from microagg.data.taxonomy import Taxonomy

    return tuple(Taxonomy.load(path).leaves)


def category_text(value: Any) -> str:
    """A category as text: an integral float without its '.0' (as a column's labels read)."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value).strip()


def _plain_number(value: Any) -> Any:
    """Integral floats as ints, so a YAML domain reads [0, 120] rather than [0.0, 120.0]."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _check_column_names(frame: pd.DataFrame) -> None:
    names = [str(c) for c in frame.columns]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"column name '{name}' appears more than once")
        seen.add(name)
