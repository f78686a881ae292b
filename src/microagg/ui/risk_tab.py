"""The server of the risk tab: the risk of the current table (the input, or the output of the
last step) over its key variables, as ``microagg risk`` measures it (:mod:`microagg.risk`):
k-anonymity and the record risk (1/f_k, or the individual risk under the declared weight),
SUDA2's special uniques with their DIS scores and each key's contribution, and the
l-diversity of a sensitive attribute. Each view is computed in one of the session's workers
when it is shown (it says so meanwhile), and remembered for the last few tables and
settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from html import escape
from typing import Any

import numpy as np
import pandas as pd
from shiny import Inputs, reactive, render, ui
from shiny.session import require_active_session

from microagg.data.schema import Kind, Role, Schema
from microagg.errors import InputError, MicroaggError
from microagg.options import LDiversityKind
from microagg.recipe.risk import RiskSummary
from microagg.risk import LDiversity, Suda, l_diversity, suda2
from microagg.risk.suda import SearchCost, search_cost
from microagg.ui.plots import dis_histogram, l_histogram, percent, risk_histogram
from microagg.ui.risk_measures import measures_server
from microagg.ui.risk_measures import said as _said
from microagg.ui.session import Pending, State, clear_error, safely, show_error

__all__ = ["TOP_RECORDS", "risk_explained", "risk_server"]

TOP_RECORDS = 20
SETTLE = 1.0
"""Seconds the keys stay the same before their SUDA2 search begins in the background."""
ASKED_SECONDS = 5.0
"""A SUDA2 search that may cost more (:func:`~microagg.risk.suda.search_cost`) waits until
the user asks for it, its cost stated, and can be stopped."""


def _records(frame: pd.DataFrame, keys: list[str], order: np.ndarray,
             columns: dict[str, Any]) -> Any:
    """The rows ``order`` of ``frame`` (numbered from 1) with their keys and ``columns``, as
    a plain table (a data grid takes the browser several times longer to draw)."""
    shown = frame.iloc[order][keys].copy()
    shown.insert(0, "row", order + 1)
    for name, values in columns.items():
        shown[name] = values
    head = "".join(f"<th>{escape(str(name))}</th>" for name in shown.columns)
    body = "".join("<tr>" + "".join(f"<td>{'' if pd.isna(v) else escape(str(v))}</td>"
                                    for v in row) + "</tr>"
                   for row in shown.itertuples(index=False))
    return ui.HTML(f'<div class="records"><table class="steps"><thead><tr>{head}</tr>'
                   f"</thead><tbody>{body}</tbody></table></div>")


def _sensitive_default(schema: Schema | None, choices: list[str]) -> str | None:
    """The first confidential categorical column, else the first confidential one, else the
    first column that is not a key."""
    if not choices:
        return None
    if schema is not None:
        confidential = [a for a in schema if a.role is Role.CONFIDENTIAL and a.name in choices]
        for attribute in confidential:
            if attribute.kind is not Kind.NUMERIC:
                return attribute.name
        if confidential:
            return confidential[0].name
    return choices[0]


def _count(expected: float) -> str:
    """An expected number of records: three significant digits below 10 (a weighted risk's
    sum is often a fraction of one record)."""
    return f"{expected:,.1f}" if expected >= 10 else f"{expected:.3g}"


def risk_explained(risk: RiskSummary) -> str:
    """What the boxes mean together: how the records unique in the sample relate to the
    expected re-identifications (the sum of the record risks) and the global risk (their
    mean, a percentage), under 1/f_k or under the sampling weight's individual risk."""
    uniques = risk.fk == 1
    count = int(uniques.sum())
    carried = float(risk.record_risk[uniques].sum())
    total = (f"The expected re-identifications are the sum of every record's risk "
             f"({_count(risk.expected_reidentifications)}); the global risk is their mean over "
             f"the {risk.n:,} records ({percent(risk.global_risk)}).")
    if risk.weight is None:
        return (f"A record's risk is 1/f_k: an intruder who knows its keys and that it is in "
                f"the file picks it among the f_k records that share them. Each of the "
                f"{count:,} records unique on the keys (f_k = 1) is then re-identified for "
                f"sure, so they alone count {carried:,.0f}. " + total)
    if not count:
        return (f"A record's risk is its individual risk under the sampling weight "
                f"{risk.weight}: about 1/F_k, F_k the people of the population who share "
                "its keys (estimated from the weights). " + total)
    typical = float(np.median(risk.record_risk[uniques]))
    return (f"A record's risk is its individual risk under the sampling weight {risk.weight}: "
            f"about 1/F_k, F_k the people of the population who share its keys (estimated "
            f"from the weights), not 1/f_k in the sample. The {count:,} records unique in "
            f"the sample (f_k = 1) each stand for many people (median risk "
            f"{percent(typical)}, about 1 in {1 / typical:,.0f}), so together they count "
            f"only {carried:,.2f} expected re-identifications. " + total)


