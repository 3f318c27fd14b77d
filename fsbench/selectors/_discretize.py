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
from fsbench.fixed_order import column_sums
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
        # sums in sample order (fsbench.fixed_order): the same states on every machine
        z = X - column_sums(X) / n
        std = np.sqrt(column_sums(z * z) / max(n - 1, 1))
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


def near_ties(values: np.ndarray, tol: float, *, equal_too: bool = True) -> np.ndarray:
    """Indices (increasing) of the values within ``tol`` of another value, directly or by a chain.

    The values are sorted and every value whose gap to a sorted neighbour is at most ``tol`` is
    returned, so two values at most ``tol`` apart are both returned, and so is every value
    between them. With ``equal_too=False`` a value counts as near only through a different
    value (then every value equal to it is returned too): values equal to each other and more
    than ``tol`` from every other value are left out.
    """
    values = np.asarray(values, dtype=float).ravel()
    order = np.argsort(values, kind="stable")
    srt = values[order]
    if equal_too:
        run = np.arange(values.size)
        distinct = srt
    else:
        new = np.ones(values.size, dtype=bool)
        np.not_equal(srt[1:], srt[:-1], out=new[1:])
        run = np.cumsum(new) - 1
        distinct = srt[new]
    close = np.diff(distinct) <= tol
    near = np.zeros(distinct.size, dtype=bool)
    near[:-1] |= close
    near[1:] |= close
    return np.sort(order[near[run]])


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of equal rows of a 2-d array: the lowest index of each group and each row's group.

    Groups are numbered in the lexicographic order of their rows (``np.unique(rows, axis=0)``'s
    order, found with one ``lexsort``, about twice as fast).
    """
    rows = np.asarray(rows)
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    order = np.lexsort(rows.T[::-1])  # stable: equal rows keep their index order
    srt = rows[order]
    new = np.ones(rows.shape[0], dtype=bool)
    np.any(srt[1:] != srt[:-1], axis=1, out=new[1:])
    group = np.empty(rows.shape[0], dtype=np.intp)
    group[order] = np.cumsum(new) - 1
    return order[new], group


def _prime_factor_table(n_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The primes p <= n_max and, for each k in 0..n_max, its prime indices and weights k v_p(k).

    Returns ``primes`` (P,), ``index`` and ``weight`` (n_max + 1, K): row k lists the distinct
    primes of k (padded with index 0, weight 0; K is the largest number of distinct primes).
    """
    n_max = max(int(n_max), 1)
    sieve = np.ones(n_max + 1, dtype=bool)
    sieve[:2] = False
    for p in range(2, int(n_max ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p::p] = False
    primes = np.flatnonzero(sieve)
    n_distinct = np.zeros(n_max + 1, dtype=np.intp)
    for p in primes:
        n_distinct[p::p] += 1
    index = np.zeros((n_max + 1, max(int(n_distinct.max()), 1)), dtype=np.intp)
    weight = np.zeros(index.shape, dtype=np.int64)
    slot = np.zeros(n_max + 1, dtype=np.intp)
    for i, p in enumerate(primes):
        k = np.arange(p, n_max + 1, p)
        v = np.zeros(k.size, dtype=np.int64)
        q = int(p)
        while q <= n_max:
            v += k % q == 0
            q *= int(p)
        index[k, slot[k]] = i
        weight[k, slot[k]] = k * v
        slot[k] += 1
    return primes, index, weight


def mutual_info_exponents(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact form of the plug-in mutual information of count tables (k, states of A, states of B).

    With O the cells, R and C the row and column sums and n the total,
    n I = sum O log O - sum R log R - sum C log C + n log n, and m log m = sum_p m v_p(m) log p
    (v_p(m): the exponent of the prime p in m), so n I = sum_p E_p log p with integer E_p.
    Returns E (k, number of primes <= max n) and n (k,). Logarithms of distinct primes are
    linearly independent over the rationals (unique factorization), so two tables have exactly
    the same mutual information if and only if their (E, n) are proportional; for the same n,
    if and only if their rows of E are equal.
    """
    joint = np.asarray(joint, dtype=np.int64)
    a, b = joint.shape[-2:]
    tables = joint.reshape(-1, a, b)
    k = tables.shape[0]
    n = tables.sum(axis=(1, 2))
    primes, index, weight = _prime_factor_table(int(n.max()) if k else 1)
    terms = np.concatenate([tables.reshape(k, a * b), tables.sum(axis=2), tables.sum(axis=1), n[:, None]], axis=1)
    sign = np.concatenate([np.ones(a * b), -np.ones(a), -np.ones(b), np.ones(1)]).astype(np.int64)
    bins = index[terms] + (np.arange(k) * primes.size)[:, None, None]
    # float64 weights are exact: every partial sum is an integer far below 2**53
    exponents = np.bincount(bins.ravel(), weights=(weight[terms] * sign[:, None]).ravel(),
                            minlength=k * primes.size)
    return exponents.reshape(k, primes.size).astype(np.int64), n



class DiscretizingSelector(BaseSelector):
    """Base of the selectors that score discretized features (chi2, infogain).

    Subclasses implement ``_score(codes, n_states, y, n_classes)``.
    """

    _parameter_constraints: dict = {**BaseSelector._parameter_constraints, **DISCRETIZATION_CONSTRAINTS}

    def __init__(self, *, n_features_to_select: int = 10, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select=n_features_to_select)
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
