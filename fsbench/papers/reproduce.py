"""`make reproduce`: every paper's configuration run on every available dataset, then its tables.

Layout (relative to the project root)::

    configs/papers/<paper>.yaml               the paper's protocol as written (choices in comments)
    configs/papers/variants/<paper>-*.yaml    the same protocol with one thing changed (leakage,
                                              test-set sizes implied by the printed values, ...)
    results/papers/<paper>/                   runs.csv.gz, tables, figures, runlog.jsonl
    results/papers/variants/<variant>/        the same for each variant
    results/papers/REPORT.md                  everything side by side (fsbench report)

Every run is resumable (fsbench/engine/runner.py); runlog.jsonl records each invocation's wall time
and machine, so the report can state what the full run cost even when it spanned sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from fsbench.errors import FsbenchError
from fsbench.papers import PAPERS, TABLES
from fsbench.papers.check import table_file


def write_paper_tables(paper: str, results_dir: Path) -> list[Path]:
    """The paper's tables regenerated beside the printed values: <table>.md and comparison.csv
    (from complete repetitions only, as in REPORT.md)."""
    import pandas as pd

    from fsbench.papers.tables import compare_table, format_paper_table
    from fsbench.report.results import complete_runs
    from fsbench.storage.atomic import atomic_write_text
    from fsbench.storage.folder import planned_datasets
    from fsbench.storage.runs import load_runs

    runs = complete_runs(results_dir, load_runs(results_dir))
    planned, skipped = planned_datasets(results_dir)
    written, comparisons = [], []
    for table in TABLES[paper]:
        comparison = compare_table(table, runs, planned, skipped)
        comparisons.append(comparison)
        path = results_dir / table_file(table.name)
        atomic_write_text(path, format_paper_table(table, comparison, "markdown"))
        written.append(path)
    path = results_dir / "comparison.csv"
    atomic_write_text(path, pd.concat(comparisons, ignore_index=True).to_csv(index=False))
    return [*written, path]


def run_config(config: Path, out: Path, *, data_dir: Path | None, n_jobs: int | None,
               recompute_stale: bool = False, scheduler: str | None = None,
               on_start: Callable[[int, int], None] | None = None,
               on_task_done: Callable[[str], None] | None = None,
               on_note: Callable[[str], None] | None = None,
               on_running: Callable[[list[tuple[str, float]]], None] | None = None) -> Path:
    """Run (or resume) one configuration with missing datasets skipped; log its wall time.
    ``on_running`` receives the running tasks with their seconds, about every second."""
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.runner import run_experiment

    experiment = load_experiment(config)
    run_experiment(experiment, out, data_dir=data_dir, n_jobs=n_jobs, skip_missing=True,
                   recompute_stale=recompute_stale, on_start=on_start, on_task_done=on_task_done,
                   on_note=on_note, scheduler=scheduler, on_running=on_running)
    return out


def check_paper_name(paper: str) -> str:
    if paper not in PAPERS:
        raise FsbenchError(f"Unknown paper {paper!r}; choose one of {', '.join(PAPERS)}.")
    return paper


def _write_traces(results_dir: Path, config: Path, data_dir: Path | None,
                  leave_out: Collection[str] = ()) -> bool:
    """objective.csv of ``results_dir`` for the config's datasets with results (but those in
    ``leave_out``): fits only the traces objective.csv lacks, or reads the run's own fits.
    False, and nothing written, when no dataset is left."""
    from fsbench.configuration.parse import load_experiment
    from fsbench.datasets import load
    from fsbench.engine.traces import write_traces
    from fsbench.storage.runs import load_runs

    runs = load_runs(results_dir)
    experiment = load_experiment(config)
    present = [d for d in experiment.datasets if d in set(runs["dataset"]) and d not in leave_out]
    if not present:
        return False
    write_traces(experiment, {name: load(name, data_dir) for name in present}, runs, results_dir)
    return True


def write_paper_figures(paper: str, results_dir: Path, config: Path, data_dir: Path | None) -> list[Path]:
    """Accuracy curves, accuracy per p (DSO-FS), and objective per iteration (objective.csv).

    The objective traces (fits on each dataset's first training part with the parameters the
    runs chose most often) are kept in objective.csv; a later call fits only the new ones.
    """
    from fsbench.papers.figures import paper_figures

    _write_traces(results_dir, config, data_dir)
    return paper_figures(paper, results_dir)


def write_variant_figures(variant_dir: Path, config: Path, paper_config: Path, data_dir: Path | None) -> list[Path]:
    """A variant's accuracy per p (when it runs fixed-p DSO-FS selectors) and, for the datasets
    the paper's own config does not run (ISOLET under a reduced protocol), its objective traces.

    Accuracy curves and table.md are written for every variant by ``fsbench reproduce``.
    """
    from fsbench.configuration.parse import load_experiment
    from fsbench.papers.figures import FIGURE_FILES, accuracy_per_p, objective_figure
    from fsbench.storage.runs import load_runs

    written = accuracy_per_p(load_runs(variant_dir), variant_dir / FIGURE_FILES["per_p"]) or []
    if _write_traces(variant_dir, config, data_dir, leave_out=load_experiment(paper_config).datasets):
        written += objective_figure(variant_dir)
    return written