def risk_server(input: Inputs, state: State) -> None:
    """Register the outputs and effects of the risk tab: one panel each for the record
    risk, SUDA2 and l-diversity, and one per measure shown from its declaration
    (:mod:`microagg.ui.risk_measures`), over the current table and its keys."""

    @reactive.calc
    def keyed() -> tuple[pd.DataFrame, list[str]] | None:
        """The current table and its key variables."""
        frame = state.current()
        if frame is None:
            return None
        schema = state.usable_schema()
        return frame, [a.name for a in schema or () if a.role is Role.QUASI
                       and a.name in frame.columns]

    @render.ui
    def keys_text() -> Any:
        found = keyed()
        if found is None:
            return None
        return ui.p(f"Key variables (quasi-identifiers): {', '.join(found[1]) or 'none'}",
                    id="keys")

    @reactive.calc
    def risk_now() -> RiskSummary | Pending | None:
        frame = state.current()
        if frame is None:
            return None
        return state.risk(frame, state.usable_schema(), input.missing_semantics())

    _record_risk_panel(input, state, risk_now)
    _suda_panel(input, state, keyed)
    _diversity_panel(input, state, keyed, risk_now)
    measures_server(input, state, keyed)


def _record_risk_panel(input: Inputs, state: State,
                       risk_now: Callable[[], RiskSummary | Pending | None]) -> None:
    """The boxes of f_k and the record risk, its histogram and the records most at risk."""

    @render.ui
    def risk_boxes() -> Any:
        risk = risk_now()
        if risk is None:
            return ui.p("Load a table first.")
        if isinstance(risk, Pending):
            return _said(risk)
        boxes = [("records", f"{risk.n:,}"),
                 ("records in classes smaller than 2 (unique)", f"{risk.violations[2]:,}"),
                 ("records in classes smaller than 3", f"{risk.violations[3]:,}"),
                 ("records in classes smaller than 5", f"{risk.violations[5]:,}"),
                 ("expected re-identifications", _count(risk.expected_reidentifications)),
                 (f"global risk (mean {risk.risk_label})", percent(risk.global_risk))]
        return ui.TagList(
            ui.layout_column_wrap(*(ui.value_box(title, value, id=f"box_{i}")
                                    for i, (title, value) in enumerate(boxes)), width=1 / 3),
            ui.p(risk_explained(risk), class_="text-muted", id="risk-explained"))

    @render.plot(alt="records by re-identification risk")
    def risk_plot() -> Any:
        risk = risk_now()
        if not isinstance(risk, RiskSummary):
            return None
        run = state.run()
        if run is None:
            return risk_histogram(risk.record_risk, label=risk.risk_label)
        before = state.risk(run.original, state.usable_schema(), input.missing_semantics())
        if isinstance(before, Pending):
            return None
        return risk_histogram(before.record_risk, risk.record_risk, label=risk.risk_label)

    @render.ui
    def top_risk() -> Any:
        risk, frame = risk_now(), state.current()
        if not isinstance(risk, RiskSummary) or frame is None:
            return None
        order = risk.record_risk.argsort(kind="stable")[::-1][:TOP_RECORDS]
        return _records(frame, list(risk.keys), order, {
            "f_k": risk.fk[order], "risk": [percent(r) for r in risk.record_risk[order]]})


SudaRequest = tuple[pd.DataFrame, tuple[Any, ...], Callable[[Callable[..., None]], Suda]]


def _costly(request: SudaRequest) -> SearchCost | None:
    """The cost of a SUDA2 search the user must ask for (``None``: it begins by itself)."""
    frame, key = request[0], request[1]
    cost = search_cost(len(frame), len(key[1]))
    return cost if cost.seconds > ASKED_SECONDS else None


def _said_key(request: SudaRequest) -> tuple[Any, ...]:
    """The search a user asked for: its table and settings."""
    return (id(request[0]), *request[1])


