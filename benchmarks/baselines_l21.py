"""Baseline cases of the l2,1-penalized models (see ``baseline_cases.py``).

- ``ls_l21`` against scikit-learn's ``MultiTaskLasso`` called directly on the same problem (alpha =
  0.1 alpha_max, computed on the peer's side too, tol 1e-6): fsbench adds input validation, a
  duplicate-column check and the fixed-order gradient that orders the zero rows, 3 to 5 ms of CPU
  outside ``MultiTaskLasso.fit`` (whose fit takes 60 to 400 ms on the microarray sets), and spares
  that fit its second scan of X for NaN; the two sides' times agree within run-to-run noise.
- ``ll_l21`` with ``loss="ovr"`` (the problem scikit-feature solves) against scikit-feature 1.2.1's
  ``ll_l21.proximal_gradient_descent`` with z = 0.1 lambda_max. The peer raises under numpy 2 at its
  first line-search step (``np.inner`` of a (1, c) and a (c,) array ends in a float array's slot);
  it runs here with that term taken by ``.item()``, nothing else changed. It stops when its
  objective changes by less than 1e-3 between iterations, far above the optimum fsbench certifies
  (duality gap 1e-6), so the comparison states how far: the peer's objective above fsbench's, and
  the overlap of the top features. (Run to its 1000-iteration cap on GLIOMA, 50 x 4434, it took
  38 s, 63 times fsbench's fit, and ended 6e-4 above the optimum.)
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from baseline_cases import Case
from sklearn.linear_model import MultiTaskLasso

RATIO = 0.1


def _indicators(y: np.ndarray) -> np.ndarray:
    return (y[:, None] == np.unique(y)[None, :]).astype(float)


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _multitask_lasso(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """MultiTaskLasso at 0.1 alpha_max, alpha_max = max_j ||x_j^T Y_c|| / n (x_j centred): W (d, c)."""
    Y = _indicators(y)
    Yc = Y - Y.mean(axis=0)
    G0t = Yc.T @ X  # X_c^T Y_c = X^T Y_c, as (c, d): BLAS's faster layout
    alpha_max = np.sqrt(np.einsum("kj,kj->j", G0t, G0t)).max() / X.shape[0]
    model = MultiTaskLasso(alpha=RATIO * alpha_max, fit_intercept=True, tol=1e-6, max_iter=100_000).fit(X, Y)
    return model.coef_.T


def _compare_ls(fitted: Any, W: np.ndarray, k: int) -> str:
    if np.array_equal(fitted.coef_, W):
        return f"W identical ({fitted.diagnostics_['n_nonzero']} non-zero rows)"
    return f"max |W - W_peer| = {np.abs(fitted.coef_ - W).max():.1e}"


def skfeature_ll_l21():
    """scikit-feature's ll_l21.proximal_gradient_descent with its numpy-2 failure fixed (one term
    taken by .item())."""
    import skfeature.function.sparse_learning_based.ll_l21 as peer

    source = inspect.getsource(peer)
    fixed = source.replace("np.inner((C - SC), GC)", "np.inner((C - SC), GC).item()")
    if fixed.count(".item()") != 1:
        raise RuntimeError("scikit-feature's ll_l21 is not the 1.2.1 code this case patches")
    namespace: dict = {"__name__": "skfeature_ll_l21_fixed"}
    exec(compile(fixed, peer.__file__, "exec"), namespace)
    return namespace["proximal_gradient_descent"]


def _ovr_lambda_max(X: np.ndarray, y: np.ndarray) -> float:
    """max_j ||x_j^T (T - 1 pi^T)|| / (n c): W = 0 is optimal for the ovr loss from there on."""
    T = _indicators(y)
    return float(_row_norms(X.T @ (T.mean(axis=0) - T)).max() / T.size)


def _skfeature(X: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    W, obj, _ = skfeature_ll_l21()(X, y, RATIO * _ovr_lambda_max(X, y), mode="raw")
    return W, float(obj[np.flatnonzero(obj)[-1]])


def _compare_ll(fitted: Any, peer: tuple[np.ndarray, float], k: int) -> str:
    W, value = peer
    norms = _row_norms(W)
    top = np.argsort(-norms, kind="stable")[:k]
    above = (value - fitted.objective_[-1]) / fitted.objective_[-1]
    return (f"peer objective {above:.1e} above fsbench's (gap {fitted.duality_gap_:.0e}); top-{k} overlap "
            f"{len(set(top) & set(fitted.ranking_[:k]))}; non-zero rows {np.count_nonzero(norms)} vs "
            f"{fitted.diagnostics_['n_nonzero']}")


CASES: list[Case] = [
    Case(
        method="ls_l21",
        params={"alpha_ratio": RATIO, "tol": 1e-6},
        peer="scikit-learn 1.9 MultiTaskLasso",
        run_peer=_multitask_lasso,
        compare=_compare_ls,
        note="alpha = 0.1 alpha_max, tol 1e-6 on both sides",
    ),
    Case(
        method="ll_l21",
        params={"loss": "ovr", "lambda_ratio": RATIO, "tol": 1e-6},
        peer="scikit-feature 1.2.1 ll_l21 (numpy-2 fix)",
        run_peer=_skfeature,
        compare=_compare_ll,
        note="same problem (ovr loss, z = 0.1 lambda_max); the peer stops when F changes < 1e-3",
    ),
]
