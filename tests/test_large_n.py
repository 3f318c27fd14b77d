"""L1-SVM's solvers beyond the papers' shapes: L-BFGS-B for many samples, LARS without a (d+1)^2 buffer.

Checked against cvxpy, the KKT conditions of the l1-regularized squared hinge, the dual bound
written out here, and (for LARS) the previous solver kept verbatim below.
"""

from __future__ import annotations

import tracemalloc
import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import fit_quiet, random_problem, signed
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path
from sklearn.svm import LinearSVC

from fsbench.selectors import make_selector
from fsbench.selectors.l1svm import _lasso_by_lars, solve_l1_sqhinge, solve_l1_sqhinge_lbfgsb

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def objective(Z, y, theta, C):
    return np.abs(theta).sum() + C * np.sum(np.maximum(0.0, 1.0 - y * (Z @ theta)) ** 2)


def cvx_value(Z, y, C):
    theta = cp.Variable(Z.shape[1])
    problem = cp.Problem(cp.Minimize(cp.norm1(theta) + C * cp.sum_squares(cp.pos(1 - cp.multiply(y, Z @ theta)))))
    problem.solve(solver="CLARABEL")
    return problem.value


def dual_bound(Z, y, theta, C):
    """The dual value of alpha = s * 2C (1 - y z^T theta)_+, s chosen best under ||Z^T (alpha y)||_inf <= 1:
    the dual is max_{a >= 0} sum(a) - ||a||^2 / (4C) s.t. |Z^T (a * y)| <= 1 componentwise."""
    alpha = 2.0 * C * np.maximum(0.0, 1.0 - y * (Z @ theta))
    if not alpha.any():
        return 0.0
    s_free = alpha.sum() * 2.0 * C / (alpha @ alpha)  # maximizer of s sum(a) - s^2 ||a||^2 / (4C)
    s = min(s_free, 1.0 / np.abs(Z.T @ (alpha * y)).max())
    return s * alpha.sum() - s * s * (alpha @ alpha) / (4.0 * C)


def hard_problem(n, d, seed, collinear=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if collinear:
        X[:, 1] = X[:, 0] + 1e-3 * X[:, 1]
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X[:, :3] += 0.7 * y[:, None]
    return np.hstack([X, np.ones((n, 1))]), y


@pytest.mark.parametrize("C", [0.05, 1.0, 30.0])
@pytest.mark.parametrize(("n", "d", "seed"), [(80, 10, 0), (200, 40, 1), (60, 60, 2)])
def test_lbfgsb_reaches_the_optimum_of_cvxpy_and_its_kkt_conditions(n, d, seed, C):
    Z, y = hard_problem(n, d, seed)
    theta, _, gap = solve_l1_sqhinge_lbfgsb(Z, y, C, tol=1e-10)
    assert gap <= 1e-10
    assert objective(Z, y, theta, C) == pytest.approx(cvx_value(Z, y, C), rel=1e-6)
    # KKT: the gradient of the loss is -sign(theta_j) on the support, at most 1 in size off it
    grad = -2.0 * C * Z.T @ (y * np.maximum(0.0, 1.0 - y * (Z @ theta)))
    on = theta != 0
    np.testing.assert_allclose(grad[on], -np.sign(theta[on]), atol=1e-6)
    assert np.all(np.abs(grad[~on]) <= 1 + 1e-6)
    # the gap it reports is the one of the dual bound written out here
    P = objective(Z, y, theta, C)
    assert gap == pytest.approx((P - dual_bound(Z, y, theta, C)) / P, abs=1e-12)


def test_lbfgsb_from_a_warm_start_elsewhere_reaches_the_same_optimum():
    Z, y = hard_problem(150, 30, 3)
    reference = cvx_value(Z, y, 2.0)
    start = np.random.default_rng(0).standard_normal(Z.shape[1]) * 3
    theta, _, gap = solve_l1_sqhinge_lbfgsb(Z, y, 2.0, start, tol=1e-9)
    assert gap <= 1e-9 and objective(Z, y, theta, 2.0) == pytest.approx(reference, rel=1e-6)


def test_lbfgsb_stops_at_its_budget_and_reports_the_gap_it_has():
    Z, y = hard_problem(400, 120, 4)
    theta, iterations, gap = solve_l1_sqhinge_lbfgsb(Z, y, 50.0, tol=1e-14, max_iter=1)
    assert iterations <= 100  # 100 L-BFGS-B iterations per unit of max_iter
    assert gap > 1e-14
    P = objective(Z, y, theta, 50.0)
    assert gap == pytest.approx((P - dual_bound(Z, y, theta, 50.0)) / P, rel=1e-9)


def test_the_selector_warns_with_the_gap_and_the_solver_when_lbfgsb_runs_out():
    X, y = random_problem(300, 60, 3, 11, informative=4)
    est = make_selector("l1svm", {"C": 1e3, "tol": 1e-14, "max_iter": 1, "solver": "lbfgsb", "path_steps": 0})
    with pytest.warns(ConvergenceWarning, match="solver lbfgsb"):
        est.fit(X, y)
    assert not est.diagnostics_["converged"] and est.diagnostics_["duality_gap"] > 1e-14


@pytest.mark.parametrize(("n", "d", "c"), [(120, 15, 3), (90, 30, 2)])
def test_both_solvers_give_the_weights_of_cvxpy(n, d, c):
    X, y = random_problem(n, d, c, n + d, informative=3)
    Ysigned = signed(y, c) if c > 2 else signed(y, 2)[:, 1:]
    W = cp.Variable((d, Ysigned.shape[1]))
    b = cp.Variable(Ysigned.shape[1])
    F = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, Ysigned.shape[1]), order="C")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(W)) + cp.sum(cp.abs(b))
                                     + 0.5 * cp.sum(cp.square(cp.pos(1 - cp.multiply(Ysigned, F))))))
    problem.solve(solver="CLARABEL")
    for solver in ("lars", "lbfgsb"):
        est = fit_quiet("l1svm", X, y, C=0.5, tol=1e-11, solver=solver)
        assert est.objective_[0] == pytest.approx(problem.value, rel=1e-6)
        np.testing.assert_allclose(est.coef_, W.value, atol=1e-4)
        assert est.diagnostics_["solver"] == solver


