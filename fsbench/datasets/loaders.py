"""Reading dataset files and checking them against the registry.

Every problem with a file is a :class:`fsbench.errors.DataError` whose message names the file,
what is wrong, and how to fix it.

The registry's files are dense and a registered dataset loads dense (:func:`as_matrix` densifies a
sparse variable): the papers' results were computed on dense matrices of a few thousand features,
and their rows' code identities are the dense route's. Users' files keep a sparse matrix sparse
(:mod:`fsbench.datasets.user_files`).
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
from fsbench.datasets.user_files.matlab import MAT_KEYS, MatKeysNotFound, read_mat
from fsbench.datasets.user_files.validation import ContentProblem, as_labels, as_matrix, nonfinite
from fsbench.errors import DataError

__all__ = ["Dataset", "check", "load", "read_files"]

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


def _missing_keys(spec: DatasetSpec, path: Path, names: Sequence[str]) -> DataError:
    found = ", ".join(sorted(names)) or "none"
    wanted = " or ".join(f"{x}/{y}" for x, y in MAT_KEYS)
    return _bad(spec, str(path), f"has no data and label variables {wanted} (it holds: {found})")


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
