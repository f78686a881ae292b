"""microagg: publish microdata with a stated privacy guarantee through microaggregation.

The public API is re-exported here; see the README for a tour and docs/design.md for the map.
Names are imported on first use (PEP 562), so that ``microagg --version`` and ``--help`` do
not load pandas, scipy and numba.
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the module that defines it.
_EXPORTS = {
    "Target": "microagg.options",
    "RiskAggregate": "microagg.options",
    "RankScale": "microagg.options",
    "rank_risk": "microagg.evaluation.risk",
    "MaskingReport": "microagg.release",
    "mask": "microagg.release",
    "recode": "microagg.release",
    "suppress": "microagg.release",
    "pram": "microagg.release",
    "swap": "microagg.release",
    "KeyReport": "microagg.release",
    "rank_swap": "microagg.core.masking",
    "multiplicative_noise": "microagg.core.masking",
    "correlated_noise": "microagg.core.masking",
    "CompareMethod": "microagg.options",
    "Comparison": "microagg.evaluation.compare",
    "compare_keys": "microagg.evaluation.key_compare",
    "RiskKind": "microagg.options",
    "TargetMatch": "microagg.options",
    "Attribute": "microagg.data.schema",
    "Budget": "microagg.release.dp.mechanisms",
    "Calibration": "microagg.options",
    "cluster_means": "microagg.core.aggregate",
    "cluster_moments": "microagg.core.aggregate",
    "Clustering": "microagg.options",
    "corner_sequence": "microagg.partition.insensitive",
    "DataNotFoundError": "microagg.errors",
    "datasets": "microagg.data.datasets",
    "decode": "microagg.data.table",
    "domain_normalize": "microagg.core.distance",
    "dp_cross_moment": "microagg.release",
    "dp_individual_ranking": "microagg.release",
    "dp_insensitive": "microagg.release",
    "dp_laplace": "microagg.release",
    "DPMethod": "microagg.release.families.dp",
    "Method": "microagg.options",
    "encode": "microagg.data.table",
    "equivalence_classes": "microagg.core.verifiers",
    "evaluate": "microagg.evaluation.evaluate",
    "GuaranteeScope": "microagg.release",
    "individual_ranking": "microagg.partition.univariate",
    "InputError": "microagg.errors",
    "insensitive": "microagg.partition.insensitive",
    "k_anonymity": "microagg.core.verifiers",
    "KAnonymity": "microagg.core.verifiers",
    "KAnonymityReport": "microagg.release",
    "Kind": "microagg.data.schema",
    "Linkage": "microagg.options",
    "mdav": "microagg.partition.mdav",
    "MomentNoise": "microagg.options",
    "MomentVariant": "microagg.options",
    "MicroaggError": "microagg.errors",
    "microaggregate": "microagg.release",
    "optimal_univariate": "microagg.partition.univariate",
    "PrivacyError": "microagg.errors",
    "PrivacyLeakWarning": "microagg.errors",
    "PrivacyReport": "microagg.release",
    "read_table": "microagg.data.io",
    "Reference": "microagg.options",
    "Release": "microagg.release",
    "replace_by_means": "microagg.core.aggregate",
    "Role": "microagg.data.schema",
    "scale": "microagg.core.distance",
    "Scaling": "microagg.options",
    "Schema": "microagg.data.schema",
    "SchemaError": "microagg.errors",
    "t_closeness": "microagg.core.verifiers",
    "tclose": "microagg.release",
    "TClosenessMethod": "microagg.options",
    "TClosenessReport": "microagg.release",
    "GroundDistance": "microagg.options",
    "Table": "microagg.data.table",
    "TCloseness": "microagg.core.verifiers",
    "vmdav": "microagg.partition.mdav",
    "write_table": "microagg.data.io",
    "ReleaseMethod": "microagg.release.methods",
    "METHODS": "microagg.release.methods",
    "Microaggregator": "microagg.release.transformer",
    "categorical_risk": "microagg.risk",
    "CategoricalRisk": "microagg.risk",
    "LDiversityKind": "microagg.options",
}

# Names that are modules themselves rather than something a module defines.
_SUBMODULES = frozenset({"datasets"})

__all__ = ["__version__", *sorted(_EXPORTS, key=str.lower)]

def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on first use: the command line's start-up needs no metadata
        from microagg.version import installed_version

        globals()[name] = installed_version()
        return globals()[name]
    module = _EXPORTS.get(name)
    if module is None:
        # a class name; anything else (a submodule not imported yet) is not looked up here
        method = _method_class(name) if name[:1].isupper() else None
        if method is None:
            raise AttributeError(f"module 'microagg' has no attribute '{name}'")
        globals()[name] = method
        return method
    loaded = importlib.import_module(module)
    value = loaded if name in _SUBMODULES else getattr(loaded, name)
    globals()[name] = value
    return value


def _method_class(name: str) -> Any:
    """A registered release method's class by its class name (``microagg.MDAV``): every
    method of the registry is public without being listed here."""
    from microagg.release.methods import METHODS

    return next((m for m in METHODS if m.__name__ == name), None)


def __dir__() -> list[str]:
    from microagg.release.methods import METHODS

    return sorted(set(globals()) | set(_EXPORTS) | {m.__name__ for m in METHODS})
