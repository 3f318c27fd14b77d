"""Results that cannot be silently wrong: every place that writes, restores or resumes rows, tested
at its faults (colliding names, another configuration's rows, two processes, changed code, damaged
files, a full disk)."""

from __future__ import annotations

import contextlib
import errno
import gzip
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

import fsbench.engine.runner as runner_module
from fsbench.configuration.parse import parse_experiment
from fsbench.engine.runner import run_experiment
from fsbench.errors import FsbenchError
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import TASKS_DIR, finished_tasks

TIMING = ["fit_seconds", "task_seconds", "rows_digest"]  # the digest covers the timings
KEY = ["dataset", "repeat", "fold", "selector", "k"]


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment(selectors: str = "[fisher, fstat]", seed: int = 0, datasets: str = "[digits]", trials: int = 2):
    text = f"""
name: unit
seed: {seed}
datasets: {datasets}
protocol: {{kind: holdout, train_size: 0.5, n_trials: {trials}}}
selectors: {selectors}
classifier: {{name: linear_svm, C: 1}}
n_features: [4, 16]
"""
    return parse_experiment(text, "unit.yaml", dataset_resolver=lambda n: _Spec(n, 64))


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    keep = np.arange(0, X.shape[0], 4)
    return {"digits": types.SimpleNamespace(X=X[keep].astype(float), y=y[keep])}


def _rows(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=TIMING).sort_values(KEY).reset_index(drop=True)


# ----------------------------------------------------------------------------- 1. task ids
def test_labels_that_differ_only_in_unsafe_characters_keep_their_own_rows(tmp_path, digits):
    exp = _experiment("[{name: fisher, label: x/y}, {name: fstat, label: x_y}, {name: random, label: X_Y}]")
    runs = run_experiment(exp, tmp_path, data=digits, n_jobs=1).runs
    # independent count: 3 labels x 2 trials x 2 k, each label with the method it was given
    assert len(runs) == 3 * 2 * 2
    assert runs.groupby("selector")["method"].agg(set).to_dict() == {
        "x/y": {"fisher"}, "x_y": {"fstat"}, "X_Y": {"random"}}
    assert len(finished_tasks(tmp_path)) == 3 * 2
    # file names differ even ignoring case (case-insensitive file systems)
    assert len({p.name.lower() for p in (tmp_path / TASKS_DIR).iterdir()}) == 6


# ----------------------------------------------------------------------------- 2. another configuration
def test_runs_file_of_another_seed_is_never_resumed(tmp_path, digits):
    run_experiment(_experiment(seed=0), tmp_path, data=digits, n_jobs=1)
    # the state the README calls resumable: runs.csv.gz alone
    for path in (tmp_path / TASKS_DIR).iterdir():
        path.unlink()
    (tmp_path / "config.yaml").unlink()
    before = (tmp_path / RUNS_FILE).read_bytes()
    with pytest.raises(FsbenchError, match="different configuration"):
        run_experiment(_experiment(seed=1), tmp_path, data=digits, n_jobs=1)
    assert (tmp_path / RUNS_FILE).read_bytes() == before
    assert not (tmp_path / "config.yaml").exists() and not finished_tasks(tmp_path)
    # the configuration that wrote them resumes from them, without recomputing
    resumed = run_experiment(_experiment(seed=0), tmp_path, data=digits, n_jobs=1)
    assert resumed.n_resumed == resumed.n_tasks == 4


def test_a_row_whose_seed_is_not_this_configurations_stops_the_run(tmp_path, digits):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    path = sorted((tmp_path / TASKS_DIR).iterdir())[0]
    doc = json.loads(path.read_text())
    doc["rows"][0]["seed"] += 1
    path.write_text(json.dumps(doc))
    with pytest.raises(FsbenchError, match="another configuration.*seed"):
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert json.loads(path.read_text()) == doc  # nothing changed


