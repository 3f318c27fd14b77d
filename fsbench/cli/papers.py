"""The papers' commands: ``fsbench reproduce``, ``check`` and ``report``, and the table of
``fsbench table --paper`` (:func:`paper_table`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from fsbench.cli.group import (
    EXIT_INTERRUPTED,
    PAPERS,
    data_dir_option,
    main,
    paper_layout,
    scheduler_option,
)
from fsbench.errors import FsbenchError

__all__ = ["check", "paper_table", "report", "reproduce"]


@main.command()
@click.argument("papers", nargs=-1, type=click.Choice(PAPERS))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the configs).")
@click.option("--no-variants", is_flag=True, help="Only the papers' protocols, not the variant configs.")
@click.option("--collect", is_flag=True,
              help="Run nothing: write runs.csv.gz, tables and figures from the tasks finished so far.")
@click.option("--recompute-stale", is_flag=True,
              help="Recompute the tasks whose rows other code computed instead of stopping.")
@data_dir_option
@scheduler_option
@paper_layout
def reproduce(papers: tuple[str, ...], n_jobs: int | None, no_variants: bool, collect: bool,
              recompute_stale: bool, data_dir: Path | None, scheduler: str | None, configs_dir: Path,
              results_root: Path) -> None:
    """Run every paper's config (default: all three) on every available dataset; write its tables.

    Resumable: run it again after an interruption. Then ``fsbench report`` writes REPORT.md
    (which labels the results of unfinished runs, collected with --collect, as partial).
    """
    from fsbench.papers.layout import Layout
    from fsbench.papers.reproduce import write_paper_figures, write_paper_tables, write_variant_figures
    from fsbench.report import format_table, plot_curves
    from fsbench.storage.atomic import atomic_write_text
    from fsbench.storage.runs import RUNS_FILE, collect_runs, load_runs

    layout = Layout(configs_dir, results_root)
    for paper in papers or PAPERS:
        jobs = [(layout.config(paper), layout.results_dir(paper), False)]
        if not no_variants:
            jobs += [(c, layout.variant_dir(c), True) for c in layout.variants(paper)]
        for config, out, is_variant in jobs:
            if collect:
                if collect_runs(out) is None:
                    continue
            else:
                click.echo(f"{config} -> {out}", err=True)
                _run_paper_config(config, out, data_dir, n_jobs, recompute_stale, scheduler)
            runs = load_runs(out)
            atomic_write_text(out / "table.md", format_table(runs, None, "markdown"))
            plot_curves(runs, out / "curves", title=out.name)
            if is_variant:
                write_variant_figures(out, config, layout.config(paper), data_dir)
        if not (layout.results_dir(paper) / RUNS_FILE).is_file():
            continue
        written = write_paper_tables(paper, layout.results_dir(paper))
        written += write_paper_figures(paper, layout.results_dir(paper), layout.config(paper), data_dir)
        for path in written:
            click.echo(f"wrote {path}")


def _run_paper_config(config: Path, out: Path, data_dir: Path | None, n_jobs: int | None,
                      recompute_stale: bool, scheduler: str | None = None) -> None:
    from fsbench.engine.console import INTERRUPTED, PROGRESS_EVERY, sigterm_as_interrupt
    from fsbench.papers.reproduce import run_config

    last_line = [time.monotonic()]

    def done(task_id: str) -> None:
        last_line[0] = time.monotonic()
        click.echo(f"  done {task_id}", err=True)

    def running(tasks: list[tuple[str, float]]) -> None:  # a run silent for a minute names its tasks
        if tasks and time.monotonic() - last_line[0] >= PROGRESS_EVERY:
            last_line[0] = time.monotonic()
            click.echo("  running " + ", ".join(f"{seconds:.0f} s: {name}" for name, seconds in tasks), err=True)

    try:
        with sigterm_as_interrupt():
            run_config(config, out, data_dir=data_dir, n_jobs=n_jobs, recompute_stale=recompute_stale,
                       scheduler=scheduler, on_task_done=done, on_running=running,
                       on_note=lambda text: click.echo(f"  Note: {text}.", err=True))
    except KeyboardInterrupt:  # the run's workers are stopped already (fsbench.engine.workers)
        click.echo(f"\n{INTERRUPTED}", err=True)
        sys.exit(EXIT_INTERRUPTED)


@main.command()
@click.argument("papers", nargs=-1, type=click.Choice(PAPERS))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the configs).")
@data_dir_option
@scheduler_option
@paper_layout
def check(papers: tuple[str, ...], n_jobs: int | None, data_dir: Path | None, scheduler: str | None,
          configs_dir: Path, results_root: Path) -> None:
    """Rerun a small faithful subset of each paper and compare it with the committed results.

    Fails (exit 1) when a rerun row differs from the committed one, when a printed cell that
    reproduced no longer does, or when a committed table is stale. See fsbench/papers/check.py.
    """
    import tempfile

    from fsbench.configuration.parse import load_experiment
    from fsbench.papers.check import CHECK_SUBSETS, check_paper
    from fsbench.papers.layout import Layout
    from fsbench.storage.runs import RUNS_FILE

    layout = Layout(configs_dir, results_root)
    failed = False
    for paper in papers or PAPERS:
        results_dir = layout.results_dir(paper)
        if not (results_dir / RUNS_FILE).is_file():
            raise FsbenchError(f"No committed results in {str(results_dir)!r}; run 'make reproduce' first.")
        datasets, repeats = CHECK_SUBSETS[paper]
        click.echo(f"{paper}: rerunning {', '.join(datasets)}, first {repeats} repetitions ...", err=True)
        with tempfile.TemporaryDirectory(prefix=f"fsbench-check-{paper}-") as work:
            result = check_paper(paper, load_experiment(layout.config(paper)), results_dir, Path(work),
                                 data_dir=data_dir, n_jobs=n_jobs, scheduler=scheduler)
        if result.ok:
            same = result.n_rows - len(result.rounding)
            click.echo(f"{paper}: OK: {same} rows identical to the committed results"
                       + (f", {len(result.rounding)} decided by rounding" if result.rounding else "")
                       + f"; {result.reproducing} reproducing printed cells still reproduce.")
            for row in result.rounding:
                click.echo(f"  decided by rounding: {row}")
        else:
            failed = True
            click.echo(f"{paper}: FAILED", err=True)
            for problem in result.problems:
                click.echo(f"  - {problem}", err=True)
    if failed:
        sys.exit(1)


@main.command()
@click.option("--html", "as_html", is_flag=True,
              help="Also write the browsable page RESULTS/html/index.html (needs plotly: pip install 'fsbench[html]').")
@paper_layout
def report(as_html: bool, configs_dir: Path, results_root: Path) -> None:
    """Write results/papers/REPORT.md from the paper results: tables, shares, claims, costs
    (and with --html the same as a page: results/papers/html/index.html)."""
    from fsbench.papers.layout import Layout
    from fsbench.papers.report import write_report

    layout = Layout(configs_dir, results_root)
    if as_html:
        from fsbench.report.html.page import plotly_js

        plotly_js()  # refuse before anything is written when plotly is missing
    click.echo(f"wrote {write_report(layout)}")
    if as_html:
        from fsbench.report.html.papers_page import write_papers_page

        click.echo(f"wrote {write_papers_page(layout.results, _paper_sections(layout))}")


def _paper_sections(layout: Any) -> list[Any]:
    """What REPORT.md shows of each paper, as the objects fsbench.papers computes, for the page."""
    import pandas as pd

    from fsbench.papers import PAPERS as CITED
    from fsbench.papers import TABLES, TITLES
    from fsbench.papers.claims import claim_sentences, compare_variant, headline_claims
    from fsbench.papers.tables import compare_table, reproduction_summary
    from fsbench.report.html.papers_page import PaperSection, PaperTable, Variant
    from fsbench.report.results import config_comment, load_results, variant_description

    sections = []
    for paper in PAPERS:
        config = layout.config(paper)
        result = load_results(paper, layout.results_dir(paper), config if config.is_file() else None)
        runs = result.complete()
        state = "not run yet" if not result.ran else ("partial" if result.partial else "complete")
        present = set(runs["dataset"]) if runs is not None else set()
        pending = [d for d in result.planned_datasets if d not in present]
        tables = [PaperTable(f"{paper} {t.name}", list(t.row_titles), list(t.column_titles),
                             compare_table(t, runs, pending, result.skipped)) for t in TABLES[paper]]
        ks = sorted({k for t in TABLES[paper] for k in t.ks})
        variants = []
        for variant_config in layout.variants(paper):
            variant = load_results(variant_config.stem, layout.variant_dir(variant_config), variant_config)
            both = result.ran and variant.ran
            variants.append(Variant(variant.name, variant_description(variant_config), variant.results_dir,
                                    compare_variant(result.complete(), variant.complete(), ks) if both else None))
        sections.append(PaperSection(
            paper, TITLES[paper], CITED[paper].citation, config_comment(config) if config.is_file() else "",
            result.results_dir, state, reproduction_summary(pd.concat([t.comparison for t in tables])),
            tables, claim_sentences(paper, headline_claims(paper, runs)) if runs is not None else [], variants))
    return sections


def paper_table(paper: str, results_dir: Path | None, *, fmt: str, classifier: str | None) -> str:
    """``fsbench table --paper``: the paper's tables from its results folder (default
    results/papers/PAPER), each cell beside the printed value."""
    from fsbench.papers import TABLES
    from fsbench.papers.tables import compare_table, format_paper_table
    from fsbench.report.results import complete_runs
    from fsbench.storage.folder import planned_datasets
    from fsbench.storage.runs import load_runs

    folder = Path(results_dir or Path("results") / "papers" / paper)
    home = folder if folder.is_dir() else folder.parent
    runs, (planned, skipped) = complete_runs(home, load_runs(folder)), planned_datasets(home)
    _check_paper_folder(paper, home, runs, planned)
    parts = [format_paper_table(t, compare_table(t, runs, planned, skipped, classifier=classifier), fmt)
             for t in TABLES[paper]]
    return "\n".join(parts)


def _check_paper_folder(paper: str, folder: Path, runs: Any, planned: list[str]) -> None:
    """Refuse ``table --paper`` on a folder of another experiment: one sentence naming what it holds."""
    from fsbench.papers import other_papers_experiment, paper_datasets
    from fsbench.storage.folder import planned_selectors, read_config_doc

    name = read_config_doc(folder).get("name")
    name = None if name is None else str(name)
    datasets = list(dict.fromkeys([*map(str, runs["dataset"].unique()), *planned]))
    selectors = list(dict.fromkeys([*map(str, runs["selector"].unique()), *planned_selectors(folder)]))
    if not other_papers_experiment(paper, name, datasets, selectors):
        return
    what = f"experiment {name!r}" if name else "an experiment"
    raise FsbenchError(f"{folder} holds {what} (datasets {', '.join(datasets)}), not the {paper} paper's "
                       f"(datasets {', '.join(paper_datasets(paper))}); give the {paper} paper's results folder "
                       f"(results/papers/{paper}, written by 'fsbench reproduce {paper}'), or leave out --paper "
                       "for this folder's own table.")
