"""The checks every format of a user's data file gets before it becomes a :class:`UserData`
(:func:`finish`: one label per sample, at least 2 samples, 1 feature and 2 classes, no NaN or
infinite value), labels mapped to codes 0..c-1, and the checks of arrays read from a file
(:func:`as_matrix`, :func:`as_labels`, :func:`nonfinite`), which the registry's loader shares.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.user_files.messages import fail, too_few
from fsbench.datasets.user_files.user_data import UserData

__all__ = ["ContentProblem", "as_labels", "as_matrix", "finish", "label_values", "nonfinite"]


# ----------------------------------------------------------------------------- arrays
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


def finish(*, name: str, path: Path, fmt: str, sha256: str, X: np.ndarray, labels: np.ndarray,
           label_desc: str, label_fix: str, feature_desc: Any, **fields: Any) -> UserData:
    """The checks every format gets, then the read-only :class:`UserData`.

    ``label_desc`` names where the labels are ("label column 'class'"), ``label_fix`` what to
    set to choose them ("label:"), ``feature_desc(j)`` names feature j in messages.
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
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64).reshape(-1)
    for arr in (X, y, classes):
        arr.flags.writeable = False
    return UserData(name=name, path=path, format=fmt, sha256=sha256, X=X, y=y, classes=classes,
                    **fields)
