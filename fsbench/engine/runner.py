"""Experiment -> independent tasks -> worker processes; rankings cached; every finished task
saved, with its ranking (rankings.csv.gz).

A task is one (dataset, repeat, fold, selector). Its seed derives from the config seed and
its identity only, so the rows do not depend on n_jobs or on the order tasks finish in; a
killed run loses only the tasks in flight, and running it again resumes.

Tasks run in worker processes (:mod:`fsbench.engine.workers`), one at ``n_jobs`` 1 too: a selector
that calls ``sys.exit`` or crashes its process fails its own task (failures.csv names the exit
status or signal; the next run retries it) and the run goes on. Workers return outcomes; this
process, which holds the folder's lock, writes them (:func:`save_outcome`), as on a Dask cluster.

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

A sparse dataset (a user's file stored sparse, :mod:`fsbench.engine.data`) takes the sparse route:
its parts are scaled without centring (:mod:`fsbench.evaluation.sparse_scaling`), its selectors
fitted as :mod:`fsbench.engine.fitting` states, and only the ranking's first max(n_features)
columns are densified for the evaluation (:func:`fsbench.engine.tasks.top_columns`), which the
protocol receives unchanged with the ranking ``arange(max(n_features))``: memory grows with
samples x max(n_features), not with the number of features. Its rows record the sparse route's
identities: ``fsbench.selectors.sparse_code`` for a built-in fitted sparse, and
``protocol_code(sparse=True)``. What would densify a sparse dataset beyond the limit is refused
before anything runs (:func:`fsbench.engine.data.refuse_dense_over_limit`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from threadpoolctl import threadpool_limits

from fsbench import __version__
from fsbench.configuration.experiment import Experiment
from fsbench.engine.data import (
    with_selection_counts,
)
from fsbench.engine.fitting import (
    FitTimeout,
    deferred_cache_writes,
    fit_selector,
    input_written_note,
    ranking_key,
    selector_identity,
    time_limit,
    write_cache_entries,
)
from fsbench.engine.preflight import check_resume, load_checked
from fsbench.engine.resume import (
    discard_tasks,
    per_selector,
    sum_counts,
    unplanned_tasks,
)
from fsbench.engine.tasks import Task, fit_task_selector, ranking_margins, selection_seed, task_data, top_columns
from fsbench.engine.workers import Ended, describe_exception, run_jobs
from fsbench.errors import FsbenchError
from fsbench.evaluation import protocol_code
from fsbench.evaluation.protocol import (
    check_inner_cv,
    derive_seed,
    evaluate_classifiers,
    evaluate_ranking,
    outer_splits,
    tune_selector,
)
from fsbench.storage.folder import CONFIG_FILE, remove_temporary_files, write_config
from fsbench.storage.lock import describe_os_error, locked
from fsbench.storage.ranking_cache import RANKINGS_DIR
from fsbench.storage.rankings import RANKINGS_FILE, write_rankings
from fsbench.storage.runlog import RUNLOG, log_run
from fsbench.storage.runs import RUNS_FILE, write_runs
from fsbench.storage.task_files import (
    TASKS_DIR,
    clear_failure,
    finished_tasks,
    read_failures,
    read_task_files,
    task_path,
    write_failure,
    write_failures,
    write_task,
)

__all__ = ["MAX_SPLITS", "FitTimeout", "RunResult", "Task", "discard_tasks", "fit_selector", "plan",
           "ranking_key", "run_experiment", "run_task", "selection_seed", "time_limit"]

#: the most outer splits a dataset may have (protocol.n_trials, n_splits x n_repeats): a plan is
#: materialized before anything runs, so an absurd count must fail at once rather than hang
MAX_SPLITS = 10_000


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
    scheduler: str | None = None,
    on_running: Callable[[list[tuple[str, float]]], None] | None = None,
) -> RunResult:
    """Run (or resume) an experiment and write its results to ``out_dir``.

    ``scheduler`` runs the tasks on a Dask cluster (:mod:`fsbench.engine.cluster`: ``local``,
    ``local:N`` or a scheduler address) instead of ``n_jobs`` local processes: the same rows.

    ``data`` may hold already loaded datasets; missing ones are loaded with
    :func:`fsbench.datasets.load`. With ``skip_missing``, datasets whose files are not found
    are left out (and listed in the result and in config.yaml) instead of stopping the run.
    ``on_start(n_pending, n_total)`` and ``on_task_done(task_id)`` report progress, ``on_note``
    what the run noticed (also in the result's ``notes``); ``on_running`` receives, about every
    second, the running tasks (:func:`describe_task`) and how long each has run, longest first,
    so that a task that hangs is seen (local runs). Everything is validated before the
    first file is written; the folder is locked while the run writes it.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    n_jobs = experiment.n_jobs if n_jobs is None else n_jobs
    data, skipped = load_checked(experiment, out_dir, data=data, data_dir=data_dir, n_jobs=n_jobs,
                                 skip_missing=skip_missing)
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        if on_note:
            on_note(text)

    tasks = plan(experiment, data)
    fingerprint = experiment.fingerprint()

    with contextlib.ExitStack() as stack:
        client = None
        if scheduler is not None:  # before anything is written: an unreachable scheduler changes nothing
            from fsbench.engine.cluster import connect

            client = stack.enter_context(connect(scheduler))
        stack.enter_context(locked(out_dir))
        try:
            removed = remove_temporary_files(out_dir)
            if removed:
                note(f"removed {removed} temporary files a killed run left in {out_dir}")
            if force:
                for sub in (TASKS_DIR, "cache"):
                    shutil.rmtree(out_dir / sub, ignore_errors=True)
                for name in (RUNS_FILE, RANKINGS_FILE, CONFIG_FILE, RUNLOG):  # the log of the discarded runs too
                    (out_dir / name).unlink(missing_ok=True)
            found, checked = check_resume(experiment, tasks, out_dir, data, recompute_stale)
            # every check passed: from here on the folder is changed
            write_config(out_dir, {**experiment.to_dict(), "skipped_datasets": skipped}, fingerprint)
            for task_id in checked.damaged:
                task_path(out_dir, task_id).unlink(missing_ok=True)
            if checked.damaged:
                note(f"{len(checked.damaged)} damaged task files (cut short, emptied or changed after they were "
                     "written) are recomputed")
            for task_id in checked.stale_ids:
                task_path(out_dir, task_id).unlink(missing_ok=True)
            if checked.stale_ids:
                note(f"{len(checked.stale_ids)} tasks computed by other code are recomputed "
                     f"({per_selector(sum_counts(checked.stale, checked.other_protocol))})")
            elif checked.other_protocol:
                note(f"{sum(checked.other_protocol.values())} tasks were evaluated by another version of the "
                     f"evaluation protocol ({per_selector(checked.other_protocol)}); they are kept: "
                     "--recompute-stale recomputes them")
            if checked.legacy:
                note(f"{sum(checked.legacy.values())} tasks hold rows written before fsbench recorded the code "
                     f"that computed them ({per_selector(checked.legacy)}); they are kept: 'fsbench discard' "
                     "recomputes them")
            for text in found.notes:
                note(text)
            for task_id in checked.to_restore:
                write_task(out_dir, task_id, found.rows[task_id], found.rankings.get(task_id))
            unranked = [t for t in checked.to_restore if found.rankings.get(t) is None]
            if unranked:
                note(f"{len(unranked)} tasks restored from {RUNS_FILE} have no ranking (computed before fsbench "
                     f"kept rankings, or {RANKINGS_FILE} did not hold theirs); 'fsbench rankings regenerate "
                     f"{out_dir}' regenerates them once the run is finished")
            return _run_pending(experiment, tasks, checked.kept, data, out_dir, n_jobs, started, skipped,
                                notes, on_start, on_task_done, client, on_running, on_note)
        except OSError as exc:
            raise FsbenchError(f"{describe_os_error(exc, 'the results')}; every finished task is kept: free "
                               "space (or fix the folder) and run the same command again to resume.") from None


def _run_pending(experiment: Experiment, tasks: list[Task], done: set[str], data: dict[str, Any], out_dir: Path,
                 n_jobs: int, started: float, skipped: list[str], notes: list[str],
                 on_start: Callable[[int, int], None] | None,
                 on_task_done: Callable[[str], None] | None, client: Any = None,
                 on_running: Callable[[list[tuple[str, float]]], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> RunResult:
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
    arrays = {name: (data[name].X if scipy.sparse.issparse(data[name].X) else np.asarray(data[name].X),
                     np.asarray(data[name].y)) for name in data}
    try:
        if pending and client is not None:  # a Dask cluster: its workers compute, this process writes
            from fsbench.engine.cluster import n_workers, run_tasks

            workers = n_workers(client)
            token = uuid.uuid4().hex[:12]  # two runs on one cluster never share a task's key
            dataset_of = {t.id: t.dataset for t in pending}
            for outcome in run_tasks(client, _compute_on_worker, pending, arrays, lambda t: t.dataset,
                                     lambda t: f"{t.id}-{token}", experiment):
                save_outcome(out_dir, with_selection_counts(outcome, data[dataset_of[outcome.task_id]]))
                n_run += 1
                if on_task_done:
                    on_task_done(outcome.task_id)
        elif pending:  # worker processes compute (a dying one fails its task only), this process writes
            work = functools.partial(_compute_job, experiment, pending, arrays, out_dir / RANKINGS_DIR, threads)

            def tick(running: list[tuple[int, float]]) -> None:
                if on_running:
                    on_running([(describe_task(pending[job]), seconds) for job, seconds in running])

            for job, result in run_jobs(work, range(len(pending)), workers, on_tick=tick):
                if isinstance(result, Ended):
                    task = pending[job]
                    result = TaskOutcome(task.id, failure=failure_record(
                        experiment, task, f"the process running selector {task.selector.label} {result.reason}",
                        result.seconds))
                save_outcome(out_dir, with_selection_counts(result, data[pending[job].dataset]))
                n_run += 1
                if on_task_done:
                    on_task_done(result.task_id)
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
    files = read_task_files(out_dir, [t.id for t in tasks if t.id in done])
    files += unplanned_tasks(out_dir, tasks, experiment.fingerprint())
    rows = [row for file in files for row in file.rows]
    if (written := input_written_note(rows)) is not None:  # a selector wrote into its (copied) input
        notes.append(written)
        if on_note:
            on_note(written)
    runs = write_runs(out_dir, rows) if rows else pd.DataFrame(columns=["dataset", "selector", "k", "accuracy"])
    write_rankings(out_dir, files, experiment.fingerprint())
    return RunResult(runs, out_dir, len(tasks), len(tasks) - len(pending), time.perf_counter() - started,
                     tuple(skipped), tuple(notes), tuple(failed))


@dataclass(frozen=True)
class TaskOutcome:
    """What a task computed: its rows and ranking, or the record of its failure."""

    task_id: str
    rows: list[dict[str, Any]] | None = None
    ranking: list[int] | None = None
    failure: dict[str, Any] | None = None
    #: rankings-cache entries the task's fits computed, written by the process that saves the outcome
    cache_entries: tuple[tuple[Any, ...], ...] = ()


def compute_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, cache: Path | None,
                 threads: int = 1) -> TaskOutcome:
    """Fit the selector on the task's training part and evaluate every k; write nothing: the
    rankings-cache entries its fits compute come back in the outcome (``cache`` None: no cache,
    as on a cluster's workers), and :func:`save_outcome` writes them.

    A selector that raises (a user's selector, most likely) or runs past its ``timeout`` fails
    this task only: the outcome then holds the failure's record instead of rows.
    """
    t0 = time.perf_counter()
    if experiment.base_dir and experiment.base_dir not in sys.path:
        # a reused worker started before this config was read: let it import the config's plugins
        sys.path.insert(0, experiment.base_dir)
    try:
        with threadpool_limits(limits=threads), deferred_cache_writes() as entries:
            rows, ranking = _evaluate_task(experiment, task, X, y, cache)
    except OSError as exc:
        if exc.errno in _STORAGE_ERRORS:
            raise  # the results folder cannot be written: the run stops and says why
        failure: Exception = exc
    except Exception as exc:
        failure = exc
    else:
        seconds = time.perf_counter() - t0  # the whole task: tuning, selection and evaluation
        return TaskOutcome(task.id, [{**row, "task_seconds": seconds} for row in rows], list(ranking),
                           cache_entries=tuple(entries))
    return TaskOutcome(task.id, failure=failure_record(experiment, task, describe_exception(failure),
                                                       time.perf_counter() - t0))


def failure_record(experiment: Experiment, task: Task, error: str, seconds: float) -> dict[str, Any]:
    """What failures.csv says of a failed task (:data:`fsbench.storage.task_files.FAILURE_COLUMNS`)."""
    return {"dataset": task.dataset, "repeat": task.split.repeat, "fold": task.split.fold,
            "selector": task.selector.label, "method": task.selector.name, "error": error,
            "seconds": seconds, "fingerprint": experiment.fingerprint()}


def describe_task(task: Task) -> str:
    """A task as the progress line names it: ``glioma r0 f4 fisher``."""
    return f"{task.dataset} r{task.split.repeat} f{task.split.fold} {task.selector.label}"


def save_outcome(out_dir: Path, outcome: TaskOutcome) -> str:
    """Write a task's outcome into the results folder: its task file, or its failure record
    (:func:`fsbench.storage.task_files.write_failure`; the next run retries the task). Returns the task id."""
    if outcome.failure is not None:
        write_failure(out_dir, outcome.task_id, outcome.failure)
    else:
        write_cache_entries(outcome.cache_entries)
        write_task(out_dir, outcome.task_id, outcome.rows or [], outcome.ranking)
        clear_failure(out_dir, outcome.task_id)
    return outcome.task_id


def run_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, out_dir: Path, threads: int) -> str:
    """Compute a task (:func:`compute_task`) and save its outcome (:func:`save_outcome`)."""
    return save_outcome(out_dir, compute_task(experiment, task, X, y, out_dir / RANKINGS_DIR, threads))


def _compute_job(experiment: Experiment, tasks: list[Task], arrays: dict[str, tuple[np.ndarray, np.ndarray]],
                 cache: Path, threads: int, job: int) -> TaskOutcome:
    """A local worker process's part of task ``tasks[job]`` (:mod:`fsbench.engine.workers`): compute and
    return the outcome, its rankings-cache entries included; the process holding the folder's
    lock writes it (:func:`save_outcome`). The worker reads the cache and writes nothing."""
    task = tasks[job]
    X, y = arrays[task.dataset]
    return compute_task(experiment, task, X, y, cache, threads)


def _compute_on_worker(task: Task, arrays: tuple[np.ndarray, np.ndarray], experiment: Experiment) -> TaskOutcome:
    """A cluster worker's part of a task: compute, return the outcome; the client writes it."""
    X, y = arrays
    return compute_task(experiment, task, X, y, cache=None, threads=1)


_STORAGE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def _evaluate_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, cache: Path
                   ) -> tuple[list[dict], list[int]]:
    """The task's rows, and its ranking's first max(n_features) features (kept in rankings.csv.gz)."""
    split, sel = task.split, task.selector
    data = task_data(experiment, task, X, y)
    ks = experiment.n_features
    n_inner = experiment.inner_cv.folds_for(data.y_train.size)

    chosen: dict[str, Any] = {}
    if sel.grid:
        def fit_fold(Xf: np.ndarray, yf: np.ndarray, point: dict[str, Any], fold: int) -> np.ndarray:
            seed = derive_seed(data.sel_seed, "inner", fold)
            return fit_selector(sel.name, {**sel.params_dict, **point}, Xf, yf, seed, max(ks), cache,
                                kind=sel.kind, timeout=sel.timeout)["ranking"]

        sel_eval_seed = data.eval_seed if data.X_sel is data.X_train else data.sel_seed
        # scored with the first classifier (fsbench.evaluation.protocol.tune_selector)
        chosen, _ = tune_selector(fit_fold, data.X_sel, data.y_sel, sel.grid_points(), ks,
                                  experiment.classifier_specs_for(data.y_train.size)[0],
                                  experiment.inner_cv.folds_for(data.y_sel.size),
                                  sel_eval_seed)
    params = {**sel.params_dict, **chosen}
    fitted = fit_task_selector(experiment, task, data, params, cache)
    if data.sparse:  # the top max(k) columns densified, in ranking order (fsbench.engine.tasks.top_columns)
        X_train, X_test, ranking = top_columns(data, fitted["ranking"], max(ks))
    else:
        X_train, X_test, ranking = data.X_train, data.X_test, fitted["ranking"]
    if experiment.classifiers:  # one ranking, every classifier and every k
        evaluated = evaluate_classifiers(X_train, data.y_train, X_test, data.y_test, ranking, ks,
                                         experiment.classifier_specs_for(data.y_train.size), n_inner,
                                         data.eval_seed)
    else:  # the single classifier: rows without a classifier column, as the papers' results have
        evaluated = experiment.record_backend(  # auto: classifier_params names the backend it resolved to
            evaluate_ranking(X_train, data.y_train, X_test, data.y_test, ranking, ks,
                             experiment.classifier_for(data.y_train.size), n_inner, data.eval_seed),
            data.y_train.size)
    common = {
        "experiment": experiment.name, "dataset": task.dataset, "repeat": split.repeat,
        "fold": split.fold, "selector": sel.label, "method": sel.name,
        "n_train": int(split.train.size), "params": json.dumps(params, sort_keys=True),
        "fit_seconds": fitted["fit_seconds"], "n_iter": fitted["n_iter"],
        "standardize": experiment.standardize, "select_on": experiment.protocol.select_on,
        "seed": data.sel_seed, "split_seed": split.seed,
        "fingerprint": experiment.fingerprint(), "fsbench_version": __version__,
        "code": selector_identity(sel, data.sparse), "protocol_code": protocol_code(sparse=data.sparse),
        "selector_warnings": " | ".join(fitted["warnings"]),
        **{f"diag_{k}": v for k, v in fitted["diagnostics"].items()},
    }
    # how close the k-th feature's score is to the next one's: fsbench check excuses a row decided by rounding
    margins = dict(zip(ks, ranking_margins(fitted["scores"], fitted["ranking"], ks), strict=True))
    return ([{**common, **row, "ranking_margin": margins[row["k"]]} for row in evaluated],
            kept_ranking(experiment, fitted["ranking"]))


def kept_ranking(experiment: Experiment, ranking: np.ndarray) -> list[int]:
    """What rankings.csv.gz keeps of a task's ranking: its first max(n_features) features, best first."""
    return [int(f) for f in np.asarray(ranking)[:max(experiment.n_features)]]
