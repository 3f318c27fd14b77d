"""Several classifiers: the built-ins, user classes, tuning rules, bad specs, reporting.

Oracles: scikit-learn's own constructors and a plain scikit-learn computation written here
(cross_val_predict on protocol's inner folds, the stated tie rule, refit, test accuracy);
hand-counted tables; the artists of the drawn figures.
"""

from __future__ import annotations

import json
import re
import sys
import types

import numpy as np
import pandas as pd
import pytest
from conftest import separable_problem
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC, LinearSVC

import fsbench.report.plots as plots
from fsbench.configuration.parse import ClassifierConfig
from fsbench.errors import FsbenchError
from fsbench.evaluation.classifiers import (
    BUILTINS,
    ClassifierSpec,
    ClassifierSpecError,
    NotAClassifierError,
    check_classifier_spec,
    check_classifier_specs,
    classifier_spec,
    make_classifier,
    spec_from_config,
)
from fsbench.evaluation.protocol import (
    best_point,
    derive_seed,
    evaluate_classifiers,
    evaluate_ranking,
    inner_folds,
    tune_selector,
)
from fsbench.papers import SL2P_TABLE2
from fsbench.papers.tables import compare_table
from fsbench.report.tables import accuracy_table, format_table, per_repeat, summarize


def _data(n=90, d=12, c=3, seed=0):
    return separable_problem(n, d, c, seed)


def _split(n=120, d=12, seed=0):
    X, y = _data(n=n, d=d, seed=seed)
    train, test = np.arange(0, n, 2), np.arange(1, n, 2)
    return X[train], y[train], X[test], y[test]


# ----------------------------------------------------------------------------- building
SEED = 12345


@pytest.mark.parametrize(("spec", "expected"), [
    (classifier_spec("linear_svm", params={"C": 0.5}), SVC(kernel="linear", C=0.5)),
    (classifier_spec("linear_svm", params={"backend": "libsvm", "C": 0.5}), SVC(kernel="linear", C=0.5)),
    (classifier_spec("linear_svm", params={"backend": "liblinear", "C": 0.5}),
     LinearSVC(C=0.5, max_iter=20000, random_state=SEED)),
    (classifier_spec("crammer_singer", params={"C": 0.5}),
     LinearSVC(C=0.5, multi_class="crammer_singer", max_iter=20000, random_state=SEED)),
    (classifier_spec("knn"), KNeighborsClassifier()),
    (classifier_spec("knn", params={"n_neighbors": 1}), KNeighborsClassifier(n_neighbors=1)),
    (classifier_spec("logistic"), LogisticRegression(max_iter=1000, random_state=SEED)),
    (classifier_spec("random_forest", params={"n_estimators": 7}),
     RandomForestClassifier(n_estimators=7, random_state=SEED)),
    # a user's class: its random_state comes from the seed as for the built-ins
    (classifier_spec("sklearn.linear_model:LogisticRegression", label="lr", params={"max_iter": 2000}),
     LogisticRegression(max_iter=2000, random_state=SEED)),
    (classifier_spec("sklearn.naive_bayes:GaussianNB"), GaussianNB()),
], ids=lambda v: v.label + "-" + "-".join(f"{k}={x}" for k, x in v.params) if isinstance(v, ClassifierSpec) else "")
def test_builtins_and_classes_build_what_scikit_learn_builds(spec, expected):
    built = make_classifier(check_classifier_spec(spec), {}, SEED)
    assert type(built) is type(expected)
    assert built.get_params(deep=False) == expected.get_params(deep=False)


def test_a_grid_point_overrides_and_the_legacy_config_maps_to_the_old_estimators():
    spec = classifier_spec("knn", params={"weights": "distance"}, grid={"n_neighbors": [1, 3]})
    assert make_classifier(spec, {"n_neighbors": 3}, 0).get_params() == \
        KNeighborsClassifier(n_neighbors=3, weights="distance").get_params()
    # today's single classifier: the estimators protocol.py built before several classifiers existed
    old = {("linear_svm", "libsvm"): lambda C, s: SVC(kernel="linear", C=C),
           ("linear_svm", "liblinear"): lambda C, s: LinearSVC(C=C, max_iter=20000, random_state=s),
           ("crammer_singer", "liblinear"): lambda C, s: LinearSVC(C=C, multi_class="crammer_singer",
                                                                   max_iter=20000, random_state=s)}
    for (name, backend), build in old.items():
        tuned = spec_from_config(ClassifierConfig(name, backend, (0.1, 1.0)))
        assert tuned.tuned and tuned.smallest_C_wins and tuned.label == name
        assert make_classifier(tuned, {"C": 0.1}, 9).get_params() == build(0.1, 9).get_params()
        fixed = spec_from_config(ClassifierConfig(name, backend, (0.3,)))
        assert not fixed.tuned and make_classifier(fixed, {}, 9).get_params() == build(0.3, 9).get_params()


