"""The web application (Shiny for Python): the page of :mod:`microagg.ui.layout` and, for
each browser session, the servers of its tabs over one :class:`~microagg.ui.session.State`,
whose temporary folder is removed when the session ends."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from shiny import App, Inputs, Outputs, Session

from microagg.ui.attack_panel import attacks_server
from microagg.ui.compare_tab import compare_server
from microagg.ui.data_tab import data_server
from microagg.ui.layout import page
from microagg.ui.limits import DEFAULT, Limits
from microagg.ui.output_tab import output_server
from microagg.ui.resume import resume_server
from microagg.ui.risk_tab import risk_server
from microagg.ui.session import State
from microagg.ui.steps_tab import steps_server

__all__ = ["make_app"]


def _server(input: Inputs, output: Outputs, session: Session, limits: Limits) -> None:
    state = State.new(limits)
    session.on_ended(state.close)
    adopt = data_server(input, state)
    risk_server(input, state)
    run_step = steps_server(input, state)
    compare_server(input, state, run_step)
    output_server(input, state)
    attacks_server(input, state)
    resume_server(input, state, adopt)


def _load_kernels() -> None:
    """Load the compiled kernels of the risk measures (numba's cache: 1.3 s on a busy
    machine), so that the first risk view a user opens does not wait for them, and no
    search compiles one while holding the interpreter's lock; then those of the measures
    shown from their declaration (:attr:`~microagg.risk.registry.RiskMeasure.kernels`)."""
    from microagg.risk import l_diversity, suda2
    from microagg.risk.registry import computed, function
    from microagg.risk.suda import load_kernels

    codes = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1]], dtype=np.int64)
    suda2(codes)
    load_kernels()
    l_diversity(codes, np.array([0, 1, 0, 1, 0], dtype=np.int64))
    for measure in computed():
        if measure.kernels:
            function(measure.kernels)()


def make_app(limits: Limits = DEFAULT) -> Any:
    """The Shiny application (an ASGI app) accepting uploads within ``limits``; the risk
    kernels load in the background."""
    threading.Thread(target=_load_kernels, name="microagg-kernels", daemon=True).start()

    def server(input: Inputs, output: Outputs, session: Session) -> None:
        _server(input, output, session, limits)

    app = App(page(limits), server)
    app.sanitize_errors = True  # an unexpected error shows no detail (paths, values)
    return app
