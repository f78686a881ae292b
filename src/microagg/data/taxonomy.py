"""Taxonomies of categorical values, the semantic distance and marginality (paper 000 §4.4-4.5).

A :class:`Taxonomy` is a tree of concepts whose leaves are the categories of an attribute
(e.g. occupations under "Technical", "Nontechnical", "Other", under a root "*"). Concepts are
numbered leaves first, in the attribute's category order, then inner concepts in the order they
are met, the root last.

* Semantic distance (000 eq. 7), with φ(a) the ancestors of a including a itself:
  ``δ(a, b) = log2(1 + (|φ(a) ∪ φ(b)| − |φ(a) ∩ φ(b)|) / |φ(a) ∪ φ(b)|)``, a metric in [0, 1].
* Marginality of a concept towards a sample S (000 eq. 2): m(S, a) = Σ_{s in S} δ(s, a).
* Domain boundaries (000 eq. 3-4): a_b, the leaf most marginal towards all leaves; a_t, the
  leaf farthest from a_b. δ(a_b, a_t) normalizes the attribute in record distances (eq. 8).
* Marginality centroid (000 eq. 5): the concept of the minimal sub-taxonomy covering the sample
  with the least marginality towards it; or, for differential privacy, the least marginal of
  all concepts.

:class:`CategoryMetric` bundles what the partitioners need for one attribute: the distance
matrix over all concepts, the boundaries, and the tree (parents) for the centroid candidates.
Ordinal attributes get a chain metric: distance = rank difference / (levels − 1), for which the
marginality centroid is a median.
"""

from __future__ import annotations

import atexit
import csv
import hashlib
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from microagg.errors import SchemaError

__all__ = [
    "CategoryMetric",
    "Taxonomy",
    "level_file",
    "marginality",
    "semantic_distances",
]


@dataclass
class _PathTree:
    """The concepts read from root-ward paths ``[leaf, parent, ..., root]``: each one's
    parent, the inner concepts in the order they are met, the leaves in the order of the
    paths, and the roots."""

    parent_of: dict[str, str | None] = field(default_factory=dict)
    inner: list[str] = field(default_factory=list)
    leaves: list[str] = field(default_factory=list)
    roots: set[str] = field(default_factory=set)

    def add(self, path: Sequence[str]) -> None:
        """Read one path, refusing an empty concept, a leaf listed twice and a concept with
        two parents."""
        path = [str(p).strip() for p in path]
        if not path or any(p == "" for p in path):
            raise SchemaError(f"taxonomy: empty concept in the line {';'.join(path)}")
        leaf = path[0]
        if leaf in self.parent_of and leaf in self.leaves:
            raise SchemaError(f"taxonomy: category '{leaf}' is listed twice")
        self.leaves.append(leaf)
        self.roots.add(path[-1])
        for child, parent in zip(path, [*path[1:], None], strict=True):
            known = self.parent_of.get(child, "unset")
            if known != "unset" and known != parent:
                raise SchemaError(f"taxonomy: concept '{child}' has two parents "
                                  f"('{known}' and '{parent}')")
            if known == "unset":
                self.parent_of[child] = parent
                if child != leaf:
                    self.inner.append(child)

    def check_leaves(self, leaves: Sequence[str]) -> None:
        """Refuse categories ``leaves`` that are not exactly the leaves of the paths."""
        if sorted(leaves) != sorted(self.leaves):
            missing = sorted(set(leaves) - set(self.leaves))
            if missing:
                raise SchemaError(f"taxonomy: category '{missing[0]}' is not a leaf of the "
                                  "taxonomy")
            extra = sorted(set(self.leaves) - set(leaves))
            raise SchemaError(f"taxonomy: leaf '{extra[0]}' is not one of the categories")
        for leaf in leaves:
            if leaf in self.inner:
                raise SchemaError(f"taxonomy: category '{leaf}' has sub-concepts; categories "
                                  "must be leaves")


