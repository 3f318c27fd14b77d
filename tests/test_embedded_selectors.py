"""rf_importance, permutation, rfe and stability_selection against scikit-learn called directly.

Each selector is compared with the scikit-learn computation its docstring names, written out here
with the same seeds: ``RandomForestClassifier.feature_importances_`` (identical),
``permutation_importance`` after ``train_test_split`` (identical means), ``RFE(LinearSVC)``
(identical elimination steps, and within a step the weight criterion of the SVM that step fits),
and a plain loop of ``LogisticRegression`` fits over the half-samples and the lambda grid
(identical frequencies). The tie rules are rebuilt here from scikit-learn's outputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import fit_quiet, random_problem
from numpy.testing import assert_array_equal
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import RFE
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import LinearSVC, l1_min_c

from fsbench.selectors import make_selector, registry

pytestmark = pytest.mark.usefixtures("one_blas_thread")

NAMES = ("rf_importance", "permutation", "rfe", "stability_selection")
#: small settings for the tests' small problems
SMALL = {"rf_importance": {"n_estimators": 30}, "permutation": {"n_estimators": 20, "n_repeats": 3},
         "rfe": {}, "stability_selection": {"n_resamples": 6}}


def forest(T: int, seed: int) -> RandomForestClassifier:
    return RandomForestClassifier(n_estimators=T, max_features="sqrt", random_state=seed, n_jobs=1)


def by_score_then_index(scores: np.ndarray) -> np.ndarray:
    return np.array(sorted(range(scores.size), key=lambda j: (-scores[j], j)))


# ----------------------------------------------------------------------------- rf_importance
@pytest.mark.parametrize(("n", "d", "c", "seed"), [(40, 30, 3, 0), (30, 200, 2, 1), (45, 60, 4, 2)])
def test_rf_importance_is_the_forests_feature_importances(n, d, c, seed):
    X, y = random_problem(n, d, c, seed, informative=4)
    labels = np.array(["wt", "mut", "ko", "ctl"])[y]  # any labels: fsbench codes them in sorted order
    sel = make_selector("rf_importance", {"n_estimators": 40, "random_state": seed}).fit(X, labels)
    imp = forest(40, seed).fit(X, labels).feature_importances_
    assert_array_equal(sel.scores_, imp)
    assert_array_equal(sel.ranking_, by_score_then_index(imp))
    assert sel.diagnostics_["rf_n_used"] == np.count_nonzero(imp)
    if d == 200:  # most features never split on: their ties at 0 go by index, after the used ones
        zeros = np.flatnonzero(imp == 0)
        assert zeros.size > 100
        assert_array_equal(sel.ranking_[-zeros.size:], zeros)


def test_rf_importance_constant_and_duplicated_features():
    X, y = random_problem(36, 12, 3, 3, informative=2)
    X[:, 5] = 0.0
    X[:, 9] = X[:, 0]
    sel = make_selector("rf_importance", {"n_estimators": 60, "random_state": 4}).fit(X, y)
    assert_array_equal(sel.scores_, forest(60, 4).fit(X, y).feature_importances_)
    zeros = np.flatnonzero(sel.scores_ == 0)
    assert 5 in zeros
    assert_array_equal(sel.ranking_[-zeros.size:], zeros)
    # a feature and its copy share the splits between them (the splitter keeps the first drawn)
    assert sel.scores_[0] > 0 and sel.scores_[9] > 0


# ----------------------------------------------------------------------------- permutation
def sklearn_permutation(X, y, seed, T, R, holdout=0.25, stratify=True):
    Xtr, Xh, ytr, yh = train_test_split(X, y, test_size=holdout, stratify=y if stratify else None,
                                        random_state=seed)
    rf = forest(T, seed).fit(Xtr, ytr)
    return rf, permutation_importance(rf, Xh, yh, n_repeats=R, random_state=seed, n_jobs=1), yh.size


def expected_permutation_ranking(rf, result, n_hold):
    """By the mean decrease in exact arithmetic (each importance is (k_0 - k_r) / n_hold, k the
    correct counts), then the forest's impurity importance, then index."""
    counts = result.importances * n_hold
    assert np.abs(counts - np.rint(counts)).max() < 1e-9
    decrease = np.rint(counts).astype(int).sum(axis=1)
    d = decrease.size
    return np.array(sorted(range(d), key=lambda j: (-decrease[j], -rf.feature_importances_[j], j))), decrease


