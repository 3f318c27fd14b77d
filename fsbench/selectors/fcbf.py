"""Fast Correlation-Based Filter (Yu & Liu 2003): predominant features by symmetrical uncertainty."""

from __future__ import annotations

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import DiscretizingSelector
from fsbench.selectors.base import real
from fsbench.selectors.su import (
    EntropyTable,
    su_exact_keys,
    su_tolerance,
    su_with_class,
    su_with_feature,
)


def fcbf_predominant(codes: np.ndarray, n_states: int, su_class: np.ndarray, class_tables: np.ndarray,
                     delta: float, table: EntropyTable | None = None) -> np.ndarray:
    """FCBF's predominant features, in FCBF's order (Yu & Liu 2003, Figure 1).

    The list S' holds the features with SU(X_j, Y) >= ``delta`` by decreasing SU(X_j, Y), exact
    ties to the lower index. Its first feature F_p is predominant; every later F_q in the list with
    SU(F_p, F_q) >= SU(F_q, Y) is redundant to it and removed; the next remaining feature is the
    next F_p, and so on. Each F_p is compared with all its remaining successors at once (one table
    per pair, from one ``bincount``), which is the paper's inner loop: removing one F_q does not
    change the test of another against the same F_p.

    Pairs whose two SU are within round-off of each other are decided exactly
    (``su_exact_keys``): exactly equal values count as >= (removed), whatever their floats.
    ``class_tables`` are the (state, class) tables of ``su_class``.
    """
    d = codes.shape[1]
    n = codes.shape[0]
    if table is None:
        table = EntropyTable(n)
    order = np.lexsort((np.arange(d), -su_class))
    order = order[su_class[order] >= delta]
    alive = np.ones(order.size, dtype=bool)
    picks = []
    for pos in range(order.size):
        if not alive[pos]:
            continue
        p = int(order[pos])
        picks.append(p)
        later = pos + 1 + np.flatnonzero(alive[pos + 1:])
        if later.size == 0:
            break
        q = order[later]
        su_pq, joint_pq, denom_pq = su_with_feature(codes, n_states, p, q, table)
        target = su_class[q]
        redundant = su_pq >= target
        tol = su_tolerance(denom_pq, n, joint_pq.shape[1] * joint_pq.shape[2])
        close = np.flatnonzero(np.abs(su_pq - target) <= tol)
        if close.size:
            same = np.all(su_exact_keys(joint_pq[close]) == su_exact_keys(class_tables[q[close]]), axis=1)
            redundant[close[same]] = True
        alive[later[redundant]] = False
    return np.array(picks, dtype=np.intp)


@register("fcbf")
class FCBF(DiscretizingSelector):
    """FCBF: the predominant features by SU with the class, each removing the features redundant to it.

    Yu & Liu, "Feature Selection for High-Dimensional Data: A Fast Correlation-Based Filter
    Solution", ICML 2003. SU is symmetrical uncertainty (``su``) of discretized features
    (``discretize``, ``std_factor``, ``n_bins`` as in ``su``). The relevant features are those with
    SU(X_j, Y) >= ``delta``; taken by decreasing SU(X_j, Y), each feature still listed is
    predominant and removes every later feature F_q with SU(F_p, F_q) >= SU(F_q, Y) (its
    approximate Markov blanket). Exact ties of SU(X_j, Y) go to the lower index, and an exact
    equality SU(F_p, F_q) = SU(F_q, Y) removes F_q (the paper's >=), both decided on exact values
    (``fsbench.selectors.su``).

    ``ranking_``: the predominant features in FCBF's order (decreasing SU with the class), then
    every other feature by decreasing SU(X_j, Y), ties to the lower index. ``scores_`` are reversed
    positions in the ranking (best = n_features), ``su_`` holds SU(X_j, Y), ``diagnostics_``
    ``fcbf_n_selected`` the number of predominant features.

    ``delta`` = 0 (scikit-feature's default) lets every feature compete; Yu & Liu's experiments set
    it to the SU of the floor(N / log N)-th ranked feature. scikit-feature 1.2.1's ``fcbf`` differs
    in three ways: it casts its (index, SU) table to integers, so every SU below 1 becomes 0 and it
    takes the relevant features in index order instead of by decreasing SU (on features already
    sorted by decreasing SU it returns FCBF's predominant features; tests/test_su_fcbf_cfs.py); it
    keeps SU > delta instead of >= delta; and it uses each distinct value as a state (no
    discretization of continuous data).
    """

    _parameter_constraints: dict = {
        **DiscretizingSelector._parameter_constraints,
        # SU lies in [0, 1]: 0 keeps every feature relevant, 1 only those in one-to-one relation
        # with the class; beyond either end the threshold keeps all or nothing.
        "delta": [real(0, 1, "both")],
    }

    def __init__(self, *, n_features_to_select: int = 10, delta: float = 0.0, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select=n_features_to_select, discretize=discretize,
                         std_factor=std_factor, n_bins=n_bins)
        self.delta = delta

    def _score(self, codes, n_states, y, n_classes):
        d = codes.shape[1]
        table = EntropyTable(codes.shape[0])
        su_class, class_tables = su_with_class(codes, n_states, y, n_classes, table)
        picks = fcbf_predominant(codes, n_states, su_class, class_tables, float(self.delta), table)
        by_su = np.lexsort((np.arange(d), -su_class))
        rest = by_su[~np.isin(by_su, picks)]
        self.ranking_ = np.concatenate([picks, rest]).astype(np.intp)
        self.su_ = su_class
        self.diagnostics_ = {"fcbf_n_selected": int(picks.size)}
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores
