"""Runs on a Dask cluster (fsbench.cluster): the same rows as local runs, no task lost when a
worker dies, a resumable client, and one sentence for a scheduler that cannot be reached."""

from __future__ import annotations

import os
import signal
import sys
import types

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.datasets import load_digits

from fsbench.cli import main
from fsbench.cluster import parse_scheduler
from fsbench.config import parse_experiment
from fsbench.errors import FsbenchError
from fsbench.runner import run_experiment
from fsbench.store import finished_tasks, load_rankings

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
def digits():
    X, y = load_digits(return_X_y=True)
    keep = np.arange(0, X.shape[0], 3)
    return {"digits": types.SimpleNamespace(X=X[keep].astype(float), y=y[keep])}


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
