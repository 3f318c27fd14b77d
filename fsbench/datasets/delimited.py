"""Delimited text files (``.csv``, ``.tsv``, ``.txt``, each optionally ``.gz``): the first lines
decide the delimiter, the decimal mark and whether the first line is a header; pandas then
reads the file and :mod:`fsbench.datasets.tables` makes the table a
:class:`~fsbench.datasets.user_data.UserData`.
The rules they follow are stated, for users, in :mod:`fsbench.datasets.files`.
"""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path
from typing import Any

from fsbench.datasets.tables import _from_frame, _is_number
from fsbench.datasets.user_data import UserData, _fail, _reason

_SAMPLE_LINES = 25  # non-blank lines that decide the delimiter, decimal mark and header
_SAMPLE_BYTES = 4 << 20  # ... or fewer (at least 3) once this many bytes are read
_DELIMITERS = ("\t", ";", ",")  # in order of preference on a tie
_DELIMITER_NAMES = {"\t": "tab", ";": "semicolon", ",": "comma", " ": "whitespace"}
# pandas' default missing-value markers, plus ARFF's and UCI's '?'
_MISSING = frozenset({"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                      "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                      "null"})
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_DECIMAL_POINT = re.compile(r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?")


def _sample_lines(path: Path, compressed: bool) -> tuple[list[str], bool]:
    """The first non-blank lines of a text file, decoded, and whether they decode as UTF-8."""
    opener = gzip.open if compressed else open
    raw: list[bytes] = []
    size = 0
    with opener(path, "rb") as fh:
        for line in fh:
            size += len(line)
            if line.strip():
                raw.append(line)
            if len(raw) >= _SAMPLE_LINES or (size > _SAMPLE_BYTES and len(raw) >= 3):
                break
    utf8 = True
    lines = []
    for i, line in enumerate(raw):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            utf8, text = False, line.decode("latin-1")
        if i == 0:
            text = text.lstrip("\ufeff")
        lines.append(text.rstrip("\r\n"))
    return lines, utf8


def _split(line: str, sep: str | None) -> list[str]:
    if sep is None:
        return line.split()
    return next(csv.reader([line], delimiter=sep, skipinitialspace=True), [])


def _detect_delimiter(lines: list[str]) -> str | None:
    """Tab, semicolon or comma (None: whitespace); see :mod:`fsbench.datasets.files`."""
    best: tuple[int, str] | None = None
    ragged: tuple[int, str] | None = None
    for sep in _DELIMITERS:
        if not any(sep in line for line in lines):
            continue
        counts = [len(_split(line, sep)) for line in lines]
        body = counts[1:] or counts
        width = body[0]
        if width >= 2 and all(c == width for c in body) and counts[0] in (width, width - 1):
            if best is None or width > best[0]:
                best = (width, sep)
        common = max(set(body), key=body.count)
        if common >= 2 and (ragged is None or common > ragged[0]):
            ragged = (common, sep)
    if best is None and ragged is not None:  # uneven lines: pandas will name the first one
        best = ragged
    return best[1] if best else None


def _detect_decimal(rows: list[list[str]], sep: str | None) -> str:
    if sep == ",":
        return "."
    values = [v.strip() for row in rows[1:] or rows for v in row]
    commas = any(_DECIMAL_COMMA.fullmatch(v) for v in values)
    points = any(_DECIMAL_POINT.fullmatch(v) for v in values)
    return "," if commas and not points else "."


def _detect_header(rows: list[list[str]], label: str | int | None, decimal: str) -> bool:
    """Whether the first row is a header; see :mod:`fsbench.datasets.files`."""
    first, rest = rows[0], rows[1:]
    if rest and len(first) == len(rest[0]) - 1:
        return True  # R's row names: the header has no field for them
    if isinstance(label, str) and not re.fullmatch(r"\s*[+-]?\d+\s*", label) \
            and label.strip() in (f.strip() for f in first):
        return True

    def number(v: str) -> bool:
        return v.strip() in _MISSING or _is_number(v, decimal)

    if not any(_is_number(v, decimal) for v in first):
        return True
    for j, v in enumerate(first):
        if number(v):
            continue
        column = [row[j] for row in rest if j < len(row)]
        if column and all(number(c) for c in column):
            return True
    return False


def _read_text(path: Path, fmt: str, label: str | int | None, *, name: str,
               sha256: str) -> UserData:
    import pandas as pd

    compressed = path.name.lower().endswith(".gz")
    where = str(path)
    try:
        lines, utf8 = _sample_lines(path, compressed)
    except (OSError, EOFError) as exc:
        raise _fail(where, f"cannot be read ({_reason(exc)})") from exc
    if not lines:
        raise _fail(where, "is empty; a data file needs one row per sample and a label column")
    sep = _detect_delimiter(lines)
    rows = [_split(line, sep) for line in lines]
    decimal = _detect_decimal(rows, sep)
    header = _detect_header(rows, label, decimal)
    notes = []
    if decimal == ",":
        notes.append("decimal commas")
    if header and len(rows) > 1 and len(rows[0]) == len(rows[1]) - 1:
        notes.append("ignored the first column: row names (the header has no field for them)")

    def parse(encoding: str) -> Any:
        return pd.read_csv(
            path, sep=r"\s+" if sep is None else sep, header=0 if header else None,
            decimal=decimal, na_values=["?"], skipinitialspace=sep is not None, engine="c",
            encoding=encoding, compression="gzip" if compressed else None, low_memory=False)

    try:
        try:
            frame = parse("utf-8" if utf8 else "latin-1")
        except UnicodeDecodeError:
            frame = parse("latin-1")
    except Exception as exc:  # pandas' ParserError, EmptyDataError, a damaged gzip stream
        raise _fail(where, f"cannot be read as {_DELIMITER_NAMES[sep or ' ']}-delimited text "
                           f"({_reason(exc)}); every line must have the same number of fields") \
            from exc
    raw_names = None
    if header:
        raw_names = [str(c) for c in frame.columns]
        given = rows[0] if len(rows[0]) == frame.shape[1] else None
        if given is not None:  # pandas names blank header fields 'Unnamed: i'
            raw_names = [c if g.strip() else "" for c, g in zip(raw_names, given, strict=True)]
        frame.columns = [c.strip() if isinstance(c, str) else c for c in frame.columns]
    return _from_frame(frame, path=path, fmt=fmt, name=name, sha256=sha256, label=label,
                       named=header, raw_names=raw_names, delimiter=sep or " ", header=header,
                       notes=tuple(notes))
