"""The resident worker: a command run in it writes what the same command writes without it
(bytes, report, stdout, stderr, exit code), every command draws fresh randomness, and a
worker that does not match the caller, or a socket folder open to others, is never used."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the worker needs Linux")

CLI = [sys.executable, "-c", "from microagg.cli import entry; entry()"]


def _run(args: list[str], cwd: Path, env: dict[str, str], **kwargs: object
         ) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, **kwargs)


def _served(env: dict[str, str], cwd: Path) -> int:
    status = _run(["worker", "status", "--json"], cwd, env)
    answer = json.loads(status.stdout)
    return int(answer["commands"]) if answer["running"] else -1


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory):
    """A worker for this test module, its sockets in a private folder of its own."""
    runtime = _short_folder()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    env.pop("MICROAGG_WORKER", None)
    folder = tmp_path_factory.mktemp("files")
    started = _run(["worker", "start", "--idle-minutes", "10"], folder, env)
    assert started.returncode == 0, started.stderr
    assert "worker ready" in started.stdout and "note:" not in started.stdout
    yield env, folder
    stopped = _run(["worker", "stop"], folder, env)
    assert "worker stopped" in stopped.stdout
    assert not list((runtime / "microagg").glob("*.sock"))
    shutil.rmtree(runtime)


def _short_folder() -> Path:
    """A private folder with a short path: a Unix socket's path holds at most 107 bytes."""
    return Path(tempfile.mkdtemp(prefix="mw", dir="/tmp"))


def _data(folder: Path) -> Path:
    path = folder / "u.csv"
    if not path.exists():
        rng = np.random.default_rng(0)
        frame = pd.DataFrame(rng.uniform(0, 1, (3000, 5)).round(6),
                             columns=[f"a{j}" for j in range(5)])
        frame["n"] = rng.integers(0, 90, 3000)
        frame.to_csv(path, index=False)
    return path


def test_a_command_writes_in_the_worker_what_it_writes_without(worker) -> None:
    env, folder = worker
    _data(folder)
    before = _served(env, folder)
    here = _run(["microaggregate", "u.csv", "-o", "w.csv", "--k", "5"], folder, env)
    after = _served(env, folder)
    cold = _run(["microaggregate", "u.csv", "-o", "c.csv", "--k", "5"], folder,
                {**env, "MICROAGG_WORKER": "off"})
    assert after == before + 1  # it ran in the worker
    assert here.returncode == cold.returncode == 0
    assert (folder / "w.csv").read_bytes() == (folder / "c.csv").read_bytes()
    assert here.stdout.replace("w.csv", "c.csv") == cold.stdout
    assert here.stderr == cold.stderr
    reports = [json.loads((folder / f"{name}.csv.report.json").read_text())
               for name in ("w", "c")]
    for report in reports:
        report.pop("created", None)
        report.get("release", {}).pop("created", None)
    assert json.dumps(reports[0], sort_keys=True).replace("w.csv", "c.csv") == json.dumps(
        reports[1], sort_keys=True)


def test_errors_are_the_commands_own(worker) -> None:
    env, folder = worker
    _data(folder)
    bad = [_run(["microaggregate", "missing.csv", "-o", "x.csv", "--k", "5"], folder, e)
           for e in (env, {**env, "MICROAGG_WORKER": "off"})]
    assert bad[0].returncode == bad[1].returncode == 2
    assert bad[0].stderr == bad[1].stderr and bad[0].stderr.count("\n") == 1
    assert not (folder / "x.csv").exists()
    usage = _run(["microaggregate", "--k", "5"], folder, env)
    assert usage.returncode == 2 and "Missing argument" in usage.stderr