@dataclass(frozen=True, eq=False)
class Taxonomy:
    """A tree of concepts. ``parent[i]`` is the parent of concept i (-1 for the root)."""

    labels: tuple[str, ...]
    parent: np.ndarray
    n_leaves: int

    def __post_init__(self) -> None:
        parent = np.asarray(self.parent, dtype=np.int64)
        object.__setattr__(self, "parent", parent)
        if len(set(self.labels)) != len(self.labels):
            seen: set[str] = set()
            for label in self.labels:
                if label in seen:
                    raise SchemaError(f"taxonomy: concept '{label}' appears twice")
                seen.add(label)
        roots = np.flatnonzero(parent < 0)
        if roots.size != 1:
            raise SchemaError(f"taxonomy: needs exactly one root, found {roots.size}")
        for i in range(parent.size):  # walking up from every concept must reach the root
            seen_path = {i}
            j = i
            while parent[j] >= 0:
                j = int(parent[j])
                if j in seen_path:
                    raise SchemaError(f"taxonomy: cycle through concept '{self.labels[i]}'")
                seen_path.add(j)
        is_parent = np.zeros(parent.size, dtype=bool)
        is_parent[parent[parent >= 0]] = True
        if is_parent[: self.n_leaves].any():
            leaf = self.labels[int(np.flatnonzero(is_parent[: self.n_leaves])[0])]
            raise SchemaError(f"taxonomy: category '{leaf}' has sub-concepts; categories "
                              "must be leaves")

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_paths(cls, paths: Sequence[Sequence[str]],
                   leaf_order: Sequence[str] | None = None) -> Taxonomy:
        """Build from root-ward paths ``[leaf, parent, ..., root]``, one per leaf.

        ``leaf_order`` fixes the numbering of the leaves (the attribute's category order);
        it must list exactly the leaves of the paths.
        """
        if not paths:
            raise SchemaError("taxonomy: no concept")
        tree = _PathTree()
        for path in paths:
            tree.add(path)
        if len(tree.roots) != 1:
            raise SchemaError(f"taxonomy: needs exactly one root, found {sorted(tree.roots)}")
        leaves = list(leaf_order) if leaf_order is not None else tree.leaves
        tree.check_leaves(leaves)
        root = next(iter(tree.roots))
        inner = [c for c in tree.inner if c != root] + [root]
        labels = (*leaves, *inner)
        index = {label: i for i, label in enumerate(labels)}
        parent = np.array([-1 if (up := tree.parent_of[c]) is None else index[up]
                           for c in labels], dtype=np.int64)
        return cls(labels=labels, parent=parent, n_leaves=len(leaves))

    @classmethod
    def flat(cls, categories: Sequence[str], root: str = "*") -> Taxonomy:
        """Every category directly under one root (the taxonomy of a nominal attribute without
        a declared one: all distinct categories at the same distance)."""
        if root in categories:
            root = "(any " + root + ")"
        return cls.from_paths([[c, root] for c in categories], leaf_order=categories)

    @classmethod
    def from_hierarchy_csv(cls, path: str | Path,
                           leaf_order: Sequence[str] | None = None) -> Taxonomy:
        """An ARX-style hierarchy file: one line per leaf, ``leaf;level1;...;root``, no header."""
        path = Path(path)
        if not path.is_file():
            raise SchemaError(f"taxonomy file not found: {path}")
        try:
            with path.open(newline="", encoding="utf-8") as handle:
                lines = [row for row in csv.reader(handle, delimiter=";")
                         if any(c.strip() for c in row)]
        except UnicodeDecodeError as exc:
            raise SchemaError(f"taxonomy file {path} is not UTF-8 text (byte {exc.start}); "
                              "save it as UTF-8") from None
        except csv.Error as exc:
            raise SchemaError(f"taxonomy file {path} is not a hierarchy file "
                              f"(leaf;parent;...;root per line): {exc}") from None
        try:
            return cls.from_paths(lines, leaf_order)
        except SchemaError as exc:
            raise SchemaError(f"{path}: {exc}") from None

    @classmethod
    def from_mapping(cls, tree: Mapping[str, Any],
                     leaf_order: Sequence[str] | None = None) -> Taxonomy:
        """A nested mapping with one top-level key (the root). A node's value is a mapping of
        children, a list of children (labels or mappings), or null for a leaf."""
        if not isinstance(tree, Mapping) or len(tree) != 1:
            raise SchemaError("taxonomy: a nested mapping needs exactly one top-level key "
                              "(the root)")
        paths: list[list[str]] = []

        def walk(label: str, children: Any, above: list[str]) -> None:
            chain = [str(label), *above]
            if children is None:
                paths.append(chain)
                return
            if isinstance(children, Mapping):
                if not children:
                    paths.append(chain)
                for child, grandchildren in children.items():
                    walk(child, grandchildren, chain)
                return
            if isinstance(children, list):
                for child in children:
                    if isinstance(child, Mapping):
                        for key, value in child.items():
                            walk(key, value, chain)
                    else:
                        walk(child, None, chain)
                return
            raise SchemaError(f"taxonomy: children of '{label}' must be a mapping, a list "
                              "or null")

        (root, children), = tree.items()
        walk(root, children, [])
        return cls.from_paths(paths, leaf_order)

    @classmethod
    def load(cls, path: str | Path, leaf_order: Sequence[str] | None = None) -> Taxonomy:
        """A taxonomy file: ARX hierarchy CSV (``.csv``) or nested YAML (``.yaml``/``.yml``)."""
        path = Path(path)
        if path.suffix.lower() in (".yaml", ".yml"):
            from microagg.data.yamlfile import load_yaml

            data = load_yaml(path, "taxonomy file")
            try:
                return cls.from_mapping(data, leaf_order)
            except SchemaError as exc:
                raise SchemaError(f"{path}: {exc}") from None
        return cls.from_hierarchy_csv(path, leaf_order)

    # -- structure -------------------------------------------------------------------------
    @property
    def n_concepts(self) -> int:
        return len(self.labels)

    @property
    def root(self) -> int:
        return int(np.flatnonzero(self.parent < 0)[0])

    @property
    def leaves(self) -> tuple[str, ...]:
        return self.labels[: self.n_leaves]

    def index(self, label: str) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            raise SchemaError(f"taxonomy: unknown concept '{label}'") from None

    def path_to_root(self, concept: int) -> list[int]:
        """The concept and its ancestors, up to the root: φ(concept) in order."""
        path = [int(concept)]
        while self.parent[path[-1]] >= 0:
            path.append(int(self.parent[path[-1]]))
        return path

    def depth(self) -> np.ndarray:
        """Number of ancestors of each concept including itself (the root has depth 1)."""
        return np.array([len(self.path_to_root(i)) for i in range(self.n_concepts)])

    def level_concepts(self, level: int) -> np.ndarray:
        """The concept ``level`` steps above each leaf (the root where a leaf has fewer
        ancestors), in leaf order."""
        return np.array([path[min(level, len(path) - 1)] for path in
                         (self.path_to_root(i) for i in range(self.n_leaves))], dtype=np.int64)

    def cut(self, level: int) -> Taxonomy | None:
        """The taxonomy above ``level``: its leaves the concepts ``level`` steps above the
        leaves (in the taxonomy's order, as a recoding to that level writes them), each
        with its ancestors; ``None`` when they are not leaves of one tree (a single
        concept, or one above another where the branches have unequal depths).

        Examples
        --------
        >>> tree = Taxonomy.from_paths([["cat", "pet", "animal", "*"],
        ...                             ["dog", "pet", "animal", "*"],
        ...                             ["oak", "tree", "plant", "*"]])
        >>> above = tree.cut(1)
        >>> above.leaves, above.cut(1).leaves
        (('pet', 'tree'), ('animal', 'plant'))
        >>> tree.cut(3) is None  # the root alone
        True
        """
        used = [int(c) for c in np.unique(self.level_concepts(level))]
        if len(used) < 2:
            return None
        chosen = set(used)
        if any(chosen.intersection(self.path_to_root(c)[1:]) for c in used):
            return None
        paths = [[self.labels[i] for i in self.path_to_root(c)] for c in used]
        return Taxonomy.from_paths(paths, leaf_order=[self.labels[c] for c in used])

    def rows(self) -> list[list[str]]:
        """The taxonomy as the rows of an ARX hierarchy file: ``leaf;parent;...;root``."""
        return [[self.labels[i] for i in self.path_to_root(leaf)]
                for leaf in range(self.n_leaves)]


