"""Delimited text files (``.csv``, ``.tsv``, ``.txt``, each optionally ``.gz``): the first lines
decide the delimiter, the decimal mark and whether the first line is a header; pandas then
reads the file and :mod:`fsbench.datasets.user_files.tables` makes the table a
:class:`~fsbench.datasets.user_files.user_data.UserData`.
The rules they follow are stated, for users, in :mod:`fsbench.datasets.user_files.files`.

A wide file of mostly zeros (text or genomics counts) is read sparse: when it has at least
:data:`SPARSE_MIN_COLUMNS` columns and at most :data:`SPARSE_MAX_DENSITY` of the feature values
of its first block of rows are non-zero (a missing value counts as non-zero), pandas reads it in
blocks of rows (:func:`block_rows`: about :data:`BLOCK_VALUES` values each), every block kept as
a CSR matrix, so memory grows with the non-zeros, not with samples x features; the file's label
column (and a first column that may be a row index) are read on their own. The same rules apply
as to a dense read (label column, header, missing values, numeric features, empty columns and row
indices left out), and the UserData's ``X`` is then a ``scipy.sparse.csr_matrix``.
"""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path
from typing import Any

from fsbench.datasets.user_files.messages import fail, option, reason, too_few
from fsbench.datasets.user_files.tables import column_index, column_labels, from_frame, is_number, refuse_non_numeric
from fsbench.datasets.user_files.user_data import UserData
from fsbench.datasets.user_files.validation import finish

__all__ = ["BLOCK_VALUES", "DELIMITER_NAMES", "SPARSE_MAX_DENSITY", "SPARSE_MIN_COLUMNS", "block_rows", "read_text"]

#: the fewest columns of a text file read sparse
SPARSE_MIN_COLUMNS = 1000
#: the largest share of non-zero feature values, in the first block of rows, of a text file read sparse
SPARSE_MAX_DENSITY = 0.1
#: values per block of rows of a file read sparse (8e6 float64: 64 MB)
BLOCK_VALUES = 8_000_000


