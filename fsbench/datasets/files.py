"""Reading a user's own data file: the datasets of an open benchmark.

    from fsbench.datasets.files import read_data_file
    data = read_data_file(Path("data/tox.csv"), label="class")
    data.X, data.y, data.classes          # float64 (n, d); int64 codes 0..c-1; classes[y] = labels

The format is chosen by the file's extension, ignoring case (:data:`EXTENSIONS`):

- **Delimited text** (``.csv``, ``.tsv``, ``.txt``, each optionally gzip-compressed as ``.gz``).
  The first 25 non-blank lines decide how the file is read. *Delimiter*: tab, semicolon or comma,
  whichever splits every one of those lines after the first into the same number (two or more)
  of fields, the first line having that many or one fewer (R's row names); when several do, the
  one giving the most fields, then in that order; when none does, the one whose most frequent
  number of fields per line is the largest (two or more: the uneven lines are then an error);
  failing that, runs of whitespace.
  *Decimal comma*: a semicolon-, tab- or whitespace-delimited file whose numbers are written
  ``1,5`` and never ``1.5`` is read with decimal commas. *Header*: the first line is a header
  when ``label`` is a name found in it, or when it has a field that is not a number in a
  column whose other values are all numbers, or when none of its fields is a number; else the
  file has no header and its columns are numbered from 0 (so a header whose feature names are
  all numbers reads as data unless ``label`` names the label column). Empty fields, ``NA``, ``NaN``, ``?`` and pandas'
  other missing-value markers are missing values. A column without a name (or, without a
  header, the last column) that is empty in every row, as a trailing delimiter leaves, is
  ignored; so is a first column without a name holding 0..n-1 or 1..n (a row index written by
  pandas) and R's row names (a header one field short).
- **Parquet** (``.parquet``, ``.pq``): pandas' reader, with pyarrow or fastparquet installed
  (``pip install "fsbench[parquet]"``); its index is not a feature.
- **ARFF** (``.arff``): scipy's reader; nominal features are an error (fsbench needs numbers).
- **MATLAB** (``.mat``, v5 through scipy, v7.3 through h5py, whose arrays are stored transposed
  and are read back in MATLAB's layout): the data and label variables ``X``/``Y``, ``fea``/``gnd``
  or ``data``/``label`` (exactly, else ignoring case), or those named by ``x`` and ``y`` (one
  given alone takes the other from that list). Sparse matrices are densified, labels flattened;
  labels may be numbers, a char matrix or a cell array of strings.
- **NumPy** (``.npz``): arrays ``X`` and ``y`` (ignoring case; else the .mat names), or ``x``
  and ``y``; no pickled object arrays.
- **svmlight / LIBSVM** (``.svm``, ``.libsvm``, ``.svmlight``, optionally ``.gz``): scikit-learn's
  reader, densified; feature indices count from 1 unless an index 0 appears, and features after
  the largest index present are not known to the file.

In the tables (text, Parquet, ARFF) the label column is ``label``, else the last column.
``label`` is a column name (matched exactly, else ignoring case and surrounding blanks when
that is unique) or an integer position among the file's columns (R's row names aside) counting
from 0, negative from the end; a name wins when a column is named by the same digits. Every
other column is a feature and must be numeric. ``label`` is an error for .mat, .npz and
svmlight files, which have no columns (name a .mat or .npz file's variables with ``x`` and
``y``), and ``x``/``y`` are errors for every other format.

Labels map to codes 0..c-1 in sorted order of the original labels (numbers numerically,
integral floats as integers; strings, stripped of surrounding blanks, by code point);
``classes[code]`` is the original label. The checks of the registry's datasets follow: at
least 2 samples and 1 feature, one label per sample, no missing label, at least 2 classes and
no NaN or infinite value (fsbench does not impute). Class sizes for a protocol are the
runner's to check. Every problem is a :class:`fsbench.errors.DataError` of one sentence
naming the file, the problem and its fix.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import functools
import gzip
import importlib.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.loaders import (
    MAT_KEYS,
    ContentProblem,
    MatKeysNotFound,
    as_labels,
    as_matrix,
    choose_mat_keys,
    nonfinite,
    read_mat,
)
from fsbench.datasets.paths import sha256_of
from fsbench.errors import DataError

__all__ = ["EXTENSIONS", "UserData", "describe", "describe_data_file", "format_of",
           "looks_like_data_file", "read_data_file"]

# extension (lower case) -> format
EXTENSIONS: dict[str, str] = {
    ".csv": "csv", ".tsv": "tsv", ".txt": "text",
    ".parquet": "parquet", ".pq": "parquet",
    ".arff": "arff",
    ".mat": "mat",
    ".npz": "npz",
    ".svm": "svmlight", ".libsvm": "svmlight", ".svmlight": "svmlight",
}
TEXT_FORMATS = ("csv", "tsv", "text")
TABLE_FORMATS = (*TEXT_FORMATS, "parquet", "arff")
GZIP_FORMATS = (*TEXT_FORMATS, "svmlight")  # formats that may also come as NAME.EXT.gz

_SAMPLE_LINES = 25  # non-blank lines that decide the delimiter, decimal mark and header
_SAMPLE_BYTES = 4 << 20  # ... or fewer (at least 3) once this many bytes are read
_DELIMITERS = ("\t", ";", ",")  # in order of preference on a tie
_DELIMITER_NAMES = {"\t": "tab", ";": "semicolon", ",": "comma", " ": "whitespace"}
# pandas' default missing-value markers, plus ARFF's and UCI's '?'
_MISSING = frozenset({"", "?", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
                      "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan",
                      "null"})
_NUMBER = {
    ".": re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.I),
    ",": re.compile(r"[+-]?(?:\d+,?\d*|,\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.I),
}
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_DECIMAL_POINT = re.compile(r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?")


@dataclass(frozen=True, eq=False)
class UserData:
    """A user's data file, read and checked.

    ``X`` float64 (n, d) C-contiguous; ``y`` int64 codes 0..c-1; ``classes`` the original labels
    in sorted order (``classes[y]`` gives them back). The three arrays are read-only.
    ``feature_names`` are the feature columns' names (None where the file has none: text without
    a header, .mat, .npz, svmlight). ``label`` is the label column used in a table (its name, or
    its position counting from 0 in a text file without header; None for the other formats);
    ``variables`` the (data, labels) variables read from a .mat or .npz file. ``delimiter``
    (``","``, ``"\\t"``, ``";"`` or ``" "`` for whitespace) and ``header`` say how a text file was
    read; ``notes`` what else was decided (decimal comma, columns ignored).
    """

    name: str
    path: Path
    format: str
    sha256: str
    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    feature_names: tuple[str, ...] | None = None
    label: str | int | None = None
    variables: tuple[str, str] | None = None
    delimiter: str | None = None
    header: bool | None = None
    notes: tuple[str, ...] = ()

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def class_sizes(self) -> tuple[int, ...]:
        """Samples per class, in the order of ``classes``."""
        return tuple(int(v) for v in np.bincount(self.y, minlength=len(self.classes)))

    @property
    def n_constant(self) -> int:
        """Features with the same value in every sample."""
        return int((np.ptp(self.X, axis=0) == 0).sum()) if self.X.size else 0

    @property
    def label_source(self) -> str:
        """Where the labels came from, in words: "column 'class'", "variable 'gnd'", ..."""
        if self.variables is not None:
            return f"variable {self.variables[1]!r} (data: {self.variables[0]!r})"
        if self.format == "svmlight":
            return "the first field of each line"
        if isinstance(self.label, int):
            return f"column {self.label} (counting from 0)"
        return f"column {self.label!r}"


# ----------------------------------------------------------------------------- small helpers
def _fail(where: str, problem: str) -> DataError:
    return DataError(f"{where} {problem}.")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


_KIND = {"csv": "CSV", "tsv": "TSV", "text": "text", "parquet": "Parquet", "arff": "ARFF",
         "mat": "MATLAB .mat", "npz": "NumPy .npz", "svmlight": "svmlight"}


def _too_few(where: str, n: int) -> DataError:
    return _fail(where, f"has {_count(n, 'sample')}; fsbench needs at least 2, one per row")


def _supported() -> str:
    exts = list(EXTENSIONS)
    return (f"{', '.join(exts[:-1])} and {exts[-1]} files, the text and svmlight ones also "
            "gzip-compressed (.gz)")


def _quote_list(names: Sequence[Any], limit: int = 5) -> str:
    shown = [repr(str(n)) for n in names[:limit]]
    if len(names) > limit + 1:
        return f"{', '.join(shown)}, ... {repr(str(names[-1]))}"
    return ", ".join(repr(str(n)) for n in names)


def format_of(path: str | Path) -> str | None:
    """The format of a file by its extension, ignoring case ("csv", "mat", ...), else None."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if not suffixes:
        return None
    if suffixes[-1] == ".gz":
        fmt = EXTENSIONS.get(suffixes[-2]) if len(suffixes) >= 2 else None
        return fmt if fmt in GZIP_FORMATS else None
    return EXTENSIONS.get(suffixes[-1])


