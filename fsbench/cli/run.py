"""``fsbench run``: run an experiment config, print its table, name the files written."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fsbench.cli.group import (
    EXIT_INTERRUPTED,
    EXIT_TASKS_FAILED,
    data_dir_option,
    main,
    scheduler_option,
)

__all__ = ["run"]


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the config; -1 = all cores).")
@data_dir_option
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results folder (default: results/<experiment name>).")
@click.option("--force", is_flag=True, help="Discard earlier results in the folder and recompute everything.")
@click.option("--skip-missing", is_flag=True,
              help="Leave out datasets whose files are not found (and say so) instead of stopping.")
@click.option("--recompute-stale", is_flag=True,
              help="Recompute the tasks whose rows other code computed (a selector or the protocol changed) "
                   "instead of stopping.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--dry-run", is_flag=True,
              help="Check the config and print the number of tasks and their estimated compute and wall time per "
                   "dataset and selector; compute and write nothing.")
@scheduler_option
def run(config: Path, n_jobs: int | None, data_dir: Path | None, out: Path | None, force: bool,
        skip_missing: bool, recompute_stale: bool, quiet: bool, dry_run: bool, scheduler: str | None) -> None:
    """Run the experiment described by the YAML file CONFIG.

    Every task (dataset x split x selector) is saved as soon as it finishes, so an interrupted
    run (Ctrl-C, SIGTERM, a full disk) resumes where it stopped when the same command is run
    again. Writes runs.csv.gz, the resolved config.yaml, runlog.jsonl, table.md and
    curves.png/.pdf to the results folder; only one run at a time may write a folder.

    A run predicted to take more than an hour says so before its first task starts; --dry-run
    prints the prediction (fsbench.engine.cost_model) and runs nothing.
    """
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.console import INTERRUPTED, Progress, sigterm_as_interrupt
    from fsbench.engine.cost_model import estimate_run, format_estimate, over_an_hour, starting_estimate
    from fsbench.engine.preflight import load_checked
    from fsbench.engine.runner import run_experiment
    from fsbench.report import format_table, plot_curves
    from fsbench.storage.atomic import atomic_write_text
    from fsbench.storage.rankings import RANKINGS_FILE
    from fsbench.storage.task_files import load_failures

    experiment = load_experiment(config)
    out = out or Path("results") / experiment.name
    if dry_run:
        click.echo(format_estimate(estimate_run(experiment, out, data_dir=data_dir, n_jobs=n_jobs, force=force,
                                                skip_missing=skip_missing, recompute_stale=recompute_stale,
                                                scheduler=scheduler)))
        return
    data, _ = load_checked(experiment, out, data_dir=data_dir, n_jobs=n_jobs, skip_missing=skip_missing)
    progress = Progress(experiment.name, out, quiet=quiet)

    def start(n_pending: int, n_total: int) -> None:  # checked and restored, nothing run yet
        warning = over_an_hour(starting_estimate(experiment, data, out, n_jobs=n_jobs, scheduler=scheduler))
        if warning is not None:
            click.echo(warning, err=True)
        progress.start(n_pending, n_total)

    try:
        with sigterm_as_interrupt():
            result = run_experiment(experiment, out, data=data, data_dir=data_dir, n_jobs=n_jobs, force=force,
                                    skip_missing=skip_missing, recompute_stale=recompute_stale,
                                    on_start=start, on_task_done=progress.done, on_note=progress.note,
                                    scheduler=scheduler, on_running=progress.running)
    except KeyboardInterrupt:  # the run's workers are stopped already (fsbench.engine.workers)
        progress.close()
        click.echo(f"\n{INTERRUPTED}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        progress.close()
    if result.skipped:
        click.echo(f"Skipped (files not found): {', '.join(result.skipped)}; "
                   "'fsbench datasets fetch NAME' gets them.", err=True)
    names = ["config.yaml"] + (["runlog.jsonl"] if result.n_resumed < result.n_tasks else [])
    names += ["failures.csv"] if result.failed else []
    figures: list[Path] = []
    if len(result.runs):
        failures = load_failures(result.out_dir)
        table = format_table(result.runs, None, "markdown", failures=failures)
        atomic_write_text(result.out_dir / "table.md", table)
        figures = plot_curves(result.runs, result.out_dir / "curves", title=experiment.name)
        click.echo(table)
        names += ["runs.csv.gz", "table.md"]
        names += [RANKINGS_FILE] if (result.out_dir / RANKINGS_FILE).is_file() else []
    written = [result.out_dir / name for name in names] + list(figures)
    click.echo(f"{result.n_tasks} tasks ({result.n_resumed} resumed) in {result.seconds:.1f} s; wrote "
               f"{', '.join(str(p) for p in written)} and the task files in {result.out_dir / 'tasks'}/")
    if len(result.runs):  # the last line of the output: how to browse what was written
        click.echo(f"Browse the results: fsbench html {result.out_dir}")
    if result.failed:
        click.echo(f"Error: {len(result.failed)} of {result.n_tasks} tasks failed (failures.csv); run the same "
                   "command again to retry them:", err=True)
        for failure in result.failed[:20]:
            click.echo(f"  {failure['dataset']} repeat {failure['repeat']} fold {failure['fold']} "
                       f"{failure['selector']}: {failure['error']}", err=True)
        if len(result.failed) > 20:
            click.echo(f"  ... and {len(result.failed) - 20} more in failures.csv", err=True)
        sys.exit(EXIT_TASKS_FAILED)
