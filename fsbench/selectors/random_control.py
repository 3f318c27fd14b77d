"""A random ranking: the control every selector must beat."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from fsbench.selectors import register
from fsbench.selectors.base import RANDOM_STATE, BaseSelector


@register("random")
class RandomRanking(BaseSelector):
    """Random control: a uniformly random ranking drawn from ``random_state``.

    fsbench passes the task seed, so the control is reproducible and independent of the
    order in which tasks run. Scores are the reversed ranks (best = n_features).
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10,
                 random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.random_state = random_state

    def _fit(self, X, y, classes):
        rng = check_random_state(self.random_state)
        d = X.shape[1]
        self.ranking_ = rng.permutation(d)
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores
