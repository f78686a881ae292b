"""The report of a recipe run (``OUT.report.json``), its privacy report (``OUT.privacy.json``,
after a DP step) and its HTML page.

One entry per step: the method and its parameters, the risk of the table after it over the
key variables and the change it made (:mod:`microagg.recipe.risk`), what the steps before a
DP step do to its guarantee (:mod:`microagg.recipe.composition`), the warnings, and the
step's own record (the ``OUT.report.json`` of a k-anonymous, t-close or masked release, with
its utility against the step's input; the ``OUT.privacy.json`` of a DP one); then, when the
recipe asks, the attacks on the final table (``attacks``: :mod:`microagg.recipe.attacks`,
as ``evaluate --attacks`` measures them). The whole report
holds figures computed from the raw data: it is the data owner's. After a DP step, what is
written beside the release is its public view (:mod:`microagg.release.reports.disclosure`): the
steps and their parameters, each DP step's privacy report and the table's guarantee, with
:func:`privacy_of` as the privacy report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from html import escape
from typing import Any

from microagg.evaluation.html import STYLE
from microagg.options import ReportKind
from microagg.recipe.risk import percent
from microagg.recipe.runner import RecipeRun, StepResult
from microagg.release.reports.disclosure import (
    PRIVACY_FORMAT,
    RECIPE_REPORT_FORMAT,
    STEP_RECORD,
    Audience,
    allows,
    declaration,
    public,
)
from microagg.release.reports.report import plain
from microagg.release.reports.sidecar import (
    NO_FIGURES,
    WITHHELD,
    InputFile,
    PrivacyRecord,
    ReleaseRecord,
)

__all__ = ["RECIPE_REPORT_FORMAT", "RecipeReport", "StepEntry", "privacy_of", "recipe_html",
           "recipe_report"]



def _risk_of(measure: Callable[[], Any]) -> dict[str, Any]:
    """The owner's risk figures of a table; a measure that cannot be made on this data is
    said, never stopping the release (whether the owner's figures can be computed must not
    decide whether a release is made)."""
    try:
        return dict(measure().to_dict())
    except Exception as exc:  # any failure of an owner's measure, a bug's included
        return {"not_measured": f"{type(exc).__name__}: {exc}"}


def _attacks_of(run: RecipeRun) -> dict[str, Any] | None:
    """The attacks the recipe asks, on its final table against its input and control
    records (``None``: none asked); as the risk, a failure is said, never stopping the
    release."""
    section = run.recipe.attacks
    if section is None or run.control is None:
        return None
    try:
        return section.measure(run.original, run.frame, run.control)
    except Exception as exc:  # any failure of an owner's measure, a bug's included
        return {"not_measured": f"{type(exc).__name__}: {exc}"}


def _change(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {"global_risk": after["global_risk"] - before["global_risk"],
            "expected_reidentifications": (after["expected_reidentifications"]
                                           - before["expected_reidentifications"]),
            "unique_percent": after["unique_percent"] - before["unique_percent"],
            "violations": {k: v - before["violations"].get(k, 0)
                           for k, v in after["violations"].items()}}


@dataclass(frozen=True)
class StepEntry:
    """One step of the report: what ran, the risk after it and its change, how the steps
    before a DP step affect its guarantee, its warnings and its own record."""

    step: int
    family: str
    method: str
    parameters: dict[str, Any]
    options: dict[str, Any]
    protects: str | None
    dp_context: str | None
    records: int
    seconds: float
    risk_after: dict[str, Any] | None  # None: not measured (a report for the public)
    risk_change: dict[str, Any] | None
    warnings: list[str]
    record: ReleaseRecord | PrivacyRecord

    @classmethod
    def of(cls, index: int, result: StepResult, before: dict[str, Any] | None) -> StepEntry:
        risk = _risk_of(lambda: result.risk) if before is not None else None
        change = (_change(before, risk) if before is not None and risk is not None
                  and "n" in before and "n" in risk else None)
        return cls(index + 1, result.step.family.value, result.step.name,
                   dict(result.step.parameters), dict(result.step.options),
                   result.step.protects.value if result.context else None,
                   result.context.statement if result.context else None,
                   len(result.frame), round(result.seconds, 3), risk, change,
                   list(result.warnings), result.record)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "record"}
        return {**out, "record": self.record.to_dict()}


@dataclass(frozen=True)
class RecipeReport:
    """The report of a recipe run (module docstring); :func:`recipe_report` builds it."""

    recipe: dict[str, Any]
    input: InputFile
    microagg_version: str
    created: str
    records: int
    rows_aligned: bool
    guarantee: str
    privacy: dict[str, Any] | None  # privacy_of(run): the table's guarantee, after a DP step
    risk_before: dict[str, Any] | None  # None: not measured (a report for the public)
    steps: list[StepEntry]
    format: str = RECIPE_REPORT_FORMAT
    attacks: dict[str, Any] | None = None  # None: none asked, or not measured (the public's)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, ``format`` first, ``attacks`` last when there are any."""
        out = {f.name: plain(getattr(self, f.name)) for f in fields(self)
               if f.name not in ("steps", "attacks")}
        attacks = {} if self.attacks is None else {"attacks": plain(self.attacks)}
        return {"format": out.pop("format"), **out,
                "steps": [e.to_dict() for e in self.steps], **attacks}


