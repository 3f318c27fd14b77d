"""``fsbench rankings regenerate|check``: a results folder's rankings.csv.gz, refitted for results
computed before fsbench kept rankings, or checked against the rows it should have produced.

The work is :func:`fsbench.engine.regenerate_rankings.regenerate_rankings` and
:func:`fsbench.engine.check_rankings.check_rankings`; here are their options, their progress lines
(on stderr) and Ctrl-C, which stops their worker processes and says what was kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from fsbench.cli.group import EXIT_INTERRUPTED, data_dir_option, main

__all__ = ["rankings"]



def _say(text: str) -> None:
    click.echo(text, err=True)


@main.group()
def rankings() -> None:
    """The rankings a results folder keeps (rankings.csv.gz): regenerate them, or check them.

    \b
      fsbench rankings regenerate RESULTS_DIR   # refit every task's selector (older results)
      fsbench rankings check RESULTS_DIR        # drop the rankings that do not reproduce their rows
    """


@rankings.command("regenerate")
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False))
@data_dir_option
@click.option("-j", "--n-jobs", type=int, default=1, show_default=True, help="Parallel fits (-1: all cores).")
def regenerate(results_dir: Path, data_dir: Path | None, n_jobs: int) -> None:
    """Write RESULTS_DIR/rankings.csv.gz by refitting every task of RESULTS_DIR/runs.csv.gz.

    Each task's selector is fitted again as the run fitted it (same split, preprocessing, seed),
    with the parameters its rows record. Resumable: run the same command again after an
    interruption.
    """
    from fsbench.engine.console import sigterm_as_interrupt, stop_workers
    from fsbench.engine.regenerate_rankings import regenerate_rankings

    try:
        with sigterm_as_interrupt():
            path = regenerate_rankings(results_dir, data_dir, n_jobs, echo=_say)
    except KeyboardInterrupt:
        stop_workers()
        _say("Interrupted: the rankings refitted so far are kept; run the same command again to continue.")
        sys.exit(EXIT_INTERRUPTED)
    click.echo(f"wrote {path}")


@rankings.command("check")
@click.argument("results_dir", type=click.Path(path_type=Path, file_okay=False))
@data_dir_option
@click.option("-j", "--n-jobs", type=int, default=1, show_default=True, help="Parallel replays (-1: all cores).")
def check(results_dir: Path, data_dir: Path | None, n_jobs: int) -> None:
    """Check that RESULTS_DIR's rankings.csv.gz reproduces its rows; drop the rankings that do not.

    Replays each ranked task's final evaluation (one classifier fit per row, not the inner CV)
    and compares its correct count with the row's.
    """
    from fsbench.engine.check_rankings import check_rankings
    from fsbench.engine.console import sigterm_as_interrupt, stop_workers
    from fsbench.storage.rankings import RANKINGS_FILE

    try:
        with sigterm_as_interrupt():
            check_rankings(results_dir, data_dir, n_jobs, echo=_say)
    except KeyboardInterrupt:
        stop_workers()
        _say(f"Interrupted: {RANKINGS_FILE} is unchanged (it is written once, at the end); run the same command "
             "again.")
        sys.exit(EXIT_INTERRUPTED)
