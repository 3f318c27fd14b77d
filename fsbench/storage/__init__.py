"""Results on disk: atomic per-task files, the rankings cache, the tidy ``runs.csv.gz`` and
``rankings.csv.gz``.

A results directory holds::

    config.yaml        the resolved experiment (what ran), with its fingerprint
    tasks/<id>.json    one file per finished task (dataset x repeat x fold x selector): its rows, its
                       ranking and their digest
    cache/rankings/    selector rankings keyed by a hash of their inputs
    runs.csv.gz        one row per (dataset, repeat, fold, selector, k), built from tasks/; each task's
                       rows carry the digest of their values (``rows_digest``)
    rankings.csv.gz    each task's first max(n_features) features, best first, built from tasks/
                       by the same writer (:func:`write_rankings`)

Every file is written to a temporary name and renamed into place, so a killed run leaves
only whole files behind (and temporary ones, which the next writer of the folder removes). A
process writing a results folder holds its lock (:func:`locked`), released when it exits or dies.
Digests (:mod:`fsbench.storage.digests`) let a resume detect values changed after they were written;
labels are read as strings (:mod:`fsbench.storage.csvread`).
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import platform
import re
import tempfile
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from fsbench.errors import FsbenchError
from fsbench.storage.csvread import read_table
from fsbench.storage.digests import DIGEST_COLUMN, TASK_DIGEST_KEY, task_digest, with_rows_digests

#: the tidy results table: CSV, gzip-compressed (RFS's 72,000 rows are 12 MB as plain text, 0.27 MB
#: compressed); pandas reads and writes it by its extension, ``zcat`` shows it
RUNS_FILE = "runs.csv.gz"
#: every task's ranking, first max(n_features) features (see :func:`load_rankings`)
RANKINGS_FILE = "rankings.csv.gz"
CONFIG_FILE = "config.yaml"
TASKS_DIR = "tasks"
RUNLOG = "runlog.jsonl"
FAILURES_FILE = "failures.csv"  # the tasks of the last run that failed (a selector raised or timed out)
TRACES_FILE = "objective.csv"  # objective per iteration of the iterative selectors (fsbench.engine.traces)
RANKINGS_DIR = Path("cache") / "rankings"
#: per-task rankings of a regeneration in progress (fsbench.engine.regenerate_rankings), merged into rankings.csv.gz
REGENERATION_DIR = Path("cache") / "regenerated-rankings"
LOCK_FILE = ".fsbench.lock"
#: a task file's name: readable prefix, then a hash of the task's exact identity (see runner.Task.id)
TASK_ID = re.compile(r".+__[0-9a-f]{12}")
_TEMPORARY = ".*.tmp"

#: what identifies a task (one selector fitted on one split) and a row of runs.csv.gz (one k of it)
TASK_KEY = ["dataset", "repeat", "fold", "selector"]
ROW_KEY = [*TASK_KEY, "k"]
#: the columns of rankings.csv.gz, in this order; its rows are sorted by all but ``feature``
RANKING_COLUMNS = [*TASK_KEY, "position", "feature"]

#: column order of runs.csv.gz (the other columns, diagnostics ``diag_*`` among them, follow sorted by name)
COLUMNS = [
    "experiment", "dataset", "repeat", "fold", "selector", "method", "classifier", "k", "accuracy",
    "n_correct", "n_test", "class_support", "class_predicted", "class_correct", "n_train", "C",
    "classifier_params", "inner_accuracy", "params", "fit_seconds", "task_seconds",
    "n_iter", "standardize", "select_on", "seed", "split_seed", "fingerprint", "fsbench_version", "code",
    "protocol_code",
]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # what open() would give: mkstemp's 0600 is for secrets, not results


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# ----------------------------------------------------------------------------- the folder
@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s exclusive lock (creating the folder); another holder makes it fail at once.

    The lock is an OS file lock (filelock: fcntl on POSIX), released when the process exits or
    is killed, so a crashed run never leaves the folder locked.
    """
    from filelock import FileLock, Timeout

    out_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(out_dir / LOCK_FILE, timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise FsbenchError(f"Another fsbench process is writing to {str(out_dir)!r}; wait for it to finish "
                           "or write elsewhere with --out.") from None
    try:
        yield
    finally:
        lock.release()


def remove_temporary_files(out_dir: Path) -> int:
    """Delete the temporary files a killed writer left in a results folder; returns how many.

    Call only while holding the folder's lock: then no live writer owns one.
    """
    removed = 0
    for folder in (out_dir, out_dir / TASKS_DIR, out_dir / RANKINGS_DIR, out_dir / REGENERATION_DIR):
        if folder.is_dir():
            for path in folder.glob(_TEMPORARY):
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def check_writable_folder(out_dir: Path) -> None:
    """Raise a FsbenchError when ``out_dir`` cannot be a results folder (before anything is written)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise FsbenchError(f"{str(out_dir)!r} is a file, not a folder; choose another --out.")
    existing = out_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise FsbenchError(f"Cannot create {str(out_dir)!r}: {str(existing)!r} is a file; choose another --out.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FsbenchError(f"Cannot write to {str(existing)!r} (permission denied); choose another --out.")


def describe_os_error(exc: OSError, what: str) -> str:
    """One sentence for an OSError met while writing results (a full disk, a read-only folder)."""
    reason = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
              errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
              errno.EPERM: "permission denied"}.get(exc.errno or 0, exc.strerror or str(exc))
    where = f" ({exc.filename})" if exc.filename else ""
    return f"Cannot write {what}: {reason}{where}"


# ----------------------------------------------------------------------------- tasks
def task_path(out_dir: Path, task_id: str) -> Path:
    return out_dir / TASKS_DIR / f"{task_id}.json"


@dataclass(frozen=True)
class TaskFile:
    """What a task file holds: the task's rows and its ranking (the first max(n_features) column
    indices of the dataset, best first; None in a file written before rankings were kept, or
    restored from rows that had none)."""

    rows: list[dict[str, Any]]
    ranking: list[int] | None = None
    #: the digest of its rows and ranking (fsbench.storage.digests), None in a file written before
    #: fsbench recorded digests; a file whose digest does not match is never read
    digest: str | None = None


def write_task(out_dir: Path, task_id: str, rows: list[dict[str, Any]], ranking: list[int] | None = None) -> None:
    """Save a finished task: ``{"rows": [...], "ranking": [...] | null, "digest": "sha256:..."}``."""
    rows = [{k: v for k, v in row.items() if k != DIGEST_COLUMN} for row in rows]  # runs.csv.gz's, not the file's
    ranking = None if ranking is None else [int(f) for f in ranking]
    rows_text = json.dumps(rows, default=_json_default)  # serialized once: digested as read back, then written
    # the digest of the values as they read back from this JSON (numpy scalars become numbers)
    digest = task_digest(json.loads(rows_text), ranking)
    tail = f'"ranking": {json.dumps(ranking)}, "{TASK_DIGEST_KEY}": {json.dumps(digest)}'
    atomic_write_text(task_path(out_dir, task_id), f'{{"rows": {rows_text}, {tail}}}')


def finished_tasks(out_dir: Path) -> set[str]:
    """The ids of the task files in a results folder (files of other names are not tasks)."""
    folder = out_dir / TASKS_DIR
    if not folder.is_dir():
        return set()
    return {p.stem for p in folder.glob("*.json") if TASK_ID.fullmatch(p.stem)}


class DamagedTaskFile(Exception):
    """A task file that is not a non-empty list of rows (cut short, emptied, overwritten)."""


class DigestMismatch(DamagedTaskFile):
    """A task file whose values no longer match its digest (edited after it was written); ``file``
    holds what it reads, for checks that come first (whose configuration its rows are)."""

    def __init__(self, message: str, file: TaskFile) -> None:
        super().__init__(message)
        self.file = file


def read_task_file(out_dir: Path, task_id: str) -> TaskFile:
    """A task file's rows and ranking; raises DamagedTaskFile when it holds no non-empty list of rows
    or a ranking that is not a list of distinct feature indices, DigestMismatch when its rows or
    ranking do not match its digest.

    A file holding a bare list of rows (written before rankings were kept) is a task without a
    ranking; a file without a digest (written before digests were kept) is read unverified.
    """
    try:
        doc = json.loads(task_path(out_dir, task_id).read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise DamagedTaskFile(f"not JSON ({exc})") from None
    rows, ranking = (doc, None) if isinstance(doc, list) else (
        (doc.get("rows"), doc.get("ranking")) if isinstance(doc, dict) else (None, None))
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        raise DamagedTaskFile("not a non-empty list of rows")
    if ranking is not None and not _is_ranking(ranking):
        raise DamagedTaskFile("its ranking is not a list of distinct feature indices")
    recorded = doc.get(TASK_DIGEST_KEY) if isinstance(doc, dict) else None
    if recorded is not None and recorded != task_digest(rows, ranking):
        raise DigestMismatch("its rows or ranking do not match its digest: they were changed after it was written",
                             TaskFile(rows, ranking, recorded))
    return TaskFile(rows, ranking, recorded)


def _is_ranking(value: Any) -> bool:
    return (isinstance(value, list) and bool(value) and len(set(value)) == len(value)
            and all(isinstance(f, int) and not isinstance(f, bool) and f >= 0 for f in value))


def read_task(out_dir: Path, task_id: str) -> list[dict[str, Any]]:
    """The rows of one task file; raises DamagedTaskFile when it is not a non-empty list of rows."""
    return read_task_file(out_dir, task_id).rows


def read_task_files(out_dir: Path, task_ids: list[str]) -> list[TaskFile]:
    """These task files, in this order; a damaged one stops with a FsbenchError naming it."""
    files = []
    for task_id in task_ids:
        try:
            files.append(read_task_file(out_dir, task_id))
        except DamagedTaskFile as exc:
            raise FsbenchError(f"The task file {str(task_path(out_dir, task_id))!r} is damaged ({exc}); run the "
                               "experiment again: it recomputes that task.") from None
    return files


def read_tasks(out_dir: Path, task_ids: list[str]) -> list[dict[str, Any]]:
    return [row for file in read_task_files(out_dir, task_ids) for row in file.rows]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"cannot store {type(value).__name__} in results")


# ----------------------------------------------------------------------------- failed tasks
FAILURE_COLUMNS = ["dataset", "repeat", "fold", "selector", "method", "error", "seconds"]


def failure_path(out_dir: Path, task_id: str) -> Path:
    return out_dir / TASKS_DIR / f"{task_id}.failed.json"


def write_failure(out_dir: Path, task_id: str, record: dict[str, Any]) -> None:
    """Save why a task failed; it has no task file, so the next run retries it."""
    atomic_write_text(failure_path(out_dir, task_id), json.dumps(record, default=_json_default))


def clear_failure(out_dir: Path, task_id: str) -> None:
    failure_path(out_dir, task_id).unlink(missing_ok=True)


def read_failures(out_dir: Path, task_ids: list[str], fingerprint: str) -> list[dict[str, Any]]:
    """The failures of these tasks (those of another configuration, or damaged, are not theirs)."""
    records = []
    for task_id in task_ids:
        path = failure_path(out_dir, task_id)
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("fingerprint") == fingerprint:
            records.append({k: record.get(k) for k in FAILURE_COLUMNS})
    return records


def write_failures(out_dir: Path, records: list[dict[str, Any]]) -> None:
    """failures.csv: the failed tasks of the run, or no file when none failed."""
    if records:
        atomic_write_text(out_dir / FAILURES_FILE, pd.DataFrame(records, columns=FAILURE_COLUMNS).to_csv(index=False))
    else:
        (out_dir / FAILURES_FILE).unlink(missing_ok=True)


def load_failures(results_dir: str | Path) -> pd.DataFrame:
    """A results folder's failed tasks (empty when none failed or the file is unreadable); labels
    read as strings (:func:`fsbench.storage.csvread.read_table`)."""
    path = Path(results_dir)
    path = (path if path.is_dir() else path.parent) / FAILURES_FILE
    try:
        return read_table(path) if path.is_file() else pd.DataFrame(columns=FAILURE_COLUMNS)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError):
        return pd.DataFrame(columns=FAILURE_COLUMNS)


# ----------------------------------------------------------------------------- runs.csv.gz
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


# ----------------------------------------------------------------------------- rankings.csv.gz
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
    """rankings.csv.gz from these tasks (the runs' writers call it beside :func:`write_runs`).

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


# ----------------------------------------------------------------------------- config
def write_config(out_dir: Path, config: dict[str, Any], fingerprint: str) -> None:
    doc = {"fingerprint": fingerprint, **config}
    atomic_write_text(out_dir / CONFIG_FILE, yaml.safe_dump(doc, sort_keys=False))


def read_config_doc(out_dir: Path) -> dict[str, Any]:
    """A results folder's config.yaml as a dict ({} when absent or unreadable)."""
    path = out_dir / CONFIG_FILE
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        doc = None
    return doc if isinstance(doc, dict) else {}


def planned_datasets(out_dir: Path) -> tuple[list[str], list[str]]:
    """A results folder's datasets from its config.yaml: (planned and available, skipped as missing)."""
    doc = read_config_doc(out_dir)
    skipped = list(doc.get("skipped_datasets") or [])
    return [d for d in doc.get("datasets") or [] if d not in skipped], skipped


def planned_selectors(out_dir: Path) -> list[str]:
    """The labels of a results folder's selectors, from its config.yaml."""
    return [s["label"] for s in read_config_doc(out_dir).get("selectors") or []
            if isinstance(s, dict) and "label" in s]


def read_fingerprint(out_dir: Path) -> str | None:
    return read_config_doc(out_dir).get("fingerprint")


# ----------------------------------------------------------------------------- rankings cache
def load_ranking(cache_dir: Path, key: str) -> dict[str, Any] | None:
    path = cache_dir / f"{key}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            return {"ranking": data["ranking"], "scores": data["scores"],
                    **json.loads(str(data["meta"]))}
    except (OSError, ValueError, KeyError):
        return None  # a damaged cache entry is recomputed


