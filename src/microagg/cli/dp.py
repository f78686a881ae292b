"""``microagg dp``: ε-differentially private releases (on one machine, or individual ranking
and insensitive microaggregation on a Dask cluster)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import typer

from microagg.cli import common
from microagg.cli.app import out
from microagg.cli.methods import family_command, option
from microagg.errors import InputError, ParameterError, PrivacyLeakWarning
from microagg.release.methods import Family, family
from microagg.release.reports.sidecar import privacy_record, sidecar_path

__all__ = ["dp"]

METHODS_HELP = " | ".join(m.name for m in family(Family.DIFFERENTIAL_PRIVACY))


def parse_bounds(value: str | None) -> dict[str, tuple[float, float]]:
    """--bounds NAME=LO:HI,NAME=LO:HI."""
    if not value:
        return {}
    found: dict[str, tuple[float, float]] = {}
    for item in value.split(","):
        name, _, interval = item.partition("=")
        lo, _, hi = interval.partition(":")
        try:
            low, high = float(lo), float(hi)
        except ValueError:
            raise ParameterError("bounds", f"'{item.strip()}' should read NAME=LO:HI") from None
        if not name.strip() or not low < high:
            raise ParameterError("bounds", f"'{item.strip()}' should read NAME=LO:HI with "
                                 "LO < HI")
        if name.strip() in found:
            raise ParameterError("bounds", f"names column '{name.strip()}' twice")
        found[name.strip()] = (low, high)
    return found


@family_command(Family.DIFFERENTIAL_PRIVACY)
def dp(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to protect ({common.READS})."),
    output: Path = typer.Option(..., "-o", "--output", help=f"Released table ({common.WRITES}); "
                                "the privacy report goes to OUTPUT.privacy.json."),
    method: str = typer.Option("insensitive", "--method", help=METHODS_HELP),
    columns: str | None = option("columns", "dp"),
    carry: str | None = option("carry", "dp"),
    schema: Path | None = option("schema", "dp"),
    decimal: str | None = common.DECIMAL,
    thousands: str | None = common.THOUSANDS,
    bounds: str | None = option("bounds", "dp"),
    bounds_from_data: bool = option("bounds_from_data", "dp"),
    seed: int | None = option("seed", "dp"),
    statistics_out: Path | None = typer.Option(None, "--statistics-out", help="Cross-moment: "
                                               "also write the released cluster statistics "
                                               f"({common.WRITES})."),
    drop_incomplete: bool = option("drop_incomplete", "dp"),
    household_size: int | None = option("household_size", "dp"),
    show_owner_notices: bool = typer.Option(False, "--owner-notices", "--show-clamped",
                                            help=common.OWNER_NOTICES_HELP),
    threads: int | None = typer.Option(None, "--threads", help=common.THREADS_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the privacy report as JSON."),
    report: Path | None = typer.Option(None, "--report", help="Also write the privacy report "
                                       "as one HTML page (self-contained; every figure on it "
                                       "is public)."),
    engine: str = typer.Option("local", "--engine", help=common.ENGINE_HELP + " It runs "
                               "individual-ranking (unlinked, numeric columns) and "
                               "insensitive with --reference single."),
    scheduler: str | None = typer.Option(None, "--scheduler", help=common.SCHEDULER_HELP),
    workers: int | None = typer.Option(None, "--workers", help=common.WORKERS_HELP),
    storage_option: list[str] | None = typer.Option(None, "--storage-option",
                                                    help=common.STORAGE_OPTION_HELP),
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """ε-differentially private release (insensitive: noisy means of clusters fixed by the
    declared domains; individual-ranking: noisy group means, attribute by attribute;
    cross-moment: noisy cluster means and covariances; laplace: noise on every record)."""
    from microagg.release.functions import make_method

    if seed is not None and seed < 0:
        raise ParameterError("rng", f"must be a non-negative integer, got {seed}")
    made: Any = make_method(Family.DIFFERENTIAL_PRIVACY, method, options or {})
    with common.owner_notices(True, show_owner_notices) as notices:
        release, report_path = _dp(
            input, output, made, engine=engine, scheduler=scheduler, workers=workers,
            storage=storage_option or [], columns=columns, carry=carry, schema=schema,
            decimal=decimal, thousands=thousands, bounds=bounds, bounds_from_data=bounds_from_data,
            seed=seed, statistics_out=statistics_out, drop_incomplete=drop_incomplete,
            household_size=household_size, threads=threads, report=report, roles=roles)
        for notice in release.notices:
            notices.say(notice)
    print_privacy(release.report, common.shown(output), report_path, json_out)


def _dp(input: Path, output: Path, made: Any, *, engine: str, scheduler: str | None,
        workers: int | None, storage: list[str], columns: str | None, carry: str | None,
        schema: Path | None, decimal: str | None, thousands: str | None, bounds: str | None,
        bounds_from_data: bool, seed: int | None, statistics_out: Path | None,
        drop_incomplete: bool, household_size: int | None, threads: int | None,
        report: Path | None, roles: dict[str, Any] | None) -> tuple[Any, Any]:
    """The release of ``made`` (on one machine or the Dask engine) and its files, written;
    returns the release and the path of its privacy report."""
    from microagg.data.formats import carry_labels
    from microagg.data.io import json_text

    if common.engine_is_dask(engine, scheduler, workers, storage=storage, carry=carry,
                             bounds_from_data=bounds_from_data, statistics_out=statistics_out,
                             drop_incomplete=drop_incomplete, threads=threads,
                             roles=roles or None, decimal=decimal, thousands=thousands,
                             household_size=household_size, report=report):
        return _dp_at_scale(input, output, made, columns=common.names(columns, "--columns"),
                            schema_path=schema, bounds=parse_bounds(bounds), seed=seed,
                            scheduler=scheduler, workers=workers, storage=storage)
    if statistics_out is not None and made.name != "cross-moment":
        raise ParameterError("statistics_out", "applies to `method` cross-moment only")
    common.check_report(report, "internal")
    schema_obj = common.schema_of(schema)
    report_path = sidecar_path(output, private=True)
    with common.outputs([output, report_path, statistics_out, report],
                        common.sources(input, schema, schema=schema_obj)) as files:
        frame = common.read_input(input, decimal, thousands, schema=schema_obj)
        k = getattr(made, "k", None)
        bar = common.progress_bar(len(frame), f"{made.name} k={k}")
        with common.compile_notice(), bar as progress, warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report's lines say it
            release = made.release(
                frame, schema=schema_obj, columns=common.names(columns, "--columns"),
                carry=common.names(carry, "--carry") or (), bounds=parse_bounds(bounds),
                bounds_from_data=bounds_from_data, rng=seed, drop_incomplete=drop_incomplete,
                roles=roles, threads=threads, progress=progress,
                household_size=household_size)
        common.write_as(carry_labels(frame, release.frame, private=True), files[output],
                        output)
        record = privacy_record(made, release.report, input)
        files[report_path].write_text(json_text(record.to_dict()), encoding="utf-8")
        if report is not None:
            from microagg.evaluation.privacy_html import privacy_html

            files[report].write_text(privacy_html(record), encoding="utf-8")
        if statistics_out is not None:
            if release.statistics is None:
                raise InputError("this release publishes no statistics table; leave out "
                                 "`statistics_out`")
            common.write_as(release.statistics, files[statistics_out], statistics_out)
    return release, report_path


def print_privacy(report: Any, output: Path | str, report_path: Path, json_out: bool
                  ) -> None:
    """The privacy report in lines (or as JSON) and its warnings: public figures only."""
    if not report.differentially_private:
        common.warn(report.guarantee)
    for weakness in report.weaker_than_plain_dp:
        common.warn(f"weaker than plain epsilon-DP: {weakness}")
    for warning in report.warnings:
        common.warn(warning)
    if json_out:
        from microagg.release.reports.disclosure import PRIVACY_FORMAT, public

        common.print_json(public(report.to_dict(), PRIVACY_FORMAT))
        return
    out.print(f"{report.method}: {report.records:,} records, columns "
              f"{', '.join(report.columns)} -> {output}")
    if report.dropped_columns:
        out.print(f"  dropped (not protected): {', '.join(report.dropped_columns)}")
    out.print(f"  {report.guarantee}")
    for part in report.epsilon_split:
        out.print(f"  ε for {part['part']}: {part['epsilon']:.6g}")
    for name, domain in report.domains.items():
        if "declared" in domain:
            low, high = domain["declared"]
            out.print(f"  domain of {name} clipped to [{domain['low']:.6g}, "
                      f"{domain['high']:.6g}] (declared [{low:.6g}, {high:.6g}])")
        if domain.get("missing"):
            out.print(f"  {name}: {domain['missing'].split(':')[0]}")
    for name, level in report.noise.items():
        if "fraction_of_width" in level:
            least = "at least " if "note" in level else ""
            out.print(f"  noise on {name}: sd {least}{level['standard_deviation']:.4g} "
                      f"({level['fraction_of_width']:.1%} of the domain width)")
    out.print(f"  privacy report: {report_path}")


def _dp_at_scale(input: Path, output: Path, method: Any, *, columns: list[str] | None,
                 schema_path: Path | None, bounds: dict[str, tuple[float, float]],
                 seed: int | None, scheduler: str | None, workers: int | None,
                 storage: list[str]) -> tuple[Any, Any]:
    from microagg.at_scale.dataset import check_dataset_output
    from microagg.at_scale.storage import Location, parse_storage_options
    from microagg.data.io import json_text

    refusal = method.at_scale_refusal()
    if refusal:
        raise ParameterError("engine", f"dask cannot run {method.name}: {refusal}")
    options = parse_storage_options(storage)
    target = check_dataset_output(output, input, options)
    schema = common.schema_of(schema_path)
    if isinstance(target, Location):  # the report is one object beside the data set
        release, dataset = _dp_run(input, target, method, columns=columns, schema=schema,
                                   bounds=bounds, seed=seed, scheduler=scheduler,
                                   workers=workers, options=options)
        text = json_text(privacy_record(method, release.report,
                                        Path(dataset.source)).to_dict())
        return release, common.write_sidecar(target, text, private=True)
    report_path = sidecar_path(output, private=True)
    with common.outputs([report_path], common.sources(input, schema_path, schema=schema)) as files:
        release, _ = _dp_run(input, target, method, columns=columns, schema=schema,
                             bounds=bounds, seed=seed, scheduler=scheduler, workers=workers,
                             options=options)
        files[report_path].write_text(json_text(privacy_record(method, release.report,
                                                               input).to_dict()),
                                      encoding="utf-8")
    return release, report_path


def _dp_run(input: Path, target: Any, method: Any, *, columns: list[str] | None, schema: Any,
            bounds: dict[str, tuple[float, float]], seed: int | None, scheduler: str | None,
            workers: int | None, options: dict[str, Any]) -> tuple[Any, Any]:
    """The release of ``method`` on the Dask engine, written to ``target``, and the data set
    it read."""
    from microagg.at_scale.cluster import dask_client
    from microagg.at_scale.dataset import open_dataset
    from microagg.at_scale.dp import dp_release_at_scale

    # the release checks what it reads
    dataset = open_dataset(input, typed=False, storage_options=options)
    with dask_client(scheduler, workers) as client, \
            common.progress_bar(dataset.n, f"{method.name} k={method.k}") as progress, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the report's lines say it
        release = dp_release_at_scale(client, dataset, target, method, columns=columns,
                                      schema=schema, bounds=bounds, rng=seed,
                                      progress=progress)
    return release, dataset
