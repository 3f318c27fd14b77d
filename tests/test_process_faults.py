"""A selector's process that dies (sys.exit, os._exit, a segfault) fails its own task only, at
every n_jobs; a killed run leaves no worker writing its folder; a hung task is named by the
progress line. The runs are real ``fsbench run`` processes: a fault must not take the test
session down with it."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from fsbench.cli import main
from fsbench.configuration.parse import parse_experiment
from fsbench.engine.console import Progress
from fsbench.engine.runner import compute_task, plan, run_experiment

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, sends POSIX signals")

# A user's selector with a fault chosen by its parameter. The config's probe fits it on 30
# samples before anything runs: it behaves there, and misbehaves on the run's training parts
# while the file FAULT exists beside it (so that a rerun, without it, succeeds).
PLUGIN = '''
import ctypes
import os
import signal
import sys
import time

import numpy as np
from sklearn.base import BaseEstimator

FLAG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "FAULT")


class NeedsTwo(Exception):  # pickles, but unpickling calls NeedsTwo(message): a TypeError
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class BaseNeedsTwo(BaseException):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no text")


class Faulty(BaseEstimator):
    def __init__(self, how="none", seconds=0.0):
        self.how, self.seconds = how, seconds

    def fit(self, X, y):
        if X.shape[0] > 30 and os.path.exists(FLAG):
            if self.how == "sys_exit":
                sys.exit(3)
            if self.how == "os_exit":
                os._exit(3)
            if self.how == "segfault":
                ctypes.string_at(0)
            if self.how == "sigsegv":
                os.kill(os.getpid(), signal.SIGSEGV)
            if self.how == "sleep":
                time.sleep(self.seconds)
            if self.how == "needs_two":
                raise NeedsTwo(7, "custom failure")
            if self.how == "base_needs_two":
                raise BaseNeedsTwo(7, "custom stop")
            if self.how == "bad_str":
                raise BadStr()
        self.scores_ = np.var(X, axis=0) + np.arange(X.shape[1]) * 1e-9
        return self
'''

CONFIG = """name: faults
seed: 0
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.5, n_trials: {n_trials}}}
selectors:
  - fisher
  - {{name: faulty, class: 'faulty_plugin:Faulty', params: {{how: {how}, seconds: {seconds}}}}}
