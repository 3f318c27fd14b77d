"""The SVM solvers and the L21-SVM, CS-SVM and L1-SVM selectors against independent computations."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import fit_quiet, random_problem, signed
from sklearn.base import clone
from sklearn.svm import LinearSVC

from fsbench.selectors import registry
from fsbench.selectors._svm import solve_svm
from fsbench.selectors.l1svm import solve_l1_sqhinge

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def cvx_loss(F, y, c, loss):
    n = y.size
    if loss == "ovr":
        return cp.sum(cp.pos(1 - cp.multiply(signed(y, c), F)))
    onehot = np.eye(c)[y]
    own = cp.reshape(cp.sum(cp.multiply(onehot, F), axis=1), (n, 1), order="C") @ np.ones((1, c))
    return cp.sum(cp.max(F + (1 - onehot) - own, axis=1))


def cvx_svm(Z, y, c, C, loss, regularizer="fro"):
    """min reg(W) + 1/2 ||b||^2 + C loss(Z W + b) with cvxpy (Clarabel)."""
    n, d = Z.shape
    W, b = cp.Variable((d, c)), cp.Variable(c)
    F = Z @ W + np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C")
    reg = 0.5 * cp.sum_squares(W) if regularizer == "fro" else 0.5 * cp.sum(cp.norm(W, axis=1))
    problem = cp.Problem(cp.Minimize(reg + 0.5 * cp.sum_squares(b) + C * cvx_loss(F, y, c, loss)))
    problem.solve(solver="CLARABEL")
    return problem.value


def test_registered():
    reg = registry()
    for name in ("sl2p", "sl21", "l21svm", "cssvm", "l1svm"):
        assert name in reg
        assert reg[name].summary
        clone(reg[name].cls())


# --------------------------------------------------------------------------------------------
# the inner SVM solver (P) of _svm, on rescaled features


@pytest.mark.parametrize("loss", ["ovr", "crammer_singer"])
@pytest.mark.parametrize("method", ["ip", "cd"])
@pytest.mark.parametrize(
    ("n", "d", "c", "scale"), [(12, 5, 3, 1.0), (8, 20, 4, 30.0), (15, 6, 2, 0.05)]
)
def test_svm_solver_matches_cvxpy(loss, method, n, d, c, scale):
    X, y = random_problem(n, d, c, n * d)
    s2 = np.random.default_rng(1).random(d) * scale
    s2[0] = 0.0  # a switched-off feature
    res = solve_svm(X, y, c, 0.8, s2, loss=loss, tol=1e-9, method=method)
    assert res.converged
    reference = cvx_svm(X * np.sqrt(s2), y, c, 0.8, loss)
    assert res.primal == pytest.approx(reference, rel=1e-6)
    # the reported primal value is that of the returned weights: W = diag(s) U
    U = np.zeros_like(res.W)
    U[1:] = res.W[1:] / np.sqrt(s2[1:, None])
    F = X @ res.W + res.b
    assert np.all(res.W[0] == 0)
    np.testing.assert_allclose(res.F, F, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.G[1:] * s2[1:, None], res.W[1:], rtol=1e-9, atol=1e-12)
    if loss == "ovr":
        loss_value = np.maximum(0, 1 - signed(y, c) * F).sum()
    else:
        M = F + 1 - F[np.arange(n), y][:, None]
        M[np.arange(n), y] = 0
        loss_value = M.max(axis=1).sum()
    assert res.primal == pytest.approx(
        0.5 * (U**2).sum() + 0.5 * res.b @ res.b + 0.8 * loss_value, rel=1e-9
    )
    assert res.dual <= reference * (1 + 1e-9) + 1e-12  # weak duality


def test_coordinate_descent_warm_start_needs_fewer_epochs():
    X, y = random_problem(30, 40, 3, 0, informative=3)
    s2 = np.ones(40)
    cold = solve_svm(X, y, 3, 1.0, s2, method="cd", tol=1e-9)
    s2b = s2 * np.linspace(0.99, 1.01, 40)  # a nearby problem, as between outer iterations
    warm = solve_svm(X, y, 3, 1.0, s2b, method="cd", tol=1e-9, A0=cold.A)
    again = solve_svm(X, y, 3, 1.0, s2b, method="cd", tol=1e-9)
    assert warm.primal == pytest.approx(again.primal, rel=1e-8)
    assert warm.n_steps < again.n_steps


def test_liblinear_method_solves_the_same_problem():
    X, y = random_problem(40, 6, 3, 2)
    s2 = np.linspace(0.5, 2.0, 6)
    ip = solve_svm(X, y, 3, 1.0, s2, method="ip", tol=1e-10)
    ll = solve_svm(X, y, 3, 1.0, s2, method="liblinear", tol=1e-8)
    assert ll.primal == pytest.approx(ip.primal, rel=1e-5)
    assert np.isnan(ll.dual)


# --------------------------------------------------------------------------------------------
# CS-SVM


@pytest.mark.parametrize(("n", "d", "c", "C"), [(12, 6, 3, 1.0), (10, 25, 4, 0.2), (14, 4, 2, 5.0)])
def test_cssvm_matches_cvxpy(n, d, c, C):
    X, y = random_problem(n, d, c, 10 + n)
    est = fit_quiet("cssvm", X, y, C=C)
    reference = cvx_svm(X, y, c, C, "crammer_singer")
    assert est.objective_[0] == pytest.approx(reference, rel=1e-4)
    np.testing.assert_allclose(est.scores_, np.sqrt((est.coef_**2).sum(axis=1)))
    assert est.diagnostics_["duality_gap"] <= 1e-8


def test_cssvm_agrees_with_liblinear_crammer_singer():
    X, y = random_problem(30, 8, 3, 4, informative=2)
    est = fit_quiet("cssvm", X, y, C=0.5)
    ref = LinearSVC(multi_class="crammer_singer", C=0.5, tol=1e-10, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=1e-4)


# --------------------------------------------------------------------------------------------
# L21-SVM


@pytest.mark.parametrize(
    ("n", "d", "c", "C"), [(10, 6, 3, 0.5), (8, 15, 3, 1.0), (20, 5, 4, 0.5), (12, 7, 2, 2.0)]
)
def test_l21svm_reaches_the_convex_optimum(n, d, c, C):
    X, y = random_problem(n, d, c, 20 + n)
    est = fit_quiet("l21svm", X, y, C=C, tol=1e-12, max_iter=300, solver="ip")  # the reweighting
    reference = cvx_svm(X, y, c, C, "ovr", regularizer="l21")
    assert est.objective_[-1] == pytest.approx(reference, rel=1e-4)
    assert est.objective_[-1] >= reference * (1 - 1e-6)
    # the first iteration is the plain l2 SVM (eta = 1/2): its objective value is J at that W
    J = est.objective_
    assert np.all(J[1:] <= J[:-1] * (1 + 2e-8) + 1e-13)
    rows = np.sqrt((est.coef_**2).sum(axis=1))
    F = X @ est.coef_ + est.intercept_
    direct = (
        0.5 * rows.sum()
        + 0.5 * est.intercept_ @ est.intercept_
        + C * np.maximum(0, 1 - signed(y, c) * F).sum()
    )
    assert J[-1] == pytest.approx(direct, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_l21svm_objective_never_increases(seed):
    X, y = random_problem(18, 30, 3, seed, informative=2)
    est = fit_quiet(
        "l21svm",
        X,
        y,
        C=[0.1, 1.0, 10.0, 1.0][seed],
        tol=0,
        max_iter=40,
        loss="crammer_singer" if seed == 3 else "ovr",
    )
    J = est.objective_
    assert np.all(J[1:] <= J[:-1] * (1 + 2e-8) + 1e-13)


# --------------------------------------------------------------------------------------------
# L1-SVM


def cvx_l1_sqhinge(X, Ysigned, C):
    """min ||W||_1 + ||b||_1 + C sum (1 - y f)_+^2 over all one-vs-rest columns, by cvxpy."""
    n, d = X.shape
    c = Ysigned.shape[1]
    W, b = cp.Variable((d, c)), cp.Variable(c)
    F = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C")
    obj = cp.sum(cp.abs(W)) + cp.sum(cp.abs(b)) + C * cp.sum(cp.square(cp.pos(1 - cp.multiply(Ysigned, F))))
    problem = cp.Problem(cp.Minimize(obj))
    problem.solve(solver="CLARABEL")
    return problem.value, W.value, b.value


@pytest.mark.parametrize(
    ("n", "d", "C", "seed"),
    [(20, 8, 0.01, 0), (15, 40, 0.3, 1), (60, 10, 3.0, 2), (30, 30, 100.0, 3), (40, 12, 1.0, 4)],
)
def test_l1_sqhinge_solver_matches_cvxpy(n, d, C, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 1] = X[:, 0] + 1e-3 * X[:, 1]  # nearly collinear columns: what slows coordinate descent
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X[:, :3] += y[:, None]
    Z = np.hstack([X, np.ones((n, 1))])
    theta, _, gap = solve_l1_sqhinge(Z, y, C, tol=1e-9)
    assert gap <= 1e-9
    reference, _, _ = cvx_l1_sqhinge(X, y[:, None], C)
    mine = np.abs(theta).sum() + C * np.sum(np.maximum(0, 1 - y * (Z @ theta)) ** 2)
    assert mine == pytest.approx(reference, rel=1e-6)
    # a warm start from a point elsewhere reaches the same optimum
    theta2, _, _ = solve_l1_sqhinge(Z, y, C, rng.standard_normal(d + 1), tol=1e-9)
    mine2 = np.abs(theta2).sum() + C * np.sum(np.maximum(0, 1 - y * (Z @ theta2)) ** 2)
    assert mine2 == pytest.approx(reference, rel=1e-6)


@pytest.mark.parametrize(("c", "C"), [(3, 0.3), (2, 1.0), (4, 0.05), (3, 20.0)])
def test_l1svm_weights_solve_the_l1_squared_hinge_problem(c, C):
    X, y = random_problem(20, 8, c, 5, informative=2)
    est = fit_quiet("l1svm", X, y, C=C, tol=1e-10)
    # LIBLINEAR's convention: one problem (class 1 against 0) for two classes
    Ysigned = signed(y, c) if c > 2 else signed(y, 2)[:, 1:]
    reference, W, b = cvx_l1_sqhinge(X, Ysigned, C)
    assert est.objective_[0] == pytest.approx(reference, rel=1e-4)
    assert est.diagnostics_["converged"] and est.diagnostics_["duality_gap"] <= 1e-10
    np.testing.assert_allclose(est.coef_, W, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, b, atol=1e-4)


def test_l1svm_agrees_with_liblinear():
    X, y = random_problem(40, 10, 3, 7, informative=3)
    est = fit_quiet("l1svm", X, y, C=0.2, tol=1e-12)
    ref = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=0.2, tol=1e-12, max_iter=100000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit(X, y)
    np.testing.assert_allclose(est.coef_, ref.coef_.T, atol=1e-5)
    np.testing.assert_allclose(est.intercept_, ref.intercept_, atol=1e-5)


def test_l1svm_orders_zero_weights_by_entry_along_the_path():
    X, y = random_problem(30, 40, 3, 6, informative=4)
    C, factor, steps = 0.01, 2.0, 6
    est = fit_quiet("l1svm", X, y, C=C, path_factor=factor, path_steps=steps, full_path=True)
    # brute force with cvxpy: solve at every C on the path and note when each feature first
    # has weight (|w| > 1e-6: cvxpy's interior point returns no exact zeros)
    entry = np.full(40, steps + 1)
    norm_at_entry = np.zeros(40)
    for j in range(steps + 1):
        _, W, _ = cvx_l1_sqhinge(X, signed(y, 3), C * factor**j)
        W[np.abs(W) < 1e-6] = 0.0
        norms = np.linalg.norm(W, axis=1)
        new = (entry == steps + 1) & (norms > 0)
        entry[new], norm_at_entry[new] = j, norms[new]
        if j == 0:
            np.testing.assert_array_equal(est.scores_ > 0, norms > 0)
    entered = entry <= steps
    assert 0 < est.diagnostics_["n_nonzero"] < entered.sum()  # the path adds features
    expected = sorted(np.flatnonzero(entered), key=lambda v: (entry[v], -norm_at_entry[v], v))
    np.testing.assert_array_equal(est.ranking_[: entered.sum()], expected)
    assert est.diagnostics_["n_never_entered"] == (~entered).sum()
    assert np.all(est.scores_[entry > 0] == 0)
    assert sorted(est.ranking_) == list(range(40))


def test_l1svm_short_path_keeps_the_top_k():
    X, y = random_problem(30, 40, 3, 6, informative=4)
    full = fit_quiet("l1svm", X, y, C=0.1, full_path=True, n_features_to_select=6)
    short = fit_quiet("l1svm", X, y, C=0.1, n_features_to_select=6)
    assert short.diagnostics_["n_nonzero"] < 6  # the path is needed for the top 6
    assert short.diagnostics_["path_points"] < full.diagnostics_["path_points"]
    np.testing.assert_array_equal(short.ranking_[:6], full.ranking_[:6])
    assert sorted(short.ranking_) == list(range(40))


def test_l1svm_never_entered_features_follow_the_gradient_test():
    X, y = random_problem(30, 40, 3, 6, informative=4)
    est = fit_quiet("l1svm", X, y, C=0.01, path_steps=0, tol=1e-10)
    zero = np.flatnonzero(est.scores_ == 0)
    W, b = est.coef_, est.intercept_
    # gradient of C sum (1 - y f)_+^2 with respect to w_vk, written out per class
    grad = np.zeros((40, 3))
    for k in range(3):
        yk = signed(y, 3)[:, k]
        slack = np.maximum(0, 1 - yk * (X @ W[:, k] + b[k]))
        grad[:, k] = -2 * 0.01 * (X * (yk * slack)[:, None]).sum(axis=0)
    closeness = np.abs(grad).max(axis=1)
    assert np.all(closeness[zero] <= 1 + 1e-6)  # optimality: zero weights have |grad| <= 1
    tail = est.ranking_[-zero.size :]
    assert set(tail) == set(zero)
    assert np.all(np.diff(closeness[tail]) <= 1e-12)


# --------------------------------------------------------------------------------------------
# all four: planted problems and the binary case


@pytest.mark.parametrize(
    ("name", "params"),
    [("l21svm", {}), ("cssvm", {}), ("l1svm", {"C": 0.1}), ("sl21", {}), ("sl2p", {"p": 2.0})],
)
def test_planted_features_rank_first(name, params):
    X, y = random_problem(40, 120, 3, 8, informative=6)
    est = fit_quiet(name, X, y, **params)
    assert set(est.ranking_[:6]) == set(range(6))
    assert sorted(est.ranking_) == list(range(120))


@pytest.mark.parametrize("name", ["l21svm", "cssvm", "l1svm", "sl2p"])
def test_binary_problems(name):
    X, y = random_problem(20, 15, 2, 9, informative=2)
    est = fit_quiet(name, X, y)
    assert set(est.ranking_[:2]) == {0, 1}


def test_batched_newton_solve_survives_a_singular_matrix():
    from fsbench.selectors._svm import _batched_spd_solver

    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 5, 5))
    M = A @ A.transpose(0, 2, 1)
    M[1] = np.outer(A[1, :, 0], A[1, :, 0])  # rank one: exactly singular
    r = np.einsum("kij,kj->ki", M, rng.normal(size=(3, 5)))  # consistent right-hand sides
    x = _batched_spd_solver(M)(r)
    assert np.allclose(np.einsum("kij,kj->ki", M, x), r, atol=1e-8)
