"""DSO-FS: direct sparsity optimization (Peng & Fan, IJCAI 2016)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._dso_columns import _LQ
from fsbench.selectors._dso_qp import nnls_columns, nnqp
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real

_EPS = np.finfo(float).eps
#: E-step active set of the least-squares case: "null" (one LQ form of F per E step, shared by
#: the class columns, and QRs of the passive sets' complements,
#: :class:`~fsbench.selectors._dso_columns._NullColumn`) when F has at most ``NULL_MAX_DEFECT``
#: null directions and keeps all basic rows (UMIST: 3, its duplicated images), else "qr" (a
#: full QR of each column's passive set, :class:`~fsbench.selectors._dso_columns._Column`).
#: Measured on UMIST (benchmarks/dso_estep.md): the same W to 1e-9 and the same rankings for
#: p >= 0.3, 2.7x faster at 300 iterations; at p = 0.1 (row weights over 1e12) the full QR's
#: warm starts fail and its interior point plus crossover end 10x above the E step's optimum,
#: the complement solver does not. "qr" forces the full QR everywhere (tests, benchmarks).
E_STEP_SOLVER = "null"
NULL_MAX_DEFECT = 16


class DSOWarning(UserWarning):
    """DSO-FS ended with violated margins (infeasible) or with every feature row of W at zero."""


# ----------------------------------------------------------------------------------------------
# linear algebra helpers
# ----------------------------------------------------------------------------------------------

def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _spd_solve(K: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve K Z = B, K symmetric PSD; for a singular K the system must be consistent."""
    try:
        return linalg.cho_solve(linalg.cho_factor(K, check_finite=False), B, check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(K, B, check_finite=False, lapack_driver="gelsy")[0]


def weighted_min_norm(A: np.ndarray, T: np.ndarray, pi: np.ndarray,
                      free: int | None = None) -> np.ndarray:
    """argmin_W sum_{i != free} ||w_i||^2 / pi_i s.t. A W = T (consistent; pi_i = 0: w_i = 0).

    Column ``free`` (the bias when it is not penalized) has no cost. The solution is
    W = diag(pi) A^T (A diag(pi) A^T)^+ T (FOCUSS form: only the inverse weights pi appear, so a
    zero row stays zero); a free column a is eliminated by projecting onto a's complement.
    """
    pen = np.ones(A.shape[1], dtype=bool)
    if free is not None:
        pen[free] = False
    Ap = A[:, pen]
    As = Ap * np.sqrt(pi[pen])
    K = As @ As.T
    W = np.zeros((A.shape[1], T.shape[1]))
    if free is None:
        W[pen] = pi[pen, None] * (Ap.T @ _spd_solve(K, T))
        return W
    a = A[:, free]
    aa = a @ a
    Pa = np.eye(A.shape[0]) - np.outer(a, a) / aa
    K = Pa @ K @ Pa + np.outer(a, a)
    W[pen] = pi[pen, None] * (Ap.T @ (Pa @ _spd_solve(K, Pa @ T)))
    W[free] = a @ (T - Ap @ W[pen]) / aa
    return W


# ----------------------------------------------------------------------------------------------
# the two cases of the solution space of X W = X X^+ (Y + E)
# ----------------------------------------------------------------------------------------------

@dataclass
class _LSSpace:
    """Pivoted QR of the support columns X_S (least-squares case): X_S[:, piv] = Q [R11 R12]."""

    support: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    basic: np.ndarray   # row indices of W (into the full W) of the r basic columns
    nonbasic: np.ndarray
    pinv_basic: np.ndarray = field(default=None)  # R11^-1 Q^T (r x m)
    M: np.ndarray = field(default=None)  # R11^-1 R12
    _null: np.ndarray = field(default=None)  # orthonormal basis of null(Q^T) (m x (m - r))

    def null_basis(self) -> np.ndarray:
        if self._null is None:
            q = linalg.qr(self.Q, mode="full", check_finite=False)[0]
            self._null = q[:, self.Q.shape[1]:]
        return self._null

    @classmethod
    def build(cls, X: np.ndarray, support: np.ndarray) -> _LSSpace:
        Q, R, piv = linalg.qr(X[:, support], mode="economic", pivoting=True, check_finite=False)
        d = np.abs(np.diag(R))
        r = int(np.sum(d > d[0] * max(X.shape) * _EPS * 10)) if d.size and d[0] > 0 else 0
        Q, R = Q[:, :r], R[:r]
        sp = cls(support, Q, R, support[piv[:r]], support[piv[r:]])
        sp.pinv_basic = linalg.solve_triangular(R[:, :r], Q.T, check_finite=False)
        sp.M = linalg.solve_triangular(R[:, :r], R[:, r:], check_finite=False)
        return sp


def _pi_from(W: np.ndarray, p: float) -> np.ndarray:
    n = _row_norms(W)
    return np.where(n > 0, n ** (2.0 - p), 0.0)


@dataclass
class DSOResult:
    W: np.ndarray
    objective: np.ndarray
    last_iter: np.ndarray      # per row: last iteration at which it was non-zero (0: only W^0)
    last_norm: np.ndarray      # per row: its norm at that iteration
    least_squares: bool
    converged: bool
    collapse_iter: int         # first iteration with every feature row at zero (0 = none)
    increased: bool = False    # the run stopped because the objective rose (not converged)
    inexact_columns: int = 0   # E-step class columns left above their optimum, over all iterations


def dso_fit(X: np.ndarray, Y: np.ndarray, p: float = 1.0, *, solver: str = "alternating",
            penalize_bias: bool = True, tol: float = 1e-6, max_iter: int = 300,
            zero_tol: float | None = None,
            callback: Callable[[int, np.ndarray], None] | None = None) -> DSOResult:
    """Minimize ||W||_{2,p} s.t. Y * ([X, 1] W) >= 1 (eq. 5) by reweighting (Algorithm 1).

    X is (m, n); Y is (m, c) with entries +-1; W is (n + 1, c), its last row the bias. Each
    iteration solves a Frobenius-norm problem with row weights 1 / ||w_i||^(1 - p/2) (eq. 10);
    rows that reach zero stay zero (inverse weight 0, the FOCUSS reading of footnote 2).
    Stops after iteration k >= 2 when ||W^(k-1)|| - ||W^k|| <= tol ||W^(k-1)|| (the norm is the
    objective ||W||_{2,p}), when every feature row is zero, or after max_iter iterations. The
    first rule also fires when the objective rises by more than tol (seen on ISOLET; in the
    least-squares case pruning a row changes the solution space, so Theorem 1 does not cover
    that step); that stop is reported as ``increased``, not as ``converged``.
    ``callback(k, W)`` is called with each iterate.
    """
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p}")
    if solver not in ("alternating", "joint"):
        raise ValueError(f"solver must be 'alternating' or 'joint', got {solver!r}")
    m, n = X.shape
    Xa = np.hstack([X, np.ones((m, 1))])
    s_full = n + 1
    bias = n
    free = None if penalize_bias else bias
    R0, piv0 = linalg.qr(Xa, mode="r", pivoting=True, check_finite=False)
    d0 = np.abs(np.diag(R0))
    rank = int(np.sum(d0 > d0[0] * max(m, s_full) * _EPS * 10))
    least_squares = rank < m
    if zero_tol is None:
        # rows below zero_tol * max row norm are set to zero and pinned; the least-squares
        # case divides by the row weights, so it needs a larger floor to stay well conditioned
        zero_tol = 1e-8 if least_squares else 1e-10
    colmax = np.abs(Xa).max(axis=0)
    pen_rows = np.ones(s_full, dtype=bool)
    if not penalize_bias:
        pen_rows[bias] = False

    pi = np.ones(s_full)
    W = np.zeros((s_full, Y.shape[1]))
    V_target = Y.copy()          # Y + E of the current iterate (E^0 = 0)
    alpha = None                 # warm starts of the sign-constrained steps
    e_stats: dict = {}           # counts of the least-squares E steps (nnls_columns)
    Z = None
    Z_before = None              # the E step's solution one iteration before Z
    space: _LSSpace | None = None
    XS = None  # (support, X[:, support], basic mask) in the full-row-rank case
    basic0 = piv0[:rank]
    objective: list[float] = []
    last_iter = np.zeros(s_full, dtype=int)
    last_norm = np.zeros(s_full)
    converged = False
    increased = False
    collapse_iter = 0
    # W^0, the minimum-norm solution of X W = X X^+ Y (the first U step from Sigma^0 = I,
    # E^0 = 0), is iteration 0 of the ranking history; its largest row sets the problem's scale
    norms0 = _row_norms(linalg.lstsq(Xa, Y, check_finite=False, lapack_driver="gelsd")[0])
    scale = float(norms0.max())
    last_norm[:] = norms0
    for k in range(1, max_iter + 1):
        support = np.flatnonzero((pi > 0) | ~pen_rows)
        if least_squares:
            # a warm start pays when the E step's problem changed little: as many basic rows
            # (none pruned; the pivoted QR may reorder them) and few passive entries moved in
            # the previous E step
            moved = _passive_moves(Z_before, Z)
            if space is None or not np.array_equal(space.support, support):
                n_basic = None if space is None else space.basic.size
                space = _LSSpace.build(Xa, support)
                if n_basic != space.basic.size:
                    moved = np.inf
            Z_before = Z
            W, V_target, Z = _ls_step(Xa, Y, space, pi, p, W, V_target, Z, solver, free, moved,
                                      e_stats)
        else:
            if XS is None or not np.array_equal(XS[0], support):
                XS = (support, Xa[:, support], np.isin(support, basic0))
            W = np.zeros((s_full, Y.shape[1]))
            fi = None if free is None else int(np.flatnonzero(support == free)[0])
            if solver == "joint":
                W[support], alpha = _joint_step_feasible(XS[1], Y, pi[support], fi, alpha)
            else:
                W[support], alpha = _alternating_step_feasible(XS[1], Y, pi[support], p, XS[2], fi,
                                                               V_target, alpha)
        norms = _row_norms(W)
        scale = max(scale, norms.max(initial=0.0))
        small = pen_rows & (norms > 0) & (norms <= zero_tol * scale)
        if not least_squares and small.any():
            # prune only as far as the margins move by at most 1e-10 (smallest rows first)
            cand = np.flatnonzero(small)
            cand = cand[np.argsort(norms[cand])]
            effect = np.cumsum(colmax[cand] * norms[cand] * np.sqrt(Y.shape[1]))
            small[cand[effect > 1e-10]] = False
        W[small] = 0.0
        norms[small] = 0.0
        if not least_squares:
            # Y + E^k for the next U step, with E^k's signs restored where pruning nudged them
            V_target = Y * np.maximum(Y * (XS[1] @ W[XS[0]]), 1.0)
        nz = norms > 0
        last_iter[nz] = k
        last_norm[nz] = norms[nz]
        objective.append(float(np.sum(norms[pen_rows] ** p) ** (1.0 / p)))
        if callback is not None:
            callback(k, W.copy())
        pi = np.where(pen_rows, np.where(nz, norms ** (2.0 - p), 0.0), 1.0)
        if not nz[:n].any():
            collapse_iter = k
            break
        if k >= 2 and objective[-2] - objective[-1] <= tol * objective[-2]:
            increased = objective[-1] - objective[-2] > tol * objective[-2]
            converged = not increased
            break
    return DSOResult(W, np.asarray(objective), last_iter, last_norm, least_squares, converged,
                     collapse_iter, increased, e_stats.get("inexact", 0))