def test_rows_of_a_missing_k_are_not_resumed(tmp_path, digits):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    path = sorted((tmp_path / TASKS_DIR).iterdir())[0]
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "rows": doc["rows"][:1]}))
    with pytest.raises(FsbenchError, match="another configuration.*k ="):
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)


def test_config_file_of_a_run_that_wrote_nothing_does_not_block_the_next(tmp_path, digits):
    run_experiment(_experiment(seed=3), tmp_path, data=digits, n_jobs=1)
    for path in (tmp_path / TASKS_DIR).iterdir():
        path.unlink()
    (tmp_path / RUNS_FILE).unlink()  # config.yaml of seed 3 remains, with no results
    result = run_experiment(_experiment(seed=0), tmp_path, data=digits, n_jobs=1)
    assert result.n_resumed == 0 and len(result.runs) == 8


def test_rows_of_a_dataset_left_out_this_time_are_kept(tmp_path, digits, monkeypatch):
    both = {**digits, "other": digits["digits"]}
    exp = _experiment(datasets="[digits, other]")
    first = run_experiment(exp, tmp_path, data=both, n_jobs=1).runs
    for path in (tmp_path / TASKS_DIR).iterdir():
        path.unlink()  # runs.csv.gz alone, as committed
    import fsbench.datasets as datasets_module

    monkeypatch.setattr(datasets_module, "locate", lambda name, data_dir=None: None)
    again = run_experiment(exp, tmp_path, data=digits, n_jobs=1, skip_missing=True)
    assert again.skipped == ("other",)
    pd.testing.assert_frame_equal(_rows(again.runs), _rows(first), check_dtype=False)


# ----------------------------------------------------------------------------- 3. two processes
@contextlib.contextmanager
def _lock_held_by_another_process(folder):
    """Another process holds the folder's lock until it is killed (SIGKILL) on leaving."""
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import time
            from pathlib import Path
            from fsbench.storage.lock import locked
            with locked(Path({str(folder)!r})):
                print("locked", flush=True)
                time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.kill()
        holder.wait()


def test_a_second_run_into_a_locked_folder_refuses_and_the_lock_dies_with_its_process(tmp_path, digits):
    with _lock_held_by_another_process(tmp_path):
        with pytest.raises(FsbenchError, match="Another fsbench process is writing to"):
            run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
        assert not (tmp_path / "config.yaml").exists()
    # the holder was killed (SIGKILL: no clean-up ran); the OS released the lock
    assert len(run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs) == 8


