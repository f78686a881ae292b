"""The ``microagg`` application: the Typer app, its console, its root options and the table of
its commands. Every command module adds its command to :data:`app`.

The commands are declared in :data:`COMMANDS` (name, module, one-line help): ``microagg
--help`` is written from this table alone, and a command's module (with the library it calls)
is imported only when that command runs or its own help is asked for (:class:`LazyGroup`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer
import typer.main
from typer.core import TyperGroup

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["COMMANDS", "DATASET_NAMES", "HELP_OPTIONS", "LazyGroup", "app", "command",
           "datasets_app", "out"]

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
DATASET_NAMES = ("census, eia, tarragona, adult, adult-categorical, adult-mixed, synthetic or "
                 "census-synthetic")

COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "Verify k-anonymity, l-diversity and/or t-closeness of a table."),
    "risk": ("risk", "Risk of categorical keys: frequencies, individual risk, SUDA2, "
             "l-diversity."),
    "evaluate": ("evaluate", "Utility loss and disclosure risk of a masked table."),
    "schema": ("schema", "Write the roles and kinds read off a table as a schema to edit."),
    "microaggregate": ("microaggregate", "k-anonymity: replace quasi-identifiers by cluster "
                       "means."),
    "tclose": ("tclose", "k-anonymous t-closeness: merge, k-anonymity-first, "
               "t-closeness-first."),
    "dp": ("dp", "ε-differential privacy (insensitive, individual-ranking, cross-moment, "
           "laplace)."),
    "mask": ("mask", "Mask numeric columns: correlated noise, multiplicative noise, rank "
             "swapping, no ex-ante guarantee."),
    "recode": ("keys", "Recode key variables: to a level of their taxonomy, or numbers to "
               "intervals."),
    "suppress": ("keys", "Suppress key values to k-anonymity (local suppression, as "
                 "sdcMicro's localSuppression)."),
    "pram": ("keys", "Post-randomize key variables (invariant PRAM: the expected marginal "
             "kept)."),
    "swap": ("swap", "Targeted record swapping of households within a geographic hierarchy "
             "(census)."),
    "topcode": ("keys", "Top and bottom coding of numeric columns, at a value or a quantile."),
    "compare": ("compare", "Compare methods at equal risk (or equal utility) and rank them "
                "by the utility they keep (numeric columns or categorical keys)."),
    "run": ("run", "Apply a recipe: its steps in order, risk after each."),
    "ui": ("ui", "Serve the web application on this machine (a browser page)."),
    "demo": ("demo", "End-to-end run on embedded synthetic data."),
    "datasets": ("datasets", "Reference data sets: list, export."),
}
"""Every command, in the order ``--help`` lists them: the module of :mod:`microagg.cli` that
registers it and its one-line help."""


class LazyGroup(TyperGroup):
    """The program's command group: it lists the commands of :data:`COMMANDS` and builds one
    (importing its module) only when it is looked up."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"microagg.cli.{COMMANDS[cmd_name][0]}")
            self.commands[cmd_name] = _click_command(cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands and their one-line help, from :data:`COMMANDS` (no module imported)."""
        rows = [(name, inspect.cleandoc(short).strip()) for name, (_, short) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _click_command(name: str) -> Any:
    """The Click command of the command ``name``, once its module has registered it."""
    if name == "datasets":
        return typer.main.get_group_from_info(
            typer.models.TyperInfo(datasets_app, name="datasets"),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode, suggest_commands=app.suggest_commands)
    info = next(i for i in app.registered_commands if i.name == name)
    built = typer.main.get_command_from_info(
        info, pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode)
    if built.callback is not None:
        built.callback = _numba_ready(built.callback)
    return built


def _numba_ready(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback``, run once numba's first call is prepared
    (:func:`microagg.core.numba_runtime.load_blas`): when the command runs, not for its
    help."""

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        from microagg.core.numba_runtime import load_blas

        load_blas()
        return callback(*args, **kwargs)

    return run


app = typer.Typer(
    name="microagg",
    cls=LazyGroup,
    context_settings=HELP_OPTIONS,
    help="Publish microdata with a stated privacy guarantee through microaggregation.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
datasets_app = typer.Typer(help=f"Reference data sets ({DATASET_NAMES}).",
                           short_help=COMMANDS["datasets"][1],
                           no_args_is_help=True, context_settings=HELP_OPTIONS)


def command(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the command ``name`` on :data:`app`, with its one-line help from
    :data:`COMMANDS`."""
    return app.command(name, short_help=COMMANDS[name][1])


def __getattr__(name: str) -> Any:
    if name == "out":  # the console, made on first use: rich takes 0.1 s to import
        from rich.console import Console

        globals()["out"] = Console(highlight=False, soft_wrap=True)
        return globals()["out"]
    raise AttributeError(f"module 'microagg.cli.app' has no attribute '{name}'")


if TYPE_CHECKING:
    out: Console


def _version(value: bool) -> None:
    if value:
        from microagg.version import installed_version

        console: Any = globals().get("out") or __getattr__("out")
        console.print(f"microagg {installed_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Publish microdata with a stated privacy guarantee through microaggregation."""
