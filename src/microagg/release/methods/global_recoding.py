"""Global recoding of key variables: to a level of their taxonomy, or numbers to intervals
(sdcMicro ``globalRecode``, ``groupAndRename``; ARX's generalization hierarchies)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from microagg.core.recoding import interval_labels, to_intervals, to_level
from microagg.data.schema import Attribute, Kind, Schema
from microagg.data.table import category_labels, missing_mask
from microagg.data.taxonomy import Taxonomy, level_file
from microagg.errors import InputError, ParameterError, SchemaError
from microagg.options import Closed
from microagg.release.families.keys import KeyData, KeyMethod, KeyStep
from microagg.release.inputs import require_known
from microagg.release.methods.base import release_method
from microagg.release.params import Choice, Predicate, param
from microagg.release.reports.key_reports import Recoded, RecodingReport

__all__ = ["GlobalRecoding"]


def _pairs(name: str, value: Any) -> list[tuple[str, str]]:
    """``col=spec,col=spec`` text, or a mapping, as (column, spec) pairs."""
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, str):
        pairs = []
        for part in (p.strip() for p in value.split(",") if p.strip()):
            column, equals, spec = part.rpartition("=")
            if not equals or not column.strip():
                raise ParameterError(name, f"must be COLUMN=VALUE pairs separated by commas, "
                                     f"got {part!r}")
            pairs.append((column.strip(), spec.strip()))
        return pairs
    if isinstance(value, tuple | list):
        return [(str(c), s) for c, s in value]
    raise ParameterError(name, f"must map columns to values, got {value!r}")


def _levels(name: str, value: Any) -> tuple[tuple[str, int], ...]:
    out = []
    for column, level in _pairs(name, value):
        try:
            number = float(level)
        except (TypeError, ValueError):
            number = math.nan
        if not (number.is_integer() and number >= 1):
            raise ParameterError(name, f"'{column}': the level is a whole number of at least "
                                 f"1 (steps up the taxonomy), got {level!r}")
        out.append((column, int(number)))
    return _unique(name, out)


def _breaks(name: str, value: Any) -> tuple[tuple[str, tuple[float, ...]], ...]:
    out = []
    for column, spec in _pairs(name, value):
        parts = spec.split(":") if isinstance(spec, str) else list(spec)
        try:
            edges = tuple(float(p) for p in parts)
        except (TypeError, ValueError):
            raise ParameterError(name, f"'{column}': breaks are numbers separated by ':' "
                                 f"(e.g. 0:18:65:120), got {spec!r}") from None
        if len(edges) < 2 or any(math.isnan(e) for e in edges) or any(
                b <= a for a, b in itertools.pairwise(edges)):
            raise ParameterError(name, f"'{column}': breaks are at least two increasing "
                                 f"numbers, got {spec!r}")
        out.append((column, edges))
    return _unique(name, out)


def _unique(name: str, pairs: list[Any]) -> tuple[Any, ...]:
    columns = [c for c, _ in pairs]
    twice = [c for c in columns if columns.count(c) > 1]
    if twice:
        raise ParameterError(name, f"names column '{twice[0]}' twice")
    return tuple(pairs)


@release_method
class GlobalRecoding(KeyMethod):
    """Global recoding: each named categorical column is replaced by the level ``levels``
    of its taxonomy (an ARX hierarchy or a YAML tree, declared in the schema), each named
    numeric column by the interval of ``breaks`` that holds it: closed on the left by
    default ("[18, 65)"; the last interval closed on both ends), or with ``closed="right"``
    on the right ("(18, 65]"; the first closed on both ends), as sdcMicro's ``globalRecode``
    cuts (:mod:`microagg.core.recoding`). Every record is recoded the same way, so the
    written categories are coarser but exact; missing values stay missing. The report gives
    the sample frequencies of the keys (the recoded columns, and the schema's
    quasi-identifiers) before and after.

    The default stays ``left``, what every release and recipe made before ``closed``
    existed used (a recipe reproduces its release from the parameters it states), and what
    age bands such as 18-64 mean; ``right`` gives sdcMicro's classes for the same breaks.

    References
    ----------
    Hundepool, A. et al. (2012), *Statistical Disclosure Control*, Wiley, §3.4.3 (global
    recoding); sdcMicro's ``globalRecode`` and ``groupAndRename``; Prasser, F. et al. (2014),
    ARX - a comprehensive tool for anonymizing biomedical data (generalization hierarchies).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [17, 34, 35, 70], "sex": ["f", "m", "m", "f"]})
    >>> release = GlobalRecoding(breaks={"age": [0, 18, 65, 120]}).release(frame)
    >>> release.frame["age"].tolist()
    ['[0, 18)', '[18, 65)', '[18, 65)', '[65, 120]']
    >>> release.report.recoded["age"].categories_after
    3
    >>> GlobalRecoding(breaks={"age": [0, 18, 65, 120]}, closed="right").release(
    ...     frame).frame["age"].tolist()
    ['[0, 18]', '(18, 65]', '(18, 65]', '(65, 120]']
    """

    name: ClassVar[str] = "global-recoding"
    summary: ClassVar[str] = "global recoding: taxonomy levels or intervals"
    command: ClassVar[str] = "recode"
    report_type: ClassVar[type[RecodingReport]] = RecodingReport
    reads_weights: ClassVar[bool] = False  # every record is recoded the same way
    records_alone: ClassVar[bool] = True

    levels: tuple[tuple[str, int], ...] = param(
        Predicate(_levels, "COLUMN=LEVEL pairs"), default=(),
        help="Categorical columns and the level of their taxonomy to recode to, e.g. "
             "native-country=1 (the taxonomy is declared in the schema).")
    breaks: tuple[tuple[str, tuple[float, ...]], ...] = param(
        Predicate(_breaks, "COLUMN=B0:B1:... pairs"), default=(),
        help="Numeric columns and the breaks of their intervals, e.g. age=0:18:30:65:120 "
             "(-inf and inf allowed).")
    closed: Closed = param(
        Choice(Closed), default=Closed.LEFT,
        help="Which end of each interval of `breaks` is closed: left, [a, b) with the last "
             "interval [a, b] (default) | right, (a, b] with the first interval [a, b], as "
             "sdcMicro's globalRecode.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.levels and not self.breaks:
            raise ParameterError("levels", "or `breaks` is needed: the columns to recode")
        both = {c for c, _ in self.levels} & {c for c, _ in self.breaks}
        if both:
            raise ParameterError("breaks", f"and `levels` both name '{sorted(both)[0]}'")

    def parameters(self) -> dict[str, Any]:
        return {"levels": dict(self.levels),
                "breaks": {c: list(b) for c, b in self.breaks}, "closed": self.closed}

    def reads_other_records(self) -> str | None:
        """``None``: each record is recoded on its own by the declared breaks and taxonomy,
        unless a break at a finite end leaves values that are refused, so that whether the
        step runs follows one record's value."""
        bounded = [c for c, edges in self.breaks
                   if math.isfinite(edges[0]) or math.isfinite(edges[-1])]
        if bounded:
            return (f"the breaks of '{bounded[0]}' end at a finite value and a value beyond "
                    "them is refused, so whether it runs follows one record; make the "
                    "outer breaks -inf and inf")
        return None

    def at_scale_refusal(self) -> str | None:
        """``None``: each record is recoded on its own (``records_alone``), so the Dask
        engine recodes every partition as one machine recodes the whole table."""
        return None

    def named_columns(self) -> tuple[str, ...]:
        return tuple(self.recoded_columns())

    def output_schema(self, schema: Schema) -> Schema:
        """The schema of the recoded table: a column cut by ``breaks`` is ordinal, its
        categories the intervals' labels; a column recoded to a level of its taxonomy is
        nominal, its categories the taxonomy's concepts at that level (every one, whatever
        the data hold), its taxonomy the declared one above that level (a coarser level can
        follow); a declared missing value is recoded with the column. The categories
        are declared by the parameters and the taxonomy, so a DP step may read them."""
        changed: dict[str, Attribute | None] = {
            name: _interval_attribute(schema[name], edges, self.closed)
            for name, edges in self.breaks if name in schema and schema[name].is_numeric}
        changed |= {name: _level_attribute(schema[name], level) for name, level in self.levels
                    if name in schema and schema[name].taxonomy is not None}
        return Schema(tuple(changed.get(a.name) or a for a in schema))

    def recoded_columns(self) -> list[str]:
        return [c for c, _ in self.levels] + [c for c, _ in self.breaks]

    def default_keys(self, schema: Schema, declared: bool) -> list[str]:
        require_known(schema, self.recoded_columns(), "`levels`/`breaks`")
        quasi = list(schema.quasi_identifiers) if declared else []
        return list(dict.fromkeys([*self.recoded_columns(), *quasi]))

    def protect(self, data: KeyData, rng: np.random.Generator) -> KeyStep:
        require_known(data.schema, self.recoded_columns(), "`levels`/`breaks`")
        columns: dict[str, pd.Series] = {}
        recoded: dict[str, Recoded] = {}
        for name, level in self.levels:
            columns[name], recoded[name] = _to_level(data, name, level)
        for name, edges in self.breaks:
            columns[name], recoded[name] = _to_intervals(data, name, edges, self.closed)
        notes = []
        if data.design.strata is not None:
            notes.append("global recoding recodes every stratum the same way")
        return KeyStep(columns, {"recoded": recoded}, notes)