def auto_rule(X, y, c, C, width_guard=True):
    """auto's choice per one-vs-rest problem, written out: the margin violators s of the start (20
    epochs of LIBLINEAR's l2 SVM at min(C, 1)) against the work ratio: L-BFGS-B when s min(s, d + 1) > 100 n,
    unless the features outnumber five times the samples."""
    start = LinearSVC(C=min(C, 1.0), loss="squared_hinge", dual=True, max_iter=20, tol=1e-2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start.fit(X, y)
    margins = signed(y, c) * (X @ start.coef_.T + start.intercept_)
    n, d = X.shape
    s = (margins < 1).sum(axis=0)
    return {"lbfgsb" if v * min(v, d + 1) > 100 * n and (d + 1 <= 5 * n or not width_guard) else "lars" for v in s}


@pytest.mark.parametrize(("n", "d", "informative", "expected", "by_width"),
                         [(600, 500, 0, {"lbfgsb"}, False), (60, 400, 3, {"lars"}, False),
                          (150, 20, 3, {"lars"}, False), (200, 1200, 0, {"lars"}, True)])
def test_auto_picks_per_problem_by_the_rule(n, d, informative, expected, by_width):
    X, y = random_problem(n, d, 3, 7, informative=informative)
    assert auto_rule(X, y, 3, 1.0) == expected  # the cases cover both answers
    if by_width:  # the guard against far more features than samples decides this one
        assert auto_rule(X, y, 3, 1.0, width_guard=False) == {"lbfgsb"}
    est = fit_quiet("l1svm", X, y, C=1.0, path_steps=0)
    assert est.diagnostics_["solver"] == "+".join(sorted(expected))
    assert est.diagnostics_["converged"]


# ------------------------------------------------------------------------------------ LARS
def previous_solve_l1_sqhinge(Z, y, C, theta0=None, *, tol=1e-6, max_iter=100):
    """``solve_l1_sqhinge`` as it was before its LARS buffer was bounded (commit dc3f45f), verbatim
    but for names."""
    n, m = Z.shape
    theta = np.zeros(m) if theta0 is None else np.array(theta0, dtype=float)
    f = Z @ theta
    gap = np.inf
    for it in range(max_iter + 1):
        r = np.maximum(0.0, 1.0 - y * f)
        S = np.flatnonzero(r > 0)
        g = -2.0 * C * (Z[S].T @ (y[S] * r[S]))
        P = float(np.abs(theta).sum() + C * (r @ r))
        alpha_sum, alpha_sq = 2.0 * C * r.sum(), 4.0 * C * C * (r @ r)
        if alpha_sq == 0.0:
            D = 0.0
        else:
            s = alpha_sum * 2.0 * C / alpha_sq
            gmax = np.abs(g).max(initial=0.0)
            if gmax > 0.0:
                s = min(s, 1.0 / gmax)
            D = s * alpha_sum - s * s * alpha_sq / (4.0 * C)
        gap = (P - D) / max(P, np.finfo(float).tiny)
        if gap <= tol or it == max_iter:
            break
        target = np.zeros(m)
        if S.size:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                _, _, target = lars_path(Z[S], y[S], alpha_min=1.0 / (2.0 * C * S.size), method="lasso",
                                         return_path=False, max_iter=100 * m)
        step = target - theta
        Zstep = Z @ step
        t, moved = 1.0, False
        for _ in range(40):
            f_new = f + t * Zstep
            r_new = np.maximum(0.0, 1.0 - y * f_new)
            if np.abs(theta + t * step).sum() + C * (r_new @ r_new) < P:
                theta, f, moved = theta + t * step, f_new, True
                break
            t *= 0.5
        if not moved:
            break
    return theta, it, gap


@pytest.mark.parametrize(("n", "d", "C", "seed"), [(50, 4000, 0.1, 0), (30, 800, 10.0, 1), (40, 40, 1.0, 2),
                                                   (25, 300, 1000.0, 3)])
def test_lars_is_bit_for_bit_the_previous_solver(n, d, C, seed):
    Z, y = hard_problem(n, d, seed)
    start = np.random.default_rng(seed).standard_normal(d + 1) * 0.01
    for theta0 in (None, start):
        new = solve_l1_sqhinge(Z, y, C, theta0)
        old = previous_solve_l1_sqhinge(Z, y, C, theta0)
        assert new[1] == old[1] and new[2] == old[2]
        assert np.array_equal(new[0], old[0])


@pytest.mark.parametrize("seed", range(4))
def test_the_lasso_with_a_growing_buffer_is_the_path_with_the_full_one(seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((30, 200))
    A[:, 1] = A[:, 0] + 1e-6 * A[:, 1]  # a drop from the active set lengthens the path
    b = rng.standard_normal(30)
    alpha = 1e-4
    full = lars_path(A, b, alpha_min=alpha, method="lasso", return_path=False, max_iter=100 * 200)[2]
    for first_cap in (1, 3, 17, None):
        np.testing.assert_array_equal(_lasso_by_lars(A, b, alpha, 100 * 200, first_cap=first_cap), full)


def test_l1svm_at_twenty_thousand_features_holds_no_square_buffer():
    X, y = random_problem(40, 20_000, 3, 5, informative=6)
    tracemalloc.start()
    try:
        est = fit_quiet("l1svm", X, y, C=1.0, path_steps=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the previous call held a (d + 2)^2 buffer of 3.2 GB per lasso; X itself is 6.4 MB
    assert peak < 200e6
    assert est.diagnostics_["solver"] == "lars" and est.diagnostics_["converged"]
    assert set(est.ranking_[:6]) == set(range(6))


def test_the_exact_step_is_the_optimum_on_the_right_support_and_fails_its_certificate_on_a_wrong_one():
    from fsbench.selectors.l1svm import _certificate, _exact_support_step

    Z, y = hard_problem(300, 25, 8, collinear=False)
    C = 0.5
    optimum, _, gap = solve_l1_sqhinge(Z, y, C, tol=1e-12)  # LARS-Newton: exact up to round-off
    assert gap <= 1e-12
    # a nearby point with the optimum's support, signs and violators: one linear solve lands on the optimum
    near = optimum * (1 + 1e-3 * np.random.default_rng(0).standard_normal(optimum.size))
    r = np.maximum(0.0, 1.0 - y * (Z @ near))
    assert np.array_equal(r > 0, np.maximum(0.0, 1.0 - y * (Z @ optimum)) > 0)
    step = _exact_support_step(Z, y, near, r, C)
    np.testing.assert_allclose(step, optimum, atol=1e-9)
    assert _certificate(Z, y, step, C)[1] <= 1e-10
    # with one feature of the support left out, the stationary point on the wrong support is no optimum
    wrong = near.copy()
    wrong[np.flatnonzero(optimum)[np.argmax(np.abs(optimum[np.flatnonzero(optimum)]))]] = 0.0
    bad = _exact_support_step(Z, y, wrong, r, C)
    assert _certificate(Z, y, bad, C)[1] > 1e-6
