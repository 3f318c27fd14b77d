"""The public API of ``import fsbench``, used as a notebook would, checked against computations
made here with numpy and scikit-learn alone."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC

import fsbench

PUBLIC = {"load_experiment", "run_experiment", "make_selector", "registry", "get_selector", "parse_experiment",
          "__version__"}

CONFIG = """\
name: notebook
seed: 7
datasets: [digits]
preprocessing: {standardize: train}
protocol: {kind: holdout, train_size: 0.6, n_trials: 2}
selectors: [fisher, random]
classifier: {name: linear_svm, backend: libsvm, C: 0.1}  # fixed: no inner CV, so plain SVC(C=0.1) is the refit
n_features: [5, 10, 20]
n_jobs: 1
"""


def fisher_scores(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """sum_c n_c (mean_c - mean)^2 / sum_c n_c var_c per column; a constant column scores -inf."""
    classes = np.unique(y)
    n = np.array([(y == c).sum() for c in classes], dtype=float)
    means = np.array([X[y == c].mean(axis=0) for c in classes])
    variances = np.array([X[y == c].var(axis=0) for c in classes])
    between = (n[:, None] * (means - X.mean(axis=0)) ** 2).sum(axis=0)
    within = (n[:, None] * variances).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = between / within
    return np.where(np.isfinite(scores), scores, -np.inf)


def test_the_public_names():
    assert PUBLIC <= set(fsbench.__all__)
    assert set(fsbench.__all__) <= set(dir(fsbench))
    for name in fsbench.__all__:
        assert getattr(fsbench, name) is not None, name
    assert fsbench.__version__ == importlib.metadata.version("fsbench")
    with pytest.raises(AttributeError, match="no attribute 'run_experiments'"):
        fsbench.run_experiments  # noqa: B018
    assert "fisher" in fsbench.registry() and "random" in fsbench.registry()
    with pytest.raises(fsbench.FsbenchError, match="Did you mean 'fisher'"):
        fsbench.get_selector("fischer")


def test_import_fsbench_imports_no_layer_and_no_numerical_library():
    code = ("import sys, fsbench; print(sorted(m for m in sys.modules if m.startswith(('fsbench.', 'numpy', "
            "'pandas', 'sklearn', 'scipy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_make_selector_is_a_scikit_learn_step_choosing_the_fisher_top_features():
    X, y = load_iris(return_X_y=True)
    expected = np.sort(np.argsort(-fisher_scores(X, y), kind="stable")[:2])
    pipe = make_pipeline(fsbench.make_selector("fisher", {"n_features_to_select": 2}), SVC(kernel="linear"))
    pipe.fit(X, y)
    assert np.flatnonzero(pipe[0].get_support()).tolist() == expected.tolist() == [2, 3]
    assert pipe.score(X, y) == SVC(kernel="linear").fit(X[:, expected], y).score(X[:, expected], y)


def test_parse_experiment_validates_text():
    experiment = fsbench.parse_experiment(CONFIG)
    assert experiment.name == "notebook" and tuple(experiment.n_features) == (5, 10, 20)
    with pytest.raises(fsbench.FsbenchError, match="n_features"):
        fsbench.parse_experiment(CONFIG.replace("n_features: [5, 10, 20]", "n_features: [5, 5]"))


def test_a_notebook_runs_an_experiment_in_three_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "small.yaml"
    config.write_text(CONFIG)

    exp = fsbench.load_experiment(config)
    result = fsbench.run_experiment(exp, tmp_path / "out")

    runs = result.runs
    assert result.n_tasks == 4 and len(runs) == 2 * 2 * 3
    written = pd.read_csv(tmp_path / "out" / "runs.csv.gz")
    assert written["n_correct"].tolist() == runs["n_correct"].tolist()
    X, y = load_digits(return_X_y=True)
    X = X.astype(float)
    from fsbench.evaluation.protocol import outer_splits

    by_repeat = {s.repeat: s for s in outer_splits(y, exp.protocol, exp.seed, "digits")}
    checked = 0
    for row in runs.itertuples():
        # the split, from the seed the row records, with scikit-learn's stratified shuffle split
        train, test = next(StratifiedShuffleSplit(n_splits=1, train_size=0.6, random_state=int(row.split_seed))
                           .split(X, y))
        train, test = np.sort(train), np.sort(test)
        assert np.array_equal(train, by_repeat[row.repeat].train) and np.array_equal(test, by_repeat[row.repeat].test)
        # z-scores fitted on the training part (a constant column is left centred)
        mean, std = X[train].mean(axis=0), X[train].std(axis=0)
        std[std == 0] = 1.0
        Z = (X - mean) / std
        if row.selector == "fisher":
            scores = fisher_scores(Z[train], y[train])
            order = np.argsort(-scores, kind="stable")
            gap = scores[order[row.k - 1]] - scores[order[row.k]]
            assert gap > 1e-6 * abs(scores[order[0]]), "the k-th and next feature are too close to decide here"
        else:  # the control: a uniformly random permutation drawn from the task seed
            order = np.random.RandomState(int(row.seed)).permutation(X.shape[1])
        features = order[:row.k]
        predicted = SVC(kernel="linear", C=0.1).fit(Z[train][:, features], y[train]).predict(Z[test][:, features])
        assert (row.n_test, row.n_correct) == (test.size, int((predicted == y[test]).sum())), row
        assert row.accuracy == pytest.approx((predicted == y[test]).mean(), abs=1e-12)
        assert row.class_correct == ";".join(str(int(((predicted == y[test]) & (y[test] == c)).sum()))
                                             for c in range(10))
        checked += 1
    assert checked == 12
    # the rankings file holds the same top features, best first
    rankings = pd.read_csv(tmp_path / "out" / "rankings.csv.gz")
    first = rankings[(rankings["selector"] == "random") & (rankings["repeat"] == 0)].sort_values("position")
    seed = int(runs[(runs["selector"] == "random") & (runs["repeat"] == 0)]["seed"].iloc[0])
    assert first["feature"].tolist()[:20] == np.random.RandomState(seed).permutation(64)[:20].tolist()
