"""Runs on a Dask cluster (fsbench.engine.cluster): the same rows as local runs, no task lost when a
worker dies, a resumable client, and one sentence for a scheduler that cannot be reached."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from fsbench.cli import main
from fsbench.configuration.parse import parse_experiment
from fsbench.engine.cluster import parse_scheduler
from fsbench.engine.runner import run_experiment
from fsbench.errors import FsbenchError
from fsbench.storage.rankings import load_rankings
from fsbench.storage.task_files import finished_tasks

distributed = pytest.importorskip("distributed")

# columns that differ between runs: wall-clock times, and the digest over rows that hold them
TIMING = ["fit_seconds", "task_seconds", "rows_digest"]
KEY = ["dataset", "repeat", "fold", "selector", "k"]


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment(n_trials: int = 3):
    text = f"""
name: cluster
seed: 0
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.5, n_trials: {n_trials}}}
inner_cv: {{n_splits: 3}}
selectors: [fisher, fstat, mrmr, random]
classifier: {{name: linear_svm, C: [0.01, 1]}}
n_features: [4, 16]
"""
    return parse_experiment(text, "cluster.yaml", dataset_resolver=lambda n: _Spec("digits", 64))


@pytest.fixture(scope="module")
def reference(tmp_path_factory, digits):
    """The rows of a plain one-process run: what every cluster run must give."""
    out = tmp_path_factory.mktemp("reference")
    result = run_experiment(_experiment(6), out, data=digits, n_jobs=1)
    return _rows(result.runs), load_rankings(out)


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=TIMING).sort_values(KEY).reset_index(drop=True)


def test_scheduler_specs():
    assert parse_scheduler("local") == ("local", None)
    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("tcp://10.0.0.1:8786") == ("address", None)
    assert parse_scheduler("localhost:8786") == ("address", None)
    with pytest.raises(FsbenchError, match="at least one worker"):
        parse_scheduler("local:0")


def test_local_cluster_rows_equal_one_and_two_jobs(tmp_path, digits, reference):
    rows, rankings = reference
    cluster = run_experiment(_experiment(6), tmp_path / "cluster", data=digits, scheduler="local:2")
    two = run_experiment(_experiment(6), tmp_path / "two", data=digits, n_jobs=2)
    pd.testing.assert_frame_equal(_rows(cluster.runs), rows)
    pd.testing.assert_frame_equal(_rows(two.runs), rows)
    pd.testing.assert_frame_equal(load_rankings(tmp_path / "cluster"), rankings)
    # workers compute, the client writes: no rankings cache in the results folder
    assert not (tmp_path / "cluster" / "cache" / "rankings").exists() or not any(
        (tmp_path / "cluster" / "cache" / "rankings").iterdir())


def test_a_killed_worker_loses_no_task(tmp_path, digits, reference):
    rows, rankings = reference
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]
        killed = []

        def kill_once(task_id: str) -> None:
            if not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(task_id)

        result = run_experiment(_experiment(6), tmp_path / "out", data=digits,
                                scheduler=cluster.scheduler_address, on_task_done=kill_once)
        assert killed and victim not in client.run(os.getpid).values()  # the worker died (and was replaced)
    got = _rows(result.runs)
    assert not got.duplicated(KEY).any() and len(got) == len(rows)
    pd.testing.assert_frame_equal(got, rows)
    pd.testing.assert_frame_equal(load_rankings(tmp_path / "out"), rankings)


def test_an_interrupted_client_resumes(tmp_path, digits, reference):
    rows, _ = reference
    seen = []

    def stop_after_three(task_id: str) -> None:
        seen.append(task_id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(_experiment(6), tmp_path / "out", data=digits, scheduler="local:2",
                       on_task_done=stop_after_three)
    assert len(finished_tasks(tmp_path / "out")) == 3
    result = run_experiment(_experiment(6), tmp_path / "out", data=digits, scheduler="local:2")
    assert result.n_resumed == 3
    pd.testing.assert_frame_equal(_rows(result.runs), rows)


def test_unreachable_scheduler_is_one_sentence_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "configs/quickstart.yaml", "--out", str(out),
                                       "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: Cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert "Traceback" not in result.output and not out.exists()


def test_without_dask_the_option_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "configs/quickstart.yaml", "--out", str(out), "--scheduler", "local"])
    assert result.exit_code == 2
    assert "pip install 'fsbench[dask]'" in result.output and not out.exists()


def test_a_task_that_kills_every_worker_is_one_sentence_not_a_traceback(tmp_path, monkeypatch):
    import dask

    # a selector whose fit kills the process running it, except in this test's own process
    # (config validation probes it here): Dask gives up on the task after allowed_failures
    (tmp_path / "crashing.py").write_text(
        "import os\nimport numpy as np\nfrom sklearn.base import BaseEstimator\n\n"
        f"PARENT = {os.getpid()}\n\n"
        "class Crash(BaseEstimator):\n"
        "    def fit(self, X, y):\n"
        "        if os.getpid() != PARENT:\n"
        "            os._exit(1)\n"
        "        self.scores_ = np.arange(X.shape[1], dtype=float)\n"
        "        return self\n")
    (tmp_path / "c.yaml").write_text(
        "name: crash\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 1}\n"
        "selectors:\n  - fisher\n  - {name: crash, class: 'crashing:Crash'}\n"
        "classifier: {name: linear_svm, C: 1}\nn_features: [4]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        result = CliRunner().invoke(main, ["run", str(tmp_path / "c.yaml"), "--out", str(out),
                                           "--scheduler", "local:1", "-q"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    message = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(message) == 1 and "could not run task" in message[0] and "crash" in message[0]
    assert "run the same command again to resume" in message[0]


# ----------------------------------------------------------------------------- faults of the cluster itself
SLOW_PLUGIN = """
import time

