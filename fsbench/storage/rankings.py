"""rankings.csv.gz: the top features each task kept, one row per (task, position).

A selector's ranking is its permutation of the features, best first. rankings.csv.gz keeps the
first max(n_features) of them for every task (one selector fitted on one outer split), as the
task files hold them (:mod:`fsbench.storage.task_files`); the whole rankings of the fits live in
the ranking cache (:mod:`fsbench.storage.ranking_cache`). The file is written beside runs.csv.gz
by the same writers, and carries in its gzip header's comment the fingerprint of the
configuration that wrote it (:func:`rankings_fingerprint`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.storage.atomic import atomic_write_bytes
from fsbench.storage.csvread import read_table
from fsbench.storage.task_files import TASK_KEY, TaskFile

#: every task's top features, first max(n_features) (see :func:`load_rankings`)
RANKINGS_FILE = "rankings.csv.gz"
#: per-task rankings of a regeneration in progress (fsbench.engine.regenerate_rankings), merged into rankings.csv.gz
REGENERATION_DIR = Path("cache") / "regenerated-rankings"
#: the columns of rankings.csv.gz, in this order; its rows are sorted by all but ``feature``
RANKING_COLUMNS = [*TASK_KEY, "position", "feature"]

TaskKey = tuple[str, int, int, str]  # (dataset, repeat, fold, selector)


def rankings_table(tasks: Iterable[TaskFile]) -> pd.DataFrame:
    """The rankings of these tasks as rankings.csv.gz holds them, sorted by dataset, repeat, fold,
    selector and position (tasks without a ranking have no rows)."""
    parts = []
    for task in tasks:
        if task.ranking is None:
            continue
        first = task.rows[0]
        parts.append(pd.DataFrame({
            "dataset": str(first["dataset"]), "repeat": int(first["repeat"]), "fold": int(first["fold"]),
            "selector": str(first["selector"]), "position": np.arange(1, len(task.ranking) + 1, dtype=np.int64),
            "feature": np.asarray(task.ranking, dtype=np.int64)}))
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("dataset", "selector") else np.int64)
                             for c in RANKING_COLUMNS})
    table = pd.concat(parts, ignore_index=True)
    return table.sort_values(RANKING_COLUMNS[:5], kind="stable").reset_index(drop=True)


def write_rankings(out_dir: Path, tasks: Iterable[TaskFile], fingerprint: str | None) -> pd.DataFrame:
    """rankings.csv.gz from these tasks (the runs' writers call it beside
    :func:`fsbench.storage.runs.write_runs`).

    The same rankings give the same bytes whatever the order of ``tasks`` (rows sorted, gzip without
    a timestamp). The configuration's ``fingerprint`` is kept in the gzip header's comment (invisible to
    readers of the CSV), so that a resuming run uses only rankings of its own configuration
    (:func:`rankings_fingerprint`). No task with a ranking: no file (an existing one is removed).
    """
    return write_rankings_table(out_dir, rankings_table(tasks), fingerprint)


def write_rankings_table(out_dir: Path, table: pd.DataFrame, fingerprint: str | None) -> pd.DataFrame:
    """Write rankings.csv.gz from a table sorted as :func:`rankings_table` sorts it (none: no file)."""
    path = out_dir / RANKINGS_FILE
    if table.empty:
        path.unlink(missing_ok=True)
        return table
    data = _gzip_with_comment(table.to_csv(index=False).encode("utf-8"), json.dumps({"fingerprint": fingerprint}))
    if not (path.is_file() and path.read_bytes() == data):
        atomic_write_bytes(path, data)
    return table


def _gzip_with_comment(data: bytes, comment: str) -> bytes:
    """gzip (RFC 1952) of ``data`` as ``gzip.compress(data, mtime=0)`` writes it, plus a header comment
    (FCOMMENT) that gzip, zcat and pandas skip."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflate.compress(data) + deflate.flush()
    header = b"\x1f\x8b\x08\x10" + bytes(4) + b"\x02\xff" + comment.encode("latin-1") + b"\x00"
    return header + body + zlib.crc32(data).to_bytes(4, "little") + (len(data) & 0xFFFFFFFF).to_bytes(4, "little")


