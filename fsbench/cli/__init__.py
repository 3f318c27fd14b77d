"""The ``fsbench`` command line: parse, call the library, print. Nothing else lives here."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from fsbench import __version__
from fsbench.errors import FsbenchError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_TASKS_FAILED = 1  # the run finished, but some tasks failed (failures.csv); rerunning retries them


class _Group(click.Group):
    """Turns a FsbenchError, or an OSError of the file system (a full disk, a read-only folder), into
    one sentence on stderr and exit status 2, and Ctrl-C into one line and status 130: no traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from fsbench.storage import describe_os_error

        try:
            return super().invoke(ctx)
        except FsbenchError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except click.UsageError as exc:  # a bad option or argument: one line, not click's three
            help_hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{help_hint}", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except OSError as exc:
            click.echo(f"Error: {describe_os_error(exc, 'a file')}; check the path, its permissions and free "
                       "space.", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            click.echo("\nInterrupted.", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fsbench")
def main() -> None:
    """fsbench: reproduce multi-class feature-selection papers and compare selectors fairly.

    Typical session:

    \b
      fsbench run configs/quickstart.yaml     # run an experiment (resumable)
      fsbench table results/quickstart        # mean ± std accuracy table
      fsbench plot results/quickstart         # accuracy vs number of features
      fsbench datasets list                   # which datasets are known and found
      fsbench selectors                       # every selector and its parameters
    """


_scheduler_option = click.option(
    "--scheduler", default=None, metavar="ADDRESS",
    help="Run the tasks on a Dask cluster: 'local' (or 'local:N') starts N worker processes here, "
         "tcp://HOST:8786 uses a running scheduler (pip install 'fsbench[dask]'). The same rows as without.")

_metric_option = click.option(
    "--metric", default="accuracy", show_default=True,
    type=click.Choice(["accuracy", "balanced_accuracy", "macro_f1", "kappa", "mcc"]),
    help="The score shown, computed from the rows' per-class counts (pooled over the folds of a repetition "
         "by summing them); every metric but accuracy needs results recorded with those counts.")

_data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), envvar="FSBENCH_DATA",
    help="Folder with the dataset files (default: $FSBENCH_DATA, then the per-user cache).",
)