def _waits(state: State, request: SudaRequest,
           asked: frozenset[tuple[Any, ...]]) -> SearchCost | None:
    """The cost of a search that waits for the user to ask for it (``None``: it runs or
    is done, or begins by itself)."""
    cost = _costly(request)
    if cost is None or _said_key(request) in asked or state.has(*request[:2]):
        return None
    return cost


def _begins_ahead(state: State, request: SudaRequest) -> bool:
    """Whether the search is to begin in the background: not begun, and not costly."""
    return not state.has(*request[:2]) and _costly(request) is None


def _suda_waiting(result: Pending | SearchCost | str,
                  suda_request: Callable[[], SudaRequest | str],
                  searched: dict[tuple[Any, ...], int]) -> Any:
    """What the SUDA2 view says before its result: the cost of a search not begun, with the
    button that begins it; a costly search running, with the steps it has searched (read
    again every second) and the button that stops it."""
    with reactive.isolate():
        request = suda_request()
    cost = None if isinstance(request, str) else _costly(request)
    if isinstance(result, SearchCost):
        return ui.div(ui.p(result.describe() + ".", id="suda-cost"),
                      ui.input_action_button("suda_start", "Search the special uniques"))
    if isinstance(result, Pending) and cost is not None and not isinstance(request, str):
        reactive.invalidate_later(1.0)
        done = searched.get(_said_key(request), 0)
        return ui.div(_said(result), ui.p(cost.searched(done), id="suda-searched"),
                      ui.input_action_button("suda_stop", "Stop the search"))
    return _said(result)


def _counted(check: Callable[..., None], searched: dict[tuple[Any, ...], int],
             key: tuple[Any, ...]) -> Callable[[int], None]:
    """SUDA2's progress callback: ``check`` (which stops it), and the steps searched so
    far written under ``key`` (read by the view on the event loop)."""
    def progress(done: int) -> None:
        check()
        searched[key] = done
    return progress


def _suda_controls(input: Inputs, state: State,
                   suda_request: Callable[[], SudaRequest | str]
                   ) -> reactive.Value[frozenset[tuple[Any, ...]]]:
    """The searches the user asked for (begun by the button that states their cost), and
    the button that stops one: it ends at its next subset of the keys and is forgotten."""
    asked: reactive.Value[frozenset[tuple[Any, ...]]] = reactive.value(frozenset())

    @reactive.effect
    @reactive.event(input.suda_start)
    def _suda_start() -> None:
        request = suda_request()
        if not isinstance(request, str):
            asked.set(asked() | {_said_key(request)})

    @reactive.effect
    @reactive.event(input.suda_stop)
    def _suda_stop() -> None:
        request = suda_request()
        if not isinstance(request, str):
            state.stop(*request[:2])
            asked.set(asked() - {_said_key(request)})

    return asked


