"""A DP release's privacy report as one self-contained HTML page (``microagg dp --report``).

Everything a DP report holds is public: the guarantee and its unit, the ε ledger, the declared
domains (and the rule that reads missing values), the sensitivities and noise levels (functions
of ε, the domains and k), the threat model and the warnings. No figure is computed from the
records, so one page serves the data owner and the public alike (there is no internal and
external variant, unlike :mod:`microagg.evaluation.report_html`).
"""

from __future__ import annotations

from html import escape
from typing import Any

from microagg.evaluation.html import STYLE
from microagg.evaluation.report_html import grid_table, number_cell, rows_table
from microagg.release.reports.sidecar import PrivacyRecord

__all__ = ["privacy_html"]

NOTICE = ("Every figure on this page is public: it follows from epsilon, the declared domains "
          "and k, never from the records. The page can be published with the release.")


def _guarantee(r: Any) -> str:
    verdict = ("differentially private" if r.differentially_private
               else '<span class="warning">NOT differentially private</span>')
    items = [("verdict", verdict), ("scope", escape(str(r.guarantee_scope))),
             ("unit of privacy", escape(r.unit)),
             ("epsilon for that unit", number_cell(r.unit_epsilon if r.unit_epsilon
                                                   is not None else r.epsilon, 6)),
             ("epsilon spent per record", number_cell(r.record_epsilon if r.record_epsilon
                                                       is not None else r.epsilon, 6))]
    weaker = "".join(f"<li>{escape(w)}</li>" for w in r.weaker_than_plain_dp)
    return (f'<p class="recommendation" id="guarantee">{escape(r.guarantee)}</p>'
            + rows_table(items, "scope")
            + (f"<p>Weaker than plain ε-DP:</p><ul id='weaker'>{weaker}</ul>" if weaker
               else ""))


def _ledger(r: Any) -> str:
    rows = [[escape(p["part"]), number_cell(p["epsilon"], 6),
             escape(p.get("reason", "") or "")
             + (f" (divided into {p['divided_into']:,}: {number_cell(p['each'], 6)} each)"
                if p.get("divided_into") else "")]
            for p in r.epsilon_split]
    return grid_table(["part", "epsilon", "why"], rows, "ledger")


def _domains(r: Any) -> str:
    rows = []
    for name, d in r.domains.items():
        if d.get("low") is not None:
            extent = f"[{number_cell(d['low'], 6)}, {number_cell(d['high'], 6)}]"
            if d.get("declared"):
                extent += f" (clipped; declared [{number_cell(d['declared'][0], 6)}, " \
                          f"{number_cell(d['declared'][1], 6)}])"
        else:
            structure = escape(str(d.get("structure")))
            extent = (f"{number_cell(d.get('categories'))} categories, "
                      f"{number_cell(d.get('concepts'))} concepts ({structure})")
        missing = d.get("missing")
        rows.append([escape(name), extent, escape(str(d.get("source", ""))),
                     escape(missing.split(":")[0]) if missing else "none declared"])
    return grid_table(["column", "domain", "declared by", "missing values"], rows, "domains")


def _noise(r: Any) -> str:
    rows = []
    for name, level in r.noise.items():
        if "standard_deviation" in level:
            rows.append([escape(name), number_cell(level["standard_deviation"]),
                         f"{level['fraction_of_width']:.2%} of the domain width"])
        else:
            odds = number_cell(level.get("largest_odds_best_to_worst"))
            rows.append([escape(name), "exponential mechanism",
                         f"best concept at most {odds} times as likely as the worst of "
                         f"{number_cell(level.get('concepts'))}"])
    return grid_table(["column", "noise", "relative to the domain"], rows, "noise")


def _terms(r: Any) -> str:
    items = [("neighbouring data sets", escape(r.neighbouring)),
             ("threat model", escape(r.threat_model)), ("row order", escape(r.row_order)),
             ("clamping", escape(r.clamping)), ("sampling", escape(r.sampling))]
    return rows_table(items, "terms")


def privacy_html(record: PrivacyRecord) -> str:
    """The privacy report ``record`` of a DP release as one HTML page (UTF-8 text).

    Examples
    --------
    >>> import microagg
    >>> from microagg.release.reports.sidecar import privacy_record
    >>> data = microagg.datasets.synthetic(200, 2, seed=0)
    >>> method = microagg.DPLaplace(epsilon=1.0)
    >>> release = method.release(data.frame, schema=data.schema, columns=["age"])
    >>> page = privacy_html(privacy_record(method, release.report, None))
    >>> 'id="ledger"' in page, "differentially private" in page
    (True, True)
    """
    r = record.report
    columns = [("protected", ", ".join(r.columns) or "none"),
               ("carried unchanged (not protected)", ", ".join(r.carried) or "none"),
               ("dropped", ", ".join(r.dropped_columns) or "none")]
    provenance = [("input", escape(record.input.name)),
                  ("input size and hash", escape(record.input.withheld or "—")),
                  ("records released", number_cell(r.records)),
                  ("made", escape(record.created)),
                  ("microagg", escape(record.microagg_version)),
                  ("report format", escape(record.format))]
    warnings = "".join(f"<li>{escape(w)}</li>" for w in r.warnings) or "<li>none</li>"
    sections = [
        ("Guarantee", _guarantee(r)),
        ("Parameters", rows_table([(k, number_cell(v)) for k, v in record.parameters.items()
                                   if v is not None] or [("parameters", "none")],
                                  "parameters")),
        ("Columns", rows_table([(k, escape(v)) for k, v in columns], "columns")),
        ("The epsilon ledger", _ledger(r)),
        ("Declared domains", _domains(r)),
        ("Noise", _noise(r)),
        ("Warnings", f"<ul id='warnings'>{warnings}</ul>"),
        ("Terms of the guarantee", _terms(r)),
        ("Provenance", rows_table(provenance, "provenance")),
    ]
    body = "\n".join(f"<h2>{escape(title)}</h2>\n{html}" for title, html in sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>microagg: privacy report ({escape(r.method)})</title><style>{STYLE}</style></head>
<body>
<h1>Privacy report: {escape(r.method)}, {r.records:,} records</h1>
<p class="notice" id="notice">{escape(NOTICE)}</p>
{body}
<p><small>Made by microagg {escape(record.microagg_version)}.</small></p>
</body></html>
"""