def block_rows(n_columns: int) -> int:
    """Rows per block of a text file of ``n_columns`` columns read sparse: BLOCK_VALUES values, at least 16 rows."""
    return max(16, BLOCK_VALUES // max(1, n_columns))

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

    def parse(encoding: str, **options: Any) -> Any:
        return pd.read_csv(
            path, sep=r"\s+" if sep is None else sep, header=0 if header else None,
            decimal=decimal, na_values=["?"], skipinitialspace=sep is not None, engine="c",
            encoding=encoding, compression="gzip" if compressed else None, low_memory=False, **options)

    def read(**options: Any) -> Any:
        try:
            try:
                return parse("utf-8" if utf8 else "latin-1", **options)
            except UnicodeDecodeError:
                return parse("latin-1", **options)
        except Exception as exc:  # pandas' ParserError, EmptyDataError, a damaged gzip stream
            raise fail(where, f"cannot be read as {DELIMITER_NAMES[sep or ' ']}-delimited text "
                              f"({reason(exc)}); every line must have the same number of fields") \
                from exc

    def names_of(frame: Any) -> list[str] | None:
        """The header's fields as written (blank where pandas names a column 'Unnamed: i'); the
        frame's column names are stripped."""
        raw_names = None
        if header:
            raw_names = [str(c) for c in frame.columns]
            given = rows[0] if len(rows[0]) == frame.shape[1] else None
            if given is not None:  # pandas names blank header fields 'Unnamed: i'
                raw_names = [c if g.strip() else "" for c, g in zip(raw_names, given, strict=True)]
            frame.columns = [c.strip() if isinstance(c, str) else c for c in frame.columns]
        return raw_names

    fields = {"path": path, "fmt": fmt, "name": name, "sha256": sha256, "label": label, "named": header}
    row_names = header and len(rows) > 1 and len(rows[0]) == len(rows[1]) - 1
    if max(len(r) for r in rows) >= SPARSE_MIN_COLUMNS and not row_names:
        first = read(nrows=block_rows(max(len(r) for r in rows)))
        raw_names = names_of(first)
        sparse = _sparse_layout(first, raw_names, **fields)
        if sparse is not None:
            return _read_sparse(read, first, raw_names, sparse, delimiter=sep or " ", header=header,
                                notes=tuple(notes), **fields)
    frame = read()
    raw_names = names_of(frame)
    return from_frame(frame, raw_names=raw_names, delimiter=sep or " ", header=header, notes=tuple(notes),
                      **fields)


def _blank_columns(frame: Any, raw_names: list[str] | None, named: bool) -> list[bool]:
    """Columns without a name (from_frame's rule): blank in the header, or, without a header, the last."""
    m = frame.shape[1]
    if not named:
        return [i == m - 1 for i in range(m)]
    return [raw_names is not None and i < len(raw_names) and not raw_names[i].strip() for i in range(m)]


def _sparse_layout(first: Any, raw_names: list[str] | None, *, path: Path, fmt: str, name: str, sha256: str,
                   label: str | int | None, named: bool) -> tuple[int, list[bool]] | None:
    """(label column, blank columns) when the file is to be read sparse: its first block ``first`` has
    at least SPARSE_MIN_COLUMNS columns and at most SPARSE_MAX_DENSITY of its numeric feature values are
    non-zero (missing counts as non-zero); None otherwise (the dense read then says what is wrong)."""
    import numpy as np
    import pandas as pd

    m = first.shape[1]
    if m < SPARSE_MIN_COLUMNS or len(first) == 0:
        return None
    blank = _blank_columns(first, raw_names, named)
    try:
        if label is None:
            empty_here = [blank[i] and bool(first.iloc[:, i].isna().all()) for i in range(m)]
            label_at = max(i for i in range(m) if not empty_here[i])
        else:
            label_at = column_index(list(first.columns), label, named=named, where=str(path))
    except Exception:  # noqa: BLE001 - the dense read raises the message
        return None
    numeric = [i for i, t in enumerate(first.dtypes) if i != label_at and pd.api.types.is_numeric_dtype(t)]
    if not numeric:
        return None
    values = first.iloc[:, numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    if np.count_nonzero(values) > SPARSE_MAX_DENSITY * values.size:  # NaN is non-zero
        return None
    return label_at, blank


def _read_sparse(read: Any, first: Any, raw_names: list[str] | None, layout: tuple[int, list[bool]], *,
                 path: Path, fmt: str, name: str, sha256: str, label: str | int | None, named: bool,
                 delimiter: str, header: bool, notes: tuple[str, ...]) -> UserData:
    """The file read in blocks of rows, each kept as CSR (see the module docstring)."""
    import numpy as np
    import pandas as pd
    import scipy.sparse

    where = str(path)
    label_at, blank = layout
    columns = list(first.columns)
    m = len(columns)
    notes_out = list(notes)
    features = [i for i in range(m) if i != label_at]
    n_rows = block_rows(m)
    blocks = []
    for block in read(chunksize=n_rows):
        if named:
            block.columns = columns
        refuse_non_numeric(block, features, named=named, where=where)
        block.isetitem(label_at, np.zeros(len(block)))  # the label is read on its own, below
        values = block.to_numpy(dtype=np.float64, na_value=np.nan)
        blocks.append(scipy.sparse.csr_matrix(values[:, features]))
        del values
    X = scipy.sparse.vstack(blocks, format="csr") if blocks else scipy.sparse.csr_matrix((0, len(features)))
    del blocks
    n = X.shape[0]
    # columns from_frame leaves out: unnamed and empty in every row, then an unnamed first column
    # holding 0..n-1 or 1..n (a row index)
    nan_count = np.bincount(X.indices[np.isnan(X.data)], minlength=len(features))
    keep = np.ones(len(features), dtype=bool)
    for j, i in enumerate(features):
        if blank[i] and n and nan_count[j] == n:
            keep[j] = False
            notes_out.append(f"ignored {_column_name(columns[i], named)}: empty in every row")
    kept = [i for j, i in enumerate(features) if keep[j]]
    if named and kept and kept[0] < label_at and blank[kept[0]]:
        index = read(usecols=[kept[0]]).iloc[:, 0]
        held = index.to_numpy()
        if pd.api.types.is_integer_dtype(index.dtype) and n and (
                np.array_equal(held, np.arange(n)) or np.array_equal(held, np.arange(1, n + 1))):
            notes_out.append(f"ignored {_column_name(columns[kept[0]], named)}: a row index (no name, values "
                             f"{int(index.iloc[0])}..{int(index.iloc[-1])})")
            keep[features.index(kept[0])] = False
            kept = kept[1:]
    if not keep.all():
        X = X[:, np.flatnonzero(keep)]
    col = read(usecols=[label_at]).iloc[:, 0]
    label_name = columns[label_at]
    label_desc = f"label column {str(label_name)!r}" if named else f"label column {label_name}"
    if n < 2:
        raise too_few(where, n)
    labels = column_labels(col, label_desc, where)
    feature_names = tuple(str(columns[i]) for i in kept) if named else None
    label_key: str | int = str(label_name) if named else int(label_name)
    notes_out.append(f"read sparse: {X.shape[1]} feature columns, at most {SPARSE_MAX_DENSITY:.0%} of the values "
                     f"of the first {min(n, n_rows)} rows non-zero")
    return finish(name=name, path=path, fmt=fmt, sha256=sha256, X=X, labels=labels, label_desc=label_desc,
                  label_fix=option("label"), feature_desc=lambda j: _column_name(columns[kept[j]], named),
                  feature_names=feature_names, label=label_key, notes=tuple(notes_out), delimiter=delimiter,
                  header=header)


def _column_name(column: Any, named: bool) -> str:
    return f"column {str(column)!r}" if named else f"column {column}"
