"""The base of every release method: a frozen, keyword-only dataclass that owns its parameters.

A method class names itself (``name``, the ``--method`` of its command), its ``family`` (the
command and pipeline it belongs to: :class:`Family`) and says in one line what it does
(``summary``). Its parameters are :func:`~microagg.release.params.param` fields, checked when
the object is made; an option the method does not have is refused by :func:`build`, the one
place where that rule lives. The family's base class (``KAnonymityMethod``, ``DPMethod`` …)
holds the release pipeline and its shared rules; a method implements only its own step.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform

from microagg.errors import ParameterError
from microagg.release.params import method_fields, numpydoc_parameters, param, validate

__all__ = ["Family", "ReleaseMethod", "build", "release_method"]

if TYPE_CHECKING:
    import pandas as pd

    from microagg.data.schema import Schema
    from microagg.release.base import Release

M = TypeVar("M", bound=type)


class Family(StrEnum):
    """The families of release methods; each is one pipeline. The first four are one
    command each (``--method`` chooses the method); each method for categorical keys
    (``KEYS``) has a command of its own, its ``command`` (recode, suppress, pram)."""

    K_ANONYMITY = "microaggregate"
    T_CLOSENESS = "tclose"
    MASKING = "mask"
    DIFFERENTIAL_PRIVACY = "dp"
    KEYS = "keys"


@dataclass(frozen=True, kw_only=True)
class ReleaseMethod:
    """A release method and its parameters (subclasses add them as fields)."""

    name: ClassVar[str]
    family: ClassVar[Family]
    summary: ClassVar[str]
    records_alone: ClassVar[bool] = False
    """Whether each record's released values are a function of that record and the
    parameters alone (whether the step runs aside: :meth:`reads_other_records`), so that a
    table released in parts is the table released whole (:mod:`microagg.at_scale.per_record`)."""

    def __post_init__(self) -> None:
        validate(self)

    if TYPE_CHECKING:
        def release(self, frame: pd.DataFrame, *args: Any, **kwargs: Any) -> Release[Any]:
            """Release ``frame``; each family's base declares the keywords it takes."""

    def parameters(self) -> dict[str, Any]:
        """The method's parameters by name, as the report and a recipe state them."""
        return {f.name: getattr(self, f.name) for f in method_fields(self)}

    def reads_other_records(self) -> str | None:
        """Why one record's released values depend on other records (a partition, a
        quantile, a covariance read off the data), or ``None`` when each record is
        transformed on its own by public parameters. A differentially private step that
        follows a step with a reason protects that step's output, not the original table
        (:mod:`microagg.recipe.composition`); methods state this capability for themselves,
        and the cautious default is that they do read other records."""
        return "its output for one record depends on the other records"

    def named_columns(self) -> tuple[str, ...]:
        """The columns the method changes when its own parameters name them (global
        recoding: those of its breaks and levels), else ``()``: a step before a DP step
        then names them with its family's option (``columns``, ``keys``)."""
        return ()

    def output_schema(self, schema: Schema) -> Schema:
        """The schema of the table this method writes, from the schema of its input: the
        kinds, categories and declared missing values the next step of a recipe reads. A
        function of the declarations and the parameters alone, never of the data; the
        methods that keep every column's kind (all but global recoding) return ``schema``."""
        return schema

    def at_scale_refusal(self) -> str | None:
        """Why the Dask engine (:mod:`microagg.at_scale`) cannot run this method with these
        parameters, or ``None`` when it can: the engine refuses by this capability, which
        each method states for itself."""
        return "it runs on one machine only"


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field, param))
def release_method(cls: M) -> M:
    """Make ``cls`` a method class: a frozen, keyword-only dataclass whose docstring gets its
    numpydoc ``Parameters`` section from its fields (before ``References``), so the one
    declaration of a parameter is also its documentation."""
    made: Any = dataclass(frozen=True, kw_only=True)(cls)
    doc = inspect.cleandoc(made.__doc__ or "")
    section = numpydoc_parameters(method_fields(made))
    head, marker, tail = doc.partition("\nReferences\n")
    made.__doc__ = (f"{head.rstrip()}\n\n{section}\n{marker}{tail}" if marker
                    else f"{doc}\n\n{section}\n")
    return made


def build(cls: type[ReleaseMethod], options: Mapping[str, Any],
          family: tuple[type[ReleaseMethod], ...] = ()) -> ReleaseMethod:
    """The method ``cls`` made from ``options`` (name -> value, ``None`` for an option not
    given). An option given that ``cls`` has no parameter for is refused, naming the methods
    of ``family`` that take it: an option a method would ignore is an error, not silence."""
    own = {f.name for f in method_fields(cls)}
    needed = [f.name for f in method_fields(cls)
              if f.default is MISSING and options.get(f.name) is None]
    if needed:
        raise ParameterError(needed[0], f"is needed by {cls.name}")
    for name, value in options.items():
        if value is None or name in own:
            continue
        takers = [m.name for m in family if name in {f.name for f in method_fields(m)}]
        where = (f"{' and '.join(takers)} only" if takers else "no method")
        raise ParameterError(name, f"applies to {where}, not {cls.name}")
    return cls(**{name: value for name, value in options.items()
                  if name in own and value is not None})
