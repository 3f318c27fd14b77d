"""Rankings of results computed before fsbench kept them: every task's selector refitted.

``fsbench rankings regenerate RESULTS_DIR [--data-dir DIR] [-j N]`` writes ``RESULTS_DIR/rankings.csv.gz``
(:func:`fsbench.storage.rankings.load_rankings`) for a results folder that holds ``config.yaml`` and
``runs.csv.gz`` (a committed folder needs no task files), without touching ``runs.csv.gz``.
This module is the library function; the command's options and printing are :mod:`fsbench.cli.rankings`.

For each task of ``runs.csv.gz`` (one selector fitted on one outer split) the selector is fitted
again exactly as the run fitted the ranking its rows evaluate: the same split, preprocessing and
seed, through the runner's own code (:func:`fsbench.engine.runner.plan`, :func:`fsbench.engine.tasks.task_data`,
:func:`fsbench.engine.tasks.fit_task_selector`), with the parameters the rows record in ``params`` (for
a tuned selector, the grid point its inner search chose). The rows are checked first as a resuming
run checks them (:func:`fsbench.engine.resume.audit`: fingerprint, seeds, every k):

- rows whose ``code`` is another selector code than the current one are reported, and get no
  regenerated ranking (a saved one of this configuration is kept): recompute them with
  ``fsbench run CONFIG --out RESULTS_DIR --recompute-stale``;
- rows without ``code`` (computed before fsbench recorded it) are ranked by the current code, with
  a note; where the selector iterates, the refit's ``n_iter`` is compared with the rows': a task
  whose refit iterated another number of times was computed by other code, gets no ranking, and
  is named;
- a task whose task file already holds a ranking (a run of this version) keeps it, unfitted;
- datasets whose files are not found are skipped, saying so (their tasks keep the rankings a
  ``rankings.csv.gz`` of this configuration holds, if any).

Resumable and deterministic: each refitted ranking is saved at once under
``RESULTS_DIR/cache/regenerated-rankings/`` (a killed regeneration continues from there), and the
rankings are merged into ``rankings.csv.gz`` by the runs' writer (:func:`fsbench.storage.rankings.write_rankings`:
rows sorted, same bytes for any ``n_jobs``). The folder's lock is held throughout, so neither a
run nor another regeneration can write the folder meanwhile.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from fsbench.configuration.experiment import Experiment
from fsbench.engine.data import sparse_datasets
from fsbench.engine.fitting import selector_identity
from fsbench.engine.resume import Found, _rows_by_task, audit, check_rows_digests, per_selector, saved_rankings
from fsbench.engine.runner import kept_ranking, plan
from fsbench.engine.tasks import Task, fit_task_selector, task_data
from fsbench.errors import FsbenchError
from fsbench.storage.atomic import atomic_write_text
from fsbench.storage.folder import remove_temporary_files
from fsbench.storage.lock import locked
from fsbench.storage.ranking_cache import RANKINGS_DIR
from fsbench.storage.rankings import RANKINGS_FILE, REGENERATION_DIR, write_rankings
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import DamagedTaskFile, TaskFile, finished_tasks, read_task_file, write_task

__all__ = ["check_folder", "load_data", "regenerate_rankings"]


def regenerate_rankings(results_dir: str | Path, data_dir: str | Path | None = None, n_jobs: int = 1, *,
                        data: dict[str, Any] | None = None,
                        echo: Callable[[str], None] | None = None) -> Path:
    """Refit every task of ``results_dir/runs.csv.gz`` and write ``results_dir/rankings.csv.gz``;
    returns its path.

    ``data`` may hold already loaded datasets (name -> object with ``X`` and ``y``); the others are
    loaded from ``data_dir`` / $FSBENCH_DATA (:func:`fsbench.datasets.load`). ``n_jobs`` fits run
    in parallel, each on one BLAS thread (as the runner's). ``echo`` receives the progress lines and
    the notes (tasks of other code, rows without code, n_iter differences, skipped datasets).
    Raises FsbenchError when the folder is not a finished run's, its rows do not match its
    config.yaml, or another process holds it.
    """
    from fsbench.engine.traces import experiment_from_results

    out = Path(results_dir)
    say = echo or (lambda text: None)
    check_folder(out, n_jobs, "rankings are regenerated for the rows of a run")
    experiment = experiment_from_results(out)
    with locked(out):
        remove_temporary_files(out)
        return _regenerate(experiment, out, data_dir, n_jobs, dict(data or {}), say)


def check_folder(out: Path, n_jobs: int, why: str) -> None:
    """Stop with one sentence unless ``out`` holds a run's rows and ``n_jobs`` is a number of workers
    (before the folder's lock, which would create a missing folder)."""
    if n_jobs == 0 or n_jobs < -1:
        raise FsbenchError(f"n_jobs = {n_jobs}: give a positive number of workers or -1 for all cores.")
    if not (out / RUNS_FILE).is_file():
        raise FsbenchError(f"No {RUNS_FILE} in {str(out)!r}; {why}: check the path.")


def _regenerate(experiment: Experiment, out: Path, data_dir: str | Path | None, n_jobs: int,
                data: dict[str, Any], say: Callable[[str], None]) -> Path:
    fingerprint = experiment.fingerprint()
    runs = load_runs(out)
    recorded = set(runs["fingerprint"].astype(str)) if "fingerprint" in runs else {"not recorded"}
    if recorded != {fingerprint}:
        raise FsbenchError(f"{str(out / RUNS_FILE)!r} holds rows of fingerprint {', '.join(sorted(recorded))}, its "
                           f"config.yaml {fingerprint}; rankings are regenerated only for rows of the folder's "
                           "configuration: restore the folder's files or rerun the experiment.")
    rows = _rows_by_task(runs)
    changed, _ = check_rows_digests(rows)
    if changed:  # their params may have been edited too: the next run recomputes them, rankings included
        say(f"Note: {len(changed)} tasks' rows in {out / RUNS_FILE} do not match their digest (changed after they "
            f"were written; first {changed[0]}): their rankings are refitted from the params they record, and the "
            "next 'fsbench run' recomputes these tasks")
    saved, stale_note = saved_rankings(out, fingerprint)  # a damaged rankings.csv.gz stops here
    if stale_note:
        say(f"Note: {stale_note}")
    datasets = [d for d in experiment.datasets if d in {str(r[0]["dataset"]) for r in rows.values()}]
    data = load_data(experiment, datasets, data, data_dir, say, "its tasks are not ranked")
    tasks = plan(experiment, data)
    found = Found(rows, set(rows), [])
    sparse = sparse_datasets(data)  # their rows record the sparse route's code identities
    checked = audit(experiment, tasks, found, out, sparse=sparse)  # the resume's checks: fingerprint, seeds, every k
    planned = {t.id for t in tasks}
    unplanned = sorted(t for t in rows if t not in planned and str(rows[t][0]["dataset"]) in data)
    if unplanned:
        raise FsbenchError(f"{str(out / RUNS_FILE)!r} holds rows of tasks its config.yaml does not plan (such as "
                           f"{unplanned[0]}); rerun the experiment.")
    if checked.stale:
        say(f"Note: {sum(checked.stale.values())} tasks hold rows computed by other code of their selector "
            f"({per_selector(checked.stale)}): no ranking is regenerated for them; recompute them with "
            f"'fsbench run CONFIG --out {out} --recompute-stale'")
    if checked.legacy:
        say(f"Note: {sum(checked.legacy.values())} tasks hold rows written before fsbench recorded the code that "
            f"computed them ({per_selector(checked.legacy)}): they are ranked by the current code")
    if checked.other_protocol:
        say(f"Note: {sum(checked.other_protocol.values())} tasks were evaluated by another version of the "
            f"evaluation protocol ({per_selector(checked.other_protocol)}); they are ranked by the current code")

    from_files = _rankings_of_task_files(out, checked.kept, experiment)
    by_id = {t.id: t for t in tasks}
    todo = [by_id[t] for t in sorted(checked.kept) if t not in from_files]
    folder = out / REGENERATION_DIR
    done = {t.id: r for t in todo
            if (r := _saved_fit(folder, t, rows[t.id], experiment, t.dataset in sparse)) is not None}
    pending = [t for t in todo if t.id not in done]
    say(f"{out}: {len(rows)} tasks; {len(todo)} to rank ({len(done)} already refitted, {len(pending)} to fit), "
        f"{len(from_files)} ranked by their task file, {len(rows) - len(todo) - len(from_files)} left as they are")
    cache = out / RANKINGS_DIR if (out / RANKINGS_DIR).is_dir() else (
        folder / "fits" if experiment.protocol.select_on == "all" else None)  # one fit serves every split
    started = time.perf_counter()
    if pending:
        workers = min((os.cpu_count() or 1) if n_jobs < 0 else n_jobs, len(pending))
        results = Parallel(n_jobs=workers, return_as="generator_unordered")(
            delayed(_refit)(experiment, task, data[task.dataset].X, data[task.dataset].y,
                            _params(rows[task.id]), folder, cache) for task in pending)
        for i, (task_id, seconds) in enumerate(results, 1):
            record = _saved_fit(folder, by_id[task_id], rows[task_id], experiment, by_id[task_id].dataset in sparse)
            if record is None:
                raise RuntimeError(f"the refit of {task_id} was not saved")
            done[task_id] = record
            say(f"{out.name}: {i}/{len(pending)} tasks ({task_id}, {seconds:.1f} s; "
                f"{time.perf_counter() - started:.0f} s)")

    iterative = [t for t, record in done.items() if record["n_iter"] or _recorded_n_iter(rows[t])]
    differing = [t for t in iterative if _recorded_n_iter(rows[t]) not in (None, done[t]["n_iter"])]
    if differing:
        shown = ", ".join(f"{t} ({done[t]['n_iter']} against {_recorded_n_iter(rows[t])})" for t in sorted(differing))
        say(f"Note: {len(differing)} refits iterated another number of times than their rows record "
            f"({per_selector(_count_labels(differing, rows))}): other code computed those rows, so these tasks get "
            f"no ranking (recompute them, 'fsbench discard' then a run, to have both): {shown}")
    elif iterative:
        say(f"{len(iterative)} refits of iterative selectors iterated as many times as their rows record")
    rankings = {**{t: r for t, r in saved.items() if t in rows and t not in checked.kept}, **from_files,
                **{t: record["ranking"] for t, record in done.items() if t not in differing}}
    for task_id in sorted(finished_tasks(out) & set(rankings)):
        _add_ranking_to_task_file(out, task_id, rankings[task_id])
    table = write_rankings(out, [TaskFile(rows[t], rankings.get(t)) for t in sorted(rows)], fingerprint)
    shutil.rmtree(folder, ignore_errors=True)
    n_ranked = table.drop_duplicates(["dataset", "repeat", "fold", "selector"]).shape[0]
    say(f"{out / RANKINGS_FILE}: {n_ranked} of {len(rows)} tasks ranked")
    return out / RANKINGS_FILE


def load_data(experiment: Experiment, datasets: list[str] | tuple[str, ...], data: dict[str, Any],
              data_dir: str | Path | None, say: Callable[[str], None], consequence: str) -> dict[str, Any]:
    """These datasets of ``experiment``: those of ``data``, the others loaded as a run loads them
    (:func:`fsbench.engine.data.load_datasets`: the registry from ``data_dir`` / $FSBENCH_DATA, users'
    files, data with known features or probes); one whose files are not found is left out, saying so
    and its ``consequence``."""
    from fsbench.engine.data import load_datasets

    wanted = replace(experiment, datasets=tuple(name for name in datasets if name not in data))
    loaded, skipped = load_datasets(wanted, data, data_dir, skip_missing=True)
    for name in skipped:
        say(f"Note: skipped dataset {name}: its files are not found (give --data-dir, set FSBENCH_DATA or "
            f"'fsbench datasets fetch {name}'); {consequence}")
    return {name: loaded[name] for name in datasets if name in loaded}


def _params(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The selector parameters a task's rows record (the same in every row of a task)."""
    return json.loads(str(rows[0]["params"]))


def _refit(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, params: dict[str, Any],
           folder: Path, cache: Path | None) -> tuple[str, float]:
    """Fit one task's selector as the run did; save its ranking under ``folder``."""
    t0 = time.perf_counter()
    with threadpool_limits(limits=1):  # as the runner: the same floating-point reductions
        fitted = fit_task_selector(experiment, task, task_data(experiment, task, X, y), params, cache)
    record = {"ranking": kept_ranking(experiment, fitted["ranking"]), "n_iter": fitted["n_iter"],
              "fingerprint": experiment.fingerprint(),
              "code": selector_identity(task.selector, sparse=scipy.sparse.issparse(X)),
              "params": json.dumps(params, sort_keys=True)}
    atomic_write_text(folder / f"{task.id}.json", json.dumps(record))
    return task.id, time.perf_counter() - t0


def _saved_fit(folder: Path, task: Task, rows: list[dict[str, Any]], experiment: Experiment, sparse: bool = False,
               ) -> dict[str, Any] | None:
    """A refit an earlier (killed) regeneration saved for this task, if it is of this configuration,
    selector code (of the sparse route when the task's dataset is ``sparse``) and parameters."""
    try:
        record = json.loads((folder / f"{task.id}.json").read_bytes())
    except (OSError, ValueError):
        return None
    expected = {"fingerprint": experiment.fingerprint(), "code": selector_identity(task.selector, sparse=sparse),
                "params": json.dumps(_params(rows), sort_keys=True)}
    if not isinstance(record, dict) or any(record.get(k) != v for k, v in expected.items()):
        return None
    ranking = record.get("ranking")
    if not isinstance(ranking, list) or len(ranking) != max(experiment.n_features):
        return None
    return record


def _rankings_of_task_files(out: Path, kept: set[str], experiment: Experiment) -> dict[str, list[int]]:
    """The rankings the task files of these tasks hold (a run of this version wrote them)."""
    found = {}
    for task_id in sorted(finished_tasks(out) & kept):
        try:
            ranking = read_task_file(out, task_id).ranking
        except DamagedTaskFile:
            continue
        if ranking is not None and len(ranking) == max(experiment.n_features):
            found[task_id] = ranking
    return found


def _add_ranking_to_task_file(out: Path, task_id: str, ranking: list[int]) -> None:
    """A task file without a ranking gets this one (so that the next run or collect keeps it)."""
    try:
        file = read_task_file(out, task_id)
    except DamagedTaskFile:
        return
    if file.ranking is None:
        write_task(out, task_id, file.rows, ranking)


def _recorded_n_iter(rows: list[dict[str, Any]]) -> int | None:
    """The n_iter a task's rows record (None when they do not)."""
    try:
        value = float(rows[0].get("n_iter"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if np.isnan(value) else int(value)


def _count_labels(task_ids: list[str], rows: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for task_id in task_ids:
        label = str(rows[task_id][0]["selector"])
        counts[label] = counts.get(label, 0) + 1
    return counts