def test_two_runs_started_together_never_mix_their_rows(tmp_path):
    out = tmp_path / "out"
    procs = []
    for seed in (0, 1):
        path = tmp_path / f"c{seed}.yaml"
        path.write_text(textwrap.dedent(f"""
            name: two
            seed: {seed}
            datasets: [digits]
            protocol: {{kind: holdout, train_size: 0.5, n_trials: 2}}
            selectors: [fisher]
            classifier: {{name: linear_svm, C: 1}}
            n_features: [4, 8]
        """))
        procs.append(subprocess.Popen([sys.executable, "-m", "fsbench.cli", "run", str(path), "--out", str(out),
                                       "-q", "-j", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert sorted(code for code, _ in outcomes) == [0, 2]
    refused = next(err for code, err in outcomes if code == 2)
    # overlapping, the second meets the lock; otherwise the first one's configuration
    assert "Another fsbench process is writing to" in refused or "different configuration" in refused
    assert "Traceback" not in refused and len(refused.strip().splitlines()) == 1
    runs = load_runs(out)
    assert runs["fingerprint"].nunique() == 1 and runs["seed"].nunique() == 2  # one run's 2 trials


# ----------------------------------------------------------------------------- 4. code identity
def test_rows_record_the_code_that_computed_them_and_other_code_is_not_resumed(tmp_path, digits, monkeypatch):
    first = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs
    from fsbench.evaluation import protocol_code
    from fsbench.selectors import selector_code

    assert set(first["code"]) == {selector_code("fisher"), selector_code("fstat")}
    assert selector_code("fisher") != selector_code("fstat")
    assert set(first["protocol_code"]) == {protocol_code()}
    import fsbench.engine.fitting as fitting_module

    real = fitting_module.selector_code
    monkeypatch.setattr(fitting_module, "selector_code", lambda name: "edited" if name == "fstat" else real(name))
    before = (tmp_path / RUNS_FILE).read_bytes()
    with pytest.raises(FsbenchError, match=r"other code.*fstat: 2 tasks.*--recompute-stale"):
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert (tmp_path / RUNS_FILE).read_bytes() == before
    again = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1, recompute_stale=True)
    assert again.n_resumed == 2  # fisher's two tasks; fstat's recomputed
    assert set(again.runs.loc[again.runs.selector == "fstat", "code"]) == {"edited"}
    assert any("computed by other code are recomputed" in n for n in again.notes)


def test_rows_of_another_protocol_version_are_kept_with_a_note_or_recomputed(tmp_path, digits, monkeypatch):
    first = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs
    import fsbench.engine.resume as resume_module

    for module in (runner_module, resume_module):  # rows record it; resuming compares it
        monkeypatch.setattr(module, "protocol_code", lambda sparse=False: "next release")
    kept = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert kept.n_resumed == 4 and set(kept.runs["protocol_code"]) == set(first["protocol_code"])
    assert any("another version of the evaluation protocol" in n and "fisher: 2" in n for n in kept.notes)
    again = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1, recompute_stale=True)
    assert again.n_resumed == 0 and set(again.runs["protocol_code"]) == {"next release"}


def test_rows_without_a_code_identity_are_kept_with_a_note(tmp_path, digits):
    first = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs
    legacy = first.drop(columns=["code", "protocol_code", "rows_digest"])  # rows that old also predate digests
    (tmp_path / RUNS_FILE).write_bytes(gzip.compress(legacy.to_csv(index=False).encode()))
    for path in (tmp_path / TASKS_DIR).iterdir():
        path.unlink()
    again = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert again.n_resumed == 4
    assert any("before fsbench recorded the code" in n and "fisher: 2" in n for n in again.notes)


def test_code_identity_follows_code_not_documentation(tmp_path, monkeypatch):
    from fsbench.code_identity import module_digest

    package = tmp_path / "fakepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text('"""Helper."""\n\ndef scale(x):\n    return 2 * x\n')
    (package / "sel.py").write_text('"""A selector."""\nfrom fakepkg.helper import scale\n\n'
                                    'def fit(x):\n    """Fit."""\n    return scale(x)\n')
    monkeypatch.syspath_prepend(str(tmp_path))

    def digest():
        module_digest.cache_clear()
        return module_digest("fakepkg.sel", ("fakepkg.",))

    base = digest()
    (package / "sel.py").write_text('"""A selector, better documented."""\n# a comment\n'
                                    'from fakepkg.helper import scale\n\n\ndef fit(x):\n    """Fit it."""\n'
                                    '    return scale(x)\n')
    assert digest() == base
    (package / "helper.py").write_text('"""Helper."""\n\ndef scale(x):\n    return 3 * x\n')
    assert digest() != base  # a change in an imported helper is a change of the selector's code
    module_digest.cache_clear()


# ----------------------------------------------------------------------------- damaged files
def test_a_damaged_task_file_is_recomputed_and_said(tmp_path, digits):
    full = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1).runs
    files = sorted((tmp_path / TASKS_DIR).iterdir())
    files[0].write_text(files[0].read_text()[:40])  # cut short
    files[1].write_text("")  # emptied
    notes = []
    again = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1, on_note=notes.append)
    assert again.n_resumed == 2
    assert any("2 damaged task files" in n for n in notes)
    pd.testing.assert_frame_equal(_rows(again.runs), _rows(full))


@pytest.mark.parametrize("damage", ["random", "truncated"])
def test_a_damaged_runs_file_stops_a_resuming_run_and_is_kept(tmp_path, digits, damage):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    path = tmp_path / RUNS_FILE
    data = path.read_bytes()
    path.write_bytes(np.random.default_rng(0).bytes(500) if damage == "random" else data[: len(data) // 2])
    damaged = path.read_bytes()
    for task in (tmp_path / TASKS_DIR).iterdir():
        task.unlink()
    with pytest.raises(FsbenchError, match="is damaged"):
        load_runs(tmp_path)
    with pytest.raises(FsbenchError, match="is damaged"):
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert path.read_bytes() == damaged


def test_temporary_files_of_a_killed_run_are_removed(tmp_path, digits):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    left = [tmp_path / ".runs.csv.gz.abc.tmp", tmp_path / TASKS_DIR / ".x.json.def.tmp"]
    for path in left:
        path.write_bytes(b"partial")
    result = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert not any(p.exists() for p in left)
    assert any("removed 2 temporary files" in n for n in result.notes)


# ----------------------------------------------------------------------------- the disk and the folder
def test_a_full_disk_stops_the_run_keeping_every_finished_task(tmp_path, digits, monkeypatch):
    written = []
    real = runner_module.write_task

    def fill_up(out_dir, task_id, rows, ranking=None):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out_dir / "tasks" / task_id))
        real(out_dir, task_id, rows, ranking)
        written.append(task_id)

    monkeypatch.setattr(runner_module, "write_task", fill_up)
    with pytest.raises(FsbenchError, match="disk is full.*every finished task is kept"):
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert finished_tasks(tmp_path) == set(written)
    monkeypatch.setattr(runner_module, "write_task", real)
    resumed = run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    assert resumed.n_resumed == 2 and len(resumed.runs) == 8
    log = [json.loads(line) for line in (tmp_path / "runlog.jsonl").read_text().splitlines()]
    assert log and all(entry["versions"]["numpy"] == np.__version__ for entry in log)


def test_an_out_folder_under_a_file_is_refused_before_anything(tmp_path, digits):
    (tmp_path / "file").write_text("x")
    with pytest.raises(FsbenchError, match="is a file"):
        run_experiment(_experiment(), tmp_path / "file" / "out", data=digits, n_jobs=1)
    with pytest.raises(FsbenchError, match="is a file"):
        run_experiment(_experiment(), tmp_path / "file", data=digits, n_jobs=1)


def test_a_folder_without_write_permission_is_refused(tmp_path, digits, monkeypatch):
    import fsbench.storage.lock as store_module

    monkeypatch.setattr(store_module.os, "access", lambda path, mode: False)  # root ignores chmod
    with pytest.raises(FsbenchError, match="permission denied"):
        run_experiment(_experiment(), tmp_path / "out", data=digits, n_jobs=1)
    assert not (tmp_path / "out").exists()


def test_result_files_follow_the_umask(tmp_path, digits):
    old = os.umask(0o022)
    try:
        run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    finally:
        os.umask(old)
    for path in [tmp_path / RUNS_FILE, tmp_path / "config.yaml", *(tmp_path / TASKS_DIR).iterdir()]:
        assert path.stat().st_mode & 0o777 == 0o644, path


# ----------------------------------------------------------------------------- the plan and the data
def test_an_absurd_number_of_trials_fails_at_once(tmp_path, digits):
    exp = _experiment().with_overrides(protocol=_experiment().protocol.__class__(n_trials=100_000_000))
    started = time.perf_counter()
    with pytest.raises(FsbenchError, match="at most 10000"):
        run_experiment(exp, tmp_path / "out", data=digits, n_jobs=1)
    assert time.perf_counter() - started < 5 and not (tmp_path / "out").exists()


def test_all_constant_features_are_refused_and_some_are_fine(tmp_path, digits):
    X = digits["digits"].X
    flat = {"digits": types.SimpleNamespace(X=np.tile(X[:1], (X.shape[0], 1)), y=digits["digits"].y)}
    with pytest.raises(FsbenchError, match="Every feature of dataset 'digits' is constant"):
        run_experiment(_experiment(), tmp_path / "flat", data=flat, n_jobs=1)
    assert not (tmp_path / "flat").exists()
    assert (X.max(axis=0) == X.min(axis=0)).any()  # digits has blank border pixels: no fuss
    result = run_experiment(_experiment(), tmp_path / "ok", data=digits, n_jobs=1)
    assert len(result.runs) == 8 and not result.notes


@pytest.mark.parametrize("n_jobs", [0, -2, -5])
def test_n_jobs_must_be_positive_or_minus_one(tmp_path, digits, n_jobs):
    with pytest.raises(FsbenchError, match="-1 for all cores"):
        run_experiment(_experiment(), tmp_path / "out", data=digits, n_jobs=n_jobs)
    assert not (tmp_path / "out").exists()


def test_sigterm_stops_the_run_like_ctrl_c_and_leaves_no_worker(tmp_path):
    config = tmp_path / "slow.yaml"
    config.write_text(textwrap.dedent("""
        name: slow
        datasets: [digits]
        protocol: {kind: holdout, train_size: 0.5, n_trials: 40}
        selectors: [relieff, fisher]
        classifier: {name: linear_svm, C: [0.01, 0.1, 1, 10]}
        n_features: {start: 4, stop: 64, step: 4}
    """))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "fsbench.cli", "run", str(config), "--out", str(out), "-j", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(finished_tasks(out)) < 2:
        time.sleep(0.2)
    workers = _descendants(proc.pid)
    assert workers, "the run started no worker process"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "finished tasks are saved" in err and "Traceback" not in err
    time.sleep(2)
    alive = [pid for pid in workers if _alive(pid)]
    assert not alive, f"workers still alive after SIGTERM: {alive}"
    assert len(finished_tasks(out)) >= 2


def _descendants(pid: int) -> list[int]:
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_discard_refuses_a_folder_another_process_writes(tmp_path, digits):
    run_experiment(_experiment(), tmp_path, data=digits, n_jobs=1)
    before = (tmp_path / RUNS_FILE).read_bytes()
    with _lock_held_by_another_process(tmp_path):
        with pytest.raises(FsbenchError, match="Another fsbench process is writing to"):
            runner_module.discard_tasks(tmp_path, ["fisher"])
    assert (tmp_path / RUNS_FILE).read_bytes() == before
    assert runner_module.discard_tasks(tmp_path, ["fisher"]) == (2, 4)


def test_protocol_code_covers_the_exact_libsvm_route():
    # the evaluation of linear_svm runs in fsbench.evaluation.linear_libsvm: an edit there must mark rows as
    # computed by another protocol, as an edit of fsbench.evaluation.protocol does
    from fsbench.code_identity import MappedSources, scope_digest
    from fsbench.evaluation import PROTOCOL_SCOPE, protocol_code

    EVALUATION = ["fsbench.evaluation.protocol", "fsbench.evaluation.classifiers", "fsbench.evaluation.linear_libsvm",
                  "fsbench.evaluation.linear_liblinear"]

    def texts(edit=None):
        out = {}
        for name in ("fsbench", "fsbench.evaluation", *EVALUATION, "fsbench.fixed_order"):
            spec = importlib.util.find_spec(name)
            out[name] = Path(spec.origin).read_text(encoding="utf-8")
        if edit:
            out[edit] += "\nEDITED = 1\n"
        return out

    protocol = "fsbench.evaluation.protocol"
    assert scope_digest(protocol, scope=PROTOCOL_SCOPE, sources=MappedSources(texts())) == protocol_code()
    for module in [*EVALUATION[1:], "fsbench.fixed_order"]:
        edited = MappedSources(texts(module))
        assert scope_digest(protocol, scope=PROTOCOL_SCOPE, sources=edited) != protocol_code(), module
