"""``microagg ui``: the web application, served on this machine (or, with a token, to
others)."""

from __future__ import annotations

import typer

from microagg.cli.app import command, out

__all__ = ["ui"]


@command("ui")
def ui(
    port: int = typer.Option(8000, "--port", help="The port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to bind: 127.0.0.1 "
                             "(default) serves this machine only, so nothing leaves it; any "
                             "other (0.0.0.0: every interface) serves the data to whoever "
                             "reaches it and needs --token or --new-token."),
    token: str | None = typer.Option(None, "--token", envvar="MICROAGG_UI_TOKEN",
                                     help="A secret every request must carry (a cookie set "
                                     "by a first visit to /?token=TOKEN, or the header "
                                     "X-Microagg-Token): at least 16 characters."),
    new_token: bool = typer.Option(False, "--new-token", help="Make a token and print the "
                                   "address with it, once."),
    allow_host: list[str] = typer.Option([], "--allow-host", help="A name or address the "
                                         "browser may use besides the loopback names and the "
                                         "bound address (repeatable)."),
    max_upload_mb: float = typer.Option(100, "--max-upload-mb", help="The largest file "
                                        "accepted, in MB (an Excel file may expand to 5 "
                                        "times as much)."),
    max_rows: int = typer.Option(1_000_000, "--max-rows", help="The most records a table "
                                 "may hold."),
    max_cells: int = typer.Option(20_000_000, "--max-cells", help="The most cells (records "
                                  "× columns) a table may hold."),
) -> None:
    """Serve the web application: load a table, set its roles, measure its risk, add
    protection steps and download the release, its report and the recipe that reproduces
    it with `microagg run`. Needs the extra `ui` (pip install "microagg[ui]")."""
    import re

    from microagg import interrupts
    from microagg.errors import InputError
    from microagg.ui.limits import Limits
    from microagg.ui.serve import check_bind, check_port, serve
    from microagg.ui.serve import new_token as make_token

    for name, value in (("--max-upload-mb", max_upload_mb), ("--max-rows", max_rows),
                        ("--max-cells", max_cells)):
        if not value > 0:
            raise InputError(f"{name} must be positive, got {value:g}")
    for name in allow_host:
        if not re.fullmatch(r"[A-Za-z0-9._-]+|\[?[0-9A-Fa-f:.]+\]?", name.strip()):
            raise InputError(f"--allow-host {name!r} is not a host name or an address")
    if new_token and token:
        raise InputError("give --token or --new-token, not both")
    token = make_token() if new_token else token
    check_bind(host, token)
    if not 0 < port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {port}")
    check_port(host, port)
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}"
    if new_token:
        out.print(f"microagg ui: {address}/?token={token} (the token is shown once; "
                  "Ctrl-C stops it)", soft_wrap=True)
    else:
        out.print(f"microagg ui: {address}" + ("/?token=… (your token)" if token else "")
                  + " (Ctrl-C stops it)", soft_wrap=True)
    interrupts.ending("the server stopped and removed its temporary files")
    serve(host=host, port=port, token=token, allow_hosts=allow_host,
          limits=Limits(int(max_upload_mb * 1_000_000), max_rows, max_cells))
