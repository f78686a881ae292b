"""The web app as a server (microagg/ui/guard.py, limits.py, serve.py, session.py): who may
talk to it (Host, Origin, token), what it accepts (file size, rows, cells, how far an Excel
file expands), where it keeps a session's files (owner-only, removed after a server that
was killed), what an error shows of them (the file's name only), and that a session's
computations run off the event loop and stop when the session ends."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("shiny", reason="the web app needs the extra ui (shiny)")

from shiny import reactive

from microagg.errors import InputError
from microagg.ui.guard import Guard, is_loopback
from microagg.ui.limits import Limits, check_file

# --- the guard, at the ASGI level ---------------------------------------------------------


async def _ok_app(scope, receive, send):
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok %d" % len(body)})


def _call(guard, kind="http", headers=(), path="/", query=b"", method="GET",
          body_chunks=(b"",)):
    """What ``guard`` answers to one request: the messages it sends."""
    scope = {"type": kind, "path": path, "query_string": query, "method": method,
             "headers": [(k.encode(), v.encode()) for k, v in headers], "root_path": ""}
    chunks = list(body_chunks)
    sent = []

    async def receive():
        if kind == "websocket":
            return {"type": "websocket.connect"}
        chunk = chunks.pop(0) if chunks else b""
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message):
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    return sent


def _status(sent):
    first = sent[0]
    if first["type"] == "websocket.close":
        return 403
    if first["type"] == "websocket.accept":
        return 101
    return first["status"]


def test_a_foreign_host_or_origin_is_refused_over_http_and_websocket():
    guard = Guard(_ok_app)
    local = ("host", "127.0.0.1:8000")
    assert _status(_call(guard, headers=[local])) == 200
    assert _status(_call(guard, headers=[("host", "localhost:8000")])) == 200
    assert _status(_call(guard, headers=[("host", "[::1]:8000")])) == 200
    rebound = _call(guard, headers=[("host", "attacker.example:8000")])
    assert _status(rebound) == 403 and b"--allow-host" in rebound[1]["body"]
    assert _status(_call(guard, "websocket", [("host", "evil.example")])) == 403
    # another site's page opening a session (cross-site WebSocket), or posting
    foreign = ("origin", "http://evil.example")
    assert _status(_call(guard, "websocket", [local, foreign])) == 403
    assert _status(_call(guard, "websocket", [local, ("origin", "null")])) == 403
    assert _status(_call(guard, headers=[local, foreign], method="POST")) == 403
    assert _status(_call(guard, "websocket", [local, ("origin", "http://127.0.0.1:8000")])
                   ) == 101
    assert _status(_call(guard, "websocket", [local, ("origin", "http://127.0.0.1:9999")])
                   ) == 403
    # a name given with --allow-host, and the bound address
    named = Guard(_ok_app, bound="192.0.2.7", allow_hosts=["lab.example"])
    assert _status(_call(named, headers=[("host", "lab.example:8000")])) == 200
    assert _status(_call(named, headers=[("host", "192.0.2.7:8000")])) == 200
    assert _status(_call(named, headers=[("host", "other.example")])) == 403


def test_with_a_token_every_request_carries_it():
    guard = Guard(_ok_app, token="s3cret")
    local = ("host", "127.0.0.1:8000")
    refused = _call(guard, headers=[local])
    assert _status(refused) == 403 and b"token" in refused[1]["body"]
    assert _status(_call(guard, headers=[local], query=b"token=wrong")) == 403
    assert _status(_call(guard, "websocket", [local])) == 403
    assert _status(_call(guard, headers=[local, ("x-microagg-token", "s3cret")])) == 200
    first = _call(guard, headers=[local], path="/", query=b"token=s3cret&x=1")
    assert _status(first) == 303  # the cookie is set, and the token leaves the address
    headers = dict(first[0]["headers"])
    assert headers[b"location"] == b"/?x=1"
    cookie = headers[b"set-cookie"].decode()
    assert cookie.startswith("microagg_token=s3cret;") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    jar = ("cookie", "microagg_token=s3cret")
    assert _status(_call(guard, headers=[local, jar])) == 200
    assert _status(_call(guard, "websocket", [local, jar])) == 101
    assert _status(_call(guard, "websocket", [local, ("cookie", "microagg_token=no")])) == 403


def test_an_upload_over_the_limit_is_refused_before_it_is_read():
    guard = Guard(_ok_app, max_upload=1000)
    local = ("host", "127.0.0.1:8000")
    path = "/session/abc/upload/def"
    small = _call(guard, headers=[local], path=path, method="POST", body_chunks=[b"x" * 900])
    assert _status(small) == 200
    declared = _call(guard, headers=[local, ("content-length", "5000")], path=path,
                     method="POST", body_chunks=[b"x" * 5000])
    assert _status(declared) == 413 and b"--max-upload-mb" in declared[1]["body"]
    streamed = _call(guard, headers=[local], path=path, method="POST",
                     body_chunks=[b"x" * 600, b"x" * 600, b"x" * 600])
    assert _status(streamed) == 413 and len(streamed) == 2


def test_loopback_names():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.0.0.2") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.7")
    assert not is_loopback("example.org")


# --- the command ----------------------------------------------------------------------------


def test_serving_beyond_loopback_without_a_token_is_refused(run_cli):
    result = run_cli("ui", "--host", "0.0.0.0", "--port", "8765")
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "needs a token" in result.stderr and "--new-token" in result.stderr
    result = run_cli("ui", "--token", "a", "--new-token")
    assert result.code == 2 and "not both" in result.stderr
    result = run_cli("ui", "--max-rows", "0")
    assert result.code == 2 and "--max-rows must be positive" in result.stderr
    result = run_cli("ui", "--host", "0.0.0.0", "--token", "a" * 15)
    assert result.code == 2 and result.stderr.count("\n") == 1
    assert "15 character(s)" in result.stderr and "at least 16" in result.stderr


def test_a_port_in_use_is_refused_in_one_line_before_the_address_is_printed(run_cli):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("ui", "--port", str(port))
    assert result.code == 2 and result.stdout == ""
    assert result.stderr == f"microagg: error: port {port} is in use: choose another with " \
                            "--port\n"
    result = run_cli("ui", "--host", "192.0.2.1", "--token", "x" * 16)  # not this machine's
    assert result.code == 2 and "cannot serve on 192.0.2.1:8000" in result.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp_path, *args, prelude=""):
    """``microagg ui`` on a free port, its temporary folder in ``tmp_path``, after the
    Python statements ``prelude`` run in its process."""
    port = _free_port()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-c", f"{prelude}\nfrom microagg.cli import entry; entry()", "ui",
         "--port", str(port), *args], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server, port
        if server.poll() is not None:
            break
        time.sleep(0.2)
    server.kill()
    pytest.fail("the app did not start: " + server.communicate()[1])


def _get(port, path="/", headers=None):
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def _websocket(port, headers):
    """Whether a WebSocket to the app opens with ``headers``."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(f"ws://127.0.0.1:{port}/websocket/", additional_headers=headers,
                     open_timeout=20):
            return True
    except InvalidStatus as exc:
        assert exc.response.status_code == 403
        return False