def test_every_builtin_is_checked_and_documented():
    import fsbench.evaluation.classifiers as module

    assert set(BUILTINS) >= {"linear_svm", "crammer_singer", "knn", "logistic", "random_forest"}
    for name in BUILTINS:
        assert check_classifier_spec(classifier_spec(name)) == classifier_spec(name)
        assert f"``{name}``" in module.__doc__


# ----------------------------------------------------------------------------- evaluation
def _plain(X_train, y_train, X_test, y_test, ranking, ks, build, points, n_inner, seed):
    """The evaluation written with scikit-learn alone: pooled inner-CV accuracy of every grid
    point on protocol's inner folds, the first best point, refit, test accuracy."""
    folds = inner_folds(y_train, n_inner, derive_seed(seed, "inner-C"))
    rows = []
    for k in ks:
        cols = ranking[:k]
        scores = [np.mean(cross_val_predict(build(p), X_train[:, cols], y_train, cv=folds) == y_train)
                  for p in points]
        best = int(np.argmax(scores)) if len(points) > 1 else 0
        clf = build(points[best]).fit(X_train[:, cols], y_train)
        n_correct = int(np.sum(clf.predict(X_test[:, cols]) == y_test))
        rows.append({"k": k, "n_correct": n_correct, "accuracy": n_correct / y_test.size,
                     "inner_accuracy": max(scores) if len(points) > 1 else np.nan, "point": points[best]})
    return rows


CASES = {
    "knn": (classifier_spec("knn", grid={"n_neighbors": [1, 5, 9]}),
            lambda p, s: KNeighborsClassifier(**p), [{"n_neighbors": v} for v in (1, 5, 9)]),
    "logistic": (classifier_spec("logistic", grid={"C": [0.001, 0.1, 10.0]}),
                 lambda p, s: LogisticRegression(max_iter=1000, random_state=s, **p),
                 [{"C": v} for v in (0.001, 0.1, 10.0)]),
    "random_forest": (classifier_spec("random_forest", params={"n_estimators": 15}, grid={"max_depth": [1, None]}),
                      lambda p, s: RandomForestClassifier(n_estimators=15, random_state=s, **p),
                      [{"max_depth": 1}, {"max_depth": None}]),
    "random_forest-fixed": (classifier_spec("random_forest", params={"n_estimators": 15}),
                            lambda p, s: RandomForestClassifier(n_estimators=15, random_state=s), [{}]),
}


@pytest.mark.parametrize("case", CASES)
def test_an_evaluation_equals_the_plain_scikit_learn_computation(case):
    spec, build, points = CASES[case]
    X_train, y_train, X_test, y_test = _split(d=12)
    ranking = np.array([5, 0, 7, 1, 2, 3, 4, 6, 8, 9, 10, 11])
    ks, seed = [1, 2, 4, 12], 77
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, ks, [spec], 3, seed)
    expected = _plain(X_train, y_train, X_test, y_test, ranking, ks, lambda p: build(p, seed), points, 3, seed)
    assert [r["k"] for r in rows] == ks
    for row, exp in zip(rows, expected, strict=True):
        assert row["classifier"] == spec.label
        assert row["n_correct"] == exp["n_correct"] and row["accuracy"] == exp["accuracy"]
        assert row["inner_accuracy"] == pytest.approx(exp["inner_accuracy"], nan_ok=True)
        assert json.loads(row["classifier_params"]) == {**spec.params_dict, **exp["point"]}
        C = exp["point"].get("C", 1.0 if case == "logistic" else np.nan)  # the estimator's C, NaN without one
        assert row["C"] == pytest.approx(C, nan_ok=True)
    if len(points) > 1:  # the tuning must matter for the comparison to mean something
        assert len({r["classifier_params"] for r in rows}) > 1 or case == "random_forest"


