"""Information gain of the class given each discretized feature."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import check_discretization, contingency, discretize, mutual_info_from_joint
from fsbench.selectors.base import BaseSelector


def information_gain(codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int) -> np.ndarray:
    """IG_j = H(Y) - H(Y | X_j) = I(X_j; Y) in bits, from the (state, class) counts."""
    return mutual_info_from_joint(contingency(codes, n_states, y, n_classes))


@register("infogain")
class InformationGain(BaseSelector):
    """Information gain: H(Y) - H(Y | X_j) in bits on the discretized feature.

    IG_j = H(Y) - sum_u P(X_j = u) H(Y | X_j = u) with empirical probabilities (plug-in
    estimates) over the states u of feature j, which equals the mutual information I(X_j; Y).
    Features are discretized as in ``chi2`` and ``mrmr`` (``discretize``: ``"mean_std"``, 3 states
    at mean +- ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states), so the
    score does not depend on a feature's scale.
    """

    def __init__(self, n_features_to_select: int = 10, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select)
        self.discretize = discretize
        self.std_factor = std_factor
        self.n_bins = n_bins

    def check_params(self) -> None:
        check_discretization(self.discretize, self.std_factor, self.n_bins)

    def _fit(self, X, y, classes):
        codes, n_states = discretize(X, self.discretize, self.std_factor, self.n_bins)
        return information_gain(codes, n_states, y, classes.size)