def test_the_server_checks_host_origin_and_token(tmp_path):
    server, port = _start(tmp_path, "--token", "tok-123-long-enough")
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "tok-123-long-enough" not in line and "token" in line  # a token is never printed
        assert _get(port)[0] == 403
        status, headers, _ = _get(port, "/?token=tok-123-long-enough")
        assert status == 303 and "microagg_token=tok-123-long-enough" in headers["set-cookie"]
        jar = {"Cookie": "microagg_token=tok-123-long-enough"}
        status, _, page = _get(port, "/", jar)
        assert status == 200 and b"microagg" in page
        assert _get(port, "/", {**jar, "Host": "rebound.example"})[0] == 403
        own = {**jar, "Origin": f"http://127.0.0.1:{port}"}
        assert _websocket(port, own)
        assert not _websocket(port, {**jar, "Origin": "http://evil.example"})
        assert not _websocket(port, {"Origin": f"http://127.0.0.1:{port}"})  # no token
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert not list(tmp_path.iterdir()), "the server left its folder behind"


def test_a_new_token_is_printed_once(tmp_path):
    server, port = _start(tmp_path, "--new-token")
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        token = line.split("?token=")[1].split()[0]
        assert len(token) >= 24
        assert _get(port)[0] == 403
        assert _get(port, "/", {"X-Microagg-Token": token})[0] == 200
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM is delivered this way on POSIX")
def test_sigterm_stops_the_server_at_once_whatever_its_workers_compute(tmp_path):
    import signal

    from websockets.sync.client import connect

    stuck = ("import concurrent.futures, time\n"  # a session's worker that never checks
             "concurrent.futures.ThreadPoolExecutor(1).submit(time.sleep, 600)")
    server, port = _start(tmp_path, prelude=stuck)
    try:
        with connect(f"ws://127.0.0.1:{port}/websocket/", open_timeout=20,
                     additional_headers={"Origin": f"http://127.0.0.1:{port}"}):
            server.send_signal(signal.SIGTERM)  # with a session open
            began = time.monotonic()
            _, stderr = server.communicate(timeout=30)
        took = time.monotonic() - began
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 128 + signal.SIGTERM and took < 12
    assert stderr.count("\n") == 1 and "SIGTERM" in stderr and "server stopped" in stderr
    assert not list(tmp_path.iterdir()), "the server left its folder behind"


