"""``microagg swap``: targeted record swapping of households within a geographic hierarchy
(the method ``targeted-record-swapping``, options from its fields); the release and its
report are written as every family's (``OUT.report.json`` beside OUT)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from microagg.cli.app import out
from microagg.cli.common import DECIMAL, THOUSANDS, names
from microagg.cli.keys import INPUT, JSON, OUTPUT, _run
from microagg.cli.methods import method_command, option
from microagg.release.methods import RecordSwap

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
    options: dict[str, Any] | None = None,
    roles: dict[str, Any] | None = None,
) -> None:
    """Targeted record swapping: households at risk in their area (and a share at random)
    exchange their geography with a household of the same profile elsewhere (--household
    names the household column)."""
    _run(RecordSwap, options, input=input, output=output, schema=schema,
         json_out=json_out, show=_show_swap, decimal=decimal, thousands=thousands,
         keys=names(keys, "--keys"), roles=roles, rng=seed)


def _show_swap(report: Any, output: Path) -> None:
    out.print(f"{report.method}: {report.households:,} households, {report.records:,} "
              f"records -> {output}")
    out.print(f"  swapped {report.households_swapped:,} households "
              f"({report.realised_rate:.2%}), {report.persons_swapped:,} persons; "
              f"{report.without_donor:,} at risk without a donor")
    for level in report.levels:
        out.print(f"  {level.level}: {level.at_risk:,} at risk, {level.swapped_at_risk:,} "
                  f"swapped for risk, {level.swapped_at_random:,} at random, "
                  f"{level.in_place_after:,} at risk still in place")