def looks_like_data_file(text: str) -> bool:
    """Whether a command-line argument names a data file rather than a registered dataset: an
    existing file, or text holding a path separator or ending in a supported extension."""
    seps = [s for s in (os.sep, os.altsep, "/") if s]
    return (Path(text).is_file() or any(s in text for s in seps)
            or format_of(text) is not None)


def _stem(path: Path) -> str:
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return Path(name).stem or name


# ----------------------------------------------------------------------------- labels
def _label_values(values: np.ndarray) -> np.ndarray:
    """Labels as numbers (integral floats as int64) or stripped strings, ready for np.unique."""
    if values.dtype.kind == "O":  # cells of a .mat cell array, or mixed objects
        flat = []
        for v in values.ravel():
            while isinstance(v, np.ndarray) and v.size == 1:
                v = v.reshape(-1)[0]
            flat.append("".join(map(str, v.ravel())) if isinstance(v, np.ndarray) else v)
        values = np.asarray([str(v) for v in flat])
    if values.dtype.kind in "SU":
        if values.dtype.kind == "S":
            values = np.char.decode(values, "utf-8", "replace")
        return np.char.strip(values.astype(str))
    if values.dtype.kind == "f" and np.isfinite(values).all() and (values == np.round(values)).all() \
            and np.abs(values).max(initial=0) < 2 ** 53:
        return values.astype(np.int64)
    return values


