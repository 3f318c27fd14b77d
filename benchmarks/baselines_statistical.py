"""Baseline cases of the statistical filters and the trace ratio (kruskal, auc, variance, trace_ratio).

Peers, each the fastest Python implementation found of the same quantity:

- kruskal: scipy's ``stats.kruskal`` over the class groups with ``axis=0`` (vectorized over
  features); its H subtracts 3 (n + 1) from a sum of squares, so it agrees to about 1e-13
  absolute (1e-10 relative for the smallest H of ALLAML), and it gives a constant feature NaN
  (or +-inf) where fsbench gives 0.
- auc: scipy's ``stats.mannwhitneyu`` of each class against the rest with ``axis=0`` (vectorized;
  ``method="asymptotic"``, whose p-values cost nothing extra), U / (n_k m_k) being the one-vs-rest
  AUC; scikit-learn's ``roc_auc_score`` gives the same areas but takes one call per feature and
  class (minutes on 10,000 features), so it is the tests' reference, not the timed peer.
- variance: scikit-learn's ``VarianceThreshold`` (scikit-feature's ``low_variance`` is this), whose
  ``variances_`` are numpy's ``var``. The driver z-scores every feature on all samples and both
  sides see all of them, so every variance is 1 up to rounding: the scores agree to a few ulp
  and the orders, decided by those last bits, do not (see ``fsbench.selectors.variance``).
- trace_ratio: scikit-feature 1.2.1's ``trace_ratio`` (style "fisher"), which builds n x n graph
  matrices and d x d products X^T L X. On z-scored data the Fisher top k is the optimal subset,
  which is what scikit-feature returns, so the picks are comparable one for one.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from baseline_cases import Case

SCIPY = "scipy " + __import__("scipy").__version__
SKLEARN = "scikit-learn " + __import__("sklearn").__version__


def same_order(fitted: Any, peer_scores: np.ndarray, k: int) -> str:
    """Whether the peer's scores, ranked by decreasing score (NaN last, ties by index), give
    fsbench's first k picks."""
    key = np.where(np.isnan(peer_scores), -np.inf, peer_scores)
    theirs = np.argsort(-key, kind="stable")[:k]
    ours = np.asarray(fitted.ranking_[:k])
    if np.array_equal(ours, theirs):
        return f"identical order of {k} picks"
    first = int(np.flatnonzero(ours != theirs)[0])
    return f"orders differ from pick {first + 1} on ({np.intersect1d(ours, theirs).size} of {k} in common)"


def scores_and_order(fitted: Any, peer_scores: np.ndarray, k: int) -> str:
    ok = np.isfinite(peer_scores)
    ref = peer_scores[ok]
    rel = float(np.max(np.abs(fitted.scores_[ok] - ref) / np.maximum(np.abs(ref), 1e-300))) if ok.any() else 0.0
    extra = f"; {int((~ok).sum())} peer scores not finite (constant features; fsbench 0)" if not ok.all() else ""
    return f"scores equal to {rel:.1e} relative{extra}; {same_order(fitted, peer_scores, k)}"


# ----------------------------------------------------------------------------- kruskal
def _scipy_kruskal(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return stats.kruskal(*[X[y == c] for c in np.unique(y)], axis=0).statistic


# ----------------------------------------------------------------------------- auc
def _scipy_auc(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from scipy import stats

    folded = []
    for c in np.unique(y):
        pos = y == c
        u = stats.mannwhitneyu(X[pos], X[~pos], axis=0, method="asymptotic").statistic
        auc = u / (pos.sum() * (~pos).sum())
        folded.append(np.maximum(auc, 1 - auc))
    return np.mean(folded, axis=0)


# ----------------------------------------------------------------------------- variance
def _sklearn_variance(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from sklearn.feature_selection import VarianceThreshold

    # threshold 0 would report min(variance, range); z-scored features have range >= 2 > variance
    return VarianceThreshold().fit(X).variances_


def _variance_compare(fitted: Any, peer_scores: np.ndarray, k: int) -> str:
    ulp = np.spacing(1.0)
    diff = float(np.max(np.abs(fitted.scores_ - peer_scores)))
    spread = float(np.max(np.abs(fitted.scores_[fitted.scores_ > 0] - 1)))
    return (f"scores equal to {diff / ulp:.0f} ulp of 1, every one within {spread / ulp:.0f} ulp of 1; "
            f"{same_order(fitted, peer_scores, k)} (decided by rounding)")


# ----------------------------------------------------------------------------- trace ratio
def _skfeature_trace_ratio(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from skfeature.function.similarity_based.trace_ratio import trace_ratio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(trace_ratio(X, y, k, style="fisher", mode="index"))


def _picks(fitted: Any, peer: np.ndarray, k: int) -> str:
    ours, theirs = np.asarray(fitted.ranking_[:k]), np.asarray(peer[:k]).astype(int)
    if np.array_equal(ours, theirs):
        return f"identical order of {k} picks"
    first = int(np.flatnonzero(ours != theirs)[0])
    return f"orders differ from pick {first + 1} on ({np.intersect1d(ours, theirs).size} of {k} in common)"


CASES: list[Case] = [
    Case("kruskal", {}, f"{SCIPY} stats.kruskal(axis=0)", _scipy_kruskal, scores_and_order,
         note="scipy subtracts 3(n+1) from a sum of squares: ~1e-13 absolute, more relative to H near 0"),
    Case("auc", {}, f"{SCIPY} stats.mannwhitneyu(axis=0), class vs rest", _scipy_auc, scores_and_order,
         note="U / (n_k m_k) folded to max(AUC, 1 - AUC), mean over classes"),
    Case("variance", {}, f"{SKLEARN} VarianceThreshold", _sklearn_variance, _variance_compare,
         note="z-scored on all samples: every variance is 1 up to rounding"),
    Case("trace_ratio", {}, "scikit-feature 1.2.1 trace_ratio(style='fisher')", _skfeature_trace_ratio, _picks,
         note="k = 100; the peer returns its k picks only"),
]
