"""Experiment -> independent tasks -> joblib; rankings cached; every finished task saved.

A task is one (dataset, repeat, fold, selector). Its seed derives from the config seed and
its identity only, so the rows do not depend on n_jobs or on the order tasks finish in; a
killed run loses only the tasks in flight, and running it again resumes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable
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
    evaluate_ranking,
    outer_splits,
    standardize,
    tune_selector,
)
from fsbench.selectors import get_selector, source_digest
from fsbench.store import (
    CONFIG_FILE,
    RANKINGS_DIR,
    RUNS_FILE,
    TASKS_DIR,
    finished_tasks,
    load_ranking,
    load_runs,
    log_run,
    planned_datasets,
    planned_selectors,
    read_fingerprint,
    read_tasks,
    save_ranking,
    task_path,
    write_config,
    write_runs,
    write_task,
)


@dataclass(frozen=True)
class Task:
    dataset: str
    split: Split
    selector: SelectorConfig

    @property
    def id(self) -> str:
        label = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in self.selector.label)
        return f"{self.dataset}__r{self.split.repeat:03d}f{self.split.fold:02d}__{label}"


@dataclass(frozen=True)
class RunResult:
    runs: pd.DataFrame
    out_dir: Path
    n_tasks: int
    n_resumed: int
    seconds: float
    skipped: tuple[str, ...] = ()  # datasets without files, left out under skip_missing


def plan(experiment: Experiment, data: dict[str, Any]) -> list[Task]:
    """Every task of the experiment, after checking the data fits the protocol.

    ``data`` maps dataset name -> an object with ``X`` and ``y``. Raises FsbenchError (before
    anything runs) when a k exceeds a dataset's features or a class is too small for the splits.
    """
    tasks = []
    needs_inner = experiment.classifier.tuned or any(s.grid for s in experiment.selectors)
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
    on_start: Callable[[int, int], None] | None = None,
    on_task_done: Callable[[str], None] | None = None,
) -> RunResult:
    """Run (or resume) an experiment and write its results to ``out_dir``.

    ``data`` may hold already loaded datasets; missing ones are loaded with
    :func:`fsbench.datasets.load`. With ``skip_missing``, datasets whose files are not found
    are left out (and listed in the result and in config.yaml) instead of stopping the run.
    ``on_start(n_pending, n_total)`` and ``on_task_done(task_id)`` report progress.
    Everything is validated before the first file is written.
    """
    started = time.perf_counter()
    out_dir = Path(out_dir)
    data = dict(data or {})
    skipped = []
    for name in experiment.datasets:
        if name not in data:
            from fsbench.datasets import load, locate

            if skip_missing and locate(name, data_dir) is None:
                skipped.append(name)
                continue
            data[name] = load(name, data_dir)
    if len(skipped) == len(experiment.datasets):
        raise FsbenchError(f"None of the datasets {', '.join(skipped)} was found; fetch them with "
                           "'fsbench datasets fetch NAME' or set FSBENCH_DATA.")
    tasks = plan(experiment, data)
    fingerprint = experiment.fingerprint()

    previous = read_fingerprint(out_dir)
    if force:
        for sub in (TASKS_DIR, "cache"):
            shutil.rmtree(out_dir / sub, ignore_errors=True)
        for name in (RUNS_FILE, CONFIG_FILE):
            (out_dir / name).unlink(missing_ok=True)
    elif previous is not None and previous != fingerprint:
        raise FsbenchError(
            f"{str(out_dir)!r} holds results of a different configuration; pass --force to replace "
            "them or --out to write elsewhere."
        )
    elif previous is None and (out_dir / TASKS_DIR).is_dir():
        raise FsbenchError(f"{str(out_dir)!r} holds task files without a config.yaml; pass --force to replace them.")
    write_config(out_dir, {**experiment.to_dict(), "skipped_datasets": skipped}, fingerprint)

    restore_tasks(out_dir, tasks)
    done = finished_tasks(out_dir)
    # Repetition-major: the first repetitions of every dataset finish before later ones start,
    # so an interrupted long run already covers every dataset (results do not depend on order).
    pending = sorted((t for t in tasks if t.id not in done), key=lambda t: (t.split.repeat, t.split.fold))
    if on_start:
        on_start(len(pending), len(tasks))
    n_jobs = n_jobs or experiment.n_jobs
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
            log_run(out_dir, time.perf_counter() - started, len(tasks), n_run, workers, interrupted=not finished)

    rows = read_tasks(out_dir, [t.id for t in tasks])
    runs = write_runs(out_dir, rows)
    return RunResult(runs, out_dir, len(tasks), len(tasks) - len(pending), time.perf_counter() - started,
                     tuple(skipped))


def _task_ids(runs: pd.DataFrame) -> list[str]:
    """The id of the task each row of a runs table belongs to."""
    return [Task(d, Split(r, f, np.empty(0), np.empty(0), 0), SelectorConfig(m, label=lab)).id
            for d, r, f, m, lab in zip(runs["dataset"], runs["repeat"], runs["fold"], runs["method"],
                                       runs["selector"], strict=True)]


def _write_tasks_from_rows(out_dir: Path, runs: pd.DataFrame, task_ids: set[str]) -> int:
    """Task files recreated from the rows of ``runs`` for the given task ids; returns how many."""
    runs = runs.assign(_task=_task_ids(runs))
    written = 0
    for task_id, rows in runs[runs["_task"].isin(task_ids)].groupby("_task", sort=False):
        # a diagnostic column another selector reported is absent, not NaN, in this task's rows
        records = [{k: v for k, v in row.items()
                    if not (k.startswith("diag_") and isinstance(v, float) and np.isnan(v))}
                   for row in rows.drop(columns="_task").to_dict("records")]
        write_task(out_dir, task_id, records)
        written += 1
    return written


def restore_tasks(out_dir: Path, tasks: list[Task]) -> int:
    """Task files recreated from runs.csv.gz for tasks it holds and tasks/ lacks; returns how many.

    A results folder can then be kept (committed, copied) as runs.csv.gz alone and still resume:
    the per-task files are a cache of its rows. Only called once the folder's config.yaml is
    known to match the experiment, so the rows belong to these tasks.
    """
    if not (out_dir / RUNS_FILE).is_file():
        return 0
    missing = {t.id for t in tasks} - finished_tasks(out_dir)
    if not missing:
        return 0
    return _write_tasks_from_rows(out_dir, load_runs(out_dir), missing)


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
    """Fit the selector on the task's training part, evaluate every k, save the rows."""
    t0 = time.perf_counter()
    with threadpool_limits(limits=threads):
        rows = _evaluate_task(experiment, task, X, y, out_dir / RANKINGS_DIR)
    seconds = time.perf_counter() - t0  # the whole task: tuning, selection and evaluation
    rows = [{**row, "task_seconds": seconds} for row in rows]
    write_task(out_dir, task.id, rows)
    return task.id