@main.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the config; -1 = all cores).")
@_data_dir_option
@click.option("--out", "-o", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results folder (default: results/<experiment name>).")
@click.option("--force", is_flag=True, help="Discard earlier results in the folder and recompute everything.")
@click.option("--skip-missing", is_flag=True,
              help="Leave out datasets whose files are not found (and say so) instead of stopping.")
@click.option("--recompute-stale", is_flag=True,
              help="Recompute the tasks whose rows other code computed (a selector or the protocol changed) "
                   "instead of stopping.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_scheduler_option
def run(config: Path, n_jobs: int | None, data_dir: Path | None, out: Path | None, force: bool,
        skip_missing: bool, recompute_stale: bool, quiet: bool, scheduler: str | None) -> None:
    """Run the experiment described by the YAML file CONFIG.

    Every task (dataset x split x selector) is saved as soon as it finishes, so an interrupted
    run (Ctrl-C, SIGTERM, a full disk) resumes where it stopped when the same command is run
    again. Writes runs.csv.gz, the resolved config.yaml, runlog.jsonl, table.md and
    curves.png/.pdf to the results folder; only one run at a time may write a folder.
    """
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.console import INTERRUPTED, Progress, sigterm_as_interrupt
    from fsbench.engine.runner import run_experiment
    from fsbench.report import format_table, plot_curves
    from fsbench.storage import RANKINGS_FILE, atomic_write_text, load_failures

    experiment = load_experiment(config)
    out = out or Path("results") / experiment.name
    progress = Progress(experiment.name, out, quiet=quiet)
    try:
        with sigterm_as_interrupt():
            result = run_experiment(experiment, out, data_dir=data_dir, n_jobs=n_jobs, force=force,
                                    skip_missing=skip_missing, recompute_stale=recompute_stale,
                                    on_start=progress.start, on_task_done=progress.done, on_note=progress.note,
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
    if result.failed:
        click.echo(f"Error: {len(result.failed)} of {result.n_tasks} tasks failed (failures.csv); run the same "
                   "command again to retry them:", err=True)
        for failure in result.failed[:20]:
            click.echo(f"  {failure['dataset']} repeat {failure['repeat']} fold {failure['fold']} "
                       f"{failure['selector']}: {failure['error']}", err=True)
        if len(result.failed) > 20:
            click.echo(f"  ... and {len(result.failed) - 20} more in failures.csv", err=True)
        sys.exit(EXIT_TASKS_FAILED)


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
@click.option("--paper", type=click.Choice(["rfs", "dso-fs", "sl2p"]), default=None,
              help="Regenerate this paper's table(s) beside the printed values "
                   "(RESULTS_DIR defaults to results/papers/PAPER).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "csv", "latex"]), default="markdown",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the table to this file instead of printing it.")
@click.option("--classifier", default=None,
              help="Only this classifier's results (default: every classifier, one table each).")
@_metric_option
def table(results_dir: Path | None, k: int | None, paper: str | None, fmt: str, output: Path | None,
          classifier: str | None, metric: str) -> None:
    """Mean ± std test accuracy (or --metric) per dataset x selector at k selected features.

    A cell marked † includes a classifier fit that did not converge. With --paper, each cell of
    the paper's table reads "ours (printed, ours - printed)", with the reproduction rule's
    verdicts (see results/papers/REPORT.md); the papers' tables are of accuracy only.
    """
    from fsbench.report import format_table
    from fsbench.storage import load_runs

    if paper is not None and metric != "accuracy":
        raise FsbenchError(f"The papers' tables print accuracy only, so --paper cannot show {metric}; leave out "
                           "--metric for the paper's table, or give a RESULTS_DIR without --paper for its "
                           f"{metric}.")
    if paper is None:
        if results_dir is None:
            raise FsbenchError("Give a RESULTS_DIR (for example results/quickstart) or --paper NAME.")
        from fsbench.evaluation.metrics import check_metric
        from fsbench.storage import load_failures

        runs = load_runs(results_dir)
        check_metric(runs, metric, source=str(results_dir))
        text = format_table(runs, k, fmt, classifier=classifier, failures=load_failures(results_dir),
                            metric=metric)
    else:
        from fsbench.papers import TABLES
        from fsbench.papers.tables import compare_table, format_paper_table
        from fsbench.report.results import complete_runs
        from fsbench.storage import planned_datasets

        folder = Path(results_dir or Path("results") / "papers" / paper)
        home = folder if folder.is_dir() else folder.parent
        runs, (planned, skipped) = complete_runs(home, load_runs(folder)), planned_datasets(home)
        _check_paper_folder(paper, home, runs, planned)
        parts = [format_paper_table(t, compare_table(t, runs, planned, skipped, classifier=classifier), fmt)
                 for t in TABLES[paper]]
        text = "\n".join(parts)
    if output:
        from fsbench.storage import atomic_write_text

        atomic_write_text(output, text)  # creates a missing folder, as plot -o does
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


def _check_paper_folder(paper: str, folder: Path, runs: Any, planned: list[str]) -> None:
    """Refuse ``table --paper`` on a folder of another experiment: one sentence naming what it holds."""
    from fsbench.papers import other_papers_experiment, paper_datasets
    from fsbench.storage import planned_selectors, read_config_doc

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


@main.command()
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file stem (default: RESULTS_DIR/curves); writes .png and .pdf.")
@click.option("--no-bands", is_flag=True, help="Draw the mean curves without their ± 1 sd bands.")
@click.option("--classifier", default=None,
              help="Only this classifier's curves (default: every classifier, panels of its own each).")
@_metric_option
def plot(results_dir: Path, out: Path | None, no_bands: bool, classifier: str | None, metric: str) -> None:
    """Accuracy (or --metric) vs number of selected features: a panel per dataset, a line per
    selector, light ± 1 sd bands."""
    from fsbench.evaluation.metrics import check_metric
    from fsbench.report import plot_curves
    from fsbench.storage import load_runs

    runs = load_runs(results_dir)
    check_metric(runs, metric, source=str(results_dir))
    stem = out or (results_dir if results_dir.is_dir() else results_dir.parent) / "curves"
    for path in plot_curves(runs, stem.with_suffix("") if stem.suffix in (".png", ".pdf") else stem,
                            bands=not no_bands, classifier=classifier, metric=metric):
        click.echo(f"wrote {path}")


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
@_metric_option
def stats(results_dirs: tuple[Path, ...], k: int | str | None, classifier: str | None, baseline: str | None,
          alpha: float, rope: float, out: Path | None, fmt: str, metric: str) -> None:
    """Statistics over one or more results folders: ranks, tests, stability, cost.

    Writes ranks.csv, friedman.csv and cd.png/.pdf (Friedman over the datasets, each averaged
    over its repetitions; Nemenyi critical difference), pairwise.csv (per dataset: corrected
    resampled t-test, Wilcoxon, Bayesian correlated t-test; scope 'across': Wilcoxon over the
    datasets with Holm's correction), stability.csv and stability.png (from rankings.csv.gz),
    cost.csv and pareto.png. Several folders are pooled: their datasets are the blocks.
    --metric ranks, tests and plots another score than accuracy (--rope in its units).
    """
    from fsbench.report.stats_command import run_stats

    result = run_stats(list(results_dirs), k=k, classifier=classifier, baseline=baseline, alpha=alpha, rope=rope,
                       out=out, fmt=fmt, metric=metric)
    for note in result.notes:
        click.echo(f"Note: {note}.", err=True)
    click.echo(result.summary, nl=False)
    click.echo(f"wrote {', '.join(str(p) for p in result.written)}", err=True)


_paper_layout_options = [
    click.option("--configs", "configs_dir", type=click.Path(file_okay=False, path_type=Path),
                 default=Path("configs") / "papers", show_default=True, help="Folder of the paper configs."),
    click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path),
                 default=Path("results") / "papers", show_default=True, help="Folder of the paper results."),
]


def _paper_layout(fn: Any) -> Any:
    for option in reversed(_paper_layout_options):
        fn = option(fn)
    return fn


@main.command()
@click.argument("papers", nargs=-1, type=click.Choice(["rfs", "dso-fs", "sl2p"]))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the configs).")
@click.option("--no-variants", is_flag=True, help="Only the papers' protocols, not the variant configs.")
@click.option("--collect", is_flag=True,
              help="Run nothing: write runs.csv.gz, tables and figures from the tasks finished so far.")
