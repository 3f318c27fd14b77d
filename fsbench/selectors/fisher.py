"""Fisher score (Duda, Hart & Stork, Pattern Classification, 2001, sec. 3.8)."""

from __future__ import annotations

import numpy as np

from fsbench.fixed_order import column_sums, group_sums
from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector


def class_moments(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class counts (c,), means (c, d) and within-class sums of squares (d,).

    Every sum runs in sample order (:mod:`fsbench.fixed_order`), not through BLAS, whose kernel,
    chosen per CPU, would set the scores' last bits and so the order of features tied in exact
    arithmetic (features with the same values, as on GLIOMA).
    """
    counts = np.bincount(y, minlength=n_classes).astype(float)
    means = group_sums(X, y, n_classes) / counts[:, None]
    dev = X - means[y]
    within = column_sums(np.multiply(dev, dev, out=dev))
    return counts, means, within


def fisher_scores(X: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """F_j = sum_k n_k (mu_kj - mu_j)^2 / sum_k n_k sigma_kj^2.

    Between-class scatter over within-class scatter of feature j, with sigma_kj^2 the
    (biased) variance of feature j in class k. A feature constant within every class but
    varying between classes scores +inf; a constant feature scores 0.
    """
    counts, means, within = class_moments(X, y, n_classes)
    overall = column_sums(X) / X.shape[0]
    between = column_sums(counts[:, None] * (means - overall) ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = between / within
    scores[(between == 0)] = 0.0
    return scores


@register("fisher")
class FisherScore(BaseSelector):
    """Fisher score: between-class over within-class variance of each feature.

    score_j = sum_k n_k (mu_kj - mu_j)^2 / sum_k n_k sigma_kj^2, with n_k, mu_kj and
    sigma_kj^2 the size, mean and variance of class k. It orders features exactly like the
    ANOVA F-statistic (``fstat``), since F_j = (n - c) / (c - 1) * score_j.
    """

    def _fit(self, X, y, classes):
        return fisher_scores(X, y, classes.size)