def _suda_panel(input: Inputs, state: State,
                keyed: Callable[[], tuple[pd.DataFrame, list[str]] | None]) -> None:
    """SUDA2's special uniques: the search begun ahead, the summary, each key's share, the
    histogram of the DIS scores and the records with the highest."""
    session = require_active_session(None)
    searched: dict[tuple[Any, ...], int] = {}  # steps searched so far, by search

    def suda_request() -> SudaRequest | str:
        """The table, the settings and the SUDA2 search of the current view (at the default
        DIS fraction: another is rescored from it); or why there is none."""
        found = keyed()
        if found is None:
            return "Load a table first."
        frame, keys = found
        if not keys:
            return "No key variable: declare quasi-identifiers on the Data tab."
        missing = input.missing_semantics()

        key = ("suda", tuple(keys), missing)

        def search(check: Callable[..., None]) -> Suda:
            return suda2(state.key_codes(frame, keys), keys, missing,
                         progress=_counted(check, searched, (id(frame), *key)))

        return frame, key, search

    asked = _suda_controls(input, state, suda_request)
    waiting: list[tuple[asyncio.TimerHandle | None, Any]] = [(None, None)]

    @reactive.effect
    @safely("dis_fraction")
    def _suda_ahead() -> None:
        """The SUDA2 search is the slowest measure (about 0.5 s on Adult's nine keys): it
        begins in the background once the table and its keys have stayed the same for
        :data:`SETTLE` seconds, or when the risk tab shows (once its outputs are sent), so
        that its view answers at once."""
        request = suda_request()
        key = None if isinstance(request, str) else (id(request[0]), request[1])
        handle, pending = waiting[0]
        if handle is not None and (pending != key or input.tabs() == "risk"):
            handle.cancel()  # the keys changed again, or the search begins now
            waiting[0] = (None, None)
        if isinstance(request, str) or not _begins_ahead(state, request):
            return
        if input.tabs() == "risk":
            session.on_flushed(lambda: state.begin(*request), once=True)
        elif pending != key or handle is None:
            waiting[0] = (asyncio.get_running_loop().call_later(
                SETTLE, state.begin, *request), key)

    @reactive.calc
    def suda_now() -> Suda | Pending | SearchCost | str:
        """SUDA2 of the current table at the DIS fraction asked; a string says why there is
        none, a cost that the search waits to be asked for."""
        request = suda_request()
        if isinstance(request, str):
            return request
        cost = _waits(state, request, asked())
        if cost is not None:
            return cost
        fraction = input.dis_fraction()
        try:
            if fraction is None:
                raise InputError("`dis_fraction` must lie in (0, 1), got nothing")
            result = state.remembered(*request, what="Searching the special uniques "
                                      "(SUDA2)…", exclusive=True)
            if not isinstance(result, Pending):
                result = result.at_fraction(float(fraction))
        except MicroaggError as exc:
            show_error("dis_fraction", exc)
            return "Set the sampling fraction of the DIS score."
        clear_error("dis_fraction")
        return result

    @render.ui
    def suda_summary() -> Any:
        result = suda_now()
        return (_suda_summary(result) if isinstance(result, Suda)
                else _suda_waiting(result, suda_request, searched))

    @render.ui
    def suda_contributions() -> Any:
        result = suda_now()
        return _contributions(result) if isinstance(result, Suda) else None

    @render.plot(alt="records by DIS score")
    def suda_plot() -> Any:
        result = suda_now()
        return dis_histogram(result.dis_scores) if isinstance(result, Suda) else None

    @render.ui
    def top_dis() -> Any:
        result, found = suda_now(), keyed()
        return _top_dis(result, found) if isinstance(result, Suda) else None


def _top_dis(result: Suda, found: tuple[pd.DataFrame, list[str]] | None) -> Any:
    """The records with the highest DIS scores."""
    if found is None:
        return None
    order = result.dis_scores.argsort(kind="stable")[::-1][:TOP_RECORDS]
    order = order[result.scores[order] > 0]
    return _records(found[0], found[1], order, {
        "SUDA score": [f"{v:,.0f}" for v in result.scores[order]],
        "DIS score": [f"{v:.4g}" for v in result.dis_scores[order]]})


def _sensitive_select(input: Inputs, state: State,
                      keyed: Callable[[], tuple[pd.DataFrame, list[str]] | None]) -> None:
    """The sensitive attribute's choices (the columns that are not keys) and the one
    selected: the user's pick while it is a choice, else the default."""
    pushed: set[str] = set()  # the columns the app selected (their echoes are not choices)
    picked: list[str | None] = [None]  # the column the user selected, if any

    @reactive.effect
    @reactive.event(input.sensitive)
    def _sensitive_picked() -> None:
        if input.sensitive() and input.sensitive() not in pushed:
            picked[0] = input.sensitive()

    @reactive.effect
    def _sensitive_choices() -> None:
        found = keyed()
        if found is None:
            return
        frame, keys = found
        choices = [str(c) for c in frame.columns if c not in keys]
        chosen = (picked[0] if picked[0] in choices
                  else _sensitive_default(state.usable_schema(), choices))
        if chosen is not None:
            pushed.add(chosen)
        ui.update_select("sensitive", choices=choices, selected=chosen)