def _evaluate_task(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, cache: Path) -> list[dict]:
    split, sel = task.split, task.selector
    X_train, X_test = standardize(X, split.train, split.test, experiment.standardize)
    y_train, y_test = y[split.train], y[split.test]
    task_seed = derive_seed(experiment.seed, "task", task.dataset, split.repeat, split.fold, sel.label)
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
        sel_seed = derive_seed(experiment.seed, "task", task.dataset, "all", sel.label)
    else:
        X_sel, y_sel, sel_seed = X_train, y_train, task_seed

    chosen: dict[str, Any] = {}
    if sel.grid:
        def fit_fold(Xf: np.ndarray, yf: np.ndarray, point: dict[str, Any], fold: int) -> np.ndarray:
            seed = derive_seed(sel_seed, "inner", fold)
            return fit_selector(sel.name, {**sel.params_dict, **point}, Xf, yf, seed, max(ks), cache)["ranking"]

        sel_eval_seed = eval_seed if X_sel is X_train else sel_seed
        chosen, _ = tune_selector(fit_fold, X_sel, y_sel, sel.grid_points(), ks, experiment.classifier,
                                  experiment.inner_cv.folds_for(y_sel.size), sel_eval_seed)
    params = {**sel.params_dict, **chosen}
    fitted = fit_selector(sel.name, params, X_sel, y_sel, sel_seed, max(ks), cache)
    evaluated = evaluate_ranking(X_train, y_train, X_test, y_test, fitted["ranking"], ks,
                                 experiment.classifier, n_inner, eval_seed)
    common = {
        "experiment": experiment.name, "dataset": task.dataset, "repeat": split.repeat,
        "fold": split.fold, "selector": sel.label, "method": sel.name,
        "n_train": int(split.train.size), "params": json.dumps(params, sort_keys=True),
        "fit_seconds": fitted["fit_seconds"], "n_iter": fitted["n_iter"],
        "standardize": experiment.standardize, "select_on": experiment.protocol.select_on,
        "seed": sel_seed, "split_seed": split.seed,
        "fingerprint": experiment.fingerprint(), "fsbench_version": __version__,
        "selector_warnings": " | ".join(fitted["warnings"]),
        **{f"diag_{k}": v for k, v in fitted["diagnostics"].items()},
    }
    return [{**common, **row} for row in evaluated]


def ranking_key(name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int | None) -> str:
    """Cache key of a ranking: a hash of everything it depends on, the selectors' code included."""
    h = hashlib.sha256()
    h.update(json.dumps([__version__, source_digest(), name, params, seed, X.shape], sort_keys=True,
                        default=repr).encode())
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    return h.hexdigest()[:32]


def fit_selector(
    name: str, params: dict[str, Any], X: np.ndarray, y: np.ndarray, seed: int, k_max: int, cache: Path | None
) -> dict[str, Any]:
    """Fit a registered selector (or take its ranking from the cache).

    Returns ranking, scores, fit_seconds, n_iter, diagnostics, the warnings it raised and, for
    selectors with ``objective_``, that trace as "objective" (also in the cache).
    """
    cls = get_selector(name).cls
    uses_seed = "random_state" in inspect.signature(cls.__init__).parameters
    seed_arg = seed if uses_seed else None
    key = ranking_key(name, params, X, y, seed_arg)
    if cache is not None and (hit := load_ranking(cache, key)) is not None:
        return hit
    selector = cls(n_features_to_select=k_max, **params, **({"random_state": seed_arg} if uses_seed else {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
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