def test_each_classifier_gets_the_rows_it_gets_alone_and_one_ranking_serves_all():
    X_train, y_train, X_test, y_test = _split()
    ranking = np.arange(12)[::-1]
    specs = [spec_from_config(ClassifierConfig(C=(0.01, 1.0))), classifier_spec("knn", params={"n_neighbors": 1}),
             classifier_spec("sklearn.linear_model:LogisticRegression", label="lr", grid={"C": [0.1, 1, 10]})]
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, [2, 6], specs, 3, 4)
    assert [(r["classifier"], r["k"]) for r in rows] == [(s.label, k) for s in specs for k in (2, 6)]
    for spec in specs:
        alone = evaluate_ranking(X_train, y_train, X_test, y_test, ranking, [2, 6], spec, 3, 4)
        mine = [{k: r[k] for k in alone[0]} for r in rows if r["classifier"] == spec.label]
        assert json.dumps(mine) == json.dumps(alone)  # NaN too
    # the built-in SVM through its legacy config gives the rows the config gives
    legacy = evaluate_ranking(X_train, y_train, X_test, y_test, ranking, [2, 6], ClassifierConfig(C=(0.01, 1.0)), 3, 4)
    assert json.dumps(legacy) == json.dumps([{k: r[k] for k in legacy[0]} for r in rows[:2]])
    assert all(np.isnan(r["C"]) for r in rows if r["classifier"] == "knn")
    with pytest.raises(ValueError, match="distinct"):
        evaluate_classifiers(X_train, y_train, X_test, y_test, ranking, [2], [specs[1], specs[1]], 3, 4)


def test_a_selector_grid_is_scored_with_the_first_classifier(monkeypatch):
    fits = []

    class Spy(KNeighborsClassifier):
        def fit(self, X, y):
            fits.append(self.n_neighbors)
            return super().fit(X, y)

    module = types.ModuleType("fsbench_test_spy")
    module.Spy = Spy
    monkeypatch.setitem(sys.modules, "fsbench_test_spy", module)
    spy = classifier_spec("fsbench_test_spy:Spy", label="spy", params={"n_neighbors": 2})
    knn = classifier_spec("knn", params={"n_neighbors": 1})
    X, y = _data(n=60, d=10)

    def fit_ranking(Xf, yf, point, fold):
        return np.arange(10) if point["good"] else np.arange(10)[::-1]

    points = [{"good": False}, {"good": True}]
    first_knn = tune_selector(fit_ranking, X, y, points, [2], [knn, spy], 3, 0)
    assert fits == [] and first_knn == tune_selector(fit_ranking, X, y, points, [2], knn, 3, 0)
    tune_selector(fit_ranking, X, y, points, [2], [spy, knn], 3, 0)
    assert fits and set(fits) == {2}


# ----------------------------------------------------------------------------- tie rules
def test_general_grid_ties_go_to_the_first_point_svm_C_ties_to_the_smallest():
    tie = np.array([0.5, 0.9, 0.9])
    knn = classifier_spec("knn", grid={"n_neighbors": [9, 3, 1]})
    assert best_point(tie, knn) == 1  # n_neighbors 3: first of the tied, in the config's order
    lr = classifier_spec("logistic", grid={"C": [1.0, 10.0, 0.1]})
    assert best_point(tie, lr) == 1  # C = 10: first, not smallest, for a general grid
    svm = classifier_spec("linear_svm", grid={"C": [1.0, 10.0, 0.1]})
    assert best_point(tie, svm) == 2  # C = 0.1: the smallest, the SVMs' rule
    # several keys: sorted by name, the first slowest; values in the config's order
    two = classifier_spec("knn", grid={"weights": ["uniform", "distance"], "n_neighbors": [5, 1]})
    assert two.grid_points() == [{"n_neighbors": 5, "weights": "uniform"}, {"n_neighbors": 5, "weights": "distance"},
                                 {"n_neighbors": 1, "weights": "uniform"}, {"n_neighbors": 1, "weights": "distance"}]
    assert best_point(np.array([0.2, 0.7, 0.7, 0.7]), two) == 1


