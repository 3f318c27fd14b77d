"""The one-vs-rest hinge loss with an l2,1 penalty (L21-SVM) or its square (SL21), by ADMM.

Private helper of ``l21svm`` and ``sl21`` (``sl2p`` with p = 1) for many more samples than
features. The problem, with Y in {-1, +1}^(n x c) (y_ik = +1 iff sample i is in class k), is

    min_{W, b}  J(W, b) = R(W) + 1/2 ||b||^2 + C sum_i sum_k max(0, 1 - y_ik (x_i^T w_k + b_k))

with R(W) = lam ||W||_{2,1} (``penalty="l21"``; L21-SVM, lam = 1/2) or R(W) = lam/2 ||W||_{2,1}^2
(``penalty="l21_squared"``; SL21, lam = d^-C_scale), ||W||_{2,1} = sum_v ||w^v|| over the rows of
W (d x c). The intercept b is regularized as in :mod:`fsbench.selectors._svm`; without it b = 0.

The reweighting of those selectors solves one SVM per step and takes hundreds of steps at
n >> d, each slower as n grows (over 600 s at n = 5,000, d = 2,000: ``benchmarks/scale.md``).
Here the alternating direction method of multipliers (Boyd, Parikh, Chu, Peleato & Eckstein,
Foundations and Trends in Machine Learning 3(1), 2011; scaled form, section 3.1.1) works on the
splitting

    min sum_ik C max(0, 1 - z_ik) + R(V) + 1/2 ||b||^2
    subject to  Y o (X W + 1 b^T) = Z,   sqrt(sigma) (W - V) = 0.

One iteration, with U1 (n x c), U2 (d x c) the scaled dual variables and rho the penalty:

    (W, b) = argmin rho/2 ||X W + 1 b^T - Y o (Z - U1)||^2 + rho sigma/2 ||W - V + U2||^2 + 1/2 ||b||^2
             (the normal equations [X 1]^T [X 1] + diag(sigma I, 1/rho): one Cholesky factor,
             d + 1 square, or n x n through Woodbury's identity when d > n; refactored only
             when rho changes)
    Z  = prox of (C / rho) max(0, 1 - z) at M^ + U1, with M = Y o (X W + 1 b^T)
    V  = prox of R / (rho sigma) at W^ + U2
    U1 = U1 + M^ - Z,   U2 = U2 + W^ - V

where M^, W^ are the over-relaxed iterates (section 3.4.3, alpha = 1.6). The prox of
t ||.||_{2,1} scales each row a by max(0, 1 - t / ||a||); the prox of t/2 ||.||_{2,1}^2 does the
same with the one threshold t T, T the sum of the resulting row norms (for the rows kept,
s_v = r_v - t T, so T = S_m / (1 + m t) over the m largest norms r_v: the largest m with
r_m > t S_m / (1 + m t)). rho follows residual balancing (section 3.4.1), checked every ten
iterations. sigma weighs the two constraints: ``SIGMA_SCALE[penalty]`` ||X||_F^2 / d.

Stopping rule: a duality gap. For alpha in [0, C]^(n x c), with g_v = x_v^T (alpha o Y) the rows
of G = X^T (alpha o Y) and beta = 1^T (alpha o Y),

    D(alpha) = sum alpha - 1/2 ||beta||^2 - R*(G),
    R* = 0 if max_v ||g_v|| <= lam, else +inf          (the l2,1 norm's dual ball)
    R* = 1/(2 lam) max_v ||g_v||^2                       (the square's conjugate)

is a lower bound on min J (Lagrange duality of the hinge; without the intercept the beta term
is absent). ADMM's own dual variable gives alpha = -rho U1 (at the limit, the hinge's
subgradient); it is clipped into the box and scaled by the t in (0, 1] that maximizes D(t alpha)
(for the l2,1 norm, t <= lam / max_v ||g_v|| keeps it feasible). Every ten iterations J(V, b) and
D are computed; the fit stops once (J - D_best) <= tol J, which certifies J within tol
(relative) of min J, and returns that iterate (V, b): V's rows are exactly zero where the prox
set them so.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError

__all__ = [
    "ADMM_ITERATIONS_PER_STEP", "PENALTIES", "L21Fit", "admm_ranking", "admm_route",
    "check_admm_params", "hinge_l21_admm", "hinge_l21_dual_bound", "warn_admm_not_converged",
]

PENALTIES = ("l21", "l21_squared")
#: over-relaxation (Boyd et al. 2011, section 3.4.3 recommend 1.5 to 1.8)
ALPHA = 1.6
#: residual balancing (section 3.4.1): rho changes by this factor when one residual exceeds
#: the other MU times
TAU, MU = 2.0, 10.0
#: iterations between two checks of the gap and of the residual balance
CHECK_EVERY = 10
#: sigma = SIGMA_SCALE[penalty] ||X||_F^2 / d. Measured (``benchmarks/l21svm_admm.md``, scales 1,
#: 0.1, 0.01, 0.001, on make_classification from 200 x 100 to 5,000 x 2,000 and SEMEION's
#: training part): for the l2,1 norm 0.01 took 2-6x fewer iterations than 1, and no other was
#: faster by more than 10 %; for its square 0.1 was the fastest or within 11 % of it.
SIGMA_SCALE = {"l21": 0.01, "l21_squared": 0.1}
#: with solver "admm", max_iter counts this many ADMM iterations per reweighting step it stands
#: for (the default 200 allows 50,000; 2,000-3,000 certified 1e-6 at 5,000 x 2,000)
ADMM_ITERATIONS_PER_STEP = 250


@dataclass
class L21Fit:
    W: np.ndarray  # (d, c), exact zero rows
    b: np.ndarray  # (c,), zeros without the intercept
    alpha: np.ndarray  # (n, c) in [0, C]: the dual point of the best bound
    objective: np.ndarray  # J at each check (the last is J(W, b))
    dual: np.ndarray  # D at each check
    gap: float  # (J(W, b) - best D) / J(W, b)
    converged: bool  # gap <= tol before max_iter
    n_iter: int
    dual_scores: np.ndarray  # (d,) ||g_v|| at alpha: lam on the optimum's non-zero rows (l21)


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _prox(A: np.ndarray, t: float, penalty: str) -> np.ndarray:
    """The proximal map of t ||.||_{2,1} or of t/2 ||.||_{2,1}^2 at A (module docstring)."""
    norms = _row_norms(A)
    if penalty == "l21_squared":
        order = np.argsort(-norms, kind="stable")
        sums = np.cumsum(norms[order])
        m = np.arange(1, norms.size + 1)
        totals = sums / (1.0 + m * t)
        kept = np.flatnonzero(norms[order] > t * totals)
        t = t * totals[kept[-1]] if kept.size else np.inf
    factor = np.zeros_like(norms)
    positive = norms > t
    factor[positive] = 1.0 - t / norms[positive]
    return A * factor[:, None]


def _penalty(W: np.ndarray, lam: float, penalty: str) -> float:
    l21 = float(_row_norms(W).sum())
    return lam * l21 if penalty == "l21" else 0.5 * lam * l21 * l21


def objective(X: np.ndarray, Y: np.ndarray, W: np.ndarray, b: np.ndarray, C: float, lam: float,
              penalty: str) -> float:
    """J(W, b) of the module docstring."""
    hinge = np.maximum(0.0, 1.0 - Y * (X @ W + b)).sum()
    return _penalty(W, lam, penalty) + 0.5 * float(b @ b) + C * float(hinge)


def hinge_l21_dual_bound(G: np.ndarray, beta: np.ndarray, total: float, lam: float,
                         penalty: str) -> tuple[float, float]:
    """(max over t in (0, 1] of D(t alpha), that t), from G = X^T (alpha o Y), beta = 1^T (alpha o
    Y) (zeros without the intercept) and total = sum alpha, for alpha in the box [0, C]."""
    if total <= 0:
        return 0.0, 1.0
    g_max = float(_row_norms(G).max(initial=0.0))
    quadratic = float(beta @ beta)
    if penalty == "l21":
        limit = 1.0 if g_max <= lam else lam / g_max
    else:
        limit = 1.0
        quadratic += g_max * g_max / lam
    t = min(limit, total / quadratic) if quadratic > 0 else limit
    return t * total - 0.5 * t * t * quadratic, t


class _Design:
    """[X 1] (or X) in both memory orders, and the solve with [X 1]^T [X 1] + diag(sigma I, 1/rho)
    by one Cholesky factor (of that matrix, or of I + [X 1] D^-1 [X 1]^T through Woodbury's
    identity when d > n)."""

    def __init__(self, X: np.ndarray, sigma: float, intercept: bool):
        self.X = np.ascontiguousarray(X)
        self.XT = np.ascontiguousarray(X.T)
        self.sigma = sigma
        self.intercept = intercept
        n, d = X.shape
        self.wide = d > n
        self.gram = self.X @ self.XT if self.wide else self.XT @ self.X
        self.sums = X.sum(axis=0)
        self.rho = None

    def refactor(self, rho: float) -> None:
        self.rho = rho
        n, d = self.X.shape
        if self.wide:  # I + X X^T / sigma + 1 1^T rho
            K = self.gram / self.sigma
            K[np.diag_indices_from(K)] += 1.0
            if self.intercept:
                K += rho
        else:
            K = np.empty((d + self.intercept, d + self.intercept))
            K[:d, :d] = self.gram
            K[np.arange(d), np.arange(d)] += self.sigma
            if self.intercept:
                K[:d, d] = K[d, :d] = self.sums
                K[d, d] = n + 1.0 / rho
        self.factor = linalg.cho_factor(K, lower=False, check_finite=False)

    def times(self, W: np.ndarray) -> np.ndarray:
        """X W for W (d, c)."""
        return (W.T @ self.XT).T

    def transposed_times(self, B: np.ndarray) -> np.ndarray:
        """X^T B for B (n, c)."""
        return (B.T @ self.X).T

    def solve(self, top: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(W, b) solving the normal equations with right-hand side [top; last] (last ignored
        without the intercept)."""
        if not self.wide:
            rhs = np.vstack([top, last[None, :]]) if self.intercept else top
            sol = linalg.cho_solve(self.factor, rhs, check_finite=False)
            return (sol[:-1], sol[-1]) if self.intercept else (sol, np.zeros(top.shape[1]))
        # K^-1 r = D^-1 r - D^-1 A^T (I + A D^-1 A^T)^-1 A D^-1 r, A = [X 1], D = diag(sigma, 1/rho)
        top_scaled = top / self.sigma
        last_scaled = last * self.rho if self.intercept else 0.0
        inner = linalg.cho_solve(self.factor, self.times(top_scaled) + last_scaled, check_finite=False)
        W = top_scaled - self.transposed_times(inner) / self.sigma
        b = last_scaled - self.rho * inner.sum(axis=0) if self.intercept else np.zeros(top.shape[1])
        return W, b


