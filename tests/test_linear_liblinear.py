"""The LIBLINEAR route (fsbench.evaluation.linear_liblinear) against the plain scikit-learn computation, written
here: ``LinearSVC(...).fit(...).predict(...)`` for every inner fold, k and C, then the best C per k
refitted. The same counts, chosen C, inner accuracy and test accuracy, bit for bit; and the route
must actually have run (or, for classifiers it does not cover, must not have)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import papers_data
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from fsbench.configuration.parse import load_experiment
from fsbench.datasets import load
from fsbench.evaluation import linear_liblinear, linear_libsvm, protocol
from fsbench.evaluation.classifiers import classifier_spec, make_classifier
from fsbench.evaluation.protocol import (
    cv_accuracy_grid,
    derive_seed,
    evaluate_classifiers,
    evaluate_ranking,
    inner_folds,
    outer_splits,
    standardize,
)

CS = (0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
SEED = 11


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test starts without cached counts (the route keeps them in linear_libsvm's cache)."""
    linear_libsvm.clear_cache()
    yield
    linear_libsvm.clear_cache()


@pytest.fixture
def calls(monkeypatch):
    """How often the route's counts and the generic route's fits ran."""
    seen = {"route": 0, "generic": 0}
    route, generic = linear_liblinear._counts, protocol._accuracy

    def counted_route(*args, **kwargs):
        seen["route"] += 1
        return route(*args, **kwargs)

    def counted_generic(*args, **kwargs):
        seen["generic"] += 1
        return generic(*args, **kwargs)

    monkeypatch.setattr(linear_liblinear, "_counts", counted_route)
    monkeypatch.setattr(protocol, "_accuracy", counted_generic)
    return seen


