"""Do a results folder's stored rankings belong to its rows? The final evaluation, replayed.

A task's rows record, for every k, the test accuracy of the classifier refitted on the top-k
features of the task's ranking with the C (or grid point) its inner search chose. Replaying that
last step with the stored ranking (same split, preprocessing, classifier, seed and C) must give
each row's ``n_correct``; a ranking that does not was not the one the rows evaluated (a refit
by ``fsbench rankings regenerate`` of rows that other code, or another machine's floating point,
computed). Such a task's ranking is removed from ``rankings.csv.gz`` (stability is then computed
without it) and the task is named: a ranking beside rows it did not produce would look right and
be wrong.

``fsbench rankings check RESULTS_DIR [--data-dir DIR] [-j N]`` checks every task with a
ranking; it costs one classifier fit per row (the protocol's final evaluation), not the inner CV.
The command's options and printing are :mod:`fsbench.cli.rankings`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from fsbench.configuration.experiment import Experiment
from fsbench.engine.regenerate_rankings import check_folder, load_data
from fsbench.engine.tasks import Task, task_data, top_columns
from fsbench.errors import FsbenchError
from fsbench.evaluation.classifiers import as_spec
from fsbench.evaluation.protocol import refit_count
from fsbench.storage.lock import locked
from fsbench.storage.rankings import load_rankings, rankings_fingerprint, write_rankings_table
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import TASK_KEY

__all__ = ["check_rankings"]


def _point(spec: Any, row: pd.Series) -> dict[str, Any]:
    """The grid point the row's classifier used: its recorded parameters (or C)."""
    points = spec.grid_points()
    if not spec.tuned:
        return points[0]
    recorded = row.get("classifier_params")
    if isinstance(recorded, str) and recorded:
        chosen = json.loads(recorded)
        return {key: chosen[key] for key in points[0] if key in chosen}
    return {"C": float(row["C"])}


def _replay(experiment: Experiment, task: Task, X: np.ndarray, y: np.ndarray, ranking: np.ndarray,
            rows: pd.DataFrame) -> list[tuple[int, int, int]]:
    """(k, replayed n_correct, recorded n_correct) of every row of the task that differs: the
    protocol's final refit and count (fsbench.evaluation.protocol.refit_count) with the grid point the row records."""
    data = task_data(experiment, task, X, y)
    spec = as_spec(experiment.classifier_for(task.split.train.size))  # auto: the backend its rows used
    differ = []
    if data.sparse:  # as the runner's sparse route: the stored ranking's columns densified, in its order
        X_train, X_test, order = top_columns(data, ranking, len(ranking))
    else:
        X_train, X_test, order = data.X_train, data.X_test, ranking
    with threadpool_limits(1):  # as the runner: the same floating-point reductions
        for _, row in rows.iterrows():
            cols = order[: int(row["k"])]
            n_correct = refit_count(X_train, data.y_train, X_test, data.y_test, cols, spec,
                                    _point(spec, row), data.eval_seed)
            if n_correct != int(row["n_correct"]):
                differ.append((int(row["k"]), n_correct, int(row["n_correct"])))
    return differ


def _matrix(X: Any) -> Any:
    """A dataset's X as the runner passes it: a sparse matrix as it is, anything else as an array."""
    return X if scipy.sparse.issparse(X) else np.asarray(X)


def check_rankings(results_dir: str | Path, data_dir: str | Path | None = None, n_jobs: int = 1,
                   echo: Any = None, data: dict[str, Any] | None = None) -> list[str]:
    """Replay every ranked task's final evaluation; drop the rankings that do not reproduce their
    rows from ``rankings.csv.gz`` (rewritten atomically, under the folder's lock). Returns the
    dropped tasks' descriptions. Datasets not found are skipped (their rankings kept), saying so;
    ``data`` may hold already loaded datasets (name -> object with ``X`` and ``y``)."""
    from fsbench.engine.runner import plan
    from fsbench.engine.traces import experiment_from_results

    out = Path(results_dir)
    say = echo or (lambda text: None)
    check_folder(out, n_jobs, "rankings are checked against the rows of a run")
    experiment = experiment_from_results(out)
    if experiment.classifiers:
        raise FsbenchError(f"{str(out)!r} holds several classifiers' rows, and 'fsbench rankings check' "
                           "replays the rows of a single classifier only.")
    with locked(out):
        runs, rankings = load_runs(out), load_rankings(out)
        data = load_data(experiment, experiment.datasets, dict(data or {}), data_dir, say,
                         "its rankings are kept unchecked")
        tasks = {(t.dataset, t.split.repeat, t.split.fold, t.selector.label): t for t in plan(experiment, data)}
        ranked = rankings.groupby(TASK_KEY, sort=True)
        jobs, orphans = [], []
        for key, part in ranked:
            task = tasks.get(tuple(key))
            if task is None:
                continue
            rows = runs[(runs["dataset"] == key[0]) & (runs["repeat"] == key[1]) & (runs["fold"] == key[2])
                        & (runs["selector"] == key[3])]
            if rows.empty:  # a ranking beside no rows reproduces nothing
                orphans.append(tuple(key))
                continue
            order = part.sort_values("position")["feature"].to_numpy()
            jobs.append((key, task, order, rows))
        say(f"{out}: replaying the final evaluation of {len(jobs)} ranked tasks")
        results = Parallel(n_jobs=n_jobs)(
            delayed(_replay)(experiment, task, _matrix(data[task.dataset].X),
                             np.asarray(data[task.dataset].y), order, rows)
            for _, task, order, rows in jobs)
        bad_keys = list(orphans)
        dropped = [f"{k[0]} repeat {k[1]} fold {k[2]} {k[3]} ({RUNS_FILE} holds no row of it)" for k in orphans]
        for (key, _, _, _), differ in zip(jobs, results, strict=True):
            if differ:
                bad_keys.append(tuple(key))
                shown = ", ".join(f"k={k}: {a} vs {b} recorded" for k, a, b in differ[:3])
                dropped.append(f"{key[0]} repeat {key[1]} fold {key[2]} {key[3]} ({len(differ)} rows differ; {shown})")
        if bad_keys:
            index = pd.MultiIndex.from_frame(rankings[TASK_KEY])
            kept = rankings[~index.isin(bad_keys)]
            write_rankings_table(out, kept.reset_index(drop=True), rankings_fingerprint(out))
        for text in dropped:
            say(f"dropped the ranking of {text}")
        say(f"{out}: {len(jobs) + len(orphans) - len(dropped)} of {len(jobs) + len(orphans)} rankings reproduce "
            "their rows")
        return dropped