# ----------------------------------------------------------------------------------------------
# X of full row rank (m <= n + 1): the constraints are the hard margins themselves
# ----------------------------------------------------------------------------------------------

def _margin_qp(Xs: np.ndarray, Y: np.ndarray, f: np.ndarray, eq: bool, alpha0):
    """Per column j: the dual of min ||omega||^2 s.t. y_j * (Xs omega + b_j + o_j) >= 1.

    f[:, j] = 1 - y_j * o_j. Returns alphas (m, c) and the bias multipliers (c,) (b_j when the
    bias is an unpenalized variable, i.e. ``eq``).
    """
    G = Xs @ Xs.T
    m, c = Y.shape
    A = np.zeros((m, c))
    nus = np.zeros(c)
    for j in range(c):
        y = Y[:, j]
        H = G * np.outer(y, y)
        x0 = None if alpha0 is None else alpha0[:, j]
        A[:, j], nus[j] = nnqp(H, f[:, j], x0=x0, e=y if eq else None)
    return A, nus


def _joint_step_feasible(XS, Y, pi, free, alpha0):
    """min sum_i ||w_i||^2 / pi_i s.t. Y * (X W) >= 1 over W and E jointly: c hard-margin duals.

    XS holds the support's columns of X (bias included); ``free`` indexes the unpenalized bias
    column in it (or None). Returns W on the support and the dual variables.
    """
    pen = np.ones(XS.shape[1], dtype=bool)
    if free is not None:
        pen[free] = False
    Xp = XS[:, pen] if free is not None else XS
    A, nus = _margin_qp(Xp * np.sqrt(pi[pen]), Y, np.ones_like(Y), free is not None, alpha0)
    W = np.zeros((XS.shape[1], Y.shape[1]))
    W[pen] = pi[pen, None] * (Xp.T @ (Y * A))
    if free is not None:
        W[free] = nus
    return W, A


