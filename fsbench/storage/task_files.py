"""Task files and failure records: ``tasks/<id>.json`` holds one finished task's rows, its ranking
and their digest; ``tasks/<id>.failed.json`` says why a task failed, and ``failures.csv`` lists
the failed tasks of the last run.

A task is one selector fitted on one outer split (:data:`TASK_KEY`). Its ranking, here, is the
first max(n_features) features of the selector's ranking (its permutation of the features, best
first), as 0-based column indices of the dataset; rankings.csv.gz
(:mod:`fsbench.storage.rankings`) gathers them. A task file is verified against its digest
(:mod:`fsbench.storage.digests`) when it is read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.storage.atomic import atomic_write_text
from fsbench.storage.csvread import read_table
from fsbench.storage.digests import DIGEST_COLUMN, TASK_DIGEST_KEY, task_digest

TASKS_DIR = "tasks"
#: a task file's name: readable prefix, then a hash of the task's exact identity (see runner.Task.id)
TASK_ID = re.compile(r".+__[0-9a-f]{12}")
#: what identifies a task (one selector fitted on one split); a row of runs.csv.gz adds its k
TASK_KEY = ["dataset", "repeat", "fold", "selector"]
FAILURES_FILE = "failures.csv"  # the tasks of the last run that failed (a selector raised or timed out)
#: the columns of failures.csv
FAILURE_COLUMNS = ["dataset", "repeat", "fold", "selector", "method", "error", "seconds"]


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default`` for stored values: numpy scalars as Python numbers and booleans;
    any other type raises TypeError (results hold nothing else)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"cannot store {type(value).__name__} in results")


# ----------------------------------------------------------------------------- task files
def task_path(out_dir: Path, task_id: str) -> Path:
    """Where a results folder keeps a task's file."""
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
    rows_text = json.dumps(rows, default=json_default)  # serialized once: digested as read back, then written
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
    """The rows of these task files, in this order (:func:`read_task_files`)."""
    return [row for file in read_task_files(out_dir, task_ids) for row in file.rows]


# ----------------------------------------------------------------------------- failed tasks
def failure_path(out_dir: Path, task_id: str) -> Path:
    """Where a results folder keeps why a task failed."""
    return out_dir / TASKS_DIR / f"{task_id}.failed.json"


def write_failure(out_dir: Path, task_id: str, record: dict[str, Any]) -> None:
    """Save why a task failed; it has no task file, so the next run retries it."""
    atomic_write_text(failure_path(out_dir, task_id), json.dumps(record, default=json_default))


def clear_failure(out_dir: Path, task_id: str) -> None:
    """Forget that a task failed (it has just finished)."""
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
