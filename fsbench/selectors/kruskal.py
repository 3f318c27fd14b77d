"""Kruskal-Wallis H statistic of each feature, ties corrected (Kruskal & Wallis 1952, JASA 47(260)).

Also the rank helpers the rank-based filters share: every column's mid-ranks from one sort (doubled,
so that they are integers) and the replacement of floating-point near ties by correctly rounded
exact rationals, so that statistics equal in exact arithmetic get bit-identical scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import near_ties, unique_rows
from fsbench.selectors.base import BaseSelector

_BLOCK_ELEMENTS = 1 << 20  # values ranked at once: a few arrays of 8 MB each


def doubled_midranks(F: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Twice the mid-ranks of every row of ``F`` (features x samples), in sorted order, with the
    sort and the tie term.

    One sort per feature (``argsort(axis=1)`` on the transposed, contiguous data, no loop over
    features; which of several equal values takes which sorted position does not matter). A run
    of t equal values at 0-based sorted positions a..b gets the mid-rank (a + 1 + b + 1) / 2, so
    its doubled rank a + b + 2 is an integer. Returns ``order`` (m, n), the sort, ``twice``
    (m, n) integers, the doubled rank of the sample at each sorted position (``twice[j, i]``
    belongs to sample ``order[j, i]``), and ``ties`` (m,) int64, the sum over the runs of
    t^3 - t (0 without ties, n^3 - n for a constant feature).
    """
    n = F.shape[1]
    order = np.argsort(F, axis=1)  # any sort: tied values share one mid-rank whatever their order
    srt = np.take_along_axis(F, order, axis=1)
    differs = srt[:, 1:] != srt[:, :-1]                 # a run ends between sorted positions i and i + 1
    pos = np.arange(n, dtype=np.int32 if n < 2**30 else np.int64)[None, :]
    starts = np.ones(srt.shape, dtype=bool)
    starts[:, 1:] = differs
    ends = np.ones(srt.shape, dtype=bool)
    ends[:, :-1] = differs
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    twice = first + last + 2
    run = (last - first + 1).astype(np.int64)
    ties = (run * run - 1).sum(axis=1)                 # sum over samples of t^2 - 1 = sum over runs of t^3 - t
    return order, twice, ties


