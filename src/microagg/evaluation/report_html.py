"""A release's report as one self-contained HTML page a data-protection officer can read (the
style of :mod:`microagg.evaluation.html`; figures are embedded PNGs, no external asset).

Two kinds (:class:`~microagg.options.ReportKind`), as sdcMicro's ``report(internal=)``; what
each shows is what :mod:`microagg.release.reports.disclosure` declares for its audience (``owner``
for the internal report, ``external`` for the external one), section by section:

``internal`` (the default), for the data owner: the method and its parameters, the guarantee,
the columns by role, the provenance with the input's size and SHA-256, the risk before and
after (unique records, smallest class, record linkage, rank risk), the utility overall and per
attribute, the cluster sizes with their histogram, the generalized categories, the measures
skipped and the notes.

``external``, to share: the method and its parameters, the guarantee and whether the written
table satisfies it, the columns by role, the number of records and clusters, the input's name,
the version and the date, and the overall information loss (SSE/SST) only. It leaves out:

- every figure computed record by record from the raw data (record linkage, rank risk, unique
  records before and after, per-attribute errors): they describe the original records;
- the input's size and hash: a hash confirms a guess of the whole input;
- the cluster sizes (smallest, largest, histogram) and the smallest class: a class of exactly
  k, or a lone large cluster, singles out small groups; the guarantee states the least size;
- means and variances and their variations, the generalized categories, the clamped counts
  and the notes: with the released table they give back statistics or values of the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from matplotlib.figure import Figure

from microagg.evaluation.html import STYLE, figure_html
from microagg.options import ReportKind, parse
from microagg.release.reports.disclosure import RELEASE_RECORD, Audience, Node, allows
from microagg.release.reports.sidecar import ReleaseRecord

__all__ = ["audience_of", "grid_table", "number_cell", "release_html", "release_sections",
           "rows_table"]


def audience_of(kind: ReportKind | str) -> Audience:
    """The audience of a report kind: the owner for ``internal``, ``external`` for external."""
    internal = parse(ReportKind, kind, "`report_kind`") is ReportKind.INTERNAL
    return Audience.OWNER if internal else Audience.EXTERNAL

INTERNAL_NOTICE = ("Internal report: it holds figures computed from the raw data (risk, "
                   "utility, cluster sizes, the input's hash). It is for the data owner, not "
                   "for publication; share the external report instead.")
EXTERNAL_NOTICE = ("External report: it leaves out every record-level figure, the cluster "
                   "sizes, the input's hash and the values, means and variances of the data; the "
                   "guarantee is stated for the table as published.")


def number_cell(value: Any, digits: int = 4) -> str:
    """A figure as a table cell: grouped digits for an integer, 4 significant digits."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return escape(str(value))
    return f"{value:,}" if isinstance(value, int) else f"{value:.{digits}g}"


def rows_table(items: list[tuple[str, str]], name: str) -> str:
    """A two-column table of (label, HTML) rows."""
    body = "".join(f"<tr><td>{escape(k)}</td><td style='text-align:left'>{v}</td></tr>"
                   for k, v in items)
    return f'<table id="{name}"><tbody>{body}</tbody></table>'


