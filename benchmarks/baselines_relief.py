"""The SURF family (surf, surfstar, multisurf, multisurfstar) against skrebate 0.8.4, the ReBATE
implementation by the authors of MultiSURF, on one core (``n_jobs=1``).

Both sides get every feature as numeric (fsbench's ``discrete_threshold=0``, skrebate's
``categorical_threshold=0``) and the label type stated (skrebate would take more than 10 classes
for a continuous endpoint). skrebate divides by zero on a constant numeric feature, so the peer
is run on the non-constant features and its constant ones are given fsbench's weight, 0.

The outputs are compared score by score. They are equal where the definitions agree (MultiSURF
and MultiSURF* on two classes); elsewhere they differ by what ``fsbench.selectors.surf`` states
and ``tests/test_surf.py`` shows exactly: skrebate's SURF and SURF* threshold is the mean of the
n x n distance matrix with its zero diagonal, T (n - 1) / n; with more than two classes its miss
weighting is (c - 1)(m_C / m)^2 within the neighbourhood instead of the class priors; its
MultiSURF* far term (1 - diff with the near signs) adds one constant to every score.
"""

from __future__ import annotations

import warnings

import numpy as np
from baseline_cases import Case
from scipy.stats import spearmanr

PEERS = {"surf": "SURF", "surfstar": "SURFstar", "multisurf": "MultiSURF", "multisurfstar": "MultiSURFstar"}


def _run_skrebate(name: str):
    def run(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
        import skrebate

        varying = np.ptp(X, axis=0) > 0
        label_type = "binary" if np.unique(y).size == 2 else "multiclass"
        peer = getattr(skrebate, name)(n_features_to_select=k, categorical_threshold=0, label_type=label_type,
                                       n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer.fit(X[:, varying], y)
        scores = np.zeros(X.shape[1])
        scores[varying] = peer.feature_importances_
        return scores

    return run


def _compare(fitted, peer: np.ndarray, k: int) -> str:
    diff = fitted.scores_ - peer
    if np.abs(diff).max() <= 1e-10:
        return f"scores equal to {np.abs(diff).max():.0e}"
    if np.ptp(diff) <= 1e-10:
        return f"scores equal to {np.ptp(diff):.0e} after one constant shift ({-diff.mean():+.2e})"
    top = len(set(fitted.ranking_[:k].tolist()) & set(np.argsort(-peer, kind="stable")[:k].tolist()))
    rho = spearmanr(fitted.scores_, peer).statistic
    return f"stated differences: top {k} shared {top}/{k}, Spearman {rho:.3f}"


NOTES = {
    "surf": "skrebate: threshold T (n-1)/n (zero diagonal in the mean); >2 classes: its miss weighting",
    "surfstar": "skrebate: threshold T (n-1)/n (zero diagonal in the mean); >2 classes: its miss weighting",
    "multisurf": "equal on 2 classes; >2 classes: skrebate's miss weighting (c-1)(m_C/m)^2",
    "multisurfstar": "equal on 2 classes up to a constant (far 1 - diff); >2 classes: skrebate's miss weighting",
}

CASES: list[Case] = [
    Case(method=method, params={}, peer=f"skrebate 0.8.4 {name}", run_peer=_run_skrebate(name), compare=_compare,
         note=NOTES[method])
    for method, name in PEERS.items()
]
