"""The data of a run: a config's datasets loaded (registered, users' files, data with known
features) and, for data with known features, what each row's top k holds.

Registered datasets come from :func:`fsbench.datasets.load`, users' files from
:func:`fsbench.datasets.read_data_file` (the bytes the config validated: their sha256 is in the
fingerprint), data with known relevant features or probes from
:func:`fsbench.datasets.known.build_known_data`.

A dataset is sparse when its loaded ``X`` is a scipy sparse matrix (a user's file that stores it
sparse; registered and generated data are dense): whether a dataset is sparse is read from the
data, never recorded in the configuration, so no fingerprint depends on it. Before any task runs,
:func:`refuse_dense_over_limit` refuses, in one sentence, a run that would densify a sparse
dataset beyond :func:`dense_limit` (``FSBENCH_DENSE_LIMIT``, default 2 GB): the limit decides
whether a run may start, never a row's value, so it is not part of the fingerprint either.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse

from fsbench.configuration.experiment import DataFileConfig, Experiment, KnownDataConfig
from fsbench.datasets.user_files.messages import format_bytes
from fsbench.datasets.user_files.validation import constant_features
from fsbench.errors import FsbenchError

__all__ = ["DEFAULT_DENSE_LIMIT", "DENSE_LIMIT_VARIABLE", "build_known", "dense_limit", "is_sparse_data",
           "load_datasets", "read_config_data_file", "refuse_constant_data", "refuse_dense_over_limit",
           "sparse_datasets", "with_selection_counts"]

#: the environment variable holding the most bytes a sparse dataset may take once densified
DENSE_LIMIT_VARIABLE = "FSBENCH_DENSE_LIMIT"
#: its default: 2 GB (decimal, as every size fsbench prints)
DEFAULT_DENSE_LIMIT = 2_000_000_000
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def dense_limit() -> int:
    """The most bytes a sparse dataset may take densified for a fit: ``FSBENCH_DENSE_LIMIT`` (a number
    of bytes, optionally with a unit: ``2GB``, ``500 MB``, ``1.5e9``, ``4GiB``), default 2 GB."""
    text = os.environ.get(DENSE_LIMIT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_DENSE_LIMIT
    found = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)", text)
    unit = found.group(2).lower() if found else ""
    if found is None or unit not in _UNITS or float(found.group(1)) < 0:
        raise FsbenchError(f"{DENSE_LIMIT_VARIABLE}={text!r} is not a size; give bytes with an optional unit, "
                           "for example 2GB, 500MB or 4GiB.")
    return int(float(found.group(1)) * _UNITS[unit])


def is_sparse_data(data: Any) -> bool:
    """Whether a loaded dataset (an object with ``X``) holds X sparse."""
    return bool(scipy.sparse.issparse(getattr(data, "X", None)))


def sparse_datasets(data: dict[str, Any]) -> frozenset[str]:
    """The names of the loaded datasets whose X is sparse."""
    return frozenset(name for name, d in data.items() if is_sparse_data(d))


def refuse_dense_over_limit(experiment: Experiment, data: dict[str, Any]) -> None:
    """A FsbenchError, before any task runs, when a selector would densify a sparse dataset beyond
    :func:`dense_limit`, or when a sparse dataset meets what its route cannot do (a selector's grid).

    A built-in with ``fsbench.selectors.accepts_sparse(name)`` fits the sparse matrix and needs
    ``fsbench.selectors.sparse_fit_bytes(name, n, d, nnz)`` beside it (mRMR and the greedy
    information-theoretic criteria: a state per value, 16 n d bytes); any other built-in needs
    ``fsbench.selectors.dense_fit_bytes(name, n, d)``, a user's selector its own dense copy (8 n d
    bytes), where n is the dataset's number of samples (the most a selector is fitted on: all of
    them under ``select_on: all``). The evaluation densifies
    only the top max(n_features) columns (n x k), which is not counted.
    """
    from fsbench.engine.fitting import sparse_route

    limit = None
    for name in experiment.datasets:
        if name not in data or not is_sparse_data(data[name]):
            continue
        n, d = data[name].X.shape
        for sel in experiment.selectors:
            if sel.grid:
                raise FsbenchError(f"selector {sel.label!r} has a grid, and tuning a selector's parameters is "
                                   f"not supported on sparse data (dataset {name!r}); fix its parameters under "
                                   "params instead of grid, or drop the selector for this dataset.")
            import fsbench.selectors

            if sparse_route(sel.name, sel.kind):
                needed = int(fsbench.selectors.sparse_fit_bytes(sel.name, n, d, data[name].X.nnz))
                what = f"would take {{}} on the sparse dataset {name!r} ({n:,} x {d:,}) even without densifying it"
            else:
                needed = int(fsbench.selectors.dense_fit_bytes(sel.name, n, d)) if sel.kind == "builtin" else 8 * n * d
                what = f"needs dense data: dataset {name!r} ({n:,} x {d:,}) would take {{}} dense"
            limit = dense_limit() if limit is None else limit
            if needed > limit:
                raise FsbenchError(f"selector {sel.label!r} {what.format(format_bytes(needed))}, over the limit of "
                                   f"{format_bytes(limit)}; drop the selector for this dataset or raise "
                                   f"{DENSE_LIMIT_VARIABLE}.")


def load_datasets(experiment: Experiment, data: dict[str, Any] | None, data_dir: str | Path | None,
                  skip_missing: bool) -> tuple[dict[str, Any], list[str]]:
    """Every dataset of ``experiment`` not already in ``data``, by name, and the names left out
    because their files were not found (``skip_missing``; else a missing file stops the run)."""
    from fsbench.datasets import load, locate

    data = dict(data or {})
    skipped: list[str] = []
    for name in experiment.datasets:
        if name in data:
            continue
        if (known := experiment.known(name)) is not None:
            if skip_missing and known.base is not None and locate(known.base, data_dir) is None:
                skipped.append(name)
                continue
            data[name] = build_known(known, data_dir)
        elif (data_file := experiment.data_file(name)) is not None:
            data[name] = read_config_data_file(data_file)
        elif skip_missing and locate(name, data_dir) is None:
            skipped.append(name)
        else:
            data[name] = load(name, data_dir)
    return data, skipped


def read_config_data_file(data_file: DataFileConfig) -> Any:
    """A user's data file, as the config validated it (same bytes: its sha256 is in the fingerprint)."""
    from fsbench.datasets.user_files.files import read_data_file

    data = read_data_file(data_file.path, label=data_file.label, x=data_file.x, y=data_file.y, name=data_file.name)
    if data.sha256 != data_file.sha256:
        raise FsbenchError(f"The data file {data_file.path!r} changed since the config was read; run the "
                           "command again.")
    return data


