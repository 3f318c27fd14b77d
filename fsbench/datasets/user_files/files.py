"""Reading a user's own data file: the datasets of an open benchmark.

    from fsbench.datasets.user_files.files import read_data_file
    data = read_data_file(Path("data/tox.csv"), label="class")
    data.X, data.y, data.classes          # float64 (n, d); int64 codes 0..c-1; classes[y] = labels

The format is chosen by the file's extension, ignoring case (:data:`EXTENSIONS`):

- **Delimited text** (``.csv``, ``.tsv``, ``.txt``, each optionally gzip-compressed as ``.gz``).
  Text is UTF-8 (a byte-order mark is skipped), else Latin-1; lines end in LF, CRLF or a CR
  alone (old Mac files). A file holding bytes no text holds (NUL and the other control
  characters but tab, form feed and vertical tab: binary data, UTF-16 text, a gzip or ZIP file
  under a .csv name) is refused, naming what it looks like.
  The first 25 non-blank lines decide how the file is read. *Delimiter*: tab, semicolon or comma,
  whichever splits every one of those lines after the first into the same number (two or more)
  of fields, the first line having that many or one fewer (R's row names); when several do, the
  one giving the most fields, then in that order; when none does, the one whose most frequent
  number of fields per line is the largest (two or more: the uneven lines are then an error);
  failing that, runs of whitespace.
  A file of at least 1,000 columns whose first block of rows (about 8 million values) holds at
  most 10 % non-zero feature values (a missing value counts as non-zero) is read sparse: in
  blocks of rows, each kept as a CSR matrix (:mod:`fsbench.datasets.user_files.delimited`).
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
  given alone takes the other from that list). A sparse data matrix stays sparse; labels are
  flattened and may be numbers, a char matrix or a cell array of strings.
- **NumPy** (``.npz``): arrays ``X`` and ``y`` (ignoring case; else the .mat names), or ``x``
  and ``y``; no pickled object arrays. An archive in the layout ``scipy.sparse.save_npz`` writes
  (arrays ``format``, ``shape``, ``data``, ``indices``, ``indptr``) is read by
  ``scipy.sparse.load_npz`` and stays sparse; its labels are the array ``y`` names, else ``y``
  (ignoring case), ``gnd``, ``label`` or ``labels`` beside them
  (``np.savez(path, y=y, **np.load(matrix_file))`` adds them to save_npz's file).
- **svmlight / LIBSVM** (``.svm``, ``.libsvm``, ``.svmlight``, optionally ``.gz``): scikit-learn's
  reader, kept sparse; feature indices count from 1 unless an index 0 appears, and features after
  the largest index present are not known to the file.

**Sparse data.** A matrix stored sparse stays sparse: ``X`` is then a ``scipy.sparse.csr_matrix``
of float64 with sorted indices, duplicates summed and no stored zero, read-only, never densified
by reading or checking (finite values and constant features are read from its stored values).
The engine scales it without centring (:mod:`fsbench.evaluation.sparse_scaling`) and fits
selectors on it as :mod:`fsbench.engine.fitting` states. (The papers' registered datasets are
dense files, read dense.)

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

The readers live beside this module: :mod:`~fsbench.datasets.user_files.delimited` (text),
:mod:`~fsbench.datasets.user_files.tables` (Parquet, ARFF, and the label column of every table)
and :mod:`~fsbench.datasets.user_files.arrays` (.mat, .npz, svmlight; .mat files through
:mod:`~fsbench.datasets.user_files.matlab`), all returning a :class:`UserData`
(:mod:`~fsbench.datasets.user_files.user_data`) after the checks of
:mod:`~fsbench.datasets.user_files.validation`, with messages worded by
:mod:`~fsbench.datasets.user_files.messages`. This module chooses the reader by extension, checks
the options, caches reads, and describes a file for ``fsbench datasets info PATH``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.user_files.arrays import read_mat_file, read_npz, read_svmlight
from fsbench.datasets.user_files.delimited import DELIMITER_NAMES, read_text
from fsbench.datasets.user_files.messages import (
    CONFIG_OPTIONS,
    fail,
    format_bytes,
    option,
    options_named,
    quote_list,
    reason,
)
from fsbench.datasets.user_files.tables import read_arff, read_parquet
from fsbench.datasets.user_files.user_data import UserData
from fsbench.errors import DataError

__all__ = ["COMMAND_LINE_OPTIONS", "CONFIG_OPTIONS", "EXTENSIONS", "UserData", "describe", "describe_data_file",
           "format_of", "looks_like_data_file", "not_a_file", "read_data_file", "storage_line"]

#: the options of ``fsbench datasets info`` that a config's label:, x: and y: are
COMMAND_LINE_OPTIONS = {"label": "--label", "x": "--x", "y": "--y"}

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


_KIND = {"csv": "CSV", "tsv": "TSV", "text": "text", "parquet": "Parquet", "arff": "ARFF",
         "mat": "MATLAB .mat", "npz": "NumPy .npz", "svmlight": "svmlight"}



def _supported() -> str:
    exts = list(EXTENSIONS)
    return (f"{', '.join(exts[:-1])} and {exts[-1]} files, the text and svmlight ones also "
            "gzip-compressed (.gz)")



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


_RESULTS_FILES = ("runs.csv.gz", "rankings.csv.gz")  # a results folder's tables: CSV, but no data


def not_a_file(folder: Path) -> DataError:
    """The one sentence for a folder given where a data file is expected, naming the data files
    in it (a few) so that the fix is one copy away."""
    try:
        inside = sorted(p.name for p in folder.iterdir() if p.is_file() and format_of(p) is not None
                        and p.name not in _RESULTS_FILES)
    except OSError:
        inside = []
    if inside:
        shown = ", ".join(str(folder / n) for n in inside[:3]) + (f" and {len(inside) - 3} more" if len(inside) > 3
                                                                  else "")
        fix = f"give the path of one data file in it, such as {shown}"
    else:
        fix = f"give the path of one data file (fsbench reads {_supported()})"
    return fail(str(folder), f"is a folder, not a data file or a dataset name; {fix}")


def _stem(path: Path) -> str:
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return Path(name).stem or name



def _check_options(path: Path, fmt: str, label: str | int | None, x: str | None,
                   y: str | None) -> None:
    where = str(path)
    opt_label, opt_x, opt_y = option("label"), option("x"), option("y")
    if label is not None and fmt not in TABLE_FORMATS:
        fix = (f"name its variables with {opt_x} and {opt_y} instead" if fmt in ("mat", "npz")
               else f"remove {opt_label} (the label is the first field of each line)")
        raise fail(where, f"is a {_KIND[fmt]} file, which has no columns, so {opt_label} {label} does "
                          f"not apply ({opt_label} names a column of a .csv, .tsv, .txt, .arff or "
                          f".parquet table); {fix}")
    if (x is not None or y is not None) and fmt not in ("mat", "npz"):
        given = [k for k, v in ((opt_x, x), (opt_y, y)) if v is not None]
        fix = (f"set {opt_label} to its label column instead" if fmt in TABLE_FORMATS
               else "remove them (the label is the first field of each line)")
        raise fail(where, f"is a {_KIND[fmt]} file, so {' and '.join(given)} "
                          f"{'does' if len(given) == 1 else 'do'} not apply ({opt_x} and {opt_y} name "
                          f"variables of .mat and .npz files); {fix}")


def _sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.lru_cache(maxsize=4)
def _read_cached(path: Path, resolved: Path, stamp: tuple[int, int], fmt: str,
                 label: str | int | None, x: str | None, y: str | None) -> UserData:
    """The read of ``path`` (messages name it as given; ``resolved`` and ``stamp``, its mtime
    and size before the read, key the cache)."""
    name = _stem(path)
    sha256 = _sha256_of(path)
    if fmt in TEXT_FORMATS:
        data = read_text(path, fmt=fmt, label=label, name=name, sha256=sha256)
    elif fmt == "parquet":
        data = read_parquet(path, label=label, name=name, sha256=sha256)
    elif fmt == "arff":
        data = read_arff(path, label=label, name=name, sha256=sha256)
    elif fmt == "mat":
        data = read_mat_file(path, x=x, y=y, name=name, sha256=sha256)
    elif fmt == "npz":
        data = read_npz(path, x=x, y=y, name=name, sha256=sha256)
    else:
        data = read_svmlight(path, name=name, sha256=sha256)
    st = path.stat()
    if (st.st_mtime_ns, st.st_size) != stamp:
        raise fail(str(path), "changed while it was being read; try again once nothing is "
                              "writing to it")
    return data


def read_data_file(path: str | Path, *, label: str | int | None = None, x: str | None = None,
                   y: str | None = None, name: str | None = None,
                   option_names: Mapping[str, str] | None = None) -> UserData:
    """Read and check a user's data file; its format comes from its extension.

    ``label`` picks the label column of a table (a name, or a position counting from 0; default
    the last column); ``x`` and ``y`` name the data and label variables of a .mat or .npz file.
    ``name`` is the dataset's name (default the file name without its extension). The rules of
    each format (delimiter, header, label mapping) are in the module docstring. Raises
    :class:`fsbench.errors.DataError`, one sentence naming the problem and its fix, for any
    problem with the file or the options; its fix names ``label``, ``x`` and ``y`` as
    ``option_names`` says (default :data:`CONFIG_OPTIONS`, a config's ``label:``; the command
    line gives :data:`COMMAND_LINE_OPTIONS`). Reads are cached per file path, mtime and size.
    """
    with options_named(option_names):
        return _read_data_file(path, label=label, x=x, y=y, name=name)


def _read_data_file(path: str | Path, *, label: str | int | None, x: str | None, y: str | None,
                    name: str | None) -> UserData:
    path = Path(path).expanduser()
    where = str(path)
    if isinstance(label, bool):
        raise fail(where, f"cannot take {option('label')} {label} (a yes/no value); give the label column's "
                          "name or position")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise fail(where, "does not exist; check the path (a config's paths are relative to "
                          "the config file's folder)") from None
    except OSError as exc:
        raise fail(where, f"cannot be read ({reason(exc)})") from exc
    if path.is_dir():
        raise not_a_file(path)
    fmt = format_of(path)
    if fmt is None:
        suffix = "".join(path.suffixes[-2:]) if path.name.lower().endswith(".gz") else path.suffix
        what = f"an unknown extension {suffix!r}" if suffix else "no extension"
        raise fail(where, f"has {what}, so its format is unknown; fsbench reads {_supported()}: "
                          "convert it to one of them (CSV is the simplest) or, if it is one, "
                          "rename it")
    _check_options(path, fmt, label, x, y)
    if isinstance(label, str) and not label.strip():
        raise fail(where, f"was given an empty {option('label')}; give the label column's name or position")
    if st.st_size == 0:
        raise fail(where, f"is empty (0 bytes); give a {_KIND[fmt]} file that holds the data")
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
        parts = [f"{DELIMITER_NAMES.get(data.delimiter or ' ', 'whitespace')}-delimited",
                 "header row" if data.header else "no header: columns numbered from 0"]
        how = f"{data.format} ({', '.join(parts)})"
    lines = [f"{data.name} (file {data.path})",
             f"  format:    {how}",
             f"  shape:     {data.n_samples} samples x {data.n_features} features, "
             f"{data.n_classes} classes",
             f"  label:     {data.label_source}"]
    if data.sparse:
        lines.append(f"  storage:   {storage_line(data.X)}")
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
        lines.append(f"  features:  {quote_list(list(data.feature_names))}")
    for note in data.notes:
        lines.append(f"  note:      {note}")
    lines.append(f"  sha256:    {data.sha256}")
    return lines


def storage_line(X: Any) -> str:
    """How a sparse matrix is held, read from its shape and arrays (never densified): "sparse (CSR),
    2,000,000 non-zeros (density 0.1000 %); held in 24.0 MB instead of 16.0 GB dense"."""
    n, d = X.shape
    nnz = int(X.nnz)
    density = nnz / (n * d) if n * d else 0.0
    held = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return (f"sparse (CSR), {nnz:,} non-zeros (density {density:.4%}); held in {format_bytes(held)} instead of "
            f"{format_bytes(8 * n * d)} dense")


def describe_data_file(path: str | Path, *, label: str | int | None = None, x: str | None = None,
                       y: str | None = None, name: str | None = None,
                       option_names: Mapping[str, str] | None = None) -> str:
    """:func:`read_data_file`, then :func:`describe` as one text of several lines."""
    data = read_data_file(path, label=label, x=x, y=y, name=name, option_names=option_names)
    return "\n".join(describe(data))
