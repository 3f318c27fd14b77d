"""The fast evaluation of the built-in linear_svm on LIBSVM (fsbench.evaluation.linear_libsvm) against the plain
scikit-learn computation, written here: the same counts, chosen C, inner accuracy and test
accuracy, bit for bit.

The plain computation is ``SVC(kernel="precomputed")`` on the linear kernel as fsbench defines it
(products summed in feature order, one rounding each: fsbench.fixed_order), computed here another
way (a prefix sum over the products). ``SVC(kernel="linear")`` takes its kernel from BLAS ``ddot``,
whose bits depend on the CPU, so it is no fixed reference (tests/test_fixed_order.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import papers_data, random_problem, separable_problem
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.svm import SVC

from fsbench.configuration.parse import ClassifierConfig, load_experiment, parse_experiment
from fsbench.datasets import load
from fsbench.engine.runner import run_experiment
from fsbench.evaluation import linear_libsvm, protocol
from fsbench.evaluation.classifiers import classifier_spec, make_classifier
from fsbench.evaluation.protocol import (
    cv_accuracy_grid,
    derive_seed,
    evaluate_ranking,
    inner_folds,
    outer_splits,
    standardize,
)

CS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)


@pytest.fixture(autouse=True)
def fresh_state():
    """Every test starts without cached counts."""
    linear_libsvm.clear_cache()
    yield
    linear_libsvm.clear_cache()


def ordered_kernel(A, B):
    """K[i, j] = (((A[i, 0] B[j, 0]) + A[i, 1] B[j, 1]) + ...), as a prefix sum of the products."""
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.shape[1] == 0:
        return np.zeros((len(A), len(B)))
    return np.cumsum(A[:, None, :] * B[None, :, :], axis=2)[:, :, -1]


class OrderedLinearSVC(ClassifierMixin, BaseEstimator):
    """SVC on the ordered linear kernel: what the built-in linear_svm is, computed the plain way."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        self.X_fit_ = np.array(X, dtype=float)
        self.svc_ = SVC(kernel="precomputed", C=self.C).fit(ordered_kernel(self.X_fit_, self.X_fit_), y)
        self.classes_ = self.svc_.classes_
        return self

    def predict(self, X):
        return self.svc_.predict(ordered_kernel(X, self.X_fit_))


def plain_classifiers(monkeypatch):
    """Make the protocol's generic route fit OrderedLinearSVC wherever it would fit SVC(kernel="linear")."""
    original = protocol.make_classifier

    def make(spec, point, seed):
        clf = original(spec, point, seed)
        if type(clf) is SVC and clf.kernel == "linear":
            return OrderedLinearSVC(C=clf.C)
        return clf

    monkeypatch.setattr(linear_libsvm, "solver_for", lambda estimators: None)
    monkeypatch.setattr(protocol, "make_classifier", make)


