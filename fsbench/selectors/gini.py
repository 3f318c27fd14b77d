"""Gini index of the best single-threshold split of each feature, as scikit-feature defines it."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector

#: samples x features per block of the vectorized splits: bounds the temporaries (a few int64
#: arrays of this size) at a few tens of MB
_BLOCK = 2_000_000
#: n n_L n_R < n^3 / 4 must stay below 2**53 for the integers of ``gini_index`` to be exact floats
_N_MAX = 300_000
#: scikit-feature starts every feature's index at 0.5 and keeps the minimum
GINI_START = 0.5


def gini_index(X: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """scikit-feature's Gini index of every feature: the smallest weighted Gini impurity over the
    splits x <= v / x > v at each distinct value v of the feature, and at most 0.5.

    For a split with n_L samples on the left (class counts l_k) and n_R = n - n_L on the right
    (class counts r_k), G = (n_L (1 - sum_k (l_k / n_L)^2) + n_R (1 - sum_k (r_k / n_R)^2)) / n, an
    empty side contributing 0 (the split at the largest value leaves the right side empty: G is the
    impurity of the whole sample). scikit-feature starts from 0.5 and takes the minimum, so the
    result is min(0.5, min_v G(v)). Lower is better.

    G is rational: G = N / D with D = n n_L n_R and N = D - n_R sum l_k^2 - n_L sum r_k^2 (an
    empty right side: D = n^2, N = n^2 - sum l_k^2). N and D are exact integers in int64 and in
    float64 (n < 300,000), so one IEEE division rounds G correctly: exactly equal indices are
    bit-identical floats on every machine, whatever split or feature they come from, and the
    minimum of correctly rounded values is the correctly rounded minimum. scikit-feature's float
    steps (p = l_k / n_L, p ** 2 summed in class order, 1 - sum, weighted, divided by n) round
    several times: its values differ from these by at most (C + 7) eps / 2 for C classes, often
    not at all (tests/test_gini.py).

    Vectorized: one sort per feature, class counts left of every split as cumulative sums over
    the sorted samples (a loop over classes and over blocks of features, never over samples).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    n, d = X.shape
    if n >= _N_MAX:
        raise ValueError(f"gini_index is exact for fewer than {_N_MAX} samples, got {n}")
    class_totals = np.bincount(y, minlength=n_classes).astype(np.int64)
    n_left = np.arange(1, n + 1, dtype=np.int64)[:, None]
    n_right = n - n_left
    whole = float(n * n - int((class_totals ** 2).sum())) / float(n * n)  # the split at the largest value
    out = np.empty(d)
    step = max(1, _BLOCK // max(n, 1))
    for start in range(0, d, step):
        block = X[:, start:start + step]
        order = np.argsort(block, axis=0, kind="stable")
        srt = np.take_along_axis(block, order, axis=0)
        labels = y[order]
        sum_left = np.zeros(block.shape, dtype=np.int64)
        sum_right = np.zeros(block.shape, dtype=np.int64)
        for k in range(n_classes):
            left = np.cumsum(labels == k, axis=0, dtype=np.int64)
            sum_left += left * left
            right = class_totals[k] - left
            sum_right += right * right
        denom = n * n_left * n_right
        numer = denom - n_right * sum_left - n_left * sum_right
        # a split lies after the last sample of each distinct value; the last row (nothing on
        # the right) is the whole sample's impurity, the same for every feature
        split = np.zeros(block.shape, dtype=bool)
        np.not_equal(srt[1:], srt[:-1], out=split[:-1])
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(split, numer.astype(float) / np.where(split, denom, 1).astype(float), np.inf)
        out[start:start + step] = np.minimum(g.min(axis=0), whole)
    return np.minimum(out, GINI_START)


@register("gini")
class GiniIndex(BaseSelector):
    """Gini index: the lowest weighted Gini impurity of a single-threshold split (scikit-feature's definition).

    For each feature, min(0.5, min_v G(v)) over the splits x <= v / x > v at its distinct values v,
    with G the impurity of the two sides weighted by their sizes (``gini_index``), as in
    scikit-feature's ``skfeature.function.statistical_based.gini_index`` (Gini 1912; used for
    feature selection by Shang et al. 2007 and in Li et al.'s scikit-feature repository, 2018).
    Lower is better, so ``scores_`` = -G (higher is better) and features rank by increasing Gini
    index, exact ties (equal rationals, bit-identical floats) to the lower index; scikit-feature
    ranks with numpy's default (unstable) argsort, which may order tied features either way.

    The 0.5 start is scikit-feature's: every feature whose best split is no better than 0.5 scores
    exactly 0.5, and such features rank by index. With more than two classes this can be many
    features: with C >= 4 balanced classes no single threshold goes below (C - 2) / C >= 0.5, so
    every feature scores 0.5. The values are scikit-feature's to (C + 7) eps / 2 (it rounds at
    every step, fsbench once, see ``gini_index``).
    """

    def _fit(self, X, y, classes):
        return -gini_index(X, y, classes.size)
