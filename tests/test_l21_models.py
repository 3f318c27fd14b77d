"""ls_l21 and ll_l21: l2,1-penalized least squares and logistic regression.

Every reference is computed here independently of fsbench: scikit-learn's ``MultiTaskLasso`` called
directly, the same convex problems written in cvxpy (Clarabel), the KKT conditions evaluated with
numpy, the closed forms of the smallest penalty that zeros W, and scikit-feature's ``ll_l21``.
"""

from __future__ import annotations

import inspect
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import MultiTaskLasso

from fsbench.fixed_order import column_sums
from fsbench.selectors import make_selector
from fsbench.selectors.ll_l21 import l21_logistic_fit
from fsbench.selectors.ls_l21 import sequential_column_sums

pytestmark = pytest.mark.usefixtures("one_blas_thread")


# ----------------------------------------------------------------------------- references
def problem(n: int = 60, d: int = 15, c: int = 3, seed: int = 0, informative: int = 3, shift: float = 1.5):
    """Gaussian features, balanced labels; feature j < informative shifted in class j % c."""
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % c)
    X = rng.standard_normal((n, d))
    for j in range(informative):
        X[:, j] += shift * (y == j % c)
    return X, y


def indicators(y: np.ndarray) -> np.ndarray:
    return (y[:, None] == np.unique(y)[None, :]).astype(float)


def centred(A: np.ndarray) -> np.ndarray:
    return A - A.mean(axis=0)


def row_norms(A: np.ndarray) -> np.ndarray:
    return np.linalg.norm(A, axis=1)


def ls_alpha_max(X: np.ndarray, y: np.ndarray) -> float:
    """max_j ||x_j^T Y_c||_2 / n, x_j centred: the gradient of 1/(2n)||Y - XW - b||^2 at W = 0."""
    return float(row_norms(centred(X).T @ centred(indicators(y))).max() / X.shape[0])


def ll_lambda_max(X: np.ndarray, y: np.ndarray, loss: str) -> float:
    """At W = 0 the optimal intercept reproduces the class priors pi: the gradient is
    X^T (1 pi^T - T) / m, m = n (softmax) or n c (one-vs-rest)."""
    T = indicators(y)
    n, c = T.shape
    m = n if loss == "multinomial" else n * c
    return float(row_norms(X.T @ (T.mean(axis=0) - T)).max() / m)


def probabilities(Z: np.ndarray, loss: str) -> np.ndarray:
    if loss == "multinomial":
        E = np.exp(Z - Z.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True)
    return 1.0 / (1.0 + np.exp(-Z))


def ll_objective(X, y, W, b, lam, loss):
    T = indicators(y)
    n, c = T.shape
    Z = X @ W + b
    if loss == "multinomial":
        value = (np.log(np.exp(Z).sum(axis=1)) - (Z * T).sum(axis=1)).sum() / n
    else:
        value = np.log1p(np.exp(-(2 * T - 1) * Z)).sum() / (n * c)
    return value + lam * row_norms(W).sum()


def cvxpy_ll(X, y, lam, loss):
    """The ll_l21 problem in cvxpy: (W, b, optimal value)."""
    T = indicators(y)
    n, d = X.shape
    c = T.shape[1]
    W, b = cp.Variable((d, c)), cp.Variable(c)
    Z = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C")
    if loss == "multinomial":
        f = (cp.sum(cp.log_sum_exp(Z, axis=1)) - cp.sum(cp.multiply(T, Z))) / n
    else:
        f = cp.sum(cp.logistic(-cp.multiply(2 * T - 1, Z))) / (n * c)
    prob = cp.Problem(cp.Minimize(f + lam * cp.sum(cp.norm(W, 2, axis=1))))
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return W.value, b.value, prob.value