def test_ties_in_a_real_evaluation():
    # classes separated by feature 0 alone: every grid point is perfect in inner CV
    rng = np.random.default_rng(1)
    y = np.arange(60) % 3
    X = rng.normal(size=(60, 4)) * 0.01
    X[:, 0] += 10.0 * y
    ranking = np.arange(4)
    args = (X[::2], y[::2], X[1::2], y[1::2], ranking, [1])
    knn = classifier_spec("knn", grid={"n_neighbors": [3, 1]})
    (row,) = evaluate_classifiers(*args, [knn], 2, 0)
    assert row["inner_accuracy"] == 1.0 and json.loads(row["classifier_params"]) == {"n_neighbors": 3}
    lr = classifier_spec("logistic", grid={"C": [100.0, 10.0]})
    (row,) = evaluate_classifiers(*args, [lr], 2, 0)
    assert row["inner_accuracy"] == 1.0 and row["C"] == 100.0
    (row,) = evaluate_ranking(*args, ClassifierConfig(C=(100.0, 10.0)), 2, 0)
    assert row["inner_accuracy"] == 1.0 and row["C"] == 10.0
    # nothing tuned: the C column is the estimator's C as fitted, and the inner accuracy NaN
    (row,) = evaluate_classifiers(*args, [classifier_spec("logistic")], 2, 0)
    assert row["C"] == 1.0 and np.isnan(row["inner_accuracy"]) and row["classifier_params"] == "{}"


# ----------------------------------------------------------------------------- bad specs
def _one_sentence(message: str) -> bool:
    return "\n" not in message and message[-1] in ".?" and not re.search(r"[.?!] [A-Z]", message)


BAD = [
    (classifier_spec("knnn"), ValueError, "name", r"'knnn' is not a built-in classifier; did you mean 'knn'\?"),
    (classifier_spec("svm_linear"), ValueError, "name", "did you mean 'linear_svm'"),
    (classifier_spec("perceptron"), ValueError, "name", "the built-ins are linear_svm, crammer_singer, knn"),
    (classifier_spec("sklearn.preprocessing:StandardScaler", label="scaler"), TypeError, "class",
     "sklearn.preprocessing:StandardScaler has no predict method"),
    (classifier_spec("sklearn.linear_model:LinearRegression"), TypeError, "class", "regressor, not a classifier"),
    (classifier_spec("math:pi"), TypeError, "class", "not a class"),
    (classifier_spec("sklearn.linear_model:LogisticRegresion"), ValueError, "class", "has no 'LogisticRegresion'"),
    (classifier_spec("no_such_module_xyz:Thing"), ValueError, "class", "cannot import module 'no_such_module_xyz'"),
    (classifier_spec("sklearn.linear_model.LogisticRegression"), ValueError, "name", "colon before the class"),
    (classifier_spec("knn", grid={"n_neighbor": [1, 3]}), ValueError, "grid.n_neighbor",
     r"knn has no parameter 'n_neighbor'; did you mean 'n_neighbors'\?"),
    (classifier_spec("sklearn.linear_model:LogisticRegression", grid={"gamma": [1, 2]}), ValueError, "grid.gamma",
     "LogisticRegression has no parameter 'gamma'; its parameters are C, class_weight"),
    (classifier_spec("knn", params={"n_neighbors": 0}), ValueError, "params.n_neighbors", "must be an int"),
    (classifier_spec("logistic", grid={"solver": ["lbfgs", "lbgfs"]}), ValueError, r"grid.solver[1]",
     "got 'lbgfs'"),
    (classifier_spec("random_forest", params={"random_state": 3}), ValueError, "params.random_state",
     "derives it from the config seed"),
    (classifier_spec("linear_svm", params={"kernel": "rbf"}), ValueError, "params.kernel", "sklearn.svm:SVC"),
    (classifier_spec("crammer_singer", params={"multi_class": "ovr"}), ValueError, "params.multi_class",
     "crammer_singer"),
    (classifier_spec("linear_svm", params={"backend": "libsvn"}), ValueError, "params.backend", "libsvm, liblinear"),
    (classifier_spec("knn", params={"backend": "libsvm"}), ValueError, "params.backend", "linear_svm only"),
    (classifier_spec("knn", params={"n_neighbors": 3}, grid={"n_neighbors": [1, 3]}), ValueError,
     "grid.n_neighbors", "both fixed"),
    (classifier_spec("knn", grid={"n_neighbors": []}), ValueError, "grid.n_neighbors", "empty"),
    (classifier_spec("logistic", grid={"C": [1, 1.0]}), ValueError, "grid.C", "twice"),
    (classifier_spec("sklearn.pipeline:Pipeline"), TypeError, "class", "cannot be built"),
]


