"""Baseline cases of the embedded and wrapper selectors (rf_importance, permutation, rfe,
stability_selection), each against scikit-learn called directly with the same seed.

- ``rf_importance``: ``RandomForestClassifier(500, max_features="sqrt", random_state=0,
  n_jobs=1).feature_importances_``; fsbench calls exactly this, so the ratio measures its overhead.
- ``permutation``: ``train_test_split`` (stratified, 25% held out), the forest on the rest and
  ``permutation_importance(n_repeats=10)`` on the hold-out. scikit-learn predicts the hold-out
  with all 500 trees for every feature and repeat (about 0.04 s per prediction, most of it calling
  each tree), half an hour on GLIOMA's 4434 features, so both sides get the leading
  ``max_features`` = 40 features (400 predictions); fsbench's cost is the forest and the trees that
  split on each feature, whatever the number of features no tree uses (0.7-1.3 s on all features of
  each set).
- ``rfe``: ``RFE(LinearSVC(loss="hinge", dual=True, tol=1e-4, max_iter=1000, random_state=0),
  n_features_to_select=1, step=0.1)``; the same fits (fsbench skips RFE's final refit).
- ``stability_selection``: the documented procedure as a plain loop of scikit-learn
  ``LogisticRegression(l1, liblinear)`` fits (one-vs-rest), the same half-samples and grid; the
  same fits.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from baseline_cases import Case
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import RFE
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

SEED = 0
SK = "scikit-learn"


def _forest(X: np.ndarray, y: np.ndarray) -> RandomForestClassifier:
    return RandomForestClassifier(n_estimators=500, max_features="sqrt", random_state=SEED, n_jobs=1).fit(X, y)


def rf_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    return _forest(X, y).feature_importances_


def permutation_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    Xtr, Xh, ytr, yh = train_test_split(X, y, test_size=0.25, stratify=y, random_state=SEED)
    return permutation_importance(_forest(Xtr, ytr), Xh, yh, n_repeats=10, random_state=SEED, n_jobs=1).importances_mean


def rfe_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    svm = LinearSVC(loss="hinge", dual=True, tol=1e-4, max_iter=1000, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return RFE(svm, n_features_to_select=1, step=0.1).fit(X, y).ranking_


def _zero_constant(X: np.ndarray) -> np.ndarray:
    return np.where(X.max(axis=0) == X.min(axis=0), 0.0, X)


def stability_peer(X: np.ndarray, y: np.ndarray, k: int, B: int = 20, L: int = 2, ratio: float = 0.1) -> np.ndarray:
    """Selection frequencies (L, d): stratified half-samples, lambda grid from lambda_max, one-vs-rest."""
    n, d = X.shape
    c = int(y.max()) + 1
    rng = np.random.RandomState(SEED)
    lib_seed = rng.randint(2**31)
    halves = []
    for _ in range(B):
        parts = []
        for j in range(c):
            members = np.flatnonzero(y == j)
            parts.append(members[rng.permutation(members.size)[: max(1, members.size // 2)]])
        halves.append(np.sort(np.concatenate(parts)))
    Y = np.where(y[:, None] == np.arange(c), 1.0, -1.0)
    lam = np.abs(Y.T @ _zero_constant(X)).max() / (2 * n) * ratio ** (np.arange(1, L + 1) / L)
    counts = np.zeros((L, d), dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for idx in halves:
            Xi = _zero_constant(X[idx])
            for l_ in range(L):
                chosen = np.zeros(d, dtype=bool)
                for j in ([1] if c == 2 else range(c)):
                    lr = LogisticRegression(C=1.0 / (lam[l_] * idx.size), l1_ratio=1.0, solver="liblinear",
                                            random_state=lib_seed).fit(Xi, (y[idx] == j).astype(int))
                    chosen |= lr.coef_[0] != 0
                counts[l_] += chosen
    return counts / B


def equal_scores(fitted: Any, peer: np.ndarray, k: int) -> str:
    if np.array_equal(fitted.scores_, peer):
        return f"identical scores of all {peer.size} features"
    diff = np.abs(fitted.scores_ - peer)
    return f"scores differ on {np.count_nonzero(diff)} features (max {diff.max():.3g})"


def same_steps(fitted: Any, peer: np.ndarray, k: int) -> str:
    along = np.asarray(peer)[fitted.ranking_]
    if np.all(np.diff(along) >= 0):
        return f"identical elimination steps (RFE.ranking_, {int(peer.max())} groups of all {peer.size} features)"
    return f"elimination steps differ from rank position {int(np.flatnonzero(np.diff(along) < 0)[0]) + 2} on"


def equal_frequencies(fitted: Any, peer: np.ndarray, k: int) -> str:
    if np.array_equal(fitted.frequencies_, peer):
        return f"identical selection frequencies ({peer.shape[0]} lambdas x {peer.shape[1]} features)"
    return f"frequencies differ in {np.count_nonzero(fitted.frequencies_ != peer)} of {peer.size} entries"


CASES: list[Case] = [
    Case("rf_importance", {"random_state": SEED}, f"{SK} RandomForestClassifier.feature_importances_", rf_peer,
         equal_scores, note="500 trees; fsbench calls the same forest"),
    Case("permutation", {"random_state": SEED}, f"{SK} permutation_importance (RandomForestClassifier)",
         permutation_peer, equal_scores, max_features=40,
         note="500 trees, 10 repeats, 25% stratified hold-out; leading 40 features (the peer predicts with "
              "every tree for every feature and repeat)"),
    Case("rfe", {"random_state": SEED}, f"{SK} RFE(LinearSVC(hinge, dual))", rfe_peer, same_steps,
         note="step 0.1, eliminated down to 1 feature; the same fits minus RFE's final refit"),
    Case("stability_selection", {"random_state": SEED}, f"{SK} LogisticRegression(l1, liblinear), plain loop",
         stability_peer, equal_frequencies, note="20 half-samples x 2 lambdas x one-vs-rest; the same fits"),
]
