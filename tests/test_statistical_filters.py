"""The rank and variance filters (kruskal, auc, variance) against independent computations.

References: scipy.stats.kruskal, sklearn.metrics.roc_auc_score, numpy's var and scikit-learn's
VarianceThreshold, and the definitions written out here in exact rational arithmetic
(fractions.Fraction, ranks counted pair by pair); none reuses fsbench code.
"""

from __future__ import annotations

import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats
from sklearn.feature_selection import VarianceThreshold
from sklearn.metrics import roc_auc_score

import fsbench.selectors.kruskal as kruskal_module
from fsbench.evaluation.protocol import standardize
from fsbench.selectors import make_selector

EPS = np.finfo(float).eps


def fit(name, X, y, k=1):
    return make_selector(name, {"n_features_to_select": k}).fit(X, y)


def tied_problem(n=41, d=60, c=3, levels=4, seed=0):
    """Integer features with many ties, unbalanced classes, a constant feature, duplicates."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % c)
    y[:3] = 0                                         # unbalanced
    X = rng.integers(0, levels, size=(n, d)).astype(float)
    X[:, :4] += (y[:, None] == np.arange(4) % c) * rng.integers(1, 3, size=4)  # some informative
    X[:, 5] = 2.5                                     # constant
    X[:, 7] = X[:, 3]                                 # duplicate
    X[:, 9] = -X[:, 3]                                # mirror image
    return X, y


# ----------------------------------------------------------------------------- exact references
def midranks(col):
    """Mid-rank of each value, counted: 1 + #smaller + (#equal - 1) / 2, as a Fraction."""
    col = [float(v) for v in col]
    return [1 + sum(w < v for w in col) + Fraction(sum(w == v for w in col) - 1, 2) for v in col]


def exact_h(col, y):
    """Kruskal & Wallis (1952), H with the tie correction, in rationals; None when 0 / 0."""
    n = len(col)
    r = midranks(col)
    ssbn = Fraction(0)
    for k in sorted(set(y)):
        rk = [r[i] for i in range(n) if y[i] == k]
        ssbn += sum(rk) ** 2 / Fraction(len(rk))
    h = Fraction(12, n * (n + 1)) * ssbn - 3 * (n + 1)
    ties = sum(t**3 - t for t in (list(col).count(v) for v in set(col)))
    correction = 1 - Fraction(ties, n**3 - n)
    return None if correction == 0 else h / correction


def exact_auc(col, positive):
    """P(x > x') + P(x = x') / 2 over every (positive, negative) pair, in rationals."""
    pos = [float(v) for v, p in zip(col, positive, strict=True) if p]
    neg = [float(v) for v, p in zip(col, positive, strict=True) if not p]
    wins = sum(int(a > b) + Fraction(int(a == b), 2) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def exact_auc_score(col, y):
    classes = sorted(set(y))
    folded = [max(a, 1 - a) for a in (exact_auc(col, [v == k for v in y]) for k in classes)]
    return sum(folded) / len(classes)


def check_exact(scores, exact, max_error):
    """Every score within ``max_error`` eps of its exact value; exactly equal values bit-identical
    and correctly rounded."""
    for s, e in zip(scores, exact, strict=True):
        assert abs(s - float(e)) <= max_error * EPS * float(e) + 1e-300, (s, e)
    groups: dict[Fraction, list[float]] = {}
    for s, e in zip(scores, exact, strict=True):
        groups.setdefault(e, []).append(s)
    tied = {e: v for e, v in groups.items() if len(v) > 1}
    assert tied, "the problem has no exact ties: the test would not test them"
    for e, values in tied.items():
        assert set(values) == {float(e)}, (e, values)


# ----------------------------------------------------------------------------- kruskal
@pytest.mark.parametrize(("c", "levels", "seed"), [(2, 3, 0), (3, 4, 1), (5, 3, 2), (3, 50, 3)])
def test_kruskal_equals_scipy_per_feature(c, levels, seed):
    X, y = tied_problem(c=c, levels=levels, seed=seed)
    sel = fit("kruskal", X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = stats.kruskal(*[X[y == k] for k in range(c)], axis=0).statistic
    varying = np.ptp(X, axis=0) > 0
    # scipy subtracts 3 (n + 1) from a sum of squares: its rounding is about eps * 3 (n + 1) * 10
    np.testing.assert_allclose(sel.scores_[varying], ref[varying], rtol=1e-12, atol=1e-12 * 3 * (X.shape[0] + 1))
    # a constant feature: scipy's 0 / 0 (NaN, or +-inf when rounding leaves the numerator nonzero); fsbench 0
    assert not np.isfinite(ref[5]) and sel.scores_[5] == 0.0
    assert sel.ranking_[-1] == 5 or sel.scores_[sel.ranking_[-1]] == 0.0


def test_kruskal_is_the_exact_statistic_and_exact_ties_are_bit_identical():
    X, y = tied_problem(n=30, d=40, c=3, levels=3, seed=4)
    X[:, 11] = X[:, 2]
    sel = fit("kruskal", X, y)
    exact = [exact_h(list(X[:, j]), list(y)) for j in range(X.shape[1])]
    assert exact[5] is None and sel.scores_[5] == 0.0
    keep = [j for j in range(X.shape[1]) if exact[j] is not None]
    # c + 4 roundings of at most eps / 2: within (c + 4) / 2 eps
    check_exact(sel.scores_[keep], [exact[j] for j in keep], max_error=3.5)
    assert sel.scores_[3] == sel.scores_[7] == sel.scores_[9]            # duplicate, mirror image
    assert np.array_equal(sel.tie_terms_, [sum(t**3 - t for t in np.unique(X[:, j], return_counts=True)[1])
                                           for j in range(X.shape[1])])


def test_kruskal_ties_rank_by_index_and_relabelled_classes_tie_exactly():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1, 2], 8)
    X = rng.normal(size=(24, 6))
    X[:, 4] = np.where(y == 0, 3.0, 0.0) + rng.normal(size=24) * 0.1   # the best feature
    X[:, 1] = X[:, 4] * 2 + 7                                          # same ranks: same H
    # the values of classes 0 and 1 (equal sizes) swapped: other rank sums, the same H
    X[:, 2] = X[:, 4][np.concatenate([np.arange(8, 16), np.arange(8), np.arange(16, 24)])]
    sel = fit("kruskal", X, y, k=3)
    assert sel.scores_[1] == sel.scores_[2] == sel.scores_[4]
    assert list(sel.ranking_[:3]) == [1, 2, 4]