def save_ranking(cache_dir: Path, key: str, ranking: np.ndarray, scores: np.ndarray, meta: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, ranking=ranking, scores=scores, meta=np.array(json.dumps(meta, default=_json_default)))
    atomic_write_bytes(cache_dir / f"{key}.npz", buffer.getvalue())


# ----------------------------------------------------------------------------- run log
def machine() -> str:
    """One line naming the machine a run was measured on."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def library_versions() -> dict[str, str]:
    """The versions of the libraries that compute the rows (recorded with every invocation)."""
    import numpy
    import scipy
    import sklearn

    from fsbench import __version__

    return {"fsbench": __version__, "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__}


def log_run(results_dir: Path, seconds: float, n_tasks: int, n_run: int, n_jobs: int,
            interrupted: bool = False) -> None:
    """Append one invocation's wall time, the tasks it finished and the library versions to
    results_dir/runlog.jsonl, as one write of one line (a full disk leaves no partial line)."""
    entry = {"finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(seconds, 1),
             "n_tasks": n_tasks, "n_run": n_run, "n_jobs": n_jobs, "machine": machine(),
             "versions": library_versions(), **({"interrupted": True} if interrupted else {})}
    line = (json.dumps(entry) + "\n").encode()
    fd = os.open(results_dir / RUNLOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, _FILE_MODE)
    try:
        if os.write(fd, line) != len(line):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(results_dir / RUNLOG))
    finally:
        os.close(fd)


def read_runlog(results_dir: Path) -> list[dict]:
    """The run log's entries; a line that is not a JSON object (cut short by a crash) is skipped."""
    path = results_dir / RUNLOG
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries
