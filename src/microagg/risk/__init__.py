"""Disclosure risk of categorical key variables: frequencies, individual and household risk,
k-anonymity violations, l-diversity and SUDA2 (``microagg risk``); every measure is declared
in :mod:`microagg.risk.registry`.

The names below load on first use, so that the registry's declarations import without the
compiled kernels (``microagg risk --help`` builds its options from them)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from microagg.risk.categorical import DEFAULT_K, CategoricalRisk, categorical_risk
    from microagg.risk.individual import household_risk, individual_risk
    from microagg.risk.ldiversity import LDiversity, l_diversity
    from microagg.risk.suda import Suda, suda2

__all__ = ["DEFAULT_K", "CategoricalRisk", "LDiversity", "Suda", "categorical_risk",
           "household_risk", "individual_risk", "l_diversity", "suda2"]

_HOMES = {"DEFAULT_K": "categorical", "CategoricalRisk": "categorical",
          "categorical_risk": "categorical", "household_risk": "individual",
          "individual_risk": "individual", "LDiversity": "ldiversity",
          "l_diversity": "ldiversity", "Suda": "suda", "suda2": "suda"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'microagg.risk' has no attribute {name!r}")
    return getattr(importlib.import_module(f"microagg.risk.{_HOMES[name]}"), name)