def pure_leaves(rf) -> bool:
    return all(np.all((v == 0) | (v == 1)) for e in rf.estimators_
               for v in [e.tree_.value[e.tree_.children_left < 0]])


@pytest.mark.parametrize(("case", "seed"), [("continuous", 0), ("continuous", 1), ("discrete", 2), ("discrete", 3)])
def test_permutation_equals_sklearn_permutation_importance(case, seed):
    rng = np.random.default_rng(seed)
    if case == "continuous":  # pure leaves: the votes are integers
        X, y = random_problem(48, 25, 3, seed, informative=3)
    else:  # repeated rows with different labels: impure leaves, fractional votes summed in tree order
        y = np.arange(60) % 3
        X = rng.integers(0, 2, size=(60, 4)).astype(float)
        X[:, 0] = np.where(rng.random(60) < 0.6, y, X[:, 0])
    T, R = 15, 4
    sel = make_selector("permutation", {"n_estimators": T, "n_repeats": R, "random_state": seed}).fit(X, y)
    rf, result, n_hold = sklearn_permutation(X, y, seed, T, R)
    assert pure_leaves(rf) == (case == "continuous")
    assert_array_equal(sel.scores_, result.importances_mean)
    ranking, decrease = expected_permutation_ranking(rf, result, n_hold)
    assert_array_equal(sel.ranking_, ranking)
    assert_array_equal(sel.impurity_importances_, rf.feature_importances_)
    assert sel.diagnostics_["permutation_n_holdout"] == n_hold and sel.diagnostics_["permutation_stratified"]
    assert sel.diagnostics_["permutation_accuracy"] == rf.score(*train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=seed)[1::2])
    assert len(set(decrease)) >= 2  # the ranking's first key is used


@pytest.mark.parametrize("case", ["continuous", "discrete"])
def test_permutation_in_small_blocks_is_unchanged(case, monkeypatch):
    """Blocks of features and repeats (here 60 routed rows, or summed terms, at a time: one
    repeat per block on the impure path) give scikit-learn's means too."""
    import fsbench.selectors.forest as forest_module

    rng = np.random.default_rng(4)
    if case == "continuous":
        X, y = random_problem(40, 20, 3, 4, informative=3)
    else:
        y = np.arange(45) % 3
        X = rng.integers(0, 2, size=(45, 4)).astype(float)
        X[:, 0] = np.where(rng.random(45) < 0.6, y, X[:, 0])
    monkeypatch.setattr(forest_module, "_BLOCK", 60)
    sel = make_selector("permutation", {"n_estimators": 8, "n_repeats": 5, "random_state": 4}).fit(X, y)
    rf, result, n_hold = sklearn_permutation(X, y, 4, 8, 5)
    assert pure_leaves(rf) == (case == "continuous")
    assert_array_equal(sel.scores_, result.importances_mean)
    assert_array_equal(sel.ranking_, expected_permutation_ranking(rf, result, n_hold)[0])


def test_permutation_ties_at_zero_go_by_impurity_then_index():
    X, y = random_problem(40, 120, 2, 5, informative=2)
    X[:, 7] = 0.0
    sel = make_selector("permutation", {"n_estimators": 25, "n_repeats": 3, "random_state": 5}).fit(X, y)
    rf, result, n_hold = sklearn_permutation(X, y, 5, 25, 3)
    ranking, decrease = expected_permutation_ranking(rf, result, n_hold)
    assert_array_equal(sel.ranking_, ranking)
    zero = decrease == 0
    # both tie-breaks are exercised: used features tied at 0 (by impurity) and unused ones (by index)
    assert np.count_nonzero(zero & (rf.feature_importances_ > 0)) >= 2
    assert np.count_nonzero(zero & (rf.feature_importances_ == 0)) >= 2
    assert sel.scores_[7] == 0.0 and sel.impurity_importances_[7] == 0.0


