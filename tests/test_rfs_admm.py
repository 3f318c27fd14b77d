"""RFS's problem solved by ADMM (fsbench.selectors._rfs_admm), for many more samples than features.

Checked against cvxpy's minimum of J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1}, against Algorithm 1
run to a tight gap, against the dual bound written out here (so the certificate is a bound at
every stop, converged or not), and against a plain solve of the W-update's linear system.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from fsbench.selectors import make_selector
from fsbench.selectors._rfs_admm import _Design, rfs_fit_admm
from fsbench.selectors.rfs import RFSStep, label_matrix, rfs_dual_bound, rfs_fit

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
    # the bound fsbench computes is the written-out one, and below the minimum, at any dual point
    rng = np.random.default_rng(0)
    for _ in range(20):
        Lam = Y + 0.3 * rng.standard_normal(Y.shape)
        mine = rfs_dual_bound(Y, gamma, RFSStep(None, None, Lam, X.T @ Lam))
        assert mine == pytest.approx(lower_bound(X, Y, gamma, Lam), rel=1e-12)
        assert mine <= value * (1 + 1e-9)


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


# ----------------------------------------------------------------------------- through the selector
def test_auto_runs_admm_for_more_samples_than_features_under_the_certificate():
    X, Y = problem(120, 20, seed=8)
    y = Y.argmax(1)
    tall = make_selector("rfs", {"n_features_to_select": 5}).fit(X, y)
    wide = make_selector("rfs", {"n_features_to_select": 5}).fit(X[:15], y[:15])
    old_rule = make_selector("rfs", {"n_features_to_select": 5, "stop": "decrease"}).fit(X, y)
    assert tall.diagnostics_["solver"] == "admm" and tall.diagnostics_["converged"]
    assert wide.diagnostics_["solver"] == "reweighted"
    assert old_rule.diagnostics_ == {}
    # the old rule is Algorithm 1's, iterate for iterate
    reference = rfs_fit(X, label_matrix(y, 3, "onehot"), 1.0, stop="decrease", tol=1e-7, max_iter=50_000)
    np.testing.assert_array_equal(old_rule.coef_, reference.W)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_the_selector_with_admm_gives_the_weights_of_cvxpy(fit_intercept):
    X, Y = problem(150, 12, seed=9)
    y = Y.argmax(1)
    Xa = np.hstack([X, np.ones((150, 1))]) if fit_intercept else X
    value, W_cvx = cvx_minimum(Xa, Y, 0.7)
    est = make_selector("rfs", {"n_features_to_select": 5, "gamma": 0.7, "solver": "admm", "tol": 1e-9,
                                "fit_intercept": fit_intercept}).fit(X, y)
    W = np.vstack([est.coef_, est.intercept_]) if fit_intercept else est.coef_
    assert J(Xa, Y, W, 0.7) <= value * (1 + 1e-8)
    np.testing.assert_allclose(W, W_cvx, atol=2e-4)
    np.testing.assert_allclose(est.scores_, np.linalg.norm(est.coef_, axis=1))
    assert est.n_iter_ % 10 == 0 and est.n_iter_ == 10 * est.objective_.size


def test_admm_out_of_iterations_warns_with_its_gap_and_solver():
    X, Y = problem(200, 30, seed=10)
    with pytest.warns(ConvergenceWarning, match=r"solver admm"):
        est = make_selector("rfs", {"solver": "admm", "max_iter": 15}).fit(X, Y.argmax(1))
    assert not est.diagnostics_["converged"] and est.n_iter_ == 15 and est.objective_.size == 2


def test_admm_with_the_old_stopping_rule_is_refused_in_one_sentence():
    with pytest.raises(InvalidParameterError, match=r"solver='admm' cannot use stop='decrease'.*set stop: gap"):
        make_selector("rfs", {"solver": "admm", "stop": "decrease"}).fit(*problem(30, 5)[:1], np.arange(30) % 3)


def test_an_admm_fit_gives_no_objective_trace_and_algorithm_1_one_that_decreases():
    from fsbench.engine.traces import _fit_trace

    X, Y = problem(120, 20, seed=11)
    y = Y.argmax(1)
    objective, _, _ = _fit_trace("rfs", {}, X, y, 5, 0, 1)
    assert objective.size == 0  # ADMM ran (n > d): its J need not decrease, no theorem to check
    objective, _, _ = _fit_trace("rfs", {"solver": "reweighted"}, X, y, 5, 0, 1)
    assert objective.size > 1 and np.all(np.diff(objective) <= 1e-12 * objective[:-1])


def test_a_cached_admm_fit_gives_no_trace_either(tmp_path):
    from fsbench.engine.runner import ranking_key
    from fsbench.engine.traces import _fit_trace
    from fsbench.storage.ranking_cache import save_ranking

    X, Y = problem(120, 20, seed=11)
    y = Y.argmax(1)
    meta = {"objective": [3.0, 2.0, 2.5], "fit_seconds": 0.1, "warnings": [], "diagnostics": {"solver": "admm"}}
    save_ranking(tmp_path, ranking_key("rfs", {}, X, y, None), np.arange(20), np.zeros(20), meta)
    objective, seconds, _ = _fit_trace("rfs", {}, X, y, 5, 0, 1, tmp_path)
    assert seconds == 0.1 and objective.size == 0  # read from the cache, not refitted, and no trace
    meta["diagnostics"] = {"solver": "reweighted"}
    save_ranking(tmp_path, ranking_key("rfs", {}, X, y, None), np.arange(20), np.zeros(20), meta)
    objective, _, _ = _fit_trace("rfs", {}, X, y, 5, 0, 1, tmp_path)
    assert list(objective) == [3.0, 2.0, 2.5]


def cvx_dual(X, Y, gamma):
    """The dual written out: max Tr(Lam^T Y) s.t. ||lam_i|| <= 1, ||x_j^T Lam|| <= gamma."""
    Lam = cp.Variable(Y.shape)
    prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(Lam, Y))),
                      [cp.norm(Lam, 2, axis=1) <= 1, cp.norm(X.T @ Lam, 2, axis=1) <= gamma])
    prob.solve(solver="CLARABEL")
    return prob.value, Lam.value


def test_zero_rows_are_ranked_by_how_near_the_optimal_dual_puts_them_to_entering():
    X, Y = problem(160, 24, seed=12)
    y = Y.argmax(1)
    gamma = 0.35 * np.linalg.norm(X.T @ Y, axis=1).max()
    value, Lam = cvx_dual(X, Y, gamma)
    primal, _ = cvx_minimum(X, Y, gamma)
    assert value == pytest.approx(primal, rel=1e-6)  # strong duality: the written-out dual is RFS's
    est = make_selector("rfs", {"n_features_to_select": 5, "gamma": gamma, "solver": "admm", "tol": 1e-10}).fit(X, y)
    zero = np.flatnonzero(np.linalg.norm(est.coef_, axis=1) == 0)
    nonzero = np.flatnonzero(np.linalg.norm(est.coef_, axis=1) > 0)
    assert 3 <= zero.size <= 21
    # the non-zero rows first, by norm; then the zero rows
    assert set(est.ranking_[: nonzero.size]) == set(nonzero)
    tail = est.ranking_[nonzero.size:]
    closeness = np.linalg.norm(X.T @ Lam, axis=1)[tail] / gamma
    assert np.all(closeness <= 1 + 1e-6)
    # in decreasing closeness wherever cvxpy's values are apart by more than its accuracy
    drops = np.diff(closeness)
    assert np.all(drops <= 1e-5), np.round(closeness, 5)
