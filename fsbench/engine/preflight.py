"""The checks a run makes before it writes anything, shared by the run and by its dry run.

:func:`load_checked` validates the worker count and the results folder, loads the datasets and
refuses data a run cannot use (constant data, sparse data that would be densified beyond the
limit); :func:`check_resume` reads what a results folder already holds and audits it, read only,
refusing rows of another configuration or of other code. :func:`fsbench.engine.runner.run_experiment`
calls both (the second under the folder's lock) and :func:`fsbench.engine.cost_model.estimate_run`
calls both without writing: a config a run refuses is refused by its dry run in the same words.

May import :mod:`fsbench.engine.data`, :mod:`fsbench.engine.resume` and :mod:`fsbench.storage`;
imported by the runner and the cost model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsbench.configuration.experiment import Experiment
from fsbench.engine.data import load_datasets, refuse_constant_data, refuse_dense_over_limit, sparse_datasets
from fsbench.engine.resume import Audit, Found, audit, check_folder_configuration, existing_rows, stale_message
from fsbench.errors import FsbenchError
from fsbench.storage.lock import check_writable_folder

__all__ = ["check_resume", "load_checked"]


def load_checked(experiment: Experiment, out_dir: str | Path, *, data: dict[str, Any] | None = None,
                 data_dir: str | Path | None = None, n_jobs: int | None = None,
                 skip_missing: bool = False) -> tuple[dict[str, Any], list[str]]:
    """A run's datasets (``data`` completed by loading the others) and those skipped as missing, once
    ``n_jobs``, the results folder, the files and the data passed the checks a run makes before it
    plans; the first that fails raises FsbenchError."""
    n_jobs = experiment.n_jobs if n_jobs is None else n_jobs
    if n_jobs == 0 or n_jobs < -1:
        raise FsbenchError(f"n_jobs = {n_jobs}: give a positive number of workers or -1 for all cores.")
    check_writable_folder(Path(out_dir))
    data, skipped = load_datasets(experiment, data, data_dir, skip_missing)
    if len(skipped) == len(experiment.datasets):
        raise FsbenchError(f"None of the datasets {', '.join(skipped)} was found; fetch them with "
                           "'fsbench datasets fetch NAME' or set FSBENCH_DATA.")
    for name in experiment.datasets:
        if name in data:
            refuse_constant_data(name, data[name].X)
    refuse_dense_over_limit(experiment, data)
    return data, skipped


def check_resume(experiment: Experiment, tasks: list[Any], out_dir: str | Path, data: dict[str, Any],
                 recompute_stale: bool) -> tuple[Found, Audit]:
    """What ``out_dir`` holds for the planned ``tasks`` and its audit (:func:`fsbench.engine.resume.audit`),
    read only. Raises FsbenchError for a folder of another configuration, and for rows of other
    selector code unless ``recompute_stale``."""
    out_dir = Path(out_dir)
    fingerprint = experiment.fingerprint()
    check_folder_configuration(out_dir, fingerprint)
    found = existing_rows(out_dir, tasks, fingerprint)
    checked = audit(experiment, tasks, found, out_dir, recompute_stale, sparse=sparse_datasets(data))
    if checked.stale and not recompute_stale:
        raise FsbenchError(stale_message(out_dir, checked.stale))
    return found, checked
