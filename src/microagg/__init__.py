"""microagg: publish microdata with a stated privacy guarantee through microaggregation.

The public API is re-exported here; see the README for a tour and DESIGN.md for the map.
"""

from importlib.metadata import PackageNotFoundError, version

from microagg import datasets
from microagg.errors import DataNotFoundError, InputError, MicroaggError, PrivacyError, SchemaError
from microagg.io import read_table, write_table
from microagg.metrics.evaluate import evaluate
from microagg.models import KAnonymity, TCloseness, equivalence_classes, k_anonymity, t_closeness
from microagg.schema import Attribute, Kind, Role, Schema
from microagg.table import Table, decode, encode

try:
    __version__ = version("microagg")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "Attribute",
    "DataNotFoundError",
    "InputError",
    "KAnonymity",
    "Kind",
    "MicroaggError",
    "PrivacyError",
    "Role",
    "Schema",
    "SchemaError",
    "TCloseness",
    "Table",
    "__version__",
    "datasets",
    "decode",
    "encode",
    "equivalence_classes",
    "evaluate",
    "k_anonymity",
    "read_table",
    "t_closeness",
    "write_table",
]
