"""Per-class counts and classifier convergence in every row, against scikit-learn fitted here.

The expected values never come from fsbench's evaluation: each row's chosen parameters are fitted
with plain scikit-learn on the top-k columns, and the per-class counts are read off
``sklearn.metrics.confusion_matrix`` of its test predictions (support: row sums; predicted: column
sums; correct: the diagonal). Unconverged fits are counted by fitting the same models here under
``warnings.catch_warnings(record=True)``.
"""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC, LinearSVC

from fsbench.cli import main
from fsbench.evaluation import linear_libsvm
from fsbench.evaluation.classifiers import classifier_spec
from fsbench.evaluation.protocol import derive_seed, evaluate_classifiers, evaluate_ranking

SEED = 5
KS = [1, 3, 6, 12]
N_INNER = 3
N_CLASSES = 4


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test computes its counts (the direct routes cache them per process)."""
    linear_libsvm.clear_cache()
    yield
    linear_libsvm.clear_cache()


def _problem(seed: int = 0, n: int = 200, d: int = 12):
    """Four imbalanced, overlapping classes; a stratified 6:4 split standardized on its training part."""
    X, y = make_classification(n_samples=n, n_features=d, n_informative=5, n_redundant=2, n_classes=N_CLASSES,
                               n_clusters_per_class=1, weights=[0.45, 0.3, 0.15, 0.1], class_sep=0.8,
                               flip_y=0.05, random_state=seed)
    split = StratifiedShuffleSplit(n_splits=1, train_size=0.6, random_state=seed)
    train, test = next(split.split(X, y))
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    return (X[train] - mean) / std, y[train], (X[test] - mean) / std, y[test]


RANKING = np.array([3, 0, 7, 1, 11, 2, 9, 4, 5, 6, 8, 10])


def _expected_counts(predicted: np.ndarray, y_test: np.ndarray) -> dict[str, str]:
    m = confusion_matrix(y_test, predicted, labels=np.arange(N_CLASSES))
    return {"class_support": ";".join(str(v) for v in m.sum(axis=1)),
            "class_predicted": ";".join(str(v) for v in m.sum(axis=0)),
            "class_correct": ";".join(str(v) for v in np.diag(m))}


def _fit_recording(clf, X, y) -> int:
    """1 when fitting ``clf`` warned with ConvergenceWarning, else 0 (the fit is done in place)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    return int(any(issubclass(w.category, ConvergenceWarning) for w in caught))


#: (spec, build(params, seed) -> the plain scikit-learn estimator fsbench should have fitted)
CASES = {
    "linear_svm": (classifier_spec("linear_svm", grid={"C": [0.01, 0.1, 1.0, 10.0]}),
                   lambda p, s: SVC(kernel="linear", **p)),
    "linear_svm-liblinear": (classifier_spec("linear_svm", params={"backend": "liblinear"},
                                             grid={"C": [0.01, 0.1, 1.0, 10.0]}),
                             lambda p, s: LinearSVC(max_iter=20000, random_state=s,
                                                    **{k: v for k, v in p.items() if k != "backend"})),
    "crammer_singer": (classifier_spec("crammer_singer", grid={"C": [0.01, 0.1, 1.0, 10.0]}),
                       lambda p, s: LinearSVC(multi_class="crammer_singer", max_iter=20000, random_state=s, **p)),
    "knn": (classifier_spec("knn", grid={"n_neighbors": [1, 5, 15]}), lambda p, s: KNeighborsClassifier(**p)),
    "logistic": (classifier_spec("logistic", grid={"C": [0.001, 0.1, 10.0]}),
                 lambda p, s: LogisticRegression(max_iter=1000, random_state=s, **p)),
}


@pytest.mark.parametrize("case", CASES)
def test_the_per_class_counts_are_the_confusion_matrix_of_the_refit(case):
    spec, build = CASES[case]
    X_train, y_train, X_test, y_test = _problem()
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, RANKING, KS, [spec], N_INNER, SEED)
    assert [r["k"] for r in rows] == KS
    for row in rows:
        cols = RANKING[:row["k"]]
        clf = build(json.loads(row["classifier_params"]), SEED)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X_train[:, cols], y_train)
        predicted = clf.predict(X_test[:, cols])
        assert {key: row[key] for key in ("class_support", "class_predicted", "class_correct")} \
            == _expected_counts(predicted, y_test), row["k"]
        correct = [int(v) for v in row["class_correct"].split(";")]
        support = [int(v) for v in row["class_support"].split(";")]
        assert len(correct) == len(support) == N_CLASSES
        assert sum(correct) == row["n_correct"] == int(np.sum(predicted == y_test))
        assert sum(support) == row["n_test"] == y_test.size
    # the chosen parameters differ between k, so the comparison covers more than one fitted model
    assert len({r["classifier_params"] for r in rows}) > 1
    # and at least one row is not a perfect or a trivial classifier
    assert any(0 < r["n_correct"] < r["n_test"] for r in rows)


