"""Reading dataset files and checking them against the registry.

Every problem with a file is a :class:`fsbench.errors.DataError` whose message names the file,
what is wrong, and how to fix it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.integrity import verify_file
from fsbench.datasets.paths import cache_dir, data_dirs, locate
from fsbench.datasets.registry import DatasetSpec, resolve
from fsbench.errors import DataError

__all__ = ["MAT_KEYS", "ContentProblem", "Dataset", "MatKeysNotFound", "as_labels", "as_matrix", "check",
           "choose_mat_keys", "load", "nonfinite", "read_files", "read_mat"]

# (data, labels) variable names accepted in a .mat file, in order of preference.
MAT_KEYS = (("X", "Y"), ("fea", "gnd"), ("data", "label"))
CSV_LABEL_COLUMN = "class"


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded dataset: X float64 (n, d) C-contiguous, y int64 codes 0..c-1 of ``classes``.

    ``classes`` holds the original labels in sorted order (``classes[y]`` gives them back).
    The arrays are read-only because loads are cached and shared.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    spec: DatasetSpec


def how_to_get(spec: DatasetSpec) -> str:
    """The fix for a missing or bad file of ``spec``: fetch it, or where to get it by hand."""
    if spec.downloadable:
        return f"run 'fsbench datasets fetch {spec.name}'"
    return f"see 'fsbench datasets info {spec.name}' for its source"


def _bad(spec: DatasetSpec, where: str, problem: str) -> DataError:
    err = DataError(f"{where} of dataset {spec.name!r} {problem}; replace it with the original "
                    f"file ({how_to_get(spec)}).")
    err.problem = problem  # the bare problem, reused by fetch's own message
    return err


def missing_message(spec: DatasetSpec, data_dir: str | Path | None) -> str:
    files = ", ".join(f.name for f in spec.files)
    searched = ", ".join(str(d) for d in data_dirs(data_dir))
    if spec.downloadable:
        fix = (f"run 'fsbench datasets fetch {spec.name}' or set FSBENCH_DATA / --data-dir to the "
               "folder holding it")
    else:
        fix = (f"no download is known for it, so get it from {spec.source} and set FSBENCH_DATA / "
               "--data-dir to the folder holding it")
    return (f"Dataset {spec.name!r} needs {files}, found in none of the folders searched "
            f"({searched}); {fix}.")


# ----------------------------------------------------------------------------- file readers
def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:120]}"


class MatKeysNotFound(LookupError):
    """A .mat file lacks the data and label variables asked for.

    ``names`` lists the variables the file holds; ``missing`` the names asked for explicitly that
    it lacks (empty when none was asked for and no pair of :data:`MAT_KEYS` is present).
    """

    def __init__(self, names: Sequence[str], missing: Sequence[str] = ()) -> None:
        super().__init__(", ".join(missing) or "no data and label variables")
        self.names = list(names)
        self.missing = list(missing)


def choose_mat_keys(names: Sequence[str], x: str | None = None,
                    y: str | None = None) -> tuple[str, str]:
    """The (data, labels) variable names to read from a file holding variables ``names``.

    Without ``x`` and ``y``: the first pair of :data:`MAT_KEYS` present, matched exactly, else
    ignoring case. A name given is used as is (exactly, else ignoring case when that is unique);
    when only one is given, the other is the first of its half of :data:`MAT_KEYS` present.
    Raises :class:`MatKeysNotFound`.
    """
    present = list(names)
    if x is None and y is None:
        lower = {n.lower(): n for n in present}
        for x_key, y_key in MAT_KEYS:
            if x_key in present and y_key in present:
                return x_key, y_key
        for x_key, y_key in MAT_KEYS:
            if x_key.lower() in lower and y_key.lower() in lower:
                return lower[x_key.lower()], lower[y_key.lower()]
        raise MatKeysNotFound(present)

    def find(wanted: str) -> str | None:
        if wanted in present:
            return wanted
        folded = [n for n in present if n.lower() == wanted.lower()]
        return folded[0] if len(folded) == 1 else None

    def default(half: int) -> str | None:
        for pair in MAT_KEYS:
            if (found := find(pair[half])) is not None:
                return found
        return None

    x_key = find(x) if x is not None else default(0)
    y_key = find(y) if y is not None else default(1)
    if x_key is None or y_key is None:
        missing = [w for w, k in ((x, x_key), (y, y_key)) if w is not None and k is None]
        raise MatKeysNotFound(present, missing)
    return x_key, y_key


def _missing_keys(spec: DatasetSpec, path: Path, names: Sequence[str]) -> DataError:
    found = ", ".join(sorted(names)) or "none"
    wanted = " or ".join(f"{x}/{y}" for x, y in MAT_KEYS)
    return _bad(spec, str(path), f"has no data and label variables {wanted} (it holds: {found})")


def _matlab_class(node: Any) -> str:
    value = node.attrs.get("MATLAB_class", b"")
    return value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)


def _read_h5_variable(node: Any) -> Any:
    """A MATLAB v7.3 variable: HDF5 stores MATLAB's column-major arrays transposed.

    Sparse matrices come back as scipy CSC matrices, char arrays as an array of one string per
    row (trailing blanks removed), cell arrays as an object array of their elements.
    """
    import h5py
    import scipy.sparse

    if isinstance(node, h5py.Group) and "MATLAB_sparse" in node.attrs:
        n_rows = int(node.attrs["MATLAB_sparse"])
        jc = node["jc"][()]
        data = node["data"][()] if "data" in node else np.ones(len(node["ir"]))
        return scipy.sparse.csc_matrix((data, node["ir"][()], jc), shape=(n_rows, len(jc) - 1))
    if not isinstance(node, h5py.Dataset):
        raise TypeError(f"variable {node.name!r} is a {type(node).__name__}, not an array")
    value = np.asarray(node[()]).T
    kind = _matlab_class(node)
    if kind == "char" and value.dtype.kind in "iu":
        rows = np.atleast_2d(value)
        return np.array(["".join(map(chr, row)).rstrip() for row in rows.tolist()])
    if kind == "cell" and h5py.check_ref_dtype(node.dtype) is not None:
        cells = np.empty(value.shape, dtype=object)
        for index, ref in np.ndenumerate(value):
            cells[index] = _read_h5_variable(node.file[ref])
        return cells
    return value


def read_mat(path: Path, x: str | None = None, y: str | None = None) -> tuple[str, str, Any, Any]:
    """``(x_key, y_key, data, labels)`` read from a MATLAB .mat file, v5 (scipy) or v7.3 (HDF5).

    The variables are chosen by :func:`choose_mat_keys`; v7.3 arrays are transposed back to
    MATLAB's layout. Raises :class:`MatKeysNotFound` when they are missing; any other exception
    means the file cannot be read as a .mat file.
    """
    import h5py
    import scipy.io

    if h5py.is_hdf5(path):  # MATLAB v7.3
        with h5py.File(path, "r") as fh:
            names = [k for k in fh if not k.startswith("#")]
            x_key, y_key = choose_mat_keys(names, x, y)
            return x_key, y_key, _read_h5_variable(fh[x_key]), _read_h5_variable(fh[y_key])
    variables = scipy.io.loadmat(path)
    names = [k for k in variables if not k.startswith("__")]
    x_key, y_key = choose_mat_keys(names, x, y)
    return x_key, y_key, variables[x_key], variables[y_key]


def _read_mat(spec: DatasetSpec, path: Path) -> tuple[Any, Any]:
    try:
        _, _, data, labels = read_mat(path)
    except MatKeysNotFound as exc:
        raise _missing_keys(spec, path, exc.names) from None
    except Exception as exc:  # any parse failure means the file is damaged or not a .mat
        problem = f"cannot be read as a MATLAB .mat file ({_reason(exc)})"
        raise _bad(spec, str(path), problem) from exc
    return data, labels


def _read_semeion(spec: DatasetSpec, path: Path) -> tuple[Any, Any]:
    try:
        table = np.loadtxt(path, dtype=np.float64, ndmin=2)
    except Exception as exc:
        problem = f"cannot be read as UCI SEMEION text ({_reason(exc)})"
        raise _bad(spec, str(path), problem) from exc
    expected = spec.n_features + spec.n_classes  # pixels, then one-hot label columns
    if table.shape[1] != expected:
        raise _bad(spec, str(path), f"has {table.shape[1]} columns per line, expected {expected} "
                                    f"({spec.n_features} pixels + {spec.n_classes} one-hot label "
                                    "columns)")
    onehot = table[:, spec.n_features:]
    valid = np.isin(onehot, (0.0, 1.0)).all(axis=1) & (onehot.sum(axis=1) == 1)
    if not valid.all():
        line = int(np.flatnonzero(~valid)[0]) + 1
        raise _bad(spec, str(path), f"has label columns that are not one-hot (line {line})")
    return table[:, : spec.n_features], onehot.argmax(axis=1)


def _read_csv(spec: DatasetSpec, path: Path) -> tuple[Any, Any]:
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except Exception as exc:
        raise _bad(spec, str(path), f"cannot be read as CSV ({_reason(exc)})") from exc
    columns = {str(c).strip().lower(): c for c in frame.columns}
    if CSV_LABEL_COLUMN not in columns:
        raise _bad(spec, str(path), f"has no label column {CSV_LABEL_COLUMN!r} in its header row")
    label_col = columns[CSV_LABEL_COLUMN]
    features = frame.drop(columns=[label_col])
    try:
        X = features.to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise _bad(spec, str(path), "holds values that are not numbers") from exc
    return X, frame[label_col].to_numpy()


class ContentProblem(ValueError):
    """What is wrong with the arrays read from a file, as a clause ("has labels of shape ...");
    the caller names the file and adds the fix."""


def as_matrix(X: Any) -> np.ndarray:
    """``X`` as a float64 samples x features matrix (sparse densified); raises ContentProblem."""
    import scipy.sparse

    if scipy.sparse.issparse(X):
        X = X.toarray()
    X = np.asarray(X)
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise ContentProblem(f"holds data of shape {X.shape} and type {X.dtype}, not a numeric "
                             "samples x features matrix")
    return X.astype(np.float64, copy=False)


def as_labels(labels: Any) -> np.ndarray:
    """``labels`` flattened to one per sample (sparse densified, objects as strings); raises
    ContentProblem for another shape or a NaN or infinite label."""
    import scipy.sparse

    if scipy.sparse.issparse(labels):
        labels = labels.toarray()
    labels = np.asarray(labels)
    if labels.ndim == 2 and 1 in labels.shape:
        labels = labels.ravel()
    if labels.ndim != 1:
        raise ContentProblem(f"has labels of shape {labels.shape}, expected one per sample")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ContentProblem("has missing (NaN) or infinite labels")
    if labels.dtype.kind == "O":
        labels = labels.astype(str)
    return labels


def nonfinite(X: np.ndarray) -> tuple[int, int, int, int] | None:
    """``(n_nan, n_inf, row, column)`` of X's NaN and infinite values, the first in row order;
    None when every value is finite."""
    finite = np.isfinite(X)
    if finite.all():
        return None
    n_nan = int(np.isnan(X).sum())
    n_inf = int((~finite).sum()) - n_nan
    row, col = (int(v) for v in np.argwhere(~finite)[0])
    return n_nan, n_inf, row, col


def _as_matrix(spec: DatasetSpec, where: str, X: Any) -> np.ndarray:
    try:
        return as_matrix(X)
    except ContentProblem as exc:
        raise _bad(spec, where, str(exc)) from None


def _as_labels(spec: DatasetSpec, where: str, labels: Any) -> np.ndarray:
    try:
        return as_labels(labels)
    except ContentProblem as exc:
        raise _bad(spec, where, str(exc)) from None


def read_files(spec: DatasetSpec, paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """Raw (X, labels) of a dataset's files; several files are stacked row-wise in order."""
    reader = {"mat": _read_mat, "semeion": _read_semeion, "csv": _read_csv}.get(spec.format)
    if reader is None:
        raise ValueError(f"dataset {spec.name!r} has no file reader for format {spec.format!r}")
    parts_X, parts_y = [], []
    for path in paths:
        X_raw, y_raw = reader(spec, Path(path))
        X = _as_matrix(spec, str(path), X_raw)
        y = _as_labels(spec, str(path), y_raw)
        if parts_X and X.shape[1] != parts_X[0].shape[1]:
            raise _bad(spec, str(path), f"has {X.shape[1]} features while {paths[0]} has "
                                        f"{parts_X[0].shape[1]}")
        parts_X.append(X)
        parts_y.append(y)
    if len(parts_X) == 1:
        return parts_X[0], parts_y[0]
    return np.vstack(parts_X), np.concatenate(parts_y)


