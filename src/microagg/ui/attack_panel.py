"""The steps tab's panel of attack risks: singling out, linkability and inference
(:mod:`microagg.risk.attacks`) measured on the current release against the uploaded table
and control records the owner uploads, as a recipe's ``attacks`` section measures them
(:class:`~microagg.recipe.attacks.RecipeAttacks`: the same checks, the same reading of the
control file, the same function as ``microagg evaluate --attacks``).

The figures are computed from the raw data: they are the owner's, shown in the page only.
Nothing of them reaches the downloads, which are written from the steps run
(:func:`~microagg.ui.state.write_downloads`), not from this panel. The attacks run in one of
the session's workers (:meth:`~microagg.ui.session.State.remembered`), bounded by
:data:`MAX_ATTACKS` and the upload's limits; an error is one line beside its field."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from shiny import Inputs, reactive, render, ui

from microagg.errors import InputError, MicroaggError
from microagg.recipe.attacks import RecipeAttacks
from microagg.recipe.runner import RecipeRun
from microagg.ui.limits import Limits, check_file, check_frame
from microagg.ui.session import Pending, State, clear_error, one_line, show_error

__all__ = ["ATTACK_KINDS", "FIELDS", "MAX_ATTACKS", "attack_card", "attack_request",
           "attacks_server", "field_of", "measure_attacks", "said"]

ATTACK_KINDS = {"singling-out": "singling out", "linkability": "linkability",
                "inference": "inference"}
"""The attacks the panel offers: the three risks of Article 29 WP Opinion 05/2014."""

MAX_ATTACKS = 5000
"""The most attacks (records or predicates) per risk the panel runs."""

FIELDS = {"kinds": "attack_kinds", "control": "attack_control", "secret": "attack_secret",
          "linkability_columns": "attack_links", "n": "attack_n", "seed": "attack_seed"}
"""The panel's field of each key of the section: where its error is shown."""

_PREFIX = "the recipe's 'attacks': "


def _slot(name: str) -> ui.Tag:
    return ui.div(id=f"err-{name}", class_="field-error-slot")


def attack_card() -> Any:
    """The panel: the attacks, the control records, the secret columns, linkability's two
    sources, the number of attacks and the seed, the button and the results."""
    return ui.card(
        ui.card_header("Attack risks of the release (for the data owner: never downloaded)"),
        ui.layout_columns(
            ui.div(ui.input_checkbox_group("attack_kinds", "Attacks", choices=ATTACK_KINDS,
                                           selected=list(ATTACK_KINDS)),
                   _slot("attack_kinds"),
                   ui.input_file("attack_control", "Control records: original records the "
                                 "release was not made from, with the table's columns"),
                   _slot("attack_control")),
            ui.div(ui.input_selectize("attack_secret", "Inference: the secret columns "
                                      "(empty: every column)", choices=[], multiple=True),
                   _slot("attack_secret"),
                   ui.input_selectize("attack_first", "Linkability: the attacker's first "
                                      "source (empty: the first half of the columns)",
                                      choices=[], multiple=True),
                   ui.input_selectize("attack_second", "and the second (empty: the rest)",
                                      choices=[], multiple=True),
                   _slot("attack_links")),
            ui.div(ui.input_numeric("attack_n", f"Attacks per risk (1 to {MAX_ATTACKS:,})",
                                    value=500, min=1, max=MAX_ATTACKS),
                   _slot("attack_n"),
                   ui.input_numeric("attack_seed", "Seed of the attacks (empty: fresh draws)",
                                    value=cast(float, None)),
                   _slot("attack_seed"),
                   ui.input_action_button("run_attacks", "Measure the attack risks"),
                   _slot("attacks")),
            col_widths=(4, 4, 4)),
        ui.output_ui("attack_results"))