def _finish(*, name: str, path: Path, fmt: str, sha256: str, X: np.ndarray, labels: np.ndarray,
            label_desc: str, label_fix: str, feature_desc: Any, **fields: Any) -> UserData:
    """The checks every format gets, then the read-only UserData.

    ``label_desc`` names where the labels are ("label column 'class'"), ``label_fix`` what to
    set to choose them ("label:"), ``feature_desc(j)`` names feature j in messages.
    """
    where = str(path)
    n, d = X.shape
    if len(labels) != n:
        hint = " (the data look transposed: samples must be rows)" if d == len(labels) else ""
        raise _fail(where, f"has {n} samples in its data but {len(labels)} labels in its "
                           f"{label_desc}{hint}; give one label per sample")
    if n < 2:
        raise _too_few(where, n)
    if d == 0:
        raise _fail(where, f"has no features besides its {label_desc}; fsbench needs at least "
                           "one numeric feature")
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        only = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        what = "a label column" if label_desc.startswith("label column") else "labels"
        raise _fail(where, f"has {what} with one class ({only!r} in every sample of its "
                           f"{label_desc}); fsbench needs at least 2 classes, so check that "
                           f"{label_fix} names the class")
    if (bad := nonfinite(X)) is not None:
        n_nan, n_inf, row, col = bad
        raise _fail(where, f"contains {n_nan} NaN and {n_inf} infinite values (the first at "
                           f"sample {row}, {feature_desc(col)}; positions count from 0) and "
                           "fsbench does not impute; fill them in or remove those samples or "
                           "features")
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64).reshape(-1)
    for arr in (X, y, classes):
        arr.flags.writeable = False
    return UserData(name=name, path=path, format=fmt, sha256=sha256, X=X, y=y, classes=classes,
                    **fields)


