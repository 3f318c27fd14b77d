"""RFS's problem by ADMM, for many more samples than features, with the duality gap of Algorithm 1.

The problem is RFS's (Nie, Huang, Cai & Ding, NIPS 2010, eq. 10, X samples x features):

    min_W  J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1}.

Algorithm 1 (:func:`fsbench.selectors.rfs.rfs_fit`) solves one n x n or d x d linear system per
iteration, with weights that follow the row norms of W and of the residual. Where samples
outnumber features, some residual rows go to zero at the optimum (samples the fit passes
through: 66 of 5,000 on a 5,000 x 2,000 problem), their weights grow without bound, and the
iteration slows to a crawl: 300 iterations of 0.5-2.1 s each left a relative gap of 3.5e-5
there (``benchmarks/rfs_large_n.md``).

This module solves the same problem by the alternating direction method of multipliers (Boyd,
Parikh, Chu, Peleato & Eckstein, Foundations and Trends in Machine Learning 3(1), 2011; scaled
form, section 3.1.1), on the splitting

    min ||E||_{2,1} + gamma ||V||_{2,1}   subject to   X W + E = Y,   sqrt(sigma) (W - V) = 0,

with sigma = ||X||_F^2 / d (the mean squared column norm, so that both constraints weigh
alike). One iteration, with U1, U2 the scaled dual variables and rho the penalty:

    W  = (X^T X + sigma I)^-1 (X^T (Y - E - U1) + sigma (V - U2))   (one Cholesky factor, reused)
    E  = shrink(Y - X W^ - U1, 1 / rho)
    V  = shrink(W^ + U2, gamma / (rho sigma))
    U1 = U1 + X W^ + E - Y,   U2 = U2 + W^ - V

where shrink(A, t) scales each row a of A by max(0, 1 - t / ||a||) (the proximal map of the
l2,1 norm) and W^ is the over-relaxed iterate (section 3.4.3): X W^ = alpha X W + (1 - alpha)
(Y - E_old), W^ = alpha W + (1 - alpha) V_old, alpha = 1.6. rho follows residual balancing
(section 3.4.1: doubled when the primal residual is ten times the dual one, halved in the
opposite case; U1, U2 rescaled with it), checked every ten iterations. An iteration costs two
passes over X (X^T times an n x c matrix, X times a d x c one) and a d x d triangular solve.

The stopping rule is Algorithm 1's certificate (derived in :func:`fsbench.selectors.rfs.rfs_fit`):
for any Lambda (n x c) with Tr(Lambda^T Y) > 0, D(Lambda) = Tr(Lambda^T Y) / s with
s = max(max_i ||lambda_i||, max_j ||x_j^T Lambda|| / gamma) is a lower bound on min J. ADMM's
own dual variable gives one: Lambda = -rho U1 (the optimality conditions of the E- and
W-updates make -rho U1 a subgradient of ||E||_{2,1} whose X^T-image is a subgradient of
gamma ||V||_{2,1}, so at the limit s = 1 and D = min J). Every ten iterations J(V) and
D(-rho U1) are computed; the fit stops once (J(V) - D_best) / D_best <= tol, which certifies
(J(V) - min J) / min J <= tol, and returns V, whose rows are exactly zero where the shrinkage
set them so.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from fsbench.selectors.rfs import RFSFit, RFSStep, rfs_dual_bound

__all__ = ["rfs_fit_admm"]

#: over-relaxation (Boyd et al. 2011, section 3.4.3 recommend 1.5 to 1.8)
ALPHA = 1.6
#: residual balancing (section 3.4.1): rho changes by this factor when one residual exceeds
#: the other MU times
TAU, MU = 2.0, 10.0
#: iterations between two checks of the gap and of the residual balance
CHECK_EVERY = 10


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _shrink(A: np.ndarray, t: float) -> np.ndarray:
    """The proximal map of t ||.||_{2,1}: each row a scaled by max(0, 1 - t / ||a||)."""
    norms = _row_norms(A)
    factor = np.zeros_like(norms)
    positive = norms > t
    factor[positive] = 1.0 - t / norms[positive]
    return A * factor[:, None]


class _Design:
    """X in both memory orders, for its two products with thin matrices at full speed, and the
    solve with X^T X + sigma I by one Cholesky factor (d x d, or n x n through Woodbury's
    identity when d > n)."""

    def __init__(self, X: np.ndarray, sigma: float):
        self.X = np.ascontiguousarray(X)
        self.XT = np.ascontiguousarray(X.T)
        self.sigma = sigma
        n, d = X.shape
        self.wide = d > n
        if self.wide:  # (X^T X + s I)^-1 b = (b - X^T (X X^T + s I)^-1 X b) / s
            K = self.X @ self.XT
        else:
            K = self.XT @ self.X
        K[np.diag_indices_from(K)] += sigma
        self.factor = linalg.cho_factor(K, lower=False, check_finite=False)

    def times(self, W: np.ndarray) -> np.ndarray:
        """X W for W (d, c)."""
        return (W.T @ self.XT).T

    def transposed_times(self, B: np.ndarray) -> np.ndarray:
        """X^T B for B (n, c)."""
        return (B.T @ self.X).T

    def solve(self, b: np.ndarray) -> np.ndarray:
        """(X^T X + sigma I)^-1 b for b (d, c)."""
        if not self.wide:
            return linalg.cho_solve(self.factor, b, check_finite=False)
        inner = linalg.cho_solve(self.factor, self.times(b), check_finite=False)
        return (b - self.transposed_times(inner)) / self.sigma


def rfs_fit_admm(X: np.ndarray, Y: np.ndarray, gamma: float, *, tol: float = 1e-7,
                 max_iter: int = 50_000, rho: float = 1.0) -> RFSFit:
    """Minimize J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} by ADMM until the duality gap
    certifies J within ``tol`` of its minimum (module docstring).

    Returns :class:`fsbench.selectors.rfs.RFSFit`: W = V of the last iteration, J(V) and the
    dual bound at each check (every ten iterations), the relative gap of the returned W against
    the best bound, whether it met ``tol`` before ``max_iter`` iterations, and ``dual_scores``,
    ||x_j^T Lambda|| / gamma at the last check's Lambda = -rho U1 (at most 1 on the optimum's zero
    rows, 1 on its non-zero ones, at the limit). ``tol`` = 0 runs
    ``max_iter`` iterations. ``rho`` is the starting penalty (residual balancing adapts it).
    """
    if gamma <= 0:
        raise ValueError(f"gamma must be positive, got {gamma}")
    if rho <= 0:
        raise ValueError(f"rho must be positive, got {rho}")
    n, d = X.shape
    c = Y.shape[1]
    sigma = float(np.einsum("ij,ij->", X, X)) / d
    if not sigma > 0:
        sigma = 1.0
    design = _Design(X, sigma)
    XtY = design.transposed_times(Y)
    V = np.zeros((d, c))
    E = Y.copy()
    U1, U2 = np.zeros((n, c)), np.zeros((d, c))
    objective: list[float] = []
    dual: list[float] = []
    best_dual, gap, converged = 0.0, np.inf, False
    closeness = np.zeros(d)
    for iteration in range(1, max_iter + 1):
        W = design.solve(XtY - design.transposed_times(E + U1) + sigma * (V - U2))
        XW = design.times(W)
        E_old, V_old = E, V
        XW_relaxed = ALPHA * XW + (1.0 - ALPHA) * (Y - E_old)
        W_relaxed = ALPHA * W + (1.0 - ALPHA) * V_old
        E = _shrink(Y - XW_relaxed - U1, 1.0 / rho)
        V = _shrink(W_relaxed + U2, gamma / (rho * sigma))
        U1 += XW_relaxed + E - Y
        U2 += W_relaxed - V
        if iteration % CHECK_EVERY and iteration != max_iter:
            continue
        Lam = -rho * U1
        step = RFSStep(V, E, Lam, design.transposed_times(Lam))
        closeness = _row_norms(step.XtLam) / gamma
        dual.append(rfs_dual_bound(Y, gamma, step))
        best_dual = max(best_dual, dual[-1])
        objective.append(float(_row_norms(design.times(V) - Y).sum() + gamma * _row_norms(V).sum()))
        gap = (objective[-1] - best_dual) / best_dual if best_dual > 0 else np.inf
        if tol > 0 and gap <= tol:
            converged = True
            break
        primal_residual = np.sqrt(np.vdot(XW + E - Y, XW + E - Y) + sigma * np.vdot(W - V, W - V))
        change = design.transposed_times(E - E_old) - sigma * (V - V_old)
        dual_residual = rho * np.sqrt(np.vdot(change, change))
        if primal_residual > MU * dual_residual:
            rho *= TAU
            U1 /= TAU
            U2 /= TAU
        elif dual_residual > MU * primal_residual:
            rho /= TAU
            U1 *= TAU
            U2 *= TAU
    return RFSFit(V, np.asarray(objective), np.asarray(dual), float(gap), converged, closeness)