def build_known(known: KnownDataConfig, data_dir: str | Path | None = None) -> Any:
    """The dataset of a config's entry with known features (:class:`fsbench.datasets.known.KnownData`):
    generated, or its base (a registered dataset, or a user's file) with its probes appended and
    its declared relevant features."""
    from fsbench.datasets import load
    from fsbench.datasets.known import build_known_data

    probes = dict(known.probes) or None
    if known.generate:
        return build_known_data(known.name, generate=dict(known.generate), probes=probes)
    base = read_config_data_file(known.base_file) if known.base_file is not None else load(known.base, data_dir)
    return build_known_data(known.name, base=base, probes=probes, relevant=known.relevant)


def with_selection_counts(outcome: Any, data: Any) -> Any:
    """A task's outcome (fsbench.engine.runner.TaskOutcome) with, on each row, how many of its
    top-k features are relevant and how many are probes, when ``data`` knows them
    (:func:`fsbench.datasets.known.selection_counts`), counted from the outcome's ranking: the
    one its rows evaluate."""
    relevant, n_probes = getattr(data, "relevant", None), int(getattr(data, "n_probes", 0) or 0)
    if outcome.failure is not None or (relevant is None and not n_probes):
        return outcome
    from fsbench.datasets.known import selection_counts

    rows = outcome.rows or []
    counts = selection_counts(outcome.ranking, sorted({int(row["k"]) for row in rows}), relevant=relevant,
                              n_real=int(data.X.shape[1]) - n_probes, n_probes=n_probes)
    return dataclasses.replace(outcome, rows=[{**row, **counts[int(row["k"])]} for row in rows])


def refuse_constant_data(name: str, X: Any) -> None:
    """A FsbenchError when every feature is constant (some constant features are common and fine); a
    sparse X is checked on its stored values (:func:`fsbench.datasets.user_files.validation.constant_features`)."""
    if scipy.sparse.issparse(X):
        constant = X.shape[0] > 0 and X.shape[1] > 0 and constant_features(X) == X.shape[1]
    else:
        X = np.asarray(X)
        constant = bool(X.size and np.all(X == X[0]))
    if constant:
        raise FsbenchError(f"Every feature of dataset {name!r} is constant, so no selector or classifier can "
                           "beat the majority class; check the data file.")