# ----------------------------------------------------------------------------- tables
def _column_index(columns: Sequence[Any], label: str | int | None, *, named: bool,
                  where: str) -> int:
    """Position of the label column among ``columns`` (see the module docstring)."""
    m = len(columns)
    if label is None:
        return m - 1
    text = str(label).strip()
    if named:
        names = [str(c).strip() for c in columns]
        if text in names:
            return names.index(text)
        folded = [i for i, c in enumerate(names) if c.lower() == text.lower()]
        if len(folded) == 1:
            return folded[0]
    if re.fullmatch(r"[+-]?\d+", text):
        pos = int(text)
        if -m <= pos < m:
            return pos % m
        raise _fail(where, f"has {m} columns (positions 0 to {m - 1}), so label: {label} is "
                           "beyond them; give the label column's position or name")
    if not named:
        raise _fail(where, f"has no header row (its first line holds numbers), so its {m} columns "
                           f"are numbered 0 to {m - 1} and cannot be found by the name "
                           f"{text!r}; give label: as a position (label: {m - 1} for the last)")
    names = [str(c) for c in columns]
    close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise _fail(where, f"has no column {text!r} to use as the label (its {m} columns: "
                       f"{_quote_list(names)}{hint}); set label: to the class column's name "
                       "or position")


def _describe_columns(cols: Sequence[Any], named: bool) -> str:
    if named:
        return _quote_list(list(cols), limit=3)
    shown = ", ".join(str(c) for c in cols[:3])
    return shown + (", ..." if len(cols) > 3 else "")


def _from_frame(frame: Any, *, path: Path, fmt: str, name: str, sha256: str,
                label: str | int | None, named: bool, raw_names: Sequence[str] | None = None,
                **fields: Any) -> UserData:
    """A UserData from a pandas table: pick the label column, check the features are numbers.

    ``frame`` is modified (its other columns zeroed). ``raw_names`` are the header's fields as
    written (blank where pandas names a column 'Unnamed: i').
    """
    import pandas as pd

    where = str(path)
    notes = list(fields.pop("notes", ()))
    columns = list(frame.columns)
    blank = [raw_names is not None and i < len(raw_names) and not raw_names[i].strip()
             for i in range(len(columns))]
    if not named:
        blank = [i == len(columns) - 1 for i in range(len(columns))]  # a trailing delimiter's
    empty = [blank[i] and bool(frame.iloc[:, i].isna().all()) for i in range(len(columns))]
    kept = [i for i in range(len(columns)) if not empty[i]]
    for i in range(len(columns)):
        if empty[i]:
            notes.append(f"ignored {_col_name(columns[i], named)}: empty in every row")
    if not kept:
        raise _fail(where, "has no values")
    if label is None:
        label_at = kept[-1]
    else:
        label_at = _column_index(columns, label, named=named, where=where)
    n = len(frame)
    if named and kept[0] != label_at and blank[kept[0]]:
        first = frame.iloc[:, kept[0]]
        if pd.api.types.is_integer_dtype(first.dtype) and n and (
                np.array_equal(first.to_numpy(), np.arange(n))
                or np.array_equal(first.to_numpy(), np.arange(1, n + 1))):
            notes.append(f"ignored {_col_name(columns[kept[0]], named)}: a row index (no name, "
                         f"values {int(first.iloc[0])}..{int(first.iloc[-1])})")
            kept = kept[1:]
    features = [i for i in kept if i != label_at]
    label_name = columns[label_at]
    label_desc = f"label column {str(label_name)!r}" if named else f"label column {label_name}"
    col = frame.iloc[:, label_at].copy()

    if n < 2:
        raise _too_few(where, n)

    # features: numbers only
    dtypes = list(frame.dtypes)
    numeric = [pd.api.types.is_numeric_dtype(dtypes[i]) for i in features]
    if not all(numeric):
        bad = [columns[i] for i, ok in zip(features, numeric, strict=True) if not ok]
        first_bad = frame.iloc[:, features[numeric.index(False)]]
        example = next((str(v) for v in first_bad.dropna() if not _is_number(str(v))), None)
        if len(bad) == 1:
            held = f" holding {example!r}" if example is not None else ""
            which = f"{_col_name(bad[0], named)}{held}"
        else:
            held = f"; {_col_name(bad[0], named)} holds {example!r}" if example is not None else ""
            which = f"columns {_describe_columns(bad, named)}{held}"
        cols = "columns that are" if len(bad) > 1 else "column that is"
        raise _fail(where, f"has {len(bad)} feature {cols} not numeric ({which}); fsbench needs "
                           "numeric features, so encode or remove them, or set label: if one of "
                           "them is the class")
    if features:
        # Selecting columns of a frame of thousands of columns costs pandas a block each: put
        # zeros in the other columns (the frame is ours) and select with numpy instead.
        chosen = set(features)
        for i in range(len(columns)):
            if i not in chosen:
                frame.isetitem(i, np.zeros(n))
        X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
        X = X[:, features] if len(features) < X.shape[1] else X
    else:
        X = np.empty((n, 0))

    # labels
    missing = col.isna().to_numpy()
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        raise _fail(where, f"has {_count(int(missing.sum()), 'sample')} without a label in its "
                           f"{label_desc} (the first is sample {first}, counting from 0); fill "
                           "them in or remove those rows")
    if pd.api.types.is_bool_dtype(col.dtype) or pd.api.types.is_numeric_dtype(col.dtype):
        values = col.to_numpy()
        if values.dtype.kind not in "biuf":
            values = values.astype(np.float64)
    else:
        values = np.asarray(col.astype(str).tolist(), dtype=str)
    labels = _label_values(values)
    if named:
        feature_names: tuple[str, ...] | None = tuple(str(columns[i]) for i in features)
        label_key: str | int = str(label_name)
    else:
        feature_names, label_key = None, int(label_name)
    names_of = [columns[i] for i in features]
    return _finish(name=name, path=path, fmt=fmt, sha256=sha256, X=X, labels=labels,
                   label_desc=label_desc, label_fix="label:",
                   feature_desc=lambda j: _col_name(names_of[j], named),
                   feature_names=feature_names, label=label_key, notes=tuple(notes), **fields)


