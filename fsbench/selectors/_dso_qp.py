"""Exact active-set solvers for the sign-constrained least-squares steps of DSO-FS.

Two problems, both solved by Lawson & Hanson's active-set method (Solving Least Squares
Problems, 1974, ch. 23), which ends at an exact KKT point after finitely many pivots and can be
warm-started from the previous reweighting iteration's solution:

- :func:`nnqp`: min 1/2 x^T H x - f^T x s.t. x >= 0 (optionally e^T x = 0), dense PSD H. This is
  the dual of a hard-margin problem min sum_i w_i^2 / pi_i s.t. y * (X w + o) >= 1 (with e = y
  when the bias is not penalized); its size is the number of samples.
- :func:`nnls_columns`: for each column j, min_{z >= 0} ||F diag(s_j) z + b_j|| with one wide
  matrix F (r x m, full row rank, r < m) shared by the columns. The columns advance in
  lockstep so that the gradients of all columns cost one matrix product; each column's
  Lawson-Hanson state (its passive set and their factorization) is a
  :mod:`fsbench.selectors._dso_columns` object.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg

from fsbench.selectors._dso_columns import _LQ, QPError, _Column, _NullColumn

_EPS = np.finfo(float).eps
#: A residual of an NNLS column within this factor of its own round-off (how far two ways of
#: computing it disagree) counts as zero: the optimum is zero there (common late in DSO-FS's
#: least-squares runs), reached to round-off, and the gradient is noise that would keep the
#: active set pivoting (500-2,800 pivots per column, benchmarks/rfs_dso.md).
_ZERO_RESIDUAL = 10.0
#: only a residual below sqrt(eps) ||b|| can be round-off; above it the round-off test is skipped
_SMALL_RESIDUAL = np.sqrt(_EPS)
#: pivot cap of the crossover's active set, in multiples of r: measured, it needs up to 18.6 r
#: (ISOLET, p = 1, iteration 11, r = 129; benchmarks/rfs_dso.md)
_CROSSOVER_PIVOTS = 50
#: the E step's interior point stops at this duality gap and dual residual: the crossover makes
#: the answer exact, and it found the same vertices from 1e-4 as from 1e-10 on the E steps
#: measured (ISOLET's first: 20 % less time; benchmarks/rfs_dso.md)
_IPM_TOL = 1e-4


def _residual_is_roundoff(res_norm: float, b_norm: float, noise: Callable[[], float]) -> bool:
    """Whether a residual of norm ``res_norm`` is indistinguishable from zero: below
    sqrt(eps) ||b|| and within 10 times ``noise()``, the disagreement of two computations of it
    (b + A_P x and b - Q Q^T b). A fixed floor in the scale of ||b|| cannot tell this apart
    from a small optimal residual: on ISOLET (p = 0.3) the optimal residual is 1.5e-5 ||b||,
    its gradients 2e-13 ||b||, and a floor of 1e3 eps ||b|| stopped the active set 3e-4 above
    the optimum."""
    return bool(res_norm <= _SMALL_RESIDUAL * b_norm and res_norm <= _ZERO_RESIDUAL * noise())




# ----------------------------------------------------------------------------------------------
# dense NNQP
# ----------------------------------------------------------------------------------------------

def _face_step(Hp: np.ndarray, fp: np.ndarray, ep: np.ndarray | None, xp: np.ndarray
               ) -> tuple[np.ndarray, bool]:
    """Target of an active-set step on the face {x_P free, x_Z = 0} (and e^T x = 0).

    Returns (target, True) with target the minimizer of 1/2 s^T Hp s - fp^T s on the face that
    is closest to xp, or (d, False) with d a descent direction of zero curvature when the face
    has no minimizer (the gradient has a component in the null space of the face's Hessian).
    Directions with curvature below 1e-14 times the largest count as null.
    """
    k = fp.size
    if ep is None:
        try:
            c, low = linalg.cho_factor(Hp, check_finite=False)
            d = np.abs(np.diag(c))
            if d.min() ** 2 > 1e-8 * d.max() ** 2:
                return linalg.cho_solve((c, low), fp, check_finite=False), True
        except linalg.LinAlgError:
            pass
        N = None
        Hr = Hp
    else:
        # orthonormal basis of {d : ep^T d = 0}
        N = np.linalg.qr(np.column_stack([ep, np.eye(k)]))[0][:, 1:k]
        Hr = N.T @ Hp @ N
    g = fp - Hp @ xp
    gr = g if N is None else N.T @ g
    lam, V = np.linalg.eigh(Hr)
    keep = lam > max(lam[-1] if lam.size else 0.0, 0.0) * 1e-14
    coef = V.T @ gr
    null = V[:, ~keep] @ coef[~keep]
    scale = np.linalg.norm(fp) + np.abs(Hp).max() * np.linalg.norm(xp)
    if np.linalg.norm(null) > 1e-9 * scale:
        return (null if N is None else N @ null), False
    step = V[:, keep] @ (coef[keep] / lam[keep])
    return xp + (step if N is None else N @ step), True


def nnqp(H: np.ndarray, f: np.ndarray, x0: np.ndarray | None = None, e: np.ndarray | None = None,
         rtol: float = 1e-11, max_pivots: int | None = None) -> tuple[np.ndarray, float]:
    """Minimize 1/2 x^T H x - f^T x subject to x >= 0 (and e^T x = 0 if ``e`` is given).

    H is symmetric positive semi-definite (singular allowed). Returns (x, nu) with nu the
    multiplier of e^T x = 0 (0 without it): at the solution g = H x - f + nu e satisfies
    g >= -tol, x >= 0, g_i = 0 where x_i > 0 (tol = rtol * the scale of f and H x).
    Raises QPError if the problem is unbounded below. ``x0`` warm-starts the passive set.
    """
    m = f.size
    x = np.zeros(m) if x0 is None else np.maximum(np.asarray(x0, dtype=float), 0.0)
    if e is not None and x.any() and abs(e @ x) > 1e-12 * np.abs(x).sum():
        x = np.zeros(m)
    P = x > 0
    max_pivots = max_pivots or 20 * m + 100
    nu = 0.0
    blocked = np.zeros(m, dtype=bool)  # candidates that failed to enter at the current x
    if P.any():
        x, P = _inner(H, f, e, x, P)
    # In exact arithmetic every pivot lowers q(x); on nearly singular faces round-off can make
    # the method circle at the level of noise. Keep the best point and stop after m pivots
    # without a decrease above that level.
    q_best, x_best, nu_best, stall = np.inf, x, nu, 0
    for _ in range(max_pivots):
        q = 0.5 * x @ (H @ x) - f @ x
        if q < q_best - 1e-13 * (abs(q_best) if np.isfinite(q_best) else 1.0):
            stall = 0
        else:
            stall += 1
        if q < q_best:
            q_best, x_best = q, x
        if stall > m:
            return _polish(H, f, e, x_best, x_best > 0), nu_best
        Hx = H @ x
        g = Hx - f
        if e is not None:
            nu = _multiplier(g[P], e[P]) if P.any() else _best_multiplier(g, e)
            g = g + nu * e
        if x is x_best:
            nu_best = nu
        tol = rtol * max(np.abs(f).max(initial=0.0), np.abs(Hx).max(initial=0.0), 1.0)
        w = np.where(P | blocked, -np.inf, -g)
        t = int(np.argmax(w))
        if w[t] <= tol:
            return _polish(H, f, e, x, P), nu
        P_new = P.copy()
        P_new[t] = True
        if e is not None and e[t] != 0 and not np.any(P & (e == -e[t])):
            # the equality needs a partner of the opposite sign for x to move at all
            opp = np.where(~P_new & (e == -e[t]), -g, -np.inf)
            P_new[int(np.argmax(opp))] = True
        x_new, P_new = _inner(H, f, e, x, P_new)
        if np.array_equal(x_new, x):
            # no progress: on a singular face the chosen minimizer can keep x_t at zero. Take
            # an exact line-search step along the negative gradient restricted to the face,
            # which decreases the objective since w_t > 0.
            x_new = _gradient_step(H, g, e, x, P_new | (x > 0) | (np.arange(m) == t))
            if np.array_equal(x_new, x):
                blocked[t] = True  # round-off level w_t: try the next candidate
            else:
                blocked[:] = False
            P_new = x_new > 0
        else:
            blocked[:] = False
        x, P = x_new, P_new
    raise QPError(f"the active-set method did not terminate in {max_pivots} pivots")


def _gradient_step(H, g, e, x, face):
    """x + a d with d = -g on the face (projected on e^T d = 0), a the exact line search step
    capped where a component reaches zero."""
    d = np.where(face, -g, 0.0)
    if e is not None:
        ef = np.where(face, e, 0.0)
        if ef @ ef > 0:
            d -= (d @ ef) / (ef @ ef) * ef
    d[(x <= 0) & (d < 0)] = 0.0
    slope = g @ d
    if slope >= 0:
        return x
    curv = d @ H @ d
    a = -slope / curv if curv > 0 else np.inf
    neg = d < 0
    if neg.any():
        a = min(a, float(np.min(x[neg] / -d[neg])))
    if not np.isfinite(a) or a <= 0:
        return x
    x = np.maximum(x + a * d, 0.0)
    return x


def _polish(H, f, e, x, P):
    """Re-solve the final face by a least-squares solve to make H_PP x_P = f_P hold to round-off."""
    idx = np.flatnonzero(P)
    if idx.size == 0:
        return x
    Hp = H[np.ix_(idx, idx)]
    if e is None:
        K, rhs = Hp, f[idx]
    else:
        k = idx.size
        K = np.zeros((k + 1, k + 1))
        K[:k, :k] = Hp
        K[:k, k] = K[k, :k] = e[idx]
        rhs = np.append(f[idx], 0.0)
    old = x[idx] if e is None else np.append(x[idx], _multiplier(Hp @ x[idx] - f[idx], e[idx]))
    r_old = np.linalg.norm(K @ old - rhs)
    if r_old <= 1e-14 * (np.linalg.norm(rhs) + np.abs(K).max() * np.linalg.norm(old)):
        return x
    sol = linalg.lstsq(K, rhs, cond=1e-15, check_finite=False, lapack_driver="gelsd")[0]
    s = sol[:idx.size]
    if np.all(s >= 0) and np.linalg.norm(K @ sol - rhs) < r_old:
        x = x.copy()
        x[idx] = s
    return x


def _multiplier(gP: np.ndarray, eP: np.ndarray) -> float:
    den = eP @ eP
    return float(-(gP @ eP) / den) if den > 0 else 0.0


def _best_multiplier(g: np.ndarray, e: np.ndarray) -> float:
    # at x = 0 any nu is a valid multiplier; take the one making the worst violation smallest
    pos, neg = e > 0, e < 0
    if not pos.any() or not neg.any():
        return 0.0
    lo = np.max(-g[pos] / e[pos])   # nu >= lo makes g + nu e >= 0 on pos
    hi = np.min(-g[neg] / e[neg])   # nu <= hi on neg
    return float(0.5 * (lo + hi))


def _inner(H, f, e, x, P):
    """Lawson-Hanson inner loop: from feasible x to the constrained optimum on the passive set P."""
    for _ in range(4 * P.size + 10):
        idx = np.flatnonzero(P)
        if idx.size == 0:
            return x, P
        Hp = H[np.ix_(idx, idx)]
        ep = None if e is None else e[idx]
        xi = x[idx]
        s, is_min = _face_step(Hp, f[idx], ep, xi)
        if not is_min:
            # no minimizer on this face: follow the zero-curvature descent direction s until a
            # component reaches zero
            neg = s < 0
            if not neg.any():
                raise QPError("the sign-constrained problem is unbounded: its primal is infeasible")
            steps = xi[neg] / -s[neg]
            xi = xi + steps.min() * s
        else:
            if np.all(s > 0):
                x = np.zeros_like(x)
                x[idx] = s
                return x, P
            neg = s <= 0
            denom = xi[neg] - s[neg]
            steps = np.divide(xi[neg], denom, out=np.zeros_like(denom), where=denom > 0)
            xi = xi + float(np.clip(steps.min(), 0.0, 1.0)) * (s - xi)
        xi[np.flatnonzero(neg)[np.argmin(steps)]] = 0.0
        xi[xi <= 0] = 0.0
        x = np.zeros_like(x)
        x[idx] = xi
        P = x > 0
        if e is not None and P.any() and not (np.any(P & (e > 0)) and np.any(P & (e < 0))):
            # a one-signed passive set forces x = 0 under e^T x = 0
            x[:] = 0.0
            P = x > 0
    raise QPError("the inner active-set loop did not terminate")


# ----------------------------------------------------------------------------------------------
# wide NNLS, several right-hand sides in lockstep
# ----------------------------------------------------------------------------------------------


def nnls_columns(F: np.ndarray, S: np.ndarray, B: np.ndarray, Z0: np.ndarray | None = None,
                 rtol: float = 1e-10, max_pivots: int | None = None, ipm_rows: int = 100,
                 stats: dict | None = None, warm_pivots: int | None = None,
                 lq: _LQ | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Solve min_{z >= 0} ||F diag(S[:, j]) z + B[:, j]|| for every column j, exactly.

    F is (r, m) with r <= m; S (m, c) holds column signs (+-1); B is (r, c). ``Z0`` (m, c), a
    previous solution, warm-starts the passive sets. Returns Z (m, c) and the residuals
    F diag(S[:, j]) Z[:, j] + B[:, j] as the columns of an (r, c) array. Optimality: the
    gradient g_t = s_t F[:, t]^T res of each zero z_t satisfies g_t >= -rtol ||F[:, t]|| ||res||,
    or the residual is round-off (:func:`_residual_is_roundoff`: the optimum is zero).
    The entering column maximizes -g_t / ||F[:, t]|| (the most violated normalized condition).

    Degenerate wide problems (the least-squares case of DSO-FS: solutions with about r positive
    entries) make the active-set method pivot several times r times from a cold start. From
    ``ipm_rows`` rows on, or for m >= 4 r + 50 without ``Z0``, a column is solved by
    :func:`_nnls_ipm`
    (interior point, then a crossover to an exact vertex). With ``Z0`` the active-set method
    first starts from Z0's passive sets with a budget of ``warm_pivots`` pivots per column
    (default: r, one per row; 0 turns the warm start off), and a column that exceeds it is
    handed to :func:`_nnls_ipm`. Measured on the E steps of DSO-FS (benchmarks/rfs_dso.md):
    from the second reweighting iteration on, the passive sets move by a few members per
    iteration on UMIST and SEMEION, and the warm start is 3-5x faster than the interior point;
    early on ISOLET they change in most of their ~550 members, the warm start needs ~300 pivots
    per column, about the interior point's cost, and a tight budget (87) failed on every column
    and cost 14 s per iteration on top of the interior point. The
    interior-point method also takes over if the active-set method does not terminate. Every
    interior-point answer goes through :func:`_crossover` to an exact vertex (or is counted
    inexact past the crossover's pivot cap: see there). ``stats``, if
    given, receives the counts "warm" (columns finished by the warm active set), "ipm",
    "pivots", "ipm_rescued" (interior-point columns the crossover finished by the active set)
    and "inexact" (columns left above the optimum, see :func:`_crossover`).
    ``lq``, a factorization F = L Qt (:class:`_LQ`), makes the active set work on the
    complements of the passive sets (:class:`_NullColumn`); the interior point and its
    crossover are unchanged.
    """
    r, m = F.shape
    c = B.shape[1]
    stats = {} if stats is None else stats
    for key in ("warm", "ipm", "pivots", "ipm_rescued", "inexact"):
        stats.setdefault(key, 0)
    # few rows (late in a DSO-FS run, after rows were pruned) and a previous solution: the warm
    # active set (pivots cost O(r m)) beats the interior point, whose answers there often need
    # the active set in the crossover anyway
    large = m > r and (r >= ipm_rows or (m >= 4 * r + 50 and Z0 is None))
    if not large:
        try:
            return _nnls_active_set(F, S, B, Z0, rtol, max_pivots, stats=stats, lq=lq)
        except QPError:
            if m <= r:
                raise
        todo = np.ones(c, dtype=bool)
        Z = np.zeros((m, c))
    elif Z0 is not None and warm_pivots != 0:
        budget = r if warm_pivots is None else warm_pivots
        try:
            Z, _, todo = _nnls_active_set(F, S, B, Z0, rtol, budget, strict=False,
                                          stats=stats, lq=lq)
        except QPError:  # an inner loop did not terminate
            Z, todo = np.zeros((m, c)), np.ones(c, dtype=bool)
        stats["warm"] += int(c - todo.sum())
    else:
        todo = np.ones(c, dtype=bool)
        Z = np.zeros((m, c))
    for j in np.flatnonzero(todo):
        z, mu = _nnls_ipm(F, S[:, j], B[:, j])
        stats["ipm"] += 1
        Z[:, j] = _crossover(F, S[:, j], B[:, j], z, mu, stats)
    return Z, B + F @ (S * Z)


def _nnls_active_set(F, S, B, Z0, rtol, max_pivots, strict=True, stats=None, lq=None):
    """Lockstep Lawson-Hanson on the columns of B. ``max_pivots`` caps the pivots of each
    column; a column over the cap raises QPError if ``strict``, otherwise it is left unsolved
    and flagged in a third return value (bool mask over the columns)."""
    r, m = F.shape
    c = B.shape[1]
    todo = np.zeros(c, dtype=bool)
    cols = []
    for j in range(c):
        P0 = [] if Z0 is None else [int(i) for i in np.flatnonzero(Z0[:, j] > 0)]
        col = (_Column(F, S[:, j], B[:, j], P0) if lq is None
               else _NullColumn(F, S[:, j], B[:, j], P0, lq=lq))
        if P0:
            col.x = Z0[col.P, j].copy()
            col.inner()
        cols.append(col)
    fnorm = np.linalg.norm(F, axis=0)
    fnorm[fnorm == 0] = 1.0
    bnorm = np.linalg.norm(B, axis=0)
    active = list(range(c))
    blocked = [np.zeros(m, dtype=bool) for _ in range(c)]
    refactored = [False] * c
    max_pivots = max_pivots or 20 * m + 100
    for _ in range(max_pivots):
        if not active:
            break
        res = np.column_stack([cols[j].residual() for j in active])
        res_norm = np.linalg.norm(res, axis=0)
        gtol = rtol * res_norm
        G = F.T @ res
        still = []
        for a, j in enumerate(active):
            col = cols[j]
            w = -col.s * G[:, a] / fnorm
            w[col.in_P] = -np.inf
            t = int(np.argmax(np.where(blocked[j], -np.inf, w)))
            if (w[t] > gtol[a] and not blocked[j][t]
                    and _residual_is_roundoff(res_norm[a], bnorm[j], col.residual_noise)):
                continue  # the optimum is zero, reached to round-off
            if w[t] <= gtol[a] or blocked[j][t]:
                if w.max() > gtol[a] and not refactored[j]:
                    # violators left only among numerically dependent columns: refactor and retry
                    xprev = dict(zip(col.P, col.x, strict=True))
                    col.factor(list(col.P))
                    col.x = np.array([xprev[i] for i in col.P])
                    col.inner()
                    blocked[j][:] = False
                    refactored[j] = True
                    still.append(j)
                continue
            if stats is not None:
                stats["pivots"] = stats.get("pivots", 0) + 1
            if not col.insert(t):
                blocked[j][t] = True
                still.append(j)
                continue
            x_before = col.x
            col.x = np.append(col.x, 0.0)
            col.inner()
            if not col.in_P[t] and np.array_equal(col.x, x_before):
                blocked[j][t] = True
            else:
                blocked[j][:] = False
                refactored[j] = False
            still.append(j)
        active = still
    if active:
        if strict:
            raise QPError(f"the active-set method did not terminate in {max_pivots} pivots")
        todo[active] = True
    Z = np.zeros((m, c))
    Res = np.empty((r, c))
    for j, col in enumerate(cols):
        Z[col.P, j] = col.x
        Res[:, j] = col.b + F[:, col.P] @ (col.s[col.P] * col.x)
    return (Z, Res) if strict else (Z, Res, todo)


# ----------------------------------------------------------------------------------------------
# wide NNLS by a primal-dual interior-point method (large r)
# ----------------------------------------------------------------------------------------------

def _nnls_ipm(F: np.ndarray, s: np.ndarray, b: np.ndarray, tol: float = _IPM_TOL,
              max_iter: int = 100
              ) -> tuple[np.ndarray, np.ndarray]:
    """min_{z >= 0} ||F diag(s) z + b|| by Mehrotra's predictor-corrector method.

    The Newton systems (A^T A + diag(mu / z)) dz = rhs, A = F diag(s), are solved through the
    r x r matrix I + A diag(z / mu) A^T (Woodbury), so one iteration costs O(r^2 m). Stops when
    the duality gap z^T mu and the dual residual A^T (A z + b) - mu are below tol relative to
    the objective, or when the steps stall; the iterate with the lowest objective is kept (all
    are feasible). Then :func:`_crossover` turns it into an exact vertex when it can.
    """
    r, m = F.shape
    A = F * s
    c = A.T @ b
    fmax = np.linalg.norm(F, axis=0).max()
    z = np.ones(m)
    mu = np.full(m, max(1.0, np.abs(c).max()))
    # z > 0 throughout, so every iterate is feasible: keep the one with the lowest objective, as
    # round-off can spoil the last steps (z / mu then spans too many magnitudes)
    best = (np.inf, z, mu)
    for _ in range(max_iter):
        res = A @ z + b
        rd = A.T @ res - mu
        tau = z @ mu / m
        # duality gap z^T mu relative to the objective ||res||^2 and dual residual relative to
        # its scale, with floors for problems whose optimal residual is zero
        f2 = res @ res + 1e-12 * (b @ b)
        gap = m * tau / f2
        dres = np.abs(rd).max() / (fmax * np.sqrt(f2))
        if res @ res < best[0]:
            best = (res @ res, z, mu)
        if gap <= tol and dres <= tol:
            break
        d = mu / z
        G = F / np.sqrt(d)
        M = G @ G.T
        M[np.diag_indices(r)] += 1.0
        try:
            L = linalg.cho_factor(M, check_finite=False)
        except linalg.LinAlgError:
            break  # z / mu outgrew double precision: the iterate is as accurate as it gets

        def solve(rhs, d=d, L=L):
            t = rhs / d
            return t - (A.T @ linalg.cho_solve(L, A @ t, check_finite=False)) / d

        dz = solve(-rd - mu)
        dm = -mu - d * dz
        a = min(_max_step(z, dz), _max_step(mu, dm))
        sigma = (((z + a * dz) @ (mu + a * dm) / m) / tau) ** 3
        corr = sigma * tau - dz * dm
        dz = solve(-rd - mu + corr / z)
        dm = (corr - mu * dz) / z - mu
        a = 0.995 * min(_max_step(z, dz), _max_step(mu, dm))
        if a < 1e-2:
            break  # stalled
        z = z + a * dz
        mu = mu + a * dm
    return best[1], best[2]


def _max_step(v: np.ndarray, dv: np.ndarray, cap: float = 1.0) -> float:
    neg = dv < 0
    return min(cap, float(np.min(-v[neg] / dv[neg]))) if neg.any() else cap


def _basic_solution(F, s, b, P):
    """The least-squares solution on the columns P if positive and optimal (KKT), else None."""
    if not 0 < P.size <= F.shape[0]:
        return None
    A = F[:, P] * s[P]
    q, r_ = linalg.qr(A, mode="economic", check_finite=False)
    d = np.abs(np.diag(r_))
    if d.min() <= 1e-10 * d.max():
        return None
    qb = q.T @ b
    zp = linalg.solve_triangular(r_, -qb, check_finite=False)
    if not np.all(zp > 0):
        return None
    res = b + A @ zp
    g = s * (F.T @ res)
    fn = np.linalg.norm(F, axis=0)
    res_norm = np.linalg.norm(res)
    if np.any(g < -fn * 1e-10 * res_norm) and not _residual_is_roundoff(
            res_norm, np.linalg.norm(b), lambda: np.linalg.norm(res - (b - q @ qb))):
        return None
    out = np.zeros(F.shape[1])
    out[P] = zp
    return out


def _crossover(F, s, b, z, mu, stats: dict, max_pivots: int | None = None) -> np.ndarray:
    """An exact vertex from the interior-point iterate (z, mu).

    Tries the least-squares solutions on the columns with z > mu, then on the columns above the
    widest gap of log(z / mu); if neither is positive and optimal, runs the active-set method
    from the min(r, m) columns of largest z / mu, whose inner loop first drops
    the columns that come out negative. That start matters when the interior point stalls
    short of the optimum (badly scaled row weights: on ISOLET with p = 0.3, z > mu everywhere
    and the widest gap leaves one column). On such an E step (26 columns) the active set needed
    4,290 pivots from it in all; started from all of z's support it needed 14,204 pivots for a
    single column and stopped 0.24% above the optimum (benchmarks/rfs_dso.md).
    The active set gets ``max_pivots`` pivots (default 50 r; it needed up to 18.6 r on ISOLET's
    E steps, where the optimum is zero in many columns and the interior point ends on the
    analytic centre of the optimal face). Past them, or if its inner loop does not terminate,
    the E step is not exact: the point with the lower residual of z and the active set's last
    iterate is returned and counted in ``stats["inexact"]`` (``stats`` holds the counters of
    :func:`nnls_columns`). With a cap of 2 r that happened on ISOLET (p = 1, late iterations)
    and on UMIST (p = 0.1, row scales from 8e-3 to 1e12, where the Gram-Schmidt updates of the
    previous :class:`_Column` also lost orthogonality and pivoted 68,394 times without a
    vertex; the Householder updates reach one in at most 290 pivots).
    """
    ratio = z / mu
    P = np.flatnonzero(ratio > 1)
    out = _basic_solution(F, s, b, P)
    if out is not None:
        return out
    order = np.argsort(-ratio)
    lr = np.log(ratio[order])
    top = min(F.shape[0], int(np.sum(ratio > 1)))
    if top >= 2:
        k = int(np.argmax(lr[:top - 1] - lr[1:top])) + 1
        out = _basic_solution(F, s, b, np.sort(order[:k]))
        if out is not None:
            return out
    stats["ipm_rescued"] += 1
    col = _Column(F, s, b)
    col.factor([int(i) for i in np.sort(order[:min(F.shape)])])
    col.x = z[col.P].copy()
    col.inner()
    Z0 = np.zeros((F.shape[1], 1))
    Z0[col.P, 0] = col.x
    budget = _CROSSOVER_PIVOTS * F.shape[0] if max_pivots is None else max_pivots
    try:
        out, res, todo = _nnls_active_set(F, s[:, None], b[:, None], Z0, 1e-10, budget,
                                          strict=False, stats=stats)
        if not todo[0]:
            return out[:, 0]
    except QPError:  # the inner loop did not terminate
        res = None
    stats["inexact"] += 1
    if res is not None and np.linalg.norm(res) <= np.linalg.norm(F @ (s * z) + b):
        return out[:, 0]
    return z