@click.option("--recompute-stale", is_flag=True,
              help="Recompute the tasks whose rows other code computed instead of stopping.")
@_data_dir_option
@_scheduler_option
@_paper_layout
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
    from fsbench.storage import RUNS_FILE, atomic_write_text, collect_runs, load_runs

    layout = Layout(configs_dir, results_root)
    for paper in papers or ("rfs", "dso-fs", "sl2p"):
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
@click.argument("papers", nargs=-1, type=click.Choice(["rfs", "dso-fs", "sl2p"]))
@click.option("--n-jobs", "-j", type=int, default=None, help="Parallel workers (overrides the configs).")
@_data_dir_option
@_scheduler_option
@_paper_layout
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
    from fsbench.storage import RUNS_FILE

    layout = Layout(configs_dir, results_root)
    failed = False
    for paper in papers or ("rfs", "dso-fs", "sl2p"):
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
@_paper_layout
def report(configs_dir: Path, results_root: Path) -> None:
    """Write results/papers/REPORT.md from the paper results: tables, shares, claims, costs."""
    from fsbench.papers.layout import Layout
    from fsbench.papers.report import write_report

    click.echo(f"wrote {write_report(Layout(configs_dir, results_root))}")


@main.command()
def selectors() -> None:
    """List every registered selector: a one-line description, then each parameter with its
    allowed values and default (a config's params and grid are checked against them)."""
    from fsbench.configuration.parse import RESERVED_PARAMS
    from fsbench.selectors import registry
    from fsbench.selectors.base import format_value

    for info in registry().values():
        click.echo(f"{info.name:<10} {info.summary}")
        shown = [k for k in info.params if k != "n_features_to_select"]
        for k in shown:
            if k in RESERVED_PARAMS:
                click.echo(f"{'':<10} {k}: not settable, {RESERVED_PARAMS[k]}")
            else:
                click.echo(f"{'':<10} {k}: {info.allowed[k]}, default {format_value(info.params[k])}")
        if not shown:
            click.echo(f"{'':<10} (no parameters)")
    from fsbench.plugins import list_plugins

    plugins = list_plugins()
    if plugins:
        click.echo("\nInstalled by packages (entry-point group fsbench.selectors):")
    for plugin in plugins:
        status = "" if plugin.status == "ok" else f" [{plugin.status}]"
        click.echo(f"{plugin.name:<10} {plugin.summary}{status}")
        click.echo(f"{'':<10} {plugin.kind or 'unloadable'} {plugin.path} ({plugin.distribution})")
        for k, default in plugin.params.items():
            click.echo(f"{'':<10} {k}: default {format_value(default)}")
    click.echo("\nAny scikit-learn estimator or score function can be used by import path: "
               "'class: package.module:Name' or 'score_func: package.module:function' in a config.")


@main.group()
def datasets() -> None:
    """Datasets of the three papers: list them, describe one, fetch the files."""


@datasets.command("list")
@_data_dir_option
def datasets_list(data_dir: Path | None) -> None:
    """Every known dataset with its shape, classes, papers and whether its files are found."""
    from fsbench.datasets import all_datasets, locate

    rows = [("name", "shape", "classes", "papers", "found")]
    for spec in all_datasets():
        found = "built-in" if not spec.files else ("yes" if locate(spec.name, data_dir) else "no")
        rows.append((spec.name, f"{spec.n_samples} x {spec.n_features}", str(spec.n_classes),
                     ",".join(spec.papers) or "-", found))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())


