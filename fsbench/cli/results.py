"""``fsbench table``, ``plot`` and ``discard``: what a results folder holds, shown or dropped.

``table --paper`` formats a paper's table; the checks and formatting it needs are in
:mod:`fsbench.cli.papers`.
"""

from __future__ import annotations

from pathlib import Path

import click

from fsbench.cli.group import PAPERS, main, metric_option
from fsbench.errors import FsbenchError

__all__ = ["discard", "plot", "table"]


@main.command()
@click.argument("results_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--selector", "-s", "selectors", multiple=True, required=True,
              help="Label of a selector whose results to discard (repeatable).")
@click.option("--dataset", "-d", "datasets", multiple=True,
              help="Only its results on this dataset (repeatable; default: every dataset).")
def discard(results_dir: Path, selectors: tuple[str, ...], datasets: tuple[str, ...]) -> None:
    """Discard some selectors' results in RESULTS_DIR so that the next run recomputes them.

    For results a change of the code made stale: removes their task files and their rows of
    runs.csv.gz, and nothing else. Then run the same config (or 'fsbench reproduce') again.
    Not for a folder a run is writing to.
    """
    from fsbench.engine.runner import discard_tasks

    if not results_dir.is_dir():
        raise FsbenchError(f"No results folder {str(results_dir)!r}.")
    n_tasks, n_rows = discard_tasks(results_dir, list(selectors), list(datasets) or None)
    which = ", ".join(selectors) + (f" on {', '.join(datasets)}" if datasets else "")
    if n_tasks:
        click.echo(f"Discarded {n_tasks} tasks ({n_rows} rows) of {which} in {results_dir}; run its "
                   "config again to recompute them.")
    else:
        click.echo(f"No finished tasks of {which} in {results_dir}; nothing discarded.")


@main.command()
@click.argument("results_dir", type=click.Path(path_type=Path), required=False)
@click.option("--k", "k", type=int, default=None, help="Number of selected features (default: the largest run).")
@click.option("--paper", type=click.Choice(PAPERS), default=None,
              help="Regenerate this paper's table(s) beside the printed values "
                   "(RESULTS_DIR defaults to results/papers/PAPER).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv", "latex"]), default="markdown",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the table to this file instead of printing it.")
@click.option("--classifier", default=None,
              help="Only this classifier's results (default: every classifier, one table each).")
@metric_option
def table(results_dir: Path | None, k: int | None, paper: str | None, fmt: str, output: Path | None,
          classifier: str | None, metric: str) -> None:
    """Mean ± std test accuracy (or --metric) per dataset x selector at k selected features.

    Best per row in bold (the lowest for probe_rate); a dataset without the --metric (no known
    relevant features or probes) has empty cells. A cell marked † includes a classifier fit that
    did not converge. With --paper, each cell of the paper's table reads "ours (printed, ours -
    printed)", with the reproduction rule's verdicts (see results/papers/REPORT.md); the papers'
    tables are of accuracy only.
    """
    if paper is not None and metric != "accuracy":
        raise FsbenchError(f"The papers' tables print accuracy only, so --paper cannot show {metric}; leave out "
                           "--metric for the paper's table, or give a RESULTS_DIR without --paper for its "
                           f"{metric}.")
    if paper is None:
        if results_dir is None:
            raise FsbenchError("Give a RESULTS_DIR (for example results/quickstart) or --paper NAME.")
        from fsbench.evaluation.metrics import check_metric
        from fsbench.report import format_table
        from fsbench.storage.runs import load_runs
        from fsbench.storage.task_files import load_failures

        runs = load_runs(results_dir)
        check_metric(runs, metric, source=str(results_dir))
        text = format_table(runs, k, fmt, classifier=classifier, failures=load_failures(results_dir),
                            metric=metric)
    else:
        from fsbench.cli.papers import paper_table

        text = paper_table(paper, results_dir, fmt=fmt, classifier=classifier)
    if output:
        from fsbench.storage.atomic import atomic_write_text

        atomic_write_text(output, text)  # creates a missing folder, as plot -o does
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@main.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file stem (default: RESULTS_DIR/curves); writes .png and .pdf.")
@click.option("--no-bands", is_flag=True, help="Draw the mean curves without their ± 1 sd bands.")
@click.option("--classifier", default=None,
              help="Only this classifier's curves (default: every classifier, panels of its own each).")
@metric_option
def plot(results_dir: Path, out: Path | None, no_bands: bool, classifier: str | None, metric: str) -> None:
    """Accuracy (or --metric) vs number of selected features: a panel per dataset, a line per
    selector, light ± 1 sd bands."""
    from fsbench.evaluation.metrics import check_metric, datasets_without_metric, metric_label, missing_reason
    from fsbench.report import plot_curves
    from fsbench.storage.runs import load_runs

    runs = load_runs(results_dir)
    check_metric(runs, metric, source=str(results_dir))
    lacking = datasets_without_metric(runs, metric)
    if lacking:
        click.echo(f"Note: {', '.join(lacking)} left out: no {metric_label(metric, percent=False)} (the dataset "
                   f"{missing_reason(metric)}).", err=True)
    stem = out or (results_dir if results_dir.is_dir() else results_dir.parent) / "curves"
    for path in plot_curves(runs, stem.with_suffix("") if stem.suffix in (".png", ".pdf") else stem,
                            bands=not no_bands, classifier=classifier, metric=metric):
        click.echo(f"wrote {path}")