def _interval_attribute(attribute: Attribute, edges: tuple[float, ...], closed: Closed
                        ) -> Attribute:
    """``attribute`` cut at ``edges``: ordinal, the intervals' labels its categories."""
    labels = interval_labels(edges, closed)
    missing = None
    if attribute.missing is not None:
        number = np.array([float(attribute.missing)])
        inside = edges[0] <= number[0] <= edges[-1]
        missing = labels[int(to_intervals(number, edges, closed=closed)[0])] if inside else None
    return replace(attribute, kind=Kind.ORDINAL, domain=tuple(labels), taxonomy=None,
                   missing=missing, observed=False, inferred=False)


def _level_attribute(attribute: Attribute, level: int) -> Attribute | None:
    """``attribute`` recoded to ``level`` of its taxonomy: nominal, the concepts at that
    level its categories and the taxonomy above them its taxonomy (:func:`level_file`), so
    that a coarser level can follow (``None`` when the taxonomy cannot be read: the step
    says why)."""
    try:
        taxonomy = Taxonomy.load(attribute.taxonomy)  # type: ignore[arg-type]
        above = level_file(attribute.taxonomy, level)  # type: ignore[arg-type]
    except SchemaError:
        return None
    declared = attribute.missing if attribute.missing in taxonomy.leaves else None
    codes, concepts = to_level([*taxonomy.leaves, declared], taxonomy, level,
                               name=attribute.name)
    missing = concepts[int(codes[-1])] if declared is not None else None
    return replace(attribute, kind=Kind.NOMINAL, domain=tuple(concepts), taxonomy=above,
                   missing=missing, observed=False, inferred=False)