# ----------------------------------------------------------------------------- checks
def check(spec: DatasetSpec, X: np.ndarray, labels: np.ndarray, where: str) -> Dataset:
    """Check X and labels against ``spec`` and return the read-only Dataset."""
    expected = (spec.n_samples, spec.n_features)
    if X.shape != expected:
        hint = " (it looks transposed: samples must be rows)" if X.shape == expected[::-1] else ""
        raise _bad(spec, where, f"has shape {X.shape[0]} x {X.shape[1]}, expected {expected[0]} x "
                                f"{expected[1]} (samples x features){hint}")
    if len(labels) != X.shape[0]:
        raise _bad(spec, where, f"has {X.shape[0]} samples but {len(labels)} labels")
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) != spec.n_classes:
        raise _bad(spec, where, f"has {len(classes)} classes, expected {spec.n_classes}")
    sizes = np.bincount(y, minlength=len(classes))
    if spec.class_sizes is not None and sorted(sizes.tolist()) != sorted(spec.class_sizes):
        found = "/".join(map(str, sizes))
        raise _bad(spec, where, f"has class sizes {found}, expected "
                                f"{'/'.join(map(str, spec.class_sizes))}")
    if (bad := nonfinite(X)) is not None:
        n_nan, n_inf, row, col = bad
        raise _bad(spec, where, f"contains {n_nan} NaN and {n_inf} infinite values (first at "
                                f"sample {row}, feature {col}) and fsbench does not impute")
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64).reshape(-1)
    for arr in (X, y, classes):
        arr.flags.writeable = False
    return Dataset(name=spec.name, X=X, y=y, classes=classes, spec=spec)


