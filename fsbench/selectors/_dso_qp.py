"""Exact active-set solvers for the sign-constrained least-squares steps of DSO-FS.

Two problems, both solved by Lawson & Hanson's active-set method (Solving Least Squares
Problems, 1974, ch. 23), which ends at an exact KKT point after finitely many pivots and can be
warm-started from the previous reweighting iteration's solution:

- :func:`nnqp`: min 1/2 x^T H x - f^T x s.t. x >= 0 (optionally e^T x = 0), dense PSD H. This is
  the dual of a hard-margin problem min sum_i w_i^2 / pi_i s.t. y * (X w + o) >= 1 (with e = y
  when the bias is not penalized); its size is the number of samples.
- :func:`nnls_columns`: for each column j, min_{z >= 0} ||F diag(s_j) z + b_j|| with one wide
  matrix F (r x m, full row rank, r < m) shared by the columns. The columns advance in
  lockstep so that the gradients of all columns cost one matrix product; each column keeps a
  full QR factorization of its passive columns, updated by Householder reflections (insert)
  and Givens rotations (delete).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

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


class QPError(RuntimeError):
    """The sign-constrained subproblem is unbounded (primal infeasible) or did not terminate."""


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

#: LAPACK workspace sizes by problem shape, queried as scipy.linalg.qr queries them
_LWORK: dict[tuple[str, int, int], int] = {}


def _lwork(name: str, f: Callable, a: np.ndarray, *args: np.ndarray) -> int:
    key = (name, a.shape[0], a.shape[1] if not args else args[0].size)
    if key not in _LWORK:
        _LWORK[key] = int(f(a, *args, lwork=-1)[-2][0].real)
    return _LWORK[key]


def _full_qr_into(A: np.ndarray, Q: np.ndarray, R: np.ndarray) -> bool:
    """``Q, R[:, :k] = scipy.linalg.qr(A, mode="full")`` computed in the Fortran-ordered r x r
    buffers (A is r x k, k <= r), and R's other columns set to those of the identity; False,
    leaving the buffers undefined, when A's columns are numerically dependent (a diagonal entry
    of R below 1e-10 times A's largest column norm).

    The same LAPACK calls as scipy's (geqrf, then orgqr on an r x r array holding the reflectors
    in its first k columns) with the same workspace sizes, hence the same blocking and the same
    doubles; what it saves is scipy's copies, its ``triu`` and the identity matrices the caller
    filled before (a quarter of DSO-FS's time on UMIST, where every class column of every E step
    refactors its passive set).
    """
    r, k = A.shape
    geqrf, orgqr = lapack.get_lapack_funcs(("geqrf", "orgqr"), (Q,))
    block = Q[:, :k]
    block[:] = A
    qr, tau, _, info = geqrf(block, lwork=_lwork("geqrf", geqrf, block), overwrite_a=1)
    if info != 0 or not np.shares_memory(qr, Q):  # not expected: LAPACK works in place
        qr_, r_ = linalg.qr(A, mode="full", check_finite=False)
        Q[:], R[:, :k] = qr_, r_
    else:
        R[:, :k] = np.triu(qr)
        if not np.abs(np.diag(R[:k, :k])).min() > 1e-10 * np.linalg.norm(A, axis=0).max():
            return False
        q, _, info = orgqr(Q, tau, lwork=_lwork("orgqr", orgqr, Q, tau), overwrite_a=1)
        if info != 0 or not np.shares_memory(q, Q):
            qr_, r_ = linalg.qr(A, mode="full", check_finite=False)
            Q[:], R[:, :k] = qr_, r_
    if not np.abs(np.diag(R[:k, :k])).min() > 1e-10 * np.linalg.norm(A, axis=0).max():
        return False
    R[:, k:] = 0.0
    R[np.arange(k, r), np.arange(k, r)] = 1.0
    return True


class _Column:
    """Lawson-Hanson state of one column: passive set P, a full QR factorization of
    A_P = F[:, P] * s[P] and qb = Q^T b.

    Q is r x r orthogonal. The first k = |P| columns of the r x r buffer R hold the triangular
    factor and its other columns those of the identity, so that the least-squares solve runs on
    the whole buffer, which needs no copy: copying the k x k block cost 0.25 ms per solve on
    ISOLET (r = 618), most of a pivot. Insertions reflect Q's trailing columns (Householder),
    deletions rotate in place (``qr_delete``, Givens); both keep Q orthogonal to working
    precision, and the residual b + A_P x is Q's trailing columns times qb's trailing entries.
    """

    def __init__(self, F: np.ndarray, s: np.ndarray, b: np.ndarray, P: list[int] | None = None):
        r = F.shape[0]
        self.F, self.s, self.b = F, s, b
        self.in_P = np.zeros(F.shape[1], dtype=bool)  # P as a mask, for O(1) membership
        self.x = np.zeros(0)
        self.Q = np.empty((r, r), order="F")
        self.R = np.empty((r, r), order="F")
        self.qb = np.empty(r)
        self.factor(P or [])

    # -- factorization updates --------------------------------------------------------------
    def factor(self, P: list[int]) -> None:
        """QR of the columns P from scratch, keeping a linearly independent subset (in order)."""
        r = self.F.shape[0]
        self.P, self.k = [], 0
        self.in_P[:] = False
        if not P:
            self._identity()
            return
        A = self.F[:, P] * self.s[P]
        if len(P) <= r and _full_qr_into(A, self.Q, self.R):
            self.P = list(P)
            self.in_P[self.P] = True
            self.k = len(P)
            self.qb[:] = self.Q.T @ self.b
            return
        # dependent columns (duplicated samples, or more columns than rows): keep a
        # well-conditioned subset, chosen by a pivoted QR, in the original order
        _, r_, piv = linalg.qr(A, mode="economic", pivoting=True, check_finite=False)
        diag = np.abs(np.diag(r_))
        rank = int(np.sum(diag > diag[0] * 1e-10)) if diag.size and diag[0] > 0 else 0
        keep = sorted(piv[:rank])
        if not keep:
            self._identity()
            return
        q, r_ = linalg.qr(A[:, keep], mode="full", check_finite=False)
        k = len(keep)
        self.P = [P[i] for i in keep]
        self.in_P[self.P] = True
        self.k = k
        self.Q[:] = q
        self.R[:, :k] = r_
        self.R[:, k:] = np.eye(r)[:, k:]
        self.qb[:] = q.T @ self.b

    def _identity(self) -> None:
        """The factorization of an empty passive set: Q = I, R = I (its columns unused), qb = b."""
        r = self.F.shape[0]
        self.Q[:] = np.eye(r)
        self.R[:] = np.eye(r)
        self.qb[:] = self.b

    def insert(self, t: int) -> bool:
        """Append column t (a Householder reflection of Q's trailing columns); False if it is
        dependent on the passive columns."""
        k = self.k
        if k == self.Q.shape[0]:
            return False
        a = self.F[:, t] * self.s[t]
        u = self.Q.T @ a
        tail = u[k:]
        rho = np.linalg.norm(tail)
        if rho <= 1e-10 * np.linalg.norm(a):
            return False
        # H = I - beta v v^T maps tail to alpha e_1; beta = 2 / (v^T v)
        alpha = -rho if tail[0] >= 0 else rho
        v = tail.copy()
        v[0] -= alpha
        beta = 1.0 / (rho * (rho + abs(tail[0])))
        Qt = self.Q[:, k:]
        blas.dger(-beta, Qt @ v, v, a=Qt, overwrite_a=True)  # in place: Qt is Fortran-ordered
        self.qb[k:] -= (beta * (v @ self.qb[k:])) * v
        self.R[:k, k] = u[:k]
        self.R[k, k] = alpha
        self.k = k + 1
        self.P.append(t)
        self.in_P[t] = True
        return True

    def delete(self, i: int) -> None:
        """Remove the i-th passive column: Givens rotations of the trailing block, in place."""
        k = self.k
        if i < k - 1:
            # in place on these Fortran-ordered buffers (Q and R's first k columns)
            linalg.qr_delete(self.Q, self.R[:, :k], i, 1, which="col", overwrite_qr=True,
                             check_finite=False)
            self.qb[i:k] = self.Q[:, i:k].T @ self.b
        self.R[:, k - 1] = 0.0
        self.R[k - 1, k - 1] = 1.0
        self.k = k - 1
        self.in_P[self.P.pop(i)] = False

    # -- least squares on the passive set --------------------------------------------------
    def ls(self) -> np.ndarray:
        k = self.k
        if k == 0:
            return np.zeros(0)
        rhs = np.zeros(self.R.shape[0])
        rhs[:k] = -self.qb[:k]
        return linalg.solve_triangular(self.R, rhs, check_finite=False)[:k]

    def residual_noise(self) -> float:
        """How far two computations of the residual disagree: b + A_P x and Q_2 Q_2^T b."""
        if self.k == 0:
            return 0.0
        direct = self.b + self.F[:, self.P] @ (self.s[self.P] * self.x)
        return float(np.linalg.norm(direct - self.residual()))

    def residual(self) -> np.ndarray:
        """b + A_P x for x the least-squares solution on P (the state after :meth:`inner`): the
        part of b orthogonal to the passive columns."""
        k = self.k
        return self.Q[:, k:] @ self.qb[k:]

    def inner(self) -> None:
        """Lawson-Hanson inner loop from the current feasible x (x = 0 on newly added columns)."""
        for _ in range(4 * self.F.shape[0] + 10):
            z = self.ls()
            if np.all(z > 0):
                self.x = z
                return
            x = self.x
            neg = z <= 0
            denom = x[neg] - z[neg]
            steps = np.divide(x[neg], denom, out=np.zeros_like(denom), where=denom > 0)
            x = x + float(np.clip(steps.min(), 0.0, 1.0)) * (z - x)
            x[np.flatnonzero(neg)[np.argmin(steps)]] = 0.0
            drop = np.flatnonzero(x <= 0)
            for i in drop[::-1]:
                self.delete(int(i))
            self.x = np.delete(x, drop)
        raise QPError("the inner active-set loop did not terminate")


class _LQ:
    """F = L Qt for a wide F (r x m) of full row rank: Qt (r x m) with orthonormal rows, L
    (r x r) nonsingular and given by its inverse's action, V (m x (m - r)) an orthonormal basis
    of null(F), so that Qt^T Qt = I - V V^T.

    :meth:`from_scaled_basis` takes DSO-FS's F = diag(d) R11^-1 Q^T as it stands (Qt = Q^T,
    L^-1 = R11 diag(1 / d): products, no solves); :meth:`from_matrix` factors any F by a QR of
    F^T (Householder, columnwise stable under the row scaling)."""

    def __init__(self, Qt: np.ndarray, V: np.ndarray, linv: Callable, linv_t: Callable):
        self.Qt, self.V = Qt, V
        self.linv = linv        # x -> L^-1 x
        self.linv_t = linv_t    # X -> L^-T X

    @classmethod
    def from_scaled_basis(cls, d: np.ndarray, R11: np.ndarray, Q: np.ndarray,
                          V: np.ndarray) -> _LQ:
        R11 = np.asarray(R11, order="F")

        def linv(x):
            return blas.dtrmv(R11, x / d)  # R11 upper triangular

        def linv_t(X):
            return blas.dtrmm(1.0, R11, X, trans_a=1) / d[:, None]

        return cls(np.ascontiguousarray(Q.T), V, linv, linv_t)

    @classmethod
    def from_matrix(cls, F: np.ndarray) -> _LQ:
        r, m = F.shape
        q, rf = linalg.qr(F.T, mode="full", check_finite=False)  # F^T = q [Rf; 0], F = Rf^T q1^T

        def linv(x):
            return linalg.solve_triangular(rf[:r], x, trans="T", check_finite=False)

        def linv_t(X):
            return linalg.solve_triangular(rf[:r], X, check_finite=False)

        return cls(np.ascontiguousarray(q[:, :r].T), q[:, r:], linv, linv_t)


#: a passive set whose V_N has a singular value below this is treated as dependent (F_P then
#: lacks full column rank: on UMIST, both images of a duplicated pair)
_NULL_RANK_TOL = 1e-10
#: a deletion whose new complement direction keeps less than this fraction of its norm after
#: the projection refactors instead (the Gram-Schmidt update would lose orthogonality)
_DELETE_KEEP = 1e-6


class _NullColumn(_Column):
    """:class:`_Column` on the complement: the same Lawson-Hanson state (P, x, Q[:, k:] an
    orthonormal basis of range(A_P)^perp and qb[k:] = Q[:, k:]^T b), without Q's first k
    columns or R. With F = L Qt (:class:`_LQ`) and N the complement of P,
    range(A_P)^perp = L^-T Qt_N W_N with W_N an orthonormal basis of null(V_N^T) (Qt_N W_N has
    orthonormal columns), so a factorization costs a product with L^-T of r - k columns and a
    QR of r x (r - k) instead of a full QR of the r x k passive block. The least-squares
    solution comes from the residual: with y = s_P x and c = L^-1 (rho - b), Qt_P y = c and
    y = (I + V_P (V_N^T V_N)^-1 V_P^T) Qt_P^T c. Insertions reflect Q's trailing columns as
    :class:`_Column` does (the same arithmetic); deletions add the new direction L^-T Qt_N' w
    (V_N'^T w = 0, w_i = 1) orthogonalized twice against the trailing block."""

    def __init__(self, F, s, b, P=None, lq: _LQ | None = None):
        self.lq = lq
        r = F.shape[0]
        self.F, self.s, self.b = F, s, b
        self.in_P = np.zeros(F.shape[1], dtype=bool)
        self.x = np.zeros(0)
        self.Q = np.empty((r, r), order="F")
        self.qb = np.empty(r)
        self.factor(P or [])

    def _vnn(self) -> tuple[np.ndarray, bool]:
        VN = self.lq.V[~self.in_P]
        G = VN.T @ VN
        if G.size == 0:
            return G, True
        ev = np.linalg.eigvalsh(G)
        return G, bool(ev[0] > _NULL_RANK_TOL ** 2)

    def _complement(self, P: list[int]) -> bool:
        r, m = self.F.shape
        k = len(P)
        self.P, self.k = list(P), k
        self.in_P[:] = False
        self.in_P[self.P] = True
        if k == 0:
            self.Q[:] = np.eye(r)
            self.qb[:] = self.b
            return True
        if k > r:
            return False
        nmask = ~self.in_P
        VN = self.lq.V[nmask]
        if VN.shape[1]:
            qv, rv = linalg.qr(VN, mode="full", check_finite=False)
            dv = np.abs(np.diag(rv))
            if dv.size < VN.shape[1] or not dv.min() > _NULL_RANK_TOL:
                return False
            WN = qv[:, VN.shape[1]:]
            G = self.lq.Qt[:, nmask] @ WN
        else:
            G = self.lq.Qt[:, nmask]
        if k == r:
            self.qb[:] = 0.0
            return G.shape[1] == 0
        Bm = self.lq.linv_t(G)
        # rows by decreasing size (their scales span up to 15 decades): Householder QR is then
        # rowwise stable (Powell & Reid; Cox & Higham), so the small rows of the basis, where
        # b is large, keep their relative accuracy
        order = np.argsort(-np.abs(Bm).max(axis=1), kind="stable")
        qc = linalg.qr(Bm[order], mode="economic", check_finite=False)[0]
        self.Q[order, k:] = qc
        self.qb[k:] = qc.T @ self.b[order]
        return True

    def factor(self, P: list[int]) -> None:
        if self._complement(P):
            return
        # dependent columns: keep an independent subset as _Column.factor does
        A = self.F[:, P] * self.s[P]
        _, r_, piv = linalg.qr(A, mode="economic", pivoting=True, check_finite=False)
        diag = np.abs(np.diag(r_))
        rank = int(np.sum(diag > diag[0] * 1e-10)) if diag.size and diag[0] > 0 else 0
        keep = sorted(piv[:rank])
        if not self._complement([P[i] for i in keep]):
            raise QPError("the passive set stayed dependent after its reduction")

    def insert(self, t: int) -> bool:
        k = self.k
        if k == self.Q.shape[0]:
            return False
        a = self.F[:, t] * self.s[t]
        Qt = self.Q[:, k:]
        tail = Qt.T @ a
        rho = np.linalg.norm(tail)
        if rho <= 1e-10 * np.linalg.norm(a):
            return False
        alpha = -rho if tail[0] >= 0 else rho
        v = tail.copy()
        v[0] -= alpha
        beta = 1.0 / (rho * (rho + abs(tail[0])))
        blas.dger(-beta, Qt @ v, v, a=Qt, overwrite_a=True)
        self.qb[k:] -= (beta * (v @ self.qb[k:])) * v
        self.k = k + 1
        self.P.append(t)
        self.in_P[t] = True
        return True

    def delete(self, i: int) -> None:
        k = self.k
        t = self.P.pop(i)
        self.in_P[t] = False
        self.k = k - 1
        V = self.lq.V
        nmask = ~self.in_P
        nmask[t] = False
        g = self.lq.Qt[:, t].copy()
        if V.shape[1] and nmask.any():
            VN = V[nmask]
            wN = VN @ np.linalg.solve(VN.T @ VN, V[t])
            g -= self.lq.Qt[:, nmask] @ wN
        u = self.lq.linv_t(g[:, None])[:, 0]
        Qt = self.Q[:, k:]
        norm0 = np.linalg.norm(u)
        for _ in range(2):
            u -= Qt @ (Qt.T @ u)
        nu = np.linalg.norm(u)
        if not nu > _DELETE_KEEP * norm0:
            self.factor(list(self.P))
            return
        self.Q[:, k - 1] = u / nu
        self.qb[k - 1] = self.Q[:, k - 1] @ self.b

    def ls(self) -> np.ndarray:
        k = self.k
        if k == 0:
            return np.zeros(0)
        rho = self.residual()
        c = self.lq.linv(rho - self.b)
        y = (self.lq.Qt.T @ c)[self.P]
        V = self.lq.V
        if V.shape[1]:
            VP = V[self.P]
            G, _ = self._vnn()
            y = y + VP @ np.linalg.solve(G, VP.T @ y)
        return self.s[self.P] * y


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
