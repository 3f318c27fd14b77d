"""Baseline cases of the correlation filters: su, fcbf, cfs (scikit-feature 1.2.1) and gini.

fsbench runs with its default discretization (3 states at mean +- 1 std of the z-scored feature)
on the z-scored data; scikit-feature, which takes each distinct value as a state, gets those same
states (``fsbench.selectors._discretize.discretize``, a few milliseconds inside the peer's time).

- ``su``: scikit-feature's ``su_calculation`` per feature; the scores are compared.
- ``fcbf``: scikit-feature's ``fcbf`` casts its (index, SU) table to integers and so takes the
  relevant features in index order, not by decreasing SU; ``prepare`` hands both sides the
  features sorted by decreasing SU (fsbench's ``su``, ties to the lower index), where its order is
  FCBF's, and the predominant features are compared.
- ``cfs``: scikit-feature's ``cfs`` is a greedy forward selection that stops after four
  non-increasing merits; fsbench's best first with ``max_stale=1`` is that greedy search stopped
  at its first non-improving pick, so the picks up to there are compared. The peer evaluates every
  candidate subset's merit from scratch with Python loops over samples (k (k + 1) / 2 SU per
  candidate at pick k), so both sides get the leading ``max_features`` features.
- ``gini``: scikit-feature's ``gini_index`` values (taken from the array its ranking sorts; it
  returns only the order), compared with fsbench's -scores_; the peer rounds at each float step,
  fsbench once, within (C + 7) eps / 2 for C classes (tests/test_gini.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from baseline_cases import Case

from fsbench.selectors._discretize import discretize
from fsbench.selectors.su import su_with_class

SKF = "scikit-feature 1.2.1"
CFS_MAX = 50


def states(X: np.ndarray) -> np.ndarray:
    """fsbench's default states (3 per feature, mean +- 1 std) as a float matrix."""
    return discretize(X, "mean_std")[0].astype(float)


def su_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from skfeature.utility.mutual_information import su_calculation

    S = states(X)
    return np.array([su_calculation(S[:, j], y) for j in range(S.shape[1])])


def su_compare(fitted: Any, peer: np.ndarray, k: int) -> str:
    diff = float(np.abs(fitted.scores_ - peer).max())
    same = np.array_equal(fitted.ranking_[:k], np.lexsort((np.arange(peer.size), -np.round(peer, 12)))[:k])
    return f"scores equal to {diff:.1e}; {'identical' if same else 'different'} top {k}"


def by_su(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The features in decreasing SU with the class (ties to the lower index): the order in which
    scikit-feature's fcbf takes them."""
    codes, n_states = discretize(X, "mean_std")
    classes, y_coded = np.unique(y, return_inverse=True)
    su, _ = su_with_class(codes, n_states, y_coded, classes.size)
    return X[:, np.lexsort((np.arange(su.size), -su))], y


def fcbf_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from skfeature.function.information_theoretical_based.FCBF import fcbf

    return fcbf(states(X), y, mode="index")


def fcbf_compare(fitted: Any, peer: np.ndarray, k: int) -> str:
    m = fitted.diagnostics_["fcbf_n_selected"]
    ours = fitted.ranking_[:m]
    if np.array_equal(ours, np.asarray(peer, dtype=int)):
        return f"identical {m} predominant features"
    return f"predominant features differ: {m} against {len(peer)}, {np.intersect1d(ours, peer).size} in common"


def cfs_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    from skfeature.function.statistical_based.CFS import cfs

    return cfs(states(X), y, mode="index")


def cfs_compare(fitted: Any, peer: np.ndarray, k: int) -> str:
    m = fitted.diagnostics_["cfs_n_selected"]
    if np.array_equal(fitted.ranking_[:m], np.asarray(peer[:m], dtype=int)):
        return f"identical {m} picks up to the first non-improving one (the peer goes on to {len(peer)})"
    return f"picks differ: {np.intersect1d(fitted.ranking_[:m], peer[:m]).size} of {m} in common"


def gini_peer(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """scikit-feature's Gini index values, taken from the array its ranking passes to argsort."""
    import skfeature.function.statistical_based.gini_index as module

    captured = []

    class Capture:
        def __getattr__(self, name):
            return getattr(np, name)

        def argsort(self, values, *args, **kwargs):
            captured.append(np.array(values, dtype=float))
            return np.argsort(values, *args, **kwargs)

    module.np = Capture()
    try:
        module.gini_index(X, y, mode="index")
    finally:
        module.np = np
    return captured[0]


def gini_compare(fitted: Any, peer: np.ndarray, k: int) -> str:
    ours = -fitted.scores_
    diff = float(np.abs(ours - peer).max()) / np.finfo(float).eps
    differ = int(np.sum(ours != peer))
    capped = int(np.sum(ours == 0.5))
    return (f"values equal to {diff:.2g} eps ({differ} of {ours.size} not bit-identical); {capped} features at "
            f"the 0.5 cap rank by index")


CASES: list[Case] = [
    Case("su", {}, f"{SKF} su_calculation", su_peer, su_compare,
         note="peer per feature on the same 3 states"),
    Case("fcbf", {}, f"{SKF} fcbf", fcbf_peer, fcbf_compare, prepare=by_su,
         note="features sorted by decreasing SU for both sides (the peer's int cast takes them in index order)"),
    Case("cfs", {"max_stale": 1}, f"{SKF} cfs (greedy)", cfs_peer, cfs_compare, max_features=CFS_MAX,
         note=f"first {CFS_MAX} features; fsbench without backtracking (max_stale=1), the peer's search"),
    Case("gini", {}, f"{SKF} gini_index", gini_peer, gini_compare),
]