@pytest.mark.parametrize("umask", ["077", "022"])
def test_outputs_get_the_callers_umask(worker, umask: str) -> None:
    env, folder = worker
    _data(folder)
    modes = []
    for name, extra in ((f"m{umask}.csv", {}), (f"c{umask}.csv", {"MICROAGG_WORKER": "off"})):
        command = (f"umask {umask} && {sys.executable} -c "
                   f"'from microagg.cli import entry; entry()' microaggregate u.csv -o {name} "
                   "--k 5")
        done = subprocess.run(["bash", "-c", command], cwd=folder, env={**env, **extra},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        modes.append((folder / name).stat().st_mode & 0o777)
    assert modes[0] == modes[1] == 0o666 & ~int(umask, 8)


def test_each_command_draws_fresh_randomness(worker) -> None:
    env, folder = worker
    _data(folder)
    outputs = []
    for name in ("d1.csv", "d2.csv"):
        done = _run(["dp", "u.csv", "-o", name, "--epsilon", "1", "--k", "100",
                     "--method", "individual-ranking", "--columns", "a0,a1",
                     "--bounds", "a0=0:1,a1=0:1"], folder, env)
        assert done.returncode == 0, done.stderr
        outputs.append((folder / name).read_bytes())
    assert outputs[0] != outputs[1]


def test_a_caller_the_worker_does_not_match_runs_without_it(worker) -> None:
    env, folder = worker
    _data(folder)
    before = _served(env, folder)
    other = _run(["check", "u.csv", "--k", "1", "--quasi", "a0"], folder,
                 {**env, "NUMBA_NUM_THREADS": "1"})
    assert other.returncode == 0 and "holds" in other.stdout
    assert _served(env, folder) == before


def test_ctrl_c_reaches_the_command(worker) -> None:
    env, folder = worker
    rng = np.random.default_rng(1)
    pd.DataFrame(rng.uniform(0, 1, (400_000, 4)).round(6),
                 columns=list("abcd")).to_csv(folder / "big.csv", index=False)
    before = _served(env, folder)
    process = subprocess.Popen([*CLI, "microaggregate", "big.csv", "-o", "big_k.csv",
                                "--k", "5"], cwd=folder, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _served(env, folder) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    assert not (folder / "big_k.csv").exists()


def test_a_command_ends_with_its_caller(worker) -> None:
    """A caller killed by SIGKILL (which it cannot pass on) takes its command with it: the
    command is interrupted and writes nothing, as it would without the worker."""
    env, folder = worker
    if not (folder / "big.csv").exists():
        rng = np.random.default_rng(1)
        pd.DataFrame(rng.uniform(0, 1, (400_000, 4)).round(6),
                     columns=list("abcd")).to_csv(folder / "big.csv", index=False)
    status = json.loads(_run(["worker", "status", "--json"], folder, env).stdout)
    before = status["commands"]
    process = subprocess.Popen([*CLI, "microaggregate", "big.csv", "-o", "killed.csv",
                                "--k", "5"], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _served(env, folder) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    process.kill()
    process.wait()
    deadline = time.monotonic() + 120
    while _children(status["pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _children(status["pid"])  # the command's process has ended
    assert not (folder / "killed.csv").exists()
    assert not [p for p in folder.iterdir() if "killed" in p.name]


def test_ignored_hang_ups_and_closed_streams_are_the_callers(worker) -> None:
    """Under nohup a hang-up leaves the command alone, as without the worker; a closed stdout
    is nowhere, not the worker's socket (which a long output would fill and hang)."""
    env, folder = worker
    _data(folder)
    before = _served(env, folder)
    command = (f"nohup {sys.executable} -c 'from microagg.cli import entry; entry()' "
               "microaggregate u.csv -o hup.csv --k 5 > hup.log 2>&1 & sleep 0.3; "
               "kill -HUP $!; wait $!")
    done = subprocess.run(["bash", "-c", command], cwd=folder, env=env, timeout=600)
    assert done.returncode == 0 and (folder / "hup.csv").exists()
    wide = pd.DataFrame(np.ones((3, 3000)), columns=[f"c{j}" for j in range(3000)])
    wide.to_csv(folder / "wide.csv", index=False)
    closed = subprocess.run(
        ["bash", "-c", f"{sys.executable} -c 'from microagg.cli import entry; entry()' "
         "schema wide.csv -o wide.yaml >&-"], cwd=folder, env=env, timeout=120,
        capture_output=True, text=True)
    assert closed.returncode == 0, closed.stderr
    assert (folder / "wide.yaml").exists()
    assert _served(env, folder) == before + 2


def test_a_gone_folder_or_other_conditions_run_without_the_worker(worker) -> None:
    env, folder = worker
    data = _data(folder)
    before = _served(env, folder)
    gone = subprocess.run(
        ["bash", "-c", f"d=$(mktemp -d) && cd $d && rmdir $d && {sys.executable} -c "
         f"'from microagg.cli import entry; entry()' check {data} --k 1 --quasi a0"],
        env=env, capture_output=True, text=True, timeout=600)
    assert gone.returncode == 0 and "holds" in gone.stdout, gone.stderr
    niced = subprocess.run(["nice", "-n", "3", *CLI, "check", str(data), "--k", "1",
                            "--quasi", "a0"], env=env, capture_output=True, text=True,
                           timeout=600)
    assert niced.returncode == 0 and "holds" in niced.stdout
    assert _served(env, folder) == before


def test_a_stalled_or_vanished_caller_holds_up_nobody(worker) -> None:
    """A connection that sends no request delays other commands by the worker's request
    time-out at most, and a status request whose caller leaves leaves the worker running."""
    import socket

    env, folder = worker
    _data(folder)
    status = json.loads(_run(["worker", "status", "--json"], folder, env).stdout)
    stalled = socket.socket(socket.AF_UNIX)
    stalled.connect(status["socket"])
    try:
        start = time.monotonic()
        done = _run(["check", "u.csv", "--k", "1", "--quasi", "a0"], folder, env)
        assert done.returncode == 0 and time.monotonic() - start < 15
    finally:
        stalled.close()
    vanished = socket.socket(socket.AF_UNIX)
    vanished.connect(status["socket"])
    body = json.dumps({"control": "status"}).encode()
    vanished.sendall(len(body).to_bytes(4, "big") + body)
    vanished.close()
    time.sleep(0.5)
    assert _served(env, folder) >= status["commands"] + 1  # the same worker still answers


def test_names_that_are_not_utf8_are_handled_as_without_the_worker(worker) -> None:
    env, folder = worker
    data = _data(folder)
    results = []
    for name, extra in ((b"o\xfew.csv", {}), (b"o\xfec.csv", {"MICROAGG_WORKER": "off"})):
        done = subprocess.run([*CLI, "microaggregate", str(data), "-o", name, "--k", "5"],
                              cwd=folder, env={**env, **extra}, capture_output=True,
                              timeout=600)
        results.append((done.returncode, done.stdout.replace(b"w.csv", b"c.csv"),
                        done.stderr))
    assert results[0] == results[1]
    assert results[0][0] == 0


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc/*/stat)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_socket_folder_open_to_others_is_refused(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    (runtime / "microagg").mkdir(parents=True)
    os.chmod(runtime / "microagg", 0o755)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    refused = _run(["worker", "start"], tmp_path, env)
    assert refused.returncode == 2
    assert "closed to others" in refused.stderr and refused.stderr.count("\n") == 1
    assert not list((runtime / "microagg").iterdir())


def test_the_warm_up_commands_all_succeed() -> None:
    from microagg.cli.worker_server import warm_up

    codes = warm_up()
    assert codes and all(code == 0 for _, code in codes), codes


def test_an_idle_worker_stops_by_itself(tmp_path: Path) -> None:
    runtime = _short_folder()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    started = _run(["worker", "start", "--idle-minutes", "0.02"], tmp_path, env)
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + 30
    while list((runtime / "microagg").glob("*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list((runtime / "microagg").glob("*.sock"))
    assert _served(env, tmp_path) == -1
    shutil.rmtree(runtime)


def test_a_socket_path_too_long_is_refused(tmp_path: Path) -> None:
    runtime = tmp_path / ("r" * 100)
    runtime.mkdir(mode=0o700)
    refused = _run(["worker", "start"], tmp_path, {**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    assert refused.returncode == 2 and "too long for a Unix socket" in refused.stderr
