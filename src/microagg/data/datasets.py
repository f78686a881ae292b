"""Reference microdata sets of the SDC literature, and an embedded synthetic generator.

The reference files (CASC Census, EIA, Tarragona; UCI Adult; ARX hierarchies) are not shipped
with microagg. They are read from the folder named by the environment variable
``MICROAGG_DATA``, and only from it when it is set. Otherwise they are read from
``../shared/datasets`` beside a source checkout of microagg: the checkout that holds the working
directory, then the checkout microagg is imported from (an editable install). An installed
package has no such folder, so it needs ``MICROAGG_DATA``. docs/datasets.md says where each
file comes from, what it must be named and how to build it. :func:`synthetic` needs no file
and always works offline.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr

from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import DataNotFoundError, InputError

__all__ = ["Dataset", "data_dir", "describe", "load", "names", "search_path_text", "synthetic",
           "taxonomy_copies"]

ENV_VAR = "MICROAGG_DATA"
DOCS = "docs/datasets.md"  # where each reference file comes from, named in messages


@dataclass(frozen=True, eq=False)
class Dataset:
    """A microdata table with its schema."""

    name: str
    frame: pd.DataFrame
    schema: Schema
    description: str


@dataclass(frozen=True)
class _Reference:
    filename: str
    description: str
    shape: str
    build: Callable[[pd.DataFrame, Path], tuple[pd.DataFrame, Schema]]


def _is_checkout(folder: Path) -> bool:
    """Whether ``folder`` is the root of a source checkout of microagg."""
    return (folder / "pyproject.toml").is_file() and (folder / "src" / "microagg").is_dir()


def _checkout_of_cwd() -> Path | None:
    """The source checkout holding the working directory, or ``None``."""
    cwd = Path.cwd()
    return next((f for f in (cwd, *cwd.parents) if _is_checkout(f)), None)


def _checkout_of_package() -> Path | None:
    """The source checkout microagg is imported from (``src`` layout), or ``None``."""
    root = Path(__file__).resolve().parents[2]
    return root if _is_checkout(root) else None


def _search_path() -> list[tuple[Path, str]]:
    """The folders searched for reference files, in order, each with why it is searched."""
    env = os.environ.get(ENV_VAR)
    if env:
        return [(Path(env).expanduser().absolute(), ENV_VAR)]
    found: list[tuple[Path, str]] = []
    for checkout in (_checkout_of_cwd(), _checkout_of_package()):
        folder = checkout.parent / "shared" / "datasets" if checkout else None
        if folder is not None and folder not in (f for f, _ in found):
            found.append((folder, f"beside the source checkout {checkout}"))
    return found


def _candidate_dirs() -> list[Path]:
    return [folder for folder, _ in _search_path()]


def data_dir(filename: str | None = None) -> Path | None:
    """The folder holding the reference files.

    Parameters
    ----------
    filename : str, optional
        A file the folder must contain (e.g. ``"census.csv"``).

    Returns
    -------
    Path or None
        The first folder of the search path (see :func:`search_path_text`) that exists and
        holds ``filename``; ``None`` if there is none.
    """
    for folder in _candidate_dirs():
        if folder.is_dir() and (filename is None or (folder / filename).is_file()):
            return folder
    return None


def search_path_text() -> str:
    """Where reference files are looked for, in words, on one line (for messages).

    Returns
    -------
    str
        Each folder searched, with why (``MICROAGG_DATA`` or the source checkout it sits
        beside), or a sentence saying that no folder is searched.
    """
    folders = _search_path()
    if not folders:
        return (f"no folder ({ENV_VAR} is not set, and neither the working directory nor the "
                "installed package lies in a source checkout of microagg)")
    looked = ", ".join(f"{folder} ({why})" for folder, why in folders)
    return looked if os.environ.get(ENV_VAR) else f"{looked}; {ENV_VAR} is not set"


def _locate(filename: str) -> Path:
    folder = data_dir(filename)
    if folder is None:
        raise DataNotFoundError(
            f"reference file '{filename}' not found (looked in: {search_path_text()}); put it "
            f"in a folder and point {ENV_VAR} at that folder ({DOCS} says where each file "
            "comes from and how to build it), or use the embedded 'synthetic' data set"
        )
    return folder / filename


# -- schemas of the reference files --------------------------------------------------------

def _numeric_schema(frame: pd.DataFrame, roles: dict[str, Role] | None = None,
                    domains: dict[str, tuple[float, float]] | None = None) -> Schema:
    roles, domains = roles or {}, domains or {}
    return Schema(
        tuple(
            Attribute(str(c), role=roles.get(c, Role.QUASI), kind=Kind.NUMERIC,
                      domain=domains.get(c))
            for c in frame.columns
        )
    )


def _census(frame: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, Schema]:
    # All 13 attributes are non-negative money amounts; no population bound is published,
    # so no domain is declared (the papers' 1.5 x max rule reads it off the data).
    return frame, _numeric_schema(frame)


def _tarragona(frame: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, Schema]:
    return frame, _numeric_schema(frame)


def _eia(frame: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, Schema]:
    schema = Schema(
        (
            Attribute("UTILITYID", Role.IDENTIFIER, Kind.NOMINAL),
            Attribute("UTILNAME", Role.IDENTIFIER, Kind.NOMINAL),
            Attribute("STATE", Role.OTHER, Kind.NOMINAL),
            Attribute("YEAR", Role.OTHER, Kind.NUMERIC),
            Attribute("MONTH", Role.OTHER, Kind.NUMERIC, domain=(1, 12)),
            *(Attribute(str(c), Role.QUASI, Kind.NUMERIC) for c in frame.columns[5:]),
        )
    )
    return frame, schema


_ADULT_HIERARCHY = {
    "workclass": "workclass",
    "education": "education",
    "marital-status": "marital-status",
    "occupation": "occupation",
    "race": "race",
    "sex": "sex",
    "native-country": "native-country",
    "income": "salary-class",
}
# UCI Adult documentation lists these six values; there is no ARX hierarchy for the column.
_ADULT_RELATIONSHIP = ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative",
                       "Unmarried")


def hierarchy_path(folder: Path, attribute: str) -> Path:
    """Path of the ARX hierarchy file of an Adult attribute (``income`` is ``salary-class``)."""
    return folder / "hierarchies" / f"adult_hierarchy_{_ADULT_HIERARCHY[attribute]}.csv"


def _hierarchy_leaves(path: Path) -> tuple[str, ...] | None:
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return tuple(line.split(";")[0].strip() for line in lines if line.strip())


# Roles of Adult's columns. education-num recodes education one to one and relationship is as
# visible as marital-status: both are quasi-identifiers (left as "other", a k-anonymous release
# would carry them raw and its classes over the real quasi-identifiers would be of size 1).
# fnlwgt is a sampling weight, not a property of the person.
_ADULT_QUASI = {"age", "workclass", "education", "education-num", "marital-status",
                "occupation", "relationship", "race", "sex", "hours-per-week", "native-country"}
_ADULT_CONFIDENTIAL = {"capital-gain", "capital-loss", "income"}


def _adult(frame: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, Schema]:
    numeric_domains = {"age": (0, 120), "education-num": (1, 16), "hours-per-week": (0, 168)}
    attributes = []
    for column in frame.columns:
        role = (Role.QUASI if column in _ADULT_QUASI else
                Role.CONFIDENTIAL if column in _ADULT_CONFIDENTIAL else Role.OTHER)
        if pd.api.types.is_numeric_dtype(frame[column]):
            attributes.append(Attribute(column, role, Kind.NUMERIC,
                                        domain=numeric_domains.get(column)))
        elif column == "relationship":
            attributes.append(Attribute(column, role, Kind.NOMINAL, domain=_ADULT_RELATIONSHIP))
        else:
            taxonomy = hierarchy_path(folder, column)
            present = taxonomy.is_file()
            attributes.append(Attribute(column, role, Kind.NOMINAL,
                                        domain=_hierarchy_leaves(taxonomy),
                                        taxonomy=taxonomy if present else None))
    return frame, Schema(tuple(attributes))


def _adult_view(columns: list[str]):
    """A projection of Adult's complete rows with all its columns as quasi-identifiers."""

    def build(frame: pd.DataFrame, folder: Path) -> tuple[pd.DataFrame, Schema]:
        complete = frame.dropna().reset_index(drop=True)[columns]
        _, schema = _adult(complete, folder)
        return complete, schema.select(columns).with_roles({c: Role.QUASI for c in columns})

    return build