def test_kruskal_ranks_vectorized_in_blocks(monkeypatch):
    X, y = tied_problem(d=50)
    whole = fit("kruskal", X, y).scores_
    monkeypatch.setattr(kruskal_module, "_BLOCK_ELEMENTS", 3 * X.shape[0])     # blocks of 3 features
    assert np.array_equal(fit("kruskal", X, y).scores_, whole)


# ----------------------------------------------------------------------------- auc
@pytest.mark.parametrize(("c", "levels", "seed"), [(2, 3, 0), (3, 4, 1), (4, 2, 2), (3, 1000, 3)])
def test_auc_equals_roc_auc_score_per_feature_and_class(c, levels, seed):
    X, y = tied_problem(c=c, levels=levels, seed=seed)
    sel = fit("auc", X, y)
    ref = np.array([[roc_auc_score(y == k, X[:, j]) for j in range(X.shape[1])] for k in range(c)])
    np.testing.assert_allclose(sel.auc_, ref, rtol=0, atol=4 * EPS)
    np.testing.assert_allclose(sel.scores_, np.maximum(ref, 1 - ref).mean(axis=0), rtol=0, atol=8 * EPS)
    assert sel.scores_[5] == 0.5


def test_auc_two_classes_is_one_area_correctly_rounded():
    X, y = tied_problem(n=25, d=40, c=2, levels=3, seed=6)
    sel = fit("auc", X, y)
    for j in range(X.shape[1]):
        a = exact_auc(list(X[:, j]), list(y == 1))
        assert sel.scores_[j] == float(max(a, 1 - a)), j                 # one division of integers


def test_auc_is_the_exact_mean_and_exact_ties_are_bit_identical():
    """Balanced classes: the one-vs-rest terms of two features can be the same numbers in another
    class order, whose float sums differ in the last bit."""
    rng = np.random.default_rng(7)
    y = np.arange(28) % 4
    X = rng.integers(0, 3, size=(28, 60)).astype(float)
    X[:, 7], X[:, 9] = X[:, 3], -X[:, 3]
    sel = fit("auc", X, y)
    exact = [exact_auc_score(list(X[:, j]), list(y)) for j in range(X.shape[1])]
    check_exact(sel.scores_, exact, max_error=3.0)                     # c + 1 roundings of eps / 2
    assert sel.scores_[3] == sel.scores_[7] == sel.scores_[9]


def test_auc_ties_rank_by_index():
    rng = np.random.default_rng(8)
    y = np.repeat([0, 1], 10)
    X = rng.normal(size=(20, 5))
    X[:, 3] = y + 0.0                  # perfect separation
    X[:, 1] = -5 * y                   # perfect, reversed: the same score 1
    sel = fit("auc", X, y, k=2)
    assert sel.scores_[1] == sel.scores_[3] == 1.0
    assert list(sel.ranking_[:2]) == [1, 3]


# ----------------------------------------------------------------------------- both rank filters
@pytest.mark.parametrize("name", ["kruskal", "auc"])
def test_rank_filters_do_not_depend_on_the_sample_order(name):
    X, y = tied_problem(d=80, levels=6, seed=9)
    perm = np.random.default_rng(0).permutation(X.shape[0])
    a, b = fit(name, X, y), fit(name, X[perm], y[perm])
    assert np.array_equal(a.scores_, b.scores_) and np.array_equal(a.ranking_, b.ranking_)