def class_rank_sums(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """S (c, d) int64, each class's doubled mid-ranks summed (exact integers), and the tie terms (d,).

    Features are ranked in blocks of about ``_BLOCK_ELEMENTS`` values, so memory stays a few times
    the block whatever n x d (a loop over blocks of features, each vectorized).
    """
    n, d = X.shape
    sums = np.zeros((n_classes, d), dtype=np.int64)
    ties = np.zeros(d, dtype=np.int64)
    step = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for j0 in range(0, d, step):
        j1 = min(d, j0 + step)
        order, twice, ties[j0:j1] = doubled_midranks(np.ascontiguousarray(X[:, j0:j1].T))
        cell = y[order] + n_classes * np.arange(j1 - j0)[:, None]
        # bincount sums float64 weights; doubled ranks and their sums stay below 2 n^2 < 2^53: exact
        block = np.bincount(cell.ravel(), weights=twice.ravel().astype(np.float64),
                            minlength=n_classes * (j1 - j0))
        sums[:, j0:j1] = block.reshape(j1 - j0, n_classes).T
    return sums, ties


def exact_near_ties(values: np.ndarray, relative_error: float, keys: np.ndarray,
                    exact: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """``values`` with every near tie replaced by its exact rational, correctly rounded.

    ``values`` (d,) are non-negative statistics computed in floating point, each within
    ``relative_error`` * eps * value of an exact rational that is a function of the integer row
    ``keys[j]`` (eps the double epsilon, 2^-52). Values within
    tol = 4 * relative_error * eps * max(values) of another (directly or by a chain; equal values
    included), twice the largest gap that rounding can open between two equal statistics, are
    recomputed by ``exact(rows)``, which returns numerators and denominators as Python integers
    (object arrays; denominator 0 means the value 0) for unique key rows, and divided with Python's
    integer true division, which is correctly rounded. Equal rationals then give the same float,
    whatever their keys; every other pair is more than tol apart, so its float order is its exact
    order. Distinct rationals within half an ulp may still round to one float, and then rank by index.
    """
    values = np.array(values, dtype=float)
    if values.size < 2:
        return values
    tol = 4 * relative_error * np.finfo(float).eps * float(np.max(values))
    near = near_ties(values, tol)
    if near.size == 0:
        return values
    first, group = unique_rows(keys[near])
    num, den = exact(keys[near][first])
    zero = np.asarray(den == 0, dtype=bool)
    den[zero] = 1
    out = (num / den).astype(float)                     # elementwise int / int: correctly rounded
    out[zero] = 0.0
    values[near] = out[group]
    return values


def kruskal_h(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Tie-corrected Kruskal-Wallis H of every feature, and the tie term sum (t^3 - t).

    With R_k the sum of the mid-ranks of class k (n_k samples) and D_k = 2 R_k - n_k (n + 1)
    (an integer: twice the rank sum's distance from its null expectation),
    H = 12 / (n (n + 1)) sum_k (R_k - n_k (n + 1) / 2)^2 / n_k / C, C = 1 - sum (t^3 - t) / (n^3 - n),
    i.e. H = 3 (n - 1) sum_k D_k^2 / n_k / (n^3 - n - sum (t^3 - t)), a sum of non-negative terms
    (no cancellation). A constant feature (C = 0, H = 0 / 0) scores 0. Near ties are exact
    (:func:`exact_near_ties`): H = 3 (n - 1) sum_k D_k^2 (L / n_k) / (L (n^3 - n - sum (t^3 - t)))
    with L = lcm(n_k), in Python integers.
    """
    n, d = X.shape
    counts = np.bincount(y, minlength=n_classes).astype(np.int64)
    sums, ties = class_rank_sums(X, y, n_classes)
    dev = sums - (counts * (n + 1))[:, None]                                             # D (c, d)
    spread = n**3 - n - ties                                                             # int64, >= 0
    terms = dev.astype(float) ** 2 / counts[:, None]
    acc = terms[0].copy()
    for k in range(1, n_classes):                                                        # class order
        acc += terms[k]
    with np.errstate(divide="ignore", invalid="ignore"):
        h = (3.0 * (n - 1)) * acc / spread.astype(float)
    h[spread == 0] = 0.0

    lcm = math.lcm(*map(int, counts))
    per_class = [lcm // int(c) for c in counts]

    def exact(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        D, T = rows[:, :-1].astype(object), rows[:, -1].astype(object)
        num = 3 * (n - 1) * (D * D * np.array(per_class, dtype=object)).sum(axis=1)
        return num, lcm * (n**3 - n - T)

    # D_k^2, / n_k, c - 1 additions of non-negative terms, x 3 (n - 1), the denominator's
    # conversion and the division: c + 4 roundings of at most eps / 2 each, bounded by (c + 4) eps
    keys = np.column_stack([dev.T, ties])
    return exact_near_ties(h, n_classes + 4, keys, exact), ties


@register("kruskal")
class KruskalWallis(BaseSelector):
    """Kruskal-Wallis: the rank-based one-way ANOVA statistic H of each feature, ties corrected.

    Kruskal & Wallis (1952): with the n samples ranked per feature (ties share their mid-rank),
    R_k the rank sum of class k (n_k samples),
    H = [12 / (n (n + 1)) sum_k R_k^2 / n_k - 3 (n + 1)] / [1 - sum_t (t^3 - t) / (n^3 - n)],
    t the sizes of the runs of tied values. Equals ``scipy.stats.kruskal(...).statistic`` per
    feature, except for a constant feature, where scipy returns NaN (0 / 0) and this selector
    scores 0 (no evidence that the classes differ), so such features rank last, by index.

    Mid-ranks come from one sort per column; the class rank sums are exact integers and H is
    evaluated as a sum of non-negative terms. Statistics equal in exact arithmetic (identical
    features, a feature and its mirror image, features with the same ranks up to relabelling of
    classes of equal size, discrete features with equal class-wise counts) get bit-identical
    scores: every H within rounding of another is recomputed as an exact rational and correctly
    rounded. Ties rank by index (lower first). ``tie_terms_`` holds sum (t^3 - t) per feature.
    """

    def _fit(self, X, y, classes):
        h, self.tie_terms_ = kruskal_h(X, y, classes.size)
        return h
