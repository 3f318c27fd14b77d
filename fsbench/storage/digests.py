"""Digests of stored rows: a task file, and each task's group of rows in runs.csv.gz, carry a
sha256 of their values, checked before any of them is reused.

What it protects against: results edited after they were written, by hand or by a tool (a
spreadsheet that rewrites the CSV rounding its numbers or turning ``NA`` into an empty cell, a
merge or a script that changes a number and leaves the JSON or CSV valid). Such a file would
otherwise be resumed silently and its numbers spread into runs.csv.gz, the tables and the
figures. What it does not protect against: anyone who changes the values and recomputes the
digest (it is a checksum anyone can compute, not a signature: there is no key), nor a value
changed before it was first written.

The digest is computed from the values as they are read back, not from the bytes of the file,
so that every faithful rewrite keeps it: JSON and CSV give back the same digest for the same
rows, whatever the order of the rows and the columns, however a float is formatted (``%.17g``
or the shortest repr: both read back as the same float), and whether an integral number comes
back as ``5`` or ``5.0`` (a CSV column with a missing value is read as floats). A missing value
(None, NaN, an absent key) and an empty string are the same (CSV writes both as an empty cell).
Files written before fsbench recorded digests have none: they stay readable and are reused
unverified, with a note.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: the runs.csv.gz column holding each task's rows digest (the same on every row of a task)
DIGEST_COLUMN = "rows_digest"
#: the key of a task file holding the digest of its rows and ranking
TASK_DIGEST_KEY = "digest"
_PREFIX = "sha256:"


def canonical_value(value: Any) -> str | None:
    """The text a digest sees for one stored value (None: missing).

    Integral floats as integers below 2**53 (where every integer is exact), other floats by
    their shortest round-trip repr, so a value that comes back through CSV as ``5.0`` or
    ``0.10000000000000001`` hashes as the ``5`` or ``0.1`` a task file holds.
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return "True" if value else "False"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number):
            return None
        if number.is_integer() and abs(number) < 2**53:
            return str(int(number))
        return repr(number)
    if isinstance(value, str):
        return value or None
    return json.dumps(value, sort_keys=True, default=str)


def _canonical_rows(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    out = []
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    for row in rows:
        items = []
        for key, value in row.items():
            kind = type(value)  # the common types first (canonical_value's rules, inlined for speed)
            if kind is str:
                text = value or None
            elif kind is float:
                text = (None if value != value else str(int(value)) if value.is_integer() and abs(value) < 2**53
                        else repr(value))
            elif kind is int:
                text = str(value)
            else:
                text = canonical_value(value)
            if text is not None and key != DIGEST_COLUMN:
                items.append((str(key), text))
        items.sort()
        out.append(encode(items))
    return sorted(out)  # the order of a task's rows is not part of its values


def _sha256(doc: Any) -> str:
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return _PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def rows_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """The digest of one task's rows (runs.csv.gz's :data:`DIGEST_COLUMN`)."""
    return _sha256({"rows": _canonical_rows(rows)})


def task_digest(rows: Iterable[Mapping[str, Any]], ranking: Sequence[int] | None) -> str:
    """The digest of a task file: its rows and its ranking."""
    return _sha256({"rows": _canonical_rows(rows), "ranking": None if ranking is None else [int(f) for f in ranking]})


def recorded_digest(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The rows digest a task's rows of runs.csv.gz record: None when none does (written before
    fsbench recorded digests); '' when they disagree or only some record one (never a digest)."""
    values = {canonical_value(r.get(DIGEST_COLUMN)) for r in rows}
    if values == {None}:
        return None
    if len(values) != 1:
        return ""
    return values.pop()


def with_rows_digests(rows: list[dict[str, Any]], task_of: Any) -> list[dict[str, Any]]:
    """``rows`` (of any number of tasks) with each task's rows digest in :data:`DIGEST_COLUMN`;
    ``task_of(row)`` names a row's task."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(task_of(row), []).append(row)
    digests = {key: rows_digest(group) for key, group in groups.items()}
    return [{**{k: v for k, v in row.items() if k != DIGEST_COLUMN}, DIGEST_COLUMN: digests[task_of(row)]}
            for row in rows]