def _col_name(column: Any, named: bool) -> str:
    return f"column {str(column)!r}" if named else f"column {column}"


def _is_number(text: str, decimal: str = ".") -> bool:
    return bool(_NUMBER[decimal].fullmatch(text.strip()))


# ----------------------------------------------------------------------------- delimited text
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
    """Tab, semicolon or comma (None: whitespace); see the module docstring."""
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
    """Whether the first row is a header; see the module docstring."""
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


# ----------------------------------------------------------------------------- other tables
def _parquet_engine() -> str | None:
    for module in ("pyarrow", "fastparquet"):
        if importlib.util.find_spec(module) is not None:
            return module
    return None


def _read_parquet(path: Path, label: str | int | None, *, name: str, sha256: str) -> UserData:
    import pandas as pd

    where = str(path)
    need = ('reading Parquet files needs pyarrow or fastparquet; install them with '
            'pip install "fsbench[parquet]"')
    if _parquet_engine() is None:
        raise _fail(where, f"is a Parquet file, and {need}")
    try:
        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise _fail(where, f"is a Parquet file, and {need}") from exc
    except Exception as exc:
        raise _fail(where, f"cannot be read as a Parquet file ({_reason(exc)})") from exc
    return _from_frame(frame, path=path, fmt="parquet", name=name, sha256=sha256, label=label,
                       named=True)


