"""Who may see each figure a release writes or prints: one declaration for every path.

Every document a path writes beside a release (the privacy report ``OUT.privacy.json``, the
release report ``OUT.report.json``, a recipe's report and the recipe as run
``OUT.recipe.yaml``) is declared here, key by key, with the :class:`Audience` that may see
it:

``public``
    a function of the released table and of what the data owner declared (the schema's
    roles, kinds, domains, missing values and taxonomies; the method, its parameters and the
    steps of a recipe), the version of microagg and the date. Only these go beside a
    differentially private release.
``external``
    an aggregate of the raw data (or of a table that is not released) that the owner may
    share beside a k-anonymous or masked release: the overall information loss, the number
    of clusters, the guarantee of a step whose table is not the release. The external HTML
    report holds the public and external figures; a DP release holds none of them.
``owner``
    the data owner's alone: everything else computed from the raw data, such as the input's
    size and SHA-256 (a hash confirms a guess of the whole input), the risk before, record-level
    risk and utility, cluster sizes, values, counts of clamped or filled values, categories
    observed in the data (never declared), seeds (a known seed removes the noise) and times.

:func:`view` keeps the parts of a document an audience may see and refuses a key that is not
declared, so a new figure cannot reach a release without being declared here first. A DP path
writes and prints the ``public`` view (:func:`public`); the owner's figures appear only where
the owner asks for them (``--owner-report``, ``--owner-notices``), in files named as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeAlias

__all__ = [
    "PRIVACY_FORMAT",
    "RECIPE_FORMAT",
    "RECIPE_REPORT_FORMAT",
    "RELEASE_RECORD",
    "REPORT_FORMAT",
    "STEP_RECORD",
    "Audience",
    "ByFormat",
    "Each",
    "UndeclaredField",
    "allows",
    "declaration",
    "public",
    "view",
]

REPORT_FORMAT = "microagg-report/1"
PRIVACY_FORMAT = "microagg-privacy/1"
RECIPE_REPORT_FORMAT = "microagg-recipe-report/1"
RECIPE_FORMAT = "microagg-recipe/1"


class Audience(IntEnum):
    """Who may see a figure (module docstring); a larger value is a narrower audience."""

    PUBLIC = 0
    EXTERNAL = 1
    OWNER = 2


class UndeclaredField(KeyError):
    """A document holds a key that no declaration covers (a bug: declare it here)."""

    def __str__(self) -> str:
        return (f"'{self.args[0]}' is not declared in microagg.release.reports.disclosure: every "
                "figure a release writes must be declared public, external or owner-only")


@dataclass(frozen=True)
class Each:
    """Every value of a mapping keyed by data-independent names (columns, measures) or every
    element of a list, under one declaration."""

    declared: Node


@dataclass(frozen=True)
class ByFormat:
    """A nested document, declared by its own ``format`` key."""

    formats: Mapping[str, Node]


Node: TypeAlias = "Audience | Mapping[str, Node] | Each | ByFormat"

PUBLIC, EXTERNAL, OWNER = Audience.PUBLIC, Audience.EXTERNAL, Audience.OWNER

_INPUT = {"name": PUBLIC, "path": PUBLIC, "withheld": PUBLIC, "bytes": OWNER, "sha256": OWNER}

_PRIVACY_REPORT: dict[str, Node] = {
    key: PUBLIC for key in (
        "method", "differentially_private", "guarantee_scope", "guarantee", "epsilon",
        "epsilon_split", "k", "groups", "records", "columns", "carried", "dropped_columns",
        "linkage", "calibration", "reference", "sensitivities", "domains", "noise",
        "weaker_than_plain_dp", "warnings", "row_order", "moments", "unit", "unit_epsilon",
        "record_epsilon",
        "threat_model", "neighbouring", "clamping", "sampling")}
"""A DP release's :class:`~microagg.release.reports.report.PrivacyReport`: public by construction
(declared domains, ε and its split, noise levels computed from declared quantities)."""

_PRIVACY_RECORD: dict[str, Node] = {
    **_PRIVACY_REPORT, "format": PUBLIC, "parameters": PUBLIC, "input": _INPUT,
    "microagg_version": PUBLIC, "created": PUBLIC, "rows_aligned": PUBLIC,
    "risk_and_utility": PUBLIC, "post_processing": PUBLIC,
}
# a recipe's privacy report: the table's guarantee, then each DP step's own record
_PRIVACY_RECORD["steps"] = Each({"step": PUBLIC, "method": PUBLIC, "context": PUBLIC,
                                 "spends": PUBLIC,
                                 "record": ByFormat({PRIVACY_FORMAT: _PRIVACY_RECORD})})

_SWAPPING: dict[str, Node] = {
    # targeted record swapping (SwapReport): its parameters are public; how many households
    # and persons were swapped, and the counts per area it changed, are aggregates of the
    # raw data, shareable; the risk before and after, the households at risk without a
    # donor and their identifiers are the owner's
    "household": PUBLIC, "hierarchy": PUBLIC, "risk_rule": PUBLIC, "similar": PUBLIC,
    "carry_along": PUBLIC, "households": EXTERNAL, "swaps_due": EXTERNAL,
    "households_swapped": EXTERNAL, "persons_swapped": EXTERNAL, "realised_rate": EXTERNAL,
    "levels": Each({"level": PUBLIC, "household_counts_kept": PUBLIC, "areas": EXTERNAL,
                    "swapped_at_risk": EXTERNAL, "swapped_at_random": EXTERNAL,
                    "donors": EXTERNAL, "persons_swapped": EXTERNAL,
                    "areas_persons_changed": EXTERNAL, "persons_moved": EXTERNAL,
                    "*": OWNER}),
    "without_donor": OWNER, "without_donor_ids": OWNER,
}


def _release_record(table: Audience) -> dict[str, Node]:
    """A release's report (:class:`~microagg.release.reports.sidecar.ReleaseRecord`); ``table`` is
    the audience of what describes its written table (public for the release itself,
    external for a step whose table a recipe does not release)."""
    return {
        "format": PUBLIC, "method": PUBLIC, "family": PUBLIC, "parameters": PUBLIC,
        "input": _INPUT, "microagg_version": PUBLIC, "created": PUBLIC, "records": table,
        "rows_aligned": PUBLIC,
        "columns": table,  # the keys family names the columns it changed
        "guarantee": {"statement": table, "holds": table, "columns": table,
                      "semantics": PUBLIC},
        # the risk before is the raw data's; after: unique records and the smallest class
        # single out small groups, record linkage and rank risk read the original
        "risk": {"before": OWNER, "after": {
            "records": table, "unique_percent": OWNER, "smallest_class": OWNER,
            "classes": OWNER, "record_linkage_percent": OWNER, "rank_risk": OWNER}},
        "utility": {"sse_percent": EXTERNAL, "*": OWNER},
        "measures": PUBLIC,
        "skipped": OWNER,  # the reasons name how many values were missing in the input
        # the method's own report: the number of clusters is shareable, the rest (sizes,
        # generalized categories, clamped counts, notes on the data) is the owner's
        "report": {"clusters": {"count": EXTERNAL, "*": OWNER}, **_SWAPPING, "*": OWNER},
    }


RELEASE_RECORD = _release_record(PUBLIC)
"""The report of a release (``OUT.report.json``)."""
STEP_RECORD = _release_record(EXTERNAL)
"""The report of a recipe step that is not differentially private: its table is not the
release (a later step changed it), so what describes that table is not public."""

_ATTRIBUTE = {"role": PUBLIC, "kind": PUBLIC, "domain": PUBLIC, "missing": PUBLIC,
              "taxonomy": PUBLIC,
              "observed": OWNER}  # categories read off the data, never declared
_RECIPE: dict[str, Node] = {
    "format": PUBLIC, "input": _INPUT, "read": PUBLIC,
    "seed": OWNER,  # whoever knows the seed can regenerate the noise
    "missing": PUBLIC, "schema": {"attributes": Each(_ATTRIBUTE)}, "steps": PUBLIC,
    "attacks": OWNER,  # the attacks read the input and held-out records: the owner's to run
}

_RECIPE_REPORT: dict[str, Node] = {
    "format": PUBLIC, "recipe": _RECIPE, "input": _INPUT, "microagg_version": PUBLIC,
    "created": PUBLIC, "records": PUBLIC, "rows_aligned": PUBLIC, "guarantee": PUBLIC,
    "privacy": _PRIVACY_RECORD,
    "risk_before": OWNER,
    "steps": Each({
        "step": PUBLIC, "family": PUBLIC, "method": PUBLIC, "parameters": PUBLIC,
        "options": PUBLIC, "protects": PUBLIC, "dp_context": PUBLIC,
        "records": EXTERNAL,  # rows of a table the recipe may not release
        "seconds": OWNER, "risk_after": OWNER, "risk_change": OWNER,
        "warnings": OWNER,  # what a step said about the data it read
        "record": ByFormat({PRIVACY_FORMAT: _PRIVACY_RECORD,
                            REPORT_FORMAT: STEP_RECORD}),
    }),
    # singling out, linkability and inference measured on the input and the control records
    "attacks": OWNER,
}

DECLARATIONS: dict[str, Node] = {
    PRIVACY_FORMAT: _PRIVACY_RECORD,
    REPORT_FORMAT: RELEASE_RECORD,
    RECIPE_REPORT_FORMAT: _RECIPE_REPORT,
    RECIPE_FORMAT: _RECIPE,
}
"""Every document a release writes, by its ``format``: the only table of who may see what."""


def declaration(fmt: str) -> Node:
    """The declaration of the documents of format ``fmt``."""
    try:
        return DECLARATIONS[fmt]
    except KeyError:
        raise UndeclaredField(f"format {fmt}") from None


def _children(node: Node) -> list[Node]:
    if isinstance(node, Each):
        return [node.declared]
    if isinstance(node, ByFormat):
        return list(node.formats.values())
    return list(node.values()) if isinstance(node, Mapping) else []


def _levels(node: Node, seen: frozenset[int] = frozenset()) -> set[Audience]:
    """Every audience declared under ``node`` (a declaration may nest itself: a recipe's
    privacy report holds each step's)."""
    if isinstance(node, Audience):
        return {node}
    if id(node) in seen:
        return set()
    seen = seen | {id(node)}
    return set().union(*(_levels(child, seen) for child in _children(node)))


def _widest(node: Node) -> Audience:
    """The narrowest audience that may see every figure under ``node``."""
    return max(_levels(node), default=PUBLIC)


def _narrowest(node: Node) -> Audience:
    """The widest audience that may see some figure under ``node``."""
    return min(_levels(node), default=PUBLIC)


def allows(node: Node, *keys: str, audience: Audience) -> bool:
    """Whether ``audience`` may see every figure under ``keys`` of the declaration ``node``
    (e.g. ``allows(RELEASE_RECORD, "risk", audience=Audience.EXTERNAL)``): how a report
    decides which of its sections a page for that audience shows."""
    for key in keys:
        if isinstance(node, Each):
            node = node.declared
        if not isinstance(node, Mapping):
            break
        node = node.get(key, node.get("*", OWNER))
    return _widest(node) <= audience


_OMIT = object()


def _view(value: Any, node: Node, audience: Audience, where: str) -> Any:
    if isinstance(node, Audience):
        return value if node <= audience else _OMIT
    if _narrowest(node) > audience:  # nothing of it may be seen, not even whether it is there
        return _OMIT
    if value is None:
        return None
    if isinstance(node, ByFormat):
        fmt = str(value.get("format")) if isinstance(value, Mapping) else ""
        if fmt not in node.formats:
            raise UndeclaredField(f"{where} (format {fmt})")
        return _view(value, node.formats[fmt], audience, where)
    if isinstance(node, Each):
        if isinstance(value, Mapping):
            items = {k: _view(v, node.declared, audience, f"{where}.{k}")
                     for k, v in value.items()}
            return {k: v for k, v in items.items() if v is not _OMIT}
        if isinstance(value, list | tuple):
            kept = [_view(v, node.declared, audience, f"{where}[]") for v in value]
            return [v for v in kept if v is not _OMIT]
        raise UndeclaredField(f"{where} (a {type(value).__name__}, declared a collection)")
    if not isinstance(value, Mapping):
        raise UndeclaredField(f"{where} (a {type(value).__name__}, declared a mapping)")
    out = {}
    for key, item in value.items():
        declared = node.get(key, node.get("*"))
        if declared is None:
            raise UndeclaredField(f"{where}.{key}".lstrip("."))
        kept = _view(item, declared, audience, f"{where}.{key}")
        if kept is not _OMIT:
            out[key] = kept
    return out


def view(document: Mapping[str, Any], audience: Audience | str,
         fmt: str | None = None) -> dict[str, Any]:
    """The parts of ``document`` (a JSON-like mapping of format ``fmt``, default its own
    ``format`` key) that ``audience`` may see; an :class:`UndeclaredField` for a key no
    declaration covers.

    Examples
    --------
    >>> record = {"format": "microagg-report/1", "method": "mdav", "records": 300,
    ...           "input": {"name": "d.csv", "bytes": 9120, "sha256": "5c1f"}}
    >>> view(record, "public")
    {'format': 'microagg-report/1', 'method': 'mdav', 'records': 300, 'input': {'name': 'd.csv'}}
    >>> view({"format": "microagg-report/1", "secret": 1}, "owner")
    Traceback (most recent call last):
    ...
    microagg.release.reports.disclosure.UndeclaredField: 'secret' is not declared ...
    """
    level = audience if isinstance(audience, Audience) else Audience[str(audience).upper()]
    node = declaration(fmt or str(document.get("format")))
    out = _view(document, node, level, "")
    return out if isinstance(out, dict) else {}


def public(document: Mapping[str, Any], fmt: str | None = None) -> dict[str, Any]:
    """The public view of ``document`` (:func:`view`): what may go beside a DP release."""
    return view(document, Audience.PUBLIC, fmt)