# ----------------------------------------------------------------------------- problems
def _problem(n: int, d: int, c: int, seed: int, labels=None, overlap: float = 0.6):
    """Gaussian features with c overlapping classes (a few informative features), split 2:1 stratified."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    X[:, :6] += overlap * (y[:, None] == np.arange(6)[None, :] % c)
    test = np.sort(np.concatenate([rng.permutation(np.flatnonzero(y == k))[: (y == k).sum() // 3] for k in range(c)]))
    train = np.setdiff1d(np.arange(n), test)
    if labels is not None:
        y = np.asarray(labels)[y]
    ranking = rng.permutation(d)
    return X[train], y[train], X[test], y[test], ranking


def _hard(seed: int):
    """Random labels on many features: LinearSVC's fits at large C reach a small max_iter (one-vs-rest
    stops there; scikit-learn's LIBLINEAR runs Crammer-Singer to its own limit of 100000 iterations,
    but LinearSVC still warns when the count passes max_iter)."""
    rng = np.random.default_rng(seed)
    n, d = 60, 40
    y = np.arange(n) % 3
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    return X[:42], y[:42], X[42:], y[42:], rng.permutation(d)


def _plain(X_train, y_train, X_test, y_test, ranking, ks, build, n_inner, seed):
    """Rows (k, C, inner_accuracy, n_correct) of the straightforward computation, ties to the smallest C."""
    folds = inner_folds(y_train, n_inner, derive_seed(seed, "inner-C"))
    correct = np.zeros((len(ks), len(CS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for fit, val in folds:
            for i, k in enumerate(ks):
                cols = ranking[:k]
                for j, C in enumerate(CS):
                    clf = build(C).fit(X_train[np.ix_(fit, cols)], y_train[fit])
                    correct[i, j] += np.sum(clf.predict(X_train[np.ix_(val, cols)]) == y_train[val])
        accuracy = correct / sum(val.size for _, val in folds)
        rows = []
        for i, k in enumerate(ks):
            best = max(range(len(CS)), key=lambda j: (accuracy[i, j], -CS[j]))
            cols = ranking[:k]
            clf = build(CS[best]).fit(X_train[:, cols], y_train)
            rows.append((k, CS[best], accuracy[i].max(), int(np.sum(clf.predict(X_test[:, cols]) == y_test))))
    return rows


def _rows(rows):
    return [(r["k"], r["C"], r["inner_accuracy"], r["n_correct"]) for r in rows]


def _spec(kind: str, **params):
    if kind == "ovr":
        return classifier_spec("linear_svm", params={"backend": "liblinear", **params}, grid={"C": CS})
    return classifier_spec("crammer_singer", params=params, grid={"C": CS})


def _build(kind: str, seed: int, **params):
    multi_class = {"ovr": "ovr", "cs": "crammer_singer"}[kind]
    return lambda C: LinearSVC(C=C, multi_class=multi_class, max_iter=params.get("max_iter", 20000),
                               random_state=seed, **{k: v for k, v in params.items() if k != "max_iter"})


# ----------------------------------------------------------------------------- the route equals the plain loop
PROBLEMS = {
    "binary": lambda s: _problem(54, 50, 2, s),
    "three-classes": lambda s: _problem(60, 50, 3, s),
    "five-classes": lambda s: _problem(75, 30, 5, s, overlap=1.0),
    "string-labels": lambda s: _problem(60, 50, 3, s, labels=["setosa", "virginica", "versicolor"]),
    "object-labels": lambda s: _problem(54, 50, 2, s, labels=np.array(["no", "yes"], dtype=object)),
}
KS = (3, 10, 30, 50)  # fewer and more columns than an inner fold's rows: both of LinearSVC's dual="auto" choices


@pytest.mark.parametrize("kind", ["cs", "ovr"])
@pytest.mark.parametrize("name", list(PROBLEMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_rows_equal_the_plain_loop(kind, name, seed, calls):
    X_train, y_train, X_test, y_test, ranking = PROBLEMS[name](seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the route emits nothing, ConvergenceWarning included
        rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, KS, [_spec(kind)], 3, SEED + seed)
    assert calls["route"] > 0 and calls["generic"] == 0
    expected = _plain(X_train, y_train, X_test, y_test, ranking, KS, _build(kind, SEED + seed), 3, SEED + seed)
    assert _rows(rows) == expected
    assert [r["accuracy"] for r in rows] == [e[3] / y_test.size for e in expected]


@pytest.mark.parametrize("kind", ["cs", "ovr"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fits_that_hit_max_iter_equal_the_plain_loop(kind, seed, calls):
    X_train, y_train, X_test, y_test, ranking = _hard(seed)
    ks = (5, 20, 40)
    build = _build(kind, SEED, max_iter=3)
    with warnings.catch_warnings(record=True) as caught:  # the plain route does hit max_iter here
        warnings.simplefilter("always")
        build(100.0).fit(X_train[:, ranking[:40]], y_train)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, ks, [_spec(kind, max_iter=3)], 3, SEED)
    assert calls["route"] > 0 and calls["generic"] == 0
    assert _rows(rows) == _plain(X_train, y_train, X_test, y_test, ranking, ks, build, 3, SEED)


def test_rows_equal_the_generic_route_of_protocol(monkeypatch):
    """protocol's own generic route (the route switched off) gives the same rows, for both built-ins."""
    X_train, y_train, X_test, y_test, ranking = _problem(66, 50, 3, 5)
    specs = [_spec("cs"), classifier_spec("linear_svm", label="ovr", params={"backend": "liblinear"},
                                          grid={"C": CS})]
    fast = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, KS, specs, 3, SEED)
    monkeypatch.setitem(linear_liblinear.STATE, "available", False)
    assert linear_liblinear.solver_for([LinearSVC(random_state=0)]) is None
    generic = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, KS, specs, 3, SEED)
    assert fast == generic