def _whole(value: Any) -> Any:
    """A numeric field's value: a whole float as an int (the section refuses others)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def attack_request(kinds: Sequence[str], control: Path | None, secret: Sequence[str],
                   first: Sequence[str], second: Sequence[str], n: Any,
                   seed: Any) -> RecipeAttacks:
    """The panel's fields as a recipe's ``attacks`` section, checked (a secret or a split
    counts only with its attack chosen); an :class:`InputError` naming the field at fault
    (:func:`field_of`).

    Examples
    --------
    >>> asked = attack_request(["inference"], Path("held.csv"), ["income"], ["age"], [],
    ...                        500.0, None)
    >>> asked.secret, asked.linkability_columns, asked.n
    (('income',), None, 500)
    >>> attack_request(["inference"], Path("held.csv"), [], [], [], 10**6, None)
    Traceback (most recent call last):
    ...
    microagg.errors.InputError: the recipe's 'attacks': 'n' is at most 5,000 here, got 1000000
    """
    n = _whole(n)
    if isinstance(n, int) and n > MAX_ATTACKS:
        raise InputError(f"{_PREFIX}'n' is at most {MAX_ATTACKS:,} here, got {n}")
    linked = "linkability" in kinds and bool(first or second)
    spec = {"kinds": list(kinds), "control": "" if control is None else str(control),
            "secret": list(secret) if "inference" in kinds and secret else None,
            "linkability_columns": [list(first), list(second)] if linked else None,
            "n": n, "seed": _whole(seed)}
    return RecipeAttacks.of(spec)


def field_of(error: str) -> str:
    """The field whose slot shows ``error`` (the attacks' own slot when it names none).

    Examples
    --------
    >>> field_of("the recipe's 'attacks': 'secret' names salary, not a column of the input")
    'attack_secret'
    >>> field_of("the two linkability sets hold the same columns")
    'attack_links'
    """
    for key, name in FIELDS.items():
        if f"'{key}'" in error:
            return name
    if "linkability" in error:
        return FIELDS["linkability_columns"]
    if "secret" in error:
        return FIELDS["secret"]
    return "attacks"


def said(error: str) -> str:
    """An error of the section as the panel says it: without the recipe's name for it."""
    return error.removeprefix(_PREFIX)


def measure_attacks(run: RecipeRun, section: RecipeAttacks, limits: Limits,
                    check: Callable[[], None] | None = None) -> dict[str, Any]:
    """The attacks of ``section`` on the release of ``run`` against its input and the
    control file (checked against the upload's ``limits`` before it is read, then read as
    the input was): the ``attacks`` object of ``evaluate --json``. Runs in a worker;
    ``check`` is called before each attack and stops it by raising (a session closed, or
    the table replaced)."""
    check_file(section.control, limits)
    control = section.read_control(run.original, run.recipe.read, run.recipe.schema)
    check_frame(section.control.name, control, limits)
    return section.measure(run.original, run.frame, control, between=check)


def _show(error: BaseException) -> None:
    text = str(error) if isinstance(error, MicroaggError) else (
        f"could not complete this: {one_line(error)}")
    show_error(field_of(text), said(text))


def attacks_server(input: Inputs, state: State) -> None:
    """Register the panel's effects and its results (:func:`attack_card`)."""
    asked: reactive.Value[tuple[RecipeAttacks, RecipeRun] | None] = reactive.value(None)
    adopted: dict[str, Path] = {}  # each control file chosen, moved into the session's folder

    @reactive.effect
    def _columns() -> None:
        frame = state.frame()
        names = [] if frame is None else [str(c) for c in frame.columns]
        for field in ("attack_secret", "attack_first", "attack_second"):
            ui.update_selectize(field, choices=names, selected=[])

    def control() -> Path | None:
        upload = input.attack_control()
        if not upload:
            return None
        datapath, name = upload[0]["datapath"], upload[0]["name"]
        if datapath not in adopted:  # each upload aside, in a folder of its own: a new
            # file is a new path (so never an earlier result) and never replaces the table
            adopted[datapath] = state.space.adopt(datapath, name,
                                                  aside=f"control-{len(adopted) + 1}")
        return adopted[datapath]

    @reactive.effect
    @reactive.event(input.run_attacks)
    def _ask() -> None:
        for name in (*FIELDS.values(), "attacks"):
            clear_error(name)
        run = state.run()
        try:
            if run is None:
                raise InputError("run at least one step first: the attacks read the release")
            section = attack_request(input.attack_kinds(), control(), input.attack_secret(),
                                     input.attack_first(), input.attack_second(),
                                     input.attack_n(), input.attack_seed())
        except Exception as exc:  # one line beside its field, never a server error
            _show(exc)
            return
        asked.set((section, run))

    @render.ui
    def attack_results() -> Any:
        request, run = asked(), state.run()
        if request is None:
            return ui.p("Choose the attacks and the control records, then measure.",
                        class_="text-muted")
        section, measured = request
        if measured is not run:
            return ui.p("The steps changed since the attacks were asked: measure again.",
                        class_="text-muted")
        limits = state.limits

        def work(check: Callable[..., None]) -> dict[str, Any]:
            return measure_attacks(measured, section, limits, check)

        try:
            found = state.remembered(measured.frame, ("attacks", section), work,
                                     what="Measuring the attack risks…")
        except Exception as exc:  # one line beside its field, never a server error
            _show(exc)
            return ui.p("")
        if isinstance(found, Pending):
            return ui.p(found.what, class_="text-muted pending", id="attacks-measuring")
        from microagg.evaluation.attacks_html import attacks_html

        return ui.HTML(attacks_html(found))
