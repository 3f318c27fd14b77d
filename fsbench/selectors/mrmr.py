"""Minimum redundancy maximum relevance (Peng, Long & Ding 2005), MID and MIQ criteria."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._discretize import DISCRETIZATION_CONSTRAINTS, check_discretization_relations
from fsbench.selectors._it_engine import mrmr_fit
from fsbench.selectors.base import BaseSelector, count, real

CRITERIA = ("mid", "miq")


@register("mrmr")
class MRMR(BaseSelector):
    """mRMR: incremental max relevance, min redundancy (MID or MIQ) on discretized features.

    Peng, Long & Ding (2005), incremental search for max D - R: with S the m-1 features chosen
    so far, step m adds the feature j not in S that maximizes
    MID: I(x_j; c) - 1/(m-1) sum_{i in S} I(x_j; x_i), or
    MIQ: I(x_j; c) / (1/(m-1) sum_{i in S} I(x_j; x_i) + ``miq_eps``) (Ding & Peng 2005; the
    epsilon, 1e-4 bits in Peng's program, keeps candidates with zero redundancy finite and
    ordered by relevance). Mutual information is the plug-in estimate in bits on discretized
    features: by default each feature is standardized and cut into 3 states at mean +-
    ``std_factor`` * std (the paper's rule, std_factor = 1); ``discretize="quantile"`` uses
    ``n_bins`` equal-frequency states instead (see ``fsbench.selectors._discretize``).
    The first feature is the most relevant one; exact ties go to the more relevant feature,
    then to the lower index. The search runs on the information-theoretic engine
    (``fsbench.selectors._it_engine.mrmr_fit``), whose scorer keeps mRMR's floating-point
    criterion: each step counts the joint states of the last pick and every candidate at once (one
    ``bincount``) and adds I(x_j; x_last) to a running redundancy sum.

    ``ranking_`` holds the first max(``n_features_to_select``, ``n_ranked``) features in the
    order mRMR picks them, then every other feature by decreasing relevance. ``pool_size``
    restricts the incremental search to the most relevant features (None: all features, as
    in the paper; Peng's C program uses 500, his MATLAB code 1000). ``scores_`` are reversed
    positions in the ranking (best = n_features); ``relevance_`` holds I(x_j; c) and
    ``criterion_`` the criterion value of each incremental pick.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        **DISCRETIZATION_CONSTRAINTS,
        "criterion": [StrOptions(set(CRITERIA))],
        "n_ranked": [count(1)],
        "pool_size": [count(1), None],
        # Redundancies are at most log2(states) bits (1.6 for 3 states): an epsilon above 1 bit
        # is no longer a guard against 0 / 0 but rewrites MIQ; 0 divides by zero redundancy.
        "miq_eps": [real(0, 1, "right")],
    }

    def __init__(self, *, n_features_to_select: int = 10, criterion: str = "mid", n_ranked: int = 100,
                 discretize: str = "mean_std", std_factor: float = 1.0, n_bins: int = 3,
                 pool_size: int | None = None, miq_eps: float = 1e-4):
        super().__init__(n_features_to_select=n_features_to_select)
        self.criterion = criterion
        self.n_ranked = n_ranked
        self.discretize = discretize
        self.std_factor = std_factor
        self.n_bins = n_bins
        self.pool_size = pool_size
        self.miq_eps = miq_eps

    def check_params(self) -> None:
        check_discretization_relations(self)
        if self.criterion != "miq":
            self._reject_unused("miq_eps", "criterion='miq'")

    def _fit(self, X, y, classes):
        fitted = mrmr_fit(X, y, classes.size, n_features_to_select=int(self.n_features_to_select),
                          criterion=self.criterion, n_ranked=int(self.n_ranked), discretize=self.discretize,
                          std_factor=self.std_factor, n_bins=self.n_bins,
                          pool_size=None if self.pool_size is None else int(self.pool_size),
                          miq_eps=float(self.miq_eps))
        d = X.shape[1]
        self.ranking_ = fitted.ranking
        self.relevance_ = fitted.relevance
        self.criterion_ = fitted.criterion
        self.diagnostics_ = {"mrmr_n_incremental": fitted.n_incremental}
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores
