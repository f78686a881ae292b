"""A census at scale: risk -> recode -> suppress -> check on a cluster of worker processes.

Writes ``census-synthetic`` of ``--persons`` persons (``microagg datasets export``, a Parquet
data set of parts of 10⁶ persons in a local folder; timed apart as ``generate_seconds``),
starts a Dask scheduler and ``--workers`` worker processes (``dask scheduler``, ``dask
worker``: one single-threaded worker a process, each started in a folder of its own that is
also its ``--local-directory``; they share no working folder, only the folder of the data
sets), then runs the commands one after another from the shell, each joining the cluster by
``--scheduler``:

1. ``microagg risk`` of the keys on the census (f_k, risk, violations by one group-by, and
   the household risk by a second pass);
2. ``microagg recode``: age to 10-year bands (0-14, 15-24 ... 75+), household size 6+ as
   one, citizenship to its continent (the taxonomy CITIZENSHIP_CONTINENT, written beside a
   schema);
3. ``microagg suppress`` to ``--k`` on the recoded keys (the keys' codes gathered on the
   client, which suppresses them, masks sent back);
4. ``microagg check`` of k-anonymity on the suppressed data set (exit 0: it holds).

Each step's wall time is the command's, from start to exit (its own start-up included), and
the whole is their sum. The memory of a worker in a step is the peak resident set of its
process during that step: before the step every worker resets its peak (``5`` written to
``/proc/self/clear_refs``, Linux) and after it reads ``VmHWM`` from ``/proc/self/status``,
both through ``client.run``. The command's own peak (the client; local suppression runs
there) is its ``ru_maxrss`` from ``os.wait4``. A warm-up pipeline on 20,000 persons runs
first on the same cluster (numba's kernels compiled and cached, not timed). The load
average (``os.getloadavg``) is recorded before and after: the figures depend on what else
runs on the machine.

With ``--store s3`` the data sets live in an S3-compatible object store instead (moto's
server, started here on a local port, ``pip install "moto[server]" s3fs``): the census is
generated into ``s3://census/…``, every command reads and writes there with
``--storage-option endpoint_url=…``, and the folders hold only the schema and its taxonomy
(on the client) and each worker's own working folder. The server is one more process on the
same cores, so these times include the store's own work.

Usage: python benchmarks/bench_census_pipeline.py [--persons 1000000] [--k 3] [--workers 2]
       [--seed 0] [--folder DIR] [--store local|s3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

KEYS = "district,sex,age,marital,citizenship,hhsize"
BREAKS = "age=0:15:25:35:45:55:65:75:inf,hhsize=1:2:3:4:5:6:inf"
MICROAGG = [sys.executable, "-m", "microagg"]


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_mib() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _timed(args: list[str]) -> tuple[float, float, int, str]:
    """Run a command; its seconds, its peak RSS in MiB, its exit code and its stdout."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stdout:
        process = subprocess.Popen(args, stdout=stdout, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        error = process.stderr.read() if process.stderr else ""
        stdout.seek(0)
        text = stdout.read()
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(args[2:5])} failed: {error.strip()[-500:]}")
    return seconds, usage.ru_maxrss / 1024, process.returncode, text


ACCESS = {"AWS_ACCESS_KEY_ID": "benchmark", "AWS_SECRET_ACCESS_KEY": "benchmark",
          "AWS_DEFAULT_REGION": "us-east-1"}


