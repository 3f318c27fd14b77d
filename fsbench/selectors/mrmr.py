"""Minimum redundancy maximum relevance (Peng, Long & Ding 2005), MID and MIQ criteria."""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._discretize import (
    DISCRETIZATION_CONSTRAINTS,
    check_discretization_relations,
    contingency,
    discretize,
    mutual_info_from_joint,
)
from fsbench.selectors.base import BaseSelector, count, real

CRITERIA = ("mid", "miq")


def mrmr_order(codes: np.ndarray, n_states: int, relevance: np.ndarray, n_select: int,
               criterion: str = "mid", miq_eps: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Incremental mRMR on discretized features: the first ``n_select`` picks and their criterion.

    ``codes`` (n, p) are the candidates' states (0..n_states-1) and ``relevance`` their
    I(x_j; c) in bits. Step 1 picks the most relevant feature; step m picks the candidate
    maximizing I(x_j; c) - R_j (MID) or I(x_j; c) / (R_j + miq_eps) (MIQ), with
    R_j = 1/(m-1) sum_{i in S} I(x_j; x_i) over the m-1 features S chosen so far. Exact ties
    go to the more relevant candidate, then to the lower index. Each step computes the mutual
    information between the last chosen feature and every candidate at once, from the counts
    of the combined codes (one ``bincount``), and adds it to a running redundancy sum.
    """
    n, p = codes.shape
    s2 = n_states * n_states
    # candidates in (relevance desc, index asc) order, so argmax's first maximum breaks ties
    order = np.lexsort((np.arange(p), -relevance))
    cand = np.ascontiguousarray(codes[:, order])
    rel = relevance[order]
    base = cand + np.arange(p) * s2          # joint cell of (last chosen, candidate) minus a * S
    xlogx = np.zeros(n + 1)
    xlogx[1:] = np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))
    marg = np.bincount((cand + np.arange(p) * n_states).ravel(), minlength=p * n_states)
    h_cand = np.log2(n) - xlogx[marg].reshape(p, n_states).sum(axis=1) / n
    chosen = [0]
    crit_values = [rel[0]]
    taken = np.zeros(p, dtype=bool)
    taken[0] = True
    redundancy = np.zeros(p)
    for m in range(1, n_select):
        last = chosen[-1]
        joint = np.bincount((base + (cand[:, last] * n_states)[:, None]).ravel(), minlength=p * s2)
        h_joint = np.log2(n) - xlogx[joint].reshape(p, s2).sum(axis=1) / n
        redundancy += np.maximum(h_cand[last] + h_cand - h_joint, 0.0)
        mean_red = redundancy / m
        crit = rel - mean_red if criterion == "mid" else rel / (mean_red + miq_eps)
        crit[taken] = -np.inf
        j = int(np.argmax(crit))
        chosen.append(j)
        crit_values.append(crit[j])
        taken[j] = True
    return order[np.array(chosen)], np.array(crit_values)


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
    then to the lower index.

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
        criterion, n_ranked, miq_eps = self.criterion, int(self.n_ranked), float(self.miq_eps)
        pool_size = None if self.pool_size is None else int(self.pool_size)
        d = X.shape[1]
        codes, n_states = discretize(X, self.discretize, self.std_factor, self.n_bins)
        relevance = mutual_info_from_joint(contingency(codes, n_states, y, classes.size))
        by_relevance = np.lexsort((np.arange(d), -relevance))
        pool = by_relevance[: min(pool_size or d, d)]
        n_select = min(max(int(self.n_features_to_select), n_ranked), pool.size)
        picks, crit = mrmr_order(codes[:, pool], n_states, relevance[pool], n_select, criterion, miq_eps)
        picks = pool[picks]
        rest = by_relevance[~np.isin(by_relevance, picks)]
        self.ranking_ = np.concatenate([picks, rest])
        self.relevance_ = relevance
        self.criterion_ = crit
        self.diagnostics_ = {"mrmr_n_incremental": int(n_select)}
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores
