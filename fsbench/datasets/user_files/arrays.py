"""Files without columns, holding arrays: MATLAB ``.mat`` and NumPy ``.npz`` files (a data and a
label variable, chosen as the registry's .mat files are, or named by ``x`` and ``y``) and
svmlight/LIBSVM files (a label, then index:value pairs, per line).
The rules they follow are stated, for users, in :mod:`fsbench.datasets.user_files.files`.

A matrix the file stores sparse stays sparse (a ``scipy.sparse.csr_matrix``, see
:func:`fsbench.datasets.user_files.validation.as_sparse`): an svmlight file, a sparse .mat
variable, an .npz archive in the layout of ``scipy.sparse.save_npz`` (its arrays ``format``,
``shape``, ``data``, ``indices``, ``indptr``) with the labels beside them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.user_files.matlab import MAT_KEYS, MatKeysNotFound, choose_mat_keys, read_mat
from fsbench.datasets.user_files.messages import fail, option, reason
from fsbench.datasets.user_files.user_data import UserData
from fsbench.datasets.user_files.validation import ContentProblem, as_labels, as_matrix, finish, label_values
from fsbench.errors import DataError

__all__ = ["SPARSE_NPZ_KEYS", "read_mat_file", "read_npz", "read_svmlight"]

#: the arrays of an .npz archive written by scipy.sparse.save_npz (CSR, CSC, BSR; COO stores row
#: and col instead of indices and indptr)
SPARSE_NPZ_KEYS = ("format", "shape", "data", "indices", "indptr", "row", "col", "blocksize", "offsets")
#: the label arrays looked for beside a sparse matrix in an .npz archive, in order (ignoring case)
SPARSE_NPZ_LABELS = ("y", "Y", "gnd", "label", "labels")


def _arrays(path: Path, fmt: str, data: Any, labels: Any, keys: tuple[str, str], *, name: str,
            sha256: str) -> UserData:
    where = str(path)
    try:
        X = as_matrix(data, keep_sparse=True)
    except ContentProblem as exc:
        raise fail(where, f"{exc} (variable {keys[0]!r}); store the data as a numeric samples x "
                          "features matrix") from None
    if isinstance(labels, np.ndarray) and labels.dtype.kind == "O":  # a cell array of strings
        labels = label_values(labels)
    try:
        values = as_labels(labels)
    except ContentProblem as exc:
        raise fail(where, f"{exc} (variable {keys[1]!r}); store one label per sample") from None
    return finish(name=name, path=path, fmt=fmt, sha256=sha256, X=X,
                  labels=label_values(values), label_desc=f"label variable {keys[1]!r}",
                  label_fix=option("y"), feature_desc=lambda j: f"feature {j}", variables=keys)


def _missing_variables(where: str, exc: MatKeysNotFound, kind: str) -> DataError:
    held = ", ".join(repr(n) for n in sorted(exc.names)) or "none"
    if exc.missing:
        wanted = " and ".join(repr(m) for m in exc.missing)
        noun = "variables" if len(exc.missing) > 1 else "variable"
        return fail(where, f"has no {noun} {wanted} (it holds: {held}); set {option('x')} and "
                           f"{option('y')} to its data and label variables")
    pairs = " or ".join(f"{x}/{y}" for x, y in MAT_KEYS)
    if kind == "npz":
        pairs = pairs.replace("X/Y", "X/y") + " (in any case)"
    return fail(where, f"has no data and label variables {pairs} (it holds: {held}); name them "
                       f"with {option('x')} and {option('y')}")


def read_mat_file(path: Path, *, x: str | None, y: str | None, name: str, sha256: str) -> UserData:
    """A user's MATLAB .mat file, its data and label variables chosen by ``x`` and ``y``."""
    where = str(path)
    try:
        x_key, y_key, data, labels = read_mat(path, x, y)
    except MatKeysNotFound as exc:
        raise _missing_variables(where, exc, "mat") from None
    except Exception as exc:
        raise fail(where, f"cannot be read as a MATLAB .mat file ({reason(exc)}); save it with "
                          "MATLAB's save (v5 to v7.3) or scipy.io.savemat") from exc
    return _arrays(path, "mat", data, labels, (x_key, y_key), name=name, sha256=sha256)


