"""The trace ratio criterion (Nie et al., AAAI 2008) against brute force and scikit-feature.

The references are written here: the per-feature traces from the paper's n x n graph matrices
(x^T L x), the trace ratio of every k-subset by brute force, the optimality certificate of a
ratio (the largest k-sum of a - lambda b is 0 exactly at the optimum), the Fisher score from
class means; and scikit-feature 1.2.1's ``trace_ratio`` (style "fisher"), whose stated
differences (see ``fsbench.selectors.trace_ratio.TraceRatio``) are shown exactly.
"""

from __future__ import annotations

import itertools
import tracemalloc

import numpy as np
import pytest

from fsbench.selectors import make_selector

skfeature_trace_ratio = pytest.importorskip("skfeature.function.similarity_based.trace_ratio").trace_ratio


def fit(X, y, k):
    return make_selector("trace_ratio", {"n_features_to_select": k}).fit(X, y)


def graph_traces(X, y):
    """a_j = x_j^T L_b x_j and b_j = x_j^T L_w x_j with the paper's supervised graphs, as n x n
    matrices: W_w(i, l) = 1 / n_k for i, l in class k, L_w = I - W_w, L_b = W_w - 1 1^T / n."""
    n = X.shape[0]
    same = y[:, None] == y[None, :]
    W = same / np.bincount(y)[y][None, :]
    L_w = np.eye(n) - W
    L_b = W - np.ones((n, n)) / n
    return np.einsum("ij,ik,kj->j", X, L_b, X), np.einsum("ij,ik,kj->j", X, L_w, X)


def fisher_score(X, y):
    """sum_k n_k (mu_k - mu)^2 / sum_k n_k var_k, from class means."""
    mu = X.mean(axis=0)
    classes = np.unique(y)
    between = sum((y == k).sum() * (X[y == k].mean(axis=0) - mu) ** 2 for k in classes)
    within = sum((y == k).sum() * X[y == k].var(axis=0) for k in classes)
    return between / within


def brute_force(a, b, k):
    """Every k-subset's trace ratio: the best subset and its ratio, and the runner-up's ratio."""
    ratios = sorted(((a[list(S)].sum() / b[list(S)].sum(), S) for S in itertools.combinations(range(a.size), k)),
                    reverse=True)
    return set(ratios[0][1]), ratios[0][0], ratios[1][0]


def scaled_problem(n, d, c, seed):
    """Features of very different scales (not z-scored), some shifted in one class: the Fisher
    top k is often not the subset of largest trace ratio."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % c)
    scale = np.exp(rng.uniform(-2, 2, size=d))
    shift = (y[:, None] == rng.integers(0, c, size=d)) * rng.uniform(0, 3, size=d)
    return (rng.normal(size=(n, d)) + shift) * scale, y


def zscored(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


# ----------------------------------------------------------------------------- the criterion
def test_traces_are_the_graph_traces():
    X, y = scaled_problem(30, 12, 3, 0)
    a, b = graph_traces(X, y)
    sel = fit(X, y, 3)
    np.testing.assert_allclose(sel.between_, a, rtol=1e-10)
    np.testing.assert_allclose(sel.within_, b, rtol=1e-10)


def test_the_subset_is_the_brute_force_optimum_and_lambda_increases():
    differs = iterations = 0
    for seed in range(25):
        X, y = scaled_problem(24, 9, 3, seed)
        a, b = graph_traces(X, y)
        k = 2 + seed % 4
        best, ratio, second = brute_force(a, b, k)
        assert ratio - second > 1e-9 * ratio            # a unique optimum: the test can tell
        sel = fit(X, y, k)
        assert set(sel.ranking_[:k]) == best, seed
        assert sel.trace_ratio_ == pytest.approx(ratio, rel=1e-12)
        lam = sel.objective_
        assert np.all(np.diff(lam) > 0), lam            # monotonically increasing
        fisher_top = np.argsort(-(a / b), kind="stable")[:k]
        assert lam[0] == pytest.approx(a[fisher_top].sum() / b[fisher_top].sum(), rel=1e-12)
        assert sel.n_iter_ == lam.size                  # the last selection did not increase lambda
        differs += set(fisher_top) != best
        iterations += lam.size > 1
    assert differs >= 5 and iterations >= 5            # the iteration did change the subset


@pytest.mark.parametrize(("d", "k", "seed"), [(300, 20, 1), (500, 100, 2), (60, 59, 3)])
def test_the_ratio_passes_the_optimality_certificate(d, k, seed):
    """At the largest ratio lambda*, max over k-subsets of sum (a - lambda* b) is 0; for any
    smaller lambda it is positive. The maximum is the sum of the k largest values."""
    X, y = scaled_problem(40, d, 4, seed)
    a, b = graph_traces(X, y)
    sel = fit(X, y, k)
    lam = sel.trace_ratio_
    top = np.sort(a - lam * b)[::-1][:k].sum()
    assert abs(top) <= 1e-10 * (a.sum() + lam * b.sum())
    S = sel.ranking_[:k]
    assert a[S].sum() / b[S].sum() == pytest.approx(lam, rel=1e-12)
    assert np.sort(a - lam * 0.999 * b)[::-1][:k].sum() > 0
    # the ranking is the final score a - lambda* b, decreasing
    assert np.all(np.diff((a - lam * b)[sel.ranking_]) <= 1e-9 * np.abs(a - lam * b).max())


def test_z_scored_data_rank_as_the_fisher_score():
    """a + b = n on data z-scored on the fitted samples: the optimal subset is the Fisher top k
    and the whole ranking is the Fisher order."""
    X, y = scaled_problem(50, 400, 4, 4)
    X = zscored(X)
    sel = fit(X, y, 50)
    np.testing.assert_allclose(sel.between_ + sel.within_, X.shape[0], rtol=1e-12)
    assert list(sel.ranking_) == list(np.argsort(-fisher_score(X, y), kind="stable"))


# ----------------------------------------------------------------------------- scikit-feature
@pytest.mark.parametrize(("k", "seed"), [(10, 5), (40, 6), (150, 7)])
def test_equals_scikit_feature_on_z_scored_data(k, seed):
    X, y = scaled_problem(45, 150, 3, seed)
    X = zscored(X)
    peer = skfeature_trace_ratio(X, y, k, mode="index")
    sel = fit(X, y, k)
    assert len(peer) == k
    assert list(sel.ranking_[:k]) == list(peer)         # k = d: the whole ranking


def test_scikit_feature_keeps_the_fisher_top_k():
    """Unscaled data: scikit-feature's subset is the k features of largest a / b, ordered by
    a - lambda b with lambda their ratio; fsbench's subset has the larger ratio."""
    larger = 0
    for seed in range(10):
        X, y = scaled_problem(30, 40, 3, 10 + seed)
        a, b = graph_traces(X, y)
        k = 6
        fisher_top = np.argsort(-(a / b), kind="stable")[:k]
        lam_f = a[fisher_top].sum() / b[fisher_top].sum()
        peer = skfeature_trace_ratio(X, y, k, mode="index")
        assert set(peer) == set(fisher_top)
        assert list(peer) == list(fisher_top[np.argsort(-(a - lam_f * b)[fisher_top], kind="stable")])
        sel = fit(X, y, k)
        S = sel.ranking_[:k]
        ours = a[S].sum() / b[S].sum()
        assert ours >= lam_f * (1 - 1e-12)
        if set(S) == set(peer):
            assert list(S) == list(peer)
        else:
            assert ours > lam_f * (1 + 1e-9)
            larger += 1
    assert larger >= 3


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_scikit_feature_always_selects_constant_features():
    X, y = scaled_problem(30, 20, 3, 20)
    X = zscored(X)
    X[:, 4] = 0.0
    peer = skfeature_trace_ratio(X, y, 5, mode="index")
    sel = fit(X, y, 5)
    assert 4 in peer                                    # its a = 1e-14 over b = 0: ratio inf
    assert sel.ranking_[-1] == 4 and np.isnan(sel.scores_[4])
    keep = np.arange(20) != 4
    assert list(np.flatnonzero(keep)[skfeature_trace_ratio(X[:, keep], y, 4, mode="index")]) == list(sel.ranking_[:4])


