"""The Dask engine with data in object storage and workers that share no folder with the
client: an S3-compatible server (moto's), a scheduler and two worker processes, each in a
working folder of its own and, as root with ``unshare``, in a private mount namespace where
the client's temporary folder is hidden by an empty one."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from microagg.at_scale.storage import Location, locate, parse_storage_options, public_url
from microagg.errors import InputError

# -- URLs and options (no cluster) --------------------------------------------------------------


def test_a_password_with_a_question_mark_and_an_azure_container_are_shown_right():
    assert public_url("s3://u:pa?ss#w@bucket/x?versionId=3") == "s3://bucket/x"
    assert public_url("abfs://data@account.dfs.core.windows.net/a/b?sig=S") == \
        "abfs://data@account.dfs.core.windows.net/a/b"


def test_a_url_is_shown_without_its_credentials():
    assert public_url("s3://AKIA:s3cr3t@bucket/data?X-Amz-Signature=abc#x") == "s3://bucket/data"
    where = locate("s3://AKIA:s3cr3t@bucket/data", {"secret": "s3cr3t"})
    assert isinstance(where, Location) and "s3cr3t" not in repr(where) + str(where)
    assert where.given == "s3://AKIA:s3cr3t@bucket/data" and where.name == "data"
    assert "s3cr3t" not in where.hide(ValueError("no bucket s3://AKIA:s3cr3t@bucket/data"))


def test_an_error_names_the_url_without_its_credentials(run_cli):
    pytest.importorskip("distributed")
    done = run_cli("risk", "memory://user:s3cr3t@nowhere/in", "--keys", "a", "--engine",
                   "dask")
    assert done.code == 2 and "s3cr3t" not in done.stderr
    assert done.stderr.strip().endswith("file not found: memory://nowhere/in")
    done = run_cli("risk", "memory://nowhere/in", "--keys", "a", "--storage-option", "x=1")
    assert done.code == 2 and "--storage-option applies to --engine dask" in done.stderr


@pytest.mark.parametrize("command", [
    ["microaggregate", "IN", "-o", "s3://u:s3cr3t@bucket/out.csv", "--k", "2"],
    ["microaggregate", "s3://u:s3cr3t@bucket/in.csv", "-o", "OUT", "--k", "2"],
    ["dp", "s3://u:s3cr3t@bucket/in.csv", "-o", "OUT", "--epsilon", "1", "--k", "5",
     "--bounds-from-data"],
    ["suppress", "IN", "-o", "s3://u:s3cr3t@bucket/out.csv", "--keys", "a", "--k", "2"]])
def test_the_local_engine_refuses_a_url_without_showing_its_credentials(run_cli, tmp_path,
                                                                         command):
    """Only the Dask engine reads and writes at URLs: the local one refuses them in one line
    that shows the URL without its user and password."""
    source = tmp_path / "in.csv"
    source.write_text("a,b\n1,2\n3,4\n5,6\n")
    args = [str(source) if a == "IN" else str(tmp_path / "o.csv") if a == "OUT" else a
            for a in command]
    done = run_cli(*args)
    assert done.code == 2 and "s3cr3t" not in done.stderr + done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "s3://bucket/" in lines[0] and "--engine dask" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_paths_stay_paths_and_urls_survive_a_path():
    assert locate("data/part-*.parquet") == Path("data/part-*.parquet")
    assert locate(Path("file:///tmp/x")) == Path("/tmp/x")  # file:// is a local path
    assert locate(Path("s3://bucket/a/b")).url == "s3://bucket/a/b"  # as typer passes it
    assert parse_storage_options(["anon=true", "endpoint_url=http://h:1", "n=3"]) == {
        "anon": True, "endpoint_url": "http://h:1", "n": 3}
    with pytest.raises(InputError, match="KEY=VALUE"):
        parse_storage_options(["secret"])


def test_a_data_set_at_a_url_reads_as_the_same_files_on_disk(tmp_path):
    """fsspec's in-memory file system: a folder of CSV files and a glob of Parquet files
    give the partitions, columns and rows of the same files on disk."""
    import fsspec

    from microagg.at_scale.dataset import open_dataset, read_piece

    fs = fsspec.filesystem("memory")
    frame = pd.DataFrame({"a": [1.5, 2.0, 3.25, 4.0], "code": ["01", "2", "x", "01"]})
    (tmp_path / "csv").mkdir()
    for i, name in enumerate(["p0.csv", "p1.csv", "_SUCCESS"]):
        part = frame.iloc[2 * i:2 * i + 2]
        part.to_csv(tmp_path / "csv" / name, index=False)
        fs.pipe_file(f"/t/csv/{name}", (tmp_path / "csv" / name).read_bytes())
    frame.to_parquet(tmp_path / "one.parquet", row_group_size=1)
    fs.pipe_file("/t/pq/one.parquet", (tmp_path / "one.parquet").read_bytes())
    for url, local in (("memory://t/csv", tmp_path / "csv"),
                       ("memory://t/pq/*.parquet", tmp_path / "*.parquet")):
        remote, disk = (open_dataset(url, rows_per_partition=2),
                        open_dataset(local, rows_per_partition=2))
        assert remote.columns == disk.columns and list(remote.sizes) == list(disk.sizes)
        for r, d in zip(remote.pieces, disk.pieces, strict=True):
            assert r.path.startswith("memory://") and "/t/" in r.path
            pd.testing.assert_frame_equal(read_piece(r, text=["code"]),
                                          read_piece(d, text=["code"]))
    fs.rm("/t", recursive=True)


# -- the cluster --------------------------------------------------------------------------------

pytest.importorskip("distributed")
pytest.importorskip("s3fs")
pytest.importorskip("moto.server")

N = 20_000
ACCESS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
          "AWS_DEFAULT_REGION": "us-east-1"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(check, what: str, patience: float = 60.0) -> None:
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.2)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _private_namespaces() -> bool:
    """Whether a worker can run in a mount namespace of its own (root, unshare)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                          capture_output=True).returncode == 0