def level_file(path: Path, level: int) -> Path | None:
    """The taxonomy file ``path`` cut at ``level`` (:meth:`Taxonomy.cut`), written as an
    ARX hierarchy file named for it and ``level`` in a folder of the process's own (named by
    the content: the same cut is the same file; removed when the process ends); ``None``
    when the cut has no tree. The declared file is never written."""
    above = Taxonomy.load(path).cut(level)
    if above is None:
        return None
    text = "".join(";".join(row) + "\n" for row in above.rows())
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    target = _cuts_folder() / digest / f"{path.stem}-level-{level}.csv"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(target)
    return target


_CUTS: list[Path] = []


def _cuts_folder() -> Path:
    """The process's folder of cut taxonomies, made on first use."""
    if not _CUTS:
        folder = Path(tempfile.mkdtemp(prefix="microagg-taxonomies-"))
        atexit.register(shutil.rmtree, folder, True)
        _CUTS.append(folder)
    return _CUTS[0]


def semantic_distances(taxonomy: Taxonomy) -> np.ndarray:
    """The matrix of 000 eq. 7 over all concepts of the taxonomy.

    φ(a) is a's path to the root, so ``|φ(a) ∩ φ(b)|`` is the depth of their lowest common
    ancestor and ``|φ(a) ∪ φ(b)| = |φ(a)| + |φ(b)| − |φ(a) ∩ φ(b)|``.
    """
    n = taxonomy.n_concepts
    paths = [taxonomy.path_to_root(i) for i in range(n)]
    depth = np.array([len(p) for p in paths])
    common = np.zeros((n, n), dtype=np.int64)
    for a in range(n):
        ancestors_a = set(paths[a])
        for b in range(a, n):
            shared = sum(1 for c in paths[b] if c in ancestors_a)
            common[a, b] = common[b, a] = shared
    union = depth[:, None] + depth[None, :] - common
    return np.log2(1.0 + (union - common) / union)


