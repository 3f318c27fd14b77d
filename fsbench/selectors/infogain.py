"""Information gain of the class given each discretized feature."""

from __future__ import annotations

import math

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import (
    DiscretizingSelector,
    contingency,
    mutual_info_exponents,
    mutual_info_from_joint,
    near_ties,
    unique_rows,
)


def information_gain(codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int) -> np.ndarray:
    """IG_j = H(Y) - H(Y | X_j) = I(X_j; Y) in bits, from the (state, class) counts.

    Features whose information gains are exactly equal get bit-identical values
    (``equalize_exact_ties``).
    """
    joint = contingency(codes, n_states, y, n_classes)
    return equalize_exact_ties(mutual_info_from_joint(joint), joint)


def equalize_exact_ties(mi: np.ndarray, joint: np.ndarray) -> np.ndarray:
    """``mi`` (the mutual information of the tables ``joint`` (..., a, b)) with exact ties made equal.

    The floating-point value depends on the cells, not only on the exact value (a feature and
    its mirror image, permuted classes, a pure state of 2 or of 6 samples, or tables whose
    sums of m log m agree through prime factorizations), so exact ties could differ in the last
    bits. Logarithms are irrational, so the exact test is on integers: n I = sum_p E_p log p
    with integer exponents E (``mutual_info_exponents``), equal for two tables (with the same n)
    exactly when their mutual information is. Only values within tol of another are tested:
    each of the three entropies is in error by at most (4 alpha + m + 2) u log2 n, with m the
    number of counts summed, u = 2**-53 and alpha the error of log2 in ulps, so two exactly equal
    values differ by at most 3 (4 alpha + m + 4) eps log2 n; tol = 8 (m + 40) eps log2 n, with
    m = a b, covers it with room to spare for alpha <= 8 (numpy's log2 is within a few ulps).
    Values equal to each other and more than tol from any other need nothing. Among the rest,
    every group of equal exponents takes the float of its lowest-index table, so the values of
    other tables are unchanged.
    """
    mi = np.array(mi, dtype=float)
    values = mi.reshape(-1)
    a, b = joint.shape[-2:]
    tables = np.asarray(joint).reshape(-1, a, b)
    if values.size < 2:
        return mi
    n_max = int(tables.sum(axis=(1, 2)).max())
    tol = 8 * (a * b + 40) * np.finfo(float).eps * max(1.0, math.log2(max(n_max, 1)))
    near = near_ties(values, tol, equal_too=False)  # equal floats are tied already
    if near.size:
        first, same_table = unique_rows(tables[near].reshape(near.size, a * b))
        exponents, n = mutual_info_exponents(tables[near[first]])
        key = np.column_stack([exponents, n])
        key //= np.maximum(np.gcd.reduce(key, axis=1), 1)[:, None]  # proportional (E, n): equal I
        _, same_info = unique_rows(key)
        _, lowest, group = np.unique(same_info[same_table], return_index=True, return_inverse=True)
        values[near] = values[near[lowest]][group]
    return mi


@register("infogain")
class InformationGain(DiscretizingSelector):
    """Information gain: H(Y) - H(Y | X_j) in bits on the discretized feature.

    IG_j = H(Y) - sum_u P(X_j = u) H(Y | X_j = u) with empirical probabilities (plug-in
    estimates) over the states u of feature j, which equals the mutual information I(X_j; Y).
    Features are discretized as in ``chi2`` and ``mrmr`` (``discretize``: ``"mean_std"``, 3 states
    at mean +- ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states), so the
    score does not depend on a feature's scale. Features with exactly equal information gain get
    bit-identical scores (see ``equalize_exact_ties``), so they rank by index.
    """

    def _score(self, codes, n_states, y, n_classes):
        return information_gain(codes, n_states, y, n_classes)