def test_a_class_never_predicted_counts_zero_and_a_single_classifier_s_rows_count_too():
    """A heavily regularized logistic regression predicts the largest classes only: the others
    are listed with 0 predictions; evaluate_ranking's rows (the single classifier) carry the counts."""
    X_train, y_train, X_test, y_test = _problem()
    spec = classifier_spec("logistic", params={"C": 1e-4})
    rows = evaluate_ranking(X_train, y_train, X_test, y_test, RANKING, [2, 12], spec, N_INNER, SEED)
    for row in rows:
        cols = RANKING[:row["k"]]
        clf = LogisticRegression(C=1e-4, max_iter=1000, random_state=SEED).fit(X_train[:, cols], y_train)
        expected = _expected_counts(clf.predict(X_test[:, cols]), y_test)
        assert {key: row[key] for key in expected} == expected
        assert "0" in row["class_predicted"].split(";")  # a class nobody predicted is still listed
        assert len(row["class_predicted"].split(";")) == N_CLASSES
        assert row["diag_classifier_unconverged"] == 0


def _expected_unconverged(build, points, X_train, y_train, k, chosen) -> int:
    """Fits of one row that warn: every inner fold x grid point at k, then the refit at the chosen point."""
    cols = RANKING[:k]
    skf = StratifiedKFold(n_splits=N_INNER, shuffle=True, random_state=derive_seed(SEED, "inner-C"))
    warned = 0
    if len(points) > 1:
        for fit, _ in skf.split(np.zeros(y_train.size), y_train):
            for point in points:
                warned += _fit_recording(build(point), X_train[np.ix_(fit, cols)], y_train[fit])
    return warned + _fit_recording(build(chosen), X_train[:, cols], y_train)


UNCONVERGED = {
    # a user's classifier by class path, one iteration: every fit warns
    "class-path-logistic": (classifier_spec("sklearn.linear_model:LogisticRegression", label="lr",
                                            params={"max_iter": 1}, grid={"C": [0.1, 1.0, 10.0]}),
                            lambda p: LogisticRegression(max_iter=1, random_state=SEED, **p), "C"),
    # the built-in with params: a few iterations, so that only some fits warn
    "builtin-logistic": (classifier_spec("logistic", params={"max_iter": 20}, grid={"C": [0.01, 1.0, 100.0]}),
                         lambda p: LogisticRegression(max_iter=20, random_state=SEED, **p), "C"),
    # LIBLINEAR's direct route: iteration counts that reach max_iter
    "liblinear": (classifier_spec("linear_svm", params={"backend": "liblinear", "max_iter": 6},
                                  grid={"C": [0.001, 0.1, 100.0]}),
                  lambda p: LinearSVC(max_iter=6, random_state=SEED, **p), "C"),
    "liblinear-one-iteration": (classifier_spec("linear_svm", params={"backend": "liblinear", "max_iter": 1},
                                                grid={"C": [0.1, 1.0]}),
                                lambda p: LinearSVC(max_iter=1, random_state=SEED, **p), "C"),
    "crammer_singer": (classifier_spec("crammer_singer", params={"max_iter": 30}, grid={"C": [0.001, 100.0]}),
                       lambda p: LinearSVC(multi_class="crammer_singer", max_iter=30, random_state=SEED, **p), "C"),
    # LIBSVM's direct route with a configured max_iter: SVC warns "Solver terminated early"
    "libsvm-max-iter": (classifier_spec("linear_svm", params={"max_iter": 80}, grid={"C": [0.001, 10.0]}),
                        lambda p: SVC(kernel="linear", max_iter=80, **p), "C"),
    # LIBSVM's default (max_iter=-1) never warns
    "libsvm-default": (classifier_spec("linear_svm", grid={"C": [0.001, 10.0]}),
                       lambda p: SVC(kernel="linear", **p), "C"),
    # the generic route, a converging fit: none warns
    "knn": (classifier_spec("knn", grid={"n_neighbors": [1, 5]}), lambda p: KNeighborsClassifier(**p),
            "n_neighbors"),
}


@pytest.mark.parametrize("case", UNCONVERGED)
def test_unconverged_fits_are_counted_as_scikit_learn_warns(case):
    spec, build, key = UNCONVERGED[case]
    X_train, y_train, X_test, y_test = _problem()
    points = [dict(p) for p in spec.grid_points()]
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, RANKING, KS, [spec], N_INNER, SEED)
    got, expected = [], []
    for row in rows:
        chosen = {key: json.loads(row["classifier_params"])[key]}
        got.append(row["diag_classifier_unconverged"])
        expected.append(_expected_unconverged(build, points, X_train, y_train, row["k"], chosen))
    assert got == expected
    n_fits = N_INNER * len(points) + 1
    if case in ("class-path-logistic", "liblinear-one-iteration"):
        assert expected == [n_fits] * len(KS)
    elif case in ("libsvm-default", "knn"):
        assert expected == [0] * len(KS)
    else:  # the count tells fits apart: some warned, not all
        assert 0 < sum(expected) < n_fits * len(KS), expected
    # a second evaluation, from the routes' caches, records the same
    again = evaluate_classifiers(X_train, y_train, X_test, y_test, RANKING, KS, [spec], N_INNER, SEED)
    assert [r["diag_classifier_unconverged"] for r in again] == got
    assert [repr(r) for r in again] == [repr(r) for r in rows]


