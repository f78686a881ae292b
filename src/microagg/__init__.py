"""microagg: publish microdata with a stated privacy guarantee through microaggregation.

The public API is re-exported here; see the README for a tour and DESIGN.md for the map.
"""

from importlib.metadata import PackageNotFoundError, version

from microagg import datasets
from microagg.aggregate import cluster_means, replace_by_means
from microagg.distance import domain_normalize, scale
from microagg.errors import (
    DataNotFoundError,
    InputError,
    MicroaggError,
    PrivacyError,
    PrivacyLeakWarning,
    SchemaError,
)
from microagg.io import read_table, write_table
from microagg.mechanisms import Budget
from microagg.metrics.evaluate import evaluate
from microagg.models import KAnonymity, TCloseness, equivalence_classes, k_anonymity, t_closeness
from microagg.options import Calibration, DPMethod, Linkage, Method, Reference, Scaling
from microagg.partition.insensitive import corner_sequence, insensitive
from microagg.partition.mdav import mdav, vmdav
from microagg.partition.univariate import individual_ranking, optimal_univariate
from microagg.release import (
    GuaranteeScope,
    KAnonymityReport,
    PrivacyReport,
    Release,
    dp_individual_ranking,
    dp_insensitive,
    dp_laplace,
    microaggregate,
)
from microagg.schema import Attribute, Kind, Role, Schema
from microagg.table import Table, decode, encode

try:
    __version__ = version("microagg")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "Attribute",
    "Budget",
    "Calibration",
    "DPMethod",
    "DataNotFoundError",
    "GuaranteeScope",
    "InputError",
    "KAnonymity",
    "KAnonymityReport",
    "Kind",
    "Linkage",
    "Method",
    "MicroaggError",
    "PrivacyError",
    "PrivacyLeakWarning",
    "PrivacyReport",
    "Reference",
    "Release",
    "Role",
    "Scaling",
    "Schema",
    "SchemaError",
    "TCloseness",
    "Table",
    "__version__",
    "cluster_means",
    "corner_sequence",
    "datasets",
    "decode",
    "domain_normalize",
    "dp_individual_ranking",
    "dp_insensitive",
    "dp_laplace",
    "encode",
    "equivalence_classes",
    "evaluate",
    "individual_ranking",
    "insensitive",
    "k_anonymity",
    "mdav",
    "microaggregate",
    "optimal_univariate",
    "read_table",
    "replace_by_means",
    "scale",
    "t_closeness",
    "vmdav",
    "write_table",
]
