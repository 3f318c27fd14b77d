"""Helpers shared by the filter selectors: parameter checks, discretization, entropy and MI.

Discretization turns each feature into a small number of states, independently of its scale
(a positive rescaling or a shift of a feature leaves its states unchanged):

- ``"mean_std"`` (Peng, Long & Ding 2005, and Peng's mRMR program): standardize the feature
  with its mean and sample standard deviation (ddof = 1) and give state 0 to z < -t, state 2
  to z > t and state 1 to the rest, with t = ``std_factor`` (1 in the paper). A constant
  feature is all state 1.
- ``"quantile"`` (equal frequency): with r the number of samples whose value is strictly
  smaller, the state is floor(n_bins * r / n). Equal values share a state, so ties can make
  bins unequal or empty.

Entropies and mutual information are in bits and computed exactly from counts:
H = log2(n) - sum_k n_k log2(n_k) / n.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fsbench.errors import ConfigError
from fsbench.selectors.base import BaseSelector, count, real

DISCRETIZATIONS = ("mean_std", "quantile")


class InvalidParameterError(ConfigError, ValueError):
    """A selector hyper-parameter has an invalid value (a ``ValueError`` for scikit-learn users)."""


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` lower-cased if it is one of ``choices``, else raise InvalidParameterError."""
    if isinstance(value, str) and value.lower() in choices:
        return value.lower()
    raise InvalidParameterError(f"{name}={value!r} is not valid; use one of {', '.join(map(repr, choices))}.")


def check_int(name: str, value: Any, minimum: int, *, allow_none: bool = False) -> int | None:
    """Return ``value`` as an int >= ``minimum`` (or None when allowed)."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        none = " or None" if allow_none else ""
        raise InvalidParameterError(f"{name}={value!r} is not valid; use an integer >= {minimum}{none}.")
    return int(value)


def check_float(name: str, value: Any, minimum: float = 0.0) -> float:
    """Return ``value`` as a finite float >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < minimum:
        raise InvalidParameterError(f"{name}={value!r} is not valid; use a finite number >= {minimum}.")
    return float(value)


def _sorted_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column stable sort order, and where each sorted value differs from the previous one."""
    order = np.argsort(X, axis=0, kind="stable")
    srt = np.take_along_axis(X, order, axis=0)
    new = np.empty(srt.shape, dtype=bool)
    new[:1] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    return order, new


def _unsort(order: np.ndarray, values_sorted: np.ndarray) -> np.ndarray:
    out = np.empty_like(values_sorted)
    np.put_along_axis(out, order, values_sorted, axis=0)
    return out


def min_ranks(X: np.ndarray) -> np.ndarray:
    """r_ij = number of samples i' with X[i', j] < X[i, j] (ties share the lowest rank)."""
    n = X.shape[0]
    order, new = _sorted_columns(X)
    first = np.where(new, np.arange(n)[:, None], 0)
    return _unsort(order, np.maximum.accumulate(first, axis=0))


def dense_codes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes 0..u_j-1 of each column's distinct values (in increasing order) and the counts u_j."""
    order, new = _sorted_columns(X)
    codes = _unsort(order, np.cumsum(new, axis=0) - 1)
    return codes, new.sum(axis=0)


def discretize(X: np.ndarray, method: str = "mean_std", std_factor: float = 1.0,
               n_bins: int = 3) -> tuple[np.ndarray, int]:
    """States (n, d) of every feature, as intp codes in 0..n_states-1, and n_states.

    ``method`` is ``"mean_std"`` (3 states at mean +- std_factor * std) or ``"quantile"``
    (``n_bins`` equal-frequency states); see the module docstring for the exact rules.
    """
    method = check_choice("discretize", method, DISCRETIZATIONS)
    n = X.shape[0]
    if method == "mean_std":
        t = check_float("std_factor", std_factor, 0.0)
        z = X - X.mean(axis=0)
        std = np.sqrt(np.einsum("ij,ij->j", z, z) / max(n - 1, 1))
        with np.errstate(divide="ignore", invalid="ignore"):
            z /= std
        z[:, std == 0] = 0.0
        return np.add(z >= -t, z > t, dtype=np.intp), 3
    b = check_int("n_bins", n_bins, 2)
    return (min_ranks(X) * b) // n, b


#: The discretization parameters shared by mrmr, chi2 and infogain (scikit-learn constraints).
DISCRETIZATION_CONSTRAINTS: dict = {
    "discretize": [StrOptions(set(DISCRETIZATIONS))],
    # Above 5 standard deviations every feature is one state on a sample of n <= 26 (no |z| can
    # exceed (n - 1) / sqrt(n)) and nearly so on any sample: 5 is the cap (the paper uses 1).
    "std_factor": [real(0, 5, "both")],
    # Up to 32 equal-frequency states: with a few hundred training samples more states leave a
    # handful of samples per (state, class) cell, and mrmr's joint tables grow as n_bins^2 per
    # feature (32^2 x 15,000 features = 15 million counts).
    "n_bins": [count(2, 32)],
}


def check_discretization_relations(selector: BaseSelector) -> None:
    """n_bins is for ``discretize="quantile"`` only, std_factor for ``"mean_std"`` only."""
    if selector.discretize == "mean_std":
        selector._reject_unused("n_bins", "discretize='quantile'")
    else:
        selector._reject_unused("std_factor", "discretize='mean_std'")


def contingency(codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts (d, n_states, n_classes): samples of each (state of feature j, class) pair."""
    n, d = codes.shape
    cell = codes * n_classes
    cell += y[:, None]
    cell += np.arange(d) * (n_states * n_classes)
    counts = np.bincount(cell.ravel(), minlength=d * n_states * n_classes)
    return counts.reshape(d, n_states, n_classes)


def xlog2x(counts: np.ndarray) -> np.ndarray:
    """k log2 k elementwise, with 0 log 0 = 0."""
    counts = np.asarray(counts, dtype=float)
    out = np.zeros_like(counts)
    pos = counts > 0
    out[pos] = counts[pos] * np.log2(counts[pos])
    return out


def entropy_from_counts(counts: np.ndarray, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    """Entropy in bits of the distribution given by the counts along ``axis``."""
    n = counts.sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.log2(n) - xlog2x(counts).sum(axis=axis) / n
    return np.where(n > 0, h, 0.0)


def mutual_info_from_joint(joint: np.ndarray) -> np.ndarray:
    """I(A; B) in bits from joint counts of shape (..., states of A, states of B)."""
    h_a = entropy_from_counts(joint.sum(axis=-1))
    h_b = entropy_from_counts(joint.sum(axis=-2))
    h_ab = entropy_from_counts(joint, axis=(-2, -1))
    return np.maximum(h_a + h_b - h_ab, 0.0)



class DiscretizingSelector(BaseSelector):
    """Base of the selectors that score discretized features (chi2, infogain).

    Subclasses implement ``_score(codes, n_states, y, n_classes)``.
    """

    _parameter_constraints: dict = {**BaseSelector._parameter_constraints, **DISCRETIZATION_CONSTRAINTS}

    def __init__(self, n_features_to_select: int = 10, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select)
        self.discretize = discretize
        self.std_factor = std_factor
        self.n_bins = n_bins

    def check_params(self) -> None:
        check_discretization_relations(self)

    def _fit(self, X, y, classes):
        codes, n_states = discretize(X, self.discretize, self.std_factor, self.n_bins)
        return self._score(codes, n_states, y, classes.size)

    def _score(self, codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int) -> np.ndarray:
        raise NotImplementedError
