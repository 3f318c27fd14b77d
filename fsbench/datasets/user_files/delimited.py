"""Delimited text files (``.csv``, ``.tsv``, ``.txt``, each optionally ``.gz``): the first lines
decide the delimiter, the decimal mark and whether the first line is a header; pandas then
reads the file and :mod:`fsbench.datasets.user_files.tables` makes the table a
:class:`~fsbench.datasets.user_files.user_data.UserData`.
The rules they follow are stated, for users, in :mod:`fsbench.datasets.user_files.files`.
"""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path
from typing import Any

from fsbench.datasets.user_files.messages import fail, reason
from fsbench.datasets.user_files.tables import from_frame, is_number
from fsbench.datasets.user_files.user_data import UserData

__all__ = ["DELIMITER_NAMES", "read_text"]

_SAMPLE_LINES = 25  # non-blank lines that decide the delimiter, decimal mark and header
_SAMPLE_BYTES = 4 << 20  # ... or fewer (at least 3) once this many bytes are read
_DELIMITERS = ("\t", ";", ",")  # in order of preference on a tie
#: how messages and ``fsbench datasets info`` name each delimiter (" " stands for whitespace)
DELIMITER_NAMES = {"\t": "tab", ";": "semicolon", ",": "comma", " ": "whitespace"}
# pandas' default missing-value markers, plus ARFF's and UCI's '?'
_MISSING = frozenset({"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                      "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                      "null"})
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_DECIMAL_POINT = re.compile(r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?")


_CHUNK = 1 << 16
# bytes no text file holds: C0 controls but tab, line feed, vertical tab, form feed, carriage
# return and DOS's end-of-file mark (0x1a); a NUL is also what UTF-16 text is full of
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x19\x1b-\x1f]")
_UTF16 = "is text in UTF-16, which fsbench does not read; save it as UTF-8 (Excel: 'CSV UTF-8')"
_MAGIC = ((b"\x1f\x8b", "is gzip-compressed but its name does not end in .gz; add .gz to its name"),
          (b"PK\x03\x04", "is a ZIP archive (an Excel .xlsx workbook?), not delimited text; export the "
                          "sheet as CSV"),
          (b"PAR1", "is a Parquet file, not delimited text; name it .parquet"),
          (b"\xff\xfe", _UTF16), (b"\xfe\xff", _UTF16))


def _sample_lines(path: Path, compressed: bool) -> tuple[list[str], bool]:
    """The first non-blank lines of a text file, decoded, and whether they decode as UTF-8.

    Lines end at a line feed, a carriage return followed by one, or a carriage return alone
    (old Mac files; pandas reads those too). Bytes no text holds (NUL and other control
    characters) are a DataError: the file is binary, or text in UTF-16.
    """
    opener = gzip.open if compressed else open
    data = b""
    with opener(path, "rb") as fh:
        while True:
            chunk = fh.read(max(_CHUNK, len(data)))  # doubling: a few reads even for long lines
            data += chunk
            _refuse_binary(path, data, len(data) - len(chunk))  # before reading on: binary may have no lines
            complete = data.splitlines(keepends=True)
            if chunk and complete and not complete[-1].endswith((b"\n", b"\r")):
                complete = complete[:-1]  # the last line may go on in the next chunk
            raw = [line for line in complete if line.strip()]
            if not chunk or len(raw) >= _SAMPLE_LINES or (len(data) > _SAMPLE_BYTES and len(raw) >= 3):
                break
    raw = raw[:_SAMPLE_LINES]
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


def _refuse_binary(path: Path, sample: bytes, start: int = 0) -> None:
    """DataError when ``sample`` (the first bytes of the file, decompressed) is not text; bytes
    before ``start`` were checked already."""
    found = _CONTROL.search(sample, start)
    if found is None:
        return
    known = next((problem for magic, problem in _MAGIC if sample.startswith(magic)), None)
    if known is not None:
        raise fail(str(path), known)
    byte = found.group()[0]
    raise fail(str(path), f"is not a text file: it holds the control byte 0x{byte:02x} (at byte "
                          f"{found.start()}), which text never does, so it is binary data or "
                          "text in another encoding; give a CSV file saved as UTF-8 text")


def _split(line: str, sep: str | None) -> list[str]:
    if sep is None:
        return line.split()
    try:
        return next(csv.reader([line], delimiter=sep, skipinitialspace=True), [])
    except csv.Error:  # a stray line-break character inside the line: pandas decides
        return line.split(sep)


def _detect_delimiter(lines: list[str]) -> str | None:
    """Tab, semicolon or comma (None: whitespace); see :mod:`fsbench.datasets.user_files.files`."""
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
    """Whether the first row is a header; see :mod:`fsbench.datasets.user_files.files`."""
    first, rest = rows[0], rows[1:]
    if rest and len(first) == len(rest[0]) - 1:
        return True  # R's row names: the header has no field for them
    if isinstance(label, str) and not re.fullmatch(r"\s*[+-]?\d+\s*", label) \
            and label.strip() in (f.strip() for f in first):
        return True

    def number(v: str) -> bool:
        return v.strip() in _MISSING or is_number(v, decimal=decimal)

    if not any(is_number(v, decimal=decimal) for v in first):
        return True
    for j, v in enumerate(first):
        if number(v):
            continue
        column = [row[j] for row in rest if j < len(row)]
        if column and all(number(c) for c in column):
            return True
    return False


def read_text(path: Path, *, fmt: str, label: str | int | None, name: str, sha256: str) -> UserData:
    """A user's delimited text file (CSV, TSV or text, perhaps gzipped), its label column ``label``."""
    import pandas as pd

    compressed = path.name.lower().endswith(".gz")
    where = str(path)
    try:
        lines, utf8 = _sample_lines(path, compressed)
    except (OSError, EOFError) as exc:
        raise fail(where, f"cannot be read ({reason(exc)})") from exc
    if not lines:
        raise fail(where, "is empty; a data file needs one row per sample and a label column")
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
        raise fail(where, f"cannot be read as {DELIMITER_NAMES[sep or ' ']}-delimited text "
                          f"({reason(exc)}); every line must have the same number of fields") \
            from exc
    raw_names = None
    if header:
        raw_names = [str(c) for c in frame.columns]
        given = rows[0] if len(rows[0]) == frame.shape[1] else None
        if given is not None:  # pandas names blank header fields 'Unnamed: i'
            raw_names = [c if g.strip() else "" for c, g in zip(raw_names, given, strict=True)]
        frame.columns = [c.strip() if isinstance(c, str) else c for c in frame.columns]
    return from_frame(frame, path=path, fmt=fmt, name=name, sha256=sha256, label=label,
                      named=header, raw_names=raw_names, delimiter=sep or " ", header=header,
                      notes=tuple(notes))