def cvxpy_ls(X, y, alpha):
    T = indicators(y)
    n, d = X.shape
    c = T.shape[1]
    W, b = cp.Variable((d, c)), cp.Variable(c)
    R = T - X @ W - np.ones((n, 1)) @ cp.reshape(b, (1, c), order="C")
    prob = cp.Problem(cp.Minimize(cp.sum_squares(R) / (2 * n) + alpha * cp.sum(cp.norm(W, 2, axis=1))))
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal"
    return W.value, b.value, prob.value


def expected_ranking(W: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """Non-zero rows by decreasing norm, then zero rows by decreasing gradient norm, then index."""
    norms, g = row_norms(W), row_norms(gradient)
    zero = norms == 0
    nonzero_part = sorted(np.flatnonzero(~zero), key=lambda j: (-norms[j], j))
    zero_part = sorted(np.flatnonzero(zero), key=lambda j: (-g[j], j))
    return np.array(nonzero_part + zero_part, dtype=int)


def skfeature_ll_l21(stop_change: str = "1e-3", max_iter: str = "1000"):
    """scikit-feature 1.2.1's ll_l21.proximal_gradient_descent, with one fix: under numpy 2 it
    raises at its first line-search step (np.inner of a (1, c) and a (c,) array gives a 1-element
    array that ends in a float array's slot), so that term is taken with .item(). Optionally its
    stopping threshold (|F_t - F_(t-1)| < 1e-3) and iteration cap are replaced."""
    import skfeature.function.sparse_learning_based.ll_l21 as peer

    source = inspect.getsource(peer)
    fixed = source.replace("np.inner((C - SC), GC)", "np.inner((C - SC), GC).item()")
    fixed = fixed.replace("< 1e-3:", f"< {stop_change}:").replace("max_iter = 1000", f"max_iter = {max_iter}")
    assert fixed.count(".item()") == 1 and f"< {stop_change}:" in fixed and f"max_iter = {max_iter}" in fixed
    namespace: dict = {"__name__": "skfeature_ll_l21_fixed"}
    exec(compile(fixed, peer.__file__, "exec"), namespace)
    return namespace["proximal_gradient_descent"]


# ----------------------------------------------------------------------------- ls_l21
@pytest.mark.parametrize(("c", "ratio"), [(2, 0.3), (3, 0.1), (4, 0.05)])
def test_ls_l21_is_multitasklasso_called_directly(c, ratio):
    X, y = problem(n=48, d=30, c=c, seed=c)
    sel = make_selector("ls_l21", {"alpha_ratio": ratio, "tol": 1e-8}).fit(X, y)
    assert sel.alpha_max_ == pytest.approx(ls_alpha_max(X, y), rel=1e-12)
    assert sel.alpha_ == pytest.approx(ratio * ls_alpha_max(X, y), rel=1e-12)
    direct = MultiTaskLasso(alpha=sel.alpha_, fit_intercept=True, tol=1e-8, max_iter=100_000).fit(X, indicators(y))
    np.testing.assert_array_equal(sel.coef_, direct.coef_.T)
    np.testing.assert_array_equal(sel.intercept_, direct.intercept_)
    assert sel.n_iter_ == direct.n_iter_
    assert sel.diagnostics_["converged"]
    # the ranking: rows by norm, zero rows by the gradient X_c^T R / n at the solution
    R = centred(indicators(y)) - centred(X) @ direct.coef_.T
    gradient = centred(X).T @ R / X.shape[0]
    assert 0 < sel.diagnostics_["n_nonzero"] < X.shape[1]
    np.testing.assert_array_equal(sel.ranking_, expected_ranking(direct.coef_.T, gradient))
    np.testing.assert_allclose(sel.gradient_norms_, row_norms(gradient), rtol=1e-12)
    np.testing.assert_allclose(sel.scores_, row_norms(direct.coef_.T), rtol=1e-14)


def test_ls_l21_reaches_the_cvxpy_optimum_with_its_support():
    X, y = problem(n=60, d=20, c=3, seed=15, informative=4)
    sel = make_selector("ls_l21", {"alpha_ratio": 0.2, "tol": 1e-10}).fit(X, y)
    W, b, value = cvxpy_ls(X, y, sel.alpha_)
    ours = sel.objective_[-1]
    assert ours == pytest.approx(value, rel=1e-6)
    assert ours <= value * (1 + 1e-9)
    # well posed: every zero row strictly inside its KKT ball, every non-zero row well away from 0
    nonzero = sel.scores_ > 0
    assert sel.gradient_norms_[~nonzero].max() < 0.9 * sel.alpha_
    assert sel.scores_[nonzero].min() > 1e-2
    np.testing.assert_array_equal(row_norms(W) > 1e-6, nonzero)
    np.testing.assert_allclose(sel.coef_, W, atol=1e-4)  # Clarabel: objective to 1e-8, W to ~1e-5


def test_ls_l21_alpha_max_is_where_w_becomes_zero():
    X, y = problem(n=40, d=25, c=3, seed=5)
    amax = ls_alpha_max(X, y)
    Y = indicators(y)
    above = MultiTaskLasso(alpha=amax * (1 + 1e-6), tol=1e-10).fit(X, Y)
    assert np.all(above.coef_ == 0)
    below = MultiTaskLasso(alpha=amax * (1 - 1e-3), tol=1e-12).fit(X, Y)
    first = int(np.argmax(row_norms(centred(X).T @ centred(Y))))
    assert np.flatnonzero(row_norms(below.coef_.T)).tolist() == [first]
    sel = make_selector("ls_l21", {"alpha_ratio": 1 - 1e-3, "tol": 1e-12}).fit(X, y)
    assert np.flatnonzero(sel.scores_).tolist() == [first]
    # at the ratio 1, W = 0 without a fit, and the ranking is that of ||x_j^T Y_c||
    at_max = make_selector("ls_l21", {"alpha_ratio": 1}).fit(X, y)
    assert np.all(at_max.coef_ == 0) and at_max.n_iter_ == 0
    np.testing.assert_array_equal(at_max.ranking_, np.lexsort((np.arange(25), -row_norms(centred(X).T @ centred(Y)))))
    assert at_max.ranking_[0] == sel.ranking_[0] == first


def test_ls_l21_duplicated_columns_share_one_row_and_tie():
    X0, y = problem(n=50, d=12, c=3, seed=6, informative=3)
    # 12 and 14 copy column 0, 13 copies column 5, 15 copies column 10 (a row the penalty zeros)
    X = np.hstack([X0, X0[:, [0, 5]], X0[:, [0, 10]]])
    sel = make_selector("ls_l21", {"alpha_ratio": 0.3, "tol": 1e-10}).fit(X, y)
    # the fit on the distinct columns, each row split equally between its copies
    reduced = MultiTaskLasso(alpha=sel.alpha_, tol=1e-10, max_iter=100_000).fit(X0, indicators(y)).coef_.T
    expected = np.vstack([reduced, reduced[[0, 5]], reduced[[0, 10]]])
    expected[[0, 12, 14]] /= 3
    expected[[5, 13]] /= 2
    np.testing.assert_array_equal(sel.coef_, expected)
    assert sel.scores_[0] == sel.scores_[12] == sel.scores_[14] > 0
    assert sel.scores_[5] == sel.scores_[13]
    assert sel.scores_[10] == sel.scores_[15] == 0
    assert sel.gradient_norms_[10] == sel.gradient_norms_[15] > 0  # the zero rows' order: an exact tie
    pos = {j: int(np.flatnonzero(sel.ranking_ == j)[0]) for j in (0, 12, 14, 5, 13, 10, 15)}
    assert pos[12] == pos[0] + 1 and pos[14] == pos[0] + 2 and pos[13] == pos[5] + 1 and pos[15] == pos[10] + 1
    # it is an optimum: the same value as coordinate descent on all columns
    direct = MultiTaskLasso(alpha=sel.alpha_, tol=1e-12, max_iter=100_000).fit(X, indicators(y))
    R = indicators(y) - direct.predict(X)
    value = np.vdot(R, R) / (2 * X.shape[0]) + sel.alpha_ * row_norms(direct.coef_.T).sum()
    assert sel.objective_[-1] == pytest.approx(value, rel=1e-9)


# ----------------------------------------------------------------------------- ll_l21
@pytest.mark.parametrize("loss", ["multinomial", "ovr"])
def test_ll_l21_reaches_the_cvxpy_optimum_with_its_support(loss):
    X, y = problem(n=60, d=15, c=3, seed=1)
    sel = make_selector("ll_l21", {"lambda_ratio": 0.3, "loss": loss, "tol": 1e-10}).fit(X, y)
    assert sel.lambda_max_ == pytest.approx(ll_lambda_max(X, y, loss), rel=1e-12)
    W, b, value = cvxpy_ll(X, y, sel.lambda_, loss)
    ours = ll_objective(X, y, sel.coef_, sel.intercept_, sel.lambda_, loss)
    assert ours == pytest.approx(sel.objective_[-1], rel=1e-12)
    assert ours == pytest.approx(value, rel=1e-6)
    assert sel.diagnostics_["converged"] and sel.duality_gap_ <= 1e-10
    nonzero = sel.scores_ > 0
    assert 0 < nonzero.sum() < X.shape[1]
    assert sel.gradient_norms_[~nonzero].max() < 0.95 * sel.lambda_  # well posed
    assert sel.scores_[nonzero].min() > 1e-2
    np.testing.assert_array_equal(row_norms(W) > 1e-5, nonzero)
    np.testing.assert_allclose(sel.coef_, W, atol=1e-4)


@pytest.mark.parametrize(("loss", "c", "ratio"), [("multinomial", 3, 0.2), ("multinomial", 2, 0.1),
                                                  ("ovr", 4, 0.15), ("ovr", 2, 0.3)])
def test_ll_l21_kkt_conditions_hold_at_the_solution(loss, c, ratio):
    X, y = problem(n=64, d=40, c=c, seed=10 + c, informative=6)
    sel = make_selector("ll_l21", {"lambda_ratio": ratio, "loss": loss, "tol": 1e-12}).fit(X, y)
    T = indicators(y)
    m = X.shape[0] if loss == "multinomial" else X.size // X.shape[1] * c
    P = probabilities(X @ sel.coef_ + sel.intercept_, loss)
    grad = X.T @ (P - T) / m
    lam = sel.lambda_
    norms = row_norms(sel.coef_)
    zero = norms == 0
    assert zero.any() and (~zero).any()
    np.testing.assert_allclose((P - T).sum(axis=0) / m, 0, atol=1e-12)  # the intercept is optimal
    assert np.all(row_norms(grad[zero]) <= lam * (1 + 1e-9))
    direction = sel.coef_[~zero] / norms[~zero, None]
    np.testing.assert_allclose(grad[~zero], -lam * direction, atol=1e-6 * lam)
    np.testing.assert_array_equal(sel.ranking_, expected_ranking(sel.coef_, grad))
    np.testing.assert_allclose(sel.gradient_norms_, row_norms(grad), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("loss", ["multinomial", "ovr"])
def test_ll_l21_lambda_max_is_where_w_becomes_zero(loss):
    X, y = problem(n=45, d=20, c=3, seed=3)
    lmax = ll_lambda_max(X, y, loss)
    W_above, _, _ = cvxpy_ll(X, y, lmax * (1 + 1e-4), loss)
    assert row_norms(W_above).max() < 1e-5  # Clarabel's zero
    T = indicators(y)
    first = int(np.argmax(row_norms(X.T @ (T.mean(axis=0) - T))))
    below = make_selector("ll_l21", {"lambda_ratio": 0.99, "loss": loss, "tol": 1e-12}).fit(X, y)
    assert np.flatnonzero(below.scores_).tolist() == [first]
    W_below, _, _ = cvxpy_ll(X, y, below.lambda_, loss)
    np.testing.assert_allclose(below.coef_, W_below, atol=1e-4)
    assert row_norms(W_below)[first] > 1e-2
    at_max = make_selector("ll_l21", {"lambda_ratio": 1, "loss": loss}).fit(X, y)
    assert np.all(at_max.coef_ == 0) and at_max.n_iter_ == 0
    np.testing.assert_allclose(at_max.intercept_ - at_max.intercept_.mean(),
                               (np.log(T.mean(0)) - np.log(T.mean(0)).mean()) if loss == "multinomial"
                               else np.log(T.mean(0) / (1 - T.mean(0))) - np.log(T.mean(0) / (1 - T.mean(0))).mean())
    gradient0 = row_norms(X.T @ (T.mean(axis=0) - T))
    np.testing.assert_array_equal(at_max.ranking_, np.lexsort((np.arange(20), -gradient0)))


def test_ll_l21_solves_skfeatures_problem_with_loss_ovr():
    """scikit-feature's ll_l21 minimizes the ovr loss with z = lambda: run past its own stopping
    rule (threshold 0, its 1000 iterations), its W is fsbench's; with its rule (|F_t - F_(t-1)| <
    1e-3) it stops above fsbench's certified optimum."""
    X, y = problem(n=60, d=15, c=3, seed=2)
    sel = make_selector("ll_l21", {"lambda_ratio": 0.2, "loss": "ovr", "tol": 1e-12}).fit(X, y)
    W, obj, _ = skfeature_ll_l21(stop_change="0")(X, y, sel.lambda_, mode="raw")
    np.testing.assert_allclose(W, sel.coef_, atol=1e-6)
    assert obj[np.flatnonzero(obj)[-1]] == pytest.approx(sel.objective_[-1], rel=1e-9)
    np.testing.assert_array_equal(row_norms(W) > 1e-8, sel.scores_ > 0)
    W_rule, obj_rule, _ = skfeature_ll_l21()(X, y, sel.lambda_, mode="raw")
    last = obj_rule[np.flatnonzero(obj_rule)[-1]]
    assert last > sel.objective_[-1] * (1 + 1e-6)
    # the multinomial loss is a different problem: its optimum is not the peer's
    multi = make_selector("ll_l21", {"lambda_ratio": 0.2, "tol": 1e-12}).fit(X, y)
    assert np.abs(multi.coef_ - W).max() > 1e-2


def test_ll_l21_duplicated_columns_share_one_row_and_tie():
    X0, y = problem(n=50, d=12, c=3, seed=7)
    X = np.hstack([X0, X0[:, [1]], X0[:, [1]], X0[:, [9]]])  # 12, 13 copy column 1; 14 copies 9
    sel = make_selector("ll_l21", {"lambda_ratio": 0.1, "tol": 1e-12}).fit(X, y)
    reduced = make_selector("ll_l21", {"lambda_ratio": 0.1, "tol": 1e-12}).fit(X0, y)
    assert sel.lambda_ == pytest.approx(reduced.lambda_, rel=1e-12)
    np.testing.assert_allclose(sel.coef_[[1, 12, 13]], np.tile(reduced.coef_[1] / 3, (3, 1)), atol=1e-7)
    assert sel.scores_[1] == sel.scores_[12] == sel.scores_[13]
    assert sel.scores_[9] == sel.scores_[14]
    assert sel.gradient_norms_[9] == sel.gradient_norms_[14]
    pos = {j: int(np.flatnonzero(sel.ranking_ == j)[0]) for j in (1, 12, 13, 9, 14)}
    assert pos[12] == pos[1] + 1 and pos[13] == pos[1] + 2 and pos[14] == pos[9] + 1
    W, _, value = cvxpy_ll(X, y, sel.lambda_, "multinomial")
    assert sel.objective_[-1] == pytest.approx(value, rel=1e-6)


# ----------------------------------------------------------------------------- both
@pytest.mark.parametrize("name", ["ls_l21", "ll_l21"])
def test_constant_features_rank_last_by_index(name):
    X, y = problem(n=40, d=10, c=3, seed=8)
    X[:, 2] = 0.7
    X[:, 6] = -3.0
    sel = make_selector(name, {}).fit(X, y)
    assert sel.scores_[2] == sel.scores_[6] == 0
    assert sel.gradient_norms_[2] == sel.gradient_norms_[6] == 0
    assert sel.ranking_[-2:].tolist() == [2, 6]


@pytest.mark.parametrize("name", ["ls_l21", "ll_l21"])
@pytest.mark.parametrize(("n", "d", "c"), [(20, 200, 2), (30, 80, 4), (12, 5, 3)])
def test_edge_shapes_give_a_full_permutation(name, n, d, c):
    rng = np.random.default_rng(n + d)
    y = np.r_[np.zeros(2, int), rng.permutation(np.arange(n - 2) % c)]  # class 0 may have 2 samples only
    y[:2] = 0
    X = rng.standard_normal((n, d))
    X[:, 0] += y
    sel = make_selector(name, {"n_features_to_select": min(d, 10)}).fit(X, y)
    assert sorted(sel.ranking_.tolist()) == list(range(d))
    assert sel.diagnostics_["converged"]
    again = make_selector(name, {"n_features_to_select": min(d, 10)}).fit(X.copy(), y.copy())
    np.testing.assert_array_equal(sel.ranking_, again.ranking_)
    np.testing.assert_array_equal(sel.scores_, again.scores_)


@pytest.mark.parametrize("name", ["ls_l21", "ll_l21"])
def test_every_feature_constant_gives_zero_weights_ranked_by_index(name):
    X = np.tile([1.0, 2.0, 2.0, -4.0], (12, 1))
    y = np.arange(12) % 3
    sel = make_selector(name, {"n_features_to_select": 2}).fit(X, y)
    assert np.all(sel.coef_ == 0)
    assert sel.ranking_.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(("name", "params"), [("ls_l21", {"alpha_ratio": 0.01}),
                                              ("ll_l21", {"lambda_ratio": 0.01, "tol": 1e-10})])
def test_the_iteration_cap_warns_and_says_so(name, params):
    X, y = problem(n=40, d=60, c=3, seed=9)
    with pytest.warns(ConvergenceWarning, match=name):
        sel = make_selector(name, {**params, "max_iter": 2}).fit(X, y)
    assert sel.diagnostics_["converged"] is False
    assert sel.n_iter_ == 2
    assert sorted(sel.ranking_.tolist()) == list(range(60))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ok = make_selector(name, params).fit(X, y)
    assert ok.diagnostics_["converged"] is True


def test_l21_logistic_fit_objective_never_ends_above_its_start():
    X, y = problem(n=40, d=30, c=3, seed=11)
    T = indicators(y)
    Xc = centred(X)
    fit = l21_logistic_fit(Xc, T, 0.2 * ll_lambda_max(X, y, "multinomial"), tol=1e-9)
    start = ll_objective(Xc, y, np.zeros((30, 3)), np.log(T.mean(axis=0)), 0.0, "multinomial")
    assert fit.converged and fit.objective[-1] < start
    assert fit.objective[-1] == pytest.approx(fit.objective.min(), rel=1e-12)


@pytest.mark.parametrize(("n", "d"), [(1, 5), (50, 300), (1001, 3)])
def test_sequential_column_sums_is_the_fixed_order_sum_bit_for_bit(n, d):
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-8, 8, size=(n, d))
    loop = np.array([float(sum(A[1:, j].tolist(), A[0, j])) for j in range(d)])  # left to right
    np.testing.assert_array_equal(sequential_column_sums(A), loop)
    np.testing.assert_array_equal(sequential_column_sums(A), column_sums(A))