def hinge_l21_admm(X: np.ndarray, Y: np.ndarray, C: float, lam: float, *, penalty: str = "l21",
                   fit_intercept: bool = True, tol: float = 1e-5, max_iter: int = 50_000,
                   rho: float = 1.0) -> L21Fit:
    """Minimize J(W, b) (module docstring) by ADMM until the duality gap certifies J within
    ``tol`` (relative) of its minimum, or for ``max_iter`` iterations; ``tol`` = 0 runs
    ``max_iter``. ``rho`` is the starting penalty (residual balancing adapts it)."""
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    if not (C > 0 and lam > 0 and rho > 0):
        raise ValueError(f"C, lam and rho must be positive, got {C}, {lam}, {rho}")
    n, d = X.shape
    c = Y.shape[1]
    sigma = SIGMA_SCALE[penalty] * float(np.einsum("ij,ij->", X, X)) / d
    if not sigma > 0:
        sigma = 1.0
    design = _Design(X, sigma, fit_intercept)
    design.refactor(rho)
    V, b = np.zeros((d, c)), np.zeros(c)
    Z = np.ones((n, c))
    U1, U2 = np.zeros((n, c)), np.zeros((d, c))
    objective_values: list[float] = []
    dual_values: list[float] = []
    best_dual = -np.inf
    best_alpha, best_scores = np.zeros((n, c)), np.zeros(d)
    gap, converged = np.inf, False
    iteration = 0
    for iteration in range(1, max_iter + 1):
        T = Y * (Z - U1)
        W, b = design.solve(design.transposed_times(T) + sigma * (V - U2), T.sum(axis=0))
        M = Y * (design.times(W) + b)
        Z_old, V_old = Z, V
        M_relaxed = ALPHA * M + (1.0 - ALPHA) * Z_old
        W_relaxed = ALPHA * W + (1.0 - ALPHA) * V_old
        Q = M_relaxed + U1
        step = C / rho
        Z = np.where(Q >= 1.0, Q, np.where(Q <= 1.0 - step, Q + step, 1.0))
        V = _prox(W_relaxed + U2, lam / (rho * sigma), penalty)
        U1 += M_relaxed - Z
        U2 += W_relaxed - V
        if iteration % CHECK_EVERY and iteration != max_iter:
            continue
        alpha = np.clip(-rho * U1, 0.0, C)
        AY = alpha * Y
        G = design.transposed_times(AY)
        beta = AY.sum(axis=0) if fit_intercept else np.zeros(c)
        D, t = hinge_l21_dual_bound(G, beta, float(alpha.sum()), lam, penalty)
        dual_values.append(D)
        if D > best_dual:
            best_dual, best_alpha, best_scores = D, t * alpha, t * _row_norms(G)
        hinge = np.maximum(0.0, 1.0 - Y * (design.times(V) + b)).sum()
        P = _penalty(V, lam, penalty) + 0.5 * float(b @ b) + C * float(hinge)
        objective_values.append(P)
        gap = (P - best_dual) / P
        if tol > 0 and gap <= tol:
            converged = True
            break
        primal_residual = np.sqrt(np.vdot(M - Z, M - Z) + sigma * np.vdot(W - V, W - V))
        change = design.transposed_times(Y * (Z - Z_old)) - sigma * (V - V_old)
        dual_residual = rho * np.sqrt(np.vdot(change, change))
        if primal_residual > MU * dual_residual:
            rho *= TAU
            U1 /= TAU
            U2 /= TAU
            design.refactor(rho)
        elif dual_residual > MU * primal_residual:
            rho /= TAU
            U1 *= TAU
            U2 *= TAU
            design.refactor(rho)
    return L21Fit(V, b, best_alpha, np.asarray(objective_values), np.asarray(dual_values),
                  float(gap), converged, iteration, best_scores)


