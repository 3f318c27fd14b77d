"""Two-sample t statistic; for more than two classes the maximum over one-vs-rest t statistics."""

from __future__ import annotations

import numpy as np

from fsbench.fixed_order import column_sums, group_sums
from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector


def one_vs_rest_t(X: np.ndarray, y: np.ndarray, n_classes: int, equal_var: bool = False) -> np.ndarray:
    """t statistics (n_classes, d) of class k against all other samples, for every feature.

    t_kj = (mean_k - mean_rest) / se with se^2 = s_k^2 / n_k + s_rest^2 / n_rest (Welch) or
    s_p^2 (1 / n_k + 1 / n_rest), s_p^2 = (SS_k + SS_rest) / (n - 2) (Student, ``equal_var``).
    Sample variances use n - 1; a group of one sample has variance 0. 0 / 0 gives 0 and
    x / 0 gives +-inf. The rest group's sum of squares is assembled from per-class sums as
    sum_l [SS_l + n_l (mean_l - mean_rest)^2], which avoids cancellation.
    """
    n = X.shape[0]
    counts = np.bincount(y, minlength=n_classes).astype(float)
    # sums in sample order, not through BLAS (fsbench.fixed_order: the same bits on every machine)
    means = group_sums(X, y, n_classes) / counts[:, None]
    dev = np.take(means, y, axis=0)
    np.subtract(X, dev, out=dev)
    np.square(dev, out=dev)
    ss = group_sums(dev, y, n_classes)
    t = np.empty((n_classes, X.shape[1]))
    for k in range(n_classes):
        rest = np.arange(n_classes) != k
        n_k, n_r = counts[k], n - counts[k]
        mean_r = column_sums(counts[rest, None] * means[rest]) / n_r
        ss_r = column_sums(ss[rest]) + column_sums(counts[rest, None] * (means[rest] - mean_r) ** 2)
        if equal_var:
            se2 = (ss[k] + ss_r) / max(n - 2, 1) * (1 / n_k + 1 / n_r)
        else:
            se2 = ss[k] / max(n_k - 1, 1) / n_k + ss_r / max(n_r - 1, 1) / n_r
        diff = means[k] - mean_r
        with np.errstate(divide="ignore", invalid="ignore"):
            t[k] = diff / np.sqrt(se2)
        t[k, diff == 0] = 0.0
    return t


@register("ttest")
class TTest(BaseSelector):
    """T-test: |two-sample t| of each feature; with c > 2 classes, the max one-vs-rest |t|.

    Two classes: score_j = |t_j|, the two-sample t statistic of feature j, Welch's
    t = (m_1 - m_2) / sqrt(s_1^2 / n_1 + s_2^2 / n_2) by default (scipy's
    ``ttest_ind(equal_var=False)``; scikit-feature's ``t_score`` is the same with n instead
    of n - 1 in the variances) or Student's pooled t with ``equal_var=True``.
    More than two classes (the papers do not state a rule; this is fsbench's):
    score_j = max_k |t_kj|, where t_kj compares class k with all other samples, so a feature
    scores high when it separates at least one class from the rest. With two classes both
    one-vs-rest statistics are +-t, so the rule reduces to |t|. The signed statistics are kept
    in ``tstats_`` (n_classes, n_features).
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "equal_var": ["boolean"],
    }

    def __init__(self, *, n_features_to_select: int = 10, equal_var: bool = False):
        super().__init__(n_features_to_select=n_features_to_select)
        self.equal_var = equal_var

    def _fit(self, X, y, classes):
        self.tstats_ = one_vs_rest_t(X, y, classes.size, bool(self.equal_var))
        return np.abs(self.tstats_).max(axis=0)
