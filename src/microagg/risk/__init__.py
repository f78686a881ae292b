"""Disclosure risk of categorical key variables: frequencies, individual and household risk,
k-anonymity violations, l-diversity and SUDA2 (``microagg risk``)."""

from microagg.risk.categorical import DEFAULT_K, CategoricalRisk, categorical_risk
from microagg.risk.individual import household_risk, individual_risk
from microagg.risk.ldiversity import LDiversity, l_diversity
from microagg.risk.suda import Suda, suda2

__all__ = ["DEFAULT_K", "CategoricalRisk", "LDiversity", "Suda", "categorical_risk",
           "household_risk", "individual_risk", "l_diversity", "suda2"]
