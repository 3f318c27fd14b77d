"""Shared helpers of the tests: the papers' data folder, and the SVM-selector tests' problems."""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from fsbench.selectors import make_selector


def papers_data() -> Path:
    """The folder $FSBENCH_DATA names; the test is skipped when it is unset or not a folder (a fresh
    clone has no datasets)."""
    root = os.environ.get("FSBENCH_DATA")
    if not root or not Path(root).is_dir():
        pytest.skip("FSBENCH_DATA does not name a folder of the datasets")
    return Path(root)


@pytest.fixture(scope="module")
def digits():
    """scikit-learn's digits, every third sample (599 x 64: quick), as a run's ``data`` argument."""
    from types import SimpleNamespace

    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.arange(0, X.shape[0], 3)
    return {"digits": SimpleNamespace(X=X[keep].astype(float), y=y[keep])}


def copy_folder(folder: Path, tmp_path: Path) -> Path:
    """A copy of a results folder (a module-scoped finished run) for a test that changes it."""
    out = tmp_path / "run"
    shutil.copytree(folder, out)
    return out


@pytest.fixture
def one_blas_thread():
    """Small dense factorizations: threads only add contention on the shared CI cores."""
    with threadpool_limits(1):
        yield


def signed(y: np.ndarray, c: int) -> np.ndarray:
    """One-vs-rest coding, written independently of fsbench: +1 in the class, else -1."""
    return np.where(y[:, None] == np.arange(c)[None, :], 1.0, -1.0)


def random_problem(n: int, d: int, c: int, seed: int, informative: int = 0):
    """Gaussian features, balanced shuffled labels; the first ``informative`` features shifted
    by 3 in the direction of their class column."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    if informative:
        X[:, :informative] += 3.0 * signed(y, c)[:, np.arange(informative) % c]
    return X, y


def fit_quiet(name: str, X: np.ndarray, y: np.ndarray, **params):
    """Fit a registered selector with its warnings silenced."""
    est = make_selector(name, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est


def separable_problem(n: int = 90, d: int = 12, c: int = 3, seed: int = 0):
    """Gaussian features, c balanced classes; features 0 and 1 shifted with the class."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    X = rng.normal(size=(n, d))
    X[:, 0] += 2.0 * y
    X[:, 1] -= 1.5 * y
    return X, y


@pytest.fixture
def saved_figures(monkeypatch):
    """What fsbench.report.plots saves, panel by panel: (title, y label, {line label: xy data}) of
    each visible axis of each figure, in the order they are saved."""
    from fsbench.report import plots

    figures = []
    real_save = plots.save_figure

    def keep(fig, stem):
        figures.append([(ax.get_title(), ax.get_ylabel(), {line.get_label(): line.get_xydata()
                                                           for line in ax.get_lines()})
                        for ax in fig.axes if ax.get_visible()])
        return real_save(fig, stem)

    monkeypatch.setattr(plots, "save_figure", keep)
    return figures