classifier: {{name: linear_svm, C: 1}}
n_features: [4]
"""


def _setup(folder: Path, how: str, *, n_trials: int = 2, seconds: float = 0.0, fault: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "faulty_plugin.py").write_text(PLUGIN)
    if fault:
        (folder / "FAULT").write_text("")
    config = folder / "faults.yaml"
    config.write_text(CONFIG.format(how=how, n_trials=n_trials, seconds=seconds))
    return config


def _fsbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "fsbench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _failures(out: Path) -> list[dict[str, str]]:
    with open(out / "failures.csv", newline="") as f:
        return list(csv.DictReader(f))


def _task_files(out: Path) -> list[str]:
    """The finished tasks' files (a failed task's record is TASK.failed.json)."""
    return sorted(p.name for p in (out / "tasks").glob("*.json") if not p.name.endswith(".failed.json"))


# each way for a fit to end its process, the failure record it must leave
FAULTS = {"sys-exit": "called sys.exit(3)", "os-exit": "exit status 3",
          "segfault": "signal 11 (SIGSEGV)",  # ctypes.string_at(0): a real invalid read
          "sigsegv": "signal 11 (SIGSEGV)"}


def _every_fault(folder: Path) -> Path:
    """A config of fisher and one faulty selector per way to die (labels as in FAULTS), 2 splits."""
    config = _setup(folder, "none")
    faulty = "".join(f"  - {{name: faulty, label: {label}, class: 'faulty_plugin:Faulty', "
                     f"params: {{how: {label.replace('-', '_')}}}}}\n" for label in FAULTS)
    config.write_text("name: faults\nseed: 0\ndatasets: [digits]\n"
                      "protocol: {kind: holdout, train_size: 0.5, n_trials: 2}\n"
                      f"selectors:\n  - fisher\n{faulty}classifier: {{name: linear_svm, C: 1}}\nn_features: [4]\n")
    return config


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_dying_fit_fails_its_task_only(tmp_path, n_jobs):
    config = _every_fault(tmp_path)
    out = tmp_path / "out"
    result = _fsbench("run", str(config), "--out", str(out), "-j", str(n_jobs), "-q")
    assert result.returncode == 1, result.stderr  # as for any failed task
    assert "Traceback" not in result.stderr
    assert "Error: 8 of 10 tasks failed (failures.csv)" in result.stderr
    expected = sorted((label, str(repeat), f"the process running selector {label} ended: {reason}")
                      for label, reason in FAULTS.items() for repeat in (0, 1))
    assert sorted((f["selector"], f["repeat"], f["error"]) for f in _failures(out)) == expected
    for _, _, error in expected:
        assert f"{error}\n" in result.stderr
    # the other tasks finished: at -j 1 fisher's second split ran after its worker died three times
    files = _task_files(out)
    assert len(files) == 2 and all("__fisher__" in name for name in files)
    assert "runs.csv.gz" in result.stdout
    # and the rerun retries the failed tasks (without the fault, they succeed)
    (tmp_path / "FAULT").unlink()
    rerun = _fsbench("run", str(config), "--out", str(out), "-j", str(n_jobs), "-q")
    assert rerun.returncode == 0, rerun.stderr
    assert "10 tasks (2 resumed)" in rerun.stdout
    assert len(_task_files(out)) == 10 and not (out / "failures.csv").exists()


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def test_rows_equal_the_in_process_computation_at_any_n_jobs(tmp_path, digits):
    experiment = parse_experiment(
        "name: same\nseed: 3\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 3}\n"
        "inner_cv: {n_splits: 3}\nselectors: [fisher, relieff, random]\nclassifier: {name: linear_svm, C: [0.1, 1]}\n"
        "n_features: [4, 16]\n", "same.yaml", dataset_resolver=lambda n: _Spec("digits", 64))
    X, y = digits["digits"].X, digits["digits"].y
    # the reference: every task computed here, in this process, without workers or a results folder
    expected = [row for task in plan(experiment, digits) for row in compute_task(experiment, task, X, y, None).rows]
    keep = ["dataset", "repeat", "fold", "selector", "k", "accuracy", "C", "inner_accuracy", "seed", "split_seed"]
    reference = pd.DataFrame(expected)[keep].sort_values(keep[:5]).reset_index(drop=True)
    for n_jobs in (1, 2, 3):
        runs = run_experiment(experiment, tmp_path / str(n_jobs), data=digits, n_jobs=n_jobs).runs
        got = runs[keep].sort_values(keep[:5]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, reference, check_dtype=False)


# ----------------------------------------------------------------------------- killed runs
def _descendants(pid: int) -> set[int]:
    """Every live descendant of ``pid``, from /proc (independent of fsbench)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        children = {child for child, parent in parents.items() if parent in frontier} - found
        found |= children
        frontier = children
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie, which init has not reaped yet, runs no code)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


