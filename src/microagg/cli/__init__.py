"""The ``microagg`` command line: one module per command, each thin (parse, call the
library, print); the method options are generated from the method objects' fields
(:mod:`microagg.cli.methods`) and library messages name flags through one table
(:mod:`microagg.cli.flags`)."""

from microagg.cli.program import app, entry, main

__all__ = ["app", "entry", "main"]