@pytest.mark.parametrize("counts", [(15, 14, 1), (3, 3, 3, 3, 3)])
def test_permutation_falls_back_to_a_plain_split(counts):
    """A class of one sample, or a hold-out smaller than the number of classes (15 samples, 5
    classes: 4 held out): scikit-learn cannot stratify; the split is train_test_split's plain one."""
    y = np.repeat(np.arange(len(counts)), counts)
    X, _ = random_problem(y.size, 10, 2, 6)
    X[:, 0] += y
    sel = make_selector("permutation", {"n_estimators": 10, "n_repeats": 2, "random_state": 6}).fit(X, y)
    rf, result, n_hold = sklearn_permutation(X, y, 6, 10, 2, stratify=False)
    assert not sel.diagnostics_["permutation_stratified"]
    assert_array_equal(sel.scores_, result.importances_mean)
    assert_array_equal(sel.ranking_, expected_permutation_ranking(rf, result, n_hold)[0])


def test_permutation_holdout_size_and_seed_reach_scikit_learn():
    X, y = random_problem(50, 20, 3, 7, informative=3)
    sel = make_selector("permutation", {"n_estimators": 12, "n_repeats": 5, "holdout_size": 0.4,
                                        "random_state": 11}).fit(X, y)
    _, result, n_hold = sklearn_permutation(X, y, 11, 12, 5, holdout=0.4)
    assert n_hold == 20 and sel.diagnostics_["permutation_n_holdout"] == 20
    assert_array_equal(sel.scores_, result.importances_mean)


# ----------------------------------------------------------------------------- rfe
def svm(C=1.0, seed=0):
    return LinearSVC(C=C, loss="hinge", penalty="l2", dual=True, tol=1e-4, max_iter=1000, random_state=seed)


def sklearn_rfe_ranking(X, y, step, C, seed):
    """SVM-RFE's ranking from scikit-learn: RFE's elimination steps (``ranking_``), and within the
    step that removed a group, the group by decreasing criterion sum_k w_kj^2 of the SVM fitted on
    the features alive then (ranking_ <= the group's), equal criteria by decreasing index."""
    rfe = RFE(svm(C, seed), n_features_to_select=1, step=step).fit(X, y)
    order = list(np.flatnonzero(rfe.ranking_ == 1))
    for g in range(2, rfe.ranking_.max() + 1):
        alive = np.flatnonzero(rfe.ranking_ <= g)
        w = clone(svm(C, seed)).fit(X[:, alive], y).coef_
        criterion = dict(zip(alive, (w**2).sum(axis=0), strict=True))
        order += sorted(np.flatnonzero(rfe.ranking_ == g), key=lambda j: (-criterion[j], -j))
    return np.array(order), rfe


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize(("n", "d", "c", "step", "C"), [(30, 25, 3, 1, 1.0), (24, 40, 2, 0.1, 1.0),
                                                       (40, 60, 4, 7, 0.05), (20, 80, 3, 0.25, 10.0)])