def _diversity_panel(input: Inputs, state: State,
                     keyed: Callable[[], tuple[pd.DataFrame, list[str]] | None],
                     risk_now: Callable[[], RiskSummary | Pending | None]) -> None:
    """The l-diversity of a sensitive attribute: its boxes, histogram and the records whose
    class is least diverse."""
    _sensitive_select(input, state, keyed)

    @reactive.calc
    def diversity_now() -> LDiversity | Pending | str | None:
        found = keyed()
        if found is None:
            return None
        frame, keys = found
        sensitive, c = input.sensitive(), input.l_c()
        missing = input.missing_semantics()
        if not keys:
            return "No key variable: declare quasi-identifiers on the Data tab."
        if not sensitive or sensitive not in frame.columns or sensitive in keys:
            return "Choose a sensitive attribute (a column that is not a key)."

        def measure(_: Callable[..., None]) -> LDiversity:
            return l_diversity(state.key_codes(frame, keys),
                               state.key_codes(frame, [sensitive])[:, 0],
                               missing, c=float(c), attribute=sensitive)

        try:
            if c is None:
                raise InputError("`l_c` must be positive, got nothing")
            result = state.remembered(frame, ("l", tuple(keys), missing, sensitive, c),
                                      measure, what="Measuring the l-diversity…")
        except MicroaggError as exc:
            show_error("l_c", exc)
            return "Set the c of recursive (c, l)-diversity."
        clear_error("l_c")
        return result

    def kind() -> LDiversityKind:
        return LDiversityKind(input.l_kind())

    def label(result: LDiversity) -> str:
        chosen = kind()
        what = (f"recursive (c = {result.c:g}, l)" if chosen is LDiversityKind.RECURSIVE
                else chosen.value)
        return f"{what} l-diversity of {result.attribute}"

    @render.ui
    def diversity_boxes() -> Any:
        result = diversity_now()
        if not isinstance(result, LDiversity):
            return _said(result if result is not None else "Load a table first.")
        return _diversity_boxes(result, kind(), label(result))

    @render.plot(alt="records by the l-diversity of their class")
    def diversity_plot() -> Any:
        result = diversity_now()
        if not isinstance(result, LDiversity):
            return None
        return l_histogram(result.values(kind()), f"{label(result)} of the record's class")

    @render.ui
    def least_diverse() -> Any:
        result, found, risk = diversity_now(), keyed(), risk_now()
        if not isinstance(result, LDiversity) or found is None or not isinstance(
                risk, RiskSummary):
            return None
        values = result.values(kind())
        order = np.lexsort((-risk.fk, values))[:TOP_RECORDS]
        frame, keys = found
        return _records(frame, keys, order, {
            result.attribute: frame[result.attribute].iloc[order].to_numpy(),
            "f_k": risk.fk[order], "l": [f"{v:.4g}" for v in values[order]]})


def _suda_summary(result: Suda) -> Any:
    """The MSUs found, by size, and what the DIS score means."""
    sizes = ", ".join(f"{size}: {count:,}" for size, count in
                      enumerate(result.msus_by_size, start=1) if count)
    scored = int((result.scores > 0).sum())
    return ui.TagList(
        ui.p(f"{sum(result.msus_by_size):,} minimal sample uniques (MSUs) in {scored:,} "
             f"records; MSUs by number of keys: {sizes or 'none'}.", id="suda-summary"),
        ui.p(f"A record's DIS score is the probability that a match on its keys is "
             f"correct, for a sample that is {result.dis_fraction:.3g} of the population "
             f"(largest: {result.dis_scores.max(initial=0.0):.3g}). Small MSUs weigh "
             "most (SUDA2, Manning et al. 2008; sdcMicro's suda2).",
             class_="text-muted"))


def _contributions(result: Suda) -> Any:
    """Each key's percentage of the SUDA scores in the MSUs that hold it."""
    rows = "".join(f"<tr><td>{escape(key)}</td><td>{share:.1f} %</td></tr>"
                   for key, share in sorted(result.contributions.items(),
                                            key=lambda item: -item[1]))
    return ui.HTML('<table class="steps" id="suda-contributions"><thead><tr>'
                   "<th>key</th><th>% of the scores in its MSUs</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table><p class=\"text-muted\">The MSUs "
                   "a key is in carry this percentage of all the SUDA scores, each key "
                   "out of 100 % (an MSU of several keys counts for each, so the figures "
                   "are not shares: they sum to 100 % times the mean MSU size).</p>")


def _diversity_boxes(result: LDiversity, kind: LDiversityKind, label: str) -> Any:
    """The smallest l and the records whose class has l below 2 and 3."""
    values = result.values(kind)
    boxes = [(f"smallest {label}", f"{result.smallest(kind):.4g}", "l_smallest"),
             ("records whose class has l < 2 (its value is disclosed)",
              f"{int((values < 2).sum()):,}", "l_below_2"),
             ("records whose class has l < 3", f"{int((values < 3).sum()):,}",
              "l_below_3")]
    return ui.layout_column_wrap(*(ui.value_box(title, value, id=name)
                                   for title, value, name in boxes), width=1 / 3,
                                 class_="mt-3")
