"""Sphinx configuration: the user guide (the README's sections), docs/ and the API reference.

Build with ``python -m sphinx -W -b html docs OUT`` (warnings are errors, as in the tests).
The API pages are written from the public modules' ``__all__`` by ``_ext/apipages.py`` into
``docs/api/`` (not committed). No network: intersphinx is off, nothing is downloaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from microagg import __version__

project = "microagg"
author = "microagg developers"
copyright = "microagg developers"
release = __version__
version = ".".join(__version__.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "apipages",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "figures/*.json"]
templates_path: list[str] = []

# The API reference: one page per public module, every name of its __all__ on it.
autosummary_generate = False  # apipages writes the pages; autosummary only draws tables
autodoc_member_order = "bysource"
# Types are read from the numpydoc sections: hints evaluated from postponed annotations
# name classes by their short names, which are ambiguous across modules (two Calibration).
autodoc_typehints = "none"
numpydoc_show_class_members = False  # autodoc's :members: lists them, once
numpydoc_class_members_toctree = False

# Markdown pages: the README's sections and docs/*.md as they are.
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = f"microagg {release}"
html_static_path: list[str] = []
