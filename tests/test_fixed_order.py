"""The numbers that decide a row have the same bits on every machine.

Each computation is checked against a reference whose bits cannot depend on the machine: plain
Python loops over floats (IEEE-754 double, one rounding per operation, never a fused
multiply-add, no SIMD) in the order fsbench.fixed_order states, and ``math.fsum`` or exact
fractions where the sums are exact. BLAS (``@``, ``ddot``, ``dgemm``) chooses its kernel per CPU
and fails these comparisons on machines where it sums in blocks or fuses products into sums.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from fsbench import fixed_order
from fsbench.evaluation.protocol import standardize
from fsbench.selectors.fisher import fisher_scores
from fsbench.selectors.fstat import f_statistic
from fsbench.selectors.ttest import one_vs_rest_t


def seq_sum(values) -> float:
    s = 0.0
    for v in values:
        s = s + float(v)
    return s


def seq_dot(a, b) -> float:
    s = 0.0
    for u, v in zip(a, b, strict=True):
        s = s + float(u) * float(v)
    return s


def sq(x: float) -> float:
    return x * x


def wide_range(rng, shape):
    """Values over many binades: sums of them round at almost every step."""
    return rng.standard_normal(shape) * np.exp(rng.standard_normal(shape) * 3)


@pytest.mark.parametrize("shape", [(50, 7), (1000, 1), (300, 2), (3, 5), (1, 4), (129, 3)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_column_sums_are_sums_in_row_order(shape, order):
    X = np.asarray(wide_range(np.random.default_rng(shape[0]), shape), order=order)
    got = fixed_order.column_sums(X)
    expected = np.array([seq_sum(X[:, j]) for j in range(shape[1])])
    np.testing.assert_array_equal(got, expected)


def test_column_sums_of_exact_sums_are_fsum():
    rng = np.random.default_rng(3)
    X = rng.integers(-2**20, 2**20, size=(400, 6)) / 1024.0  # every partial sum is exact
    np.testing.assert_array_equal(fixed_order.column_sums(X), [math.fsum(c) for c in X.T])


def test_group_sums():
    rng = np.random.default_rng(4)
    X, g = wide_range(rng, (90, 5)), rng.integers(0, 4, 90)
    g[g == 2] = 1  # an empty group
    got = fixed_order.group_sums(X, g, 4)
    for k in range(4):
        np.testing.assert_array_equal(got[k], [seq_sum(X[g == k, j]) for j in range(5)])


@pytest.mark.parametrize("k", [1, 2, 3, 15, 16, 17, 31, 33, 100])
def test_linear_kernel_is_the_ordered_dot(k):
    """Below 16 features OpenBLAS's Haswell ddot sums this way and its SkylakeX ddot fuses each
    product into the sum; from 16 on both sum in SIMD blocks. fsbench's kernel is the plain loop."""
    rng = np.random.default_rng(k)
    A, B = wide_range(rng, (13, k)), wide_range(rng, (6, k))
    K = fixed_order.linear_kernel(A, B)
    expected = np.array([[seq_dot(a, b) for b in B] for a in A])
    np.testing.assert_array_equal(K, expected)
    G = fixed_order.linear_kernel(A, A)
    np.testing.assert_array_equal(G, G.T)


def test_the_kernel_is_not_fused():
    """A product whose rounding error a fused multiply-add would keep: the kernel rounds it away."""
    a = np.array([[1.0 + 2.0**-30, 1.0]])
    b = np.array([[1.0 - 2.0**-30, -1.0]])
    exact = Fraction(a[0, 0]) * Fraction(b[0, 0]) - 1  # -2**-60
    fused = float(exact)
    assert fused != 0.0
    assert fixed_order.linear_kernel(a, b)[0, 0] == 0.0 == seq_dot(a[0], b[0])


def test_a_kernel_continued_equals_the_kernel_at_once():
    rng = np.random.default_rng(7)
    A, B = wide_range(rng, (20, 40)), wide_range(rng, (8, 40))
    K = fixed_order.linear_kernel(A[:, :10], B[:, :10])
    fixed_order.extend_linear_kernel(K, A[:, 10:], B[:, 10:])
    np.testing.assert_array_equal(K, fixed_order.linear_kernel(A, B))


@pytest.mark.parametrize("mode", ["train", "global"])
def test_standardized_data_is_the_stated_computation(mode):
    rng = np.random.default_rng(5)
    X = np.asfortranarray(wide_range(rng, (37, 4)))
    X[:, 2] = 3.25  # constant: only centred
    train, test = np.arange(0, 37, 3), np.setdiff1d(np.arange(37), np.arange(0, 37, 3))
    got_train, got_test = standardize(X, train, test, mode)
    ref = X[train] if mode == "train" else X
    n = ref.shape[0]
    for j in range(4):
        mean = seq_sum(ref[:, j]) / n
        std = math.sqrt(seq_sum((float(v) - mean) * (float(v) - mean) for v in ref[:, j]) / n)
        std = std if std != 0 else 1.0
        np.testing.assert_array_equal(got_train[:, j], [(float(v) - mean) / std for v in X[train, j]])
        np.testing.assert_array_equal(got_test[:, j], [(float(v) - mean) / std for v in X[test, j]])


