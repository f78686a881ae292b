"""``microagg risk``: the disclosure risk of a table's categorical key variables."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from microagg.cli.app import app, out
from microagg.cli.common import (
    DECIMAL,
    READS,
    THOUSANDS,
    WRITES,
    compile_notice,
    load,
    names,
    outputs,
    print_json,
    sources,
    write_as,
)
from microagg.errors import InputError

if TYPE_CHECKING:
    from microagg.risk import CategoricalRisk


@app.command(short_help="Risk of categorical keys: frequencies, individual risk, SUDA2, "
             "l-diversity.")
def risk(
    input: Path = typer.Argument(..., metavar="IN", help=f"Table to measure ({READS})."),
    keys: str | None = typer.Option(None, "--keys", help="Key variables (quasi-identifiers), "
                                    "comma-separated (default: the schema's)."),
    weight: str | None = typer.Option(None, "--weight", help="Sampling weight column (at "
                                      "least 1 in every row; default: the schema's)."),
    household: str | None = typer.Option(None, "--household", help="Household identifier "
                                         "column: adds the household risk."),
    sensitive: str | None = typer.Option(None, "--sensitive", help="Sensitive attribute: adds "
                                         "its distinct, entropy and recursive l-diversity."),
    k: list[str] | None = typer.Option(None, "--k", help="Count the records in classes "
                                       "smaller than K too (beside 2, 3 and 5); repeat or "
                                       "separate by commas."),
    missing: str = typer.Option("matches-any", "--missing", help="What a missing key value "
                                "matches: matches-any (any value, sdcMicro's default) | "
                                "category (only another missing value)."),
    dis_fraction: float = typer.Option(0.01, "--dis-fraction", help="Sampling fraction of "
                                       "the SUDA2 DIS score (sdcMicro's default 0.01)."),
    l_c: float = typer.Option(2.0, "--l-c", help="The c of recursive (c, l)-diversity."),
    schema: Path | None = typer.Option(None, "--schema", help="Schema file (YAML): its "
                                       "quasi-identifiers, weight and household roles are "
                                       "the defaults."),
    decimal: str | None = DECIMAL,
    thousands: str | None = THOUSANDS,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    records_out: Path | None = typer.Option(None, "--records-out", help="Write one row per "
                                            "record, in input order: fk, Fk, risk, "
                                            "[household_risk,] suda_score, dis_score[, "
                                            f"l_distinct, l_entropy, l_recursive] ({WRITES})."),
) -> None:
    """Measure the disclosure risk of the categorical key variables of a table: sample and
    population frequencies, individual (Benedetti-Franconi) and household risk, k-anonymity
    violations, SUDA2 scores and l-diversity, as sdcMicro computes them."""
    from microagg.risk import categorical_risk

    extra_k = _ks(k)
    with outputs([records_out], sources(input, schema)) as files:
        frame, schema_obj = load(input, schema, decimal, thousands)
        with compile_notice():
            result = categorical_risk(frame, names(keys, "--keys"), weight=weight,
                                      household=household, sensitive=sensitive,
                                      schema=schema_obj, missing=missing, k=extra_k,
                                      dis_fraction=dis_fraction, l_c=l_c)
        if records_out is not None:
            write_as(result.records(), files[records_out], records_out, release=False)
    if json_out:
        print_json(result.to_dict())
        return
    for line in lines(result):
        out.print(line)
    if records_out is not None:
        out.print(f"  records: {records_out}")


def _ks(values: list[str] | None) -> list[int]:
    """The --k values: whole numbers, repeated or comma-separated."""
    found = []
    for value in values or []:
        for part in value.split(","):
            try:
                found.append(int(part.strip()))
            except ValueError:
                raise InputError(f"--k takes whole numbers, got '{part.strip()}'") from None
    return found


def lines(result: CategoricalRisk) -> list[str]:
    """The measures as the command prints them: a short table."""
    n = result.n
    weighted = result.weighted_violations
    text = [f"risk of the keys {', '.join(result.keys)}: {n:,} records"
            + (f", weight {result.weight}" if result.weight else ", no weight")
            + f", missing values {result.missing.value}",
            f"  sample uniques                {result.sample_uniques:,}"
            f" ({_percent(result.sample_uniques, n)})",
            f"  expected re-identifications   {result.expected_reidentifications:,.2f}"
            f" ({_percent(result.expected_reidentifications, n)})",
            f"  global risk (mean)            {result.global_risk:.6g}",
            f"  largest individual risk       {float(result.risk.max(initial=0)):.6g}"]
    if result.household_risk is not None:
        expected = float(result.household_risk.sum())
        text.append(f"  household risk ({result.household}): expected re-identifications "
                    f"{expected:,.2f} ({_percent(expected, n)})")
    text.append("  k    records in classes smaller than k" + ("    weighted (F_k < k)"
                                                              if weighted else ""))
    for q, count in result.violations.items():
        row = f"  {q:<4d} {count:>10,} ({_percent(count, n)})"
        if weighted is not None:
            row += f"  {weighted[q]:>18,}"
        text.append(row)
    suda = result.suda
    text.append(f"  SUDA2: {sum(suda.msus_by_size):,} MSUs in {int((suda.scores > 0).sum()):,}"
                f" records; largest DIS score {float(suda.dis_scores.max(initial=0)):.4g}"
                f" (DIS fraction {suda.dis_fraction:g})")
    text.append("  contribution of each key: " + ", ".join(
        f"{key} {share:.1f} %" for key, share in suda.contributions.items()))
    diversity = result.l_diversity
    if diversity is not None:
        text.append(f"  l-diversity of {diversity.attribute} (smallest over the records): "
                    f"distinct {diversity.smallest('distinct'):g}, entropy "
                    f"{diversity.smallest('entropy'):.4g}, recursive (c = {diversity.c:g}) "
                    f"{diversity.smallest('recursive'):g}")
    return text


def _percent(part: float, whole: int) -> str:
    return f"{100 * part / whole:.2f} %" if whole else "n/a"
