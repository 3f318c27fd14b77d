"""What ``bench_baselines.py`` times: one :class:`Case` per method, defined by the family modules
``baselines_*.py`` beside this file (each exports ``CASES: list[Case]``).

A case times fsbench's registered selector and its fastest Python peer on the same input and
compares their outputs, so that every ratio is measured at equal output (or the difference is
stated). The driver loads the datasets, z-scores the features (as fsbench's protocol does), calls
``prepare`` (for example to hand both sides the same discretized states), and times both sides
on one BLAS thread in the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Case:
    #: the registered fsbench name, and the parameters fsbench is called with
    method: str
    params: dict[str, Any]
    #: the peer as a reader should cite it: "scikit-feature 1.2.1 CMIM", "skrebate 0.8.4 MultiSURF",
    #: "scikit-learn 1.9 RFE(LinearSVC)"
    peer: str
    #: runs the peer: (X, y, n_picks) -> its output (a feature order, or one score per feature)
    run_peer: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    #: compares fsbench's fitted selector with the peer's output, in a few words:
    #: "identical order of 100 picks", "scores equal to 1e-12", "Spearman 0.998 (peer's ties ...)"
    compare: Callable[[Any, np.ndarray, int], str]
    #: (X, y) -> the (X, y) both sides get, or None for the z-scored data as it is
    prepare: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None
    #: the number of picks the peer is asked for (the issue's bar: 100 for the greedy criteria)
    n_picks: int = 100
    #: when the peer is too slow on every feature: the number of leading features both sides get
    #: (None: all), stated in the printed table
    max_features: int | None = None
    #: anything the table should say about the comparison (a peer's deviation, its parameters)
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
