"""Chi-square statistic of each discretized feature against the class (Liu & Setiono 1995)."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import DiscretizingSelector, contingency


def chi2_from_counts(counts: np.ndarray) -> np.ndarray:
    """Pearson's chi2 = sum_{u,k} (O_uk - E_uk)^2 / E_uk of tables (..., states, classes).

    E_uk = O_u. O_.k / n; empty states (E = 0) contribute nothing, as if removed from the table.
    """
    counts = counts.astype(float)
    n = counts.sum(axis=(-2, -1), keepdims=True)
    expected = counts.sum(axis=-1, keepdims=True) * counts.sum(axis=-2, keepdims=True) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (counts - expected) ** 2 / expected
    return np.where(expected > 0, terms, 0.0).sum(axis=(-2, -1))


@register("chi2")
class ChiSquare(DiscretizingSelector):
    """Chi-square: Pearson's statistic of the (discretized feature x class) contingency table.

    Each feature is first discretized (``discretize``: ``"mean_std"``, 3 states at mean +-
    ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states; see
    ``fsbench.selectors._discretize``), then scored by Liu & Setiono's (1995) statistic
    chi2 = sum_u sum_k (A_uk - E_uk)^2 / E_uk, with A_uk the number of samples of class k in
    state u and E_uk = R_u C_k / n. It is computed on the states, never on the raw values,
    so it is independent of each feature's scale and sign and needs no non-negative data
    (scikit-learn's ``chi2`` instead treats raw non-negative values as frequencies: a different
    statistic; it equals this one only when fed the one-hot encoding of the states and its
    per-state values are summed).
    """

    def _score(self, codes, n_states, y, n_classes):
        return chi2_from_counts(contingency(codes, n_states, y, n_classes))
