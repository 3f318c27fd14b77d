"""A user's data file as fsbench holds it once read: :class:`UserData`.

Every reader returns one, built by :func:`fsbench.datasets.user_files.validation.finish` after
the checks every format gets; :mod:`fsbench.datasets.user_files.files` states, for users, the
rules the readers follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["UserData"]


@dataclass(frozen=True, eq=False)
class UserData:
    """A user's data file, read and checked.

    ``X`` float64 (n, d): C-contiguous, or, for a matrix the file stores sparse (svmlight, a
    sparse .mat variable, an .npz in scipy.sparse.save_npz's layout, a wide and mostly-zero text
    file), a ``scipy.sparse.csr_matrix`` with sorted indices and no stored zero, never densified;
    ``y`` int64 codes 0..c-1; ``classes`` the original labels
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
    X: Any  # np.ndarray, or scipy.sparse.csr_matrix
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
    def sparse(self) -> bool:
        """Whether ``X`` is held sparse (CSR)."""
        import scipy.sparse

        return bool(scipy.sparse.issparse(self.X))

    @property
    def nnz(self) -> int:
        """Stored (non-zero) values of a sparse ``X``; every value of a dense one."""
        return int(self.X.nnz) if self.sparse else int(self.X.size)

    @property
    def n_constant(self) -> int:
        """Features with the same value in every sample (a sparse ``X`` is not densified)."""
        from fsbench.datasets.user_files.validation import constant_features  # it imports this module

        return constant_features(self.X)

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
