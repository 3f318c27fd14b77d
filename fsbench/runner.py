"""Experiment -> independent tasks -> joblib; rankings cached; every finished task saved.

A task is one (dataset, repeat, fold, selector). Its seed derives from the config seed and
its identity only, so the rows do not depend on n_jobs or on the order tasks finish in; a
killed run loses only the tasks in flight, and running it again resumes.

Resuming never trusts a row it did not check: every row found in the folder (a task file, or
runs.csv.gz from which task files are restored) must carry this configuration's fingerprint,
the seeds this configuration gives its task, and every k; a row of another configuration
stops the run (nothing is changed). Every row records the code that computed it: ``code``, the
selector's (:func:`fsbench.selectors.selector_code`), and ``protocol_code``, the evaluation
protocol's. Rows of another selector code stop the run, naming the selectors, unless
``recompute_stale`` is given, which recomputes them; rows written before fsbench recorded code
are kept, with a note. Rows evaluated by another version of the protocol are kept with a note
naming them (``recompute_stale`` recomputes them too): the protocol changes with fsbench
releases, which are meant to keep every row (``fsbench check`` verifies that on the papers'
results), while a selector's code is what a researcher edits between two runs. A damaged task
file is recomputed, with a note.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib
import inspect
import json
import os
import shutil
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from fsbench import __version__
from fsbench.config import Experiment, SelectorConfig
from fsbench.errors import FsbenchError
from fsbench.protocol import (
    Split,
    check_inner_cv,
    derive_seed,
    evaluate_classifiers,
    evaluate_ranking,
    outer_splits,
    standardize,
    tune_selector,
)
from fsbench.selectors import get_selector, protocol_code, selector_code
from fsbench.store import (
    CONFIG_FILE,
    RANKINGS_DIR,
    RUNS_FILE,
    TASKS_DIR,
    DamagedTaskFile,
    check_writable_folder,
    clear_failure,
    describe_os_error,
    finished_tasks,
    load_ranking,
    load_runs,
    locked,
    log_run,
    planned_datasets,
    planned_selectors,
    read_failures,
    read_fingerprint,
    read_task,
    read_tasks,
    remove_temporary_files,
    save_ranking,
    task_path,
    write_config,
    write_failure,
    write_failures,
    write_runs,
    write_task,
)

#: the most outer splits a dataset may have (protocol.n_trials, n_splits x n_repeats): a plan is
#: materialized before anything runs, so an absurd count must fail at once rather than hang
MAX_SPLITS = 10_000


@dataclass(frozen=True)
class Task:
    dataset: str
    split: Split
    selector: SelectorConfig

    @property
    def id(self) -> str:
        """The task's file name: readable, and distinct for distinct tasks.

        Dataset and label are shortened to safe characters for reading; the hash of the exact
        (dataset, repeat, fold, label) keeps ids of labels like ``x/y`` and ``x_y`` (or ``A`` and
        ``a`` on a case-insensitive file system) apart.
        """
        exact = json.dumps([self.dataset, self.split.repeat, self.split.fold, self.selector.label])
        digest = hashlib.sha256(exact.encode()).hexdigest()[:12]
        return (f"{_readable(self.dataset)}__r{self.split.repeat:03d}f{self.split.fold:02d}__"
                f"{_readable(self.selector.label)}__{digest}")


def _readable(text: str) -> str:
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-.") else "_" for ch in text)[:48]


def selection_seed(experiment: Experiment, task: Task) -> int:
    """The seed of a task's selector fit (recorded as the row's ``seed``)."""
    if experiment.protocol.select_on == "all":
        return derive_seed(experiment.seed, "task", task.dataset, "all", task.selector.label)
    return derive_seed(experiment.seed, "task", task.dataset, task.split.repeat, task.split.fold,
                       task.selector.label)


@dataclass(frozen=True)
class RunResult:
    runs: pd.DataFrame
    out_dir: Path
    n_tasks: int
    n_resumed: int
    seconds: float
    skipped: tuple[str, ...] = ()  # datasets without files, left out under skip_missing
    notes: tuple[str, ...] = ()  # what the run noticed and did (damaged task files recomputed, ...)
    failed: tuple[dict[str, Any], ...] = ()  # tasks whose selector raised or timed out (failures.csv)


def plan(experiment: Experiment, data: dict[str, Any]) -> list[Task]:
    """Every task of the experiment, after checking the data fits the protocol.

    ``data`` maps dataset name -> an object with ``X`` and ``y``. Raises FsbenchError (before
    anything runs) when a k exceeds a dataset's features or a class is too small for the splits.
    """
    tasks = []
    needs_inner = any(c.tuned for c in experiment.classifier_specs) or any(s.grid for s in experiment.selectors)
    if experiment.protocol.n_outer > MAX_SPLITS:
        raise FsbenchError(f"The protocol asks for {experiment.protocol.n_outer} outer splits per dataset; "
                           f"fsbench plans at most {MAX_SPLITS}: lower protocol.n_trials or n_repeats.")
    for name in (n for n in experiment.datasets if n in data):
        X, y = data[name].X, data[name].y
        if max(experiment.n_features) > X.shape[1]:
            raise FsbenchError(
                f"k = {max(experiment.n_features)} exceeds the {X.shape[1]} features of dataset "
                f"{name!r}; lower n_features."
            )
        splits = outer_splits(y, experiment.protocol, experiment.seed, name)
        if needs_inner:
            for split in splits:
                check_inner_cv(y[split.train], experiment.inner_cv, name)
        tasks += [Task(name, split, sel) for split in splits for sel in experiment.selectors]
    return tasks


def run_experiment(
    experiment: Experiment,
    out_dir: str | Path,
    *,
    data: dict[str, Any] | None = None,
    data_dir: str | Path | None = None,
    n_jobs: int | None = None,
    force: bool = False,
    skip_missing: bool = False,
    recompute_stale: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_task_done: Callable[[str], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RunResult:
    """Run (or resume) an experiment and write its results to ``out_dir``.

    ``data`` may hold already loaded datasets; missing ones are loaded with
    :func:`fsbench.datasets.load`. With ``skip_missing``, datasets whose files are not found
    are left out (and listed in the result and in config.yaml) instead of stopping the run.
    ``on_start(n_pending, n_total)`` and ``on_task_done(task_id)`` report progress, ``on_note``
    what the run noticed (also in the result's ``notes``). Everything is validated before the
    first file is written; the folder is locked while the run writes it.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    n_jobs = experiment.n_jobs if n_jobs is None else n_jobs
    if n_jobs == 0 or n_jobs < -1:
        raise FsbenchError(f"n_jobs = {n_jobs}: give a positive number of workers or -1 for all cores.")
    check_writable_folder(out_dir)
    data = dict(data or {})
    skipped = []
    for name in experiment.datasets:
        if name not in data and (data_file := experiment.data_file(name)) is not None:
            data[name] = _read_data_file(data_file)
        if name not in data:
            from fsbench.datasets import load, locate

            if skip_missing and locate(name, data_dir) is None:
                skipped.append(name)
                continue
            data[name] = load(name, data_dir)
    if len(skipped) == len(experiment.datasets):
        raise FsbenchError(f"None of the datasets {', '.join(skipped)} was found; fetch them with "
                           "'fsbench datasets fetch NAME' or set FSBENCH_DATA.")
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        if on_note:
            on_note(text)

    for name in experiment.datasets:
        if name in data:
            _refuse_constant_data(name, data[name].X)
    tasks = plan(experiment, data)
    fingerprint = experiment.fingerprint()

    with locked(out_dir):
        try:
            removed = remove_temporary_files(out_dir)
            if removed:
                note(f"removed {removed} temporary files a killed run left in {out_dir}")
            if force:
                for sub in (TASKS_DIR, "cache"):
                    shutil.rmtree(out_dir / sub, ignore_errors=True)
                for name in (RUNS_FILE, CONFIG_FILE):
                    (out_dir / name).unlink(missing_ok=True)
            _check_folder_configuration(out_dir, fingerprint)
            found = _existing_rows(out_dir, tasks, fingerprint)
            audit = _audit(experiment, tasks, found, out_dir, recompute_stale)
            if audit.stale and not recompute_stale:
                raise FsbenchError(_stale_message(out_dir, audit.stale))
            # every check passed: from here on the folder is changed
            write_config(out_dir, {**experiment.to_dict(), "skipped_datasets": skipped}, fingerprint)
            for task_id in audit.damaged:
                task_path(out_dir, task_id).unlink(missing_ok=True)
            if audit.damaged:
                note(f"{len(audit.damaged)} damaged task files (cut short or emptied) are recomputed")
            for task_id in audit.stale_ids:
                task_path(out_dir, task_id).unlink(missing_ok=True)
            if audit.stale_ids:
                note(f"{len(audit.stale_ids)} tasks computed by other code are recomputed "
                     f"({_per_selector(_add(audit.stale, audit.other_protocol))})")
            elif audit.other_protocol:
                note(f"{sum(audit.other_protocol.values())} tasks were evaluated by another version of the "
                     f"evaluation protocol ({_per_selector(audit.other_protocol)}); they are kept: "
                     "--recompute-stale recomputes them")
            if audit.legacy:
                note(f"{sum(audit.legacy.values())} tasks hold rows written before fsbench recorded the code "
                     f"that computed them ({_per_selector(audit.legacy)}); they are kept: 'fsbench discard' "
                     "recomputes them")
            for task_id in audit.to_restore:
                write_task(out_dir, task_id, found.rows[task_id])
            return _run_pending(experiment, tasks, audit.kept, data, out_dir, n_jobs, started, skipped,
                                notes, on_start, on_task_done)
        except OSError as exc:
            raise FsbenchError(f"{describe_os_error(exc, 'the results')}; every finished task is kept: free "
                               "space (or fix the folder) and run the same command again to resume.") from None


def _run_pending(experiment: Experiment, tasks: list[Task], done: set[str], data: dict[str, Any], out_dir: Path,
                 n_jobs: int, started: float, skipped: list[str], notes: list[str],
                 on_start: Callable[[int, int], None] | None,
                 on_task_done: Callable[[str], None] | None) -> RunResult:
    # Repetition-major: the first repetitions of every dataset finish before later ones start,
    # so an interrupted long run already covers every dataset (results do not depend on order).
    pending = sorted((t for t in tasks if t.id not in done), key=lambda t: (t.split.repeat, t.split.fold))
    if on_start:
        on_start(len(pending), len(tasks))
    if n_jobs < 0:
        n_jobs = os.cpu_count() or 1
    workers = min(n_jobs, max(1, len(pending)))
    # One BLAS thread per task whatever n_jobs is: floating-point reductions then run in the
    # same order for any n_jobs (identical rows), and busy-waiting BLAS threads cannot
    # oversubscribe a loaded machine (an RFS fit measured 0.26 s on one thread, 12.5 s on two).
    threads = 1
    n_run, finished = 0, False
    try:
        if pending:
            parallel = Parallel(n_jobs=workers, return_as="generator_unordered")
            for task_id in parallel(
                delayed(run_task)(experiment, task, data[task.dataset].X, data[task.dataset].y, out_dir, threads)
                for task in pending
            ):
                n_run += 1
                if on_task_done:
                    on_task_done(task_id)
        finished = True
    finally:
        # wall time of this invocation (an interrupted one too), for runs that span sessions
        if n_run:
            with contextlib.suppress(OSError):  # a full disk must not hide why the run stopped
                log_run(out_dir, time.perf_counter() - started, len(tasks), n_run, workers,
                        interrupted=not finished)

    done = finished_tasks(out_dir)
    failed = read_failures(out_dir, [t.id for t in tasks if t.id not in done], experiment.fingerprint())
    write_failures(out_dir, failed)
    rows = read_tasks(out_dir, [t.id for t in tasks if t.id in done])
    rows += _unplanned_rows(out_dir, tasks, experiment.fingerprint())
    runs = write_runs(out_dir, rows) if rows else pd.DataFrame(columns=["dataset", "selector", "k", "accuracy"])
    return RunResult(runs, out_dir, len(tasks), len(tasks) - len(pending), time.perf_counter() - started,
                     tuple(skipped), tuple(notes), tuple(failed))


class FitTimeout(Exception):
    """A selector's fit ran past its ``timeout``."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise FitTimeout in the block after ``seconds`` (None: no limit).

    A POSIX interval timer (SIGALRM) in the main thread, where joblib's workers run tasks; the
    exception is raised when the interpreter next runs Python code, so a single long call into
    compiled code (a BLAS routine, LIBSVM) is stopped when it returns.
    """
    if seconds is None:
        yield
        return
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        raise FsbenchError("A selector's timeout needs a POSIX system and the main thread; remove 'timeout'.")

    def expire(signum: int, frame: Any) -> None:
        raise FitTimeout(f"the fit ran past its timeout of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _read_data_file(data_file: Any) -> Any:
    """A user's data file, as the config validated it (same bytes: its sha256 is in the fingerprint)."""
    from fsbench.datasets.files import read_data_file

    data = read_data_file(data_file.path, label=data_file.label, x=data_file.x, y=data_file.y, name=data_file.name)
    if data.sha256 != data_file.sha256:
        raise FsbenchError(f"The data file {data_file.path!r} changed since the config was read; run the "
                           "command again.")
    return data


def _refuse_constant_data(name: str, X: np.ndarray) -> None:
    """A FsbenchError when every feature is constant (some constant features are common and fine)."""
    X = np.asarray(X)
    if X.size and np.all(X == X[0]):
        raise FsbenchError(f"Every feature of dataset {name!r} is constant, so no selector or classifier can "
                           "beat the majority class; check the data file.")


def _check_folder_configuration(out_dir: Path, fingerprint: str) -> None:
    """Refuse a folder that holds results of another configuration (nothing is changed)."""
    previous = read_fingerprint(out_dir)
    has_results = bool(finished_tasks(out_dir)) or (out_dir / RUNS_FILE).is_file()
    if previous is not None and previous != fingerprint and has_results:
        raise FsbenchError(
            f"{str(out_dir)!r} holds results of a different configuration; pass --force to replace "
            "them or --out to write elsewhere."
        )
    if previous is None and finished_tasks(out_dir):
        raise FsbenchError(f"{str(out_dir)!r} holds task files without a config.yaml; pass --force to replace them.")


@dataclass
class _Found:
    rows: dict[str, list[dict[str, Any]]]  # planned task id -> its rows (from its file or runs.csv.gz)
    from_runs: set[str]  # ids whose rows come from runs.csv.gz (no task file yet)
    damaged: list[str]  # planned ids whose task file is damaged


def _existing_rows(out_dir: Path, tasks: list[Task], fingerprint: str) -> _Found:
    """Every row the folder holds, read but not yet trusted: the planned tasks' files, and the rows
    of runs.csv.gz whose tasks have no file (all of which must carry this configuration's
    fingerprint: the folder's config.yaml may be missing or describe another run)."""
    planned = {t.id for t in tasks}
    rows: dict[str, list[dict[str, Any]]] = {}
    damaged = []
    files = finished_tasks(out_dir)
    for task_id in sorted(files & planned):
        try:
            rows[task_id] = read_task(out_dir, task_id)
        except DamagedTaskFile:
            damaged.append(task_id)
    from_runs: set[str] = set()
    if (out_dir / RUNS_FILE).is_file():
        runs = load_runs(out_dir)
        recorded = set(runs["fingerprint"].astype(str)) if "fingerprint" in runs else {"none"}
        if recorded - {fingerprint}:
            raise FsbenchError(
                f"{str(out_dir)!r} holds results of a different configuration (runs.csv.gz rows with "
                f"fingerprint {', '.join(sorted(recorded - {fingerprint}))}, this config's is {fingerprint}); "
                "pass --force to replace them or --out to write elsewhere.")
        for task_id, records in _rows_by_task(runs).items():
            if task_id not in files:
                rows[task_id] = records
                from_runs.add(task_id)
    return _Found(rows, from_runs, damaged)


@dataclass
class _Audit:
    kept: set[str]  # planned ids with trusted rows (files, or rows to restore)
    to_restore: list[str]  # ids whose rows come from runs.csv.gz and are trusted
    damaged: list[str]
    stale: dict[str, int]  # selector label -> tasks computed by other code
    stale_ids: list[str]  # to recompute
    legacy: dict[str, int]  # selector label -> tasks whose rows record no code
    other_protocol: dict[str, int]  # selector label -> tasks evaluated by another protocol version


def _audit(experiment: Experiment, tasks: list[Task], found: _Found, out_dir: Path,
           recompute_stale: bool = False) -> _Audit:
    """Check every found row against what this configuration and code would write."""
    fingerprint = experiment.fingerprint()
    labels = [c.label for c in experiment.classifiers] or [""]
    expected_rows = sorted((label, k) for label in labels for k in experiment.n_features)
    codes = {sel.name: selector_identity(sel) for sel in experiment.selectors}
    protocol = protocol_code()
    audit = _Audit(set(), [], list(found.damaged), {}, [], {}, {})
    for task in tasks:
        rows = found.rows.get(task.id)
        if rows is None:
            continue
        expected = {"dataset": task.dataset, "repeat": task.split.repeat, "fold": task.split.fold,
                    "selector": task.selector.label, "method": task.selector.name, "fingerprint": fingerprint,
                    "seed": selection_seed(experiment, task), "split_seed": task.split.seed}
        where = "runs.csv.gz" if task.id in found.from_runs else f"the task file {task.id}.json"
        for row in rows:
            for key, value in expected.items():
                if str(row.get(key)) != str(value):
                    raise FsbenchError(
                        f"{str(out_dir)!r} holds rows of another configuration ({where}: {key} = "
                        f"{row.get(key)!r} where this config gives {value!r}); pass --force to replace them "
                        "or --out to write elsewhere.")
        found_rows = sorted((str(r.get("classifier", "")), int(r.get("k", -1))) for r in rows)
        if found_rows != expected_rows:
            def shown(pairs: list[tuple[str, int]]) -> str:
                return str([k for _, k in pairs]) if labels == [""] else str(pairs)

            what = "k" if labels == [""] else "(classifier, k)"
            raise FsbenchError(f"{str(out_dir)!r} holds rows of another configuration ({where}: {what} = "
                               f"{shown(found_rows)} where this config gives {shown(expected_rows)}); pass --force "
                               "to replace them or --out to write elsewhere.")
        recorded = {r.get("code") for r in rows}
        label = task.selector.label
        if recorded <= {None} or all(isinstance(c, float) and np.isnan(c) for c in recorded):
            audit.legacy[label] = audit.legacy.get(label, 0) + 1
        elif recorded != {codes[task.selector.name]}:
            audit.stale[label] = audit.stale.get(label, 0) + 1
            audit.stale_ids.append(task.id)
            continue
        elif {str(r.get("protocol_code")) for r in rows} != {protocol}:
            audit.other_protocol[label] = audit.other_protocol.get(label, 0) + 1
            if recompute_stale:
                audit.stale_ids.append(task.id)
                continue
        audit.kept.add(task.id)
        if task.id in found.from_runs:
            audit.to_restore.append(task.id)
    # rows of tasks not planned now (a dataset skipped this time) are kept as they are
    planned = {t.id for t in tasks}
    audit.to_restore += sorted(found.from_runs - planned)
    return audit


def _add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def _per_selector(counts: dict[str, int]) -> str:
    return ", ".join(f"{label}: {n}" for label, n in sorted(counts.items()))


def _stale_message(out_dir: Path, stale: dict[str, int]) -> str:
    return (f"{str(out_dir)!r} holds rows computed by other code of fsbench ({_per_selector(stale)} tasks; the "
            "selector or the evaluation protocol changed since); rerun with --recompute-stale to recompute "
            "them, or 'fsbench discard' them.")


def _unplanned_rows(out_dir: Path, tasks: list[Task], fingerprint: str) -> list[dict[str, Any]]:
    """Rows of finished tasks of this configuration that this invocation did not plan (datasets left
    out by --skip-missing this time): kept in runs.csv.gz, never dropped."""
    rows: list[dict[str, Any]] = []
    for task_id in sorted(finished_tasks(out_dir) - {t.id for t in tasks}):
        try:
            records = read_task(out_dir, task_id)
        except DamagedTaskFile:
            continue
        if all(str(r.get("fingerprint")) == fingerprint for r in records):
            rows += records
    return rows


def _task_ids(runs: pd.DataFrame) -> list[str]:
    """The id of the task each row of a runs table belongs to."""
    return [Task(d, Split(r, f, np.empty(0), np.empty(0), 0), SelectorConfig(m, label=lab)).id
            for d, r, f, m, lab in zip(runs["dataset"], runs["repeat"], runs["fold"], runs["method"],
                                       runs["selector"], strict=True)]


def _rows_by_task(runs: pd.DataFrame, task_ids: set[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows of a runs table as task files hold them, by task id (all tasks, or ``task_ids``)."""
    runs = runs.assign(_task=_task_ids(runs))
    if task_ids is not None:
        runs = runs[runs["_task"].isin(task_ids)]
    out = {}
    for task_id, rows in runs.groupby("_task", sort=False):
        # a column another selector's rows filled (diagnostics) or that older rows lack (code) is
        # absent, not NaN, in this task's rows
        out[task_id] = [{k: v for k, v in row.items()
                         if not ((k.startswith("diag_") or k in ("code", "protocol_code")) and isinstance(v, float)
                                 and np.isnan(v))}
                        for row in rows.drop(columns="_task").to_dict("records")]
    return out


def _write_tasks_from_rows(out_dir: Path, runs: pd.DataFrame, task_ids: set[str]) -> int:
    """Task files recreated from the rows of ``runs`` for the given task ids; returns how many."""
    by_task = _rows_by_task(runs, task_ids)
    for task_id, records in by_task.items():
        write_task(out_dir, task_id, records)
    return len(by_task)


def discard_tasks(out_dir: Path, selectors: list[str], datasets: list[str] | None = None
                  ) -> tuple[int, int]:
    """Remove the finished tasks of the selector labels ``selectors`` (on ``datasets``, default
    all) from a results folder: their task files and their rows of runs.csv.gz. Running the
    config again then recomputes them and only them; returns (tasks, rows) removed.

    For results a code change has made stale: task rows do not record the code that computed
    them, and a run restores missing task files from runs.csv.gz, so deleting task files alone
    would bring the old rows back. Interrupted, it leaves runs.csv.gz intact, and the next run
    restores what was deleted (run the discard again). Not for a folder a run is writing to.
    """
    if read_fingerprint(out_dir) is None:
        raise FsbenchError(f"{str(out_dir)!r} holds no results (no config.yaml); nothing to discard.")
    runs = load_runs(out_dir) if (out_dir / RUNS_FILE).is_file() else None
    files = {task_id: read_tasks(out_dir, [task_id]) for task_id in finished_tasks(out_dir)}
    owner = {task_id: (rows[0]["dataset"], rows[0]["selector"]) for task_id, rows in files.items() if rows}
    row_ids = _task_ids(runs) if runs is not None else []
    if runs is not None:
        owner.update(zip(row_ids, zip(runs["dataset"], runs["selector"], strict=True), strict=True))
    known_selectors = sorted({sel for _, sel in owner.values()} | set(planned_selectors(out_dir)))
    known_datasets = sorted({ds for ds, _ in owner.values()}.union(*planned_datasets(out_dir)))
    for given, known, what in ((selectors, known_selectors, "selector"),
                               (datasets or [], known_datasets, "dataset")):
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise FsbenchError(f"No results of {what} {', '.join(map(repr, unknown))} in {str(out_dir)!r}; "
                               f"it holds {', '.join(known) or 'none'}.")
    doomed = {task_id for task_id, (ds, sel) in owner.items()
              if sel in selectors and (not datasets or ds in datasets)}
    if not doomed:
        return 0, 0
    in_runs = set(row_ids)
    n_rows = sum(len(files[t]) for t in doomed - in_runs) + int(np.isin(row_ids, list(doomed)).sum())
    if runs is not None:
        # every kept task as a file first, so that runs.csv.gz can be rewritten from the files
        _write_tasks_from_rows(out_dir, runs, in_runs - doomed - set(files))
    for task_id in doomed:
        task_path(out_dir, task_id).unlink(missing_ok=True)
    if runs is not None:
        # the kept rows in their order, then tasks finished since runs.csv.gz was written
        order = [t for t in dict.fromkeys(row_ids) if t not in doomed]
        order += sorted(set(files) - in_runs - doomed)
        if order:
            write_runs(out_dir, read_tasks(out_dir, order))
        else:
            (out_dir / RUNS_FILE).unlink()
    return len(doomed), n_rows


# ----------------------------------------------------------------------------- one task
def run_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, out_dir: Path, threads: int) -> str:
    """Fit the selector on the task's training part, evaluate every k, save the rows.

    A selector that raises (a user's selector, most likely) or runs past its ``timeout`` fails
    this task only: the failure is saved (:func:`fsbench.store.write_failure`) instead of rows,
    the run goes on, and the next run retries the task.
    """
    t0 = time.perf_counter()
    try:
        with threadpool_limits(limits=threads):
            rows = _evaluate_task(experiment, task, X, y, out_dir / RANKINGS_DIR)
    except OSError as exc:
        if exc.errno in _STORAGE_ERRORS:
            raise  # the results folder cannot be written: the run stops and says why
        failure = exc
    except Exception as exc:
        failure = exc
    else:
        seconds = time.perf_counter() - t0  # the whole task: tuning, selection and evaluation
        write_task(out_dir, task.id, [{**row, "task_seconds": seconds} for row in rows])
        clear_failure(out_dir, task.id)
        return task.id
    reason = str(failure).strip().splitlines()[0] if str(failure).strip() else ""
    write_failure(out_dir, task.id, {
        "dataset": task.dataset, "repeat": task.split.repeat, "fold": task.split.fold,
        "selector": task.selector.label, "method": task.selector.name,
        "error": f"{type(failure).__name__}: {reason}" if reason else type(failure).__name__,
        "seconds": time.perf_counter() - t0, "fingerprint": experiment.fingerprint()})
    return task.id


_STORAGE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def _evaluate_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, cache: Path) -> list[dict]:
    split, sel = task.split, task.selector
    X_train, X_test = standardize(X, split.train, split.test, experiment.standardize)
    y_train, y_test = y[split.train], y[split.test]
    # Inner folds and classifier seeds depend on the split only: every selector of a split is
    # evaluated on the same inner folds, so two selectors with one ranking get identical rows.
    eval_seed = derive_seed(experiment.seed, "evaluate", task.dataset, split.repeat, split.fold)
    ks = experiment.n_features
    n_inner = experiment.inner_cv.folds_for(y_train.size)

    if experiment.protocol.select_on == "all":
        # The leakage protocol: one selection on the whole dataset, before any split.
        everything = np.arange(y.size)
        X_sel, _ = standardize(X, everything, everything[:0], experiment.standardize)
        y_sel = y
    else:
        X_sel, y_sel = X_train, y_train
    sel_seed = selection_seed(experiment, task)

    chosen: dict[str, Any] = {}
    if sel.grid:
        def fit_fold(Xf: np.ndarray, yf: np.ndarray, point: dict[str, Any], fold: int) -> np.ndarray:
            seed = derive_seed(sel_seed, "inner", fold)
            return fit_selector(sel.name, {**sel.params_dict, **point}, Xf, yf, seed, max(ks), cache,
                                kind=sel.kind, timeout=sel.timeout)["ranking"]

        sel_eval_seed = eval_seed if X_sel is X_train else sel_seed
        # scored with the first classifier (fsbench.protocol.tune_selector)
        chosen, _ = tune_selector(fit_fold, X_sel, y_sel, sel.grid_points(), ks, experiment.classifier_specs[0],
                                  experiment.inner_cv.folds_for(y_sel.size), sel_eval_seed)
    params = {**sel.params_dict, **chosen}
    fitted = fit_selector(sel.name, params, X_sel, y_sel, sel_seed, max(ks), cache, kind=sel.kind,
                          timeout=sel.timeout)
    if experiment.classifiers:  # one ranking, every classifier and every k
        evaluated = evaluate_classifiers(X_train, y_train, X_test, y_test, fitted["ranking"], ks,
                                         experiment.classifiers, n_inner, eval_seed)
    else:  # the single classifier: rows without a classifier column, as the papers' results have
        evaluated = evaluate_ranking(X_train, y_train, X_test, y_test, fitted["ranking"], ks,
                                     experiment.classifier, n_inner, eval_seed)
    common = {
        "experiment": experiment.name, "dataset": task.dataset, "repeat": split.repeat,
        "fold": split.fold, "selector": sel.label, "method": sel.name,
        "n_train": int(split.train.size), "params": json.dumps(params, sort_keys=True),
        "fit_seconds": fitted["fit_seconds"], "n_iter": fitted["n_iter"],
        "standardize": experiment.standardize, "select_on": experiment.protocol.select_on,
        "seed": sel_seed, "split_seed": split.seed,
        "fingerprint": experiment.fingerprint(), "fsbench_version": __version__, "code": selector_identity(sel),
        "protocol_code": protocol_code(),
        "selector_warnings": " | ".join(fitted["warnings"]),
        **{f"diag_{k}": v for k, v in fitted["diagnostics"].items()},
    }
    return [{**common, **row} for row in evaluated]


def selector_identity(sel: SelectorConfig) -> str:
    """The code identity recorded in a selector's rows: :func:`fsbench.selectors.selector_code` for a
    built-in, :func:`fsbench.plugins.plugin_code` for a user's selector."""
    return _selector_source(sel.name, sel.kind)[1]


def _selector_source(name: str, kind: str) -> tuple[Callable[..., Any], str, bool]:
    """How to build a selector: (build(params, k_max, seed), its code identity, whether it takes a seed)."""
    if kind == "builtin":
        cls = get_selector(name).cls
        uses_seed = "random_state" in inspect.signature(cls.__init__).parameters

        def build(params: dict[str, Any], k_max: int, seed: int | None) -> Any:
            return cls(n_features_to_select=k_max, **params, **({"random_state": seed} if uses_seed else {}))

        return build, selector_code(name), uses_seed
    from fsbench.plugins import build_selector, plugin_code, resolve, uses_random_state

    spec = resolve(class_path=name) if kind == "class" else resolve(score_func=name)
    code = plugin_code(spec)
    module = inspect.getmodule(inspect.unwrap(spec.obj))
    if _user_module(module) and _PLUGIN_LOADED.get(module.__name__) != code:
        # The module in memory may predate an edit of its file (a worker or notebook that imported
        # it before): fits must run the code the rows will name, so import the file again.
        importlib.reload(module)
        spec = resolve(class_path=name) if kind == "class" else resolve(score_func=name)
        code = plugin_code(spec)
        _PLUGIN_LOADED[module.__name__] = code

    def build_plugin(params: dict[str, Any], k_max: int, seed: int | None) -> Any:
        return build_selector(spec, params, n_features_to_select=k_max, random_state=seed)

    return build_plugin, code, uses_random_state(spec)


#: module name -> the code identity of the plugin file this process last imported it from
_PLUGIN_LOADED: dict[str, str] = {}


def _user_module(module: Any) -> bool:
    """A module from a user's source file (not an installed library, whose code its version names)."""
    file = getattr(module, "__file__", None)
    return file is not None and not {"site-packages", "dist-packages"} & set(Path(file).parts)


def ranking_key(name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int | None,
                code: str | None = None) -> str:
    """Cache key of a ranking: a hash of everything it depends on, the selector's code included."""
    h = hashlib.sha256()
    h.update(json.dumps([code or selector_code(name), name, params, seed, X.shape], sort_keys=True,
                        default=repr).encode())
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()[:32]


def fit_selector(
    name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int, k_max: int, cache: Path | None,
    *, kind: str = "builtin", timeout: float | None = None,
) -> dict[str, Any]:
    """Fit a selector (or take its ranking from the cache): a registered one, or a user's (``kind``
    ``class`` or ``score_func``, ``name`` its import path), stopped after ``timeout`` seconds.

    Returns ranking, scores, fit_seconds, n_iter, diagnostics, the warnings it raised and, for
    selectors with ``objective_``, that trace as "objective" (also in the cache).
    """
    build, code, uses_seed = _selector_source(name, kind)
    seed_arg = seed if uses_seed else None
    key = ranking_key(name, params, X, y, seed_arg, code)
    if cache is not None and (hit := load_ranking(cache, key)) is not None:
        return hit
    selector = build(params, k_max, seed_arg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        with time_limit(timeout):
            selector.fit(X, y)
        seconds = time.perf_counter() - t0
    ranking = np.asarray(selector.ranking_, dtype=np.int64)
    if ranking.shape != (X.shape[1],) or not np.array_equal(np.sort(ranking), np.arange(X.shape[1])):
        raise RuntimeError(f"selector {name!r} returned a ranking that is not a permutation of the features")
    messages = sorted({str(w.message).split("\n")[0] for w in caught
                       if not issubclass(w.category, DeprecationWarning)})
    diagnostics = {k: (v.item() if isinstance(v, np.generic) else v)
                   for k, v in getattr(selector, "diagnostics_", {}).items()}
    meta = {"fit_seconds": seconds, "n_iter": int(getattr(selector, "n_iter_", 0) or 0),
            "diagnostics": diagnostics, "warnings": messages}
    if hasattr(selector, "objective_"):
        # kept with the ranking so that the objective figures reuse this fit (fsbench.traces)
        meta["objective"] = np.asarray(selector.objective_, dtype=float).ravel().tolist()
    if cache is not None:
        save_ranking(cache, key, ranking, np.asarray(selector.scores_, dtype=float), meta)
    return {"ranking": ranking, "scores": np.asarray(selector.scores_, dtype=float), **meta}