import numpy as np
from sklearn.base import BaseEstimator


class Slow(BaseEstimator):
    def fit(self, X, y):
        if X.shape[0] > 30:  # not the config's probe
            time.sleep(1.0)
        self.scores_ = np.var(X, axis=0)
        return self
"""


def _slow_config(folder):
    (folder / "slow_plugin.py").write_text(SLOW_PLUGIN)
    config = folder / "slow.yaml"
    config.write_text("name: slow\nseed: 0\ndatasets: [digits]\n"
                      "protocol: {kind: holdout, train_size: 0.5, n_trials: 4}\n"
                      "selectors:\n  - fisher\n  - {name: slow, class: 'slow_plugin:Slow'}\n"
                      "classifier: {name: linear_svm, C: 1}\nn_features: [4]\n")
    return config


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_cluster(port: int):
    """A scheduler and one single-threaded worker, as a user starts them (dask scheduler / dask worker)."""
    import subprocess
    import time

    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard"], **quiet)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                               "--nthreads", "1", "--no-dashboard"], **quiet)
    deadline = time.monotonic() + 60
    while True:  # wait until the worker has joined
        try:
            with distributed.Client(address, timeout=5) as client:
                if client.scheduler_info().get("workers"):
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, "the test cluster did not start"
        time.sleep(0.5)
    return address, scheduler, worker


def _stop(*procs):
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _finished(out):
    return [p for p in (out / "tasks").glob("*.json") if not p.name.endswith(".failed.json")] if (
        out / "tasks").is_dir() else []


def test_a_lost_scheduler_is_one_sentence_and_the_rerun_resumes(tmp_path):
    import subprocess
    import time

    config = _slow_config(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, "MPLBACKEND": "Agg"}
    address, scheduler, worker = _start_cluster(_free_port())
    try:
        run = subprocess.Popen([sys.executable, "-m", "fsbench.cli", "run", str(config), "--out", str(out),
                                "--scheduler", address, "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
        deadline = time.monotonic() + 120
        while len(_finished(out)) < 2:
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.05)
        scheduler.kill()  # mid-run: 8 tasks of which the slow ones take a second each
        _, stderr = run.communicate(timeout=180)
    finally:
        _stop(scheduler, worker)
    assert run.returncode == 2, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    expected = f"Error: Lost the connection to the Dask scheduler at {address}"
    assert len(lines) == 1 and lines[0].startswith(expected), stderr
    assert "run the same command again to resume" in lines[0]
    kept = {p.name for p in _finished(out)}
    assert 2 <= len(kept) < 8
    address, scheduler, worker = _start_cluster(_free_port())
    try:
        rerun = subprocess.run([sys.executable, "-m", "fsbench.cli", "run", str(config), "--out", str(out),
                                "--scheduler", address, "-q"], capture_output=True, text=True, env=env, timeout=300)
    finally:
        _stop(scheduler, worker)
    assert rerun.returncode == 0, rerun.stderr
    assert f"8 tasks ({len(kept)} resumed)" in rerun.stdout
    assert kept <= {p.name for p in _finished(out)} and len(_finished(out)) == 8


QUICKSTART = str(Path(__file__).resolve().parents[1] / "configs" / "quickstart.yaml")


def test_sigterm_while_a_local_cluster_starts_is_one_line_and_exit_130(tmp_path):
    import subprocess

    out = tmp_path / "out"
    # SIGTERM 0.3 s into LocalCluster's start (it takes over a second): in the middle of it
    driver = (
        "import os, signal, sys, threading\n"
        "import distributed\n"
        "class Started(distributed.LocalCluster):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()\n"
        "        super().__init__(*args, **kwargs)\n"
        "distributed.LocalCluster = Started\n"
        "from fsbench.cli import main\n"
        f"sys.argv = ['fsbench', 'run', {QUICKSTART!r}, '--out', {str(out)!r}, '--scheduler', "
        "'local:1', '-q']\n"
        "main()\n")
    result = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=180,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 130, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["Interrupted: finished tasks are saved; run the same command again to resume."], result.stderr
    assert not out.exists()  # the folder is locked (and created) only once the cluster is up


def _full_disk(task, arrays):
    import errno

    raise OSError(errno.ENOSPC, "No space left on device", "/tmp/plugin-scratch")


def test_a_task_raising_an_os_error_is_the_tasks_sentence_not_a_lost_scheduler():
    """A task's own OSError (a plugin's scratch file on a full disk) comes back as the task's error:
    only a future that did not err (cancelled, its result not gathered) means the connection."""
    from fsbench.engine.cluster import run_tasks

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, pytest.raises(FsbenchError) as caught:
        list(run_tasks(client, _full_disk, ["t0"], {"d": (1, 2)}, lambda t: "d", lambda t: t))
    assert str(caught.value).startswith("The Dask cluster could not run task fsbench-t0 (OSError: "), caught.value
    assert "No space left on device" in str(caught.value)


def test_distributed_tracebacks_are_held_back_while_a_run_is_on_a_cluster():
    """distributed's comms log a closed connection at INFO with the exception attached; during a run
    such a record, and any of its ERROR records, reach no handler (the run reports one sentence);
    its other records, and other loggers' tracebacks, still do."""
    import logging

    from fsbench.engine import cluster

    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(f"{record.name}:{record.levelname}:{bool(record.exc_info)}")

    handler = Collect()
    root = logging.getLogger()
    root.addHandler(handler)
    levels = {name: logging.getLogger(name).level for name in ("distributed", "mine")}
    for name in levels:
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        error = ConnectionResetError(104, "Connection reset by peer")
        with cluster._quiet_errors():
            logging.getLogger("distributed.batched").info("Batched Comm Closed", exc_info=error)
            logging.getLogger("distributed.client").error("lost scattered data")
            logging.getLogger("distributed.worker").warning("plain warning")
            logging.getLogger("mine").info("my traceback", exc_info=error)
        logging.getLogger("distributed.batched").info("after the run", exc_info=error)
    finally:
        root.removeHandler(handler)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
    assert seen == ["distributed.worker:WARNING:False", "mine:INFO:True", "distributed.batched:INFO:True"]


