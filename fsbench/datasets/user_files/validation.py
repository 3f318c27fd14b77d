"""The checks every format of a user's data file gets before it becomes a :class:`UserData`
(:func:`finish`: one label per sample, at least 2 samples, 1 feature and 2 classes, no NaN or
infinite value), labels mapped to codes 0..c-1, and the checks of arrays read from a file
(:func:`as_matrix`, :func:`as_labels`, :func:`nonfinite`), which the registry's loader shares.

A matrix stored sparse stays sparse (:func:`as_sparse`: a ``scipy.sparse.csr_matrix`` of float64
with sorted indices, duplicates summed and stored zeros dropped); every check of a sparse matrix
(finite values, constant features) reads its stored values (``.data``) and never densifies it.
The registry's loader asks :func:`as_matrix` for a dense matrix (the papers' files are dense).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.user_files.messages import fail, too_few
from fsbench.datasets.user_files.user_data import UserData

__all__ = ["ContentProblem", "as_labels", "as_matrix", "as_sparse", "constant_features", "finish", "is_sparse",
           "label_values", "nonfinite", "read_only_sparse"]


# ----------------------------------------------------------------------------- arrays
class ContentProblem(ValueError):
    """What is wrong with the arrays read from a file, as a clause ("has labels of shape ...");
    the caller names the file and adds the fix."""


def is_sparse(X: Any) -> bool:
    """Whether ``X`` is a scipy sparse matrix or array."""
    import scipy.sparse

    return bool(scipy.sparse.issparse(X))


def as_sparse(X: Any) -> Any:
    """``X``, a scipy sparse matrix, as a ``csr_matrix`` of float64 in canonical form: indices sorted
    within each row, duplicate entries summed, stored zeros dropped (NaN kept, for
    :func:`nonfinite` to name); raises ContentProblem for a matrix that is not numeric or 2-d."""
    import scipy.sparse

    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise ContentProblem(f"holds data of shape {X.shape} and type {X.dtype}, not a numeric "
                             "samples x features matrix")
    csr = scipy.sparse.csr_matrix(X, dtype=np.float64, copy=True)
    csr.sum_duplicates()  # also sorts the indices
    csr.eliminate_zeros()
    csr.sort_indices()
    return csr


def read_only_sparse(X: Any) -> Any:
    """A shallow copy of the CSR matrix ``X`` whose ``data``, ``indices`` and ``indptr`` are read-only
    views of ``X``'s: nothing can write through it (``X`` itself is unchanged)."""
    import scipy.sparse

    arrays = []
    for a in (X.data, X.indices, X.indptr):
        view = a.view()
        view.flags.writeable = False
        arrays.append(view)
    out = scipy.sparse.csr_matrix(X.shape, dtype=X.dtype)
    out.data, out.indices, out.indptr = arrays  # assigned, not passed: the constructor might copy
    out.has_sorted_indices = True
    out.has_canonical_format = True
    return out


def as_matrix(X: Any, *, keep_sparse: bool = False) -> Any:
    """``X`` as a float64 samples x features matrix; raises ContentProblem. A sparse ``X`` is
    densified, or with ``keep_sparse`` returned by :func:`as_sparse`."""
    import scipy.sparse

    if scipy.sparse.issparse(X):
        if keep_sparse:
            return as_sparse(X)
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


def nonfinite(X: Any) -> tuple[int, int, int, int] | None:
    """``(n_nan, n_inf, row, column)`` of X's NaN and infinite values, the first in row order;
    None when every value is finite. A CSR matrix (canonical, :func:`as_sparse`) is checked on
    its stored values."""
    if is_sparse(X):
        data = X.data
        finite = np.isfinite(data)
        if finite.all():
            return None
        n_nan = int(np.isnan(data).sum())
        first = int(np.flatnonzero(~finite)[0])
        row = int(np.searchsorted(X.indptr, first, side="right")) - 1
        return n_nan, int((~finite).sum()) - n_nan, row, int(X.indices[first])
    finite = np.isfinite(X)
    if finite.all():
        return None
    n_nan = int(np.isnan(X).sum())
    n_inf = int((~finite).sum()) - n_nan
    row, col = (int(v) for v in np.argwhere(~finite)[0])
    return n_nan, n_inf, row, col


def constant_features(X: Any) -> int:
    """How many features hold the same value in every sample. A sparse matrix is read from its
    stored values: a column is constant when it stores nothing (all zeros), stores a value in every
    row and they are all equal, or stores only zeros."""
    if not X.shape[0] or not X.shape[1]:
        return 0
    if not is_sparse(X):
        return int((np.ptp(X, axis=0) == 0).sum())
    import scipy.sparse

    csc = scipy.sparse.csc_matrix(X)
    counts = np.diff(csc.indptr)
    stored = np.flatnonzero(counts > 0)
    n_const = int((counts == 0).sum())
    if stored.size:
        starts = csc.indptr[stored]
        low, high = np.minimum.reduceat(csc.data, starts), np.maximum.reduceat(csc.data, starts)
        full = counts[stored] == X.shape[0]
        # a column storing every row: its values all equal; storing fewer: every stored value is 0
        n_const += int(((low == high) & (full | (high == 0))).sum())
    return n_const


# ----------------------------------------------------------------------------- labels
def label_values(values: np.ndarray) -> np.ndarray:
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


def finish(*, name: str, path: Path, fmt: str, sha256: str, X: Any, labels: np.ndarray,
           label_desc: str, label_fix: str, feature_desc: Any, **fields: Any) -> UserData:
    """The checks every format gets, then the read-only :class:`UserData`.

    ``label_desc`` names where the labels are ("label column 'class'"), ``label_fix`` what to
    set to choose them ("label:"), ``feature_desc(j)`` names feature j in messages. A sparse ``X``
    stays sparse: a read-only canonical CSR matrix (:func:`as_sparse`, :func:`read_only_sparse`).
    """
    where = str(path)
    n, d = X.shape
    if len(labels) != n:
        hint = " (the data look transposed: samples must be rows)" if d == len(labels) else ""
        raise fail(where, f"has {n} samples in its data but {len(labels)} labels in its "
                          f"{label_desc}{hint}; give one label per sample")
    if n < 2:
        raise too_few(where, n)
    if d == 0:
        raise fail(where, f"has no features besides its {label_desc}; fsbench needs at least "
                          "one numeric feature")
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        only = classes[0].item() if isinstance(classes[0], np.generic) else classes[0]
        what = "a label column" if label_desc.startswith("label column") else "labels"
        raise fail(where, f"has {what} with one class ({only!r} in every sample of its "
                          f"{label_desc}); fsbench needs at least 2 classes, so check that "
                          f"{label_fix} names the class")
    if (bad := nonfinite(X)) is not None:
        n_nan, n_inf, row, col = bad
        raise fail(where, f"contains {n_nan} NaN and {n_inf} infinite values (the first at "
                          f"sample {row}, {feature_desc(col)}; positions count from 0) and "
                          "fsbench does not impute; fill them in or remove those samples or "
                          "features")
    y = np.ascontiguousarray(y, dtype=np.int64).reshape(-1)
    if is_sparse(X):
        X = read_only_sparse(as_sparse(X))
        arrays: tuple[np.ndarray, ...] = (y, classes)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        arrays = (X, y, classes)
    for arr in arrays:
        arr.flags.writeable = False
    return UserData(name=name, path=path, format=fmt, sha256=sha256, X=X, y=y, classes=classes,
                    **fields)