# ----------------------------------------------------------------------------- edge cases
def test_ties_identical_features_and_degenerate_inputs():
    X, y = scaled_problem(20, 8, 2, 30)                 # two classes
    X[:, 6] = X[:, 2]
    X[:, 0] = 1.5                                       # constant
    sel = fit(X, y, 8)
    assert sel.scores_[2] == sel.scores_[6]
    r = list(sel.ranking_)
    assert r.index(2) + 1 == r.index(6) and r[-1] == 0
    assert sorted(r) == list(range(8))
    assert np.array_equal(fit(X, y, 8).ranking_, sel.ranking_)


def test_more_features_than_samples_and_k_beyond_the_candidates():
    X, y = scaled_problem(7, 60, 3, 31)
    X[:, 10:55] = 0.0                                   # 45 constant features: 15 candidates
    sel = fit(X, y, 30)
    assert sorted(sel.ranking_) == list(range(60))
    assert set(sel.ranking_[:15]) == set(range(10)) | set(range(55, 60))
    a, b = graph_traces(X, y)
    cand = sel.ranking_[:15]
    assert sel.trace_ratio_ == pytest.approx(a[cand].sum() / b[cand].sum(), rel=1e-12)


def test_features_constant_within_every_class_give_an_infinite_ratio():
    rng = np.random.default_rng(32)
    y = np.repeat([0, 1, 2], 5)
    X = rng.normal(size=(15, 10))
    X[:, 3] = np.array([0.0, 1.0, 2.0])[y]              # b = 0 < a: a / 0
    X[:, 7] = np.array([0.0, 0.0, 5.0])[y]
    X[:, 8] = np.array([1.0, 0.0, 0.0])[y]
    a, b = graph_traces(X, y)
    sel = fit(X, y, 2)
    assert sel.trace_ratio_ == np.inf
    assert list(sel.ranking_[:3]) == list(np.array([3, 7, 8])[np.argsort(-a[[3, 7, 8]])])
    sel = fit(X, y, 4)                                  # only three: a finite optimum containing them
    best, ratio, _ = brute_force(a, np.maximum(b, 0), 4)
    assert set(sel.ranking_[:4]) == best and sel.trace_ratio_ == pytest.approx(ratio, rel=1e-9)


def test_no_sample_by_sample_matrix():
    """The graphs' traces are sums over classes: 20,000 samples use memory of the data's order."""
    rng = np.random.default_rng(33)
    X = rng.normal(size=(20_000, 20))
    y = np.arange(20_000) % 4
    tracemalloc.start()
    try:
        fit(X, y, 5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * X.nbytes, peak                    # an n x n matrix would be 3.2 GB