def _alternating_step_feasible(XS, Y, pi, p, basic, free, V_target, alpha0):
    """One iteration of Algorithm 1 with X of full row rank.

    U step (eqs. 11-14): V = argmin sum_i ||v_i||^2 / pi_i over the whole solution space
    X V = Y + E^k. E step: with the non-basic rows of V fixed (the paper's U), the basic rows
    minimize sum ||w_i||^2 / pi'_i (pi' from V) s.t. Y * X W >= 1, i.e. Y + E with Y * E >= 0.
    XS holds the support's columns of X, ``basic`` marks the basic ones, ``free`` indexes the
    unpenalized bias column (or None). Returns W on the support and the dual variables.
    """
    V = weighted_min_norm(XS, V_target, pi, free)
    pi_v = _pi_from(V, p)
    Bm = basic & (pi_v > 0)
    eq = free is not None and basic[free]
    if free is not None:
        Bm[free] = False
    offset = XS @ V - XS[:, Bm] @ V[Bm]
    if eq:
        offset -= np.outer(XS[:, free], V[free])
    XB = XS[:, Bm]
    A, nus = _margin_qp(XB * np.sqrt(pi_v[Bm]), Y, 1.0 - Y * offset, eq, alpha0)
    W = V.copy()
    W[basic] = 0.0
    W[Bm] = pi_v[Bm, None] * (XB.T @ (Y * A))
    if eq:
        W[free] = nus
    return W, A