def test_an_error_of_the_cluster_runs_the_task_again_and_a_lasting_one_is_one_sentence(tmp_path):
    """distributed can fail a task for reasons of its own (after a worker died, a RuntimeError about an
    event loop): the task runs again; a task that keeps failing ends as one sentence naming it."""
    import numpy as np

    from fsbench.engine.cluster import run_tasks

    def flaky(task, data, folder):
        marker = Path(folder) / f"{task}.failed-once"
        if not marker.exists():
            marker.touch()
            raise RuntimeError("<asyncio.locks.Event object> is bound to a different event loop")
        return task * 10

    def broken(task, data, folder):
        raise RuntimeError("the cluster fails every time")

    arrays = {"d": (np.zeros((2, 2)), np.zeros(2))}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        got = sorted(run_tasks(client, flaky, [1, 2, 3], arrays, lambda t: "d", str, str(tmp_path)))
        assert got == [10, 20, 30]  # each task failed once, ran again, and is yielded once
        assert sorted(p.name for p in tmp_path.iterdir()) == ["1.failed-once", "2.failed-once", "3.failed-once"]
        with pytest.raises(FsbenchError, match="could not run task fsbench-7"):
            list(run_tasks(client, broken, [7], arrays, lambda t: "d", str, str(tmp_path)))