@pytest.mark.parametrize("kind", ["cs", "ovr"])
def test_cv_accuracy_grid_with_a_ranking_per_fold(kind, calls):
    """Tuning a selector: each fold has its own ranking (two folds share one)."""
    X, y, _, _, ranking = _problem(72, 50, 3, 7, labels=["a", "b", "c"])
    folds = inner_folds(y, 3, 4)
    rankings = [ranking, np.random.default_rng(1).permutation(50), ranking]
    grid = cv_accuracy_grid(X, y, folds, rankings, KS, _spec(kind), SEED)
    assert calls["route"] > 0 and calls["generic"] == 0
    build = _build(kind, SEED)
    correct = np.zeros((len(KS), len(CS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for (fit, val), r in zip(folds, rankings, strict=True):
            for i, k in enumerate(KS):
                for j, C in enumerate(CS):
                    clf = build(C).fit(X[np.ix_(fit, r[:k])], y[fit])
                    correct[i, j] += np.sum(clf.predict(X[np.ix_(val, r[:k])]) == y[val])
    np.testing.assert_array_equal(grid, correct / y.size)


def test_an_untuned_classifier_and_a_second_call_from_the_cache(calls):
    X_train, y_train, X_test, y_test, ranking = _problem(60, 50, 3, 3)
    spec = classifier_spec("crammer_singer", params={"C": 0.3})
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, KS, [spec], 3, SEED)
    assert calls["route"] == len(KS) and calls["generic"] == 0
    for row, k in zip(rows, KS, strict=True):
        clf = LinearSVC(C=0.3, multi_class="crammer_singer", max_iter=20000, random_state=SEED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_train[:, ranking[:k]], y_train)
        assert row["n_correct"] == int(np.sum(clf.predict(X_test[:, ranking[:k]]) == y_test))
        assert np.isnan(row["inner_accuracy"]) and row["C"] == 0.3
    again = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, KS, [spec], 3, SEED)
    assert [repr(r) for r in again] == [repr(r) for r in rows]  # inner_accuracy is NaN
    assert calls["route"] == len(KS)  # the counts came from the cache


# ----------------------------------------------------------------------------- bits, not just counts
@pytest.mark.parametrize("multi_class", ["ovr", "crammer_singer"])
@pytest.mark.parametrize("shape", [(30, 50, 2), (30, 50, 4), (45, 8, 2), (45, 8, 4)])
def test_weights_and_decision_values_are_linearsvcs(multi_class, shape):
    n, d, c = shape
    rng = np.random.default_rng(n * d * c)
    y = np.arange(n) % c
    X = rng.standard_normal((n, d)) + 0.4 * y[:, None]
    B = rng.standard_normal((20, d))
    solver = linear_liblinear.Solver(multi_class, 20000, 123)
    clf = solver.estimator(0.5).fit(X, y)
    coef, intercept = linear_liblinear._fit(np.ascontiguousarray(X), linear_liblinear._Labels(y), 0.5, solver,
                                            solver.seed)
    np.testing.assert_array_equal(coef, clf.coef_)
    np.testing.assert_array_equal(intercept, clf.intercept_)
    decision = B @ coef.T + intercept
    np.testing.assert_array_equal(decision.reshape(-1) if c == 2 else decision, clf.decision_function(B))
    np.testing.assert_array_equal(linear_liblinear._predict(B, coef, intercept, np.unique(y)), clf.predict(B))
    # the comparison sees the last bits: another seed gives other weights (Crammer-Singer and the dual
    # solver visit the samples in the seed's random order, and stop at tol)
    if multi_class == "crammer_singer" or n < d:
        other = linear_liblinear.Solver(multi_class, 20000, 124)
        coef2, _ = linear_liblinear._fit(np.ascontiguousarray(X), linear_liblinear._Labels(y), 0.5, other, other.seed)
        assert not np.array_equal(coef2, clf.coef_)


def test_the_route_prints_nothing_whatever_liblinear_was_told_before(capfd):
    """LIBLINEAR's verbosity is a process-wide switch; LinearSVC.fit sets it from verbose (0) on every fit."""
    X_train, y_train, X_test, y_test, ranking = _problem(54, 50, 3, 6)
    from sklearn.svm import _liblinear

    linear_liblinear.available()
    _liblinear.set_verbosity_wrap(1)
    try:
        evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, (10,), [_spec("cs")], 3, SEED)
    finally:
        _liblinear.set_verbosity_wrap(0)
    assert capfd.readouterr().out == ""


def test_a_training_part_of_one_class_raises_as_linearsvc():
    X = np.random.default_rng(0).standard_normal((10, 4))
    y = np.zeros(10, dtype=int)
    solver = linear_liblinear.Solver("crammer_singer", 20000, 0)
    with pytest.raises(ValueError, match="at least 2 classes") as got:
        linear_liblinear._counts(X, y, X, y, [1.0], solver)
    with pytest.raises(ValueError) as want:
        LinearSVC(multi_class="crammer_singer").fit(X, y)
    assert str(got.value) == str(want.value)


# ----------------------------------------------------------------------------- who takes the route
@pytest.mark.parametrize("change", [{"tol": 1e-3}, {"penalty": "l1"}, {"loss": "hinge"}, {"class_weight": "balanced"},
                                    {"intercept_scaling": 2.0}, {"fit_intercept": False}, {"dual": True}])
def test_a_classifier_off_the_defaults_takes_the_generic_route(change, calls):
    X_train, y_train, X_test, y_test, ranking = _problem(54, 50, 3, 2)
    spec = _spec("ovr", **change)
    assert linear_liblinear.solver_for([make_classifier(spec, {"C": 1.0}, SEED)]) is None
    ks = (10, 50)
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, ks, [spec], 3, SEED)
    assert calls["route"] == 0 and calls["generic"] > 0
    assert _rows(rows) == _plain(X_train, y_train, X_test, y_test, ranking, ks, _build("ovr", SEED, **change), 3,
                                 SEED)


