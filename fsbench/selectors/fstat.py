"""One-way ANOVA F-statistic of each feature against the class."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector
from fsbench.selectors.fisher import fisher_scores


def f_statistic(X: np.ndarray, y: np.ndarray, n_classes: int) -> np.ndarray:
    """F_j = [SS_between / (c - 1)] / [SS_within / (n - c)] = (n - c) / (c - 1) * Fisher_j."""
    n = X.shape[0]
    if n <= n_classes:
        raise ValueError(f"the F-statistic needs more samples ({n}) than classes ({n_classes})")
    return (n - n_classes) / (n_classes - 1) * fisher_scores(X, y, n_classes)


@register("fstat")
class FStatistic(BaseSelector):
    """ANOVA F-statistic: between-class mean square over within-class mean square.

    F_j = [sum_k n_k (mu_kj - mu_j)^2 / (c - 1)] / [sum_k sum_{i in k} (x_ij - mu_kj)^2 / (n - c)],
    the statistic of scikit-learn's ``f_classif``; the RFS paper's "F-statistic" baseline.
    """

    def _fit(self, X, y, classes):
        return f_statistic(X, y, classes.size)