_REFERENCE: dict[str, _Reference] = {
    "census": _Reference("census.csv", "CASC Census: 13 numeric income/tax attributes",
                         "1,080 x 13", _census),
    "eia": _Reference("eia.csv", "CASC EIA: electric utility sales and revenues, 10 numeric "
                      "attributes plus ids", "4,092 x 15", _eia),
    "tarragona": _Reference("tarragona.csv", "CASC Tarragona: 13 numeric company accounts",
                            "834 x 13", _tarragona),
    "adult": _Reference("adult.csv", "UCI Adult (training part), mixed; '?' marks missing",
                        "32,561 x 15 (30,162 complete)", _adult),
    "adult-categorical": _Reference(
        "adult.csv", "Adult's complete rows, occupation and native-country (the "
        "Adult-Categorical of Soria-Comas et al. 2014), with ARX taxonomies", "30,162 x 2",
        _adult_view(["occupation", "native-country"])),
    "adult-mixed": _Reference(
        "adult.csv", "Adult's complete rows, age, hours-per-week, occupation, native-country "
        "(the Adult-Numerical-Categorical of Soria-Comas et al. 2014)", "30,162 x 4",
        _adult_view(["age", "hours-per-week", "occupation", "native-country"])),
}


def names() -> tuple[str, ...]:
    """Names accepted by :func:`load`."""
    return (*_REFERENCE, "synthetic")


