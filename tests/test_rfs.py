"""RFS (Nie et al. 2010) against independent computations.

Oracles: a literal loop implementation of the paper's Algorithm 1 written here (dense
A = [X, gamma I], explicit D^-1, numpy inverse), cvxpy's optimum of the convex eq. 10, the
paper's Theorem 1 (monotone objective) as a property, and planted problems.
"""

from __future__ import annotations

import numpy as np
import pytest

from fsbench.selectors import make_selector
from fsbench.selectors.rfs import RFS


def onehot(y: np.ndarray, c: int, pm1: bool = False) -> np.ndarray:
    Y = -np.ones((y.size, c)) if pm1 else np.zeros((y.size, c))
    Y[np.arange(y.size), y] = 1.0
    return Y


def J(X, Y, W, gamma):
    return np.linalg.norm(X @ W - Y, axis=1).sum() + gamma * np.linalg.norm(W, axis=1).sum()


def algorithm1_literal(X, Y, gamma, n_iter):
    """The paper's Algorithm 1 verbatim: U = D^-1 A^T (A D^-1 A^T)^-1 Y, D_ii = 1 / (2 ||u^i||)."""
    n, d = X.shape
    A = np.hstack([X, gamma * np.eye(n)])
    D_inv = np.eye(n + d)
    for _ in range(n_iter):
        U = D_inv @ A.T @ np.linalg.inv(A @ D_inv @ A.T) @ Y
        D_inv = np.diag(2.0 * np.linalg.norm(U, axis=1))  # footnote 1: keep D^-1, not D
    return U[:d]


def problem(n, d, c, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    X = scale * rng.standard_normal((n, d))
    y = np.arange(n) % c
    rng.shuffle(y)
    return X, y


@pytest.mark.parametrize("shape", [(10, 25), (30, 8)])
@pytest.mark.parametrize("form", ["samples", "features"])
@pytest.mark.parametrize("coding", ["onehot", "pm1"])
def test_iterates_equal_literal_algorithm1(shape, form, coding):
    X, y = problem(*shape, c=3, seed=1)
    sel = RFS(gamma=0.7, tol=0.0, max_iter=6, form=form, label_coding=coding).fit(X, y)
    W_ref = algorithm1_literal(X, onehot(y, 3, coding == "pm1"), 0.7, 6)
    assert sel.n_iter_ == 6
    np.testing.assert_allclose(sel.coef_, W_ref, rtol=1e-7, atol=1e-9 * np.abs(W_ref).max())


@pytest.mark.parametrize("seed", range(3))
def test_d_by_d_form_equals_n_by_n_form(seed):
    # More samples than features: the two systems must give the same iterates and objectives.
    X, y = problem(80, 12, 4, seed)
    a = RFS(gamma=0.3, tol=0.0, max_iter=25, form="samples").fit(X, y)
    b = RFS(gamma=0.3, tol=0.0, max_iter=25, form="features").fit(X, y)
    assert a.n_iter_ == b.n_iter_ == 25
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-10)


@pytest.mark.parametrize("shape", [(15, 40), (40, 10), (20, 20)])
@pytest.mark.parametrize("gamma", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("seed", range(2))
def test_objective_never_increases(shape, gamma, seed):
    X, y = problem(*shape, c=3, seed=seed, scale=[0.1, 1.0, 10.0][seed % 3])
    sel = RFS(gamma=gamma, tol=0.0, max_iter=60, label_coding=["onehot", "pm1"][seed]).fit(X, y)
    obj = sel.objective_
    assert obj.shape == (sel.n_iter_,) and sel.n_iter_ > 10
    assert np.all(np.diff(obj) <= 1e-10 * obj[:-1])
    # the recorded value is the objective of the returned W, computed independently here
    Y = onehot(y, 3, pm1=seed == 1)
    assert obj[-1] == pytest.approx(J(X, Y, sel.coef_, gamma), rel=1e-9)


@pytest.mark.parametrize("n,d,c,gamma,seed",
                         [(12, 6, 3, 0.5, 0), (8, 20, 3, 1.0, 1), (15, 15, 4, 0.2, 2)])
def test_reaches_cvxpy_optimum(n, d, c, gamma, seed):
    cp = pytest.importorskip("cvxpy")
    X, y = problem(n, d, c, seed)
    Y = onehot(y, c)
    W = cp.Variable((d, c))
    obj = cp.sum(cp.norm(X @ W - Y, 2, axis=1)) + gamma * cp.sum(cp.norm(W, 2, axis=1))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    sel = RFS(gamma=gamma, tol=1e-12, max_iter=5000).fit(X, y)
    ours = J(X, Y, sel.coef_, gamma)
    assert abs(ours - prob.value) <= 1e-4 * prob.value
    assert sel.n_iter_ < 5000


def test_stopping_rule():
    X, y = problem(20, 30, 3, 0)
    sel = RFS(gamma=1.0, tol=1e-4).fit(X, y)
    obj = sel.objective_
    assert obj[-2] - obj[-1] <= 1e-4 * obj[-2]
    assert np.all(obj[:-2] - obj[1:-1] > 1e-4 * obj[:-2])


def test_zero_feature_keeps_zero_row():
    X, y = problem(20, 30, 3, 4)
    X[:, 7] = 0.0
    sel = RFS(gamma=1.0, max_iter=50).fit(X, y)
    assert np.all(sel.coef_[7] == 0.0)
    assert sel.scores_[7] == 0.0
    assert sel.ranking_[-1] == 7
    assert np.all(np.isfinite(sel.coef_))


@pytest.mark.parametrize("n,d", [(40, 300), (200, 30)])
def test_planted_features_rank_first(n, d):
    rng = np.random.default_rng(7)
    y = np.arange(n) % 4
    X = rng.standard_normal((n, d))
    informative = [3, 11, 17, 25, 29]
    # each informative feature separates the four class means (a different order per feature)
    centers = np.stack([np.roll([-3.0, -1.0, 1.0, 3.0], j) for j in range(5)], axis=1)
    X[:, informative] += centers[y]
    X = (X - X.mean(0)) / X.std(0)
    sel = RFS(gamma=1.0).fit(X, y)
    assert set(sel.ranking_[:5]) == set(informative)


def test_intercept_row_is_not_scored():
    X, y = problem(25, 10, 3, 5)
    X = X + 3.0  # an uncentred problem needs the bias
    sel = RFS(gamma=0.5, fit_intercept=True, tol=0.0, max_iter=8).fit(X, y)
    Xa = np.hstack([X, np.ones((25, 1))])
    W_ref = algorithm1_literal(Xa, onehot(y, 3), 0.5, 8)
    np.testing.assert_allclose(sel.coef_, W_ref[:-1], rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(sel.intercept_, W_ref[-1], rtol=1e-7)
    assert sel.scores_.shape == (10,)


def test_registered_and_validates():
    sel = make_selector("rfs", {"gamma": 2.0, "n_features_to_select": 3})
    X, y = problem(15, 12, 3, 6)
    assert sel.fit(X, y).transform(X).shape == (15, 3)
    with pytest.raises(ValueError, match="gamma"):
        RFS(gamma=0.0).fit(X, y)
    with pytest.raises(ValueError, match="label_coding"):
        RFS(label_coding="ordinal").fit(X, y)