@datasets.command("info")
@click.argument("name")
@_data_dir_option
@click.option("--label", default=None, metavar="COLUMN",
              help="A data file's label column: name or position from 0 (default: the last).")
@click.option("--x", "x", default=None, metavar="VAR", help="A .mat/.npz file's data variable.")
@click.option("--y", "y", default=None, metavar="VAR", help="A .mat/.npz file's label variable.")
def datasets_info(name: str, data_dir: Path | None, label: str | None, x: str | None,
                  y: str | None) -> None:
    """Everything the registry knows about dataset NAME (aliases accepted), or how fsbench
    reads the data file NAME (a path: an existing file, or one with a folder or a data file
    extension): its format, shape, label column, classes with their sizes, constant features
    and sha256. --label, --x and --y are a config's label:, x: and y:.
    """
    from fsbench.datasets import data_dirs, locate, resolve
    from fsbench.datasets.files import COMMAND_LINE_OPTIONS, describe_data_file, looks_like_data_file, not_a_file
    from fsbench.datasets.integrity import read_record
    from fsbench.errors import ConfigError

    if looks_like_data_file(name):
        click.echo(describe_data_file(Path(name), label=label, x=x, y=y, option_names=COMMAND_LINE_OPTIONS))
        return
    try:
        spec = resolve(name)
    except ConfigError:
        if Path(name).is_dir():  # a folder: say so, not "unknown dataset"
            raise not_a_file(Path(name)) from None
        raise
    if label is not None or x is not None or y is not None:
        raise FsbenchError(f"--label, --x and --y describe how to read a data file, and {name!r} is "
                           "not a path; give the file's path, or leave them out for a registered "
                           "dataset.")
    found = locate(spec.name, data_dir)
    click.echo(f"{spec.title} ({spec.name})")
    click.echo(f"  aliases:  {', '.join(spec.aliases) or '-'}")
    click.echo(f"  shape:    {spec.n_samples} samples x {spec.n_features} features, {spec.n_classes} classes")
    click.echo(f"  papers:   {', '.join(spec.papers) or '-'}")
    click.echo(f"  source:   {spec.source}")
    for f in spec.files:  # check: sha256=..., git-blob=... or unchecked (shape and classes only)
        click.echo(f"  file:     {f.name}  {f.check}  url={f.url or 'none known'}")
    if spec.notes:
        click.echo(f"  notes:    {spec.notes}")
    if not spec.files:
        click.echo("  found:    built in (no file needed)")
    elif found:
        click.echo(f"  found:    {', '.join(str(p) for p in found)}")
        for path in found:
            if (recorded := read_record(path)) is not None:
                click.echo(f"  recorded: sha256={recorded} for {path.name} when it was downloaded")
    else:
        click.echo(f"  found:    no (searched {', '.join(str(d) for d in data_dirs(data_dir))}); "
                   f"run 'fsbench datasets fetch {spec.name}'")


@datasets.command("fetch")
@click.argument("names", nargs=-1)
@click.option("--all", "fetch_all", is_flag=True, help="Fetch every dataset that has a known source URL.")
def datasets_fetch(names: tuple[str, ...], fetch_all: bool) -> None:
    """Download dataset NAMES (or --all) from their registered source into the per-user cache.

    Every file is verified before it is kept, then the dataset is read and checked for shape
    and classes; a download that fails a check is discarded and nothing is kept.

    \b
      by sha256:       glioma, allaml, prostate-ge, isolet, isolet-subset, semeion,
                       umist, ar, brain-tumor-2, srbct, mll
      by git blob id:  lung, cll-sub-111, carcinomas (the ids of a pinned
                       scikit-feature commit; the sha256 of what arrived is then
                       recorded beside the file as FILE.sha256 and checked on load)
      no download:     prostate-ms (get it by hand); digits is built in

    With several names or --all, a dataset that fails does not stop the others: the
    failures are listed at the end, one line each with the reason, and the exit status is 2.
    """
    from fsbench.datasets.fetch import fetch_many

    if fetch_all == bool(names):
        raise FsbenchError("Give one or more dataset names or --all (not both); see 'fsbench datasets list'.")
    results = []
    for result in fetch_many(None if fetch_all else names):
        results.append(result)
        if result.ok:
            for line in result.lines():
                click.echo(line)
    failed = [r for r in results if not r.ok]
    if failed and len(results) == 1:
        raise FsbenchError(str(failed[0].error))
    if failed:
        click.echo(f"Error: {len(failed)} of {len(results)} datasets could not be fetched:", err=True)
        for r in failed:
            click.echo(f"  {r.lines()[0]}", err=True)
        click.get_current_context().exit(EXIT_USER_ERROR)


if __name__ == "__main__":  # pragma: no cover
    main()
