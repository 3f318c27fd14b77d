"""Fisher score, F-statistic and the random control against hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from fsbench.selectors import make_selector, rank_by_scores, registry

# Two classes of sizes 2 and 3. Feature 0: class A {1, 3}, class B {5, 6, 7}.
# means: A 2, B 6, overall 22/5 = 4.4
# between = 2 (2 - 4.4)^2 + 3 (6 - 4.4)^2 = 11.52 + 7.68 = 19.2
# within  = (1 + 1) + (1 + 0 + 1) = 4  -> Fisher 4.8, F = (5 - 2)/(2 - 1) * 4.8 = 14.4
# Feature 1: A {0, 0}, B {0, 0, 1}: means 0, 1/3, overall 0.2
# between = 2 * 0.04 + 3 * (2/15)^2 = 0.08 + 0.05333.. = 0.13333..; within = 2/3 -> Fisher 0.2
# Feature 2: constant -> 0.
X_HAND = np.array([[1, 0, 7], [3, 0, 7], [5, 0, 7], [6, 0, 7], [7, 1, 7]], dtype=float)
Y_HAND = np.array([0, 0, 1, 1, 1])


def test_fisher_hand_worked():
    scores = make_selector("fisher").fit(X_HAND, Y_HAND).scores_
    np.testing.assert_allclose(scores, [4.8, 0.2, 0.0], rtol=1e-12)


def test_fstat_hand_worked_and_matches_scipy_anova():
    scores = make_selector("fstat").fit(X_HAND, Y_HAND).scores_
    np.testing.assert_allclose(scores[:2], [14.4, 0.6], rtol=1e-12)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    y = rng.integers(0, 4, size=40)
    X[:, 0] += y  # one informative feature
    expected = [stats.f_oneway(*(X[y == c, j] for c in range(4))).statistic for j in range(6)]
    np.testing.assert_allclose(make_selector("fstat").fit(X, y).scores_, expected, rtol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_fisher_and_fstat_order_features_identically(seed):
    rng = np.random.default_rng(seed)
    n, c = 30 + seed, 2 + seed % 3
    X = rng.normal(size=(n, 50)) * rng.uniform(0.1, 10, size=50)
    y = np.arange(n) % c
    X[:, :5] += y[:, None] * rng.uniform(0, 1, size=5)
    fisher = make_selector("fisher").fit(X, y)
    fstat = make_selector("fstat").fit(X, y)
    np.testing.assert_allclose(fstat.scores_, (n - c) / (c - 1) * fisher.scores_, rtol=1e-12)
    np.testing.assert_array_equal(fisher.ranking_, fstat.ranking_)


def test_ranking_ties_keep_index_order_and_nan_last():
    np.testing.assert_array_equal(rank_by_scores(np.array([1.0, np.nan, 3.0, 1.0, np.inf])), [4, 2, 0, 3, 1])


def test_random_control_is_a_seeded_permutation():
    X = np.zeros((6, 20))
    X[:, 0] = [0, 0, 0, 1, 1, 1]
    y = np.array([0, 0, 0, 1, 1, 1])
    a = make_selector("random", {"random_state": 7}).fit(X, y)
    b = make_selector("random", {"random_state": 7}).fit(X, y)
    c = make_selector("random", {"random_state": 8}).fit(X, y)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    assert not np.array_equal(a.ranking_, c.ranking_)
    np.testing.assert_array_equal(np.sort(a.ranking_), np.arange(20))
    np.testing.assert_array_equal(rank_by_scores(a.scores_), a.ranking_)


def test_selector_works_in_a_sklearn_pipeline():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 30))
    y = (X[:, 3] + X[:, 7] > 0).astype(int)
    pipe = make_pipeline(make_selector("fisher", {"n_features_to_select": 2}), LinearSVC())
    pipe.fit(X, y)
    assert set(np.flatnonzero(pipe[0].get_support())) == {3, 7}
    assert pipe.score(X, y) > 0.9


def test_input_validation_at_the_edge():
    with pytest.raises(ValueError, match="NaN|infinity"):
        make_selector("fisher").fit(np.array([[np.nan], [1.0]]), [0, 1])
    with pytest.raises(ValueError, match="class"):
        make_selector("fisher").fit(np.ones((3, 2)), [1, 1, 1])


def test_every_registered_selector_has_a_description():
    for info in registry().values():
        assert info.summary and "n_features_to_select" in info.params