def _read_arff(path: Path, label: str | int | None, *, name: str, sha256: str) -> UserData:
    import scipy.io.arff

    where = str(path)
    try:
        records, meta = scipy.io.arff.loadarff(str(path))
    except Exception as exc:
        raise _fail(where, f"cannot be read as an ARFF file ({_reason(exc)}); fsbench reads dense "
                           "ARFF with numeric, nominal and date attributes") from exc
    names, types = list(meta.names()), list(meta.types())
    at = _column_index(names, label, named=True, where=where)
    features = [i for i in range(len(names)) if i != at]
    other = [i for i in features if types[i] != "numeric"]
    if other:
        attrs = "attributes" if len(other) > 1 else "attribute"
        shown = ", ".join(f"{names[i]!r} ({types[i]})" for i in other[:3])
        more = f" and {len(other) - 3} more" if len(other) > 3 else ""
        raise _fail(where, f"has {len(other)} feature {attrs} that {'are' if len(other) > 1 else 'is'}"
                           f" not numeric ({shown}{more}) and fsbench needs numeric features; "
                           "encode or remove them, or set label: if one of them is the class")
    if features:
        X = np.column_stack([np.asarray(records[names[i]], dtype=np.float64) for i in features])
    else:
        X = np.empty((len(records), 0))
    values = np.asarray(records[names[at]])
    label_desc = f"label column {names[at]!r}"
    if values.dtype.kind == "S":
        missing = values == b"?"
    elif values.dtype.kind == "f":
        missing = np.isnan(values)
    else:
        missing = np.zeros(len(values), dtype=bool)
    if missing.any():
        raise _fail(where, f"has {_count(int(missing.sum()), 'sample')} without a label ('?') in "
                           f"its {label_desc} (the first is sample "
                           f"{int(np.flatnonzero(missing)[0])}, counting from 0); fill them in or "
                           "remove those rows")
    feature_names = tuple(names[i] for i in features)
    return _finish(name=name, path=path, fmt="arff", sha256=sha256, X=X,
                   labels=_label_values(values), label_desc=label_desc, label_fix="label:",
                   feature_desc=lambda j: f"column {feature_names[j]!r}",
                   feature_names=feature_names, label=names[at])


# ----------------------------------------------------------------------------- arrays
def _arrays(path: Path, fmt: str, data: Any, labels: Any, keys: tuple[str, str], *, name: str,
            sha256: str) -> UserData:
    where = str(path)
    try:
        X = as_matrix(data)
    except ContentProblem as exc:
        raise _fail(where, f"{exc} (variable {keys[0]!r}); store the data as a numeric samples x "
                           "features matrix") from None
    if isinstance(labels, np.ndarray) and labels.dtype.kind == "O":  # a cell array of strings
        labels = _label_values(labels)
    try:
        values = as_labels(labels)
    except ContentProblem as exc:
        raise _fail(where, f"{exc} (variable {keys[1]!r}); store one label per sample") from None
    return _finish(name=name, path=path, fmt=fmt, sha256=sha256, X=X,
                   labels=_label_values(values), label_desc=f"label variable {keys[1]!r}",
                   label_fix="y:", feature_desc=lambda j: f"feature {j}", variables=keys)


def _missing_variables(where: str, exc: MatKeysNotFound, kind: str) -> DataError:
    held = ", ".join(repr(n) for n in sorted(exc.names)) or "none"
    if exc.missing:
        wanted = " and ".join(repr(m) for m in exc.missing)
        noun = "variables" if len(exc.missing) > 1 else "variable"
        return _fail(where, f"has no {noun} {wanted} (it holds: {held}); set x: and y: to its "
                            f"data and label variables")
    pairs = " or ".join(f"{x}/{y}" for x, y in MAT_KEYS)
    if kind == "npz":
        pairs = pairs.replace("X/Y", "X/y") + " (in any case)"
    return _fail(where, f"has no data and label variables {pairs} (it holds: {held}); name them "
                        "with x: and y: in the config")


def _read_mat_file(path: Path, x: str | None, y: str | None, *, name: str,
                   sha256: str) -> UserData:
    where = str(path)
    try:
        x_key, y_key, data, labels = read_mat(path, x, y)
    except MatKeysNotFound as exc:
        raise _missing_variables(where, exc, "mat") from None
    except Exception as exc:
        raise _fail(where, f"cannot be read as a MATLAB .mat file ({_reason(exc)}); save it with "
                           "MATLAB's save (v5 to v7.3) or scipy.io.savemat") from exc
    return _arrays(path, "mat", data, labels, (x_key, y_key), name=name, sha256=sha256)


