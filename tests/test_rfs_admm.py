"""RFS's problem solved by ADMM (fsbench.selectors._rfs_admm), for many more samples than features.

Checked against cvxpy's minimum of J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1}, against Algorithm 1
run to a tight gap, against the dual bound written out here (so the certificate is a bound at
every stop, converged or not), and against a plain solve of the W-update's linear system.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from fsbench.selectors._rfs_admm import _Design, rfs_fit_admm
from fsbench.selectors.rfs import label_matrix, rfs_fit

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def problem(n, d, c=3, seed=0, informative=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(X[:, :informative] @ rng.standard_normal((informative, c)) + 0.5 * rng.standard_normal((n, c)), 1)
    return X, label_matrix(y, c, "onehot")


def J(X, Y, W, gamma):
    return np.linalg.norm(X @ W - Y, axis=1).sum() + gamma * np.linalg.norm(W, axis=1).sum()


def cvx_minimum(X, Y, gamma):
    W = cp.Variable((X.shape[1], Y.shape[1]))
    objective = cp.sum(cp.norm(X @ W - Y, 2, axis=1)) + gamma * cp.sum(cp.norm(W, 2, axis=1))
    prob = cp.Problem(cp.Minimize(objective))
    prob.solve(solver="CLARABEL")
    return prob.value, W.value


def lower_bound(X, Y, gamma, Lam):
    """Weak duality written out: for any Lam, Tr(Lam^T Y) / max(max_i ||lam_i||, max_j ||x_j^T Lam|| / gamma)
    <= min J (Tr(Lam^T Y) = Tr(Lam^T (Y - X W)) + Tr((X^T Lam)^T W), each term bounded by a norm pair)."""
    s = max(np.linalg.norm(Lam, axis=1).max(), np.linalg.norm(X.T @ Lam, axis=1).max() / gamma)
    return float(np.vdot(Lam, Y)) / s


@pytest.mark.parametrize(("n", "d", "gamma"), [(80, 12, 1.0), (120, 30, 0.2), (60, 90, 1.0), (150, 20, 8.0)])
def test_admm_reaches_the_minimum_of_cvxpy(n, d, gamma):
    X, Y = problem(n, d)
    value, W_cvx = cvx_minimum(X, Y, gamma)
    fit = rfs_fit_admm(X, Y, gamma, tol=1e-9)
    assert fit.converged and fit.duality_gap <= 1e-9
    # the returned gap certifies J(W) against the minimum; cvxpy's own accuracy is about 1e-8
    assert J(X, Y, fit.W, gamma) <= value * (1 + 1e-8)
    assert J(X, Y, fit.W, gamma) >= value * (1 - 1e-7)
    np.testing.assert_allclose(fit.W, W_cvx, atol=2e-4)


@pytest.mark.parametrize("max_iter", [3, 10, 40, 200])
def test_the_gap_bounds_the_distance_to_the_minimum_at_any_stop(max_iter):
    X, Y = problem(200, 40, seed=1)
    gamma = 0.5
    value, _ = cvx_minimum(X, Y, gamma)
    fit = rfs_fit_admm(X, Y, gamma, tol=0, max_iter=max_iter)
    assert not fit.converged and fit.objective.size == -(-max_iter // 10)
    excess = (J(X, Y, fit.W, gamma) - value) / value
    assert excess <= fit.duality_gap + 1e-8
    # every recorded bound is a lower bound on the minimum
    assert np.all(fit.dual_bound <= value * (1 + 1e-8))


def test_the_dual_bound_is_the_written_out_bound_of_admms_dual_point():
    X, Y = problem(100, 15, seed=2)
    gamma = 1.0
    value, _ = cvx_minimum(X, Y, gamma)
    fit = rfs_fit_admm(X, Y, gamma, tol=1e-10)
    # the best bound found is within the certified gap of J(W) and below the minimum
    best = fit.dual_bound.max()
    assert best <= value * (1 + 1e-8)
    assert (J(X, Y, fit.W, gamma) - best) / best == pytest.approx(fit.duality_gap, rel=1e-6, abs=1e-12)
    # a random dual point gives a bound below the minimum too (weak duality, the formula used)
    rng = np.random.default_rng(0)
    for _ in range(20):
        Lam = Y + 0.3 * rng.standard_normal(Y.shape)
        assert lower_bound(X, Y, gamma, Lam) <= value * (1 + 1e-9)


@pytest.mark.parametrize(("n", "d", "gamma"), [(300, 40, 1.0), (50, 200, 1.0), (200, 60, 20.0)])
def test_admm_and_algorithm_1_reach_the_same_weights(n, d, gamma):
    X, Y = problem(n, d, seed=3)
    admm = rfs_fit_admm(X, Y, gamma, tol=1e-11)
    irls = rfs_fit(X, Y, gamma, tol=1e-11, max_iter=200_000)
    assert admm.converged and irls.converged
    np.testing.assert_allclose(admm.W, irls.W, atol=1e-7)
    scores_admm, scores_irls = np.linalg.norm(admm.W, axis=1), np.linalg.norm(irls.W, axis=1)
    kept = scores_admm > 1e-6 * scores_admm.max()
    assert np.array_equal(np.argsort(-scores_admm)[: kept.sum()], np.argsort(-scores_irls)[: kept.sum()])


def test_rows_of_a_zero_optimum_are_exactly_zero():
    X, Y = problem(100, 10, seed=4)
    # gamma >= max_j ||x_j^T Lam|| for Lam = Y / max ||y_i|| makes W = 0 optimal
    gamma = 1.01 * np.linalg.norm(X.T @ Y, axis=1).max()
    fit = rfs_fit_admm(X, Y, gamma)
    assert fit.converged
    assert np.all(fit.W == 0.0)


def test_a_constant_zero_feature_gets_a_zero_row_and_the_rest_is_unchanged():
    X, Y = problem(150, 12, seed=5)
    X0 = np.hstack([X, np.zeros((150, 1))])
    fit, fit0 = rfs_fit_admm(X, Y, 1.0, tol=1e-10), rfs_fit_admm(X0, Y, 1.0, tol=1e-10)
    assert np.all(fit0.W[-1] == 0.0)
    np.testing.assert_allclose(fit0.W[:-1], fit.W, atol=1e-6)


@pytest.mark.parametrize("rho", [1e-3, 1.0, 1e3])
def test_the_starting_penalty_changes_the_path_not_the_optimum(rho):
    X, Y = problem(250, 30, seed=6)
    reference = rfs_fit(X, Y, 1.0, tol=1e-11, max_iter=200_000)
    fit = rfs_fit_admm(X, Y, 1.0, tol=1e-10, rho=rho)
    assert fit.converged
    np.testing.assert_allclose(fit.W, reference.W, atol=1e-6)


@pytest.mark.parametrize(("n", "d"), [(40, 15), (15, 40)])
def test_the_w_update_solves_its_normal_equations(n, d):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((n, d))
    b = rng.standard_normal((d, 3))
    sigma = 2.5
    design = _Design(X, sigma)
    assert design.wide == (d > n)
    expected = np.linalg.solve(X.T @ X + sigma * np.eye(d), b)
    np.testing.assert_allclose(design.solve(b), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(design.times(b), X @ b, rtol=1e-12, atol=1e-12)
    B = rng.standard_normal((n, 3))
    np.testing.assert_allclose(design.transposed_times(B), X.T @ B, rtol=1e-12, atol=1e-12)


def test_bad_parameters_are_refused():
    X, Y = problem(30, 5)
    with pytest.raises(ValueError, match="gamma"):
        rfs_fit_admm(X, Y, 0.0)
    with pytest.raises(ValueError, match="rho"):
        rfs_fit_admm(X, Y, 1.0, rho=-1.0)
