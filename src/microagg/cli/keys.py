"""``microagg recode | suppress | pram | topcode``: the methods for categorical keys, one
command each, and top/bottom coding (the masking method ``top-bottom-coding`` under a
command of its own). Each command's method options come from its method's fields
(:func:`~microagg.cli.methods.method_command`); the release and its report are written as
every family's (``OUT.report.json`` beside OUT)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import out
from microagg.cli.common import (
    DECIMAL,
    ENGINE_HELP,
    READS,
    SCHEDULER_HELP,
    STORAGE_OPTION_HELP,
    THOUSANDS,
    WORKERS_HELP,
    WRITES,
    engine_is_dask,
    names,
    print_json,
    progress_bar,
    schema_of,
    write_release,
    write_sidecar,
)
from microagg.cli.methods import method_command, option
from microagg.errors import ParameterError
from microagg.release.families.masking import MaskingMethod
from microagg.release.methods import (
    GlobalRecoding,
    InvariantPram,
    LocalSuppression,
    ReleaseMethod,
    TopBottomCoding,
    family,
)
from microagg.release.methods.base import build

__all__ = ["pram", "recode", "release_at_scale", "show_masking", "suppress", "topcode"]

INPUT = typer.Argument(..., metavar="IN", help=f"Table to protect ({READS}).")
OUTPUT = typer.Option(..., "-o", "--output", help=f"Protected table ({WRITES}); its report "
                      "goes to OUTPUT.report.json.")
JSON = typer.Option(False, "--json", help="Print the report as JSON.")
ENGINE = typer.Option("local", "--engine", help=ENGINE_HELP + " Each partition is recoded "
                      "on its own, as one machine recodes it.")
SCHEDULER = typer.Option(None, "--scheduler", help=SCHEDULER_HELP)
WORKERS = typer.Option(None, "--workers", help=WORKERS_HELP)
STORAGE = typer.Option(None, "--storage-option", help=STORAGE_OPTION_HELP)


def _run(cls: type[ReleaseMethod], options: dict[str, Any] | None, **given: Any) -> None:
    made: Any = build(cls, options or {}, family(cls.family))
    show = given.pop("show")
    write_release(made, input=given.pop("input"), schema_path=given.pop("schema"),
                  output=given.pop("output"), labels_out=None, title=made.name,
                  json_out=given.pop("json_out"), show=show, with_progress=False,
                  **given)


@method_command(GlobalRecoding, "recode", after="output")
def recode(
    input: Path = INPUT,
    output: Path = OUTPUT,
    keys: str | None = option("keys", "recode"),
    schema: Path | None = option("schema", "recode"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = JSON,
    engine: str = ENGINE,
    scheduler: str | None = SCHEDULER,
    workers: int | None = WORKERS,
    storage_option: list[str] | None = STORAGE,
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Global recoding: categories to a level of their taxonomy (--levels), numbers to
    intervals (--breaks); every record recoded the same way."""
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, roles=roles or None,
                      decimal=decimal, thousands=thousands):
        _at_scale(GlobalRecoding, options, input=input, output=output, schema=schema,
                  keys=names(keys, "--keys"), json_out=json_out, scheduler=scheduler,
                  workers=workers, storage=storage_option or [])
        return
    _run(GlobalRecoding, options, input=input, output=output, schema=schema,
         json_out=json_out, show=_show_recoding, decimal=decimal, thousands=thousands,
         keys=names(keys, "--keys"), roles=roles)