def _read_npz(path: Path, x: str | None, y: str | None, *, name: str, sha256: str) -> UserData:
    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            x_key, y_key = choose_mat_keys(archive.files, x, y)
            try:
                data, labels = archive[x_key], archive[y_key]
            except ValueError as exc:
                if "allow_pickle" not in str(exc):
                    raise
                raise _fail(where, f"holds {x_key!r} or {y_key!r} as an array of Python objects, "
                                   "which fsbench does not load (loading one can run code); save "
                                   "them as numeric or string arrays, e.g. np.asarray(y, dtype=str)"
                            ) from None
    except MatKeysNotFound as exc:
        raise _missing_variables(where, exc, "npz") from None
    except DataError:
        raise
    except Exception as exc:
        raise _fail(where, f"cannot be read as a NumPy .npz archive ({_reason(exc)}); save it "
                           "with np.savez(path, X=X, y=y)") from exc
    return _arrays(path, "npz", data, labels, (x_key, y_key), name=name, sha256=sha256)


def _read_svmlight(path: Path, *, name: str, sha256: str) -> UserData:
    from sklearn.datasets import load_svmlight_file

    where = str(path)
    try:
        data, labels = load_svmlight_file(str(path))
    except Exception as exc:
        raise _fail(where, f"cannot be read as an svmlight/LIBSVM file ({_reason(exc)}); each "
                           "line must be 'label index:value ...'") from exc
    X = np.asarray(data.toarray(), dtype=np.float64)
    return _finish(name=name, path=path, fmt="svmlight", sha256=sha256, X=X,
                   labels=_label_values(np.asarray(labels)), label_desc="labels",
                   label_fix="the first field of each line",
                   feature_desc=lambda j: f"feature {j}")


# ----------------------------------------------------------------------------- entry points
def _check_options(path: Path, fmt: str, label: str | int | None, x: str | None,
                   y: str | None) -> None:
    where = str(path)
    if label is not None and fmt not in TABLE_FORMATS:
        fix = ("name its variables with x: and y: instead" if fmt in ("mat", "npz")
               else "remove label: (the label is the first field of each line)")
        raise _fail(where, f"is a {_KIND[fmt]} file, which has no columns, so label: {label} does "
                           f"not apply (label: names a column of a .csv, .tsv, .txt, .arff or "
                           f".parquet table); {fix}")
    if (x is not None or y is not None) and fmt not in ("mat", "npz"):
        given = [k for k, v in (("x:", x), ("y:", y)) if v is not None]
        fix = ("set label: to its label column instead" if fmt in TABLE_FORMATS
               else "remove them (the label is the first field of each line)")
        raise _fail(where, f"is a {_KIND[fmt]} file, so {' and '.join(given)} "
                           f"{'does' if len(given) == 1 else 'do'} not apply (x: and y: name "
                           f"variables of .mat and .npz files); {fix}")


@functools.lru_cache(maxsize=4)
def _read_cached(path: Path, resolved: Path, stamp: tuple[int, int], fmt: str,
                 label: str | int | None, x: str | None, y: str | None) -> UserData:
    """The read of ``path`` (messages name it as given; ``resolved`` and ``stamp``, its mtime
    and size before the read, key the cache)."""
    name = _stem(path)
    sha256 = sha256_of(path)
    if fmt in TEXT_FORMATS:
        data = _read_text(path, fmt, label, name=name, sha256=sha256)
    elif fmt == "parquet":
        data = _read_parquet(path, label, name=name, sha256=sha256)
    elif fmt == "arff":
        data = _read_arff(path, label, name=name, sha256=sha256)
    elif fmt == "mat":
        data = _read_mat_file(path, x, y, name=name, sha256=sha256)
    elif fmt == "npz":
        data = _read_npz(path, x, y, name=name, sha256=sha256)
    else:
        data = _read_svmlight(path, name=name, sha256=sha256)
    st = path.stat()
    if (st.st_mtime_ns, st.st_size) != stamp:
        raise _fail(str(path), "changed while it was being read; try again once nothing is "
                               "writing to it")
    return data


