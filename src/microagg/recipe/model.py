"""A recipe: the input, its schema and the protection steps in order, as one YAML file.

::

    format: microagg-recipe/1
    input: {path: adult.csv, sha256: 5c1f…}     # relative to the recipe's folder
    seed: 20240501                              # optional: every randomized step seeded
    read: {na: ["?"]}                           # optional: how the CSV file is written
    missing: matches-any                        # what a missing key matches in the risk
    schema:
      attributes:
        age:        {role: quasi, kind: numeric}
        occupation: {role: quasi, kind: nominal, taxonomy: [[Sales, White-collar, "*"], …]}
        fnlwgt:     {role: weight, kind: numeric}
    steps:
      - {family: microaggregate, method: mdav, k: 5, columns: [age, occupation]}
      - {family: dp, method: laplace, epsilon: 1, columns: [age],
         bounds: {age: [0, 120]}, protects: step-input}
    attacks: {kinds: [inference], control: held_out.csv, secret: [income]}   # optional

``schema`` may also name a schema file (relative to the recipe). A step names its family
(the command: microaggregate, tclose, mask, dp …) and its method,
then the method's parameters (its fields) and the family's options
(:mod:`microagg.recipe.families`), flat; ``protects`` applies to a differentially private
step (:mod:`microagg.recipe.composition`). A taxonomy is a file path (relative to the
recipe) or inline, as the rows of an ARX hierarchy (``leaf, parent, …, root``) or a nested
mapping; the recipe written after a run holds its taxonomies inline, so one file reproduces
the run. ``attacks`` (optional) measures singling out, linkability and inference on the final
table against the input and held-out control records (:mod:`microagg.recipe.attacks`).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from microagg.data.io import READ_OPTIONS
from microagg.data.schema import Schema
from microagg.data.yamlfile import load_yaml
from microagg.errors import InputError, ParameterError, SchemaError
from microagg.options import MissingValues, parse
from microagg.recipe.attacks import RecipeAttacks
from microagg.recipe.families import adapter
from microagg.release.family_options import Protects
from microagg.release.methods import Family, ReleaseMethod, lookup
from microagg.release.methods import family as members
from microagg.release.methods.base import build
from microagg.release.params import method_fields
from microagg.release.reports.disclosure import RECIPE_FORMAT

if TYPE_CHECKING:
    import pandas as pd

    from microagg.recipe.runner import RecipeRun

__all__ = ["RECIPE_FORMAT", "Protects", "Recipe", "Step"]


def _plain(value: Any) -> Any:
    """A parameter as YAML writes it: enums as their value, tuples as lists."""
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Step:
    """One step: a method of a family, its ``parameters`` (the method's fields, as given)
    and the family's ``options``; checked when made (the method is built, so a bad
    parameter is refused here, naming it).

    Examples
    --------
    >>> step = Step.of({"family": "microaggregate", "method": "mdav", "k": 5})
    >>> step.method().k, step.to_dict()
    (5, {'family': 'microaggregate', 'method': 'mdav', 'k': 5})
    """

    family: Family
    name: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    protects: Protects = Protects.ORIGINAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "family", Family(self.family))
        cls = lookup(self.family, self.name)
        object.__setattr__(self, "name", cls.name)
        object.__setattr__(self, "protects", parse(Protects, self.protects, "`protects`"))
        if self.protects is not Protects.ORIGINAL and not adapter(self.family).private:
            raise ParameterError("protects", "applies to differentially private steps only")
        family_adapter = adapter(self.family)
        checked = {}
        for name, value in self.options.items():
            try:
                option = family_adapter.option(name)
            except KeyError:
                raise ParameterError(name, f"is not a parameter of {cls.name} nor an option "
                                     f"of a {self.family.value} step") from None
            checked[name] = option.check(value)
        object.__setattr__(self, "options", {k: v for k, v in checked.items()
                                             if v is not None})
        object.__setattr__(self, "parameters", {k: _plain(v) for k, v in
                                                self.parameters.items() if v is not None})
        self.method()

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> Step:
        """The step a recipe's mapping describes (keys: family, method, protects, then the
        method's parameters and the family's options)."""
        if not isinstance(spec, Mapping):
            raise InputError(f"a recipe step is a mapping (family, method, parameters), got "
                             f"{spec!r}")
        spec = dict(spec)
        if "family" not in spec or "method" not in spec:
            raise InputError("a recipe step names its 'family' and its 'method'")
        family = adapter(spec.pop("family")).family
        method = lookup(family, str(spec.pop("method")))
        protects = spec.pop("protects", Protects.ORIGINAL)
        own = {f.name for f in method_fields(method)}
        return cls(family, method.name, {k: v for k, v in spec.items() if k in own},
                   {k: v for k, v in spec.items() if k not in own}, protects)

    def method(self) -> ReleaseMethod:
        """The method object of this step."""
        return build(lookup(self.family, self.name), self.parameters, members(self.family))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"family": self.family.value, "method": self.name,
                               **_plain(dict(self.parameters)), **_plain(dict(self.options))}
        if self.protects is not Protects.ORIGINAL:
            out["protects"] = self.protects.value
        return out

    def describe(self) -> str:
        """The step in a line: method and parameters."""
        given = ", ".join(f"{k}={v}" for k, v in {**self.parameters, **self.options}.items())
        return f"{self.family.value} {self.name}" + (f" ({given})" if given else "")


@dataclass(frozen=True)
class Recipe:
    """The input, the schema, the seed and the steps of a protection, in order.

    ``input`` is the table's path (``None``: a table given to :meth:`run`), ``input_sha256``
    the hash it had when the recipe was made (a run on other content says so), ``read`` how
    the CSV file is written (``decimal``, ``thousands``, ``na``: its missing-value tokens,
    ``separator``, ``header``: :func:`~microagg.data.io.read_table`). ``schema`` is given
    to every step, restricted to the columns its input still has (``None``: each release
    reads the roles off the data).
    ``seed`` seeds every randomized step (each its own stream,
    :func:`~microagg.recipe.families.step_seed`); ``missing`` is what a missing key matches
    in the risk measures; ``attacks`` the attacks measured on the final table
    (:class:`~microagg.recipe.attacks.RecipeAttacks`; ``None``: none).

    Examples
    --------
    >>> import microagg
    >>> data = microagg.datasets.synthetic(300, 2, seed=0)
    >>> recipe = Recipe(schema=data.schema, seed=1).add(
    ...     {"family": "microaggregate", "method": "mdav", "k": 5})
    >>> run = recipe.run(data.frame)
    >>> run.results[-1].risk.smallest_class >= 5, len(recipe.undo().steps)
    (True, 0)
    """

    input: Path | None = None
    schema: Schema | None = None
    steps: tuple[Step, ...] = ()
    seed: int | None = None
    missing: MissingValues = MissingValues.MATCHES_ANY
    input_sha256: str | None = None
    read: Mapping[str, Any] = field(default_factory=dict)
    attacks: RecipeAttacks | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(
            s if isinstance(s, Step) else Step.of(s) for s in self.steps))
        object.__setattr__(self, "missing", parse(MissingValues, self.missing, "`missing`"))
        if self.attacks is not None and not isinstance(self.attacks, RecipeAttacks):
            object.__setattr__(self, "attacks", RecipeAttacks.of(self.attacks))
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(
                self.seed, int) or self.seed < 0):
            raise ParameterError("seed", f"must be a non-negative integer, got {self.seed!r}")
        unknown = set(self.read) - set(READ_OPTIONS)
        if unknown:
            raise InputError(f"'{sorted(unknown)[0]}' is not a reading option of the recipe's "
                             f"'read' ({', '.join(READ_OPTIONS)})")

    def add(self, step: Step | Mapping[str, Any]) -> Recipe:
        """This recipe with ``step`` appended."""
        return replace(self, steps=(*self.steps, step if isinstance(step, Step)
                                    else Step.of(step)))

    def undo(self) -> Recipe:
        """This recipe without its last step."""
        if not self.steps:
            raise InputError("the recipe has no step to undo")
        return replace(self, steps=self.steps[:-1])

    def run(self, frame: pd.DataFrame | None = None, *, source: Path | None = None,
            progress: Any = None) -> RecipeRun:
        """Apply the steps in order to ``frame`` (default: read ``input``), measuring the
        risk before and after each step (:class:`~microagg.recipe.runner.RecipeRun`)."""
        from microagg.recipe.runner import RecipeRun

        run = RecipeRun.start(self, frame, source=source)
        for step in self.steps:
            run = run.then(step, progress=progress)
        return run

    # -- YAML ---------------------------------------------------------------------------
    def to_dict(self, base_dir: Path | None = None) -> dict[str, Any]:
        """The recipe as its YAML holds it, taxonomies inline; the input's path relative to
        ``base_dir`` (default: its name alone)."""
        out: dict[str, Any] = {"format": RECIPE_FORMAT}
        if self.input is not None:
            path = (os.path.relpath(self.input.resolve(), base_dir.resolve())
                    if base_dir is not None else self.input.name)
            out["input"] = {"path": Path(path).as_posix()}
            if self.input_sha256:
                out["input"]["sha256"] = self.input_sha256
        if dict(self.read):
            out["read"] = dict(self.read)
        if self.seed is not None:
            out["seed"] = self.seed
        out["missing"] = self.missing.value
        if self.schema is not None:
            out["schema"] = {"attributes": {a.name: _inline(a.to_dict()) for a in self.schema}}
        out["steps"] = [s.to_dict() for s in self.steps]
        if self.attacks is not None:
            out["attacks"] = self.attacks.to_dict(base_dir)
        return out

    def dumps(self, base_dir: Path | None = None) -> str:
        """The recipe as YAML text (:meth:`to_dict`)."""
        return yaml.safe_dump(self.to_dict(base_dir), sort_keys=False, allow_unicode=True,
                              default_flow_style=None, width=100)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: Path | None = None) -> Recipe:
        """The recipe of a YAML mapping; paths are relative to ``base_dir``."""
        if not isinstance(data, Mapping):
            raise InputError("a recipe is a mapping with keys format, input, schema, steps")
        allowed = {"format", "input", "read", "seed", "missing", "schema", "steps", "attacks"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InputError(f"unknown key '{unknown[0]}' in the recipe (allowed: "
                             f"{', '.join(sorted(allowed))})")
        if data.get("format", RECIPE_FORMAT) != RECIPE_FORMAT:
            raise InputError(f"this recipe's format is {data['format']!r}; this version of "
                             f"microagg reads {RECIPE_FORMAT}")
        source, sha = _input(data.get("input"), base_dir)
        schema = _schema(data.get("schema"), base_dir)
        steps = data.get("steps")
        if not isinstance(steps, list):
            raise InputError("the recipe's 'steps' is a list of steps" + (
                ", and this recipe has none: add at least one" if steps is None else ""))
        if not steps:
            raise InputError("the recipe's 'steps' is empty: a recipe releases its input "
                             "through at least one step")
        made = []
        for number, spec in enumerate(steps, start=1):
            try:
                made.append(Step.of(spec))
            except InputError as exc:
                raise InputError(f"step {number}: {exc}") from None
            except SchemaError as exc:
                raise SchemaError(f"step {number}: {exc}") from None
        recipe = cls(input=source, schema=schema, steps=tuple(made), seed=data.get("seed"),
                     missing=data.get("missing", MissingValues.MATCHES_ANY),
                     input_sha256=sha, read=data.get("read") or {},
                     attacks=None if data.get("attacks") is None
                     else RecipeAttacks.of(data["attacks"], base_dir))
        return recipe

    @classmethod
    def load(cls, path: str | Path) -> Recipe:
        """Read a recipe file."""
        path = Path(path)
        return cls.from_dict(load_yaml(path, "recipe file"), base_dir=path.parent)


def _input(value: Any, base_dir: Path | None) -> tuple[Path | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, str):
        value = {"path": value}
    if not isinstance(value, Mapping) or "path" not in value:
        raise InputError("the recipe's 'input' is a path, or a mapping with 'path' and "
                         "'sha256'")
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", str(value["path"])):
        raise InputError(f"the recipe's 'input' is a URL ({str(value['path']).split('://')[0]}"
                         "://…): a recipe reads a local file; copy the data here, or give "
                         "microagg run --input a local path")
    path = Path(str(value["path"]))
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return path, value.get("sha256")


def _inline(spec: dict[str, Any]) -> dict[str, Any]:
    """An attribute's mapping with its taxonomy file's content in place of its path."""
    if "taxonomy" not in spec:
        return spec
    path = Path(spec["taxonomy"])
    if path.suffix.lower() in (".yaml", ".yml"):
        content: Any = load_yaml(path, "taxonomy file")
    else:
        with path.open(newline="", encoding="utf-8") as handle:
            content = [[c.strip() for c in row] for row in csv.reader(handle, delimiter=";")
                       if any(c.strip() for c in row)]
    return {**spec, "taxonomy": content}


def _schema(value: Any, base_dir: Path | None) -> Schema | None:
    """The recipe's schema: a schema file's path, or its mapping inline. Inline taxonomies
    are written to a temporary folder that lives as long as the schema (whose attributes
    name files)."""
    if value is None:
        return None
    if isinstance(value, str):  # a schema file, relative to the recipe
        path = Path(value)
        return Schema.load(base_dir / path if base_dir is not None and not path.is_absolute()
                           else path)
    if not isinstance(value, Mapping) or not isinstance(value.get("attributes"), Mapping):
        raise SchemaError("the recipe's 'schema' is a mapping with one key 'attributes'")
    attributes = dict(value["attributes"])
    inline = {name: spec["taxonomy"] for name, spec in attributes.items()
              if isinstance(spec, Mapping) and isinstance(spec.get("taxonomy"), list | dict)}
    folder = None
    if inline:
        folder = Path(tempfile.mkdtemp(prefix="microagg-recipe-"))
        for position, (name, content) in enumerate(inline.items()):
            if isinstance(content, dict):
                target = folder / f"taxonomy-{position}.yaml"
                target.write_text(yaml.safe_dump(content, allow_unicode=True), "utf-8")
            else:
                target = folder / f"taxonomy-{position}.csv"
                with target.open("w", newline="", encoding="utf-8") as handle:
                    csv.writer(handle, delimiter=";").writerows(
                        [str(c) for c in row] if isinstance(row, list) else [str(row)]
                        for row in content)
            attributes[name] = {**attributes[name], "taxonomy": str(target)}
    try:
        schema = Schema.from_dict({"attributes": attributes}, base_dir=base_dir)
    except SchemaError as exc:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise SchemaError(f"the recipe's schema: {exc}") from None
    if folder is not None:  # removed when the schema is collected
        weakref.finalize(schema, shutil.rmtree, str(folder), True)
    return schema
