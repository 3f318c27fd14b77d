"""Datasets whose relevant features, or irrelevant probes, are known: :class:`KnownData`.

Three sources, each with its ground truth:

- generated data (:mod:`fsbench.datasets.synthetic`: ``classification``, ``madelon``, ``xor``),
  whose relevant set the generator states;
- real data (a registered dataset or a user's file) with ``probes`` appended after its features:
  permuted copies of real columns, or Gaussian noise, irrelevant by construction
  (:func:`fsbench.datasets.synthetic.add_probes`); the probes are the known-irrelevant set;
- real data whose relevant features the user declares (``relevant:`` in the config).

A selector is then judged by what its top k holds (:func:`selection_counts`): how many relevant
features (``relevant_selected``, of ``n_relevant``) and how many probes (``probes_selected``, of
``n_probes``), recorded on every row of such a dataset. Probe columns follow the real features, so
a ranking's indices below ``n_real`` are real features and the rest probes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse

from fsbench.datasets import synthetic
from fsbench.datasets.sparse_probes import add_probes_sparse
from fsbench.datasets.user_files.validation import read_only_sparse
from fsbench.errors import DataError

__all__ = ["KNOWN_FEATURE_COLUMNS", "KnownData", "build_known_data", "selection_counts"]

#: the columns a row of a dataset with known features gains
KNOWN_FEATURE_COLUMNS = ("relevant_selected", "n_relevant", "probes_selected", "n_probes")


@dataclass(frozen=True, eq=False)
class KnownData:
    """A dataset with its known features: ``X`` float64 (n, n_real + n_probes), ``y`` int64 codes
    0..c-1 of ``classes``; ``relevant`` the sorted indices of the relevant features (None when
    unknown), ``n_probes`` probe columns after the ``n_real`` real ones; ``source`` says in one
    line where the data came from. The arrays are read-only."""

    name: str
    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    relevant: np.ndarray | None
    n_probes: int
    source: str

    @property
    def n_real(self) -> int:
        return int(self.X.shape[1]) - self.n_probes

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def build_known_data(name: str, *, generate: Mapping[str, Any] | None = None, base: Any = None,
                     probes: Mapping[str, Any] | None = None,
                     relevant: Sequence[int] | None = None) -> KnownData:
    """The dataset ``name``: generated from ``generate`` (its ``kind`` and parameters), or ``base``
    (a loaded dataset: anything with ``X`` and ``y``, labels coded 0..c-1, and ``classes``), then
    ``probes`` (``n``, ``kind``, ``seed``) appended; ``relevant`` declares the relevant features of
    ``base`` (indices of its columns, checked here). DataError (one sentence) for a bad request."""
    if (generate is None) == (base is None):
        raise ValueError("give exactly one of generate and base")
    if generate is not None:
        params = dict(generate)
        kind = str(params.pop("kind"))
        made = synthetic.generate(kind, params)
        X, y = made.X, np.asarray(made.y, dtype=np.int64)
        classes = np.unique(y)
        found = np.asarray(made.relevant, dtype=np.int64)
        source = made.description
        if relevant is not None:
            raise DataError(f"Dataset {name!r}: generated data declare their own relevant features; remove "
                            "'relevant'.")
    else:
        X = base.X if scipy.sparse.issparse(base.X) else np.asarray(base.X, dtype=np.float64)
        y, classes = np.asarray(base.y), np.asarray(base.classes)
        found = None if relevant is None else check_relevant(name, relevant, X.shape[1])
        source = f"{getattr(base, 'name', name)} ({X.shape[0]} x {X.shape[1]})"
    n_probes = 0
    if probes:
        n_probes, kind, seed = int(probes["n"]), str(probes["kind"]), int(probes["seed"])
        if scipy.sparse.issparse(X):
            X = add_probes_sparse(X, n=n_probes, kind=kind, seed=seed)
        else:
            X = synthetic.add_probes(X, n=n_probes, kind=kind, seed=seed)
        source += f" + {n_probes} {kind} probes (seed {seed})"
    if scipy.sparse.issparse(X):  # a sparse user file stays sparse, its probes too
        X = read_only_sparse(scipy.sparse.csr_matrix(X, dtype=np.float64))
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        X.flags.writeable = False
    y = np.ascontiguousarray(y, dtype=np.int64)
    for arr in (y, classes) + (() if found is None else (found,)):
        arr.flags.writeable = False
    return KnownData(name=name, X=X, y=y, classes=classes, relevant=found, n_probes=n_probes, source=source)


def check_relevant(name: str, relevant: Sequence[int], n_features: int) -> np.ndarray:
    """The declared relevant features as sorted int64 indices; DataError when one is out of range,
    repeated, or none is given."""
    values = list(relevant)
    if not values:
        raise DataError(f"Dataset {name!r} declares an empty relevant set; list at least one feature or remove "
                        "'relevant'.")
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= v < n_features]
    if bad:
        raise DataError(f"Dataset {name!r} declares relevant feature {bad[0]!r}, which does not exist: its "
                        f"{n_features} features are numbered 0 to {n_features - 1}.")
    if len(set(values)) != len(values):
        twice = next(v for v in values if values.count(v) > 1)
        raise DataError(f"Dataset {name!r} declares relevant feature {twice} twice; list each feature once.")
    return np.array(sorted(int(v) for v in values), dtype=np.int64)


def selection_counts(ranking: Sequence[int], ks: Sequence[int], *, relevant: np.ndarray | None, n_real: int,
                     n_probes: int) -> dict[int, dict[str, int]]:
    """For every k, how many of ``ranking``'s first k features are relevant and how many are
    probes (indices from ``n_real``), with the sizes of both sets: the columns
    :data:`KNOWN_FEATURE_COLUMNS` of a row at k (only those the dataset knows)."""
    order = np.asarray(ranking, dtype=np.int64)
    out: dict[int, dict[str, int]] = {}
    hit = np.isin(order, relevant) if relevant is not None else None
    probe = order >= n_real
    for k in ks:
        if k > order.size:
            raise ValueError(f"the ranking holds {order.size} features, fewer than k = {k}")
        row: dict[str, int] = {}
        if hit is not None:
            row["relevant_selected"] = int(hit[:k].sum())
            row["n_relevant"] = int(relevant.size)
        if n_probes:
            row["probes_selected"] = int(probe[:k].sum())
            row["n_probes"] = int(n_probes)
        out[int(k)] = row
    return out
