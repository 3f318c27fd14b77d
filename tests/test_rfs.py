"""RFS (Nie et al. 2010) against independent computations.

Oracles: a literal loop implementation of the paper's Algorithm 1 written here (dense
A = [X, gamma I], explicit D^-1, numpy inverse) and the duality-gap certificate computed from its
iterates here, cvxpy's optimum of the convex eq. 10 (and of its dual problem), the paper's
Theorem 1 (monotone objective) as a property, and planted problems.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from fsbench.selectors import make_selector
from fsbench.selectors.rfs import RFS, rfs_fit


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


def algorithm1_certificate(X, Y, gamma, tol, max_iter):
    """The literal Algorithm 1 with the stopping rule computed here from its own iterates.

    Lambda = (A D^-1 A^T)^-1 Y; A^T Lambda scaled to rows of norm <= 1 is dual feasible, so
    D_t = gamma Tr(Lambda^T Y) / max_i ||(A^T Lambda)^i|| bounds min J from below. Returns the
    first iteration t with J(W_t) - max_(s<=t) D_s <= tol max_(s<=t) D_s and that gap.
    """
    n, d = X.shape
    A = np.hstack([X, gamma * np.eye(n)])
    D_inv = np.eye(n + d)
    best = 0.0
    for t in range(1, max_iter + 1):
        Lam = np.linalg.inv(A @ D_inv @ A.T) @ Y
        U = D_inv @ A.T @ Lam
        D_inv = np.diag(2.0 * np.linalg.norm(U, axis=1))
        scale = np.linalg.norm(A.T @ Lam, axis=1).max()
        best = max(best, gamma * np.sum(Lam * Y) / scale)
        gap = (J(X, Y, U[:d], gamma) - best) / best
        if gap <= tol:
            return t, gap
    raise AssertionError(f"no certificate within {max_iter} iterations")


def cvxpy_optimum(X, Y, gamma):
    """min J by cvxpy (Clarabel, tight tolerances): J of its W (an upper bound on min J)."""
    cp = pytest.importorskip("cvxpy")
    W = cp.Variable((X.shape[1], Y.shape[1]))
    obj = cp.sum(cp.norm(X @ W - Y, 2, axis=1)) + gamma * cp.sum(cp.norm(W, 2, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate" at these tolerances
        cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11,
                                           tol_feas=1e-11, max_iter=500)
    return J(X, Y, W.value, gamma)


def random_small_problem(seed):
    """n = 20..40 samples, d = 5..30 features, c = 2..4 classes, gamma log-uniform in [0.01, 10]."""
    rng = np.random.default_rng(seed)
    n, d, c = int(rng.integers(20, 41)), int(rng.integers(5, 31)), int(rng.integers(2, 5))
    gamma = float(10 ** rng.uniform(-2, 1))
    X = rng.standard_normal((n, d))
    y = np.arange(n) % c
    rng.shuffle(y)
    return X, y, gamma


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
    sel = RFS(solver="reweighted", gamma=0.7, tol=0.0, max_iter=6, form=form, label_coding=coding).fit(X, y)
    W_ref = algorithm1_literal(X, onehot(y, 3, coding == "pm1"), 0.7, 6)
    assert sel.n_iter_ == 6
    np.testing.assert_allclose(sel.coef_, W_ref, rtol=1e-7, atol=1e-9 * np.abs(W_ref).max())


@pytest.mark.parametrize("seed", range(3))
def test_d_by_d_form_equals_n_by_n_form(seed):
    # More samples than features: the two systems must give the same iterates and objectives.
    X, y = problem(80, 12, 4, seed)
    a = RFS(solver="reweighted", gamma=0.3, tol=0.0, max_iter=25, form="samples").fit(X, y)
    b = RFS(solver="reweighted", gamma=0.3, tol=0.0, max_iter=25, form="features").fit(X, y)
    assert a.n_iter_ == b.n_iter_ == 25
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-10)


@pytest.mark.parametrize("shape", [(15, 40), (40, 10), (20, 20)])
@pytest.mark.parametrize("gamma", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("seed", range(2))
def test_objective_never_increases(shape, gamma, seed):
    X, y = problem(*shape, c=3, seed=seed, scale=[0.1, 1.0, 10.0][seed % 3])
    sel = RFS(solver="reweighted", gamma=gamma, tol=0.0, max_iter=60, label_coding=["onehot", "pm1"][seed]).fit(X, y)
    obj = sel.objective_
    assert obj.shape == (sel.n_iter_,) and sel.n_iter_ > 10
    assert np.all(np.diff(obj) <= 1e-10 * obj[:-1])
    # the recorded value is the objective of the returned W, computed independently here
    Y = onehot(y, 3, pm1=seed == 1)
    assert obj[-1] == pytest.approx(J(X, Y, sel.coef_, gamma), rel=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_default_is_within_1e6_of_cvxpy_optimum(seed):
    # The previous rule (relative decrease of J <= 1e-6) stopped 2.5e-6 to 3.8e-5 above the
    # optimum on every one of these 30 problems.
    X, y, gamma = random_small_problem(seed)
    optimum = cvxpy_optimum(X, onehot(y, y.max() + 1), gamma)
    sel = RFS(gamma=gamma).fit(X, y)
    excess = (J(X, onehot(y, y.max() + 1), sel.coef_, gamma) - optimum) / optimum
    assert -1e-8 <= excess <= 1e-6  # below -1e-8 would mean cvxpy missed its optimum
    assert sel.diagnostics_["converged"] and sel.diagnostics_["duality_gap"] <= sel.tol


@pytest.mark.parametrize("seed,form,coding", [(0, "samples", "onehot"), (1, "features", "onehot"),
                                              (2, "auto", "pm1"), (3, "auto", "onehot"),
                                              (4, "samples", "pm1"), (5, "features", "pm1")])
def test_dual_bound_and_objective_bracket_cvxpy_optimum(seed, form, coding):
    X, y, gamma = random_small_problem(seed + 100)
    if seed == 3:
        X[:, 2] = 0.0  # a zero feature: its row of W is exactly zero throughout
    Y = onehot(y, y.max() + 1, coding == "pm1")
    optimum = cvxpy_optimum(X, Y, gamma)
    fit = rfs_fit(X, Y, gamma, tol=0.0, max_iter=3000, form=form)
    assert fit.objective.size == fit.dual_bound.size == 3000
    assert np.all(fit.dual_bound <= optimum * (1 + 1e-12))
    assert np.all(fit.objective >= optimum * (1 - 1e-9))
    # the bound closes on the optimum: it certifies the answer, not just bounds it
    assert fit.dual_bound.max() >= optimum * (1 - 1e-6)
    assert fit.duality_gap == pytest.approx((J(X, Y, fit.W, gamma) - fit.dual_bound.max())
                                            / fit.dual_bound.max(), rel=1e-9, abs=1e-15)


def test_dual_problem_of_the_docstring_has_the_primal_optimum():
    # max Tr(Lambda^T Y) s.t. ||x_j^T Lambda|| <= 1, gamma ||lambda_i|| <= 1 (rfs_fit), times gamma,
    # equals min J: strong duality for the derivation the certificate rests on.
    cp = pytest.importorskip("cvxpy")
    X, y, gamma = random_small_problem(7)
    Y = onehot(y, y.max() + 1)
    Lam = cp.Variable(Y.shape)
    dual = cp.Problem(cp.Maximize(cp.sum(cp.multiply(Lam, Y))),
                      [cp.norm(X.T @ Lam, 2, axis=1) <= 1, gamma * cp.norm(Lam, 2, axis=1) <= 1])
    dual.solve(solver="CLARABEL")
    assert gamma * dual.value == pytest.approx(cvxpy_optimum(X, Y, gamma), rel=1e-7)


@pytest.mark.parametrize("shape,gamma,tol", [((20, 30), 1.0, 1e-4), ((30, 8), 0.3, 1e-5),
                                             ((25, 25), 3.0, 1e-3)])
def test_stops_at_the_first_certified_iteration(shape, gamma, tol):
    X, y = problem(*shape, c=3, seed=2)
    t_stop, gap = algorithm1_certificate(X, onehot(y, 3), gamma, tol, max_iter=3000)
    sel = RFS(solver="reweighted", gamma=gamma, tol=tol).fit(X, y)
    assert sel.n_iter_ == t_stop
    assert sel.diagnostics_["converged"]
    # J - D is ~tol J, so round-off differences of W (1e-10) show magnified here
    assert sel.diagnostics_["duality_gap"] == pytest.approx(gap, rel=1e-3)


def test_warns_when_max_iter_ends_the_fit_before_tol():
    X, y = problem(20, 30, 3, 0)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        sel = RFS(solver="reweighted", gamma=1.0, max_iter=5).fit(X, y)
    assert sel.n_iter_ == 5 and sel.objective_.shape == (5,)
    assert not sel.diagnostics_["converged"] and sel.diagnostics_["duality_gap"] > sel.tol
    # tol = 0 asks for max_iter iterations: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert RFS(solver="reweighted", gamma=1.0, tol=0.0, max_iter=5).fit(X, y).n_iter_ == 5


@pytest.mark.parametrize("shape,gamma", [((20, 30), 4.0), ((40, 12), 2.0)])
def test_long_runs_agree_across_forms_and_with_literal_algorithm(shape, gamma):
    # After 1500 iterations several rows of W are below 1e-24 of the largest: the fit leaves
    # them out of its linear systems, and with fewer rows kept than samples "auto" solves the
    # d x d system over those rows. The iterates must still be Algorithm 1's.
    X, y = problem(*shape, c=3, seed=5)
    Y = onehot(y, 3)
    W_ref = algorithm1_literal(X, Y, gamma, 1500)
    norms = np.linalg.norm(W_ref, axis=1)
    share = norms * np.sum(X**2, axis=0)
    kept = np.sum(share >= 1e-24 * share.sum())
    assert 3 <= shape[1] - kept and kept < shape[0]
    big = norms > 1e-8 * norms.max()
    order = np.argsort(-norms, kind="stable")[: big.sum()]
    for form in ("samples", "features", "auto"):
        fit = rfs_fit(X, Y, gamma, tol=0.0, max_iter=1500, form=form)
        np.testing.assert_allclose(fit.W[big], W_ref[big], rtol=1e-6, atol=1e-9 * np.abs(W_ref).max())
        np.testing.assert_array_equal(np.argsort(-np.linalg.norm(fit.W, axis=1), kind="stable")[: big.sum()],
                                      order)


def test_zero_feature_keeps_zero_row():
    X, y = problem(20, 30, 3, 4)
    X[:, 7] = 0.0
    sel = RFS(gamma=1.0).fit(X, y)
    assert np.all(sel.coef_[7] == 0.0)
    assert sel.scores_[7] == 0.0
    assert np.all(np.isfinite(sel.coef_))
    # the certificate closes with the zero row (its dual row x_7^T Lambda = 0 is feasible)
    assert sel.diagnostics_["converged"]
    optimum = cvxpy_optimum(X, onehot(y, 3), 1.0)
    assert J(X, onehot(y, 3), sel.coef_, 1.0) <= optimum * (1 + 1e-6)


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
    sel = RFS(solver="reweighted", gamma=0.5, fit_intercept=True, tol=0.0, max_iter=8).fit(X, y)
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
    with pytest.raises(ValueError, match="stop"):
        RFS(stop="fixed").fit(X, y)


# ----------------------------------------------------------------------------- stop="decrease"
# The reference for stop="decrease": rfs.py's fit as fsbench ran it before the certificate (the
# code that computed every committed RFS row), copied verbatim from that file: its two steps, its
# solve and its loop. stop="decrease" with tol 1e-6 and max_iter 1000 must give its iterates bit
# for bit, so that the papers' configs, which pin that rule, describe exactly their committed rows.
def _before_row_norms(A):
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _before_spd_solve(K, B):
    from scipy import linalg

    try:
        return linalg.cho_solve(linalg.cho_factor(K, lower=False, check_finite=False), B,
                                check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(K, B, check_finite=False)[0]


def _before_step_samples(X, Y, gamma, pi_w, pi_e, out=None):
    Xs = np.multiply(X, np.sqrt(pi_w), out=out)
    K = Xs @ Xs.T
    K[np.diag_indices_from(K)] += gamma**2 * pi_e
    Lam = _before_spd_solve(K, Y)
    W = pi_w[:, None] * (X.T @ Lam)
    E = (gamma * pi_e)[:, None] * Lam
    return W, E


def _before_step_features(X, Y, gamma, pi_w, pi_e):
    s = np.sqrt(pi_w)
    r = gamma**2 * pi_e
    Z = (X * s) / np.sqrt(r)[:, None]
    M = Z.T @ Z
    M[np.diag_indices_from(M)] += 1.0
    B = s[:, None] * (X.T @ (Y / r[:, None]))
    W = s[:, None] * _before_spd_solve(M, B)
    E = (Y - X @ W) / gamma
    return W, E


def rfs_fit_before(X, Y, gamma, *, tol=1e-6, max_iter=1000, form="auto"):
    n, d = X.shape
    use_features = form == "features" or (form == "auto" and n > d)
    pi_w, pi_e = np.ones(d), np.ones(n)
    objective = []
    W = np.zeros((d, Y.shape[1]))
    buf = None
    for _ in range(max_iter):
        if use_features and pi_e.min() > 1e-10 * pi_e.max():
            W, E = _before_step_features(X, Y, gamma, pi_w, pi_e)
        else:
            if buf is None:
                buf = np.empty_like(X)
            W, E = _before_step_samples(X, Y, gamma, pi_w, pi_e, out=buf)
        pi_w, pi_e = _before_row_norms(W), _before_row_norms(E)
        objective.append(float(gamma * (pi_e.sum() + pi_w.sum())))
        if len(objective) >= 2 and objective[-2] - objective[-1] <= tol * objective[-2]:
            break
    return W, np.asarray(objective)


PINNED = {"stop": "decrease", "tol": 1e-6, "max_iter": 1000}


@pytest.mark.parametrize("shape,gamma,form,coding,intercept", [
    ((30, 200), 1.0, "auto", "onehot", False),     # n x n form, the microarrays' shape
    ((120, 15), 0.3, "auto", "onehot", False),     # d x d form
    ((40, 40), 2.0, "samples", "pm1", False),
    ((40, 40), 2.0, "auto", "onehot", False),      # n = d: "auto" is the n x n form
    ((60, 20), 0.05, "features", "onehot", True),
    ((25, 300), 30.0, "auto", "onehot", False),    # gamma large: W -> 0, rows fall below 1e-24
])
def test_decrease_rule_computes_the_old_fit_bit_for_bit(shape, gamma, form, coding, intercept):
    X, y = problem(*shape, c=4, seed=11)
    X = (X - X.mean(0)) / X.std(0)
    sel = RFS(gamma=gamma, form=form, label_coding=coding, fit_intercept=intercept, n_features_to_select=10,
              **PINNED).fit(X, y)
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if intercept else X
    W_ref, obj_ref = rfs_fit_before(Xa, onehot(y, 4, coding == "pm1"), gamma, form=form)
    W_ref = W_ref[:-1] if intercept else W_ref
    assert np.array_equal(sel.coef_, W_ref)  # every bit, not within a tolerance
    assert np.array_equal(sel.objective_, obj_ref) and sel.n_iter_ == obj_ref.size < 1000
    norms = np.sqrt(np.einsum("ij,ij->i", W_ref, W_ref))
    assert np.array_equal(sel.ranking_, np.argsort(-norms, kind="stable"))
    # the old rows had no diagnostics (a diag_ column) and no warning: neither has this fit
    assert sel.diagnostics_ == {}
    # it did not certify its stop: it is above the minimum by more than the default gap's tol
    assert sel.duality_gap_ > 0


@pytest.mark.parametrize("shape,gamma,tol,n_iter", [
    ((12, 6), 30.0, 0.0, 19),    # tol 0: stops where J repeats exactly (the rule is <=, not <)
    ((12, 6), 0.5, 0.0, 748),    # d x d form until a residual row falls below 1e-10 of the largest
    ((20, 30), 4.0, 0.5, 2),     # fires at its first chance, iteration 2
])
def test_decrease_rule_stops_where_the_old_fit_stops(shape, gamma, tol, n_iter):
    X, y = problem(*shape, c=2, seed=0)
    Y = onehot(y, 2)
    W_ref, obj_ref = rfs_fit_before(X, Y, gamma, tol=tol, max_iter=5000)
    assert obj_ref.size == n_iter  # the case is the one described
    fit = rfs_fit(X, Y, gamma, stop="decrease", tol=tol, max_iter=5000)
    assert fit.converged
    assert np.array_equal(fit.W, W_ref) and np.array_equal(fit.objective, obj_ref)


def test_decrease_rule_runs_every_row_where_the_certificate_leaves_rows_out():
    # A long run whose rows decay below 1e-24 of the Gram trace: "gap" then solves over the rows
    # kept (iterates equal to round-off), "decrease" keeps every row as the old code did.
    X, y = problem(20, 30, 3, seed=5)
    Y = onehot(y, 3)
    W_ref, obj_ref = rfs_fit_before(X, Y, 4.0, tol=0.0, max_iter=1500)
    fit = rfs_fit(X, Y, 4.0, stop="decrease", tol=0.0, max_iter=1500)
    assert np.array_equal(fit.W, W_ref) and np.array_equal(fit.objective, obj_ref)
    certified = rfs_fit(X, Y, 4.0, stop="gap", tol=0.0, max_iter=obj_ref.size)
    assert not np.array_equal(certified.W, W_ref)  # the pruned system: other round-off
    np.testing.assert_allclose(certified.objective, obj_ref, rtol=1e-9)


def test_default_is_the_certificate_and_the_listing_says_so():
    from click.testing import CliRunner

    from fsbench.cli import main

    X, y = problem(20, 30, 3, 0)
    sel = RFS(gamma=1.0).fit(X, y)
    assert sel.stop == "gap" and sel.diagnostics_["converged"] and sel.diagnostics_["duality_gap"] <= 1e-7
    W_old, _ = rfs_fit_before(X, onehot(y, 3), 1.0)
    assert J(X, onehot(y, 3), sel.coef_, 1.0) < J(X, onehot(y, 3), W_old, 1.0)
    out = CliRunner().invoke(main, ["selectors"]).output
    block = out[out.index("\nrfs "):].split("\nsl21")[0]
    assert "duality gap certifies" in block.splitlines()[1]
    assert "stop: 'decrease' | 'gap', default 'gap'" in block
    assert "tol: float in [0, 1), default 1e-7" in block and "max_iter: int in [1, 1000000], default 50000" in block


@pytest.mark.parametrize("paper,dataset,n_splits", [("rfs", "glioma", 5), ("dso-fs", "ar", 2)])
def test_papers_configs_pin_the_rule_of_their_committed_rows(paper, dataset, n_splits, one_blas_thread):
    # The stored expectations: the committed rankings and iteration counts, computed by the old
    # code. The pinned config's RFS, refitted on those splits, gives both exactly.
    import json
    from pathlib import Path

    import pandas as pd
    from conftest import papers_data

    from fsbench.configuration.parse import load_experiment
    from fsbench.datasets import load
    from fsbench.evaluation.protocol import outer_splits, standardize

    data_dir = papers_data()
    root = Path(__file__).resolve().parents[1]
    experiment = load_experiment(root / "configs" / "papers" / f"{paper}.yaml")
    (sel_cfg,) = [s for s in experiment.selectors if s.name == "rfs"]
    assert {k: sel_cfg.params_dict[k] for k in PINNED} == PINNED
    results = root / "results" / "papers" / paper
    rankings = pd.read_csv(results / "rankings.csv.gz")
    runs = pd.read_csv(results / "runs.csv.gz", dtype={"params": str})
    data = load(dataset, data_dir)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    k_max = max(experiment.n_features)
    for split in outer_splits(y, experiment.protocol, experiment.seed, dataset)[:n_splits]:
        task = (runs.dataset == dataset) & (runs.repeat == split.repeat) & (runs.fold == split.fold)
        row = runs[task & (runs.selector == "rfs")].iloc[0]
        params = {**sel_cfg.params_dict, **json.loads(row["params"])}  # a tuned gamma: the chosen one
        X_train, _ = standardize(X, split.train, split.test, experiment.standardize)
        sel = RFS(n_features_to_select=k_max, **params).fit(X_train, y[split.train])
        mine = rankings[(rankings.dataset == dataset) & (rankings.repeat == split.repeat)
                        & (rankings.fold == split.fold) & (rankings.selector == "rfs")]
        assert sel.ranking_[:k_max].tolist() == mine.sort_values("position")["feature"].tolist()
        assert sel.n_iter_ == int(row["n_iter"])