def read_data_file(path: str | Path, *, label: str | int | None = None, x: str | None = None,
                   y: str | None = None, name: str | None = None) -> UserData:
    """Read and check a user's data file; its format comes from its extension.

    ``label`` picks the label column of a table (a name, or a position counting from 0; default
    the last column); ``x`` and ``y`` name the data and label variables of a .mat or .npz file.
    ``name`` is the dataset's name (default the file name without its extension). The rules of
    each format (delimiter, header, label mapping) are in the module docstring. Raises
    :class:`fsbench.errors.DataError`, one sentence naming the problem and its fix, for any
    problem with the file or the options. Reads are cached per file path, mtime and size.
    """
    path = Path(path).expanduser()
    where = str(path)
    if isinstance(label, bool):
        raise _fail(where, f"cannot take label: {label} (a yes/no value); give the label column's "
                           "name or position")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise _fail(where, "does not exist; check the path (a config's paths are relative to "
                           "the config file's folder)") from None
    except OSError as exc:
        raise _fail(where, f"cannot be read ({_reason(exc)})") from exc
    if path.is_dir():
        raise _fail(where, f"is a folder, not a data file; give the path of one file (fsbench "
                           f"reads {_supported()})")
    fmt = format_of(path)
    if fmt is None:
        suffix = "".join(path.suffixes[-2:]) if path.name.lower().endswith(".gz") else path.suffix
        what = f"an unknown extension {suffix!r}" if suffix else "no extension"
        raise _fail(where, f"has {what}, so its format is unknown; fsbench reads {_supported()}: "
                           "convert it to one of them (CSV is the simplest) or, if it is one, "
                           "rename it")
    _check_options(path, fmt, label, x, y)
    if isinstance(label, str) and not label.strip():
        raise _fail(where, "was given an empty label:; give the label column's name or position")
    data = _read_cached(path, path.resolve(), (st.st_mtime_ns, st.st_size), fmt, label, x, y)
    return dataclasses.replace(data, path=path, name=name if name is not None else data.name)


# ----------------------------------------------------------------------------- description
_MAX_CLASSES_SHOWN = 30


def _label_text(value: Any) -> str:
    value = value.item() if isinstance(value, np.generic) else value
    return repr(value) if isinstance(value, str) else str(value)


def describe(data: UserData) -> list[str]:
    """Lines describing a data file as fsbench reads it (``fsbench datasets info PATH``)."""
    how = data.format
    if data.format in TEXT_FORMATS:
        parts = [f"{_DELIMITER_NAMES.get(data.delimiter or ' ', 'whitespace')}-delimited",
                 "header row" if data.header else "no header: columns numbered from 0"]
        how = f"{data.format} ({', '.join(parts)})"
    lines = [f"{data.name} (file {data.path})",
             f"  format:    {how}",
             f"  shape:     {data.n_samples} samples x {data.n_features} features, "
             f"{data.n_classes} classes",
             f"  label:     {data.label_source}"]
    sizes = data.class_sizes
    smallest = min(sizes)
    lines.append(f"  classes:   code: label (samples), labels in sorted order; smallest class "
                 f"{smallest} sample{'s' if smallest != 1 else ''}")
    width = len(str(data.n_classes - 1))
    for code, (value, size) in enumerate(zip(data.classes[:_MAX_CLASSES_SHOWN], sizes,
                                             strict=False)):
        lines.append(f"             {code:>{width}}: {_label_text(value)} ({size})")
    if data.n_classes > _MAX_CLASSES_SHOWN:
        rest = sizes[_MAX_CLASSES_SHOWN:]
        lines.append(f"             ... and {len(rest)} more classes of {min(rest)} to "
                     f"{max(rest)} samples")
    n_const = data.n_constant
    lines.append(f"  constant:  {n_const} feature{'s' if n_const != 1 else ''} with the same "
                 "value in every sample")
    if data.feature_names is not None:
        lines.append(f"  features:  {_quote_list(list(data.feature_names))}")
    for note in data.notes:
        lines.append(f"  note:      {note}")
    lines.append(f"  sha256:    {data.sha256}")
    return lines


def describe_data_file(path: str | Path, *, label: str | int | None = None, x: str | None = None,
                       y: str | None = None, name: str | None = None) -> str:
    """:func:`read_data_file`, then :func:`describe` as one text of several lines."""
    data = read_data_file(path, label=label, x=x, y=y, name=name)
    return "\n".join(describe(data))
