"""A user's data file as fsbench holds it once read (:class:`UserData`), the checks every format
gets before it becomes one (:func:`_finish`: one label per sample, at least 2 samples, 1 feature
and 2 classes, no NaN or infinite value), labels mapped to codes 0..c-1, and the helpers that
word the readers' one-sentence :class:`fsbench.errors.DataError` messages.

The readers (:mod:`fsbench.datasets.delimited`, :mod:`fsbench.datasets.tables`,
:mod:`fsbench.datasets.arrays`) build on this module; :mod:`fsbench.datasets.files` chooses
among them and states, for users, the rules they follow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.datasets.loaders import nonfinite
from fsbench.errors import DataError

__all__ = ["UserData"]


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
#: how messages name the settings that choose what to read: a config's keys by default, the
#: command line's options for ``fsbench datasets info`` (a fix must name what the user can set)
CONFIG_OPTIONS: Mapping[str, str] = {"label": "label:", "x": "x:", "y": "y:"}
_OPTIONS: ContextVar[Mapping[str, str]] = ContextVar("fsbench_data_options", default=CONFIG_OPTIONS)


@contextmanager
def _options_named(names: Mapping[str, str] | None) -> Iterator[None]:
    """Messages raised inside name the settings ``names`` gives (``{"label": "--label", ...}``)."""
    token = _OPTIONS.set({**CONFIG_OPTIONS, **(names or {})})
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def _option(key: str) -> str:
    """The setting ``key`` (label, x, y) as messages name it now: ``label:`` or ``--label``."""
    return _OPTIONS.get()[key]


def _fail(where: str, problem: str) -> DataError:
    return DataError(f"{where} {problem}.")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"



def _too_few(where: str, n: int) -> DataError:
    return _fail(where, f"has {_count(n, 'sample')}; fsbench needs at least 2, one per row")



def _quote_list(names: Sequence[Any], limit: int = 5) -> str:
    shown = [repr(str(n)) for n in names[:limit]]
    if len(names) > limit + 1:
        return f"{', '.join(shown)}, ... {repr(str(names[-1]))}"
    return ", ".join(repr(str(n)) for n in names)


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