def recipe_report(run: RecipeRun, measured: bool = True) -> RecipeReport:
    """The report of ``run``; without ``measured``, the risk before and after each step and
    the attacks are not measured (``None``): the owner's figures, which a report for the
    public leaves out.

    Examples
    --------
    >>> import microagg
    >>> from microagg.recipe import Recipe
    >>> data = microagg.datasets.synthetic(300, 2, seed=0)
    >>> run = Recipe(schema=data.schema).add(
    ...     {"family": "microaggregate", "method": "mdav", "k": 5}).run(data.frame)
    >>> report = recipe_report(run).to_dict()
    >>> report["format"], report["steps"][0]["risk_after"]["violations"]["5"]
    ('microagg-recipe-report/1', 0)
    """
    from microagg.version import installed_version

    first = before = _risk_of(lambda: run.risk_before) if measured else None
    entries = []
    for index, result in enumerate(run.results):
        entries.append(StepEntry.of(index, result, before))
        before = entries[-1].risk_after
    return RecipeReport(run.recipe.to_dict(), run.source, installed_version(),
                        datetime.now(UTC).isoformat(timespec="seconds"), len(run.frame),
                        run.rows_aligned, run.guarantee, privacy_of(run), first, entries,
                        attacks=_attacks_of(run) if measured else None)


