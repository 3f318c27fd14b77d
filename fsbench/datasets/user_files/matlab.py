"""MATLAB .mat files, v5 (scipy) and v7.3 (HDF5, read through h5py): choosing the data and label
variables (:data:`MAT_KEYS`, or names given) and reading them in MATLAB's layout.

A user's .mat file (:mod:`fsbench.datasets.user_files.arrays`) and the registry's .mat files
(:mod:`fsbench.datasets.loaders`) are read here; .npz archives choose their arrays the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MAT_KEYS", "MatKeysNotFound", "choose_mat_keys", "read_mat"]

#: (data, labels) variable names accepted in a .mat file, in order of preference
MAT_KEYS = (("X", "Y"), ("fea", "gnd"), ("data", "label"))


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