def marginality(counts: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """m(S, a) = Σ_s δ(s, a) for every concept a (000 eq. 2), the sample S given by the number
    of times each concept occurs in it. The sum runs over the sample's concepts in increasing
    order (the compiled partitioners sum in the same order, so ties compare equal)."""
    counts = np.asarray(counts, dtype=np.float64)
    out = np.zeros(distances.shape[1])
    for concept in np.flatnonzero(counts > 0):
        out += counts[concept] * distances[concept]
    return out


@dataclass(frozen=True, eq=False)
class CategoryMetric:
    """Distances between the concepts of one categorical attribute, and its centroids.

    ``labels`` lists the concepts, the attribute's categories first (codes 0..n_leaves-1);
    ``distances`` is the concept × concept distance; ``parent`` the tree (for the minimal
    sub-taxonomy of a sample), all -1 for an ordinal chain; ``bottom`` and ``top`` the domain
    boundaries a_b, a_t (000 eq. 3-4) and ``scale`` = δ(a_b, a_t).
    """

    name: str
    labels: tuple[str, ...]
    n_leaves: int
    distances: np.ndarray
    parent: np.ndarray
    bottom: int
    top: int
    ordinal: bool

    @property
    def scale(self) -> float:
        return float(self.distances[self.bottom, self.top])

    @property
    def n_concepts(self) -> int:
        return len(self.labels)

    @classmethod
    def nominal(cls, name: str, taxonomy: Taxonomy) -> CategoryMetric:
        """Semantic distance (eq. 7) on a taxonomy; boundaries by eq. 3-4 over the leaves,
        ties broken by the lowest concept number."""
        distances = semantic_distances(taxonomy)
        leaves = taxonomy.n_leaves
        leaf_marginality = distances[:leaves, :leaves].sum(axis=0)
        bottom = int(np.argmax(leaf_marginality))
        top = int(np.argmax(distances[bottom, :leaves]))
        if distances[bottom, top] <= 0:
            raise SchemaError(f"attribute '{name}' has a single category "
                              f"('{taxonomy.labels[0]}'): there is nothing to mask or to "
                              "measure distances on; declare its categories in a schema, or "
                              "leave the column out")
        return cls(name=name, labels=taxonomy.labels, n_leaves=leaves, distances=distances,
                   parent=taxonomy.parent, bottom=bottom, top=top, ordinal=False)

    @classmethod
    def chain(cls, name: str, levels: Sequence[str]) -> CategoryMetric:
        """Ordinal levels: distance = rank difference / (levels − 1); boundaries the first and
        the last level."""
        count = len(levels)
        if count < 2:
            raise SchemaError(f"attribute '{name}': an ordinal attribute needs at least two "
                              "levels")
        rank = np.arange(count, dtype=np.float64)
        distances = np.abs(rank[:, None] - rank[None, :]) / (count - 1)
        return cls(name=name, labels=tuple(levels), n_leaves=count, distances=distances,
                   parent=np.full(count, -1, dtype=np.int64), bottom=0, top=count - 1,
                   ordinal=True)

    # -- centroids (000 eq. 5) ---------------------------------------------------------------
    def candidates(self, counts: np.ndarray) -> np.ndarray:
        """Concepts of the minimal sub-taxonomy covering the sample: the sample's concepts and
        their ancestors below (and including) their lowest common ancestor. For an ordinal
        chain, the levels between the smallest and the largest in the sample."""
        present = np.flatnonzero(np.asarray(counts) > 0)
        if present.size == 0:
            raise SchemaError(f"attribute '{self.name}': a centroid needs a non-empty sample")
        if self.ordinal:
            return np.arange(present.min(), present.max() + 1)
        paths = []
        for first in present:
            path = [int(first)]
            while self.parent[path[-1]] >= 0:
                path.append(int(self.parent[path[-1]]))
            paths.append(path)
        common = set(paths[0]).intersection(*map(set, paths[1:]))
        lca = next(c for c in paths[0] if c in common)  # deepest common ancestor
        chosen: set[int] = set()
        for path in paths:
            for concept in path:
                chosen.add(concept)
                if concept == lca:
                    break
        return np.array(sorted(chosen), dtype=np.int64)

    def centroid(self, counts: np.ndarray, *, over_all: bool = False) -> int:
        """The marginality centroid of a sample given as counts per concept (000 eq. 5): the
        candidate of least marginality, ties to the lowest concept number. ``over_all`` takes
        the candidates among all concepts (the variant the exponential mechanism needs)."""
        counts = np.asarray(counts, dtype=np.float64)
        candidates = (np.arange(self.n_concepts) if over_all else self.candidates(counts))
        score = marginality(counts, self.distances[:, candidates])
        return int(candidates[int(np.argmin(score))])
