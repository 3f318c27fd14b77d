"""runs.csv.gz, the tidy results table: one row per (dataset, repeat, fold, selector, k)
(:data:`ROW_KEY`), built from the task files (:mod:`fsbench.storage.task_files`), each task's rows
carrying the digest of their values (:mod:`fsbench.storage.digests`).

Its writers write rankings.csv.gz beside it (:func:`collect_runs`); :func:`load_runs` reads it
with its labels as strings (:mod:`fsbench.storage.csvread`).
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.storage.atomic import atomic_write_bytes
from fsbench.storage.csvread import read_table
from fsbench.storage.digests import DIGEST_COLUMN, with_rows_digests
from fsbench.storage.folder import read_fingerprint
from fsbench.storage.lock import locked
from fsbench.storage.rankings import write_rankings
from fsbench.storage.task_files import TASK_KEY, finished_tasks, read_task_files

#: the tidy results table: CSV, gzip-compressed (RFS's 72,000 rows are 12 MB as plain text, 0.27 MB
#: compressed); pandas reads and writes it by its extension, ``zcat`` shows it
RUNS_FILE = "runs.csv.gz"
#: what identifies a row of runs.csv.gz: its task (:data:`TASK_KEY`) and its k
ROW_KEY = [*TASK_KEY, "k"]

#: column order of runs.csv.gz (the other columns, diagnostics ``diag_*`` among them, follow sorted by name)
COLUMNS = [
    "experiment", "dataset", "repeat", "fold", "selector", "method", "classifier", "k", "accuracy",
    "n_correct", "n_test", "class_support", "class_predicted", "class_correct", "n_train", "C",
    "classifier_params", "inner_accuracy", "params", "fit_seconds", "task_seconds",
    "n_iter", "standardize", "select_on", "seed", "split_seed", "fingerprint", "fsbench_version", "code",
    "protocol_code",
]


def _task_of(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return tuple(str(row.get(k)) for k in TASK_KEY)  # type: ignore[return-value]


def _runs_csv_text(rows: list[dict[str, Any]]) -> str:
    """runs.csv.gz's text: the rows, each task's rows digest (:mod:`fsbench.storage.digests`) last."""
    df = pd.DataFrame(with_rows_digests(rows, _task_of))
    extra = sorted(c for c in df.columns if c not in COLUMNS and c != DIGEST_COLUMN)
    df = df[[c for c in COLUMNS if c in df.columns] + extra + [DIGEST_COLUMN]]
    return df.to_csv(index=False, float_format="%.17g")


def write_runs(out_dir: Path, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Write runs.csv.gz from these rows and return it as read back.

    A runs.csv.gz written before fsbench recorded digests that already holds exactly these rows
    is left as it is (committed results do not change unless their rows do).
    """
    return _write_runs(out_dir, rows, keep_reordered=False)


def _write_runs(out_dir: Path, rows: list[dict[str, Any]], keep_reordered: bool) -> pd.DataFrame:
    """:func:`write_runs`; with ``keep_reordered``, a runs.csv.gz holding these rows in another order
    is left as it is too. The rows are digested and formatted once, whichever way it goes."""
    path = out_dir / RUNS_FILE
    text = _runs_csv_text(rows)
    try:
        old = load_runs(out_dir) if path.is_file() else None
    except FsbenchError:  # unreadable: these rows replace it
        old = None
    if old is not None:
        legacy = DIGEST_COLUMN not in old.columns
        if legacy or keep_reordered:
            new = _read_runs_text(text)
            if legacy:  # written before digests: the same values are the same rows
                new = new.drop(columns=DIGEST_COLUMN)
            if _same_rows(old, new):
                return old
    # mtime 0: the same rows give the same bytes (committed results change only with their rows)
    atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))
    return load_runs(out_dir)  # the caller sees exactly what is on disk


def collect_runs(out_dir: Path) -> pd.DataFrame | None:
    """runs.csv.gz and rankings.csv.gz rewritten from every finished task file (of a run still in
    progress); None if none.

    A runs.csv.gz that already holds exactly these rows (a finished run) is left as it is, in the
    order the run wrote it, so collecting never touches committed complete results.
    """
    if not out_dir.is_dir():
        return None
    with locked(out_dir):
        return _collect_runs(out_dir)


def _collect_runs(out_dir: Path) -> pd.DataFrame | None:
    ids = sorted(finished_tasks(out_dir))
    if not ids:
        return None
    files = read_task_files(out_dir, ids)
    runs = _write_runs(out_dir, [row for file in files for row in file.rows], keep_reordered=True)
    write_rankings(out_dir, files, read_fingerprint(out_dir))
    return runs


def _same_rows(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Whether two runs tables hold the same rows, in any order."""
    if len(a) != len(b) or set(a.columns) != set(b.columns):
        return False
    key = ROW_KEY + (["classifier"] if "classifier" in a.columns else [])
    a = a.sort_values(key, kind="stable").reset_index(drop=True)
    b = b[list(a.columns)].sort_values(key, kind="stable").reset_index(drop=True)
    return a.equals(b)


def _read_runs_text(text: str) -> pd.DataFrame:
    return read_table(io.StringIO(text))


def load_runs(results_dir: str | Path) -> pd.DataFrame:
    """Read the runs table (``runs.csv.gz``) of a results directory, or a runs CSV file given by path."""
    path = Path(results_dir)
    if path.is_dir():
        path = path / RUNS_FILE
    if not path.is_file():
        folder = Path(results_dir) if path.name == RUNS_FILE else path
        raise FsbenchError(
            f"No results at {str(path)!r}; run 'fsbench run CONFIG --out {folder}' first or check the path."
        )
    try:
        # labels stay strings ("NA" is a name), text that could look like a number stays text
        df = read_table(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, EOFError,
            zlib.error) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FsbenchError(f"{str(path)!r} is damaged ({reason}); restore it (for example from version control) "
                           "or move it away and run the experiment again.") from None
    missing = {"dataset", "selector", "k", "accuracy", "repeat", "n_correct", "n_test"} - set(df.columns)
    if missing:
        raise FsbenchError(f"{str(path)!r} lacks the columns {sorted(missing)}; it is not an fsbench runs table.")
    return df
