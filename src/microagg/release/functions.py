"""The release functions: one-line twins of the method objects, for a call in one line
(``microaggregate(frame, k=5)`` is ``MDAV(k=5).release(frame)``), as scikit-learn keeps
``mean_shift`` beside ``MeanShift``. ``method`` names the method of the family; the other
keywords go to the method's parameters or to its release call, and an option the method does
not take is refused by name (:func:`~microagg.release.methods.base.build`)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import pandas as pd

from microagg.release.base import Release
from microagg.release.methods import (
    CrossMoment,
    DPIndividualRanking,
    DPInsensitive,
    DPLaplace,
    Family,
    GlobalRecoding,
    InvariantPram,
    LocalSuppression,
    RecordSwap,
    ReleaseMethod,
    family,
    lookup,
)
from microagg.release.methods.base import build
from microagg.release.reports.key_reports import KeyReport
from microagg.release.reports.report import (
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
)

__all__ = ["dp_cross_moment", "dp_individual_ranking", "dp_insensitive", "dp_laplace",
           "dp_release", "make_method", "mask", "microaggregate", "pram", "recode", "release",
           "suppress", "swap", "tclose"]


def make_method(of: Family, method: str | type[ReleaseMethod],
                options: Mapping[str, Any]) -> ReleaseMethod:
    """The method ``method`` of family ``of`` with ``options`` (``None``: not given)."""
    return build(lookup(of, method), options, family(of))


def release(of: Family, frame: pd.DataFrame, method: str | type[ReleaseMethod],
            options: Mapping[str, Any]) -> Release[Any]:
    """Release ``frame`` by ``method`` of family ``of``: ``options`` are split between the
    method's parameters and the keywords of its ``release``."""
    cls = lookup(of, method)
    call = set(inspect.signature(cls.release).parameters) - {"self", "frame"}
    made = make_method(of, cls, {k: v for k, v in options.items() if k not in call})
    return made.release(frame, **{k: v for k, v in options.items() if k in call})


def microaggregate(frame: pd.DataFrame, *, method: str = "mdav",
                   **options: Any) -> Release[KAnonymityReport]:
    """k-anonymous microaggregation of ``frame`` by ``method`` (mdav, vmdav,
    individual-ranking, optimal-univariate, insensitive); ``options`` are the method's
    parameters (``k``, ``scaling``, ``gamma``, ``reference``) and the keywords of
    :meth:`~microagg.release.families.kanonymity.KAnonymityMethod.release`.

    Examples
    --------
    >>> from microagg import datasets
    >>> data = datasets.synthetic(100, 3, seed=0)
    >>> microaggregate(data.frame, k=5, schema=data.schema).report.method
    'mdav'
    """
    return release(Family.K_ANONYMITY, frame, method, options)


def tclose(frame: pd.DataFrame, *, method: str = "t-closeness-first",
           **options: Any) -> Release[TClosenessReport]:
    """k-anonymous t-closeness of ``frame`` by ``method`` (t-closeness-first,
    k-anonymity-first, merge); ``options`` are the method's parameters (``k``, ``t``,
    ``distance``, ``scaling``, ``microaggregation``) and the keywords of
    :meth:`~microagg.release.families.tcloseness.TCloseMethod.release` (``quasi``, ``confidential``
    …)."""
    return release(Family.T_CLOSENESS, frame, method, options)


def mask(frame: pd.DataFrame, *, method: str, **options: Any) -> Release[MaskingReport]:
    """Mask ``frame`` by ``method`` (correlated-noise with ``gamma``, multiplicative-noise with
    ``s``, rank-swap with ``fraction``); the other keywords as in
    :meth:`~microagg.release.families.masking.MaskingMethod.release`."""
    return release(Family.MASKING, frame, method, options)


def dp_release(frame: pd.DataFrame, *, method: str = "insensitive",
               **options: Any) -> Release[PrivacyReport]:
    """The ε-DP release of ``frame`` by ``method`` (insensitive, individual-ranking, laplace,
    cross-moment); ``options`` are the method's parameters and the keywords of
    :meth:`~microagg.release.families.dp.DPMethod.release`."""
    return release(Family.DIFFERENTIAL_PRIVACY, frame, method, options)


def dp_insensitive(frame: pd.DataFrame, **options: Any) -> Release[PrivacyReport]:
    """:class:`~microagg.release.methods.dp_insensitive.DPInsensitive` in one call."""
    return release(Family.DIFFERENTIAL_PRIVACY, frame, DPInsensitive, options)


def dp_individual_ranking(frame: pd.DataFrame, **options: Any) -> Release[PrivacyReport]:
    """:class:`~microagg.release.methods.dp_individual_ranking.DPIndividualRanking` in one
    call."""
    return release(Family.DIFFERENTIAL_PRIVACY, frame, DPIndividualRanking, options)


def dp_laplace(frame: pd.DataFrame, **options: Any) -> Release[PrivacyReport]:
    """:class:`~microagg.release.methods.dp_laplace.DPLaplace` in one call."""
    return release(Family.DIFFERENTIAL_PRIVACY, frame, DPLaplace, options)


def dp_cross_moment(frame: pd.DataFrame, **options: Any) -> Release[PrivacyReport]:
    """:class:`~microagg.release.methods.cross_moment.CrossMoment` in one call."""
    return release(Family.DIFFERENTIAL_PRIVACY, frame, CrossMoment, options)


def recode(frame: pd.DataFrame, **options: Any) -> Release[KeyReport]:
    """:class:`~microagg.release.methods.global_recoding.GlobalRecoding` in one call
    (``levels``, ``breaks``; ``keys``, ``schema``, ``roles``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"age": [17, 40, 70]})
    >>> recode(frame, breaks={"age": [0, 18, 65, 120]}).frame["age"].tolist()
    ['[0, 18)', '[18, 65)', '[65, 120]']
    """
    return release(Family.KEYS, frame, GlobalRecoding, options)


def suppress(frame: pd.DataFrame, **options: Any) -> Release[KeyReport]:
    """:class:`~microagg.release.methods.local_suppression.LocalSuppression` in one call
    (``k``, ``importance``, ``combinations``; ``keys``, ``schema``, ``roles``)."""
    return release(Family.KEYS, frame, LocalSuppression, options)


def pram(frame: pd.DataFrame, **options: Any) -> Release[KeyReport]:
    """:class:`~microagg.release.methods.pram.InvariantPram` in one call (``retention``,
    ``alpha``; ``keys``, ``schema``, ``roles``, ``rng``)."""
    return release(Family.KEYS, frame, InvariantPram, options)


def swap(frame: pd.DataFrame, **options: Any) -> Release[KeyReport]:
    """:class:`~microagg.release.methods.record_swap.RecordSwap` in one call
    (``hierarchy``, ``similar``, ``risk_variables``, ``swap_rate``, ``k`` …; ``roles``
    naming the household column, ``keys``, ``schema``, ``rng``)."""
    return release(Family.KEYS, frame, RecordSwap, options)
