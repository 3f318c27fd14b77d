"""Information gain of the class given each discretized feature."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import DiscretizingSelector, contingency, mutual_info_from_joint


def information_gain(codes: np.ndarray, n_states: int, y: np.ndarray, n_classes: int) -> np.ndarray:
    """IG_j = H(Y) - H(Y | X_j) = I(X_j; Y) in bits, from the (state, class) counts."""
    return mutual_info_from_joint(contingency(codes, n_states, y, n_classes))


@register("infogain")
class InformationGain(DiscretizingSelector):
    """Information gain: H(Y) - H(Y | X_j) in bits on the discretized feature.

    IG_j = H(Y) - sum_u P(X_j = u) H(Y | X_j = u) with empirical probabilities (plug-in
    estimates) over the states u of feature j, which equals the mutual information I(X_j; Y).
    Features are discretized as in ``chi2`` and ``mrmr`` (``discretize``: ``"mean_std"``, 3 states
    at mean +- ``std_factor`` * std, or ``"quantile"``, ``n_bins`` equal-frequency states), so the
    score does not depend on a feature's scale.
    """

    def _score(self, codes, n_states, y, n_classes):
        return information_gain(codes, n_states, y, n_classes)
