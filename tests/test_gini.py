"""gini: scikit-feature's Gini index, against its definition in fractions and against scikit-feature.

The definition (scikit-feature's ``gini_index``, read from its code): for each feature, start at
1/2 and take the minimum, over every distinct value v of the feature, of the impurity of the split
x <= v / x > v, each side's Gini impurity 1 - sum_k p_k^2 weighted by its size (an empty side
contributes 0). Lower is better; fsbench's score is minus the index, and ties rank by index.

fsbench rounds the exact rational once (``fsbench.selectors.gini.gini_index``); scikit-feature
rounds at each of its float steps: the test bounds the difference by the peer's rounding, and the peer's
values are captured from the ``argsort`` its ranking calls (the function returns only the order).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fsbench.selectors import make_selector

gini_module = pytest.importorskip("skfeature.function.statistical_based.gini_index")


def gini_exact(column, y) -> Fraction:
    """min(1/2, min_v weighted impurity of x <= v / x > v), in fractions, from the definition."""
    n = len(y)
    classes = sorted(set(y))
    best = Fraction(1, 2)
    for v in sorted(set(column)):
        total = Fraction(0)
        for side in ([k for x, k in zip(column, y, strict=True) if x <= v],
                     [k for x, k in zip(column, y, strict=True) if x > v]):
            if side:
                impurity = 1 - sum(Fraction(side.count(c), len(side)) ** 2 for c in classes)
                total += len(side) * impurity
        best = min(best, total / n)
    return best


def peer_values(X: np.ndarray, y: np.ndarray, monkeypatch) -> np.ndarray:
    """scikit-feature's Gini index values: the array its ranking passes to numpy's argsort."""
    captured = []

    class Capture:
        def __getattr__(self, name):
            return getattr(np, name)

        def argsort(self, values, *args, **kwargs):
            captured.append(np.array(values, dtype=float))
            return np.argsort(values, *args, **kwargs)

    monkeypatch.setattr(gini_module, "np", Capture())
    order = gini_module.gini_index(X, y, mode="index")
    monkeypatch.undo()
    assert len(captured) == 1 and order.tolist() == np.argsort(captured[0]).tolist()
    return captured[0]


def peer_error_bound(n_classes: int) -> float:
    """The peer's rounding: p = l_k / n_L and p^2 (3 roundings), the sum of C squares (C - 1),
    1 - sum (1), the weighting by n_L and the sum of both sides (2), the division by n (1), each
    a relative error of at most u = eps / 2 on a quantity at most 1 (times n before the
    division): at most (C + 6) u in all, plus fsbench's own half ulp."""
    return (n_classes + 7) * np.finfo(float).eps / 2


def random_problem(seed: int, n: int, d: int, c: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    y[:c] = np.arange(c)  # every class present
    X = rng.normal(size=(n, d))
    X[:, : d // 3] = np.round(X[:, : d // 3])  # ties
    X[:, d // 3: d // 2] += 1.5 * y[:, None]  # informative
    return X, y


@pytest.mark.parametrize(("seed", "n", "d", "c"), [(0, 12, 9, 2), (1, 25, 12, 3), (2, 30, 10, 4), (3, 17, 8, 5)])
def test_scores_are_minus_the_exact_index_correctly_rounded(seed, n, d, c):
    X, y = random_problem(seed, n, d, c)
    selector = make_selector("gini").fit(X, y)
    exact = [gini_exact(X[:, j].tolist(), y.tolist()) for j in range(d)]
    assert (-selector.scores_).tolist() == [float(g) for g in exact]
    by_exact = sorted(range(d), key=lambda j: (exact[j], j))
    assert selector.ranking_.tolist() == by_exact


def test_hand_worked():
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.array([[1, 5, 0, 1], [2, 4, 0, 2], [3, 6, 0, 1], [4, 1, 0, 2], [5, 2, 0, 1], [6, 3, 0, 2]], dtype=float)
    # feature 0 splits the classes perfectly (0); feature 1 too, at x <= 3 (0); feature 2 is
    # constant: the whole sample, 1/2; feature 3 (classes 2:1 | 1:2): 2 (1 - 4/9 - 1/9) / 2 = 4/9
    selector = make_selector("gini").fit(X, y)
    assert (-selector.scores_).tolist() == [0.0, 0.0, 0.5, 4 / 9]
    assert selector.ranking_.tolist() == [0, 1, 3, 2]


def test_the_start_at_one_half_caps_the_index():
    # four balanced classes: no single threshold goes below (4 - 2) / 4 = 1/2, so every feature,
    # even one that orders the classes perfectly, scores 1/2 and the ranking is the index order
    y = np.repeat(np.arange(4), 5)
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=20), y + 0.1 * rng.normal(size=20), rng.normal(size=20)])
    selector = make_selector("gini").fit(X, y)
    assert (-selector.scores_).tolist() == [0.5, 0.5, 0.5]
    assert selector.ranking_.tolist() == [0, 1, 2]
    # unbalanced: splitting off the largest class goes below 1/2 (15 | 14 + 7 + 14: 0.448)
    y = np.repeat(np.arange(4), [14, 7, 14, 15])
    X = np.column_stack([np.zeros(50), (y == 3).astype(float)])
    selector = make_selector("gini").fit(X, y)
    assert -selector.scores_[1] == float(Fraction(35, 50) * (1 - Fraction(14**2 + 7**2 + 14**2, 35**2)))
    assert selector.ranking_.tolist() == [1, 0]


