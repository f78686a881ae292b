"""``microagg swap``: targeted record swapping of households within a geographic hierarchy
(the method ``targeted-record-swapping``, options from its fields); the release and its
report are written as every family's (``OUT.report.json`` beside OUT), or with ``--engine
dask`` as a Parquet data set by :mod:`microagg.at_scale.swap`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from microagg.cli.app import out
from microagg.cli.common import (
    DECIMAL,
    ENGINE_HELP,
    THOUSANDS,
    engine_is_dask,
    names,
    print_json,
    progress_bar,
    write_sidecar,
)
from microagg.cli.keys import INPUT, JSON, OUTPUT, SCHEDULER, STORAGE, WORKERS, _run
from microagg.cli.methods import method_command, option
from microagg.data.schema import Role
from microagg.errors import InputError
from microagg.release.methods import RecordSwap, family
from microagg.release.methods.base import build
from microagg.release.reports.swap_report import swap_lines

__all__ = ["swap"]


@method_command(RecordSwap, "swap", after="output")
def swap(
    input: Path = INPUT,
    output: Path = OUTPUT,
    keys: str | None = option("keys", "swap"),
    schema: Path | None = option("schema", "swap"),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    seed: int | None = option("seed", "swap"),
    json_out: bool = JSON,
    engine: str = typer.Option("local", "--engine", help=ENGINE_HELP),
    scheduler: str | None = SCHEDULER,
    workers: int | None = WORKERS,
    storage_option: list[str] | None = STORAGE,
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Targeted record swapping: households at risk in their area (and a share at random)
    exchange their geography with a household of the same profile elsewhere (--household
    names the household column)."""
    if engine_is_dask(engine, scheduler, workers, storage=storage_option, keys=keys,
                      schema=schema, decimal=decimal, thousands=thousands):
        _swap_at_scale(input, output, options or {}, roles or {}, seed=seed,
                       scheduler=scheduler, workers=workers, json_out=json_out,
                       storage=storage_option or [])
        return
    _run(RecordSwap, options, input=input, output=output, schema=schema,
         json_out=json_out, show=_show_swap, decimal=decimal, thousands=thousands,
         keys=names(keys, "--keys"), roles=roles, rng=seed)


def _swap_at_scale(source: Path, output: Path, options: dict[str, Any],
                   roles: dict[str, Any], *, seed: int | None, scheduler: str | None,
                   workers: int | None, json_out: bool, storage: list[str]) -> None:
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import check_dataset_output, open_dataset
    from microagg.at_scale.storage import parse_storage_options
    from microagg.at_scale.swap import swap_at_scale
    from microagg.data.io import json_text
    from microagg.release.reports.sidecar import swap_record

    method: Any = build(RecordSwap, options, family(RecordSwap.family))
    households = [c for c, r in roles.items() if Role(r) is Role.HOUSEHOLD]
    if len(households) != 1 or len(roles) != 1:
        raise InputError("--engine dask takes one role option, --household, naming the "
                         "household column")
    settings = parse_storage_options(storage)
    target = check_dataset_output(output, source, settings)
    dataset = open_dataset(source, storage_options=settings)
    with dask_client(scheduler, workers) as client, \
            progress_bar(dataset.n, method.name) as progress:
        result = swap_at_scale(client, dataset, target, method=method,
                               household=households[0], rng=seed, progress=progress)
    sidecar = write_sidecar(target, json_text(swap_record(method, result,
                                                          Path(dataset.source)).to_dict()))
    if json_out:
        print_json(result.to_dict())
        return
    _show_swap(result, output, sidecar)


def _show_swap(report: Any, output: Path, sidecar: Any = None) -> None:
    fields = report.fields if hasattr(report, "fields") else vars(report)
    out.print(f"{report.method}: {fields['households']:,} households, {report.records:,} "
              f"records -> {output}")
    for line in swap_lines(fields):
        out.print(f"  {line}")
    if sidecar is not None:
        out.print(f"  report: {sidecar}")