def read_npz(path: Path, *, x: str | None, y: str | None, name: str, sha256: str) -> UserData:
    """A user's NumPy .npz archive, its data and label arrays chosen by ``x`` and ``y``."""
    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            if x is None and {"format", "shape", "data"} <= set(archive.files):
                return _read_sparse_npz(path, archive, y, name=name, sha256=sha256)
            x_key, y_key = choose_mat_keys(archive.files, x, y)
            try:
                data, labels = archive[x_key], archive[y_key]
            except ValueError as exc:
                if "allow_pickle" not in str(exc):
                    raise
                raise fail(where, f"holds {x_key!r} or {y_key!r} as an array of Python objects, "
                                  "which fsbench does not load (loading one can run code); save "
                                  "them as numeric or string arrays, e.g. np.asarray(y, dtype=str)"
                           ) from None
    except MatKeysNotFound as exc:
        raise _missing_variables(where, exc, "npz") from None
    except DataError:
        raise
    except Exception as exc:
        raise fail(where, f"cannot be read as a NumPy .npz archive ({reason(exc)}); save it "
                          "with np.savez(path, X=X, y=y)") from exc
    return _arrays(path, "npz", data, labels, (x_key, y_key), name=name, sha256=sha256)


def _read_sparse_npz(path: Path, archive: Any, y: str | None, *, name: str, sha256: str) -> UserData:
    """An .npz archive holding a sparse matrix in scipy.sparse.save_npz's layout, read by
    ``scipy.sparse.load_npz``, and its labels: the array ``y`` names, else the first of
    :data:`SPARSE_NPZ_LABELS` present (ignoring case)."""
    import scipy.sparse

    where = str(path)
    others = [k for k in archive.files if k not in SPARSE_NPZ_KEYS]
    if y is not None:
        found = [k for k in others if k == y] or [k for k in others if k.lower() == y.lower()]
    else:
        found = next(([k for k in others if k.lower() == want.lower()] for want in SPARSE_NPZ_LABELS
                      if any(k.lower() == want.lower() for k in others)), [])
    if len(found) != 1:
        held = ", ".join(repr(k) for k in sorted(archive.files))
        wanted = f"label array {y!r}" if y is not None else "label array 'y'"
        raise fail(where, f"holds a sparse matrix in scipy.sparse.save_npz's layout but no {wanted} beside it "
                          f"(it holds: {held}); add the labels to the archive, for example "
                          "np.savez(path, y=y, **np.load(matrix_file)), or name them with "
                          f"{option('y')}")
    y_key = found[0]
    try:
        X = scipy.sparse.load_npz(path)
    except Exception as exc:
        raise fail(where, f"cannot be read as a sparse matrix saved by scipy.sparse.save_npz ({reason(exc)}); "
                          "save it again with scipy.sparse.save_npz") from exc
    try:
        labels = archive[y_key]
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise
        raise fail(where, f"holds {y_key!r} as an array of Python objects, which fsbench does not load "
                          "(loading one can run code); save it as a numeric or string array, e.g. "
                          "np.asarray(y, dtype=str)") from None
    return _arrays(path, "npz", X, labels, ("scipy.sparse.save_npz arrays", y_key), name=name, sha256=sha256)


def read_svmlight(path: Path, *, name: str, sha256: str) -> UserData:
    """A user's svmlight/LIBSVM file (scikit-learn's reader), kept sparse (CSR)."""
    from sklearn.datasets import load_svmlight_file

    where = str(path)
    try:
        data, labels = load_svmlight_file(str(path))
    except Exception as exc:
        raise fail(where, f"cannot be read as an svmlight/LIBSVM file ({reason(exc)}); each "
                          "line must be 'label index:value ...'") from exc
    try:
        X = as_matrix(data, keep_sparse=True)
    except ContentProblem as exc:  # pragma: no cover - scikit-learn's reader returns a float64 CSR matrix
        raise fail(where, f"{exc}; each line must be 'label index:value ...'") from None
    return finish(name=name, path=path, fmt="svmlight", sha256=sha256, X=X,
                  labels=label_values(np.asarray(labels)), label_desc="labels",
                  label_fix="the first field of each line",
                  feature_desc=lambda j: f"feature {j}")