# ----------------------------------------------------------------------------------------------
# X of lower rank than m (m > n + 1): the least-squares solution space
# ----------------------------------------------------------------------------------------------

def _passive_moves(Z_old: np.ndarray | None, Z_new: np.ndarray | None) -> float:
    """Median over the class columns of the entries that entered or left the positive set of Z."""
    if Z_old is None or Z_new is None:
        return np.inf
    return float(np.median(np.sum((Z_old > 0) != (Z_new > 0), axis=0)))


def _warm_pivots(moved: float, r: int) -> int:
    """Pivot budget of the E step's warm start: r when the previous E step moved at most r / 4
    passive entries per column (and the number of basic rows did not change since), else 0
    (interior point). A warm
    start costs about 1.3 pivots per moved entry; measured (benchmarks/rfs_dso.md) it beats the
    interior point below about r / 4 moves on SEMEION and r / 3 on ISOLET. Forced on every
    ISOLET iteration (p = 1) it fails where the passive sets move by hundreds of members: at
    iteration 2 every column exceeds its budget, and with the interior point after it the step
    costs 53 s against 29 s, and likewise after rows are pruned (iterations 7 and 8)."""
    return r if moved <= r / 4 else 0


def _ls_step(Xa, Y, sp: _LSSpace, pi, p, W_prev, V_target, Z0, solver, free, moved, stats):
    """One iteration on the least-squares solution space X_S W = X_S X_S^+ (Y + E) (paper, sec. 2).

    Basic rows: W_B = R11^-1 (Q^T (Y + E) - R12 W_N); with the non-basic rows W_N fixed the E
    step is, per class column j, min_{z >= 0} ||D (R11^-1 Q^T (y_j + y_j * z) - R11^-1 R12 w_N)||
    with D = diag(pi')^(-1/2) over the penalized basic rows and E = Y * Z: an NNLS problem,
    warm-started from Z0 when the previous step moved few passive entries (``moved``).
    """
    s_full = Xa.shape[1]
    B, N = sp.basic, sp.nonbasic
    if N.size and solver == "alternating":
        V = np.zeros((s_full, Y.shape[1]))
        cols = sp.support
        fi = None if free is None or free not in cols else int(np.flatnonzero(cols == free)[0])
        V[cols] = weighted_min_norm(sp.Q.T @ Xa[:, cols], sp.Q.T @ V_target, pi[cols], fi)
        weights = _pi_from(V, p)
        WN = V[N]
    elif N.size:
        return _ls_joint_rank_deficient(Xa, Y, sp, pi, Z0, free, moved, stats)
    elif solver == "alternating":
        # no free rows: the U step is W = X_S^+ (Y + E^k) itself; the E step weighs its rows
        weights = np.zeros(s_full)
        weights[B] = _pi_from(sp.pinv_basic @ V_target, p)
        WN = np.zeros((0, Y.shape[1]))
    else:
        weights = pi
        WN = np.zeros((0, Y.shape[1]))
    rows = np.ones(B.size, dtype=bool) if free is None else (B != free)
    rows &= weights[B] > 0
    Dinv = 1.0 / np.sqrt(weights[B][rows])
    Fm = Dinv[:, None] * sp.pinv_basic[rows]
    off = sp.M[rows] @ WN if N.size else 0.0
    Bv = Fm @ Y - (Dinv[:, None] * off if N.size else 0.0)
    kw = {}
    r, m = sp.pinv_basic.shape
    if E_STEP_SOLVER == "null" and rows.all() and 0 < m - r <= NULL_MAX_DEFECT:
        kw["lq"] = _LQ.from_scaled_basis(Dinv, sp.R[:, :r], sp.Q, sp.null_basis())
    Z, _ = nnls_columns(Fm, Y, Bv, Z0, warm_pivots=_warm_pivots(moved, Fm.shape[0]), stats=stats,
                        **kw)
    Vt = Y * (1.0 + Z)
    W = np.zeros((s_full, Y.shape[1]))
    W[B] = sp.pinv_basic @ Vt - (sp.M @ WN if N.size else 0.0)
    if N.size:
        W[N] = WN
    return W, Vt, Z