# --- what an upload may hold -----------------------------------------------------------------


def test_an_upload_over_the_size_row_or_cell_limit_is_refused_by_name(tmp_path):
    data = tmp_path / "people.csv"
    pd.DataFrame({"a": range(500), "b": range(500)}).to_csv(data, index=False)
    check_file(data, Limits())
    with pytest.raises(InputError, match=r"^people.csv has [0-9,]+ bytes: this server "
                       r"accepts at most 100 bytes \(the server's operator sets it with microagg "
                       r"ui --max-upload-mb\)$"):
        check_file(data, Limits(upload_bytes=100))
    with pytest.raises(InputError, match=r"^people.csv holds 500 records: .*400 "):
        check_file(data, Limits(rows=400))
    parquet = tmp_path / "people.parquet"
    pd.DataFrame({"a": range(500), "b": range(500)}).to_parquet(parquet)
    with pytest.raises(InputError, match=r"holds 1,000 cells .*--max-cells"):
        check_file(parquet, Limits(cells=999))
    from microagg.ui.limits import check_frame

    with pytest.raises(InputError, match=r"--max-cells"):
        check_frame("people.csv", pd.read_csv(data), Limits(cells=999))


def _bomb(path: Path, rows: int) -> None:
    """An .xlsx whose one sheet holds ``rows`` rows of the same cell: a few kB that
    expands to MB (openpyxl reads it as ``rows`` rows)."""
    sheet = (b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.'
             b'openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
             + b"<row><c><v>1</v></c></row>" * rows  # r= is optional
             + b"</sheetData></worksheet>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", b"<Types/>")
        archive.writestr("xl/workbook.xml", b"<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", sheet)


def test_an_excel_file_that_expands_too_far_is_refused_before_it_is_read(tmp_path):
    bomb = tmp_path / "bomb.xlsx"
    _bomb(bomb, 2_000_000)
    assert bomb.stat().st_size < 500_000
    started = time.monotonic()
    with pytest.raises(InputError, match=r"^bomb.xlsx expands .* times"):
        check_file(bomb, Limits())
    assert time.monotonic() - started < 5
    with pytest.raises(InputError, match=r"^bomb.xlsx expands to .* MB: .* uncompressed"):
        check_file(bomb, Limits(upload_bytes=5_000_000))
    # a workbook within the ratio, past the rows
    small = tmp_path / "rows.xlsx"
    pytest.importorskip("openpyxl")
    pd.DataFrame({"a": np.arange(3000) * 1.5, "b": ["x"] * 3000}).to_excel(small, index=False)
    check_file(small, Limits())
    with pytest.raises(InputError, match=r"^rows.xlsx holds 3,000 records"):
        check_file(small, Limits(rows=2999))
    with pytest.raises(InputError, match=r"^rows.xlsx holds 6,002 cells"):
        check_file(small, Limits(cells=6000))


def test_a_refused_or_unreadable_upload_is_named_without_the_servers_path(tmp_path):
    from microagg.ui.data_tab import read_loaded
    from microagg.ui.session import scrub
    from microagg.ui.state import Workspace

    space = Workspace()
    try:
        broken = tmp_path / "0.csv"
        broken.write_bytes(b"a,b\n1,2,3,4\n")
        with pytest.raises(InputError) as refused:
            read_loaded(space, str(broken), "survey.csv", Limits())
        assert "survey.csv" in str(refused.value)
        assert str(space.folder) in str(refused.value)  # the library names the whole path…
        shown = scrub(str(refused.value))
        assert "survey.csv" in shown and tempfile.gettempdir() not in shown  # …the page not
        assert not list(space.folder.iterdir())  # a refused file is not kept
        big = tmp_path / "1.csv"
        big.write_bytes(b"a\n" + b"1\n" * 2000)
        with pytest.raises(InputError, match=r"^big.csv holds 2,000 records"):
            read_loaded(space, str(big), "big.csv", Limits(rows=1000))
    finally:
        space.close()


# --- where a session's files live ------------------------------------------------------------