def test_standardized_small_integers_are_correctly_rounded():
    """Sums of small integers are exact, so the mean is the exact mean rounded once."""
    X = np.array([[1.0, 2.0], [2.0, 2.0], [4.0, 7.0], [9.0, -1.0], [3.0, 0.0], [5.0, 5.0], [1.0, 1.0]])
    got, _ = standardize(X, np.arange(7), np.arange(0), "train")
    for j in range(2):
        mean = float(Fraction(int(X[:, j].sum()), 7))
        dev = [float(v) - mean for v in X[:, j]]
        std = math.sqrt(seq_sum(d * d for d in dev) / 7)
        np.testing.assert_array_equal(got[:, j], [d / std for d in dev])


def _class_problem(seed, n=120, d=9, c=4):
    rng = np.random.default_rng(seed)
    X = wide_range(rng, (n, d))
    X[:, 3] = X[:, 5]  # equal features must get equal scores, whatever their position
    y = np.repeat(np.arange(c), n // c)
    rng.shuffle(y)
    return X, y, c


def _fisher_reference(X, y, c):
    n, d = X.shape
    scores = []
    for j in range(d):
        col = [float(v) for v in X[:, j]]
        counts = [int((y == k).sum()) for k in range(c)]
        means = [seq_sum(v for v, lab in zip(col, y, strict=True) if lab == k) / counts[k] for k in range(c)]
        overall = seq_sum(col) / n
        between = seq_sum(float(counts[k]) * sq(means[k] - overall) for k in range(c))
        within = seq_sum(sq(v - means[lab]) for v, lab in zip(col, y, strict=True))
        scores.append(0.0 if between == 0 else between / within)
    return np.array(scores)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fisher_and_f_scores_are_the_stated_computation(seed):
    X, y, c = _class_problem(seed)
    expected = _fisher_reference(X, y, c)
    got = fisher_scores(X, y, c)
    np.testing.assert_array_equal(got, expected)
    assert got[3] == got[5]
    n = X.shape[0]
    np.testing.assert_array_equal(f_statistic(X, y, c), (n - c) / (c - 1) * expected)


def test_t_statistics_are_the_stated_computation():
    X, y, c = _class_problem(9, n=60, d=7, c=3)
    got = one_vs_rest_t(X, y, c)
    n = X.shape[0]
    for j in range(X.shape[1]):
        col = [float(v) for v in X[:, j]]
        counts = [float((y == k).sum()) for k in range(c)]
        means = [seq_sum(v for v, lab in zip(col, y, strict=True) if lab == k) / counts[k] for k in range(c)]
        ss = [seq_sum(sq(v - means[k]) for v, lab in zip(col, y, strict=True) if lab == k) for k in range(c)]
        for k in range(c):
            rest = [m for m in range(c) if m != k]
            n_k, n_r = counts[k], n - counts[k]
            mean_r = seq_sum(counts[m] * means[m] for m in rest) / n_r
            ss_r = seq_sum(ss[m] for m in rest) + seq_sum(counts[m] * sq(means[m] - mean_r) for m in rest)
            se2 = ss[k] / max(n_k - 1, 1) / n_k + ss_r / max(n_r - 1, 1) / n_r
            assert got[k, j] == (means[k] - mean_r) / math.sqrt(se2)


def test_mean_std_states_are_the_stated_computation():
    """chi2, infogain and mrmr discretize at mean +- std with sums in sample order: a value at the
    threshold in exact arithmetic falls on the same side on every machine."""
    from fsbench.selectors._discretize import discretize

    rng = np.random.default_rng(11)
    X = np.asfortranarray(wide_range(rng, (41, 6)))
    X[:, 4] = np.tile([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1], 4)[:41]  # sums that round
    codes, n_states = discretize(X, "mean_std", 1.0)
    n = X.shape[0]
    assert n_states == 3
    for j in range(X.shape[1]):
        col = [float(v) for v in X[:, j]]
        mean = seq_sum(col) / n
        z = [v - mean for v in col]
        std = math.sqrt(seq_sum(sq(v) for v in z) / (n - 1))
        z = [v / std for v in z] if std != 0 else [0.0] * n
        np.testing.assert_array_equal(codes[:, j], [int(v >= -1.0) + int(v > 1.0) for v in z])
