"""The data of a run: a config's datasets loaded (registered, users' files, data with known
features) and, for data with known features, what each row's top k holds.

Registered datasets come from :func:`fsbench.datasets.load`, users' files from
:func:`fsbench.datasets.read_data_file` (the bytes the config validated: their sha256 is in the
fingerprint), data with known relevant features or probes from
:func:`fsbench.datasets.known.build_known_data`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from fsbench.configuration.experiment import DataFileConfig, Experiment, KnownDataConfig
from fsbench.errors import FsbenchError

__all__ = ["build_known", "load_datasets", "read_config_data_file", "refuse_constant_data", "with_selection_counts"]


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


def refuse_constant_data(name: str, X: np.ndarray) -> None:
    """A FsbenchError when every feature is constant (some constant features are common and fine)."""
    X = np.asarray(X)
    if X.size and np.all(X == X[0]):
        raise FsbenchError(f"Every feature of dataset {name!r} is constant, so no selector or classifier can "
                           "beat the majority class; check the data file.")