def test_rfe_is_sklearn_rfe_with_linear_svc(n, d, c, step, C):
    X, y = random_problem(n, d, c, n + d, informative=3)
    sel = make_selector("rfe", {"step": step, "C": C, "random_state": 3}).fit(X, y)
    expected, rfe = sklearn_rfe_ranking(X, y, step, C, 3)
    assert_array_equal(sel.ranking_, expected)
    # one fit per elimination step; RFE's final refit on the survivor is not needed
    assert sel.diagnostics_["rfe_n_fits"] == rfe.ranking_.max() - 1
    per_step = int(max(1, step * d)) if step < 1 else step
    assert sel.diagnostics_["rfe_n_fits"] == -(-(d - 1) // per_step)
    assert_array_equal(sel.scores_[sel.ranking_], np.arange(d, 0, -1))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rfe_top_k_is_the_support_of_rfe_stopped_at_k():
    X, y = random_problem(30, 50, 3, 8, informative=4)
    sel = make_selector("rfe", {"step": 6, "random_state": 1}).fit(X, y)
    for k in (1, 2, 5, 8, 13, 20, 37):
        support = RFE(svm(seed=1), n_features_to_select=k, step=6).fit(X, y).support_
        assert set(sel.ranking_[:k]) == set(np.flatnonzero(support)), k


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rfe_duplicated_features_tie_and_the_higher_index_ranks_first():
    X, y = random_problem(30, 20, 3, 9, informative=3)
    X[:, 14] = X[:, 1]  # an informative feature and its copy
    X[:, 11] = X[:, 6]  # a noise feature and its copy
    X[:, 3] = 0.0  # constant: zero weight
    w = svm(seed=2).fit(X, y).coef_
    assert_array_equal(w[:, 14], w[:, 1])
    assert_array_equal(w[:, 11], w[:, 6])
    assert np.all(w[:, 3] == 0)
    sel = make_selector("rfe", {"step": 1, "random_state": 2}).fit(X, y)
    expected, rfe = sklearn_rfe_ranking(X, y, 1, 1.0, 2)
    assert_array_equal(sel.ranking_, expected)
    pos = np.argsort(sel.ranking_)
    assert pos[14] < pos[1] and pos[11] < pos[6]  # scikit-learn removes the lower index first
    assert rfe.ranking_[14] < rfe.ranking_[1] and rfe.ranking_[11] < rfe.ranking_[6]
    assert sel.ranking_[-1] == 3  # the constant feature goes first


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rfe_a_constant_column_counts_as_zero():
    """On raw data a constant column of 3s shares the role of LIBLINEAR's penalized intercept and
    gets weight; rfe sets it to 0 first, and then equals scikit-learn's RFE on that data."""
    X, y = random_problem(30, 20, 3, 15, informative=3)
    X[:, 8] = 3.0
    assert np.any(svm(seed=4).fit(X, y).coef_[:, 8] != 0)
    sel = make_selector("rfe", {"step": 3, "random_state": 4}).fit(X, y)
    X0 = X.copy()
    X0[:, 8] = 0.0
    assert_array_equal(sel.ranking_, sklearn_rfe_ranking(X0, y, 3, 1.0, 4)[0])
    assert sel.ranking_[-1] == 8


def test_rfe_one_and_two_features():
    X, y = random_problem(20, 2, 2, 10, informative=1)
    assert_array_equal(make_selector("rfe", {"random_state": 0}).fit(X[:, :1], y).ranking_, [0])
    sel = make_selector("rfe", {"random_state": 0}).fit(X, y)
    w = svm().fit(X, y).coef_[0]
    assert_array_equal(sel.ranking_, [0, 1] if w[0] ** 2 >= w[1] ** 2 else [1, 0])
    assert sel.diagnostics_["rfe_n_fits"] == 1


def test_rfe_counts_unconverged_fits_and_warns_once():
    X, y = random_problem(60, 3, 3, 11)  # labels unrelated to 3 features: LIBLINEAR's dual crawls
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = make_selector("rfe", {"step": 1, "C": 1e6, "random_state": 0}).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = svm(1e6, 0).fit(X, y)  # the first elimination step's fit
    assert first.n_iter_ >= 1000 and sel.diagnostics_["rfe_n_unconverged"] >= 1
    assert sum(issubclass(w.category, ConvergenceWarning) for w in caught) == 1


# ----------------------------------------------------------------------------- stability selection
def plain_stability(X, y, seed, B, L, ratio):
    """The documented procedure as a plain loop: a liblinear seed, then B stratified half-samples
    (max(1, n_k // 2) of each class, drawn by permutation) from RandomState(seed); lambda_max of the
    whole data; one-vs-rest l1-logistic fits (one binary fit for two classes); a column constant on
    the data (for lambda_max) or on the subsample (for its fits) counts as 0."""
    n, d = X.shape
    c = np.unique(y).size
    rng = np.random.RandomState(seed)
    lib_seed = rng.randint(2**31)
    subsamples = []
    for _ in range(B):
        idx = []
        for k in range(c):
            members = np.flatnonzero(y == k)
            idx += list(members[rng.permutation(members.size)[: max(1, members.size // 2)]])
        subsamples.append(np.sort(idx))
    Y = np.where(y[:, None] == np.arange(c), 1.0, -1.0)
    X0 = np.where(X.max(axis=0) == X.min(axis=0), 0.0, X)
    lam = np.abs(Y.T @ X0).max() / (2 * n) * ratio ** (np.arange(1, L + 1) / L)
    counts = np.zeros((L, d), dtype=int)
    for idx in subsamples:
        Xi = X[idx]
        Xi = np.where(Xi.max(axis=0) == Xi.min(axis=0), 0.0, Xi)  # constant on the subsample: 0
        for l_ in range(L):
            lr = LogisticRegression(C=1.0 / (lam[l_] * idx.size), l1_ratio=1.0, solver="liblinear",
                                    random_state=lib_seed)
            model = lr if c == 2 else OneVsRestClassifier(lr)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(Xi, y[idx])
            coef = model.coef_ if c == 2 else np.vstack([e.coef_ for e in model.estimators_])
            counts[l_] += np.any(coef != 0, axis=0)
    return counts, lam


@pytest.mark.parametrize(("sizes", "d", "L", "ratio", "seed"), [((12, 12), 30, 2, 0.1, 0), ((9, 8, 9), 40, 3, 0.2, 1),
                                                           ((10, 2, 8, 9), 60, 2, 0.05, 2)])
def test_stability_selection_equals_a_plain_loop_of_logistic_regressions(sizes, d, L, ratio, seed):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    # integer features: every sum is exact, so lambda_max has the same bits however it is summed
    X = rng.integers(-3, 4, size=(y.size, d)).astype(float)
    X[:, :4] += 2 * (y[:, None] == np.arange(4) % len(sizes))
    X[:, 5] = 1.0  # constant: never selected (as a column of ones it would be a second intercept)
    B = 12
    sel = make_selector("stability_selection", {"n_resamples": B, "n_lambdas": L, "lambda_min_ratio": ratio,
                                                "random_state": seed}).fit(X, y)
    counts, lam = plain_stability(X, y, seed, B, L, ratio)
    assert_array_equal(sel.lambdas_, lam)
    assert_array_equal(sel.frequencies_, counts / B)
    assert_array_equal(sel.scores_, counts.max(axis=0) / B)
    best, total = counts.max(axis=0), counts.sum(axis=0)
    assert_array_equal(sel.ranking_, sorted(range(d), key=lambda j: (-best[j], -total[j], j)))
    assert sel.scores_[5] == 0.0
    # the tie rule is exercised: equal maxima with different sums, and features never selected
    ties = [(best[a] == best[b]) and (total[a] != total[b]) for a in range(d) for b in range(a)]
    assert any(ties) and np.any(best == 0)
    assert sel.diagnostics_["stability_n_fits"] == B * L * (1 if len(sizes) == 2 else len(sizes))


def test_stability_lambda_max_is_where_the_first_weight_enters():
    X, y = random_problem(40, 30, 3, 4, informative=3)
    sel = make_selector("stability_selection", {"n_resamples": 2, "n_lambdas": 1, "lambda_min_ratio": 1.0,
                                                "random_state": 0}).fit(X, y)
    c_min = [l1_min_c(X, (y == k).astype(int), loss="log", fit_intercept=False) for k in range(3)]
    lam = max(1.0 / (X.shape[0] * c) for c in c_min)
    np.testing.assert_allclose(sel.lambdas_, [lam], rtol=1e-12)
    k = int(np.argmin(c_min))
    for factor, nonzero in ((0.999, False), (1.2, True)):
        lr = LogisticRegression(C=factor * c_min[k], l1_ratio=1.0, solver="liblinear", fit_intercept=False,
                                tol=1e-10, random_state=0).fit(X, (y == k).astype(int))
        assert np.any(lr.coef_ != 0) == nonzero


def test_stability_selection_a_constant_column_would_act_as_an_intercept():
    """The reason constant columns count as 0: left as 3s, LIBLINEAR selects one (its intercept is a
    penalized feature of ones, and the column buys the same shift at a third of the penalty)."""
    X, y = random_problem(30, 8, 3, 14, informative=2)
    X[:, 4] = 3.0
    lr = LogisticRegression(C=1.0, l1_ratio=1.0, solver="liblinear", random_state=0).fit(X, (y == 2).astype(int))
    assert lr.coef_[0, 4] != 0
    sel = make_selector("stability_selection", {"n_resamples": 4, "random_state": 0}).fit(X, y)
    never = np.flatnonzero(sel.frequencies_.sum(axis=0) == 0)
    assert 4 in never
    assert_array_equal(sel.ranking_[-never.size:], never)


def test_stability_selection_constant_data_selects_nothing():
    X = np.ones((12, 6))
    y = np.arange(12) % 3
    sel = make_selector("stability_selection", {"random_state": 0}).fit(X, y)
    assert_array_equal(sel.scores_, np.zeros(6))
    assert_array_equal(sel.ranking_, np.arange(6))
    assert sel.diagnostics_["stability_n_fits"] == 0


# ----------------------------------------------------------------------------- all four
def edge_problem(kind: str):
    rng = np.random.default_rng(12)
    if kind == "two_classes_d_gt_n":
        y = np.arange(16) % 2
        X = rng.normal(size=(16, 60))
    elif kind == "class_of_two":
        y = np.array([0] * 9 + [1] * 2 + [2] * 9)
        X = rng.normal(size=(20, 15))
    else:  # constant, duplicated and few-valued features
        y = np.arange(24) % 3
        X = rng.normal(size=(24, 12))
        X[:, 2] = 3.0
        X[:, 7] = X[:, 4]
        X[:, 9] = np.round(X[:, 9])
    X[:, 0] += y
    return X, y


@pytest.mark.parametrize("kind", ["two_classes_d_gt_n", "class_of_two", "degenerate_features"])
@pytest.mark.parametrize("name", NAMES)
def test_edge_cases_give_a_full_ranking(name, kind):
    X, y = edge_problem(kind)
    sel = fit_quiet(name, X, y, random_state=0, **SMALL[name])
    assert_array_equal(np.sort(sel.ranking_), np.arange(X.shape[1]))
    assert np.all(np.isfinite(sel.scores_))
    if kind == "degenerate_features" and name != "rfe":
        assert sel.scores_[2] == 0.0  # a constant feature is never used or selected
    if kind == "degenerate_features" and name == "rfe":
        assert sel.ranking_[-1] == 2


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_ranking_and_another_seed_differs(name):
    X, y = random_problem(40, 80, 3, 13, informative=6)
    a = fit_quiet(name, X, y, random_state=5, **SMALL[name])
    b = fit_quiet(name, X, y, random_state=5, **SMALL[name])
    assert_array_equal(a.ranking_, b.ranking_)
    assert_array_equal(a.scores_, b.scores_)
    if name != "rfe":  # LIBLINEAR's order only moves the SVM within its tolerance
        others = [fit_quiet(name, X, y, random_state=s, **SMALL[name]).ranking_ for s in (6, 7)]
        assert any(not np.array_equal(a.ranking_, o) for o in others)


def test_registered_under_their_names():
    reg = registry()
    assert {"rf_importance", "permutation", "rfe", "stability_selection"} <= set(reg)
    assert reg["rfe"].params["step"] == 0.1 and reg["stability_selection"].params["n_resamples"] == 20