def _ls_joint_rank_deficient(Xa, Y, sp: _LSSpace, pi, Z0, free, moved, stats):
    """Joint (U, E) step when X_S has dependent columns: min t^T K^-1 t with t = Q^T (Y + E)."""
    cols = sp.support
    Abar = sp.Q.T @ Xa[:, cols]
    pen = np.ones(cols.size, dtype=bool)
    if free is not None and free in cols:
        pen[cols == free] = False
    Ap = Abar[:, pen] * np.sqrt(pi[cols][pen])
    K = Ap @ Ap.T
    Pa = np.eye(Abar.shape[0])
    if not pen.all():
        a = Abar[:, ~pen][:, 0]
        Pa = Pa - np.outer(a, a) / (a @ a)
        K = Pa @ K @ Pa + np.outer(a, a)
    C = linalg.cholesky(K, lower=True, check_finite=False)
    Fm = linalg.solve_triangular(C, Pa @ sp.Q.T, lower=True, check_finite=False)
    Z, _ = nnls_columns(Fm, Y, Fm @ Y, Z0, warm_pivots=_warm_pivots(moved, Fm.shape[0]),
                        stats=stats)
    Vt = Y * (1.0 + Z)
    W = np.zeros((Xa.shape[1], Y.shape[1]))
    fi = None if pen.all() else int(np.flatnonzero(~pen)[0])
    W[cols] = weighted_min_norm(Abar, sp.Q.T @ Vt, pi[cols], fi)
    return W, Vt, Z


# ----------------------------------------------------------------------------------------------
# the selector
# ----------------------------------------------------------------------------------------------

