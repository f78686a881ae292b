"""Every release method, one module each; the registry below is the only list of them.

A new method is one module (a class of its family's base: ``KAnonymityMethod``,
``TCloseMethod``, ``MaskingMethod``, ``DPMethod``, ``KeyMethod``, decorated with
``release_method``) plus its import and its entry in ``METHODS`` here; the command line, the
function twins, the transformer, the top-level API and the contract tests find it from this
list and its fields.
"""

from __future__ import annotations

from microagg.errors import InputError
from microagg.release.methods.base import Family, ReleaseMethod
from microagg.release.methods.correlated_noise import CorrelatedNoise
from microagg.release.methods.cross_moment import CrossMoment
from microagg.release.methods.dp_individual_ranking import DPIndividualRanking
from microagg.release.methods.dp_insensitive import DPInsensitive
from microagg.release.methods.dp_laplace import DPLaplace
from microagg.release.methods.global_recoding import GlobalRecoding
from microagg.release.methods.individual_ranking import IndividualRanking
from microagg.release.methods.insensitive import Insensitive
from microagg.release.methods.k_anonymity_first import KAnonymityFirst
from microagg.release.methods.local_suppression import LocalSuppression
from microagg.release.methods.mdav import MDAV
from microagg.release.methods.merge import Merge
from microagg.release.methods.multiplicative_noise import MultiplicativeNoise
from microagg.release.methods.optimal_univariate import OptimalUnivariate
from microagg.release.methods.pram import InvariantPram
from microagg.release.methods.rank_swap import RankSwap
from microagg.release.methods.record_swap import RecordSwap
from microagg.release.methods.t_closeness_first import TClosenessFirst
from microagg.release.methods.top_coding import TopBottomCoding
from microagg.release.methods.vmdav import VMDAV

METHODS: tuple[type[ReleaseMethod], ...] = (
    MDAV,
    VMDAV,
    IndividualRanking,
    OptimalUnivariate,
    Insensitive,
    TClosenessFirst,
    KAnonymityFirst,
    Merge,
    CorrelatedNoise,
    MultiplicativeNoise,
    RankSwap,
    DPInsensitive,
    DPIndividualRanking,
    DPLaplace,
    CrossMoment,
    TopBottomCoding,
    GlobalRecoding,
    LocalSuppression,
    InvariantPram,
    RecordSwap,
)
"""Every release method, in the order the command line lists them."""

__all__ = ["METHODS", "Family", "ReleaseMethod", "family", "lookup",
           *(method.__name__ for method in METHODS)]


def family(of: Family) -> tuple[type[ReleaseMethod], ...]:
    """The methods of one family (one command)."""
    return tuple(m for m in METHODS if m.family is of)


def lookup(of: Family, name: str | type[ReleaseMethod]) -> type[ReleaseMethod]:
    """The method of family ``of`` called ``name`` (its ``--method``)."""
    if isinstance(name, type):
        return name
    members = family(of)
    text = str(name).strip().lower()
    for method in members:
        if method.name == text:
            return method
    raise InputError(f"unknown method '{name}' (choose one of: "
                     f"{', '.join(m.name for m in members)})")