@pytest.mark.parametrize(("spec", "kind", "where", "pattern"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_bad_spec_is_refused_in_one_sentence(spec, kind, where, pattern):
    with pytest.raises(kind) as info:
        check_classifier_spec(spec)
    assert isinstance(info.value, ClassifierSpecError)
    message = str(info.value)
    assert re.search(pattern, message), message
    assert _one_sentence(message), message
    assert info.value.where == where


def test_checking_makes_integral_floats_ints_where_the_estimator_wants_ints():
    # YAML reads 1e2 as 100.0; KNeighborsClassifier wants an int
    checked = check_classifier_spec(classifier_spec("knn", params={"n_neighbors": 3.0}, grid={"leaf_size": [1e2]}))
    assert checked.params == (("n_neighbors", 3),) and type(checked.params[0][1]) is int
    assert checked.grid == (("leaf_size", (100,)),)
    assert isinstance(NotAClassifierError("x"), TypeError)
    with pytest.raises(ClassifierSpecError, match="used twice"):
        check_classifier_specs([classifier_spec("knn"), classifier_spec("knn")])


# ----------------------------------------------------------------------------- reporting
def _runs(classifiers=("svm", "knn"), correct=None, datasets=("d1",), selectors=("fisher", "random"),
          ks=(5, 10), repeats=3, n_test=10):
    """A runs table: classifier c gets ``correct[c]`` of ``n_test`` everywhere."""
    correct = correct or {c: n_test - 5 * i for i, c in enumerate(classifiers)}
    rows = []
    for c in classifiers:
        for d in datasets:
            for r in range(repeats):
                for s in selectors:
                    for k in ks:
                        rows.append({"dataset": d, "repeat": r, "fold": 0, "selector": s, "method": s, "k": k,
                                     "classifier": c, "n_correct": max(0, correct[c] - (r == 0 and s == "random")),
                                     "n_test": n_test, "params": "{}"})
    runs = pd.DataFrame(rows)
    runs["accuracy"] = runs["n_correct"] / runs["n_test"]
    return runs


def test_tables_of_two_classifiers_never_average_over_them():
    runs = _runs(correct={"svm": 10, "knn": 0})
    for fmt in ("markdown", "latex"):
        text = format_table(runs, None, fmt)
        assert "50.00" not in text  # the mean over the two classifiers
        assert text.count("100.00") == 1 and text.count("0.00 ") >= 1
        assert "knn" in text and "svm" in text
    md = format_table(runs, None, "markdown")
    assert md.index("Classifier svm:") < md.index("100.00") < md.index("Classifier knn:")
    csv = pd.read_csv(pd.io.common.StringIO(format_table(runs, None, "csv")))
    assert list(csv.columns[:4]) == ["classifier", "dataset", "selector", "k"]
    assert sorted(csv.loc[csv.selector == "fisher", "accuracy_mean"]) == [0.0, 100.0]
    assert set(per_repeat(runs)["accuracy"]) <= {0.0, 0.9, 1.0}  # never a pooled 0.5
    assert len(summarize(runs)) == 4
    with pytest.raises(FsbenchError, match="several classifiers"):
        accuracy_table(runs)
    # the argument keeps one classifier's rows: its table is the table of its rows alone
    knn = format_table(runs, None, "markdown", classifier="knn")
    alone = format_table(runs[runs.classifier == "knn"], None, "markdown")
    assert knn == alone and "100.00" not in knn and "of classifier knn" in knn
    with pytest.raises(FsbenchError, match="choose one of svm, knn"):
        format_table(runs, None, "markdown", classifier="lr")


def test_old_runs_without_the_column_tabulate_as_before():
    runs = _runs(classifiers=("svm",), correct={"svm": 8}).drop(columns="classifier")
    expected = ("Test accuracy (%) with the top 10 features, mean ± std over repetitions; best per row in bold.\n\n"
                "| dataset | fisher | random |\n|---|---|---|\n| d1 | **80.00 ± 0.00** | 76.67 ± 5.77 |\n")
    assert format_table(runs, None, "markdown") == expected
    assert format_table(runs, None, "csv").splitlines()[:2] == [
        "dataset,selector,k,accuracy_mean,accuracy_std,n_repeats", "d1,fisher,10,80.0000,0.0000,3"]
    assert list(per_repeat(runs).columns) == ["dataset", "selector", "k", "repeat", "n_correct", "n_test", "accuracy"]
    with pytest.raises(FsbenchError, match="record no classifier"):
        format_table(runs, None, "markdown", classifier="svm")
    # the same rows recording their one classifier: the same table, which names it
    named = format_table(runs.assign(classifier="svm"), None, "markdown")
    assert named == expected.replace("Test accuracy (%)", "Test accuracy (%) of classifier svm")


@pytest.fixture
def figs(monkeypatch):
    kept = []
    real = plots.save_figure

    def keep(fig, stem):
        kept.append(fig)
        return real(fig, stem)

    monkeypatch.setattr(plots, "save_figure", keep)
    return kept


def _panels(fig):
    return {ax.get_title().split("\n")[0]: ax for ax in fig.axes if ax.get_visible() and ax.has_data()}


def test_curves_of_two_classifiers_get_a_panel_set_each_never_their_mean(tmp_path, figs):
    runs = _runs(correct={"svm": 10, "knn": 0}, datasets=("d1", "d2"))
    plots.plot_curves(runs, tmp_path / "c")
    panels = _panels(figs[-1])
    assert sorted(panels) == ["d1 · knn", "d1 · svm", "d2 · knn", "d2 · svm"]
    for title, ax in panels.items():
        level = 100.0 if title.endswith("svm") else 0.0
        for line in ax.get_lines():
            if line.get_label() == "fisher":
                np.testing.assert_allclose(line.get_ydata(), level)
    # every classifier's set starts a row: svm's panels above knn's
    rows = {title: ax.get_subplotspec().rowspan.start for title, ax in panels.items()}
    assert rows["d1 · svm"] == rows["d2 · svm"] < rows["d1 · knn"] == rows["d2 · knn"]
    plots.plot_curves(runs, tmp_path / "k", classifier="knn")
    assert sorted(_panels(figs[-1])) == ["d1", "d2"]
    for ax in _panels(figs[-1]).values():
        fisher = [line.get_ydata() for line in ax.get_lines() if line.get_label() == "fisher"]
        assert fisher and all(np.all(np.asarray(y) <= 0.5) for y in fisher)


def test_curves_of_old_runs_are_drawn_as_before(tmp_path, figs):
    runs = _runs(classifiers=("svm",), correct={"svm": 8}, datasets=("d1", "d2"))
    old = plots.plot_curves(runs.drop(columns="classifier"), tmp_path / "old", title="t")
    new = plots.plot_curves(runs, tmp_path / "new", title="t")
    assert [p.read_bytes() for p in old] == [p.read_bytes() for p in new]
    assert sorted(_panels(figs[0])) == ["d1", "d2"]
    assert list(plots.curves(runs.drop(columns="classifier")).columns) == ["dataset", "selector", "k", "mean", "std"]


def test_paper_tables_filter_to_a_classifier():
    cell = SL2P_TABLE2.cells[0]
    runs = _runs(correct={"svm": 9, "knn": 2}, datasets=(cell.dataset,), selectors=(cell.method,), ks=(cell.k,))
    with pytest.raises(FsbenchError, match="several classifiers"):
        compare_table(SL2P_TABLE2, runs)
    svm = compare_table(SL2P_TABLE2, runs, classifier="svm")
    alone = compare_table(SL2P_TABLE2, runs[runs.classifier == "svm"].drop(columns="classifier"))
    pd.testing.assert_frame_equal(svm, alone)
    ours = svm.query("dataset == @cell.dataset and method == @cell.method and k == @cell.k")["ours"].iloc[0]
    assert ours == 90.0  # svm's 9 of 10; pooled with knn's 2 of 10 it would be 55
