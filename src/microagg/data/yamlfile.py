"""Reading the YAML files a user writes (schemas, taxonomies), with one set of rules: UTF-8
text, YAML's safe subset, no key twice in one mapping (plain YAML keeps the last one, so a
column declared twice would silently lose its first declaration), and no aliases (a schema or
a taxonomy needs none, and nested aliases can expand to billions of nodes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from microagg.errors import SchemaError

__all__ = ["load_yaml"]


def load_yaml(path: str | Path, what: str) -> Any:
    """The content of the YAML file ``path``; a :class:`SchemaError` naming ``what`` (e.g.
    "schema file") and the file when it is missing, not UTF-8, or not valid under the rules
    above.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.yaml"
    >>> _ = path.write_text("age: 1" + chr(10) + "age: 2" + chr(10))
    >>> load_yaml(path, "schema file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    microagg.errors.SchemaError: schema file ... is not valid YAML: 'age' is declared twice (line 2)
    """
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"{what} not found: {path}")
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_StrictLoader)
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{what} {path} is not UTF-8 text (byte {exc.start}); save it as "
                          "UTF-8") from None
    except yaml.YAMLError as exc:
        raise SchemaError(f"{what} {path} is not valid YAML: {_problem(exc)}") from None


def _problem(exc: yaml.YAMLError) -> str:
    """What is wrong, and on which line, in one line."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem:
        return f"{problem}" + (f" (line {mark.line + 1})" if mark is not None else "")
    return " ".join(str(exc).split()) or "malformed YAML"


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader under the rules of the module docstring."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed",
                                              event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"'{key}' is declared twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)
