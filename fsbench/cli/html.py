"""``fsbench html``: the browsable page of results folders (tables, curves, statistics, downloads)."""

from __future__ import annotations

from pathlib import Path

import click

from fsbench.cli.group import main, metric_option

__all__ = ["html"]


@main.command()
@click.argument("results_dirs", nargs=-1, required=True, metavar="RESULTS_DIR...",
                type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the page (default: RESULTS_DIR/html, or the folders' common parent's html/).")
@metric_option
def html(results_dirs: tuple[Path, ...], out: Path | None, metric: str) -> None:
    """Write a browsable page of the results: OUT/index.html and the files beside it.

    Per dataset, a sortable and filterable table of the metric at each k (best and not
    significantly worse marked) and its curves; across datasets the critical-difference
    diagram, stability, cost and failures; runs.csv.gz and the tables as downloads. The page
    switches the metric (--metric: the one shown first) without regenerating, and works offline
    (needs plotly: pip install 'fsbench[html]').
    """
    from fsbench.report.html import write_results_page

    index = write_results_page(list(results_dirs), out, metric)
    click.echo(f"wrote {index} (open it in a browser; it works offline)")