@method_command(LocalSuppression, "suppress", after="keys")
def suppress(
    input: Path = INPUT,
    output: Path = OUTPUT,
    keys: str | None = option("keys", "suppress"),
    schema: Path | None = option("schema", "suppress"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = JSON,
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " The codes of the "
                               "keys are suppressed together, as on one machine."),
    scheduler: str | None = SCHEDULER,
    workers: int | None = WORKERS,
    storage_option: list[str] | None = STORAGE,
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Local suppression: the fewest key values found are made missing so that every
    record shares its keys with at least k - 1 others (a missing value matching any value);
    verified on the written table."""
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, roles=roles or None,
                      decimal=decimal, thousands=thousands):
        _at_scale(LocalSuppression, options, input=input, output=output, schema=schema,
                  keys=names(keys, "--keys"), json_out=json_out, scheduler=scheduler,
                  workers=workers, storage=storage_option or [])
        return
    _run(LocalSuppression, options, input=input, output=output, schema=schema,
         json_out=json_out, show=_show_suppression, decimal=decimal, thousands=thousands,
         keys=names(keys, "--keys"), roles=roles)


@method_command(InvariantPram, "pram", after="keys")
def pram(
    input: Path = INPUT,
    output: Path = OUTPUT,
    keys: str | None = option("keys", "pram"),
    schema: Path | None = option("schema", "pram"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seed: int | None = option("seed", "pram"),
    json_out: bool = JSON,
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " The matrices come "
                               "from the keys' frequencies counted on the cluster; each "
                               "partition draws with a generator seeded by the seed and its "
                               "index (the draws differ from one machine's, the matrices do "
                               "not)."),
    scheduler: str | None = SCHEDULER,
    workers: int | None = WORKERS,
    storage_option: list[str] | None = STORAGE,
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Invariant PRAM: each value redrawn from its row of a transition matrix that keeps
    the expected marginal (per stratum when strata are declared); the matrices are in the
    report."""
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, roles=roles or None,
                      decimal=decimal, thousands=thousands):
        _at_scale(InvariantPram, options, input=input, output=output, schema=schema,
                  keys=names(keys, "--keys"), json_out=json_out, scheduler=scheduler,
                  workers=workers, storage=storage_option or [], seed=seed)
        return
    _run(InvariantPram, options, input=input, output=output, schema=schema,
         json_out=json_out, show=_show_pram, decimal=decimal, thousands=thousands,
         keys=names(keys, "--keys"), roles=roles, rng=seed)


