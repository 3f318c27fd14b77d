"""SL2P / SL21 (Xu, Nie & Han 2017) against independent computations.

Monotonicity allowance: every SVM step is solved to a certified relative duality gap
``inner_tol`` (1e-8 here), and J_t <= J_{t-1} + gap_t with gap_t <= inner_tol * (SVM primal)
<= inner_tol * J_{t-1} (1 + inner_tol); the tests allow 2 * inner_tol * J_{t-1} plus 1e-13
relative for round-off in J itself.
"""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest
from conftest import fit_quiet, random_problem, signed
from sklearn.base import clone

from fsbench.selectors import get_selector, make_selector
from fsbench.selectors._svm import DegenerateWeightsWarning

INNER_TOL = 1e-8


pytestmark = pytest.mark.usefixtures("one_blas_thread")


def eq5_objective_loops(X, y, c, theta, W_eff, b, p, C, C_scale, loss):
    """The normalized objective (eq. 5 / 8) written out with loops over k, i, v."""
    n, d = X.shape
    norm = d ** (C_scale * p)
    W5 = np.empty_like(W_eff)  # the paper's W of eq. 5: W_eff = theta^(p/2) W5
    for v in range(d):
        W5[v] = W_eff[v] / theta[v] ** (p / 2)
    reg = 0.0
    for v in range(d):
        for k in range(c):
            reg += W5[v, k] ** 2
    f = np.zeros((n, c))
    for i in range(n):
        for k in range(c):
            f[i, k] = sum(theta[v] ** (p / 2) * W5[v, k] * X[i, v] for v in range(d)) + b[k]
    total = 0.0
    for i in range(n):
        if loss == "ovr":
            for k in range(c):
                yk = 1.0 if y[i] == k else -1.0
                total += max(0.0, 1.0 - yk * f[i, k])
        else:
            total += max(0.0, max(1.0 + f[i, k] - f[i, y[i]] for k in range(c) if k != y[i]))
    return reg / (2 * norm) + 0.5 * float(b @ b) + C * total


# --------------------------------------------------------------------------------------------
# Theorem 2: the objective never increases (up to the inner solver's certified gap)

SWEEP = list(
    itertools.product([(14, 30, 3), (24, 8, 4), (12, 12, 2)], [1.0, 1.5, 2.0, 3.0], [0, 1, 2])
)


@pytest.mark.parametrize(("shape", "p", "seed"), SWEEP)
def test_objective_never_increases(shape, p, seed):
    n, d, c = shape
    X, y = random_problem(n, d, c, seed, informative=2)
    loss = "crammer_singer" if seed == 2 else "ovr"
    est = fit_quiet(
        "sl2p",
        X,
        y,
        p=p,
        C=[0.1, 1.0, 10.0][seed],
        loss=loss,
        tol=1e-9,
        max_iter=40,
        inner_tol=INNER_TOL,
        solver="ip",  # the reweighting (Theorem 2), also where samples outnumber features
    )
    J = est.objective_
    assert J.size == est.n_iter_ >= 2
    assert np.all(np.isfinite(J))
    allowance = 2 * INNER_TOL * J[:-1] + 1e-13 * np.abs(J[:-1])
    assert np.all(J[1:] <= J[:-1] + allowance), np.max((J[1:] - J[:-1]) / J[:-1])
    assert est.diagnostics_["max_inner_gap"] <= INNER_TOL
    assert J[-1] < J[0]  # it does make progress


# --------------------------------------------------------------------------------------------
# eq. 12 and the identity behind eq. 13


def test_theta_update_is_the_closed_form_and_on_the_simplex():
    X, y = random_problem(16, 20, 3, 0, informative=3)
    for p in (1.0, 2.0, 3.5):
        est = fit_quiet("sl2p", X, y, p=p, max_iter=6)
        h = (est.coef_**2).sum(axis=1)  # ||w^v||^2 of the effective weights
        theta = h ** (1 / (1 + p)) / np.sum(h ** (1 / (1 + p)))  # eq. 12
        np.testing.assert_allclose(est.theta_, theta, rtol=1e-9, atol=1e-300)
        assert est.theta_.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(est.theta_ >= 0)
        np.testing.assert_array_equal(est.scores_, est.theta_)