def _replace_fix(spec: DatasetSpec, path: Path) -> str:
    """What to do about a file of ``spec`` whose bytes are not the registered ones."""
    cache = cache_dir()
    try:
        in_cache = path.resolve().is_relative_to(cache.expanduser().resolve())
    except OSError:
        in_cache = False
    if in_cache and spec.downloadable:
        return (f"run 'fsbench datasets fetch {spec.name}', which replaces it with the original "
                "file")
    return (f"delete or replace it with the original file ({how_to_get(spec)}, which downloads "
            f"into {cache}, then point FSBENCH_DATA / --data-dir away from this copy)")


def _where(paths: Sequence[Path]) -> str:
    if len(paths) == 1:
        return str(paths[0])
    return f"the {len(paths)} files {', '.join(p.name for p in paths)} in {paths[0].parent}"


@functools.lru_cache(maxsize=8)
def _load_files(spec: DatasetSpec, stamp: tuple[tuple[str, int, int], ...],
                verify: bool) -> Dataset:
    paths = [Path(s[0]) for s in stamp]
    if verify:
        for f, path in zip(spec.files, paths, strict=True):
            verify_file(spec, f, path, _replace_fix(spec, path))
    X, labels = read_files(spec, paths)
    return check(spec, X, labels, _where(paths))