def describe() -> list[dict[str, str]]:
    """One row per data set: name, shape, description, and where its file is (or 'missing')."""
    rows = []
    for name, ref in _REFERENCE.items():
        folder = data_dir(ref.filename)
        rows.append({"name": name, "shape": ref.shape, "description": ref.description,
                     "location": str(folder / ref.filename) if folder else "missing"})
    rows.append({"name": "synthetic", "shape": "n x (d + 2), default 1,000 x 8",
                 "description": "embedded generator: skewed, correlated numbers + 2 categories",
                 "location": "built in"})
    rows.append({"name": "census-synthetic", "shape": "persons x 12, default 1,000,000 x 12",
                 "description": "embedded generator: persons in households, region > "
                 "district > area, census keys (datasets export only)",
                 "location": "built in"})
    return rows


def load(name: str, *, drop_incomplete: bool = False, n: int = 1000, d: int = 6,
         seed: int = 0) -> Dataset:
    """Load a data set by name.

    ``drop_incomplete`` removes rows with a missing value (Adult marks them ``?``; the
    literature uses its 30,162 complete rows). ``n``, ``d`` and ``seed`` apply to ``synthetic``.
    """
    if name == "synthetic":
        return synthetic(n, d, seed)
    if name not in _REFERENCE:
        raise InputError(f"unknown data set '{name}' (known: {', '.join(names())})")
    ref = _REFERENCE[name]
    path = _locate(ref.filename)
    na_values = ["?"] if name.startswith("adult") else []
    frame = pd.read_csv(path, keep_default_na=False, na_values=["", *na_values])
    if drop_incomplete:
        frame = frame.dropna().reset_index(drop=True)
    frame, schema = ref.build(frame, path.parent)
    return Dataset(name=name, frame=frame, schema=schema, description=ref.description)


def taxonomy_copies(schema: Schema, schema_path: str | Path
                    ) -> tuple[Schema, list[tuple[Path, Path]]]:
    """Point each taxonomy of ``schema`` at a copy beside the schema file ``schema_path``.

    A schema written with these copies is self-contained: its taxonomy paths are bare file
    names, so the schema and its taxonomies can be moved, shared or edited together. Nothing
    is written here; the caller copies the files (all or nothing, with the schema).

    Parameters
    ----------
    schema : Schema
        The schema whose attributes may carry a taxonomy file.
    schema_path : str or Path
        Where the schema will be written. The copy of attribute ``A``'s taxonomy is named
        ``<schema stem>.<A><suffix of the taxonomy file>`` in the same folder (``am.yaml``
        gives ``am.occupation.csv``).

    Returns
    -------
    Schema
        ``schema`` with every taxonomy path replaced by its copy's.
    list of (Path, Path)
        ``(taxonomy file, copy)`` for every attribute with a taxonomy, in schema order.
    """
    schema_path = Path(schema_path)
    copies: list[tuple[Path, Path]] = []
    attributes = []
    for attribute in schema:
        if attribute.taxonomy is not None:
            safe = re.sub(r"[^A-Za-z0-9._-]+", "_", attribute.name)
            copy = schema_path.with_name(
                f"{schema_path.stem}.{safe}{attribute.taxonomy.suffix}")
            copies.append((attribute.taxonomy, copy))
            attribute = replace(attribute, taxonomy=copy)
        attributes.append(attribute)
    return Schema(tuple(attributes)), copies


# -- synthetic data ------------------------------------------------------------------------

