"""Input checks shared by the statistics: one-sentence ValueErrors for bad input."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd


def check_alpha(alpha: float) -> None:
    """alpha must lie strictly between 0 and 1."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha!r}.")


def score_matrix(scores: pd.DataFrame | np.ndarray, *, selectors: Sequence[str] | None = None,
                 min_blocks: int = 1) -> tuple[np.ndarray, list[str], list[Any]]:
    """(N x K float array, selector names, block labels) of a blocks x selectors table, checked:
    at least two distinct selectors, at least ``min_blocks`` blocks, every score finite (else a
    ValueError of one sentence). Public as :func:`fsbench.stats.score_matrix`.

    A DataFrame gives its columns as the names (``selectors``, if given, must equal them) and
    its index as the blocks; an array takes its names from ``selectors`` (default s0, s1, ...).
    """
    if isinstance(scores, pd.DataFrame):
        names = [str(c) for c in scores.columns]
        if selectors is not None and [str(s) for s in selectors] != names:
            raise ValueError(f"selectors {list(selectors)} do not match the table's columns {names}.")
        blocks = list(scores.index)
        values = scores.to_numpy(dtype=float)
    else:
        values = np.asarray(scores, dtype=float)
        if values.ndim != 2:
            raise ValueError(f"Scores must be a blocks x selectors matrix; got an array of shape {values.shape}.")
        names = [f"s{j}" for j in range(values.shape[1])] if selectors is None else [str(s) for s in selectors]
        if len(names) != values.shape[1]:
            raise ValueError(f"{len(names)} selector names for a matrix of {values.shape[1]} columns.")
        blocks = list(range(values.shape[0]))
    n, k = values.shape
    if k < 2:
        raise ValueError(f"A comparison needs at least two selectors; got {k}.")
    if len(set(names)) != k:
        raise ValueError(f"Selector names must be distinct; got {names}.")
    if n < min_blocks:
        raise ValueError(f"The Friedman test needs at least {min_blocks} blocks (datasets, or (dataset, k) "
                         f"pairs); got {n}: the per-dataset tests (pairwise_splits) still work on one dataset.")
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"Score of selector {names[j]!r} in block {blocks[i]!r} is missing or not finite.")
    return values, names, blocks


def paired(a: Any, b: Any, what: str = "paired values") -> tuple[np.ndarray, np.ndarray]:
    """Two 1-D float arrays of one length >= 2, finite."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"The two samples must be 1-D of one length; got shapes {a.shape} and {b.shape}.")
    if a.size < 2:
        raise ValueError(f"A paired test needs at least two {what}; got {a.size}.")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("The samples hold missing or infinite values.")
    return a, b


def check_fraction(test_fraction: float) -> float:
    """n_test / n_total in [0, 1)."""
    if not (isinstance(test_fraction, (int, float, np.floating)) and math.isfinite(test_fraction)
            and 0 <= test_fraction < 1):
        raise ValueError(f"test_fraction (n_test / n_total) must lie in [0, 1); got {test_fraction!r}.")
    return float(test_fraction)
