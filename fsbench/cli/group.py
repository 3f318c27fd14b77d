"""The ``fsbench`` click group, its error handling and the options several commands share.

Every command module of this package registers its commands on :data:`main`; the group turns a
FsbenchError, a bad option or an OSError into one sentence on stderr with exit status 2, and
Ctrl-C into one line with status 130, and a closed output pipe (``| head``) into a quiet exit.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from fsbench import __version__
from fsbench.errors import FsbenchError

__all__ = ["EXIT_INTERRUPTED", "EXIT_TASKS_FAILED", "EXIT_USER_ERROR", "PAPERS", "data_dir_option", "main",
           "metric_option", "paper_layout", "scheduler_option"]

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a filter whose reader closed the pipe
EXIT_TASKS_FAILED = 1  # the run finished, but some tasks failed (failures.csv); rerunning retries them


class _Group(click.Group):
    """Turns a FsbenchError, or an OSError of the file system (a full disk, a read-only folder), into
    one sentence on stderr and exit status 2, and Ctrl-C into one line and status 130: no traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        from fsbench.storage.lock import describe_os_error

        try:
            return super().invoke(ctx)
        except FsbenchError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except click.UsageError as exc:  # a bad option or argument: one line, not click's three
            help_hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{help_hint}", err=True)
            ctx.exit(EXIT_USER_ERROR)
        except BrokenPipeError:
            # the reader of the output went away (``fsbench selectors | head``): stop quietly, as a
            # Unix filter does; stdout goes to /dev/null so that its final flush cannot fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(EXIT_BROKEN_PIPE)
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


scheduler_option = click.option(
    "--scheduler", default=None, metavar="ADDRESS",
    help="Run the tasks on a Dask cluster: 'local' (or 'local:N') starts N worker processes here, "
         "tcp://HOST:8786 uses a running scheduler (pip install 'fsbench[dask]'). The same rows as without.")

# the names of fsbench.evaluation.metrics.ALL_METRICS, written out: importing that module (numpy, pandas)
# would slow every command's start; a test checks that the two agree
metric_option = click.option(
    "--metric", default="accuracy", show_default=True,
    type=click.Choice(["accuracy", "balanced_accuracy", "macro_f1", "kappa", "mcc", "relevant_recall",
                       "relevant_precision", "probe_rate"]),
    help="The score shown. Classification metrics are computed from the rows' per-class counts (pooled over "
         "the folds of a repetition by summing them); every one but accuracy needs results recorded with those "
         "counts. relevant_recall (relevant top-k features / min(k, number relevant)), relevant_precision "
         "(relevant top-k features / k) and probe_rate (probes in the top k / k; lower is better) need a dataset "
         "with known relevant features or probes.")

# no envvar: click would hand $FSBENCH_DATA to the library as one folder, while the library
# searches each folder of it (several may be joined with the OS path separator)
data_dir_option = click.option(
    "--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder with the dataset files (default: the folders of $FSBENCH_DATA, then the per-user cache).",
)


#: the papers ``reproduce``, ``check`` and ``table --paper`` know
PAPERS = ("rfs", "dso-fs", "sl2p")

PAPER_LAYOUT_OPTIONS = [
    click.option("--configs", "configs_dir", type=click.Path(file_okay=False, path_type=Path),
                 default=Path("configs") / "papers", show_default=True, help="Folder of the paper configs."),
    click.option("--results", "results_root", type=click.Path(file_okay=False, path_type=Path),
                 default=Path("results") / "papers", show_default=True, help="Folder of the paper results."),
]


def paper_layout(fn: Any) -> Any:
    """Add --configs and --results (where the papers' configs and results live) to a command."""
    for option in reversed(PAPER_LAYOUT_OPTIONS):
        fn = option(fn)
    return fn
