"""Serving the web application on this machine (uvicorn, which Shiny uses)."""

from __future__ import annotations

from microagg.errors import InputError

__all__ = ["serve"]


def serve(*, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the app on ``host``:``port`` until interrupted; one line naming the extra to
    install when Shiny is absent."""
    if not 0 < port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {port}")
    try:
        import uvicorn

        from microagg.ui.app import make_app
    except ImportError as exc:
        raise InputError(f"the web app needs the extra ui ({exc.name} is not installed): "
                         'pip install "microagg[ui]"') from None
    uvicorn.run(make_app(), host=host, port=port, log_level="warning")
