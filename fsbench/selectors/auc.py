"""Area under the ROC curve of each feature, one class against the rest (Hanley & McNeil 1982, Radiology 143(1))."""

from __future__ import annotations

import math

import numpy as np

from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector
from fsbench.selectors.kruskal import class_rank_sums, exact_near_ties


def one_vs_rest_auc(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class AUCs (c, d) and the scores (d,): the mean over classes of max(AUC, 1 - AUC).

    AUC_kj = U_kj / (n_k m_k), the Mann-Whitney U of class k (n_k samples) against the other
    m_k = n - n_k samples, i.e. the share of (positive, negative) pairs the feature orders with
    the positive higher, a tie counting 1/2: U = R_k - n_k (n_k + 1) / 2 with R_k the rank sum of
    class k under mid-ranks. With V_k = max(2 U_k, 2 n_k m_k - 2 U_k), an integer,
    score = (1 / c) sum_k V_k / (2 n_k m_k), the terms added in class order; near ties are exact
    (``fsbench.selectors.kruskal.exact_near_ties``): score = sum_k V_k (L / (2 n_k m_k)) / (c L),
    L = lcm_k(2 n_k m_k), in Python integers.
    """
    n = X.shape[0]
    counts = np.bincount(y, minlength=n_classes).astype(np.int64)
    sums, _ = class_rank_sums(X, y, n_classes)            # 2 R_k, exact
    two_u = sums - (counts * (counts + 1))[:, None]        # 2 U_k
    pairs = 2 * counts * (n - counts)                      # 2 n_k m_k
    auc = two_u / pairs[:, None]
    folded = np.maximum(two_u, pairs[:, None] - two_u)     # V_k
    terms = folded / pairs[:, None]
    acc = terms[0].copy()
    for k in range(1, n_classes):                          # class order
        acc += terms[k]
    scores = acc / n_classes

    lcm = math.lcm(*map(int, pairs))
    per_class = np.array([lcm // int(p) for p in pairs], dtype=object)

    def exact(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        num = (rows.astype(object) * per_class).sum(axis=1)
        return num, np.full(rows.shape[0], n_classes * lcm, dtype=object)

    # V_k / (2 n_k m_k), c - 1 additions of non-negative terms, / c: c + 1 roundings of eps / 2
    return auc, exact_near_ties(scores, n_classes + 1, folded.T, exact)


@register("auc")
class AUC(BaseSelector):
    """AUC: the mean over classes of each feature's one-vs-rest ROC area, folded to max(AUC, 1 - AUC).

    For class k, AUC_k = P(x > x') + P(x = x') / 2 for x drawn from class k and x' from the other
    classes: the area under the ROC curve of the feature as a score for class k (Hanley & McNeil
    1982), which is the Mann-Whitney U statistic over n_k m_k (ties counted 1/2). A feature lower
    in class k separates it as well as one higher, so each class contributes max(AUC_k, 1 - AUC_k)
    and score = mean_k max(AUC_k, 1 - AUC_k), in [0.5, 1]. With two classes both one-vs-rest
    areas are AUC and 1 - AUC, so the score is the one max(AUC, 1 - AUC). Equals
    ``sklearn.metrics.roc_auc_score(y == k, x)`` per feature and class (``auc_`` (c, d) holds
    these unfolded areas). A constant feature scores 0.5.

    AUCs come from mid-ranks (one sort per feature) as exact integer rank sums. Scores equal in
    exact arithmetic (a feature and its mirror image, features that order the samples of each
    class pair alike, the many equal AUCs of discrete features) are bit-identical: every score
    within rounding of another is recomputed as an exact rational and correctly rounded. Ties
    rank by index (lower first).
    """

    def _fit(self, X, y, classes):
        self.auc_, scores = one_vs_rest_auc(X, y, classes.size)
        return scores
