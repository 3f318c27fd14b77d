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
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from fsbench.configuration.experiment import Experiment
from fsbench.engine.regenerate_rankings import check_folder, load_data
from fsbench.engine.tasks import Task, task_data
from fsbench.errors import FsbenchError
from fsbench.evaluation.classifiers import as_spec
from fsbench.evaluation.protocol import refit_count
from fsbench.storage import (
    RANKINGS_FILE,
    RUNS_FILE,
    TASK_KEY,
    load_rankings,
    load_runs,
    locked,
    rankings_fingerprint,
    write_rankings_table,
)

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
    spec = as_spec(experiment.classifier)
    differ = []
    with threadpool_limits(1):  # as the runner: the same floating-point reductions
        for _, row in rows.iterrows():
            cols = ranking[: int(row["k"])]
            n_correct = refit_count(data.X_train, data.y_train, data.X_test, data.y_test, cols, spec,
                                    _point(spec, row), data.eval_seed)
            if n_correct != int(row["n_correct"]):
                differ.append((int(row["k"]), n_correct, int(row["n_correct"])))
    return differ


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
        raise FsbenchError(f"{str(out)!r} holds several classifiers' rows; check_rankings replays one classifier.")
    with locked(out):
        runs, rankings = load_runs(out), load_rankings(out)
        data = load_data(experiment.datasets, dict(data or {}), data_dir, say, "its rankings are kept unchecked")
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
            delayed(_replay)(experiment, task, np.asarray(data[task.dataset].X),
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


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              envvar="FSBENCH_DATA", help="Folder with the dataset files (default: $FSBENCH_DATA).")
@click.option("-j", "--n-jobs", type=int, default=1, show_default=True)
def main(results_dir: Path, data_dir: Path | None, n_jobs: int) -> None:
    """Check that RESULTS_DIR's rankings.csv.gz reproduces its rows; drop the rankings that do not."""
    from fsbench.engine.console import sigterm_as_interrupt, stop_workers

    try:
        with sigterm_as_interrupt():
            check_rankings(results_dir, data_dir, n_jobs, echo=lambda text: click.echo(text, err=True))
    except FsbenchError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        stop_workers()
        click.echo(f"Interrupted: {RANKINGS_FILE} is unchanged (it is written once, at the end); run the same "
                   "command again.", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