def grid_table(header: list[str], rows: list[list[str]], name: str) -> str:
    """A table with a header row; ``rows`` hold HTML cells."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return (f'<table id="{name}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table>")


def _parameters(r: ReleaseRecord) -> str:
    items = [(name, number_cell(value)) for name, value in r.parameters.items()
             if value is not None]
    return rows_table(items or [("parameters", "none")], "parameters")


def _guarantee(r: ReleaseRecord, shown: bool) -> str:
    g = r.guarantee
    verdict = ("holds: verified on the written table, over these columns" if g.holds
               else '<span class="warning">no guarantee, or it does not hold</span>')
    items = [("semantics", escape(g.semantics))]
    if not shown:  # the step's table is not the release: what it holds is not published
        return rows_table(items, "scope")
    return (f'<p class="recommendation" id="guarantee">{escape(g.statement)}</p>'
            + rows_table([*items, ("columns", escape(", ".join(g.columns))),
                          ("verdict", verdict)], "scope"))


def _columns(r: ReleaseRecord) -> str:
    roles = r.columns
    items = [("masked (quasi-identifiers)", roles.masked),
             ("confidential (distribution protected)", roles.confidential),
             ("released unchanged", roles.released_unchanged),
             ("identifiers dropped", roles.identifiers_dropped)]
    return rows_table([(k, escape(", ".join(v)) or "none") for k, v in items], "columns")


def _provenance(r: ReleaseRecord, audience: Audience, declared: Node) -> str:
    items = [("input", escape(r.input.name))]
    if allows(declared, "input", audience=audience):
        items += [("input size (bytes)", number_cell(r.input.bytes)),
                  ("input SHA-256", f"<code>{escape(r.input.sha256 or '—')}</code>")]
    if allows(declared, "records", audience=audience):
        items.append(("records released", number_cell(r.records)))
    items += [("made", escape(r.created)), ("microagg", escape(r.microagg_version)),
              ("report format", escape(r.format))]
    return rows_table(items, "provenance")


def _risk(r: ReleaseRecord) -> str:
    if not r.risk:
        return "<p id='risk'>not measured: " + escape(
            "; ".join(r.skipped.values()) or "no figure") + "</p>"
    measures = (("records unique over the masked columns (%)", "unique_percent"),
                ("smallest class of equal values", "smallest_class"),
                ("classes", "classes"),
                ("record linkage (% of records linked to their original)",
                 "record_linkage_percent"),
                ("rank risk (larger = safer)", "rank_risk"))
    rows = [[escape(label)] + [number_cell(r.risk[when].get(key)) for when in ("before", "after")]
            for label, key in measures]
    return grid_table(["measure", "before (input)", "after (release)"], rows, "risk")


def _utility(r: ReleaseRecord) -> str:
    u = r.utility
    if u is None:
        return "<p id='utility'>not measured: " + escape(
            "; ".join(r.skipped.values()) or "no figure") + "</p>"
    overall = rows_table([("SSE/SST (%)", number_cell(u.sse_percent)),
                     ("relative error (mean)", number_cell(u.relative_error)),
                     ("JSD (mean)", number_cell(u.jsd)),
                     ("mean variation (mean)", number_cell(u.mean_variation)),
                     ("variance variation (mean)", number_cell(u.variance_variation)),
                     ("EMD (earth mover's distance)", "—" if u.emd is None else
                      f"{number_cell(u.emd)} ± {number_cell(u.emd_bound, 2)}")],
                    "utility")
    keys = ("sse", "jsd", "variance_variation", "mean_variation", "mean_semantic_distance")
    rows = [[escape(name)] + [number_cell(detail.get(k)) for k in keys]
            for name, detail in u.per_attribute.items()]
    return overall + grid_table(["attribute", "SSE", "JSD", "variance variation", "mean variation",
                            "mean semantic distance"], rows, "per-attribute")


def _histogram(sizes: Mapping[str, int]) -> str:
    fig = Figure(figsize=(6.0, 2.8))
    ax = fig.subplots()
    ax.bar([int(s) for s in sizes], list(sizes.values()), color="C0")
    ax.set_xlabel("records per cluster")
    ax.set_ylabel("clusters")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return figure_html(fig, "How many clusters have each size.", "figure-clusters")


def _clusters(r: ReleaseRecord) -> str:
    clusters = r.report.get("clusters")
    if not clusters:
        return "<p>The method forms no clusters.</p>"
    if "count" not in clusters:  # univariate: one partition per attribute
        rows = [[escape(name), number_cell(c["count"]),
                 escape(", ".join(f"{s}: {n}" for s, n in c["size_histogram"].items()))]
                for name, c in clusters.items()]
        return grid_table(["attribute", "clusters", "size: clusters"], rows, "clusters")
    rows = [[escape(size), number_cell(count)]
            for size, count in clusters["size_histogram"].items()]
    return (rows_table([("clusters", number_cell(clusters["count"])),
                   ("smallest", number_cell(clusters.get("smallest"))),
                   ("largest", number_cell(clusters.get("largest")))], "clusters")
            + _histogram(clusters["size_histogram"])
            + grid_table(["records per cluster", "clusters"], rows, "cluster-sizes"))


def _cells_changed(r: ReleaseRecord) -> str | None:
    """The cells a key method changed, per key: suppressed (local suppression) or given
    another category (PRAM); ``None`` for a method that reports no such count."""
    suppressed = r.report.get("suppressions")
    if suppressed:
        before = r.report.get("missing_before", {})
        rows = [[escape(key), number_cell(before.get(key)), number_cell(count)]
                for key, count in suppressed.items()]
        rows.append(["all keys", number_cell(sum(before.values()) if before else None),
                     number_cell(r.report.get("total_suppressions"))])
        return grid_table(["key", "missing before", "suppressed"], rows, "suppressions")
    changed = r.report.get("changed_values")
    if changed:
        rows = [[escape(key), number_cell(count)] for key, count in changed.items()]
        return grid_table(["key", "values changed"], rows, "changed-values")
    return None


def _notes(r: ReleaseRecord) -> str:
    notes = [f"{name} generalized to {', '.join(concepts)}" for name, concepts in
             r.report.get("generalized_categories", {}).items()]
    notes += [f"{count:,} value(s) of {name} clamped into its declared domain"
              for name, count in r.report.get("clamped", {}).items()]
    notes += [f"{measure}: {why}" for measure, why in r.skipped.items()]
    notes += list(r.report.get("notes", []))
    notes.append(f"measures: {r.measures}")
    return "<ul id='notes'>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ul>"


def _external_summary(r: ReleaseRecord) -> str:
    clusters = r.report.get("clusters") or {}
    count = clusters.get("count") if isinstance(clusters, Mapping) else None
    loss = r.utility.sse_percent if r.utility is not None else None
    items = [("clusters", number_cell(count) if count is not None else "—"),
             ("information loss, SSE/SST (%)", "—" if loss is None else f"{loss:.1f}")]
    return rows_table(items, "summary")


def release_sections(record: ReleaseRecord, audience: Audience,
                     declared: Node = RELEASE_RECORD) -> list[tuple[str, str]]:
    """The sections of the report ``record`` (title, HTML) that ``audience`` may see, by the
    declaration ``declared`` of the record (:mod:`microagg.release.reports.disclosure`; a recipe
    step's record is declared apart, its table not being the release): :func:`release_html`
    puts them in a page, a recipe's report puts one set per step."""
    def shown(*keys: str) -> bool:
        return allows(declared, *keys, audience=audience)

    sections = [("Guarantee", _guarantee(record, shown("guarantee"))),
                ("Parameters", _parameters(record))]
    if shown("columns"):
        sections.append(("Columns", _columns(record)))
    changed = _cells_changed(record)
    whole = [("Disclosure risk", _risk(record), ("risk",)),
             ("Utility", _utility(record), ("utility",)),
             *([("Cells changed", changed, ("report",))] if changed is not None else
               [("Clusters", _clusters(record), ("report", "clusters"))]),
             ("Notes", _notes(record), ("report",))]
    sections += [(title, html) for title, html, keys in whole if shown(*keys)]
    if not shown("utility") and shown("utility", "sse_percent") \
            and shown("report", "clusters", "count"):
        sections.append(("Summary", _external_summary(record)))
    sections.append(("Provenance", _provenance(record, audience, declared)))
    return sections


def release_html(record: ReleaseRecord, kind: ReportKind | str = ReportKind.INTERNAL) -> str:
    """The report ``record`` as one HTML page (UTF-8 text): ``internal`` with every figure,
    ``external`` without those the module docstring lists (record-level figures, cluster
    sizes, the input's hash, statistics and values of the data).

    Examples
    --------
    >>> import microagg
    >>> from microagg.evaluation.release_record import release_record
    >>> data = microagg.datasets.synthetic(200, 2, seed=0)
    >>> method = microagg.MDAV(k=5)
    >>> release = method.release(data.frame, schema=data.schema)
    >>> record = release_record(release, data.frame, method=method, schema=data.schema)
    >>> 'id="risk"' in release_html(record), 'id="risk"' in release_html(record, "external")
    (True, False)
    """
    audience = audience_of(kind)
    internal = audience is Audience.OWNER
    notice = INTERNAL_NOTICE if internal else EXTERNAL_NOTICE
    body = "\n".join(f"<h2>{escape(title)}</h2>\n{html}"
                     for title, html in release_sections(record, audience))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>microagg: release report ({escape(record.method)})</title><style>{STYLE}</style></head>
<body>
<h1>Release report: {escape(record.method)}, {record.records:,} records</h1>
<p class="notice" id="notice">{escape(notice)}</p>
{body}
<p><small>Made by microagg {escape(record.microagg_version)} ({'internal' if internal else
'external'} report).</small></p>
</body></html>
"""