def privacy_of(run: RecipeRun) -> dict[str, Any] | None:
    """The privacy report of ``run`` (``OUT.privacy.json``; ``None`` without a DP step): the
    table's guarantee at the top, in the keys of a DP release's privacy report
    (:func:`~microagg.recipe.composition.recipe_privacy`), then each DP step's own report
    with what the steps before it did to it, and the steps after the first DP step. Public
    by construction: it goes through :func:`~microagg.release.reports.disclosure.public`.

    Examples
    --------
    >>> import microagg
    >>> from microagg.recipe import Recipe
    >>> data = microagg.datasets.synthetic(300, 2, seed=0)
    >>> run = Recipe(schema=data.schema).add({"family": "dp", "method": "laplace",
    ...     "epsilon": 1.0, "columns": ["age"]}).run(data.frame)
    >>> report = privacy_of(run)
    >>> report["differentially_private"], report["epsilon"], report["steps"][0]["step"]
    (True, 1.0, 1)
    """
    from microagg.version import installed_version

    privacy = run.privacy
    if privacy is None:
        return None
    dp = [(index, result) for index, result in enumerate(run.results)
          if isinstance(result.record, PrivacyRecord) and result.context is not None]
    steps = [{"step": index + 1, "method": result.step.describe(),
              "context": result.context.statement, "spends": result.context.spends,
              "record": result.record.to_dict()}
             for index, result in dp if result.context is not None]
    first = dp[0][0] + 1
    document = {
        "format": PRIVACY_FORMAT,
        "method": "recipe: " + "; ".join(f"step {e['step']} {e['method']}" for e in steps),
        **privacy.to_dict(), "records": len(run.frame),
        "columns": [str(c) for c in run.frame.columns], "rows_aligned": False,
        "input": InputFile(run.source.name, withheld=WITHHELD).to_dict(),
        "microagg_version": installed_version(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "risk_and_utility": NO_FIGURES, "steps": steps,
        "post_processing": [f"step {i + 1}: {r.step.describe()}"
                            for i, r in enumerate(run.results)
                            if i + 1 > first and not isinstance(r.record, PrivacyRecord)]}
    return public(document)


def _risk_cells(r: dict[str, Any]) -> list[str]:
    """A measured risk in the summary's cells (dashes when it could not be measured)."""
    share = r.get("global_risk")
    return [percent(share) if isinstance(share, float) else _number(share),
            _number(r.get("expected_reidentifications")),
            _number((r.get("violations") or {}).get("5")), _number(r.get("unique_percent"))]


def _number(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return escape(str(value))
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.4g}"


def _summary(report: RecipeReport, audience: Audience) -> str:
    declared = declaration(RECIPE_REPORT_FORMAT)
    risk = (allows(declared, "risk_before", audience=audience)
            and allows(declared, "steps", "risk_after", audience=audience)
            and report.risk_before is not None)
    counted = allows(declared, "steps", "records", audience=audience)
    loss_shown = allows(STEP_RECORD, "utility", "sse_percent", audience=audience)
    head = ["step", "method", "parameters"] + (["records"] if counted else [])
    if risk:
        head += ["global risk", "expected re-identifications", "records in classes < 5",
                 "unique %"]
    if loss_shown:
        head.append("SSE/SST % (vs step input)")
    rows = []
    if risk:
        r = report.risk_before or {}
        rows.append(["input", "—", "—", _number(r.get("n")), *_risk_cells(r)]
                    + (["—"] if loss_shown else []))
    for entry in report.steps:
        given = ", ".join(f"{k}={v}" for k, v in {**entry.parameters,
                                                   **entry.options}.items())
        row = [str(entry.step), escape(f"{entry.family} {entry.method}"), escape(given) or "—"]
        if counted:
            row.append(_number(entry.records))
        if risk:
            row += _risk_cells(entry.risk_after or {})
        if loss_shown:
            row.append(_number(entry.record.utility.sse_percent
                               if isinstance(entry.record, ReleaseRecord)
                               and entry.record.utility is not None else None))
        rows.append(row)
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table id="steps"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def _privacy_section(record: PrivacyRecord) -> str:
    report = record.report
    items = [("guarantee", escape(report.guarantee)), ("epsilon", _number(report.epsilon)),
             ("unit of privacy", escape(report.unit))]
    items += [(f"epsilon for {p['part']}", _number(p["epsilon"]))
              for p in report.epsilon_split]
    items += [(f"noise on {name} (share of the domain width)",
               _number(level.get("fraction_of_width")))
              for name, level in report.noise.items()]
    items += [("warning", escape(w)) for w in report.warnings]
    body = "".join(f"<tr><td>{escape(k)}</td><td style='text-align:left'>{v}</td></tr>"
                   for k, v in items)
    return f"<table><tbody>{body}</tbody></table>"


def _step_sections(entry: StepEntry, audience: Audience) -> str:
    from microagg.evaluation.report_html import release_sections

    parts = [f"<h2>Step {entry.step}: {escape(entry.family)} {escape(entry.method)}</h2>"]
    if entry.dp_context:
        parts.append(f'<p class="notice">{escape(entry.dp_context)}</p>')
    if allows(declaration(RECIPE_REPORT_FORMAT), "steps", "warnings", audience=audience):
        for warning in entry.warnings:
            parts.append(f'<p class="warning">{escape(warning)}</p>')
    if isinstance(entry.record, ReleaseRecord):
        for title, html in release_sections(entry.record, audience, STEP_RECORD):
            parts.append(f"<h3>{escape(title)}</h3>\n{html}")
    else:
        parts.append(_privacy_section(entry.record))
    return "\n".join(parts)


def recipe_html(report: RecipeReport, kind: ReportKind | str = ReportKind.INTERNAL,
                audience: Audience | None = None) -> str:
    """The report as one self-contained HTML page: ``internal`` with every figure,
    ``external`` without the risk figures and the record-level ones of each step (as
    :func:`~microagg.evaluation.report_html.release_html`); ``audience`` public (the page
    beside a DP release) shows only what :mod:`microagg.release.reports.disclosure` declares public,
    whatever the kind."""
    from microagg.evaluation.report_html import audience_of

    shown = audience_of(kind) if audience is None else min(audience, audience_of(kind))
    notice = {Audience.OWNER: "Internal report: it holds figures computed from the raw data. "
                              "It is for the data owner, not for publication.",
              Audience.EXTERNAL: "External report: no figure computed record by record from "
                                 "the raw data.",
              Audience.PUBLIC: "Published with a differentially private release: every "
                               "figure on this page follows from the released table and "
                               "what the data owner declared (the steps, their parameters, "
                               "epsilon and the domains), never from the records."}[shown]
    steps = "\n".join(_step_sections(e, shown) for e in report.steps)
    attacked = ""
    if report.attacks is not None and allows(declaration(RECIPE_REPORT_FORMAT), "attacks",
                                             audience=shown):
        from microagg.evaluation.attacks_html import attacks_html

        attacked = ("<h2>Attack risks: singling out, linkability, inference</h2>\n"
                    "<p>The release attacked as data-protection authorities judge "
                    "anonymisation, on the input's records, on control records it was not "
                    "made from and by guessing: each risk is what the attack gains on the "
                    "people in the release over the people not in it.</p>\n"
                    + attacks_html(report.attacks))
    label = shown.name.lower() if shown is not Audience.OWNER else "internal"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>microagg: recipe report</title><style>{STYLE}</style></head>
<body>
<h1>Recipe report: {len(report.steps)} step(s), {report.records:,} records released</h1>
<p class="notice" id="notice">{escape(notice)}</p>
<p class="recommendation" id="guarantee">{escape(report.guarantee)}</p>
<h2>Steps</h2>
{_summary(report, shown)}
{steps}
{attacked}
<p><small>Input {escape(report.input.name)}; made {escape(report.created)} by microagg
{escape(report.microagg_version)} ({label} report).</small></p>
</body></html>
"""
