"""A self-contained HTML report of a comparison at equal risk (003): every figure is a PNG
embedded in the page, so the file opens offline and can be mailed as it is.

Sections: a notice that the report analyses the raw data (for the owner, not for sharing);
the recommendation in plain words; the measure against the parameter of every method with the
target band and the matched points (003 Figure 1); the utility table at the matched level (003
Table 1) with each EMD's uncertainty; a risk-utility scatter of every evaluated release; the
data, the parameters (with what each means) and the provenance of the comparison.
"""

from __future__ import annotations

import base64
import io
from html import escape

from matplotlib.figure import Figure

from microagg.evaluation.comparison import (
    PARAMETER_MEANINGS,
    RAW_DATA_NOTICE,
    Comparison,
    MethodResult,
    risk_in_words,
)
from microagg.options import MatchStatus, RiskKind, Target, TargetMatch

__all__ = ["STYLE", "comparison_html", "figure_html"]

SCATTER_SPAN = 3.0
"""The scatter shows EMDs up to this multiple of the largest matched one."""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 64em; color: #222;
       line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: right; }
th:first-child, td:first-child, th:last-child, td:last-child { text-align: left; }
thead th { background: #f2f2f2; }
.recommendation { background: #eef6ee; border-left: 4px solid #4a4; padding: 0.8em 1em; }
.unmatched { color: #a33; }
.notice { background: #fff4e5; border-left: 4px solid #e90; padding: 0.8em 1em; }
.warning { color: #a33; font-weight: bold; }
figure { margin: 1em 0; } figcaption { font-size: 0.9em; color: #555; }
img { max-width: 100%; }
"""


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def figure_html(fig: Figure, caption: str, name: str) -> str:
    """``fig`` as an HTML figure with its PNG embedded, captioned, with the id ``name``."""
    return (f'<figure id="{name}"><img alt="{escape(caption)}" '
            f'src="data:image/png;base64,{_png(fig)}"><figcaption>{escape(caption)}'
            "</figcaption></figure>")


def _measure_label(c: Comparison) -> str:
    return ("earth mover's distance (smaller = better)" if c.target is Target.UTILITY
            else _risk_axis(c))


def _risk_axis(c: Comparison) -> str:
    """The risk held, as an axis says it."""
    if c.risk_kind is RiskKind.RANK:
        return "rank-based record-linkage risk (larger = safer)"
    return f"{c.risk_label} (smaller = safer)"


_UNCERTAINTY = {
    "emd": "EMD ± uncertainty: the mean EMD over up to three releases (one for a method "
           "without randomness); the ± adds the certified bound of the exact EMD (when the "
           "records are too many for an exact one, the EMD of grouped records brackets it; 0 "
           "otherwise) and the half-width of the 95 % interval over the releases. Two methods "
           "whose intervals overlap cannot be told apart.",
    "information_loss": "Information loss ± uncertainty: the mean over up to three releases "
                        "(one for a method without randomness) of the share of the keys' "
                        "entropy that the released values leave unknown (0 = nothing lost, "
                        "1 = every value suppressed); the ± is the half-width of the 95 % "
                        "interval over the releases. Two methods whose intervals overlap "
                        "cannot be told apart.",
}


def _curves(c: Comparison) -> Figure:
    count = len(c.methods)
    columns = min(count, 2)
    rows = (count + columns - 1) // columns
    fig = Figure(figsize=(5.2 * columns, 3.4 * rows))
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax in axes.ravel()[count:]:
        ax.set_visible(False)
    for ax, m in zip(axes.ravel(), c.methods, strict=False):
        values = [e.value for e in m.evaluations]
        means = [e.mean for e in m.evaluations]
        errors = [[e.mean - e.ci[0] for e in m.evaluations],
                  [e.ci[1] - e.mean for e in m.evaluations]]
        ax.errorbar(values, means, yerr=errors, marker="o", markersize=3, capsize=2,
                    color="C0", label="evaluated (mean, 95 % CI)")
        if c.match is TargetMatch.AT_MOST:
            ax.axhline(c.target_value + c.tolerance, color="C2", linestyle="--",
                       label="target (at most, + tolerance)")
        else:
            ax.axhspan(c.target_value - c.tolerance, c.target_value + c.tolerance, color="C2",
                       alpha=0.2, label="target ± tolerance")
        ax.axhline(c.target_value, color="C2", linewidth=1)
        matched = _matched_measure(c, m)
        ax.plot([m.value], [matched], marker="*", markersize=14,
                color="C3" if m.matched else "0.5",
                label="matched" if m.matched else "closest (not matched)")
        if m.log_axis:
            ax.set_xscale("log")
        ax.set_title(f"{m.method.value}")
        ax.set_xlabel(m.parameter)
        ax.set_ylabel(c.risk_label if c.target is Target.RISK else "EMD")
        ax.grid(alpha=0.3)
    axes.ravel()[0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def _matched_measure(c: Comparison, m: MethodResult) -> float:
    chosen = next(e for e in m.evaluations if e.value == m.value)
    return chosen.mean


def _scatter(c: Comparison) -> Figure:
    fig = Figure(figsize=(6.5, 4.4))
    ax = fig.subplots()
    for i, m in enumerate(c.methods):
        ax.scatter([e.loss for e in m.evaluations], [e.risk for e in m.evaluations],
                   s=14, color=f"C{i}", alpha=0.7, label=m.method.value)
        ax.scatter([m.utility.loss], [m.risk], s=160, marker="*", color=f"C{i}",
                   edgecolors="black", linewidths=0.6)
    if c.target is Target.RISK:
        ax.axhline(c.target_value, color="0.4", linestyle="--", linewidth=1)
    else:
        ax.axvline(c.target_value, color="0.4", linestyle="--", linewidth=1)
    # The weakest and strongest ends of each range lie far away; keep the matched region.
    shown = ([m.utility.loss for m in c.methods if m.ranked]
             or [m.utility.loss for m in c.methods])
    right = SCATTER_SPAN * max(max(shown), c.target_value if c.target is Target.UTILITY else 0.0)
    beyond = sum(e.loss > right for m in c.methods for e in m.evaluations)
    if right > 0 and beyond:
        ax.set_xlim(0, right)
        ax.text(0.98, 0.02, f"{beyond} release(s) beyond {c.utility_label} {right:.3g} not "
                "shown", transform=ax.transAxes, ha="right", va="bottom", fontsize=7,
                color="0.3")
    ax.set_xlabel(f"{c.utility_label} (utility loss; smaller = better)")
    ax.set_ylabel(_risk_axis(c) if c.risk_kind is not RiskKind.RANK
                  else "rank risk (larger = safer)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _number(value: float | str | None, digits: int = 4) -> str:
    if isinstance(value, str):
        return escape(value)
    return "—" if value is None else f"{value:.{digits}g}"


def _risk_number(c: Comparison, value: float | None, digits: int = 4) -> str:
    """A risk of the comparison as the reports show it: the global risk in percent (held as a
    fraction), any other risk as a number."""
    if value is not None and c.risk_kind is RiskKind.GLOBAL_RISK:
        from microagg.risk.registry import percent

        return escape(percent(value))
    return _number(value, digits)


def _status(m: MethodResult, tied: bool) -> str:
    if m.status is MatchStatus.MATCHED:
        text = "matched"
    elif m.status is MatchStatus.EXCEEDS:
        text = escape(m.reason)
    else:
        text = f'<span class="unmatched">left out: {escape(m.reason)}</span>'
    if tied:
        text += " (cannot be told apart from the first)"
    if m.warning:
        text += f'<br><span class="warning">{escape(m.warning)}</span>'
    return text


def _table(c: Comparison) -> str:
    rank = {m: i + 1 for i, m in enumerate(c.ranking)}
    tied = set(c.tied_with_best())
    rows = []
    for m in sorted(c.methods, key=lambda m: rank.get(m.method, len(rank) + 1)):
        cells = "".join(f"<td>{_number(v)}</td>" for v in m.utility.cells())
        rows.append(
            f"<tr><td>{escape(m.method.value)}</td><td>{rank.get(m.method, '—')}</td>"
            f"<td>{escape(m.parameter)} = {_number(m.value)}</td>"
            f"<td>{_risk_number(c, m.risk)} [{_risk_number(c, m.risk_ci[0])}, "
            f"{_risk_number(c, m.risk_ci[1])}]</td>"
            f"{cells}<td>{_status(m, m.method in tied)}</td></tr>")
    utility = type(c.methods[0].utility)
    headers = "".join(f"<th>{escape(h)}</th>" for h in utility.columns)
    return ('<table id="utility-table"><thead><tr><th>method</th><th>rank</th>'
            f"<th>parameter</th><th>risk [95 % CI]</th>{headers}"
            "<th>status</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>"
            f"<p><small>{escape(_UNCERTAINTY.get(utility.name, ''))}</small></p>")


def _analysis(c: Comparison) -> str:
    """The analyst's judgement of each ranked release (``compare --regression``), if asked."""
    analysis = c.data.get("analysis")
    if analysis is None:
        return ""
    overlap = analysis["ci_overlap"]
    rows = "".join(f"<tr><td>{escape(m)}</td><td>{overlap[m]:.3f}</td></tr>"
                   for m in analysis["ranking"])
    return (f"<h2 id=\"analysis\">The analyst's regression at the matched {escape(c.risk_label)}"
            f"</h2>\n<p>{escape(analysis['regression'])}: {escape(analysis['measure'])}.</p>\n"
            "<table><tr><th>method</th><th>CI overlap</th></tr>" + rows + "</table>")


def _data_table(c: Comparison) -> str:
    if "domains" not in c.data:
        return _keys_table(c)
    rows = "".join(
        f"<tr><td>{escape(name)}</td>"
        + (f"<td>{d['low']:.6g}</td><td>{d['high']:.6g}</td>" if "low" in d
           else "<td>—</td><td>—</td>")
        + f"<td>{escape(d['source'])}</td></tr>" for name, d in c.data["domains"].items())
    note = ("<p><small>A domain read off the data spans the original values: its bounds are the "
            "extremes of the raw data, which are not shown.</small></p>"
            if any("low" not in d for d in c.data["domains"].values()) else "")
    return ('<table id="data-table"><thead><tr><th>attribute</th><th>low</th><th>high</th>'
            f"<th>domain from</th></tr></thead><tbody>{rows}</tbody></table>{note}")


def _keys_table(c: Comparison) -> str:
    """The keys of a comparison of methods for categorical keys: their values, missing
    values and how the recoding candidates recode them."""
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{d['values']:,}</td><td>{d['missing']:,}</td>"
        f"<td>{escape(d['recoding'] or '—')}</td></tr>" for name, d in c.data["keys"].items())
    left = c.data.get("methods_left_out") or {}
    notes = "".join(f"<p><small>{escape(m)} is not compared: {escape(why)}.</small></p>"
                    for m, why in left.items())
    return ('<table id="data-table"><thead><tr><th>key</th><th>values</th><th>missing</th>'
            f"<th>recoded by the recoding candidates</th></tr></thead><tbody>{rows}</tbody>"
            f"</table><p>The original keys' {escape(c.risk_label)}: "
            f"{_risk_number(c, c.data['original_risk'], 6)}"
            + (f"; weight: {escape(c.data['weight'])}" if c.data.get("weight") else "")
            + f".</p>{notes}")


def _parameters(c: Comparison) -> str:
    items = [
        ("target", f"{c.target.value} = {c.target_value:.6g} ({escape(c.target_source)})"
         if c.risk_kind is RiskKind.RANK else
         f"{escape(c.risk_label)} at most {_risk_number(c, c.target_value, 6)} "
         f"({escape(c.target_source)})"
         if c.match is TargetMatch.AT_MOST else
         f"{escape(c.risk_label)} = {_risk_number(c, c.target_value, 6)} "
         f"({escape(c.target_source)})"),
        ("tolerance", f"± {_risk_number(c, c.tolerance, 3)} (a value is matched when its 95 % "
                      "interval lies within the band)" if c.match is TargetMatch.WITHIN else
         f"+ {_risk_number(c, c.tolerance, 3)} (a value is matched when its 95 % interval lies "
         "at or below "
         "the target plus the tolerance; of those, the least protective is chosen)"),
        ("seeds per randomized evaluation", f"{c.seeds} (doubled up to 4× near the target)"),
        ("risk", escape(_risk_text(c))),
        ("reading the risk", escape(risk_in_words(c.target_value))
         if c.target is Target.RISK and c.risk_kind is RiskKind.RANK
         else escape(c.risk_definition.get("reading", "—"))),
        ("utility", escape(_utility_text(c))),
    ]
    meanings = dict.fromkeys(PARAMETER_MEANINGS.get(f"{m.method.value}:{m.parameter}",
                                                    PARAMETER_MEANINGS.get(m.parameter))
                             for m in c.methods)
    items += [("parameter", escape(p)) for p in meanings if p]
    notes = [f"{m.method.value}: {m.note}" for m in c.methods if m.note]
    items += [("note", escape(n)) for n in notes]
    rows = "".join(f"<tr><td>{k}</td><td style='text-align:left'>{v}</td></tr>"
                   for k, v in items)
    return f'<table id="parameters"><tbody>{rows}</tbody></table>'


def _risk_text(c: Comparison) -> str:
    d = c.risk_definition
    if c.risk_kind is RiskKind.RANK:
        return (f"{d['measure']}; ranks: {d['scale']}; tied values: "
                f"{d.get('ties', 'midranks')}; aggregate: {d['aggregate']}")
    return "; ".join(f"{k}: {v}" if k != "measure" else v for k, v in d.items()
                     if k not in ("label", "reading"))


def _utility_text(c: Comparison) -> str:
    d = c.utility_definition
    if c.risk_kind is RiskKind.RANK:
        return "earth mover's distance, attributes scaled to [0, 1] by their domain"
    return "; ".join(f"{k}: {v}" if k != "measure" else v for k, v in d.items()
                     if k != "label")


def _provenance(c: Comparison) -> str:
    p = c.provenance
    left_out = p.get("columns_left_out") or []
    items = [("input", escape(str(p.get("input") or "a table given in Python"))),
             ("made", escape(str(p.get("created", "—")))),
             ("microagg", escape(str(p.get("microagg", "—")))),
             ("columns compared", escape(", ".join(c.data["columns"]))),
             ("columns left out", escape(", ".join(left_out)) if left_out else "none")]
    rows = "".join(f"<tr><td>{k}</td><td style='text-align:left'>{v}</td></tr>"
                   for k, v in items)
    return f'<table id="provenance"><tbody>{rows}</tbody></table>'


def _held_out(c: Comparison) -> str:
    """The control records of a comparison at an attack's risk, as the report's first
    line counts them."""
    held = c.data.get("control_rows")
    return "" if held is None else f" released and {held:,} control records held out of each"


def comparison_html(c: Comparison) -> str:
    """The report of ``c`` as one HTML document (UTF-8 text)."""
    held = "risk" if c.target is Target.RISK else "utility"
    target = (_risk_number(c, c.target_value, 6) if c.target is Target.RISK
              else f"{c.target_value:.6g}")
    band = ("the target ceiling" if c.match is TargetMatch.AT_MOST else "the target band")
    curves = figure_html(_curves(c), f"{_measure_label(c)} against each method's parameter, "
                         f"with {band} and the matched value (003 Figure 1).",
                         "figure-curves")
    grouped = ("EMD of groups of at most 1,000 distinct records per data set, "
               if c.risk_kind.on_numeric else "")
    scatter = figure_html(_scatter(c), "Risk against utility loss of every evaluated release "
                          f"(first seed; {grouped}the chosen releases' as in the table); "
                          "stars: the releases each method is compared at.", "figure-scatter")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>microagg: methods compared at equal {held}</title><style>{STYLE}</style></head>
<body>
<h1>Anonymization methods compared at equal {held}</h1>
<p class="notice" id="notice">{escape(RAW_DATA_NOTICE)}</p>
<p>{c.data['rows']:,} records{_held_out(c)}, {len(c.data['columns'])} attributes
({escape(', '.join(c.data['columns']))}); target {held} {target}
({escape(c.target_source)}).</p>
<h2>Recommendation</h2>
<p class="recommendation" id="recommendation">{escape(c.recommendation())}</p>
<h2>Utility at the matched {held}</h2>
{_table(c)}
{_analysis(c)}
<h2>Calibration</h2>
{curves}
<h2>Risk and utility of every evaluated release</h2>
{scatter}
<h2>Data</h2>
{_data_table(c)}
<h2>Parameters</h2>
{_parameters(c)}
<h2>Provenance</h2>
{_provenance(c)}
<p><small>Method of Domingo-Ferrer, Ricci and Soria-Comas (2016), <i>Empirical comparison of
anonymization methods regarding their risk-utility trade-off</i>; made by microagg.</small></p>
</body></html>
"""
