"""``fsbench stats``: ranks, tests, stability and cost over one or more results folders."""

from __future__ import annotations

from pathlib import Path

import click

from fsbench.cli.group import main, metric_option

__all__ = ["stats"]


def _k_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | str | None:
    if value is None or value == "all":
        return value
    try:
        return int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither a number of features nor 'all'.") from None


@main.command()
@click.argument("results_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--k", "k", callback=_k_option, default=None, metavar="K|all",
              help="Number of selected features compared (default: the largest k every dataset ran); "
                   "'all': a Friedman block per (dataset, k).")
@click.option("--classifier", default=None, help="This classifier's results (needed when they hold several).")
@click.option("--baseline", default=None, metavar="LABEL", help="Compare every selector with this one only.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level, in (0, 1).")
@click.option("--rope", type=float, default=0.01, show_default=True,
              help="Region of practical equivalence of the Bayesian test, in accuracy (0.01 = 1 point).")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="Output folder (default: RESULTS_DIR/stats; several folders: their common parent's "
                   "stats/NAME1+NAME2).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv", "latex"]), default="markdown",
              show_default=True, help="Format of the printed summary.")
@metric_option
def stats(results_dirs: tuple[Path, ...], k: int | str | None, classifier: str | None, baseline: str | None,
          alpha: float, rope: float, out: Path | None, fmt: str, metric: str) -> None:
    """Statistics over one or more results folders: ranks, tests, stability, cost.

    Writes ranks.csv, friedman.csv and cd.png/.pdf (Friedman over the datasets, each averaged
    over its repetitions; Nemenyi critical difference), pairwise.csv (per dataset: corrected
    resampled t-test, Wilcoxon, Bayesian correlated t-test; scope 'across': Wilcoxon over the
    datasets with Holm's correction), stability.csv and stability.png (from rankings.csv.gz),
    cost.csv and pareto.png. Several folders are pooled: their datasets are the blocks.
    --metric ranks, tests and plots another score than accuracy (--rope in its units); probe_rate
    ranks the lowest first, and a selection metric leaves out the datasets without it.
    """
    from fsbench.report.stats_command import run_stats

    result = run_stats(list(results_dirs), k=k, classifier=classifier, baseline=baseline, alpha=alpha, rope=rope,
                       out=out, fmt=fmt, metric=metric)
    for note in result.notes:
        click.echo(f"Note: {note}.", err=True)
    click.echo(result.summary, nl=False)
    click.echo(f"wrote {', '.join(str(p) for p in result.written)}", err=True)