def test_after_kill_9_no_worker_outlives_the_run_by_5_s_and_the_folder_stays_still(tmp_path):
    # 8 tasks of ~2 s: the run is killed while both workers hold a task
    config = _setup(tmp_path, "sleep", n_trials=4, seconds=2.0)
    out = tmp_path / "out"
    workers: set[int] = set()
    proc = subprocess.Popen([sys.executable, "-m", "fsbench.cli", "run", str(config), "--out", str(out), "-j", "2",
                             "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "MPLBACKEND": "Agg"})
    try:
        deadline = time.monotonic() + 120
        while not (out / "tasks").is_dir() or len(_task_files(out)) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it was killed"
            time.sleep(0.05)
        workers |= _descendants(proc.pid)
        assert len(workers) >= 2
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        proc.wait()
        while any(_alive(pid) for pid in workers) and time.monotonic() - killed < 5.0:
            time.sleep(0.02)
        survivors = [pid for pid in workers if _alive(pid)]
        assert not survivors, f"worker processes alive 5 s after their run was killed: {survivors}"
        before = _snapshot(out)
        time.sleep(4.0)  # a worker that lived on would finish its 2 s task by now and write it
        assert _snapshot(out) == before
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in workers | _descendants(proc.pid):  # the pids of this test's processes only
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


# ----------------------------------------------------------------------------- hung tasks
def test_a_hung_task_is_named_with_its_running_time_and_an_interrupt_stops_it(tmp_path, digits, monkeypatch):
    _setup(tmp_path, "sleep", seconds=3600)  # hangs: no timeout
    monkeypatch.syspath_prepend(str(tmp_path))
    experiment = parse_experiment(
        "name: hang\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 1}\n"
        "selectors:\n  - fisher\n  - {name: faulty, class: 'faulty_plugin:Faulty', params: {how: sleep, "
        "seconds: 3600}}\nclassifier: {name: linear_svm, C: 1}\nn_features: [4]\n",
        str(tmp_path / "hang.yaml"), dataset_resolver=lambda n: _Spec("digits", 64))
    seen: list[list[tuple[str, float]]] = []
    workers: set[int] = set()
    others = _descendants(os.getpid())  # earlier tests' processes (joblib's idle workers) are not the run's

    def running(tasks):
        seen.append(tasks)
        workers.update(_descendants(os.getpid()) - others)
        if tasks[0][1] >= 2.5:
            raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_experiment(experiment, tmp_path / "out", data=digits, n_jobs=2, on_running=running)
    assert time.monotonic() - started < 60
    assert seen[-1][0][0] == "digits r0 f0 faulty"
    seconds = [tasks[0][1] for tasks in seen if tasks[0][0] == "digits r0 f0 faulty"]
    assert seconds == sorted(seconds) and seconds[-1] >= 2.5 and len(seconds) >= 2
    # the worker holding the hung task was stopped with the run
    assert workers and not any(_alive(pid) for pid in workers)
    assert all("__fisher__" in name for name in _task_files(tmp_path / "out"))


def test_off_a_terminal_a_silent_run_prints_a_line_naming_its_running_tasks():
    stream = io.StringIO()
    progress = Progress("glioma", "results/glioma", stream=stream, every=60.0)
    progress.start(10, 10)
    for _ in range(3):
        progress.done("t")
    stream.truncate(0), stream.seek(0)
    progress.running([("glioma r0 f4 myplugin", 95.4)])  # a line was printed just now: quiet
    assert stream.getvalue() == ""
    progress.every = 0.0
    progress.running([("glioma r0 f4 myplugin", 95.4), ("glioma r0 f5 fisher", 2.0)])
    assert stream.getvalue() == "glioma: 3/10 tasks; running 95 s: glioma r0 f4 myplugin, 2 s: glioma r0 f5 fisher\n"


def test_the_run_command_names_a_slow_task_and_keeps_its_counted_lines(tmp_path, monkeypatch):
    import fsbench.engine.console

    monkeypatch.setattr(fsbench.engine.console, "PROGRESS_EVERY", 1.0)
    config = _setup(tmp_path, "sleep", n_trials=1, seconds=4.0)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out"), "-j", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(re.fullmatch(r"faults: 1/2 tasks; running [2-9] s: digits r0 f0 faulty", line) for line in lines), lines
    assert any(re.fullmatch(r"faults: 2/2 tasks \(\d+ s\)", line) for line in lines), lines


def test_a_worker_writes_nothing_its_cache_entries_come_back_with_its_result(tmp_path, digits):
    """compute_task (what a worker runs) leaves the rankings cache untouched and returns the entries
    its fits computed; save_outcome, in the process holding the lock, writes them, and a later fit
    of the same inputs is served from them."""
    from fsbench.engine.runner import save_outcome
    from fsbench.storage.ranking_cache import load_ranking

    experiment = parse_experiment(
        "name: w\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 1}\n"
        "selectors: [{name: rfs, grid: {gamma: [0.1, 1]}}]\ninner_cv: {n_splits: 2}\n"
        "classifier: {name: linear_svm, C: 1}\nn_features: [4]\n", "w.yaml",
        dataset_resolver=lambda name: _Spec("digits", 64))
    X, y = digits["digits"].X, digits["digits"].y
    task = plan(experiment, digits)[0]
    cache = tmp_path / "cache"
    outcome = compute_task(experiment, task, X, y, cache)
    assert outcome.failure is None
    assert not cache.exists() or not any(p.is_file() for p in cache.rglob("*"))
    assert len(outcome.cache_entries) == 2 * 2 + 1  # two grid points x two inner folds, and the final fit
    save_outcome(tmp_path, outcome)
    assert sum(p.is_file() for p in cache.rglob("*")) >= len(outcome.cache_entries)
    cached_key, ranking = outcome.cache_entries[-1][1], outcome.cache_entries[-1][2]
    hit = load_ranking(cache, cached_key)
    assert hit is not None and np.array_equal(hit["ranking"], ranking)


def test_reproduce_names_a_slow_task(tmp_path, monkeypatch):
    """fsbench reproduce prints its tasks as they finish; a task that runs on silently is named with
    its running time, as fsbench run names it."""
    import fsbench.engine.console

    monkeypatch.setattr(fsbench.engine.console, "PROGRESS_EVERY", 1.0)
    config = _setup(tmp_path, "sleep", n_trials=1, seconds=4.0)
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "rfs.yaml").write_text(config.read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(main, ["reproduce", "rfs", "--no-variants", "-j", "1", "--configs", str(papers),
                                       "--results", str(tmp_path / "results")])
    lines = result.output.splitlines()
    assert any(re.fullmatch(r"  running [2-9] s: digits r0 f0 faulty", line) for line in lines), lines


# ----------------------------------------------------------------------------- results that cannot cross
class _NeedsTwo(BaseException):
    """A plugin's exception class whose __init__ requires two arguments: it pickles, but the
    unpickling (which calls the class with its args) fails."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _Unloadable:
    """Pickles, but cannot be unpickled in the parent."""

    def __reduce__(self):
        return (_refuse, ())


def _refuse():
    raise ValueError("cannot be rebuilt")


def _misbehaving(job):
    if job == 1:
        return lambda: None  # does not pickle
    if job == 2:
        raise _NeedsTwo(7, "custom stop")  # a BaseException, not an Exception: compute_task lets it through
    if job == 3:
        return _Unloadable()
    if job == 4:
        return b"x" * (64 << 20)  # far beyond a pipe's buffer
    return job * 10


def test_a_job_whose_result_or_exception_cannot_cross_fails_alone():
    from fsbench.engine.workers import Ended, run_jobs

    results = dict(run_jobs(_misbehaving, range(6), 2))
    assert sorted(results) == list(range(6))
    assert [results[job] for job in (0, 5)] == [0, 50] and results[4] == b"x" * (64 << 20)
    reasons = {job: results[job].reason for job in (1, 2, 3) if isinstance(results[job], Ended)}
    assert set(reasons) == {1, 2, 3}, results
    assert reasons[1].startswith("could not return its result (") and "pickle" in reasons[1].lower()
    assert reasons[2] == "raised _NeedsTwo: custom stop"
    assert reasons[3] == "could not return its result (ValueError: cannot be rebuilt)"


def test_a_stopped_run_stops_its_workers_even_while_its_exception_lives(tmp_path, digits):
    """An exception raised by the runner between two results (on_task_done here; a full disk
    in save_outcome) stops the workers at once, not when the exception's traceback, which
    holds the runner's frame and so the worker pool, is freed."""
    experiment = parse_experiment(
        "name: stop\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 4}\n"
        "selectors: [fisher, relieff]\nclassifier: {name: linear_svm, C: 1}\nn_features: [4]\n",
        "stop.yaml", dataset_resolver=lambda n: _Spec("digits", 64))
    others = _descendants(os.getpid())
    workers: set[int] = set()

    def stop(task_id):
        workers.update(_descendants(os.getpid()) - others)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        run_experiment(experiment, tmp_path / "out", data=digits, n_jobs=2, on_task_done=stop)
    assert caught.value is not None and workers
    assert not any(_alive(pid) for pid in workers)


def test_a_plugins_exceptions_that_do_not_pickle_or_print_fail_their_task_only(tmp_path, digits, monkeypatch):
    """A user's exception class whose __init__ needs two arguments (an Exception, or a BaseException
    the task's code does not catch) or whose str() raises: each fails its own task, named, and the
    run goes on."""
    _setup(tmp_path, "none")
    monkeypatch.syspath_prepend(str(tmp_path))
    hows = ["needs_two", "base_needs_two", "bad_str"]
    selectors = "".join(f"  - {{name: faulty, label: {how}, class: 'faulty_plugin:Faulty', params: {{how: {how}}}}}\n"
                        for how in hows)
    experiment = parse_experiment(
        "name: exc\nseed: 0\ndatasets: [digits]\nprotocol: {kind: holdout, train_size: 0.5, n_trials: 1}\n"
        f"selectors:\n  - fisher\n{selectors}classifier: {{name: linear_svm, C: 1}}\nn_features: [4]\n",
        str(tmp_path / "exc.yaml"), dataset_resolver=lambda n: _Spec("digits", 64))
    result = run_experiment(experiment, tmp_path / "out", data=digits, n_jobs=1)
    assert sorted((f["selector"], f["error"]) for f in result.failed) == [
        ("bad_str", "BadStr"),
        ("base_needs_two", "the process running selector base_needs_two raised BaseNeedsTwo: custom stop"),
        ("needs_two", "NeedsTwo: custom failure")]
    assert _task_files(tmp_path / "out") == [name for name in _task_files(tmp_path / "out") if "__fisher__" in name]
    assert len(_task_files(tmp_path / "out")) == 1