@contextlib.contextmanager
def s3_store(folder: Path) -> Iterator[list[str]]:
    """moto's S3 server on a free local port with a bucket ``census``; the storage options
    of the commands (the credentials go to this process's environment, which the workers
    and the commands inherit)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ.update(ACCESS)
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], cwd=folder, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        import s3fs

        deadline = time.monotonic() + 60
        while True:
            try:
                s3fs.S3FileSystem(endpoint_url=endpoint).mkdir("census")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield ["--storage-option", f"endpoint_url={endpoint}"]
    finally:
        server.terminate()
        server.wait(timeout=60)


@contextlib.contextmanager
def cluster(folder: Path, workers: int) -> Iterator[tuple[str, Any]]:
    """A scheduler and ``workers`` worker processes, each in a folder of its own; the
    scheduler's address and a client."""
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    processes = [subprocess.Popen(
        ["dask", "scheduler", "--scheduler-file", str(scheduler_file), "--port", "0",
         "--dashboard-address", ":0"], cwd=folder,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        while not scheduler_file.exists():
            time.sleep(0.2)
        for i in range(workers):
            own = folder / f"worker-{i}"
            own.mkdir()
            processes.append(subprocess.Popen(
                ["dask", "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "1",
                 "--nthreads", "1", "--local-directory", str(own), "--no-dashboard",
                 "--name", f"worker-{i}"], cwd=own,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with Client(scheduler_file=str(scheduler_file)) as client:
            client.wait_for_workers(workers, timeout=120)
            yield client.scheduler.address, client
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=60)


def _schema(folder: Path) -> Path:
    """The schema that declares the household and citizenship's taxonomy (its continents)."""
    from microagg.data.synthetic_census import CITIZENSHIP_CONTINENT

    (folder / "citizenship.csv").write_text(
        "".join(f"{leaf};{group};*\n" for leaf, group in CITIZENSHIP_CONTINENT.items()))
    schema = folder / "census.yaml"
    schema.write_text("attributes:\n  hid: {role: household}\n"
                      "  citizenship: {role: quasi, kind: nominal, taxonomy: citizenship.csv}\n")
    return schema


def _pipeline(data: str, schema: Path, address: str, k: int, client: Any | None,
              store: list[str]) -> list[dict[str, Any]]:
    """The four commands on ``data`` (a folder or URL; ``store``: the storage options); per
    step its seconds, peaks and result."""
    cluster_args = ["--engine", "dask", "--scheduler", address, *store]
    recoded, suppressed = f"{data}-recoded", f"{data}-suppressed"
    steps = [
        ("risk", ["risk", str(data), "--keys", KEYS, "--household", "hid", "--k", str(k),
                  "--json"]),
        ("recode", ["recode", str(data), "-o", str(recoded), "--schema", str(schema),
                    "--breaks", BREAKS, "--levels", "citizenship=1", "--keys", KEYS, "--json"]),
        ("suppress", ["suppress", str(recoded), "-o", str(suppressed), "--schema", str(schema),
                      "--keys", KEYS, "--k", str(k), "--json"]),
        ("check", ["check", str(suppressed), "--k", str(k), "--quasi", KEYS, "--json"]),
    ]
    results = []
    for name, args in steps:
        if client is not None:
            client.run(_reset_peak)
        seconds, client_peak, code, text = _timed([*MICROAGG, *args, *cluster_args])
        peaks = client.run(_peak_mib) if client is not None else {}
        result: dict[str, Any] = {"step": name, "seconds": round(seconds, 1),
                                  "command_peak_rss_mib": round(client_peak),
                                  "worker_peak_rss_mib": [round(v) for v in peaks.values()]}
        result.update(_summary(name, json.loads(text), code))
        results.append(result)
    return results


def _summary(step: str, report: dict[str, Any], code: int) -> dict[str, Any]:
    """The figures of a step's JSON worth printing beside its time."""
    if step == "risk":
        return {"sample_uniques": report["sample_uniques"],
                "violations": report["violations"],
                "household_global_risk": report["household_risk"]["global_risk"]}
    if step == "recode":
        return {"sample_uniques_after": report["after"]["sample_uniques"]}
    if step == "suppress":
        return {"suppressed": report["total_suppressions"],
                "k_anonymity": report["k_anonymity"]}
    return {"holds": code == 0}


def run(persons: int, k: int, workers: int, seed: int, folder: Path, store: str
        ) -> dict[str, Any]:
    """Generate, start the cluster, warm up, run the pipeline; the figures."""
    with contextlib.ExitStack() as stack:
        options = stack.enter_context(s3_store(folder)) if store == "s3" else []
        where = "s3://census" if store == "s3" else str(folder)
        data = f"{where}/census"
        started = time.perf_counter()
        made = subprocess.run([*MICROAGG, "datasets", "export", "census-synthetic",
                               "--persons", str(persons), "--seed", str(seed), "-o", data,
                               *options], check=True, capture_output=True, text=True)
        households = int(re.search(r"in ([\d,]+) households", made.stdout)[1].replace(",",
                                                                                      ""))
        generate = time.perf_counter() - started
        schema = _schema(folder)
        small = f"{where}/warmup"
        subprocess.run([*MICROAGG, "datasets", "export", "census-synthetic", "--persons",
                        "20000", "-o", small, *options], check=True, capture_output=True)
        load_before = os.getloadavg()
        with cluster(folder, workers) as (address, client):
            _pipeline(small, schema, address, k, None, options)
            steps = _pipeline(data, schema, address, k, client, options)
    return {"benchmark": "census-pipeline", "persons": persons,
            "households": households, "k": k, "keys": KEYS, "workers": workers,
            "data": ("S3 (moto's server on this machine)" if store == "s3"
                     else "local folder"),
            "generate_seconds": round(generate, 1), "steps": steps,
            "total_seconds": round(sum(s["seconds"] for s in steps), 1),
            "largest_worker_peak_rss_mib": max(max(s["worker_peak_rss_mib"]) for s in steps),
            "load_before": [round(v, 2) for v in load_before],
            "load_after": [round(v, 2) for v in os.getloadavg()],
            "cpus": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persons", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--folder", type=Path, help="Keep the data sets here (default: a "
                        "temporary folder, removed at the end).")
    parser.add_argument("--store", choices=("local", "s3"), default="local",
                        help="Where the data sets live (module docstring).")
    args = parser.parse_args()
    given = (args.persons, args.k, args.workers, args.seed)
    if args.folder is not None:
        args.folder.mkdir(parents=True, exist_ok=False)
        print(json.dumps(run(*given, args.folder, args.store)))
        return
    with tempfile.TemporaryDirectory() as name:
        print(json.dumps(run(*given, Path(name), args.store)))


if __name__ == "__main__":
    main()
