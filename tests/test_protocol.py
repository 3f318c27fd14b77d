"""The evaluation protocol: splits, scaling, tuning rules, and no leakage from the test part."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from conftest import separable_problem
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, confusion_matrix
from sklearn.model_selection import cross_val_predict
from sklearn.svm import SVC, LinearSVC

from fsbench.configuration.parse import ClassifierConfig, InnerCVConfig, ProtocolConfig
from fsbench.errors import FsbenchError
from fsbench.evaluation.protocol import (
    best_C,
    check_inner_cv,
    cv_accuracy_grid,
    derive_seed,
    evaluate_ranking,
    inner_folds,
    outer_splits,
    standardize,
    tune_selector,
)


def _data(n=90, d=12, c=3, seed=0):
    return separable_problem(n, d, c, seed)


def test_derive_seed_depends_on_identity_only():
    assert derive_seed(0, "a", 1) == derive_seed(0, "a", 1)
    assert len({derive_seed(0, "a", r) for r in range(50)}) == 50
    assert derive_seed(0, "a", 1) != derive_seed(1, "a", 1)


def test_holdout_splits_are_stratified_disjoint_and_reproducible():
    y = np.repeat([0, 1, 2, 3], [14, 7, 14, 15])  # GLIOMA's class sizes
    protocol = ProtocolConfig(kind="holdout", train_size=0.6, n_trials=10)
    splits = outer_splits(y, protocol, 0, "glioma")
    assert len(splits) == 10
    for s in splits:
        assert np.intersect1d(s.train, s.test).size == 0
        assert s.train.size + s.test.size == y.size and s.train.size == 30
        # every class appears in both parts in proportion (±1 sample)
        assert np.all(np.abs(np.bincount(y[s.train]) - 0.6 * np.bincount(y)) <= 1)
    again = outer_splits(y, protocol, 0, "glioma")
    assert all(np.array_equal(a.train, b.train) for a, b in zip(splits, again, strict=True))
    assert len({tuple(s.train) for s in splits}) == 10
    other = outer_splits(y, protocol, 1, "glioma")
    assert not np.array_equal(splits[0].train, other[0].train)


def test_kfold_splits_partition_the_data():
    y = np.arange(50) % 4
    splits = outer_splits(y, ProtocolConfig(kind="kfold", n_splits=5, n_repeats=2), 0, "d")
    assert len(splits) == 10
    for repeat in (0, 1):
        tests = np.concatenate([s.test for s in splits if s.repeat == repeat])
        np.testing.assert_array_equal(np.sort(tests), np.arange(50))
    assert not np.array_equal(splits[0].test, splits[5].test)


def test_classes_too_small_are_rejected():
    with pytest.raises(FsbenchError, match="single sample"):
        outer_splits(np.array([0, 0, 0, 1, 2, 2]), ProtocolConfig(), 0, "d")
    with pytest.raises(FsbenchError, match="fewer than the 5 folds"):
        outer_splits(np.array([0] * 10 + [1] * 3), ProtocolConfig(kind="kfold", n_splits=5), 0, "d")
    with pytest.raises(FsbenchError, match="inner-CV"):
        check_inner_cv(np.array([0] * 10 + [1] * 2), InnerCVConfig(n_splits=3), "d")
    assert check_inner_cv(np.arange(300) % 2, InnerCVConfig(None, 200, 3, 8), "d") == 8


def test_standardize_modes():
    X, _ = _data()
    X = X * 5 + 3
    X[:, 5] = 2.0  # constant
    train, test = np.arange(60), np.arange(60, 90)
    Xtr, Xte = standardize(X, train, test, "train")
    np.testing.assert_allclose(Xtr[:, :5].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Xtr[:, :5].std(axis=0), 1, atol=1e-12)
    np.testing.assert_allclose(Xte[:, 0], (X[test, 0] - X[train, 0].mean()) / X[train, 0].std())
    assert np.all(Xtr[:, 5] == 0)
    Xtr_g, Xte_g = standardize(X, train, test, "global")
    np.testing.assert_allclose(np.vstack([Xtr_g, Xte_g])[:, 0].std(), 1)
    Xtr_n, _ = standardize(X, train, test, "none")
    np.testing.assert_array_equal(Xtr_n, X[train])


def test_best_C_ties_go_to_the_smallest():
    assert best_C(np.array([0.5, 0.9, 0.9]), [1.0, 0.1, 10.0]) == 0.1
    assert best_C(np.array([0.5, 0.9, 0.8]), [0.01, 0.1, 1.0]) == 0.1


def test_cv_accuracy_grid_equals_pooled_cross_val_predict():
    X, y = _data()
    folds = inner_folds(y, 3, 5)
    ranking = np.arange(X.shape[1])[::-1]
    cfg = ClassifierConfig(C=(0.01, 1.0))
    grid = cv_accuracy_grid(X, y, folds, [ranking] * 3, [2, 12], cfg, 0)
    for i, k in enumerate([2, 12]):
        for j, C in enumerate(cfg.C):
            pred = cross_val_predict(SVC(kernel="linear", C=C), X[:, ranking[:k]], y, cv=folds)
            assert grid[i, j] == pytest.approx(accuracy_score(y, pred))


def test_evaluate_ranking_uses_only_the_training_part_for_C():
    X, y = _data(n=120)
    train, test = np.arange(0, 120, 2), np.arange(1, 120, 2)
    cfg = ClassifierConfig(C=(0.001, 0.1, 10.0))
    ranking = np.arange(12)
    rows = evaluate_ranking(X[train], y[train], X[test], y[test], ranking, [1, 2, 5], cfg, 3, 0)
    # scramble the test labels: the chosen C and inner accuracy must not move
    y_scrambled = y[test][::-1].copy()
    rows2 = evaluate_ranking(X[train], y[train], X[test], y_scrambled, ranking, [1, 2, 5], cfg, 3, 0)
    assert [r["C"] for r in rows] == [r["C"] for r in rows2]
    assert [r["inner_accuracy"] for r in rows] == [r["inner_accuracy"] for r in rows2]
    for row in rows:
        clf = SVC(kernel="linear", C=row["C"]).fit(X[train][:, : row["k"]], y[train])
        assert row["accuracy"] == pytest.approx(clf.score(X[test][:, : row["k"]], y[test]))
        assert row["n_test"] == 60


def test_tune_selector_prefers_the_informative_grid_point():
    X, y = _data(n=120, d=30)
    calls = []

    def fit_ranking(Xf, yf, point, fold):
        calls.append((point["mode"], fold, Xf.shape[0]))
        if point["mode"] == "good":
            return np.arange(30)
        return np.arange(30)[::-1]  # the informative features 0 and 1 come last

    chosen, scores = tune_selector(fit_ranking, X, y, [{"mode": "bad"}, {"mode": "good"}], [2, 4],
                                   ClassifierConfig(C=(0.1, 1.0)), 3, 0)
    assert chosen == {"mode": "good"} and scores[1] > scores[0]
    # the selector is refit on each inner-training fold, never on all training rows
    assert len(calls) == 6 and all(n == 80 for _, _, n in calls)


@pytest.mark.parametrize("C", [(10.0, 0.001, 0.1, 1.0), (0.3,)], ids=["tuned", "fixed"])
@pytest.mark.parametrize(("name", "backend"), [("linear_svm", "libsvm"), ("linear_svm", "liblinear"),
                                               ("crammer_singer", "liblinear")])
def test_the_single_svm_rows_are_the_plain_scikit_learn_computation(name, backend, C):
    """The rows of today's single classifier, written out with scikit-learn as protocol.py
    computed them before several classifiers existed: same keys, same values, exactly."""
    X, y = _data(n=120, d=12)
    train, test = np.arange(0, 120, 2), np.arange(1, 120, 2)
    ranking, ks, seed = np.array([3, 0, 5, 1, 2, 4, 6, 7, 8, 9, 10, 11]), [1, 2, 4, 12], 99
    cfg = ClassifierConfig(name, backend, C)

    def build(c):
        if name == "crammer_singer":
            return LinearSVC(C=c, multi_class="crammer_singer", max_iter=20000, random_state=seed)
        if backend == "liblinear":
            return LinearSVC(C=c, max_iter=20000, random_state=seed)
        return SVC(kernel="linear", C=c)

    folds = inner_folds(y[train], 3, derive_seed(seed, "inner-C"))
    expected = []
    for k in ks:
        cols = ranking[:k]
        with warnings.catch_warnings(record=True) as caught:  # each of these fits warns at most once
            warnings.simplefilter("always", ConvergenceWarning)
            inner = [np.sum(cross_val_predict(build(c), X[train][:, cols], y[train], cv=folds) == y[train])
                     / train.size for c in C] if len(C) > 1 else []
            chosen = min(c for c, a in zip(C, inner, strict=True) if a == max(inner)) if len(C) > 1 else C[0]
            predicted = build(chosen).fit(X[train][:, cols], y[train]).predict(X[test][:, cols])
        n_correct = int(np.sum(predicted == y[test]))
        m = confusion_matrix(y[test], predicted, labels=[0, 1, 2])
        expected.append({"k": k, "accuracy": n_correct / test.size, "n_correct": n_correct, "n_test": test.size,
                         "class_support": ";".join(map(str, m.sum(axis=1))),
                         "class_predicted": ";".join(map(str, m.sum(axis=0))),
                         "class_correct": ";".join(map(str, np.diag(m))),
                         "C": chosen, "inner_accuracy": max(inner) if len(C) > 1 else float("nan"),
                         "diag_classifier_unconverged": sum(issubclass(w.category, ConvergenceWarning)
                                                            for w in caught)})
    rows = evaluate_ranking(X[train], y[train], X[test], y[test], ranking, ks, cfg, 3, seed)
    assert json.dumps(rows) == json.dumps(expected)
    assert all(type(r["C"]) is float for r in rows)