def test_theta_closed_form_minimizes_the_weighted_sum_on_the_simplex():
    # Lagrangian solution of eq. 9-11 checked against random points of the simplex
    rng = np.random.default_rng(3)
    h = rng.random(7) ** 3
    for p in (1.0, 2.0, 4.0):
        theta = h ** (1 / (1 + p)) / np.sum(h ** (1 / (1 + p)))
        best = np.sum(h / theta**p)
        others = rng.dirichlet(np.ones(7), size=2000)
        assert np.all(np.sum(h / others**p, axis=1) >= best * (1 - 1e-12))
        # the DESIGN.md identity: min = (sum_v ||w^v||^(2/(1+p)))^(1+p)
        assert best == pytest.approx(np.sum(h ** (1 / (1 + p))) ** (1 + p), rel=1e-12)


@pytest.mark.parametrize(("p", "loss"), [(1.0, "ovr"), (2.0, "ovr"), (3.0, "crammer_singer")])
def test_recorded_objective_is_eq5_at_the_final_theta_and_eq6(p, loss):
    X, y = random_problem(9, 7, 3, 4, informative=2)
    C, a = 0.7, 0.5
    est = fit_quiet("sl2p", X, y, p=p, C=C, C_scale=a, loss=loss, max_iter=8, solver="ip")  # the reweighting
    eq5 = eq5_objective_loops(X, y, 3, est.theta_, est.coef_, est.intercept_, p, C, a, loss)
    assert est.objective_[-1] == pytest.approx(eq5, rel=1e-9)
    # eq. 6: the squared l_{2, 2/(1+p)} quasi-norm of the effective weights
    q = 2 / (1 + p)
    rows = np.sqrt((est.coef_**2).sum(axis=1))
    reg = np.sum(rows**q) ** (2 / q) / (2 * 7 ** (a * p))
    F = X @ est.coef_ + est.intercept_
    if loss == "ovr":
        fit = C * np.maximum(0, 1 - signed(y, 3) * F).sum()
    else:
        M = F + 1 - F[np.arange(9), y][:, None]
        M[np.arange(9), y] = 0
        fit = C * M.max(axis=1).sum()
    assert est.objective_[-1] == pytest.approx(
        reg + 0.5 * est.intercept_ @ est.intercept_ + fit, rel=1e-9
    )


# --------------------------------------------------------------------------------------------
# p = 1: SL21 and the convex problem 1/2 ||W||_{2,1}^2 + C hinge


def test_sl21_is_sl2p_with_p_1():
    X, y = random_problem(15, 25, 3, 5, informative=3)
    a = fit_quiet("sl2p", X, y, p=1.0, C=0.5, max_iter=30)
    b = fit_quiet("sl21", X, y, C=0.5, max_iter=30)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-12)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    assert "p" not in get_selector("sl21").params
    assert clone(b).get_params()["C"] == 0.5


@pytest.mark.parametrize(
    ("n", "d", "c", "C", "fit_intercept"),
    [(10, 6, 3, 0.3, True), (12, 5, 2, 1.0, True), (9, 8, 3, 0.5, False)],
)
def test_sl21_reaches_the_convex_optimum(n, d, c, C, fit_intercept):
    X, y = random_problem(n, d, c, n + d)
    est = fit_quiet("sl21", X, y, C=C, fit_intercept=fit_intercept, tol=1e-12, max_iter=400)
    W = cp.Variable((d, c))
    b = cp.Variable(c) if fit_intercept else np.zeros(c)
    F = X @ W + (np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C") if fit_intercept else 0)
    objective = (
        cp.square(cp.sum(cp.norm(W, axis=1))) / (2 * np.sqrt(d))  # C_eff = C d^(1/2)
        + (0.5 * cp.sum_squares(b) if fit_intercept else 0)
        + C * cp.sum(cp.pos(1 - cp.multiply(signed(y, c), F)))
    )
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver="CLARABEL")
    assert est.objective_[-1] == pytest.approx(problem.value, rel=1e-4)
    assert est.objective_[-1] >= problem.value * (1 - 1e-6)  # cannot beat the optimum