def _gzip_comment(head: bytes) -> str | None:
    """The comment of a gzip header (None when there is none or ``head`` is not gzip)."""
    if len(head) < 10 or head[:3] != b"\x1f\x8b\x08":
        return None
    flags, pos = head[3], 10
    if flags & 4:  # FEXTRA
        pos += 2 + int.from_bytes(head[pos:pos + 2], "little")
    for flag in (8, 16):  # FNAME, then FCOMMENT: zero-terminated
        if flags & flag:
            end = head.find(b"\x00", pos)
            if end < 0:
                return None
            if flag == 16:
                return head[pos:end].decode("latin-1")
            pos = end + 1
    return None


def rankings_fingerprint(results_dir: str | Path) -> str | None:
    """The fingerprint of the configuration whose run wrote a folder's rankings.csv.gz (None when
    the file is absent or does not say)."""
    path = Path(results_dir)
    path = path / RANKINGS_FILE if path.is_dir() else path
    try:
        with path.open("rb") as fh:
            comment = _gzip_comment(fh.read(4096))
        doc = json.loads(comment) if comment else None
    except (OSError, ValueError):
        return None
    value = doc.get("fingerprint") if isinstance(doc, dict) else None
    return value if isinstance(value, str) else None


def load_rankings(results_dir: str | Path) -> pd.DataFrame:
    """Read the rankings (``rankings.csv.gz``) of a results directory, or a rankings file given by path.

    One row per (task, position), columns :data:`RANKING_COLUMNS` (``dataset, repeat, fold,
    selector, position, feature``): each task's (one selector fitted on one outer split) first
    max(n_features) features, position 1 the best, features 0-based column indices of the dataset
    as loaded. For a tuned selector, the ranking of the fit with the chosen parameters (the one its
    rows report); failed tasks, and tasks computed before fsbench kept rankings, have no rows.

    Raises FsbenchError when the file is absent (a folder of an older run: the message says how to
    rerun or regenerate it, ``fsbench rankings regenerate``), damaged or not a rankings table.
    """
    path = Path(results_dir)
    folder = path if path.is_dir() else path.parent
    path = path / RANKINGS_FILE if path.is_dir() else path
    if not path.is_file():
        raise FsbenchError(f"No {RANKINGS_FILE} in {str(folder)!r}; rerun the experiment with this version of "
                           "fsbench (it keeps every task's ranking) or regenerate them with "
                           f"'fsbench rankings regenerate {folder}'.")

    def damaged(reason: str) -> FsbenchError:
        return FsbenchError(f"{str(path)!r} is damaged ({reason}); restore it (for example from version control) "
                            f"or delete it and regenerate it with 'fsbench rankings regenerate {folder}'.")

    try:
        df = read_table(path, labels=("dataset", "selector"))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, EOFError,
            zlib.error) as exc:
        raise damaged(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if list(df.columns) != RANKING_COLUMNS:
        raise damaged(f"its columns are {list(df.columns)}, not {RANKING_COLUMNS}")
    for column in ("repeat", "fold", "position", "feature"):
        if not pd.api.types.is_integer_dtype(df[column]):
            raise damaged(f"column {column!r} holds values that are not integers")
    if (df["feature"] < 0).any():
        raise damaged("a feature index is negative")
    ordered = df.sort_values(RANKING_COLUMNS[:5], kind="stable")
    expected = ordered.groupby(TASK_KEY, sort=False).cumcount() + 1
    if not np.array_equal(ordered["position"].to_numpy(), expected.to_numpy()):
        raise damaged("a task's positions are not 1, 2, 3, ...")
    if df.duplicated([*TASK_KEY, "feature"]).any():
        raise damaged("a task ranks a feature twice")
    return df


def rankings_by_task(rankings: pd.DataFrame) -> dict[TaskKey, list[int]]:
    """A rankings table (:func:`load_rankings`) as (dataset, repeat, fold, selector) -> features, best first."""
    out: dict[TaskKey, list[int]] = {}
    ordered = rankings.sort_values(RANKING_COLUMNS[:5], kind="stable")
    for (dataset, repeat, fold, selector), group in ordered.groupby(TASK_KEY, sort=False):
        out[(str(dataset), int(repeat), int(fold), str(selector))] = [int(f) for f in group["feature"]]
    return out
