"""``microagg demo``: an end-to-end run on embedded synthetic data."""

from __future__ import annotations

import typer

from microagg.cli.app import command, out
from microagg.cli.common import (
    compile_notice,
    progress_bar,
)


@command("demo")
def demo(
    n: int = typer.Option(2000, "--n", help="Records of the synthetic data."),
    k: int = typer.Option(5, "--k", help="Smallest cluster size."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic data."),
) -> None:
    """End-to-end run on embedded synthetic data: MDAV -> check -> evaluate."""
    from microagg.core.verifiers import k_anonymity
    from microagg.data.datasets import synthetic
    from microagg.evaluation.evaluate import evaluate as run_evaluation
    from microagg.release import microaggregate as run

    data = synthetic(n, 6, seed)
    quasi = list(data.schema.quasi_identifiers)
    out.print(f"1. data: {data.description}; quasi-identifiers: {', '.join(quasi)}")
    before = k_anonymity(data.frame, quasi)
    out.print(f"   before: smallest equivalence class {before.smallest_class} "
              f"({before.classes:,} classes) - every record is unique")
    with compile_notice(), progress_bar(n, f"mdav k={k}") as progress:
        release = run(data.frame, k=k, schema=data.schema, progress=progress)
    clusters = release.report.clusters
    out.print(f"2. MDAV, k={k}, z-scores: {clusters['count']:,} clusters of "
              f"{clusters['smallest']} to {clusters['largest']} records")
    after = k_anonymity(release.frame, quasi)
    out.print(f"3. check: smallest equivalence class {after.smallest_class} -> "
              f"{k}-anonymity {'holds' if after.holds(k) else 'VIOLATED'}")
    with compile_notice():
        result = run_evaluation(data.frame, release.frame, data.schema)
    out.print("4. evaluate (original vs released):")
    out.print(f"   information loss SSE/SST   {result['sse_percent']:.2f} %")
    out.print(f"   record linkage             {result['record_linkage_percent']:.2f} % of "
              f"records re-identified (a {k}-anonymous release allows at most "
              f"{100 / k:.0f} %)")
    out.print(f"   relative error             {result['relative_error']:.4f}")
    out.print(f"   JSD of the distributions   {result['jsd']:.4f}")
    out.print(f"   variance variation (mean)  {result['variance_variation']:.4f}")
    if not after.holds(k):
        raise typer.Exit(code=1)
