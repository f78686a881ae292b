"""The web application (Shiny for Python): the page of :mod:`microagg.ui.layout` and, for
each browser session, the servers of its tabs over one :class:`~microagg.ui.session.State`,
whose temporary folder is removed when the session ends."""

from __future__ import annotations

from typing import Any

from shiny import App, Inputs, Outputs, Session

from microagg.ui.data_tab import data_server
from microagg.ui.layout import page
from microagg.ui.output_tab import output_server
from microagg.ui.session import State
from microagg.ui.steps_tab import steps_server

__all__ = ["make_app"]


def _server(input: Inputs, output: Outputs, session: Session) -> None:
    state = State.new()
    session.on_ended(state.space.close)
    data_server(input, state)
    steps_server(input, state)
    output_server(input, state)


def make_app() -> Any:
    """The Shiny application (an ASGI app)."""
    return App(page(), _server)