@pytest.mark.parametrize("name", ["kruskal", "auc", "variance"])
@pytest.mark.parametrize(("n", "d", "c"), [(6, 40, 2), (7, 3, 3), (12, 200, 4)])
def test_edge_shapes_give_a_full_permutation(name, n, d, c):
    """More features than samples, two classes, a class of two samples, constant features."""
    rng = np.random.default_rng(n + d)
    y = np.concatenate([[0, 0], np.arange(n - 2) % (c - 1) + 1])
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    X[:, 0] = 1.0
    sel = fit(name, X, y, k=min(d, 5))
    assert sorted(sel.ranking_) == list(range(d))
    assert np.all(np.isfinite(sel.scores_))
    assert np.array_equal(fit(name, X, y, k=min(d, 5)).ranking_, sel.ranking_)   # deterministic


def test_rank_filters_keep_memory_bounded():
    """Ranks are computed in blocks of features: 20,000 samples x 200 features stay far below a
    second copy of the 32 MB data per array."""
    rng = np.random.default_rng(10)
    X = rng.normal(size=(20_000, 200))
    y = np.arange(20_000) % 3
    tracemalloc.start()
    try:
        fit("kruskal", X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * X.nbytes, peak


# ----------------------------------------------------------------------------- variance
def loop_variance(col):
    """The stated order, as a Python loop over floats: sorted values summed one by one."""
    v = sorted(float(x) for x in col)
    s = 0.0
    for x in v:
        s += x
    m = s / len(v)
    q = 0.0
    for x in v:
        q += (x - m) * (x - m)
    return 0.0 if v[0] == v[-1] else q / len(v)


def test_variance_equals_numpy_and_scikit_learn_and_the_stated_order():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(37, 30)) * rng.uniform(0.01, 100, size=30) + rng.uniform(-50, 50, size=30)
    X[:, 4] = 0.1                                    # ten times 0.1 is not 1.0: numpy's var is not 0
    sel = fit("variance", X, np.arange(37) % 2)
    varying = np.arange(30) != 4
    np.testing.assert_allclose(sel.scores_[varying], np.var(X, axis=0)[varying], rtol=1e-12, atol=0)
    assert 0 < np.var(X[:, 4]) < 1e-30
    # scikit-learn's VarianceThreshold: with threshold 0 its variances_ are min(variance, range)
    # (its guard for constant features), so the variances themselves need a threshold above 0
    peer = VarianceThreshold(threshold=1e-300).fit(X).variances_
    np.testing.assert_allclose(sel.scores_[varying], peer[varying], rtol=1e-12, atol=0)
    assert VarianceThreshold().fit(X).variances_[4] == 0.0
    assert [float(s) for s in sel.scores_] == [loop_variance(X[:, j]) for j in range(X.shape[1])]
    assert sel.scores_[4] == 0.0 and sel.ranking_[-1] == 4


def test_variance_ignores_the_labels_and_ties_permuted_features_exactly():
    rng = np.random.default_rng(12)
    X = rng.integers(0, 5, size=(40, 20)) * 0.1
    X[:, 6] = rng.permutation(X[:, 2])               # same values, another sample order
    X[:, 15] = X[:, 2]
    y = np.arange(40) % 3
    a = fit("variance", X, y)
    b = fit("variance", X, rng.permutation(y))
    assert np.array_equal(a.scores_, b.scores_) and np.array_equal(a.ranking_, b.ranking_)
    assert a.scores_[2] == a.scores_[6] == a.scores_[15]
    where = [list(a.ranking_).index(j) for j in (2, 6, 15)]
    assert where == sorted(where) and where[2] - where[0] == 2  # adjacent, by index
    # binary features with equal counts in other places: p (1 - p) exactly tied
    Z = np.zeros((40, 8))
    for j in range(8):
        Z[rng.choice(40, 13, replace=False), j] = 1.0
    assert len(set(fit("variance", Z, y).scores_)) == 1


def test_variance_under_the_protocol_is_one_up_to_rounding():
    """What the docstring says the baseline measures: on data z-scored on the samples it is fitted
    on, every non-constant feature's variance is 1 to within a few ulp; z-scored on all data and
    fitted on a training part, it is not."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(60, 300)) * rng.uniform(0.1, 10, size=300)
    X[:, 7] = 3.0
    train, test = np.arange(40), np.arange(40, 60)
    X_train, _ = standardize(X, train, test, "train")
    v = fit("variance", X_train, np.arange(40) % 2).scores_
    varying = np.arange(300) != 7
    assert np.all(np.abs(v[varying] - 1) <= 40 * EPS) and v[7] == 0.0
    assert len(set(v[varying])) > 1                   # the ranking is set by rounding
    X_global, _ = standardize(X, train, test, "global")
    g = fit("variance", X_global, np.arange(40) % 2).scores_
    assert np.abs(g[varying] - 1).max() > 0.1
