"""L21-SVM's and SL21's problems solved by ADMM (fsbench.selectors._l21_admm), for many samples.

Checked against cvxpy's minimum of J(W, b) = R(W) + 1/2 ||b||^2 + C sum hinge, with R = lam ||W||_{2,1}
or lam/2 ||W||_{2,1}^2, against the dual written out here and solved by cvxpy (the bound at every
stop, and the order of the zero rows), against cvxpy's proximal map of the squared norm, and through
the selectors against their reweighting run to a tight tolerance.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

from fsbench.selectors import make_selector
from fsbench.selectors._l21_admm import _Design, _prox, hinge_l21_admm, hinge_l21_dual_bound
from fsbench.selectors._svm import DegenerateWeightsWarning, signed_labels

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def problem(n, d, c=3, seed=0, informative=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(X[:, :informative] @ rng.standard_normal((informative, c)) + 0.7 * rng.standard_normal((n, c)), 1)
    return X, y, signed_labels(y, c)


def J(X, Y, W, b, C, lam, penalty):
    l21 = np.linalg.norm(W, axis=1).sum()
    R = lam * l21 if penalty == "l21" else 0.5 * lam * l21**2
    return R + 0.5 * b @ b + C * np.maximum(0.0, 1.0 - Y * (X @ W + b)).sum()


def cvx_primal(X, Y, C, lam, penalty, fit_intercept=True):
    n, c = Y.shape
    W, b = cp.Variable((X.shape[1], c)), cp.Variable(c)
    l21 = cp.sum(cp.norm(W, 2, axis=1))
    R = lam * l21 if penalty == "l21" else lam / 2 * cp.square(l21)
    F = X @ W + (np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C") if fit_intercept else 0)
    extra = 0.5 * cp.sum_squares(b) if fit_intercept else 0
    prob = cp.Problem(cp.Minimize(R + extra + C * cp.sum(cp.pos(1 - cp.multiply(Y, F)))))
    prob.solve(solver="CLARABEL")
    return prob.value, W.value, (b.value if fit_intercept else np.zeros(c))


def cvx_dual(X, Y, C, lam, penalty):
    """The dual written out: max sum alpha - 1/2 ||1^T (alpha o Y)||^2 - R*(X^T (alpha o Y)) over the box
    [0, C] (Lagrange duality of the hinge; R* the l2,1 norm's dual ball or 1/(2 lam) max_v ||g_v||^2)."""
    alpha = cp.Variable(Y.shape)
    AY = cp.multiply(alpha, Y)
    G = X.T @ AY
    value = cp.sum(alpha) - 0.5 * cp.sum_squares(cp.sum(AY, axis=0))
    constraints = [alpha >= 0, alpha <= C]
    if penalty == "l21":
        constraints.append(cp.norm(G, 2, axis=1) <= lam)
    else:
        value = value - cp.square(cp.max(cp.norm(G, 2, axis=1))) / (2 * lam)
    prob = cp.Problem(cp.Maximize(value), constraints)
    prob.solve(solver="CLARABEL")
    return prob.value, alpha.value


def written_out_bound(X, Y, alpha, lam, penalty):
    """D(t alpha) of the dual above, maximized over the feasible t in (0, 1] by scipy (the largest
    feasible t found by bisection on the constraint itself)."""

    def g(t):
        return np.linalg.norm(X.T @ (t * alpha * Y), axis=1).max()

    def D(t):
        AY = t * alpha * Y
        value = t * alpha.sum() - 0.5 * np.sum(AY.sum(axis=0) ** 2)
        return value - (g(t) ** 2 / (2 * lam) if penalty == "l21_squared" else 0.0)

    top = 1.0
    if penalty == "l21" and g(1.0) > lam:
        low, high = 0.0, 1.0
        for _ in range(200):
            mid = (low + high) / 2
            low, high = (mid, high) if g(mid) <= lam else (low, mid)
        top = low
    res = minimize_scalar(lambda t: -D(t), bounds=(0.0, top), method="bounded", options={"xatol": 1e-12})
    return max(-res.fun, D(top))


CASES = [
    (80, 12, "l21", 0.5, 1.0, True), (80, 12, "l21", 0.5, 0.05, False), (40, 70, "l21", 0.5, 2.0, True),
    (90, 15, "l21_squared", 0.3, 1.0, True), (90, 15, "l21_squared", 0.1, 0.05, False),
    (35, 60, "l21_squared", 0.4, 0.5, True),
]


@pytest.mark.parametrize(("n", "d", "penalty", "lam", "C", "fit_intercept"), CASES)
def test_admm_reaches_the_minimum_of_cvxpy(n, d, penalty, lam, C, fit_intercept):
    X, _, Y = problem(n, d, seed=n + d)
    value, W_cvx, b_cvx = cvx_primal(X, Y, C, lam, penalty, fit_intercept)
    fit = hinge_l21_admm(X, Y, C, lam, penalty=penalty, fit_intercept=fit_intercept, tol=1e-9)
    assert fit.converged and fit.gap <= 1e-9
    P = J(X, Y, fit.W, fit.b, C, lam, penalty)
    assert value * (1 - 1e-7) <= P <= value * (1 + 1e-8)
    np.testing.assert_allclose(fit.W, W_cvx, atol=1e-4)
    np.testing.assert_allclose(fit.b, b_cvx, atol=1e-4)
    # the same support: cvxpy's rows below 1e-6 are ADMM's exact zeros
    np.testing.assert_array_equal(np.linalg.norm(fit.W, axis=1) == 0, np.linalg.norm(W_cvx, axis=1) < 1e-6)


@pytest.mark.parametrize("penalty", ["l21", "l21_squared"])
@pytest.mark.parametrize("max_iter", [10, 40, 200])
def test_the_gap_bounds_the_distance_to_the_minimum_at_any_stop(penalty, max_iter):
    X, _, Y = problem(70, 10, seed=3)
    value, _, _ = cvx_primal(X, Y, 1.0, 0.5, penalty)
    fit = hinge_l21_admm(X, Y, 1.0, 0.5, penalty=penalty, tol=0.0, max_iter=max_iter)
    assert not fit.converged and fit.n_iter == max_iter
    P = J(X, Y, fit.W, fit.b, 1.0, 0.5, penalty)
    assert P - value <= fit.gap * P + 1e-7 * value
    assert np.all(fit.dual <= value * (1 + 1e-8))  # every recorded bound lies below the minimum


@pytest.mark.parametrize("penalty", ["l21", "l21_squared"])
def test_the_dual_bound_is_the_written_out_dual_at_random_points(penalty):
    X, _, Y = problem(50, 8, seed=4)
    C, lam = 0.8, 0.6
    value, _, _ = cvx_primal(X, Y, C, lam, penalty)
    rng = np.random.default_rng(5)
    for _ in range(6):
        alpha = C * rng.random(Y.shape) * (rng.random(Y.shape) < 0.5)
        AY = alpha * Y
        D, t = hinge_l21_dual_bound(X.T @ AY, AY.sum(axis=0), alpha.sum(), lam, penalty)
        assert 0 < t <= 1
        assert D == pytest.approx(written_out_bound(X, Y, alpha, lam, penalty), rel=1e-6, abs=1e-9)
        assert D <= value


@pytest.mark.parametrize("penalty", ["l21", "l21_squared"])
def test_strong_duality_of_the_written_out_dual(penalty):
    X, _, Y = problem(60, 9, seed=6)
    primal, _, _ = cvx_primal(X, Y, 1.0, 0.4, penalty)
    dual, _ = cvx_dual(X, Y, 1.0, 0.4, penalty)
    assert dual == pytest.approx(primal, rel=1e-6)


@pytest.mark.parametrize("t", [0.01, 0.3, 2.0, 50.0])
def test_the_prox_of_the_squared_norm_is_cvxpys(t):
    A = np.random.default_rng(7).standard_normal((12, 3)) * np.linspace(0.1, 3, 12)[:, None]
    V = cp.Variable(A.shape)
    prob = cp.Problem(cp.Minimize(t / 2 * cp.square(cp.sum(cp.norm(V, 2, axis=1))) + 0.5 * cp.sum_squares(V - A)))
    prob.solve(solver="CLARABEL")
    np.testing.assert_allclose(_prox(A, t, "l21_squared"), V.value, atol=1e-6)


@pytest.mark.parametrize(("n", "d", "fit_intercept"), [(50, 20, True), (30, 60, True), (30, 60, False)])
def test_the_w_update_solves_its_normal_equations(n, d, fit_intercept):
    X, _, _ = problem(n, d, seed=8)
    rng = np.random.default_rng(9)
    top, last = rng.standard_normal((d, 3)), rng.standard_normal(3)
    design = _Design(X, 0.7, fit_intercept)
    design.refactor(0.25)
    W, b = design.solve(top, last)
    Xa = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    K = Xa.T @ Xa + np.diag([0.7] * d + ([4.0] if fit_intercept else []))
    reference = np.linalg.solve(K, np.vstack([top, last]) if fit_intercept else top)
    np.testing.assert_allclose(W, reference[:d], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b, reference[d] if fit_intercept else 0.0, atol=1e-10)


def test_bad_arguments_are_refused():
    X, _, Y = problem(30, 5)
    with pytest.raises(ValueError, match="penalty"):
        hinge_l21_admm(X, Y, 1.0, 0.5, penalty="l1")
    with pytest.raises(ValueError, match="positive"):
        hinge_l21_admm(X, Y, 1.0, 0.0)


# ----------------------------------------------------------------------------- through the selectors
@pytest.mark.parametrize(("name", "params"), [("l21svm", {}), ("sl21", {}), ("sl2p", {"p": 1})])
def test_auto_runs_admm_for_more_samples_than_features(name, params):
    X, y, _ = problem(150, 12, seed=10)
    tall = make_selector(name, {"n_features_to_select": 5, **params}).fit(X, y)
    wide = make_selector(name, {"n_features_to_select": 5, **params}).fit(X[:10], y[:10])
    cs = make_selector(name, {"n_features_to_select": 5, "loss": "crammer_singer", **params}).fit(X, y)
    assert tall.diagnostics_["solver"] == "admm" and tall.diagnostics_["converged"]
    assert tall.diagnostics_["duality_gap"] <= 1e-5
    assert wide.diagnostics_["solver"] == "reweighted" and cs.diagnostics_["solver"] == "reweighted"
    assert tall.n_iter_ == 10 * tall.objective_.size


def test_sl2p_beyond_p_1_keeps_the_reweighting():
    X, y, _ = problem(150, 12, seed=10)
    assert make_selector("sl2p", {"p": 2}).fit(X, y).diagnostics_["solver"] == "reweighted"


@pytest.mark.parametrize(("name", "penalty"), [("l21svm", "l21"), ("sl21", "l21_squared")])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_selectors_with_admm_give_the_weights_of_cvxpy(name, penalty, fit_intercept):
    X, y, Y = problem(120, 10, seed=11)
    C = 0.2
    lam = 0.5 if name == "l21svm" else 10**-0.5  # sl21: lam = d^-C_scale, C_scale 0.5
    value, W_cvx, b_cvx = cvx_primal(X, Y, C, lam, penalty, fit_intercept)
    est = make_selector(name, {"n_features_to_select": 4, "C": C, "solver": "admm", "tol": 1e-9,
                               "fit_intercept": fit_intercept}).fit(X, y)
    assert J(X, Y, est.coef_, est.intercept_, C, lam, penalty) <= value * (1 + 1e-8)
    np.testing.assert_allclose(est.coef_, W_cvx, atol=1e-4)
    np.testing.assert_allclose(est.intercept_, b_cvx, atol=1e-4)
    norms = np.linalg.norm(est.coef_, axis=1)
    expected = norms if name == "l21svm" else norms / norms.sum()  # SL21's theta (eq. 12, p = 1)
    np.testing.assert_allclose(est.scores_, expected)
    # the recorded J ends at the returned weights' J, and the gap certifies it
    assert est.objective_[-1] == pytest.approx(J(X, Y, est.coef_, est.intercept_, C, lam, penalty), rel=1e-12)
    assert est.diagnostics_["duality_gap"] <= 1e-9


@pytest.mark.parametrize("name", ["l21svm", "sl21"])
def test_admm_and_the_reweighting_reach_the_same_weights(name):
    X, y, _ = problem(140, 10, seed=12)
    common = {"n_features_to_select": 4, "C": 0.5}
    admm = make_selector(name, {**common, "solver": "admm", "tol": 1e-10}).fit(X, y)
    reweighted = make_selector(name, {**common, "solver": "ip", "tol": 1e-12, "max_iter": 2000}).fit(X, y)
    assert reweighted.diagnostics_["solver"] == "reweighted"
    J_admm, J_rw = admm.objective_.min(), reweighted.objective_[-1]
    assert J_admm <= J_rw * (1 + 1e-8)  # certified: ADMM's J is no higher than the reweighting's
    assert J_rw <= J_admm * (1 + 1e-5)
    np.testing.assert_allclose(admm.coef_, reweighted.coef_, atol=2e-3)
    nonzero = np.linalg.norm(admm.coef_, axis=1) > 1e-3
    np.testing.assert_array_equal(admm.ranking_[: nonzero.sum()], reweighted.ranking_[: nonzero.sum()])


@pytest.mark.parametrize(("name", "penalty", "lam"), [("l21svm", "l21", 0.5), ("sl21", "l21_squared", 24**-0.5)])
def test_zero_rows_are_ranked_by_how_near_an_optimal_dual_point_puts_them_to_entering(name, penalty, lam):
    X, y, Y = problem(160, 24, seed=13)
    C = 0.02 if name == "l21svm" else 0.01
    dual, _ = cvx_dual(X, Y, C, lam, penalty)
    primal, _, _ = cvx_primal(X, Y, C, lam, penalty)
    assert dual == pytest.approx(primal, rel=1e-6)  # strong duality: the written-out dual is the problem's
    est = make_selector(name, {"n_features_to_select": 4, "C": C, "solver": "admm", "tol": 1e-10}).fit(X, y)
    fit = hinge_l21_admm(X, Y, C, lam, penalty=penalty, tol=1e-10)
    np.testing.assert_allclose(fit.W, est.coef_, rtol=1e-8, atol=1e-12)  # the selector's fit, to round-off
    # ADMM's dual point is optimal: the written-out dual at it reaches cvxpy's minimum
    assert np.all((fit.alpha >= 0) & (fit.alpha <= C))
    assert written_out_bound(X, Y, fit.alpha, lam, penalty) >= primal * (1 - 1e-7)
    norms = np.linalg.norm(est.coef_, axis=1)
    zero, nonzero = np.flatnonzero(norms == 0), np.flatnonzero(norms > 0)
    assert 3 <= zero.size <= 21
    assert set(est.ranking_[: nonzero.size]) == set(nonzero)
    tail = est.ranking_[nonzero.size:]
    closeness = np.linalg.norm(X.T @ (fit.alpha * Y), axis=1)[tail]
    assert np.all(np.diff(closeness) <= 1e-12 * closeness.max()), np.round(closeness, 6)
    assert not np.array_equal(tail, np.sort(tail))  # the order is the dual's, not the index order


def test_the_hinges_optimal_dual_need_not_be_unique():
    """Why the tail is ADMM's optimal dual point's order and not the problem's: here cvxpy's and ADMM's
    dual points are both optimal, differ, and order the zero rows differently."""
    X, _, Y = problem(160, 24, seed=13)
    C, lam = 0.02, 0.5
    dual, alpha = cvx_dual(X, Y, C, lam, "l21")
    fit = hinge_l21_admm(X, Y, C, lam, tol=1e-10)
    assert written_out_bound(X, Y, fit.alpha, lam, "l21") >= dual * (1 - 1e-7)
    assert np.abs(fit.alpha - alpha).max() > 0.1 * C


def test_a_zero_optimum_warns_and_still_ranks_by_the_dual():
    X, y, Y = problem(100, 8, seed=14)
    C = 1e-4
    with pytest.warns(DegenerateWeightsWarning, match="W = 0"):
        est = make_selector("l21svm", {"n_features_to_select": 3, "C": C, "solver": "admm", "tol": 1e-10}).fit(X, y)
    assert not est.coef_.any()
    _, alpha = cvx_dual(X, Y, C, 0.5, "l21")
    closeness = np.linalg.norm(X.T @ (alpha * Y), axis=1)[est.ranking_]
    assert np.all(np.diff(closeness) <= 1e-5 * closeness.max())
    assert not np.array_equal(est.ranking_, np.arange(8))


@pytest.mark.parametrize("name", ["l21svm", "sl21"])
def test_admm_out_of_iterations_warns_with_its_gap(name):
    X, y, _ = problem(200, 15, seed=15)
    with pytest.warns(ConvergenceWarning, match=r"\(ADMM\) stopped at a relative duality gap"):
        est = make_selector(name, {"solver": "admm", "max_iter": 1, "tol": 1e-12}).fit(X, y)
    assert not est.diagnostics_["converged"] and est.n_iter_ == 250


@pytest.mark.parametrize(("name", "params", "match"), [
    ("l21svm", {"loss": "crammer_singer"}, r"one-vs-rest hinge loss only; set loss: ovr"),
    ("sl2p", {"p": 2}, r"convex problem only \(p = 1, SL21\)"),
    ("sl21", {"inner_tol": 1e-6}, r"inner_tol=1e-06 .* no effect with solver='admm'"),
])
def test_admm_where_it_does_not_apply_is_refused_in_one_sentence(name, params, match):
    X, y, _ = problem(30, 5)
    with pytest.raises(InvalidParameterError, match=match):
        make_selector(name, {"solver": "admm", **params}).fit(X, y)


def test_an_admm_fit_gives_no_objective_trace():
    from fsbench.engine.traces import _fit_trace

    X, y, _ = problem(120, 10, seed=16)
    objective, _, _ = _fit_trace("l21svm", {}, X, y, 5, 0, 1)
    assert objective.size == 0  # ADMM ran (n > d): its J need not decrease
    objective, _, _ = _fit_trace("l21svm", {"solver": "ip"}, X, y, 5, 0, 1)
    assert objective.size > 1


def test_sl21s_negligible_weights_warn():
    """The square of the l2,1 norm has a zero gradient at 0, so W = 0 is not SL21's optimum while a
    margin is violated; at a tiny C on small-valued data its weights are negligible, and the fit says so."""
    X, y, _ = problem(100, 8, seed=14)
    X = 0.01 * X
    with pytest.warns(DegenerateWeightsWarning, match="negligible"):
        est = make_selector("sl21", {"n_features_to_select": 3, "C": 1e-8, "C_scale": 0, "solver": "admm",
                                     "tol": 1e-8}).fit(X, y)
    assert est.diagnostics_["w_negligible"] and np.abs(X @ est.coef_).max() < 1e-6
    assert est.coef_.any()  # not zero: the penalty's square is flat at 0
