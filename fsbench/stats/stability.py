"""Stability of feature selection over the outer splits: Nogueira's estimator and Kuncheva's index.

The input is M feature sets selected from d features, one per outer split (the top k of each
split's ranking): an M x d boolean matrix Z (Z[i, f] true when set i holds feature f), or M
lists of feature indices with ``n_features = d`` (:func:`selection_matrix`).

Nogueira, Sechidis & Brown (2018), Definition 4: with p_f the share of the M sets holding
feature f, k_i = |set i| and kbar = mean(k_i),

    Phi = 1 - (1/d) sum_f s_f^2 / ((kbar/d) (1 - kbar/d)),    s_f^2 = M/(M - 1) p_f (1 - p_f),

1 when every set is the same, about 0 (in expectation) for sets drawn at random. Its variance
(their Theorem 7) is v = (4 / M^2) sum_i (phi_i - mean(phi))^2 with

    phi_i = [ (1/d) sum_f Z[i, f] p_f - k_i kbar / d^2
              + (Phi / 2) (2 k_i kbar / d^2 - k_i / d - kbar / d + 1) ] / ((kbar/d) (1 - kbar/d)),

and the (1 - alpha) confidence interval (their Corollary 9) is Phi -+ z_{1-alpha/2} sqrt(v).

Kuncheva's index (Kuncheva 2007), for sets of one size k: the mean over the M (M - 1) / 2
pairs of (r d - k^2) / (k (d - k)), r the size of the pair's intersection. When every set has
size k, Phi equals it (Nogueira et al., 2018, Section 5).

References: S. Nogueira, K. Sechidis, G. Brown, On the stability of feature selection
algorithms, JMLR 18(174) (2018) 1-54; L. I. Kuncheva, A stability index for feature selection,
AIAP 2007, 390-395.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as st

from fsbench.stats._checks import check_alpha


@dataclass(frozen=True)
class StabilityResult:
    """Nogueira's stability estimate, its variance and (1 - alpha) confidence interval, over
    ``n_sets`` sets of mean size ``mean_size`` from ``n_features`` features."""

    stability: float
    variance: float
    lower: float
    upper: float
    alpha: float
    n_sets: int
    n_features: int
    mean_size: float


def selection_matrix(selected: Any, n_features: int | None = None) -> np.ndarray:
    """The M x d boolean matrix of M selected feature sets.

    ``selected`` is a boolean matrix (``n_features``, if given, must equal its width), a 0/1
    matrix when ``n_features`` is None, or M sequences of feature indices in [0, n_features)
    when ``n_features`` is given (sets may differ in size; an index twice in one set is an error).
    """
    if n_features is None or (isinstance(selected, np.ndarray) and selected.dtype == bool):
        z = np.asarray(selected)
        if z.ndim != 2:
            raise ValueError(f"A selection matrix is M x d; got an array of shape {z.shape} (give lists of "
                             "indices with n_features instead).")
        if z.dtype != bool:
            if not np.isin(z, (0, 1)).all():
                raise ValueError("A selection matrix holds 0/1 or booleans; for lists of feature indices give "
                                 "n_features.")
            z = z.astype(bool)
        if n_features is not None and z.shape[1] != n_features:
            raise ValueError(f"The selection matrix has {z.shape[1]} columns but n_features is {n_features}.")
        return z
    if not (isinstance(n_features, (int, np.integer)) and n_features >= 1):
        raise ValueError(f"n_features must be a positive integer; got {n_features!r}.")
    sets = list(selected)
    z = np.zeros((len(sets), int(n_features)), dtype=bool)
    for i, features in enumerate(sets):
        idx = np.asarray(features).reshape(-1)
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"Set {i} holds non-integer feature indices.")
        if idx.size and (idx.min() < 0 or idx.max() >= n_features):
            raise ValueError(f"Set {i} holds a feature index outside [0, {n_features}).")
        if np.unique(idx).size != idx.size:
            raise ValueError(f"Set {i} holds a feature index twice.")
        z[i, idx] = True
    return z


def top_k_matrix(rankings: Any, k: int, n_features: int | None = None) -> np.ndarray:
    """The M x d boolean matrix of the top ``k`` features of M rankings (feature indices, best
    first; ``n_features`` defaults to the rankings' length)."""
    r = np.asarray(rankings)
    if r.ndim != 2:
        raise ValueError(f"Rankings are an M x d array of feature indices; got shape {r.shape}.")
    d = r.shape[1] if n_features is None else n_features
    if not 1 <= k <= r.shape[1]:
        raise ValueError(f"k must lie in [1, {r.shape[1]}] for rankings of {r.shape[1]} features; got {k}.")
    return selection_matrix(list(r[:, :k]), d)


def _checked(selected: Any, n_features: int | None) -> np.ndarray:
    z = selection_matrix(selected, n_features)
    m, d = z.shape
    if m < 2:
        raise ValueError(f"Stability needs at least two feature sets; got {m}.")
    total = int(z.sum())
    if total == 0 or total == m * d:
        raise ValueError("Stability is undefined when every set is empty or every set holds every feature.")
    return z


def nogueira_stability(selected: Any, n_features: int | None = None, alpha: float = 0.05) -> StabilityResult:
    """Nogueira, Sechidis & Brown's stability estimate with its variance and confidence interval
    (formulas in the module docstring). Raises ValueError for fewer than two sets, sets all
    empty or all full, or a malformed input."""
    check_alpha(alpha)
    z = _checked(selected, n_features)
    m, d = z.shape
    zf = z.astype(float)
    p = zf.mean(axis=0)
    sizes = zf.sum(axis=1)
    kbar = float(sizes.mean())
    denom = (kbar / d) * (1.0 - kbar / d)
    phi_hat = 1.0 - (m / (m - 1)) * float(np.mean(p * (1.0 - p))) / denom
    phi = (zf @ p / d - sizes * kbar / d**2
           + phi_hat / 2.0 * (2.0 * sizes * kbar / d**2 - sizes / d - kbar / d + 1.0)) / denom
    variance = 4.0 / m**2 * float(np.sum((phi - phi.mean()) ** 2))
    half = float(st.norm.ppf(1.0 - alpha / 2.0)) * math.sqrt(variance)
    return StabilityResult(stability=phi_hat, variance=variance, lower=phi_hat - half, upper=phi_hat + half,
                           alpha=float(alpha), n_sets=m, n_features=d, mean_size=kbar)


def kuncheva_index(selected: Any, n_features: int | None = None) -> float:
    """Kuncheva's consistency index: the mean over pairs of sets of (r d - k^2) / (k (d - k)).

    Every set must have the same size k, 0 < k < d (ValueError otherwise)."""
    z = _checked(selected, n_features)
    m, d = z.shape
    sizes = z.sum(axis=1)
    if np.unique(sizes).size != 1:
        raise ValueError(f"Kuncheva's index needs sets of one size; got sizes {sorted(set(sizes.tolist()))}.")
    k = int(sizes[0])
    zf = z.astype(float)
    overlap = zf @ zf.T
    r = overlap[np.triu_indices(m, 1)]
    return float(np.mean((r * d - k * k) / (k * (d - k))))