def test_convergence_warnings_stay_off_the_console(capsys, recwarn):
    X_train, y_train, X_test, y_test = _problem()
    spec = classifier_spec("logistic", params={"max_iter": 1}, grid={"C": [0.1, 1.0]})
    rows = evaluate_classifiers(X_train, y_train, X_test, y_test, RANKING, [2], [spec], N_INNER, SEED)
    assert rows[0]["diag_classifier_unconverged"] == N_INNER * 2 + 1
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]
    assert "ConvergenceWarning" not in capsys.readouterr().err


# ----------------------------------------------------------------------------- a run through the CLI
CONFIG = """\
name: counts
seed: 3
datasets:
  - {name: toy, path: toy.csv, label: class}
protocol: {kind: holdout, train_size: 0.6, n_trials: 2}
inner_cv: {n_splits: 3}
selectors: [fisher, random]
classifiers:
  - linear_svm
  - {name: linear_svm, label: ll, params: {backend: liblinear}, grid: {C: [0.01, 1]}}
  - {name: knn, params: {n_neighbors: 3}}
  - {name: logistic, label: lr, params: {max_iter: 3}, grid: {C: [0.1, 10]}}
n_features: [2, 5]
"""


def _write_config(folder):
    X, y = make_classification(n_samples=90, n_features=8, n_informative=4, n_classes=3, n_clusters_per_class=1,
                               weights=[0.5, 0.3, 0.2], random_state=1)
    table = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    table["class"] = np.array(["ash", "birch", "cedar"])[y]
    table.to_csv(folder / "toy.csv", index=False)
    (folder / "exp.yaml").write_text(CONFIG)
    return folder / "exp.yaml"


def test_a_run_writes_the_counts_and_resumes_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "user-cache"))
    config = _write_config(tmp_path)
    runner = CliRunner()
    out = tmp_path / "res"
    first = runner.invoke(main, ["run", str(config), "--out", str(out), "-q", "--n-jobs", "1"])
    assert first.exit_code == 0, first.output
    raw = gzip.decompress((out / "runs.csv.gz").read_bytes()).decode()
    header = raw.splitlines()[0].split(",")
    at = header.index("n_test")
    assert header[at + 1:at + 4] == ["class_support", "class_predicted", "class_correct"]
    assert "diag_classifier_unconverged" in header
    runs = pd.read_csv(out / "runs.csv.gz")
    assert len(runs) == 2 * 2 * 4 * 2
    for row in runs.itertuples():
        support, predicted, correct = ([int(v) for v in str(getattr(row, c)).split(";")]
                                       for c in ("class_support", "class_predicted", "class_correct"))
        assert len(support) == len(predicted) == len(correct) == 3
        assert sum(correct) == row.n_correct and sum(support) == row.n_test == sum(predicted)
        assert all(c <= min(s, p) for c, s, p in zip(correct, support, predicted, strict=True))
    assert (runs.loc[runs.classifier == "lr", "diag_classifier_unconverged"] > 0).all()  # three iterations
    assert (runs.loc[runs.classifier == "knn", "diag_classifier_unconverged"] == 0).all()

    again = runner.invoke(main, ["run", str(config), "--out", str(out), "-q", "--n-jobs", "1"])
    assert again.exit_code == 0, again.output
    assert "4 resumed" in again.output
    pd.testing.assert_frame_equal(pd.read_csv(out / "runs.csv.gz"), runs)

    # two workers compute the same rows
    other = tmp_path / "res2"
    parallel = runner.invoke(main, ["run", str(config), "--out", str(other), "-q", "--n-jobs", "2"])
    assert parallel.exit_code == 0, parallel.output
    timing = ["fit_seconds", "task_seconds", "rows_digest"]
    pd.testing.assert_frame_equal(pd.read_csv(other / "runs.csv.gz").drop(columns=timing),
                                  runs.drop(columns=timing))


class _InventsALabel:
    """A user's classifier that predicts a label the data does not have (99) for some samples."""

    def __init__(self, C: float = 1.0):
        self.C = C

    def get_params(self, deep: bool = True) -> dict:
        return {"C": self.C}

    def set_params(self, **params):
        self.C = params.get("C", self.C)
        return self

    def fit(self, X, y):
        self.first_ = int(np.unique(y)[0])
        return self

    def predict(self, X):
        out = np.full(len(X), self.first_)
        out[::3] = 99
        return out


def test_a_classifier_predicting_no_class_of_the_data_fails_in_one_sentence():
    # counted as merely wrong, its rows would look right with accuracies that no real label gave;
    # the per-class counts cannot place the label, so the evaluation refuses it by name
    X_train, y_train, X_test, y_test = _problem()
    spec = classifier_spec(f"{__name__}:_InventsALabel", label="invents")
    with pytest.raises(ValueError, match=r"predicted \S*99\S*, which is not a class of the data"):
        evaluate_classifiers(X_train, y_train, X_test, y_test, RANKING, KS, [spec], N_INNER, SEED)