def _to_level(data: KeyData, name: str, level: int) -> tuple[pd.Series, Recoded]:
    attribute = data.schema[name]
    if attribute.taxonomy is None:
        raise InputError(f"column '{name}' has no taxonomy: declare one in the schema "
                         "(taxonomy: PATH, an ARX hierarchy leaf;level1;...;root or a YAML "
                         "tree) to recode it to a level")
    taxonomy = Taxonomy.load(attribute.taxonomy)
    height = int(taxonomy.depth().max()) - 1
    if level > height:
        raise InputError(f"`levels`: level {level} of '{name}' is above the root of its "
                         f"taxonomy ({height} level(s) above the categories)")
    series = data.frame[name]
    missing = missing_mask(series)
    labels = category_labels(series).to_numpy(dtype=object)
    labels[missing] = None
    codes, concepts = to_level(list(labels), taxonomy, level, name=name)
    values = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(concepts)),
                       index=series.index, name=name)
    before = len(set(labels[~missing]))
    return values, Recoded(to=f"level {level} of its taxonomy", categories_before=before,
                           categories_after=len(concepts), level=level,
                           taxonomy=attribute.taxonomy.name, labels=concepts)


def _to_intervals(data: KeyData, name: str, edges: tuple[float, ...], closed: Closed
                  ) -> tuple[pd.Series, Recoded]:
    if not data.schema[name].is_numeric:
        raise InputError(f"`breaks`: column '{name}' is {data.schema[name].kind}; breaks cut "
                         "numeric columns (a categorical one is recoded to a level of its "
                         "taxonomy with `levels`)")
    series = data.frame[name]
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, copy=True)
    values[missing_mask(series)] = np.nan
    codes = to_intervals(values, edges, name=name, closed=closed)
    labels = interval_labels(edges, closed)
    written = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(labels),
                                                  ordered=True),
                        index=series.index, name=name)
    present = ~np.isnan(values)
    return written, Recoded(to=f"intervals closed on the {closed.value}",
                            categories_before=int(np.unique(values[present]).size),
                            categories_after=int(np.unique(codes[present]).size),
                            breaks=list(edges), labels=labels)