@functools.lru_cache(maxsize=2)
def _load_builtin(spec: DatasetSpec) -> Dataset:
    if spec.format != "sklearn":
        raise ValueError(f"dataset {spec.name!r} has no files and format {spec.format!r}")
    from sklearn.datasets import load_digits

    X, labels = load_digits(return_X_y=True)
    return check(spec, np.asarray(X, dtype=np.float64), labels, "scikit-learn's bundled copy")


def load(name: str | DatasetSpec, data_dir: str | Path | None = None, *,
         verify: bool = True) -> Dataset:
    """Load a dataset by name or alias (or a spec), checked against the registry.

    Files are searched in :func:`data_dirs` (``data_dir`` or $FSBENCH_DATA, then the user cache).
    With ``verify`` every file with a registered identity is checked first, wherever it was found:
    its sha256, or its git blob id and the sha256 recorded when it was downloaded
    (:func:`fsbench.datasets.integrity.verify_file`). Then
    shape, class count, class sizes (where registered) and finiteness are checked; any failure is
    a DataError naming the problem and its fix. Loads are cached per file path, mtime and size.
    """
    spec = name if isinstance(name, DatasetSpec) else resolve(name)
    if not spec.files:
        return _load_builtin(spec)
    paths = locate(spec, data_dir)
    if paths is None:
        raise DataError(missing_message(spec, data_dir))
    stamp = []
    for p in paths:
        st = p.stat()
        stamp.append((str(p.resolve()), st.st_mtime_ns, st.st_size))
    return _load_files(spec, tuple(stamp), verify)