def _zscore(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _digits():
    X, y = load_digits(return_X_y=True)
    keep = np.random.default_rng(0).permutation(y.size)[:300]
    return _zscore(X[keep]), y[keep]


def _with_duplicates():
    """Overlapping classes with repeated rows, some repeats relabelled (near-ties and clipped duplicates)."""
    X, y = random_problem(120, 15, 4, seed=3, informative=4)
    X[60:80] = X[:20]
    y[70:80] = (y[:10] + 1) % 4
    return X, y


def _wine():
    X, y = load_wine(return_X_y=True)
    return _zscore(X), y


def _binary():
    X, y = load_breast_cancer(return_X_y=True)
    return _zscore(X[:200]), y[:200]


PROBLEMS = {"separable": lambda: separable_problem(90, 12, 3, 0), "digits-300": _digits,
            "duplicates": _with_duplicates, "wine": _wine, "breast-cancer-200": _binary}


def _split(X, y, seed=0):
    rng = np.random.default_rng(seed)
    test = np.sort(np.concatenate([rng.permutation(np.flatnonzero(y == c))[:max(2, (y == c).sum() // 4)]
                                   for c in np.unique(y)]))
    train = np.setdiff1d(np.arange(y.size), test)
    return X[train], y[train], X[test], y[test]


def _plain(X_train, y_train, X_test, y_test, rankings, ks, folds):
    """The straightforward computation: OrderedLinearSVC(C=C).fit on the top-k columns for every
    inner fold, k and C; the best C per k (pooled accuracy, ties to the smallest C); its refit on
    the training part scored on the test part (rankings[0] is the ranking refitted)."""
    correct = np.zeros((len(ks), len(CS)))
    for (fit, val), ranking in zip(folds, rankings, strict=True):
        for i, k in enumerate(ks):
            cols = ranking[:k]
            for j, C in enumerate(CS):
                clf = OrderedLinearSVC(C=C).fit(X_train[np.ix_(fit, cols)], y_train[fit])
                correct[i, j] += np.sum(clf.predict(X_train[np.ix_(val, cols)]) == y_train[val])
    accuracy = correct / sum(val.size for _, val in folds)
    rows = []
    for i, k in enumerate(ks if y_test.size else []):
        best = max(range(len(CS)), key=lambda j: (accuracy[i, j], -CS[j]))  # ties to the smallest C
        cols = rankings[0][:k]
        clf = OrderedLinearSVC(C=CS[best]).fit(X_train[:, cols], y_train)
        rows.append({"k": k, "C": CS[best], "inner_accuracy": accuracy[i].max(),
                     "n_correct": int(np.sum(clf.predict(X_test[:, cols]) == y_test))})
    return accuracy, rows


def _ranking(X, y):
    """A ranking by between-class spread (any fixed order will do)."""
    means = np.array([X[y == c].mean(axis=0) for c in np.unique(y)])
    return np.argsort(-means.var(axis=0), kind="stable")


@pytest.fixture
def kernels(monkeypatch):
    """The training kernel block of every LIBSVM computation of counts (not of cached ones)."""
    seen = []
    original = linear_libsvm._counts

    def counting(*args, **kwargs):
        seen.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(linear_libsvm, "_counts", counting)
    return seen


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_the_evaluation_equals_plain_scikit_learn(name, kernels):
    X, y = PROBLEMS[name]()
    X_train, y_train, X_test, y_test = _split(X, y)
    ranking = _ranking(X_train, y_train)
    ks = [2, 5, min(10, X.shape[1])]
    seed = 11
    folds = inner_folds(y_train, 3, derive_seed(seed, "inner-C"))
    accuracy, expected = _plain(X_train, y_train, X_test, y_test, [ranking] * 3, ks, folds)
    cfg = ClassifierConfig(name="linear_svm", C=CS)
    grid = cv_accuracy_grid(X_train, y_train, folds, [ranking] * 3, ks, cfg, seed)
    np.testing.assert_array_equal(grid, accuracy)
    rows = evaluate_ranking(X_train, y_train, X_test, y_test, ranking, ks, cfg, 3, seed)
    for row, want in zip(rows, expected, strict=True):
        assert row["k"] == want["k"]
        assert row["C"] == want["C"]
        assert row["inner_accuracy"] == want["inner_accuracy"]
        assert row["n_correct"] == want["n_correct"]
        assert row["accuracy"] == want["n_correct"] / y_test.size
    # the fast route computed them, on square kernel blocks (training rows x training rows)
    assert kernels and all(K.shape[0] == K.shape[1] for K in kernels)


def _tuned_rows(X_train, y_train, X_test, y_test, ranking, ks=(2, 5)):
    return evaluate_ranking(X_train, y_train, X_test, y_test, ranking, list(ks),
                            ClassifierConfig(name="linear_svm", C=CS), 3, 11)


def _plain_rows(X_train, y_train, X_test, y_test, ranking, ks=(2, 5)):
    folds = inner_folds(y_train, 3, derive_seed(11, "inner-C"))
    return _plain(X_train, y_train, X_test, y_test, [ranking] * 3, list(ks), folds)[1]


def _same(rows, expected):
    return [(r["k"], r["C"], r["inner_accuracy"], r["n_correct"]) for r in rows] == [
        (e["k"], e["C"], e["inner_accuracy"], e["n_correct"]) for e in expected]


def test_the_cache_key_is_the_data_s_content():
    """Data of the same shape, evaluated one after the other in one process (the first freed, so
    its memory may hold the second): each gives its own rows, whether X, y or the test part differs."""
    X, y = _with_duplicates()
    X_train, y_train, X_test, y_test = _split(X, y)
    ranking = _ranking(X_train, y_train)
    variants = {"X": (X_train[::-1].copy(), y_train, X_test, y_test),
                "y": (X_train, np.roll(y_train, 7), X_test, y_test),
                "X_test": (X_train, y_train, X_test * 0.5 + 1.0, y_test),  # another standardization
                "y_test": (X_train, y_train, X_test, np.roll(y_test, 3))}
    first = _tuned_rows(X_train, y_train, X_test, y_test, ranking)
    assert _same(first, _plain_rows(X_train, y_train, X_test, y_test, ranking))
    for name, args in variants.items():
        rows = _tuned_rows(*args, ranking)
        expected = _plain_rows(*args, ranking)
        assert not _same(first, expected), name  # the variant's rows differ: a stale count would show
        assert _same(rows, expected), name


def test_object_arrays_are_keyed_by_their_values():
    """An object array's bytes are pointers: equal values in other objects give the same key,
    other values another one."""
    a = np.array([float("1000.5"), float("2000.5")], dtype=object)
    b = np.array([float("1000.5"), float("2000.5")], dtype=object)
    assert a[0] is not b[0]
    assert linear_libsvm.digest(a) == linear_libsvm.digest(b)
    b[1] = float("3000.5")
    assert linear_libsvm.digest(a) != linear_libsvm.digest(b)


def test_per_fold_rankings_equal_plain_scikit_learn():
    """Tuning a selector: each fold has its own ranking (two folds share one)."""
    X, y = _with_duplicates()
    folds = inner_folds(y, 3, 5)
    rankings = [_ranking(X[fit], y[fit]) for fit, _ in folds]
    rankings[2] = rankings[0]
    ks = [3, 8]
    accuracy, _ = _plain(X, y, X[:0], y[:0], rankings, ks, folds)
    grid = cv_accuracy_grid(X, y, folds, rankings, ks, ClassifierConfig(name="linear_svm", C=CS), 0)
    np.testing.assert_array_equal(grid, accuracy)


def test_the_kernel_continues_across_k_as_from_scratch():
    """The kernel of the first k features, continued from the kernel of fewer (as evaluate does
    along a ranking), equals the ordered kernel computed at once, bit for bit."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 40)) * np.exp(rng.standard_normal(40) * 4)
    X_test = rng.standard_normal((9, 40))
    ranking = rng.permutation(40)
    previous = None
    for k in (1, 3, 15, 16, 17, 33, 40):
        cols = ranking[:k]
        columns = linear_libsvm._Columns(X, cols, X_test, previous=previous)
        np.testing.assert_array_equal(columns.K, ordered_kernel(X[:, cols], X[:, cols]))
        np.testing.assert_array_equal(columns.K_test, ordered_kernel(X_test[:, cols], X[:, cols]))
        columns.forget_previous()
        previous = columns


def test_counts_are_cached_and_equal(monkeypatch):
    X, y = separable_problem(60, 8, 3, 1)
    folds = inner_folds(y, 3, 2)
    ranking = _ranking(X, y)
    cfg = ClassifierConfig(name="linear_svm", C=CS)
    first = cv_accuracy_grid(X, y, folds, [ranking] * 3, [2, 4], cfg, 0)
    calls = []
    original = linear_libsvm._counts
    monkeypatch.setattr(linear_libsvm, "_counts", lambda *a, **k: calls.append(1) or original(*a, **k))
    again = cv_accuracy_grid(X, y, folds, [ranking] * 3, [2, 4], cfg, 0)
    np.testing.assert_array_equal(first, again)
    assert calls == []
    other = ranking.copy()
    other[[0, 1]] = other[[1, 0]]  # another order of the same columns is another problem
    cv_accuracy_grid(X, y, folds, [other] * 3, [2, 4], cfg, 0)
    assert len(calls) == 6  # the column order changes every kernel value's summation order


def test_only_the_linear_svc_takes_the_fast_route():
    def solver(kind, **kwargs):
        spec = classifier_spec(kind, **kwargs)
        return linear_libsvm.solver_for([make_classifier(spec, point, 0) for point in spec.grid_points()])

    found = solver("linear_svm", params={"backend": "libsvm"}, grid={"C": [0.1, 1.0]})
    assert found is not None and found[1] == [0.1, 1.0]
    assert solver("linear_svm", params={"C": 2}) == (found[0], [2.0])
    assert solver("linear_svm", params={"backend": "liblinear"}, grid={"C": [0.1, 1.0]}) is None
    assert solver("crammer_singer", grid={"C": [0.1, 1.0]}) is None
    assert solver("knn") is None
    assert solver("sklearn.svm:SVC", params={"kernel": "rbf"}) is None
    assert solver("sklearn.svm:SVC", params={"kernel": "linear", "class_weight": "balanced"}) is None
    assert solver("sklearn.svm:SVC", params={"kernel": "linear", "tol": 1e-4}, grid={"C": [1.0]})[0].tol == 1e-4


def test_non_finite_values_are_refused_as_scikit_learn_refuses_them():
    X, y = separable_problem(60, 6, 3, 2)
    X[5, 0] = np.nan
    folds = inner_folds(y, 3, 0)
    ranking = np.arange(6)
    with pytest.raises(ValueError, match="NaN"):
        cv_accuracy_grid(X, y, folds, [ranking] * 3, [2], ClassifierConfig(name="linear_svm", C=CS), 0)
    with pytest.raises(ValueError, match="NaN"):
        SVC(kernel="linear").fit(X[:, :2], y)


class _Dataset:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def test_whole_experiments_give_the_rows_of_the_plain_route(tmp_path, monkeypatch):
    """Tuned selectors (their grids scored by per-fold rankings), a fixed-C classifier and a tuned one:
    the rows with the fast route equal the rows with every classifier fitted through SVC."""
    X, y = load_digits(return_X_y=True)
    keep = np.arange(0, y.size, 6)
    data = {"digits": type("D", (), {"X": X[keep].astype(float), "y": y[keep]})()}
    timing = ["fit_seconds", "task_seconds"]
    for classifier in ("{name: linear_svm, C: [0.001, 0.1, 10]}", "{name: linear_svm, C: 1}"):
        text = f"""
name: unit
seed: 0
datasets: [digits]
protocol: {{kind: holdout, train_size: 0.6, n_trials: 2}}
inner_cv: {{n_splits: 3}}
selectors: [fisher, {{name: rfs, grid: {{gamma: [0.1, 10]}}}}]
classifier: {classifier}
n_features: [3, 12]
"""
        exp = parse_experiment(text, "unit.yaml", dataset_resolver=lambda n: _Dataset("digits", 64))
        fast = run_experiment(exp, tmp_path / "fast", data=data, n_jobs=1, force=True).runs
        linear_libsvm.clear_cache()
        with monkeypatch.context() as m:
            plain_classifiers(m)
            plain = run_experiment(exp, tmp_path / "plain", data=data, n_jobs=1, force=True).runs
        order = ["dataset", "repeat", "fold", "selector", "k"]
        # timings differ, and so does any digest over the rows' values that includes them
        drop = timing + [c for c in fast.columns if c.endswith("digest")]
        pd.testing.assert_frame_equal(fast.drop(columns=drop).sort_values(order).reset_index(drop=True),
                                      plain.drop(columns=drop).sort_values(order).reset_index(drop=True))


@pytest.mark.parametrize("paper, dataset, repeats", [("dso-fs", "ar", 2), ("rfs", "glioma", 1)])
def test_committed_rankings_give_the_plain_route_s_rows(paper, dataset, repeats, monkeypatch, one_blas_thread):
    """On the papers' data: every committed ranking of the first repetitions, evaluated with the
    fast route and with the plain one (C tuned for DSO-FS, fixed for RFS), gives the same rows."""
    data_dir = papers_data()
    root = Path(__file__).resolve().parents[1]
    rankings = pd.read_csv(root / "results" / "papers" / paper / "rankings.csv.gz")
    exp = load_experiment(root / "configs" / "papers" / f"{paper}.yaml")
    data = load(dataset, data_dir)
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    checked = 0
    for split in [s for s in outer_splits(y, exp.protocol, exp.seed, dataset) if s.repeat < repeats]:
        X_train, X_test = standardize(X, split.train, split.test, exp.standardize)
        seed = derive_seed(exp.seed, "evaluate", dataset, split.repeat, split.fold)
        n_inner = exp.inner_cv.folds_for(split.train.size)
        mine = rankings[(rankings.dataset == dataset) & (rankings.repeat == split.repeat)
                        & (rankings.fold == split.fold)]
        for _, g in mine.groupby("selector"):
            order = g.sort_values("position")["feature"].to_numpy()
            args = (X_train, y[split.train], X_test, y[split.test], order, list(exp.n_features), exp.classifier,
                    n_inner, seed)
            fast = evaluate_ranking(*args)
            with monkeypatch.context() as m:
                plain_classifiers(m)
                plain = evaluate_ranking(*args)
            assert pd.DataFrame(fast).equals(pd.DataFrame(plain))
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("name", ["duplicates", "wine"])
def test_a_replayed_refit_counts_as_the_evaluation(name, kernels):
    """protocol.refit_count (what 'fsbench rankings check' replays a stored ranking with) takes the
    evaluation's route: the count of OrderedLinearSVC for linear_svm, of the estimator for knn."""
    X, y = PROBLEMS[name]()
    X_train, y_train, X_test, y_test = _split(X, y)
    ranking = _ranking(X_train, y_train)
    for k in (1, 4, 9):
        cols = ranking[:k]
        svm = classifier_spec("linear_svm", params={"C": 0.5})
        expected = np.sum(OrderedLinearSVC(C=0.5).fit(X_train[:, cols], y_train).predict(X_test[:, cols]) == y_test)
        before = len(kernels)
        assert protocol.refit_count(X_train, y_train, X_test, y_test, cols, svm, {}, 3) == expected
        assert len(kernels) == before + 1  # through the evaluation's kernel route, not a plain SVC
        knn = classifier_spec("knn")
        plain = make_classifier(knn, {}, 3).fit(X_train[:, cols], y_train)
        assert protocol.refit_count(X_train, y_train, X_test, y_test, cols, knn, {}, 3) == np.sum(
            plain.predict(X_test[:, cols]) == y_test)