@pytest.mark.parametrize(("seed", "n", "d", "c"), [(5, 40, 30, 2), (6, 60, 25, 3), (7, 33, 20, 4), (8, 21, 15, 2)])
def test_equal_to_scikit_feature_on_random_data(seed, n, d, c, monkeypatch):
    X, y = random_problem(seed, n, d, c)
    peer = peer_values(X, y, monkeypatch)
    ours = -make_selector("gini").fit(X, y).scores_
    assert np.abs(peer - ours).max() <= peer_error_bound(c)
    assert np.mean(peer == ours) > 0.2  # often bit-identical: the bound is not slack hiding a bug


def test_equal_to_scikit_feature_on_real_data(monkeypatch):
    from sklearn.datasets import load_breast_cancer, load_wine

    for loader in (load_wine, load_breast_cancer):
        X, y = loader(return_X_y=True)
        peer = peer_values(X, y, monkeypatch)
        selector = make_selector("gini").fit(X, y)
        ours = -selector.scores_
        assert np.abs(peer - ours).max() <= peer_error_bound(np.unique(y).size), loader.__name__
        # the peer's values follow fsbench's order, up to its rounding
        in_order = peer[selector.ranking_]
        assert np.all(np.diff(in_order) >= -peer_error_bound(np.unique(y).size))
        # the exact definition, on a few features
        for j in range(0, X.shape[1], 7):
            assert ours[j] == float(gini_exact(X[:, j].tolist(), y.tolist()))


def test_equal_to_scikit_feature_on_glioma(monkeypatch):
    from conftest import papers_data

    papers_data()
    from fsbench import load_dataset

    ds = load_dataset("glioma")
    X = np.asarray(ds.X, dtype=float)[:, :120]
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    y = np.unique(ds.y, return_inverse=True)[1]
    peer = peer_values(X, y, monkeypatch)
    ours = -make_selector("gini").fit(X, y).scores_
    assert np.abs(peer - ours).max() <= peer_error_bound(4)
    assert (ours < 0.5).any() and (ours == 0.5).any()  # GLIOMA's unbalanced classes: both cases


def test_duplicated_and_mirrored_features_tie_exactly_and_rank_by_index():
    X, y = random_problem(9, 30, 6, 2)
    X = np.column_stack([X, X[:, 4], -X[:, 4], 3 * X[:, 4] + 1])
    selector = make_selector("gini").fit(X, y)
    assert selector.scores_[4] == selector.scores_[6] == selector.scores_[7] == selector.scores_[8]
    position = np.argsort(selector.ranking_)
    assert position[4] < position[6] < position[7] < position[8]


def test_blocks_of_features_give_the_same_values(monkeypatch):
    import fsbench.selectors.gini as gini

    X, y = random_problem(10, 20, 13, 3)
    whole = gini.gini_index(X, y, 3)
    monkeypatch.setattr(gini, "_BLOCK", 40)  # two features per block
    assert gini.gini_index(X, y, 3).tolist() == whole.tolist()


def test_edge_cases_give_a_permutation():
    rng = np.random.default_rng(11)
    cases = [
        (rng.normal(size=(6, 40)), np.array([0, 0, 0, 1, 1, 1])),  # d > n
        (rng.normal(size=(9, 5)), np.array([0, 1, 1, 2, 2, 2, 2, 2, 0])),  # classes of 2
        (np.zeros((8, 3)), np.array([0, 1] * 4)),  # constant features: the whole sample, 1/2
    ]
    for X, y in cases:
        selector = make_selector("gini").fit(X, y)
        assert sorted(selector.ranking_.tolist()) == list(range(X.shape[1]))
        assert np.all(np.isfinite(selector.scores_))
        again = make_selector("gini").fit(X.copy(), y.copy())
        assert again.ranking_.tolist() == selector.ranking_.tolist()
    assert make_selector("gini").fit(*cases[2]).scores_.tolist() == [-0.5] * 3
