"""Lawson-Hanson column states of DSO-FS's least-squares E step (:func:`~fsbench.selectors._dso_qp.nnls_columns`).

For one class column, min_{z >= 0} ||F diag(s) z + b|| with F (r x m) wide and of full row rank:
the passive set P, the solution x on it and an orthonormal basis of range(F_P diag(s_P))^perp,
which gives the residual and the least-squares solution.

- :class:`_Column`: a full QR factorization of the passive columns, updated by Householder
  reflections (insert) and Givens rotations (delete).
- :class:`_NullColumn`: the complement of the passive set, for F with few null directions
  (m - r small: UMIST's duplicated images), from one LQ form of F shared by the columns
  (:class:`_LQ`): a QR of r x (r - k) instead of r x k.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack


class QPError(RuntimeError):
    """The sign-constrained subproblem is unbounded (primal infeasible) or did not terminate."""


#: LAPACK workspace sizes by problem shape, queried as scipy.linalg.qr queries them
_LWORK: dict[tuple[str, int, int], int] = {}


def _lwork(name: str, f: Callable, a: np.ndarray, *args: np.ndarray) -> int:
    key = (name, a.shape[0], a.shape[1] if not args else args[0].size)
    if key not in _LWORK:
        _LWORK[key] = int(f(a, *args, lwork=-1)[-2][0].real)
    return _LWORK[key]


#: a column whose component orthogonal to the columns before it is below this fraction of its
#: own norm counts as dependent on them
_DEPENDENT = 1e-10


def _independent(R: np.ndarray, A: np.ndarray) -> bool:
    """Whether the QR factor R of A (its first k = A.shape[1] columns) shows independent columns:
    every |R_ii| above ``_DEPENDENT`` times the norm of A's column i.

    Relative to each column's own norm, so invariant to the row and column scalings of A. The
    E step's F carries DSO-FS's row weights, which span up to 15 decades at small p: a test
    against the largest column norm (as before) declared independent columns that live in
    small-scale rows dependent, cut warm-started passive sets (UMIST, p = 0.3) and left E steps
    up to 18% above their optimum, undetected (benchmarks/dso_estep.md)."""
    k = A.shape[1]
    return bool(np.all(np.abs(np.diag(R[:k, :k])) > _DEPENDENT * np.linalg.norm(A, axis=0)))


def independent_subset(A: np.ndarray) -> list[int]:
    """Positions of a maximal independent subset of A's columns, in order: a QR with column
    pivoting of A with its columns scaled to unit norm (so that, as in :func:`_independent`, a
    column's dependence is judged against its own norm), keeping the pivots whose diagonal
    entry exceeds ``_DEPENDENT``; zero columns are dependent."""
    norms = np.linalg.norm(A, axis=0)
    scaled = A / np.where(norms > 0, norms, 1.0)
    _, r_, piv = linalg.qr(scaled, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(r_))
    rank = int(np.sum(diag > _DEPENDENT))
    return sorted(int(i) for i in piv[:rank])

def _full_qr_into(A: np.ndarray, Q: np.ndarray, R: np.ndarray) -> bool:
    """``Q, R[:, :k] = scipy.linalg.qr(A, mode="full")`` computed in the Fortran-ordered r x r
    buffers (A is r x k, k <= r), and R's other columns set to those of the identity; False,
    leaving the buffers undefined, when A's columns are numerically dependent (:func:`_independent`).

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
        if not _independent(R, A):
            return False
        q, _, info = orgqr(Q, tau, lwork=_lwork("orgqr", orgqr, Q, tau), overwrite_a=1)
        if info != 0 or not np.shares_memory(q, Q):
            qr_, r_ = linalg.qr(A, mode="full", check_finite=False)
            Q[:], R[:, :k] = qr_, r_
    if not _independent(R, A):
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
        # dependent columns (duplicated samples, or more columns than rows): keep an
        # independent subset, in the original order
        keep = independent_subset(A)
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
        keep = independent_subset(A)
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
