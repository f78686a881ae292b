"""The methods a comparison calibrates, each tied to its class in the registry
(:data:`~microagg.release.methods.METHODS`).

A comparison names its candidates (:class:`~microagg.options.CompareMethod`: ``dp-laplace``
is the DP family's ``laplace``, ``recode-then-suppress`` a combination) and searches one
parameter of each. What a candidate is follows from its class: whether its parameter is an
integer (the field's constraint), whether a release draws at random (it takes ``rng``),
whether it keeps the input's rows in order (not a DP release), and the recipe step that
releases what was measured (its family and name). Only what the registry cannot say is
written here: the parameter searched and whether a larger value protects more.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from microagg.evaluation.calibration import Candidate, Mask
from microagg.options import CompareMethod
from microagg.release.methods import (
    MDAV,
    CorrelatedNoise,
    DPIndividualRanking,
    DPLaplace,
    Family,
    GlobalRecoding,
    IndividualRanking,
    InvariantPram,
    LocalSuppression,
    MultiplicativeNoise,
    RankSwap,
    ReleaseMethod,
)
from microagg.release.params import Interval, Optional, method_fields

__all__ = ["COMPARED", "Compared", "candidate", "compared"]


@dataclass(frozen=True)
class Compared:
    """A compared method: its name in a comparison, its class in the registry, the
    parameter searched (``parameter``, a field of ``method`` unless ``step`` is false),
    whether a larger value protects more (``increasing``) and whether one recipe step of
    ``method`` releases what the comparison measured (``step``)."""

    name: CompareMethod
    method: type[ReleaseMethod]
    parameter: str
    increasing: bool = True
    step: bool = True

    @property
    def family(self) -> Family:
        return self.method.family

    @property
    def integer(self) -> bool:
        """Whether the parameter takes whole values (its field's constraint; a recoding
        level otherwise)."""
        for f in method_fields(self.method):
            if f.name == self.parameter:
                constraint = f.metadata["constraint"]
                inner = constraint.inner if isinstance(constraint, Optional) else constraint
                return isinstance(inner, Interval) and inner.kind is int
        return True

    @property
    def randomized(self) -> bool:
        """Whether a release draws at random (its ``release`` takes ``rng``, and the method
        does not say it is deterministic)."""
        takes = "rng" in inspect.signature(self.method.release).parameters
        return takes and bool(getattr(self.method, "randomized", True))

    @property
    def aligned(self) -> bool:
        """Whether the release keeps the input's rows in order (a DP release does not)."""
        return self.family is not Family.DIFFERENTIAL_PRIVACY


COMPARED: tuple[Compared, ...] = (
    Compared(CompareMethod.MDAV, MDAV, "k"),
    Compared(CompareMethod.INDIVIDUAL_RANKING, IndividualRanking, "k"),
    Compared(CompareMethod.CORRELATED_NOISE, CorrelatedNoise, "gamma"),
    Compared(CompareMethod.MULTIPLICATIVE_NOISE, MultiplicativeNoise, "s"),
    Compared(CompareMethod.RANK_SWAP, RankSwap, "fraction"),
    Compared(CompareMethod.DP_LAPLACE, DPLaplace, "epsilon", increasing=False),
    Compared(CompareMethod.DP_INDIVIDUAL_RANKING, DPIndividualRanking, "epsilon",
             increasing=False),
    Compared(CompareMethod.LOCAL_SUPPRESSION, LocalSuppression, "k"),
    Compared(CompareMethod.GLOBAL_RECODING, GlobalRecoding, "level", step=False),
    Compared(CompareMethod.RECODE_THEN_SUPPRESS, LocalSuppression, "k", step=False),
    Compared(CompareMethod.INVARIANT_PRAM, InvariantPram, "retention", increasing=False),
)
"""Every compared method (one entry per :class:`~microagg.options.CompareMethod`)."""


def compared(name: CompareMethod) -> Compared:
    """The entry of the compared method ``name``.

    Parameters
    ----------
    name : CompareMethod
        A compared method's name.

    Returns
    -------
    Compared
        Its entry in :data:`COMPARED`.

    Examples
    --------
    >>> from microagg.options import CompareMethod
    >>> compared(CompareMethod.DP_LAPLACE).parameter
    'epsilon'
    """
    return next(c for c in COMPARED if c.name is name)


def candidate(name: CompareMethod, low: float, high: float, mask: Mask, note: str = "",
              **more: Any) -> Candidate:
    """The :class:`Candidate` of ``name`` searched over [low, high] by ``mask``, its
    parameter and flags read off its entry (``more``: ``log``).

    Parameters
    ----------
    name : CompareMethod
        The compared method.
    low, high : float
        The interval its parameter is searched over.
    mask : callable
        Releases the table at a parameter value.
    note : str
        Said beside the method in the comparison's report.
    **more
        Further fields of :class:`Candidate` (``log``).

    Returns
    -------
    Candidate
        What the comparison searches.
    """
    entry = compared(name)
    return Candidate(name, entry.parameter, low, high, integer=entry.integer,
                     randomized=entry.randomized, increasing=entry.increasing,
                     aligned=entry.aligned, mask=mask, note=note, **more)