# The selectors' side (l21svm, and sl2p with p = 1): when ADMM runs, and its ranking.


def admm_route(selector: Any, n: int, d: int, convex: bool = True) -> bool:
    """Whether ``selector`` (l21svm, or sl2p with p = 1) runs ADMM on n samples x d features:
    when asked to, or under ``solver="auto"`` for the one-vs-rest loss when n > d."""
    if selector.solver == "admm":
        return True
    return selector.solver == "auto" and convex and selector.loss == "ovr" and n > d


def check_admm_params(selector: Any, convex: bool, what: str) -> None:
    """Refuse ``solver="admm"`` where it does not apply, and the SVM step's tolerance with it."""
    if selector.solver != "admm":
        return
    if not convex:
        raise InvalidParameterError(
            f"solver='admm' solves the convex problem only ({what}); set solver: auto or remove it."
        )
    if selector.loss != "ovr":
        raise InvalidParameterError(
            "solver='admm' solves the one-vs-rest hinge loss only; set loss: ovr or solver: auto."
        )
    default = inspect.signature(type(selector).__init__).parameters["inner_tol"].default
    if selector.inner_tol != default:
        raise InvalidParameterError(
            f"inner_tol={selector.inner_tol!r} is the tolerance of the reweighting's SVM step and has "
            "no effect with solver='admm' (tol is its duality gap); remove inner_tol or set another solver."
        )


def admm_ranking(norms: np.ndarray, closeness: np.ndarray) -> np.ndarray:
    """The non-zero rows of W by norm, then the zero rows by how near they are to entering (the
    dual scores ||x_v^T (alpha o Y)||), ties by index."""
    return np.lexsort((np.arange(norms.size), -closeness, -norms))


def warn_admm_not_converged(label: str, fit: L21Fit, tol: float) -> None:
    warnings.warn(
        f"{label} (ADMM) stopped at a relative duality gap of {fit.gap:.2g} after {fit.n_iter} "
        f"iterations (tol={tol}); increase max_iter.",
        ConvergenceWarning,
        stacklevel=4,
    )