def test_the_folders_of_a_killed_server_are_removed_at_the_next_start(tmp_path):
    from microagg.ui.serve import server_folder

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f".microagg-ui.microagg-{gone.pid}-abc.tmp"
    (stale / "microagg-ui-x").mkdir(parents=True)
    (stale / "microagg-ui-x" / "adult.csv").write_text("age\n39\n")
    running = tmp_path / f".microagg-ui.microagg-{os.getpid()}-def.tmp"
    running.mkdir()
    other = tmp_path / "unrelated"
    other.mkdir()
    folder = server_folder(tmp_path)
    try:
        assert not stale.exists()
        assert running.exists() and other.exists()
        assert folder.name.startswith(f".microagg-ui.microagg-{os.getpid()}-")
        if os.name == "posix":
            assert folder.stat().st_mode & 0o077 == 0  # the owner's only
    finally:
        folder.rmdir()


def test_a_session_folder_is_the_owners_only():
    from microagg.ui.state import Workspace

    space = Workspace()
    try:
        if os.name == "posix":
            assert space.folder.stat().st_mode & 0o077 == 0
    finally:
        space.close()


# --- computations off the event loop ----------------------------------------------------------


def test_a_measure_runs_in_a_worker_and_stops_when_the_session_ends():
    from microagg.ui.session import Cancelled, Pending, State

    state = State.new()
    frame = pd.DataFrame({"a": [1, 2, 3]})
    began, ran = threading.Event(), []

    def endless(check):
        began.set()
        while True:
            check()
            ran.append(1)
            time.sleep(0.01)

    with reactive.isolate():  # as a view reads it
        seen = state.remembered(frame, ("slow",), endless, what="Searching…")
    assert seen == Pending("Searching…")  # the caller does not wait
    assert began.wait(10)
    future = state.memory[(id(frame), "slow")].future
    alive = weakref.ref(frame)
    del frame
    state.close()
    with pytest.raises(Cancelled):
        future.result(timeout=10)
    assert not state.memory and state.jobs.stop.is_set()
    del future
    gc.collect()
    assert alive() is None  # the session's table is let go
    assert not state.space.folder.exists()


def test_a_measure_that_fails_raises_each_time_it_is_asked():
    from microagg.ui.session import State

    state = State.new()
    frame = pd.DataFrame({"a": [1]})

    def fails(_):
        raise InputError("no keys")

    try:
        state.begin(frame, ("x",), fails)
        state.memory[(id(frame), "x")].future.exception(timeout=10)
        with reactive.isolate():
            for _ in range(2):
                with pytest.raises(InputError, match="no keys"):
                    state.remembered(frame, ("x",), fails)
    finally:
        state.close()


def test_suda2_stops_when_its_progress_callback_raises():
    from microagg.core.frequencies import matching_counts
    from microagg.risk import suda2

    codes = np.random.default_rng(0).integers(0, 4, (12_000, 14))  # 0.5 s or more of searching
    calls = []

    def progress(done):
        calls.append(done)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        suda2(codes, progress=progress)
    uniques = int((matching_counts(codes, "matches-any") == 1).sum())
    assert calls[0] == 0 and calls[2] < uniques  # stopped before its end
    full = []
    result = suda2(codes[:300], progress=full.append)
    # before the search, while it runs, and once at its end with every unique searched
    assert full[0] == 0 and full == sorted(full) and full[-1] == result.sample_uniques


def test_the_apps_errors_name_its_fields_and_the_size_refusal_its_operators_option():
    from microagg.data.schema import Schema
    from microagg.errors import PrivacyError
    from microagg.release.flags import labelled
    from microagg.release.inputs import _undeclared
    from microagg.ui.limits import too_large

    limits = Limits(upload_bytes=100_000_000)
    assert too_large("big150.csv", 100_000_000, limits) is None
    refusal = str(too_large("big150.csv", 154_900_000, limits))
    assert refusal.startswith("big150.csv has 154.9 MB: this server accepts at most 100.0 MB")
    assert "operator" in refusal and "--max-upload-mb" in refusal and "\n" not in refusal
    schema = Schema.infer(pd.DataFrame({"revenu net": [1.0, 2.0]}))
    with pytest.raises(PrivacyError) as refused:  # a DP step on a column without bounds
        _undeclared(schema, ["revenu net"], bounds_from_data=False)
    said = labelled(str(refused.value))
    assert "--" not in said and "`" not in said
    assert "'bounds' revenu net=LO:HI" in said and "'bounds from data'" in said