# --------------------------------------------------------------------------------------------
# rankings and degenerate cases


@pytest.mark.parametrize(
    "params", [dict(p=1.0), dict(p=2.0), dict(p=3.0), dict(p=2.0, loss="crammer_singer")]
)
def test_planted_features_rank_first(params):
    X, y = random_problem(40, 150, 3, 7, informative=6)
    est = fit_quiet("sl2p", X, y, **params, max_iter=60)
    assert set(est.ranking_[:6]) == set(range(6))


def test_all_tied_when_every_feature_is_the_same():
    rng = np.random.default_rng(0)
    y = np.arange(12) % 3
    X = np.repeat(rng.standard_normal((12, 1)) + y[:, None], 10, axis=1)
    est = make_selector("sl2p", dict(p=3.0))
    with pytest.warns(DegenerateWeightsWarning, match="all tied"):
        est.fit(X, y)
    assert est.diagnostics_["all_tied"]
    np.testing.assert_array_equal(est.ranking_, np.arange(10))


def test_zero_data_gives_zero_weights_and_a_warning():
    est = make_selector("sl2p", dict(p=2.0))
    with pytest.warns(DegenerateWeightsWarning):
        est.fit(np.zeros((9, 5)), np.arange(9) % 3)
    assert est.diagnostics_["all_tied"] and est.diagnostics_["w_negligible"]
    assert np.all(est.coef_ == 0)


def test_unscaled_C_with_p_gt_1_and_many_features_is_flagged():
    # as reported: features shrunk by d^(-p/2) and the paper's C give W ~ 0
    X, y = random_problem(10, 4000, 3, 1)
    est = make_selector("sl2p", dict(p=3.0, C=1.0, C_scale=0.0))
    with pytest.warns(DegenerateWeightsWarning, match="negligible"):
        est.fit(X, y)
    assert est.diagnostics_["w_negligible"] and not est.diagnostics_["all_tied"]
    assert np.abs(X @ est.coef_).max() < 1e-6
    scaled = fit_quiet("sl2p", X, y, p=3.0, C=1.0)  # default C_scale = 0.5
    assert not scaled.diagnostics_["w_negligible"]
    assert scaled.diagnostics_["C_effective"] == pytest.approx(4000**1.5)
    assert np.abs(X @ scaled.coef_).max() > 0.5


def test_underflowed_theta_keeps_an_order():
    # p = 8 drives most theta below 1e-308; the ranking still follows log theta, not the index
    X, y = random_problem(20, 60, 3, 3, informative=3)
    est = fit_quiet("sl2p", X, y, p=8.0, tol=0, max_iter=60)
    assert np.sum(est.theta_ == 0) > 50
    assert set(est.ranking_[:3]) == {0, 1, 2}
    assert np.all(np.diff(est.log_theta_[est.ranking_]) <= 0)
    assert not np.array_equal(
        est.ranking_[est.theta_[est.ranking_] == 0],
        np.sort(est.ranking_[est.theta_[est.ranking_] == 0]),
    )


@pytest.mark.parametrize(
    "params", [dict(p=0.5), dict(C=0.0), dict(loss="squared_hinge"), dict(C_scale=-1)]
)
def test_bad_parameters_raise(params):
    X, y = random_problem(9, 4, 3, 0)
    with pytest.raises(ValueError):
        make_selector("sl2p", params).fit(X, y)
