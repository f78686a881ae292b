"""Releases: a masked table plus a report of what was done to it. Every release method is an
object of :mod:`microagg.release.methods`; the functions here are their one-line twins."""

from microagg.release.base import Release
from microagg.release.functions import (
    dp_cross_moment,
    dp_individual_ranking,
    dp_insensitive,
    dp_laplace,
    dp_release,
    mask,
    microaggregate,
    pram,
    recode,
    suppress,
    swap,
    tclose,
)
from microagg.release.methods import (
    MDAV,
    METHODS,
    VMDAV,
    CorrelatedNoise,
    CrossMoment,
    DPIndividualRanking,
    DPInsensitive,
    DPLaplace,
    GlobalRecoding,
    IndividualRanking,
    Insensitive,
    InvariantPram,
    KAnonymityFirst,
    LocalSuppression,
    Merge,
    MultiplicativeNoise,
    OptimalUnivariate,
    RankSwap,
    ReleaseMethod,
    TClosenessFirst,
)
from microagg.release.reports.key_reports import KeyReport
from microagg.release.reports.report import (
    GuaranteeScope,
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
)

__all__ = ["MDAV", "METHODS", "VMDAV", "CorrelatedNoise", "CrossMoment", "DPIndividualRanking",
           "DPInsensitive", "DPLaplace", "GlobalRecoding", "GuaranteeScope",
           "IndividualRanking", "Insensitive", "InvariantPram", "KAnonymityFirst",
           "KAnonymityReport", "KeyReport", "LocalSuppression", "MaskingReport", "Merge",
           "MultiplicativeNoise", "OptimalUnivariate", "PrivacyReport", "RankSwap", "Release",
           "ReleaseMethod", "TClosenessFirst", "TClosenessReport", "dp_cross_moment",
           "dp_individual_ranking", "dp_insensitive", "dp_laplace", "dp_release", "mask",
           "microaggregate", "pram", "recode", "suppress", "swap", "tclose"]