@method_command(TopBottomCoding, "topcode", after="columns")
def topcode(
    input: Path = INPUT,
    output: Path = OUTPUT,
    columns: str | None = option("columns", "topcode"),
    schema: Path | None = option("schema", "topcode"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = JSON,
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP + " Quantile thresholds "
                               "are found on the cluster as one machine finds them; each "
                               "partition is then coded on its own."),
    scheduler: str | None = SCHEDULER,
    workers: int | None = WORKERS,
    storage_option: list[str] | None = STORAGE,
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Top and bottom coding: values above --top become --top, values below --bottom become
    --bottom (with --at quantile, each column's quantiles of those orders)."""
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, roles=roles or None,
                      decimal=decimal, thousands=thousands):
        _at_scale(TopBottomCoding, options, input=input, output=output, schema=schema,
                  keys=names(columns, "--columns"), json_out=json_out, scheduler=scheduler,
                  workers=workers, storage=storage_option or [])
        return
    _run(TopBottomCoding, options, input=input, output=output, schema=schema,
         json_out=json_out, show=show_masking, decimal=decimal, thousands=thousands,
         columns=names(columns, "--columns"), roles=roles)


def _at_scale(cls: type[ReleaseMethod], options: dict[str, Any] | None, **given: Any) -> None:
    """The method ``cls`` made from ``options``, on the Dask engine
    (:func:`release_at_scale`)."""
    release_at_scale(build(cls, options or {}, family(cls.family)), **given)


def release_at_scale(made: Any, *, input: Path, output: Path, schema: Path | None,
                     keys: list[str] | None, json_out: bool, scheduler: str | None,
                     workers: int | None, storage: list[str], seed: int | None = None) -> None:
    """The method ``made`` on the Dask engine (:func:`microagg.at_scale.release.release_at_scale`),
    its report beside the data set; ``keys`` are the masked columns of topcode and mask."""
    from microagg.at_scale import release
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.storage import parse_storage_options
    from microagg.data.io import json_text

    refusal = release.release_refusal(made)
    if refusal:
        raise ParameterError("engine", f"dask cannot run {made.name}: {refusal}")
    declared = schema_of(schema)
    storage_options = parse_storage_options(storage)
    target = check_dataset_output(output, input, storage_options)
    dataset = open_dataset(input, storage_options=storage_options)
    with dask_client(scheduler, workers) as client, \
            progress_bar(dataset.n, made.name) as progress:
        report = release.release_at_scale(client, made, dataset, target, columns=keys,
                                          schema=declared, seed=seed,
                                          storage_options=storage_options, progress=progress)
    sidecar = write_sidecar(target, json_text(report.to_dict()))
    if json_out:
        print_json(report.to_dict())
        return
    parts = f"{report.partitions} partition{'' if report.partitions == 1 else 's'}"
    if isinstance(made, TopBottomCoding):
        out.print(f"{report.method}: {report.records:,} records in {parts} -> {target}")
        for name in report.columns:
            at, coded = report.thresholds[name], report.coded[name]
            out.print("  " + name + ": " + ", ".join(
                f"{coded[end]:,} value(s) coded at the {end} {at[end]:g}"
                for end in ("bottom", "top") if at[end] is not None))
        out.print(f"  report: {sidecar}")
        return
    if isinstance(made, MaskingMethod):
        out.print(f"{report.method} {report.parameter}={report.value:g}: {report.records:,} "
                  f"records in {parts}, columns {', '.join(report.columns)} -> {target}")
        if report.utility["sse_percent"] is not None:
            out.print(f"  SSE/SST {report.utility['sse_percent']:.3g} %")
        out.print(f"  guarantee: {report.guarantee}")
        out.print(f"  report: {sidecar}")
        return
    changed = getattr(report, "changed", None) or [k for k, n in getattr(
        report, "suppressions", {}).items() if n]
    if isinstance(made, InvariantPram):
        changed = [k for k, n in report.changed_values.items() if n]
    out.print(f"{report.method}: {report.records:,} records in {parts}, columns "
              f"{', '.join(changed) or 'none changed'} -> {target}")
    before, after = report.before, report.after
    out.print(f"  keys {', '.join(report.keys)}: smallest f_k {before['smallest_class']} -> "
              f"{after['smallest_class']}, sample uniques {before['sample_uniques']:,} -> "
              f"{after['sample_uniques']:,}")
    if isinstance(made, LocalSuppression):
        per = ", ".join(f"{k} {n:,}" for k, n in report.suppressions.items() if n)
        out.print(f"  suppressed {report.total_suppressions:,} value(s)"
                  + (f": {per}" if per else ""))
        holds = "holds" if report.k_anonymity["holds"] else "does NOT hold"
        out.print(f"  k-anonymity {holds} on the data set written (smallest f_k "
                  f"{report.k_anonymity['smallest_class']})")
    if isinstance(made, InvariantPram):
        for name, count in report.changed_values.items():
            out.print(f"  {name}: {count:,} value(s) changed")
    out.print(f"  report: {sidecar}")


def _frequencies(report: Any) -> str:
    return (f"smallest f_k {report.before.smallest_class} -> {report.after.smallest_class}, "
            f"sample uniques {report.before.sample_uniques:,} -> "
            f"{report.after.sample_uniques:,}")


def _show_suppression(report: Any, output: Path) -> None:
    per = ", ".join(f"{key} {count:,}" for key, count in report.suppressions.items() if count)
    out.print(f"{report.method} k={report.k}: {report.records:,} records, keys "
              f"{', '.join(report.keys)} -> {output}")
    out.print(f"  suppressed {report.total_suppressions:,} value(s)"
              + (f": {per}" if per else ""))
    holds = "holds" if report.k_anonymity.holds else "does NOT hold"
    out.print(f"  k-anonymity {holds} on the written table (smallest f_k "
              f"{report.k_anonymity.smallest_class})")


def _show_recoding(report: Any, output: Path) -> None:
    out.print(f"{report.method}: {report.records:,} records -> {output}")
    for name, entry in report.recoded.items():
        out.print(f"  {name}: {entry.categories_before:,} -> {entry.categories_after:,} "
                  f"categories ({entry.to})")
    out.print(f"  keys {', '.join(report.keys)}: {_frequencies(report)}")


def _show_pram(report: Any, output: Path) -> None:
    out.print(f"{report.method} retention={report.retention:g} alpha={report.alpha:g}: "
              f"{report.records:,} records -> {output}")
    for name, count in report.changed_values.items():
        out.print(f"  {name}: {count:,} value(s) changed")
    out.print(f"  keys {', '.join(report.keys)}: {_frequencies(report)}")


def show_masking(report: Any, output: Path) -> None:
    """The lines a masking on one machine prints (``mask``, ``topcode``): its parameters,
    records, columns and output, the columns written unchanged and the guarantee."""
    stated = ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                       for name, value in report.parameters.items() if value is not None)
    out.print(f"{report.method} {stated}: {report.records:,} records, columns "
              f"{', '.join(report.columns)} -> {output}")
    if report.released_unchanged:
        out.print(f"  written unchanged: {', '.join(report.released_unchanged)}")
    out.print(f"  guarantee: {report.guarantee}")