def test_which_estimators_and_data_the_route_takes():
    cs = LinearSVC(multi_class="crammer_singer", max_iter=20000, random_state=3)
    solver, Cs = linear_liblinear.solver_for([cs.set_params(C=0.5), LinearSVC(multi_class="crammer_singer",
                                                                           max_iter=20000, random_state=3, C=2)])
    assert solver == linear_liblinear.Solver("crammer_singer", 20000, 3) and Cs == [0.5, 2.0]
    assert linear_liblinear.solver_for([LinearSVC(random_state=3)]) is not None
    for other in ([LinearSVC()],  # random_state None draws from numpy's global generator
                  [LinearSVC(random_state=np.random.RandomState(0))],
                  [LinearSVC(random_state=1), LinearSVC(random_state=2)],  # one solver per list
                  [LinearSVC(random_state=1, multi_class="crammer_singer"), LinearSVC(random_state=1)],
                  [LinearSVC(random_state=1, C=-1.0)], [LinearSVC(random_state=1, verbose=1)],
                  [type("Sub", (LinearSVC,), {})(random_state=1)]):
        assert linear_liblinear.solver_for(other) is None
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    assert linear_liblinear.data_ok(y, X, X)
    assert linear_liblinear.data_ok(np.array(["a", "b", "a", "b"], dtype=object), X)
    assert not linear_liblinear.data_ok(y, X.astype(np.float32))
    assert not linear_liblinear.data_ok(y, X.astype(int))
    assert not linear_liblinear.data_ok(y, np.where(np.eye(4, 2) > 0, np.nan, X))
    assert not linear_liblinear.data_ok(y + 0.5, X)  # continuous target: LinearSVC's own error
    assert not linear_liblinear.data_ok(y[:, None], X)


def test_integer_features_take_the_generic_route(calls):
    X_train, y_train, X_test, y_test, ranking = _problem(54, 50, 3, 4)
    X_train, X_test = np.round(X_train * 3).astype(int), np.round(X_test * 3).astype(int)
    ks = (10, 30)
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, ks, [_spec("cs")], 3, SEED)
    assert calls["route"] == 0 and calls["generic"] > 0
    assert _rows(rows) == _plain(X_train, y_train, X_test, y_test, ranking, ks, _build("cs", SEED), 3, SEED)


# ----------------------------------------------------------------------------- the papers' data
@pytest.mark.parametrize("dataset", ["glioma", "mll"])
def test_committed_sl2p_rows_are_reproduced_by_the_route(dataset, calls, one_blas_thread):
    """On the papers' data: every committed SL2P ranking of the first split, evaluated through the route
    (crammer_singer, 21 C), gives the committed rows (computed by the generic route): n_correct, the
    chosen C and the inner accuracy, as floats."""
    data_dir = papers_data()
    root = Path(__file__).resolve().parents[1]
    exp = load_experiment(root / "configs" / "papers" / "sl2p.yaml")
    runs = pd.read_csv(root / "results" / "papers" / "sl2p" / "runs.csv.gz")
    rankings = pd.read_csv(root / "results" / "papers" / "sl2p" / "rankings.csv.gz")
    data = load(dataset, data_dir)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    split = outer_splits(y, exp.protocol, exp.seed, dataset)[0]
    X_train, X_test = standardize(X, split.train, split.test, exp.standardize)
    seed = derive_seed(exp.seed, "evaluate", dataset, split.repeat, split.fold)
    mine = rankings[(rankings.dataset == dataset) & (rankings.repeat == split.repeat) & (rankings.fold == split.fold)]
    checked = 0
    for selector, g in mine.groupby("selector"):
        order = g.sort_values("position")["feature"].to_numpy()
        rows = evaluate_ranking(X_train, y[split.train], X_test, y[split.test], order, list(exp.n_features),
                                exp.classifier, exp.inner_cv.folds_for(split.train.size), seed)
        want = runs[(runs.dataset == dataset) & (runs.repeat == split.repeat) & (runs.fold == split.fold)
                    & (runs.selector == selector)].sort_values("k")
        assert [(r["k"], r["n_correct"], r["C"], r["inner_accuracy"]) for r in rows] == [
            (int(w.k), int(w.n_correct), float(w.C), float(w.inner_accuracy)) for w in want.itertuples()]
        checked += len(rows)
    assert checked == 80 and calls["route"] > 0 and calls["generic"] == 0
