"""``microagg ui``: the web application, served on this machine."""

from __future__ import annotations

import typer

from microagg.cli.app import app, out

__all__ = ["ui"]


@app.command("ui", short_help="Serve the web application on this machine (a browser page).")
def ui(
    port: int = typer.Option(8000, "--port", help="The port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to bind: 127.0.0.1 "
                             "(default) serves this machine only, so nothing leaves it."),
) -> None:
    """Serve the web application: load a table, set its roles, measure its risk, add
    protection steps and download the release, its report and the recipe that reproduces
    it with `microagg run`. Needs the extra `ui` (pip install "microagg[ui]")."""
    from microagg.ui.serve import serve

    out.print(f"microagg ui: http://{host}:{port} (Ctrl-C stops it)")
    serve(host=host, port=port)
