"""The ``microagg`` application: the Typer app, its console and its root options. Every
command module adds its command to :data:`app`."""

from __future__ import annotations

import typer
from rich.console import Console

from microagg import __version__

__all__ = ["DATASET_NAMES", "HELP_OPTIONS", "app", "datasets_app", "out"]

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
DATASET_NAMES = "census, eia, tarragona, adult, adult-categorical, adult-mixed or synthetic"

app = typer.Typer(
    name="microagg",
    context_settings=HELP_OPTIONS,
    help="Publish microdata with a stated privacy guarantee through microaggregation.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
datasets_app = typer.Typer(help=f"Reference data sets ({DATASET_NAMES}).",
                           short_help="Reference data sets: list, export.",
                           no_args_is_help=True, context_settings=HELP_OPTIONS)

out = Console(highlight=False, soft_wrap=True)


def _version(value: bool) -> None:
    if value:
        out.print(f"microagg {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Publish microdata with a stated privacy guarantee through microaggregation."""