def _lognormal(mu: float, sigma: float, loading: float
               ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """exp(mu + sigma (r w + sqrt(1 - r^2) e)): a log-normal variable loading r on wealth w."""
    def make(w: np.ndarray, a: np.ndarray, e: np.ndarray) -> np.ndarray:
        return np.exp(mu + sigma * (loading * w + np.sqrt(1 - loading * loading) * e))
    return make


@dataclass(frozen=True)
class _Variable:
    name: str
    domain: tuple[float, float]
    make: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (wealth, age, noise)
    integer: bool = True


_TEMPLATES: tuple[_Variable, ...] = (
    _Variable("age", (16, 100), lambda w, a, e: 16 + 74 * ndtr(0.95 * a + 0.3 * e) ** 1.3),
    _Variable("income", (0, 2_000_000),
              lambda w, a, e: np.exp(10.3 + 0.6 * (0.75 * w + 0.35 * a + 0.55 * e))),
    _Variable("expenses", (0, 1_000_000),
              lambda w, a, e: np.exp(9.8 + 0.45 * (0.8 * w + 0.6 * e))),
    _Variable("savings", (0, 20_000_000),
              lambda w, a, e: (ndtr(1.2 * w + 0.5 * a + 0.4 * e) > 0.25)
              * np.exp(8.2 + 1.2 * (0.7 * w + 0.5 * a + 0.5 * e))),
    _Variable("hours", (0, 168),
              lambda w, a, e: np.clip(38 + 8 * (0.35 * w - 0.4 * a + 0.85 * e), 0, 90)),
    _Variable("household_size", (1, 15),
              lambda w, a, e: 1 + np.floor(np.exp(0.6 + 0.45 * (0.3 * a + 0.9 * e)))),
)
_REGIONS = ("North", "South", "East", "West", "Centre")
_EDUCATION = ("primary", "secondary", "vocational", "bachelor", "master")


SYNTHETIC_VALUES = 250_000_000
"""The most values (rows × (d + 2) columns) :func:`synthetic` generates in one call."""


def synthetic(n: int = 1000, d: int = 6, seed: int = 0) -> Dataset:
    """Synthetic microdata: ``d`` skewed, correlated numeric attributes and two categories.

    Two latent factors (wealth and age) drive every attribute, so attributes are correlated;
    money amounts are log-normal (right-skewed), savings are zero-inflated. The first six
    columns are ``age, income, expenses, savings, hours, household_size``; beyond six, columns
    ``x7, x8, ...`` are further log-normal amounts. ``region`` (nominal) and ``education``
    (ordinal) follow the factors too. Every domain is declared by construction (values are
    clamped into it), so the data set works with every method, DP included.
    """
    if n < 1:
        raise InputError(f"synthetic data needs n >= 1, got {n}")
    if d < 1:
        raise InputError(f"synthetic data needs d >= 1, got {d}")
    if n * (d + 2) > SYNTHETIC_VALUES:
        raise InputError(f"synthetic data of n = {n:,} rows and d = {d:,} columns is more than "
                         f"{SYNTHETIC_VALUES:,} values (about 2 GB): write it in parts "
                         "(several exports with different seeds)")
    if seed < 0:
        raise InputError(f"the seed must be a non-negative integer, got {seed}")
    rng = np.random.default_rng(seed)
    wealth = rng.standard_normal(n)
    age = 0.35 * wealth + np.sqrt(1 - 0.35**2) * rng.standard_normal(n)
    variables = list(_TEMPLATES[:d])
    for j in range(len(variables), d):
        sigma = 0.4 + 0.8 * ((j * 0.618) % 1.0)
        mu = 7.0 + (j % 4)
        loading = 0.3 + 0.6 * ((j * 0.377) % 1.0)
        top = float(np.ceil(np.exp(mu + 7.5 * sigma) / 1000) * 1000)
        variables.append(_Variable(f"x{j + 1}", (0, top), _lognormal(mu, sigma, loading)))
    columns: dict[str, np.ndarray] = {}
    attributes: list[Attribute] = []
    for variable in variables:
        values = variable.make(wealth, age, rng.standard_normal(n))
        lo, hi = variable.domain
        values = np.clip(np.round(values) if variable.integer else values, lo, hi)
        columns[variable.name] = values.astype(np.int64) if variable.integer else values
        attributes.append(Attribute(variable.name, Role.QUASI, Kind.NUMERIC, domain=(lo, hi)))
    scores = np.outer(wealth, [0.6, -0.5, 0.2, 0.0, -0.3]) + rng.gumbel(size=(n, 5))
    columns["region"] = np.asarray(_REGIONS, dtype=object)[np.argmax(scores, axis=1)]
    schooling = 0.7 * wealth - 0.25 * age + 0.65 * rng.standard_normal(n)
    levels = np.searchsorted([-1.0, -0.1, 0.5, 1.3], schooling)
    columns["education"] = np.asarray(_EDUCATION, dtype=object)[levels]
    attributes.append(Attribute("region", Role.OTHER, Kind.NOMINAL, domain=_REGIONS))
    attributes.append(Attribute("education", Role.OTHER, Kind.ORDINAL, domain=_EDUCATION))
    frame = pd.DataFrame(columns)
    frame["region"] = frame["region"].astype(str)
    frame["education"] = frame["education"].astype(str)
    return Dataset(
        name="synthetic",
        frame=frame,
        schema=Schema(tuple(attributes)),
        description=f"synthetic microdata, n={n}, d={d}, seed={seed}",
    )
