"""What one browser session of the web app holds: its temporary folder and the schema the
user edits.

Everything a session receives or writes (the uploaded table and taxonomies, the release and
its reports for download) lives in one temporary folder, removed when the session ends (and
when the server stops). The uploaded file is moved there, not copied, and read once: the
session holds the table in memory once, and each step's output beside it.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import SchemaError

__all__ = ["ColumnEdit", "Workspace", "build_schema", "parse_domain"]

_OPEN: set[str] = set()


def _remove_all() -> None:
    for folder in list(_OPEN):
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_remove_all)


@dataclass
class Workspace:
    """A session's temporary folder."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="microagg-ui-")))

    def __post_init__(self) -> None:
        _OPEN.add(str(self.folder))

    def adopt(self, upload: str | Path, name: str) -> Path:
        """Move the uploaded file ``upload`` into the folder as ``name`` (its base name,
        made safe), replacing an earlier upload of that name."""
        safe = re.sub(r"[^\w.\-]+", "_", Path(name).name).lstrip(".") or "upload"
        target = self.folder / safe
        shutil.move(str(upload), target)
        return target

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        _OPEN.discard(str(self.folder))


@dataclass(frozen=True)
class ColumnEdit:
    """What the user set for one column (``None``: as read off the data)."""

    role: str | None = None
    kind: str | None = None
    domain: str = ""
    missing: str = ""
    taxonomy: str | None = None


def parse_domain(text: str, kind: Kind) -> tuple[Any, ...] | None:
    """A domain typed as ``0, 120`` (numeric) or ``low, mid, high`` (categories)."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        return None
    return tuple(items)  # Attribute checks and converts them for its kind


def build_schema(inferred: Schema, roles: dict[str, tuple[Role, str]],
                 edits: dict[str, ColumnEdit]) -> Schema:
    """The schema of the table: kinds read off the data, roles suggested by
    :func:`~microagg.data.roles.suggested_roles`, and the user's edits over both. A
    :class:`~microagg.errors.SchemaError` names the column at fault."""
    attributes = []
    for base in inferred:
        edit = edits.get(base.name, ColumnEdit())
        kind = Kind(edit.kind) if edit.kind else base.kind
        role = Role(edit.role) if edit.role else roles[base.name][0]
        domain = parse_domain(edit.domain, kind) if edit.domain else (
            base.domain if kind is base.kind else None)
        try:
            attributes.append(Attribute(
                name=base.name, role=role, kind=kind, domain=domain,
                taxonomy=Path(edit.taxonomy) if edit.taxonomy else None,
                missing=edit.missing.strip() or None, inferred=base.inferred))
        except SchemaError as exc:
            raise SchemaError(str(exc)) from None
    return Schema(tuple(attributes))
