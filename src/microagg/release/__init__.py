"""End-to-end releases: a masked table plus a report of what was done to it."""

from microagg.release.base import Release
from microagg.release.baselines import dp_laplace
from microagg.release.dp_insensitive import dp_insensitive
from microagg.release.dp_moments import dp_cross_moment
from microagg.release.dp_ranking import dp_individual_ranking
from microagg.release.kanonymity import microaggregate
from microagg.release.masking import mask
from microagg.release.report import (
    GuaranteeScope,
    KAnonymityReport,
    MaskingReport,
    PrivacyReport,
    TClosenessReport,
)
from microagg.release.tcloseness import tclose

__all__ = ["GuaranteeScope", "KAnonymityReport", "MaskingReport", "PrivacyReport", "Release",
           "TClosenessReport", "dp_cross_moment", "dp_individual_ranking", "dp_insensitive",
           "dp_laplace", "mask", "microaggregate", "tclose"]