def _worker_command(scheduler: str, hide: Path, hidden: bool) -> list[str]:
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler, "--nworkers",
              "1", "--nthreads", "1", "--no-dashboard", "--local-directory", "."]
    if not hidden:
        return worker
    # the client's files are under the tests' temporary folder: hide it (not the whole
    # system temporary folder, which may hold the Python the worker runs)
    tmp = os.path.realpath(hide)
    return ["unshare", "-m", "sh", "-c", f"mount -t tmpfs tmpfs {tmp} && mkdir {tmp}/w && "
            f"cd {tmp}/w && exec \"$@\"", "worker", *worker]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[dict]:
    """An S3 server, a scheduler and two workers; yields the scheduler's address, the
    storage options and whether the workers are hidden from the client's files."""
    base = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, **ACCESS}
    procs: list[subprocess.Popen] = []

    def start(args: list[str], cwd: Path) -> None:
        cwd.mkdir(exist_ok=True)
        procs.append(subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                      stderr=(cwd / "log").open("w")))

    try:
        s3, sched = _port(), _port()
        start([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3)],
              base / "s3")
        start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
               "--port", str(sched), "--dashboard-address", ":0"], base / "scheduler")
        _wait_for(lambda: _listening(s3) and _listening(sched), "the S3 server or scheduler")
        address = f"tcp://127.0.0.1:{sched}"
        hidden = _private_namespaces()
        for i in range(2):
            start(_worker_command(address, tmp_path_factory.getbasetemp(), hidden),
                  base / f"worker-{i}")
        from distributed import Client

        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            seen = client.run(os.path.exists, str(base))
        import s3fs

        options = {"endpoint_url": f"http://127.0.0.1:{s3}"}
        for name, value in ACCESS.items():
            os.environ.setdefault(name, value)
        fs = s3fs.S3FileSystem(**options)
        yield {"scheduler": address, "options": options, "hidden": hidden, "seen": seen,
               "fs": fs}
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def _frame(seed: int, rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(rows), "a": np.round(rng.normal(size=rows), 2),
        "b": np.round(rng.gamma(2.0, 3.0, rows), 1), "c": rng.integers(0, 60, rows) * 1.0,
        "region": rng.choice(["north", "south", "east", "west"], rows),
        "edu": rng.choice(["low", "mid", "high"], rows, p=[0.5, 0.4, 0.1]),
        "age": rng.integers(16, 90, rows) // 5 * 5})


def _upload(fs, frame: pd.DataFrame, prefix: str, files: int = 2) -> None:
    for i, part in enumerate(np.array_split(np.arange(len(frame)), files)):
        with fs.open(f"{prefix}/part-{i}.parquet", "wb") as f:
            frame.iloc[part].to_parquet(f, index=False, row_group_size=4000)


def _read(fs, prefix: str) -> pd.DataFrame:
    parts = sorted(p for p in fs.ls(prefix) if p.endswith(".parquet"))
    return pd.concat([pd.read_parquet(fs.open(p, "rb")) for p in parts], ignore_index=True)


@pytest.mark.slow
def test_s3_to_s3_on_workers_that_cannot_see_the_client(cluster, run_cli, tmp_path):
    if not cluster["hidden"]:
        print("notice: not root or no unshare: the workers have working folders of their "
              "own but can see the client's files")
    else:
        assert cluster["seen"] and not any(cluster["seen"].values())  # hidden from them
    fs, opts = cluster["fs"], cluster["options"]
    fs.mkdir("data")
    whole = _frame(5, N)
    _upload(fs, whole, "data/in")
    (tmp_path / "in").mkdir()  # the same data where only the client can read it
    whole.to_parquet(tmp_path / "in" / "all.parquet", index=False)
    common = ["--scheduler", cluster["scheduler"],
              "--storage-option", f"endpoint_url={opts['endpoint_url']}"]

    done = run_cli("microaggregate", "s3://data/in", "-o", "s3://data/k", "--k", "5",
                   "--columns", "a,b,c", "--engine", "dask", "--block-size", "4000", *common)
    assert done.code == 0, done.stderr
    masked = _read(fs, "data/k")
    assert len(masked) == N and masked.groupby(["a", "b", "c"]).size().min() >= 5
    assert masked["region"].tolist() == whole["region"].tolist()  # the rest kept, in order
    report = json.loads(fs.cat("data/k.report.json"))
    assert report["guarantee"]["holds"] and report["input"]["name"] == "in"
    assert fs.exists("data/k/_SUCCESS")

    done = run_cli("dp", "s3://data/in", "-o", "s3://data/dp", "--method",
                   "individual-ranking", "--epsilon", "1.5", "--k", "10", "--columns",
                   "a,b,c", "--bounds", "a=-4:4,b=0:60,c=0:60", "--engine", "dask", *common)
    assert done.code == 0, done.stderr
    assert len(_read(fs, "data/dp")) == N
    privacy = json.loads(fs.cat("data/dp.privacy.json"))
    assert privacy["epsilon"] == 1.5 and privacy["differentially_private"]
    assert opts["endpoint_url"] not in done.stdout + json.dumps(privacy)

    keys = "region,edu,age"
    done = run_cli("risk", "s3://data/in", "--keys", keys, "--records-out", "s3://data/r",
                   "--engine", "dask", "--json", *common)
    assert done.code == 0, done.stderr
    local = run_cli("risk", tmp_path / "in" / "all.parquet", "--keys", keys, "--json")
    ours, theirs = json.loads(done.stdout), json.loads(local.stdout)
    for key in ("n", "sample_uniques", "violations", "global_risk", "largest_risk"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert _read(fs, "data/r")["fk"].sum() > N  # one row per record, its class size

    # recode: the schema and its taxonomy are files only the client sees
    (tmp_path / "regions.yaml").write_text("any:\n  north-west: [north, west]\n"
                                           "  south-east: [south, east]\n")
    (tmp_path / "schema.yaml").write_text(
        "attributes:\n  region: {kind: nominal, role: quasi, taxonomy: regions.yaml}\n"
        "  edu: {kind: nominal, role: quasi}\n  age: {kind: numeric, role: quasi}\n")
    recode = ["--levels", "region=1", "--breaks", "age=-inf:30:60:inf", "--keys", keys,
              "--schema", tmp_path / "schema.yaml"]
    done = run_cli("recode", "s3://data/in", "-o", "s3://data/rec", *recode, "--engine",
                   "dask", *common)
    assert done.code == 0, done.stderr
    local = run_cli("recode", tmp_path / "in" / "all.parquet", "-o", tmp_path / "rec.parquet",
                    *recode)
    assert local.code == 0, local.stderr
    ours, theirs = _read(fs, "data/rec"), pd.read_parquet(tmp_path / "rec.parquet")
    assert ours.astype(str).equals(theirs.astype(str))
    assert set(ours["region"]) == {"north-west", "south-east"}
    for when in ("before", "after"):
        ours_figures = json.loads(fs.cat("data/rec.report.json"))[when]
        theirs_figures = json.loads((tmp_path / "rec.parquet.report.json").read_text()
                                    )["report"][when]
        for key in ("smallest_class", "sample_uniques", "below_k", "classes"):
            assert ours_figures[key] == theirs_figures[key], (when, key)

    # suppress: the codes of the keys meet on the client, the rest stays in the store
    done = run_cli("suppress", "s3://data/rec", "-o", "s3://data/sup", "--k", "200", "--keys",
                   keys, "--engine", "dask", *common)
    assert done.code == 0, done.stderr
    local = run_cli("suppress", tmp_path / "rec.parquet", "-o", tmp_path / "sup.parquet",
                    "--k", "200", "--keys", keys)
    assert local.code == 0, local.stderr
    ours, theirs = _read(fs, "data/sup"), pd.read_parquet(tmp_path / "sup.parquet")
    assert ours.astype(str).equals(theirs.astype(str))
    report = json.loads(fs.cat("data/sup.report.json"))
    assert report["total_suppressions"] > 0 and report["k_anonymity"]["holds"]
    done = run_cli("check", "s3://data/sup", "--k", "200", "--quasi", keys, "--engine", "dask",
                   "--json", *common)
    local = run_cli("check", tmp_path / "sup.parquet", "--k", "200", "--quasi", keys, "--json")
    assert done.code == local.code == 0 and json.loads(done.stdout) == json.loads(local.stdout)

    # topcode at quantiles found on the cluster, and pram by matrices counted there
    done = run_cli("topcode", "s3://data/in", "-o", "s3://data/top", "--columns", "b",
                   "--top", "0.9", "--at", "quantile", "--engine", "dask", *common)
    local = run_cli("topcode", tmp_path / "in" / "all.parquet", "-o", tmp_path / "top.parquet",
                    "--columns", "b", "--top", "0.9", "--at", "quantile")
    assert done.code == local.code == 0, done.stderr + local.stderr
    assert _read(fs, "data/top").equals(pd.read_parquet(tmp_path / "top.parquet"))
    done = run_cli("pram", "s3://data/in", "-o", "s3://data/pram", "--keys", "edu", "--seed",
                   "1", "--engine", "dask", *common)
    assert done.code == 0, done.stderr
    drawn = _read(fs, "data/pram")
    assert set(drawn["edu"].dropna()) <= set(whole["edu"].dropna())
    assert drawn["region"].equals(whole["region"])
    # mask: multiplicative noise restores the moments of the data set in the store
    done = run_cli("mask", "s3://data/in", "-o", "s3://data/noise", "--method",
                   "multiplicative-noise", "--s", "0.2", "--columns", "a,b,c", "--seed", "1",
                   "--engine", "dask", *common)
    assert done.code == 0, done.stderr
    noisy = _read(fs, "data/noise")[["a", "b", "c"]].to_numpy()
    original = whole[["a", "b", "c"]].to_numpy()
    np.testing.assert_allclose(np.cov(noisy, rowvar=False), np.cov(original, rowvar=False),
                               rtol=1e-9, atol=1e-9)
    assert not np.allclose(noisy, original)
    assert json.loads(fs.cat("data/noise.report.json"))["columns"] == ["a", "b", "c"]
    # a recipe of those steps: each step's data set in the store, then gone
    (tmp_path / "recipe.yaml").write_text(
        "format: microagg-recipe/1\ninput: in/all.parquet\nschema: schema.yaml\nsteps:\n"
        "  - {family: keys, method: global-recoding, levels: {region: 1},"
        " breaks: {age: [-.inf, 30, 60, .inf]}}\n"
        "  - {family: keys, method: local-suppression, k: 200}\n")
    done = run_cli("run", tmp_path / "recipe.yaml", "--input", "s3://data/in", "-o",
                   "s3://data/run", "--engine", "dask", *common)
    assert done.code == 0, done.stderr
    local = run_cli("run", tmp_path / "recipe.yaml", "-o", tmp_path / "run.parquet")
    assert local.code == 0, local.stderr
    assert _read(fs, "data/run").astype(str).equals(
        pd.read_parquet(tmp_path / "run.parquet").astype(str))
    ran = json.loads(fs.cat("data/run.report.json"))
    reference = json.loads((tmp_path / "run.parquet.report.json").read_text())
    assert ran["steps"][-1]["risk_after"]["global_risk"] == pytest.approx(
        reference["steps"][-1]["risk_after"]["global_risk"], rel=1e-12)
    assert "steps:" in fs.cat("data/run.recipe.yaml").decode()
    assert opts["endpoint_url"] not in done.stdout + json.dumps(ran)
    assert not [p for p in fs.find("data", withdirs=True) if ".microagg-" in p]


def _parts(count: int, broken: int | None = None) -> list:
    """Delayed partitions of 100 rows (functions the workers can import: they do not see
    the test modules); partition ``broken`` fails."""
    import operator

    import dask

    return [dask.delayed(operator.truediv)(1, 0) if i == broken else
            dask.delayed(pd.DataFrame)({"x": [float(i)] * 100}) for i in range(count)]


@pytest.mark.slow
def test_a_failed_write_leaves_the_store_as_it_was(cluster):
    """A partition that fails while others are written: the temporary prefix goes, an older
    data set at the target stays whole, and a new target is not created."""
    from distributed import Client

    from microagg.at_scale.dataset import open_dataset, write_dataset

    fs, opts = cluster["fs"], cluster["options"]
    fs.mkdir("broken")
    target = locate("s3://broken/out", opts)
    with Client(cluster["scheduler"], timeout="60s") as client:
        write_dataset(client, _parts(3), target)
        before = sorted(fs.find("broken"))
        for where in (target, locate("s3://broken/new", opts)):
            with pytest.raises(ZeroDivisionError):
                write_dataset(client, _parts(6, broken=4), where)
            fs.invalidate_cache()
            assert sorted(fs.find("broken")) == before
    assert before == ["broken/out/_SUCCESS", *(f"broken/out/part-{i:05d}.parquet"
                                               for i in range(3))]
    assert open_dataset("s3://broken/out", storage_options=opts).n == 300