def _rank_rows(last_iter: np.ndarray, last_norm: np.ndarray) -> np.ndarray:
    """Order by the last iteration a row was non-zero (later first), then by its norm there."""
    return np.lexsort((np.arange(last_iter.size), -last_norm, -last_iter))


@register("dso")
class DSOFS(BaseSelector):
    """DSO-FS: min ||W||_{2,p} s.t. Y * (X W + b) >= 1, ranked by row norms of W (Peng & Fan 2016).

    Minimizes the l2,p-norm (0 < p <= 1) of W = [W_features; b] subject to the hard margins
    Y * ([X, 1] W) >= 1 with one-vs-rest labels Y in {-1, 1}^(m x c) (eq. 5), written with a
    slack E (Y * E >= 0) as eq. 6 on the solution space of X W = X X^+ (Y + E) (eqs. 7-9).
    Algorithm 1 reweights: each iteration minimizes ||Sigma W||_F^2 with Sigma_ii =
    ||w_i||^(p/2 - 1) (eq. 10), so ||W||_{2,p} never increases (Theorem 1).

    Solution space: X = [X, 1] of full row rank (m <= n + 1, microarrays) gives X X^+ = I and
    the constraints are the hard margins themselves; otherwise (m > n + 1, ISOLET, SEMEION) the
    paper's least-squares substitute X_S W = X_S X_S^+ (Y + E) is used, built by pivoted QR of
    the current support X_S, and the margins are then not guaranteed.

    ``solver="alternating"`` is the paper's Algorithm 1: a U step in closed form over the whole
    solution space (eqs. 11-14, as a weighted minimum-norm solve) and an E step with the U rows
    fixed, solved exactly (an NNLS problem per class column, or its hard-margin dual when
    X X^+ = I). The basis (the paper's first m0 independent columns) is chosen by pivoted QR.
    ``solver="joint"`` minimizes each reweighted problem over (U, E) together: one convex QP
    per iteration (a hard-margin problem per class), which for p = 1 converges to the optimum
    of the convex problem; the alternating scheme can stall above it (DESIGN.md errata).

    Zero rows: a row whose norm falls below ``zero_tol`` times the problem's scale (the
    largest row norm of the minimum-norm solution of X W = X X^+ Y, or of any iterate) is set
    to zero and kept there (inverse weight 0: the FOCUSS reading of footnote 2, which keeps
    the decrease monotone). In the least-squares case the support's solution space is
    recomputed, i.e. the paper's construction applied to the surviving features.

    Stopping rule: after iteration k >= 2 when ||W^(k-1)||_{2,p} - ||W^k||_{2,p} <= tol *
    ||W^(k-1)||_{2,p}, when every feature row is zero (collapse), or after ``max_iter``. The same
    relative rule for every p. A stop on a rise of the objective by more than tol (possible in
    the least-squares case only) sets ``objective_increased`` and leaves ``converged`` False.

    Ranking: features by decreasing ||w_i||_2 of the final W; rows at zero are ordered by the
    last iteration at which they were non-zero (later first), then by their norm at that
    iteration, the starting point W^0 = X^+ Y (minimum-norm solution of X W = X X^+ Y) counting
    as iteration 0. On collapse the final W has no non-zero feature row, so this is the ranking
    of the last iterate before the collapse (W^0 if it collapsed in the first iteration),
    extended backwards; ``scores_`` holds the row norms at each feature's last non-zero
    iterate. A DSOWarning is issued when the final W violates
    the margins (``feasible`` False) or collapsed.

    Parameters
    ----------
    p : the norm power, in (0, 1] in the paper; fsbench takes 0.05 to 1 (below, the objective
        overflows on thousands of features).
    solver : "alternating" (the paper) or "joint".
    penalize_bias : True (the paper as written: the bias row is part of ||W||_{2,p}) or False
        (the bias is a free variable, left out of the objective and the reweighting).
    tol, max_iter : the stopping rule.
    zero_tol : relative row norm treated as zero (default 1e-10, or 1e-8 in the
        least-squares case).

    Fitted attributes: ``coef_`` (n, c), ``intercept_`` (c,), ``objective_`` (||W||_{2,p} per
    iteration), ``n_iter_``, ``diagnostics_`` = {"feasible", "collapsed", "min_margin",
    "violated_share", "least_squares", "converged", "objective_increased", "n_nonzero_rows",
    "collapse_iter", "ranking_iter", "inexact_e_columns"}; the last counts the least-squares
    E-step class columns, summed over the iterations, that the NNLS solver left above their
    optimum (its active set over its pivot cap; a DSOWarning says so). None were left on the
    E steps measured (benchmarks/rfs_dso.md).
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # p in (0, 1] (eq. 5), from 0.05: the objective (sum_i ||w_i||^p)^(1/p) overflows when
        # d^(1/p) > 1e308 (p < 0.0134 at d = 10^4 features; measured at d = 600: p <= 0.003
        # runs to max_iter on an infinite objective); 0.05 is safe up to d = 10^15.
        "p": [real(0.05, 1, "both")],
        "solver": [StrOptions({"alternating", "joint"})],
        "penalize_bias": ["boolean"],
        # a relative decrease of ||W||_{2,p}: 0 runs until it stops decreasing (or max_iter)
        "tol": [real(0, 1, "left")],
        "max_iter": [count(1, ITER_MAX)],
        # a row norm relative to the largest that counts as zero: up to 1e-3 (the defaults are
        # 1e-10 and 1e-8); larger thresholds prune rows that are not small and collapse W
        # (measured: 0.5 collapses at the second iteration)
        "zero_tol": [real(0, 1e-3, "right"), None],
    }

    def __init__(self, *, n_features_to_select: int = 10, p: float = 1.0, solver: str = "alternating",
                 penalize_bias: bool = True, tol: float = 1e-6, max_iter: int = 300,
                 zero_tol: float | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.p = p
        self.solver = solver
        self.penalize_bias = penalize_bias
        self.tol = tol
        self.max_iter = max_iter
        self.zero_tol = zero_tol

    def _fit(self, X, y, classes):
        c = classes.size
        Y = -np.ones((y.size, c))
        Y[np.arange(y.size), y] = 1.0
        res = dso_fit(X, Y, float(self.p), solver=self.solver,
                      penalize_bias=bool(self.penalize_bias), tol=float(self.tol),
                      max_iter=int(self.max_iter), zero_tol=self.zero_tol)
        n = X.shape[1]
        W = res.W
        self.coef_ = W[:n]
        self.intercept_ = W[n]
        self.objective_ = res.objective
        self.n_iter_ = res.objective.size
        margins = Y * (np.hstack([X, np.ones((y.size, 1))]) @ W)
        min_margin = float(margins.min())
        violated = float(np.mean(margins < 1.0 - 1e-8))
        feat_last = res.last_iter[:n]
        self.ranking_ = _rank_rows(feat_last, res.last_norm[:n])
        n_nonzero = int(np.count_nonzero(_row_norms(W[:n])))
        collapsed = res.collapse_iter > 0
        self.diagnostics_ = {
            "feasible": violated == 0.0,
            "collapsed": collapsed,
            "min_margin": min_margin,
            "violated_share": violated,
            "least_squares": res.least_squares,
            "converged": res.converged,
            "objective_increased": res.increased,
            "n_nonzero_rows": n_nonzero,
            "collapse_iter": res.collapse_iter,
            "ranking_iter": int(feat_last.max(initial=0)),
            "inexact_e_columns": res.inexact_columns,
        }
        if collapsed:
            warnings.warn(
                f"DSO-FS (p={self.p}) collapsed: every feature row of W is zero after iteration "
                f"{res.collapse_iter}; features are ranked by the last iterates before it.",
                DSOWarning, stacklevel=3)
        elif violated > 0:
            warnings.warn(
                f"DSO-FS (p={self.p}) ended infeasible: {violated:.1%} of the margins Y * XW are "
                f"below 1 (min {min_margin:.3g}); the least-squares solution space does not "
                "enforce them.",
                DSOWarning, stacklevel=3)
        if res.inexact_columns:
            warnings.warn(
                f"DSO-FS (p={self.p}): {res.inexact_columns} E-step class columns (summed over "
                "the iterations) stopped above their optimum (the active set hit its pivot cap), "
                "so those iterates are approximate.",
                DSOWarning, stacklevel=3)
        return res.last_norm[:n].copy()
