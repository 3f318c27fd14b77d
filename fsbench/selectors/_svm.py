"""Linear multi-class SVMs on rescaled features, solved in the dual to a certified gap.

Private helper of the SVM-based selectors (``sl2p``, ``sl21``, ``l21svm``, ``cssvm``). One
problem covers all of them: with a per-feature scale ``s`` (given as ``s2 = s**2``) and
``Z = X diag(s)``,

    min_{U, b}  1/2 ||U||_F^2 + 1/2 ||b||^2 + C * loss(Z U + 1 b^T)            (P)

where ``loss`` is

- ``"ovr"``: the one-vs-rest hinge summed over classes,
  sum_i sum_k max(0, 1 - y_ik f_ik) with y_ik = +1 if sample i is in class k else -1
  (SL2P eq. 5 / 14);
- ``"crammer_singer"``: sum_i max(0, 1 - f_{i,y_i} + max_{k != y_i} f_ik)
  (Crammer & Singer 2001; SL2P eq. 2).

The intercept ``b`` is a constant feature of value 1 and is regularized, as in LIBLINEAR
with ``intercept_scaling=1``; without ``fit_intercept`` it is absent. The effective weights on
the original features are ``W = diag(s) U`` (so ``Z U = X W``); a feature with ``s_v = 0`` is
switched off.

Dual: with ``A`` (n x c), ``U = Z^T A`` and ``b = 1^T A``. For ``"ovr"`` A = Y * alpha with
0 <= alpha <= C (Hsieh et al. 2008); for ``"crammer_singer"`` the rows of A sum to zero and
A_ik <= C [k = y_i] (Keerthi et al. 2008). Solvers (``method``):

- ``"ip"`` (default for n <= ``IP_MAX_SAMPLES``): a primal-dual interior-point method
  (Mehrotra predictor-corrector) on the dual with the kernel ``K = Z Z^T (+ 1)``, one n x n
  Cholesky factorization per class and step (Crammer-Singer: one LU of the n (c + 1) KKT
  system). Some 10-30 steps whatever the conditioning of K, which becomes extreme when the
  scales concentrate on a few features; it needs no warm start. It stops when the duality
  gap ``P - D`` of a dual-feasible point is at most ``tol * P``, so the returned primal value
  is certified within ``tol`` (relative) of the optimum of (P) -- the bound the selectors use
  as their monotonicity allowance.
- ``"cd"``: dual coordinate descent over samples (all classes of one sample in closed form)
  in random order, warm-started from a given ``A``, to the same gap; on the kernel when n <=
  the number of active features, on ``U`` (d x c) otherwise. A Python loop: used as the
  fallback should the interior point break down, or on request.
- ``"liblinear"`` (default for n > ``IP_MAX_SAMPLES``): scikit-learn's ``LinearSVC`` (the
  same problem, compiled dual coordinate descent with shrinking) with ``tol`` as LIBLINEAR's
  stopping tolerance. It returns no dual variables, so there is no warm start and no
  certified gap (``dual`` is NaN).

``ReweightedSVM`` is the shared base (parameters, outer loop, diagnostics) of the selectors
that alternate (P) with a closed-form reweighting of the feature scales: ``l21svm`` and
``sl21``/``sl2p``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from scipy.linalg import cho_factor, cho_solve, lu_factor, lu_solve
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real

LOSSES = ("ovr", "crammer_singer")
METHODS = ("auto", "ip", "cd", "liblinear")
IP_MAX_SAMPLES = 400
#: C of the SVM-based selectors (C > 0): from 1e-8 to 1e8, four decades beyond the papers'
#: grids (1e-3 to 1e3) on either side. Far above, the SVM is numerically hard-margin and the
#: rankings follow round-off (measured on a 45 x 12 problem: l21svm and sl2p change their
#: ranking from C = 1e12 on, l1svm stops converging from 1e8 and its continuation from C' = 1
#: costs log2(C) extra fits); far below, W underflows to ties (1e-300).
SVM_C = real(1e-8, 1e8, "both")
PRUNE = 1e-18


class DegenerateWeightsWarning(UserWarning):
    """The selector's weights are zero, negligible or all tied: its ranking is not informative."""


@dataclass
class SVMResult:
    A: np.ndarray | None  # dual variables (n, c), see module docstring (None for liblinear)
    G: (
        np.ndarray
    )  # X^T A (d, c): the effective weights are W = diag(s^2) G, also where s underflows
    W: np.ndarray  # effective weights on the original features, diag(s) U  (d, c)
    b: np.ndarray  # intercept (c,)
    F: np.ndarray  # decision values X W + b  (n, c)
    primal: float
    dual: float
    n_steps: int  # interior-point steps or coordinate-descent epochs
    method: str
    converged: bool

    @property
    def gap(self) -> float:
        return self.primal - self.dual


def signed_labels(y: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-rest coding: Y[i, k] = +1 if y[i] == k else -1."""
    Y = -np.ones((y.size, n_classes))
    Y[np.arange(y.size), y] = 1.0
    return Y


def loss_value(F: np.ndarray, y: np.ndarray, loss: str) -> float:
    """The multi-class loss (see module docstring) of decision values F (n, c)."""
    n = y.size
    if loss == "ovr":
        return float(np.maximum(0.0, 1.0 - signed_labels(y, F.shape[1]) * F).sum())
    margins = F - F[np.arange(n), y][:, None] + 1.0
    margins[np.arange(n), y] = 0.0
    return float(margins.max(axis=1).sum())


def _primal_dual(
    A: np.ndarray, F: np.ndarray, y: np.ndarray, C: float, loss: str
) -> tuple[float, float]:
    """Primal value at U = Z^T A and dual value at A (A dual-feasible, F = K A)."""
    sq = float(np.sum(A * F))  # ||U||^2 + ||b||^2 = <A, K A>
    if loss == "ovr":
        lin = float(np.abs(A).sum())  # sum alpha, as A = Y * alpha with alpha >= 0
    else:
        lin = float(A[np.arange(y.size), y].sum())
    return 0.5 * sq + C * loss_value(F, y, loss), lin - 0.5 * sq


def _done(P: float, D: float, tol: float) -> bool:
    return P - D <= tol * max(P, np.finfo(float).tiny)


def _rel_gap(P: float, D: float) -> float:
    return (P - D) / max(abs(P), np.finfo(float).tiny)


class _Best:
    """The dual-feasible point (A, F, P, D) with the smallest relative gap, and stall detection."""

    def __init__(self, patience: int = 10):
        self.point = None
        self.rel = np.inf
        self.stalled_for = 0
        self.patience = patience
        self.done = False

    def offer(self, A, F, P, D) -> None:
        rel = _rel_gap(P, D)
        if rel < 0.5 * self.rel:
            self.stalled_for = 0
        else:
            self.stalled_for += 1
        if rel <= self.rel:
            self.point, self.rel = (A, F, P, D), rel

    @property
    def stalled(self) -> bool:
        return self.stalled_for >= self.patience

    def stop(self, A, F, y, C, loss, tol) -> bool:
        """Offer the dual-feasible A (F = K A); True once its gap is within tol or we stalled."""
        P, D = _primal_dual(A, F, y, C, loss)
        self.offer(A, F, P, D)
        self.done = _done(P, D, tol)
        return self.done or self.stalled

    def result(self, it: int, ok: bool):
        if self.point is None:
            return None, None, np.nan, np.nan, it, False
        return (*self.point, it, ok)


def _cs_subproblem(Q: float, B: np.ndarray, yi: int, C: float) -> np.ndarray:
    """argmin_a 1/2 Q ||a||^2 + B.a  s.t.  sum(a) = 0, a_k <= C [k = yi].

    KKT: a_k = min(C_k, (beta - B_k) / Q) with beta the root of sum_k a_k(beta) = 0, a
    continuous increasing piecewise-linear function with breakpoints D_k = B_k + Q C_k.
    With D sorted decreasingly and the top r terms uncapped, beta_r =
    (sum_{top r} B - Q sum_{rest} C) / r, and the root is beta_r for the smallest r with
    beta_r >= D_(r+1).
    """
    Ck = np.zeros_like(B)
    Ck[yi] = C
    order = np.argsort(-(B + Q * Ck))
    Bs, Cs = B[order], Ck[order]
    r = np.arange(1, B.size + 1)
    beta_r = (np.cumsum(Bs) - Q * (C - np.cumsum(Cs))) / r
    nxt = np.append((Bs + Q * Cs)[1:], -np.inf)
    beta = beta_r[np.argmax(beta_r >= nxt)]
    return np.minimum(Ck, (beta - B) / Q)


def _factor(M: np.ndarray):
    """(solve, factorization) of a symmetric positive definite M; LU if Cholesky fails."""
    try:
        return partial(cho_solve, check_finite=False), cho_factor(M, check_finite=False)
    except np.linalg.LinAlgError:
        return partial(lu_solve, check_finite=False), lu_factor(M, check_finite=False)


def _batched_spd_solver(M: np.ndarray):
    """A function solving M[k] x_k = r_k for a stack M (c, n, n) of positive definite matrices.

    Small n: numpy's batched LU, one call for all classes (Python overhead dominates). Larger n:
    one Cholesky factorization per class, reused for both solves of a Mehrotra step.
    """
    if M.shape[1] <= 64:
        def solve_stack(r: np.ndarray) -> np.ndarray:
            try:
                return np.linalg.solve(M, r[..., None])[..., 0]
            except np.linalg.LinAlgError:
                # an exactly singular Newton matrix (seen on 9-sample inner folds): the
                # least-norm solution per class instead of stopping the whole experiment
                return np.stack([np.linalg.lstsq(Mk, rk, rcond=None)[0] for Mk, rk in zip(M, r, strict=True)])

        return solve_stack
    facs = [_factor(Mk) for Mk in M]
    return lambda r: np.array([solve(f, rk) for (solve, f), rk in zip(facs, r, strict=True)])


def _max_step(v: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """Largest step in [0, 1] keeping v + t dv >= 0, per row (leading axis = class)."""
    neg = dv < 0
    ratio = np.where(neg, -v / np.where(neg, dv, -1.0), np.inf)
    return np.minimum(1.0, ratio.reshape(ratio.shape[0], -1).min(axis=1))


def _ip_ovr(K, y, c, C, tol, max_iter):
    """Interior point on the one-vs-rest dual, the c box QPs as one batch.

    min_a 1/2 a^T Q_k a - 1^T a, 0 <= a <= C, Q_k = diag(y_k) K diag(y_k). The slack
    s = C - a is a variable of its own (so that it keeps full precision when a is near C),
    with multipliers z (a >= 0) and w (s >= 0); the Newton system reduces to
    (Q_k + diag(z/a + w/s)) da = -r_d - r_z/a + (r_w - w r_s)/s.
    """
    n = y.size
    Y = signed_labels(y, c).T  # (c, n)
    Q = Y[:, :, None] * K[None] * Y[:, None, :]
    a = np.full((c, n), 0.5 * C)
    s = a.copy()
    z = np.ones((c, n))
    w = np.ones((c, n))
    diag = np.arange(n)
    best = _Best()
    for it in range(1, max_iter + 1):
        rd = np.einsum("kij,kj->ki", Q, a) - 1.0 - z + w
        rs = a + s - C
        mu = (a * z + s * w).mean(axis=1)
        M = Q.copy()
        M[:, diag, diag] += z / a + w / s
        try:
            solve = _batched_spd_solver(M)
        except (ValueError, np.linalg.LinAlgError):
            break

        def newton(rz, rw, rd=rd, rs=rs, solve=solve, a=a, s=s, z=z, w=w):
            da = solve(-rd - rz / a + (rw - w * rs) / s)
            ds = -rs - da
            return da, ds, (-rz - z * da) / a, (-rw - w * ds) / s

        v = np.hstack([a, s, z, w])

        def longest(da, ds, dz, dw, v=v):
            return _max_step(v, np.hstack([da, ds, dz, dw]))

        da, ds, dz, dw = newton(a * z, s * w)
        t = longest(da, ds, dz, dw)[:, None]
        mu_aff = ((a + t * da) * (z + t * dz) + (s + t * ds) * (w + t * dw)).mean(axis=1)
        sm = ((mu_aff / mu) ** 3 * mu)[:, None]
        da, ds, dz, dw = newton(a * z + da * dz - sm, s * w + ds * dw - sm)
        t = (0.99 * longest(da, ds, dz, dw))[:, None]
        a, s, z, w = a + t * da, s + t * ds, z + t * dz, w + t * dw
        if not (np.isfinite(a).all() and np.isfinite(s).all() and np.all(a > 0) and np.all(s > 0)):
            break
        A = (
            Y * np.clip(a, 0.0, C)
        ).T  # the clip only undoes round-off: a dual-feasible certificate
        if best.stop(A, K @ A, y, C, "ovr", tol):
            return best.result(it, best.done)
    return best.result(it, False)


def _ip_cs(K, y, c, C, tol, max_iter):
    """Interior point on the Crammer-Singer dual.

    min_A 1/2 sum_k A_k^T K A_k - sum_i A_{i,y_i}, A 1 = 0, A <= Cmat (Cmat_ik = C [k = y_i]).
    With the slack s = Cmat - A as a variable of its own, multipliers w >= 0 (s >= 0) and
    lambda (n) for the equalities, each Newton step solves the symmetric KKT system
    [[K + diag(w_k/s_k)]_k, E^T; E, 0] (E sums over classes), of size n (c + 1), by LU: the
    Schur complement sum_k (K + diag(w_k/s_k))^-1 loses all accuracy once K is singular.
    """
    n = y.size
    rows = np.arange(n)
    onehot = np.zeros((n, c))
    onehot[rows, y] = 1.0
    Cmat = C * onehot
    A = Cmat - 1.0
    s = np.ones((n, c))
    w = np.ones((n, c))
    lam = np.zeros(n)
    m = n * c
    KKT = np.zeros((m + n, m + n))
    for k in range(c):  # class-major blocks: entry (k, i) of the unknowns is A_ik
        KKT[k * n : (k + 1) * n, k * n : (k + 1) * n] = K
        KKT[k * n : (k + 1) * n, m:] = np.eye(n)
        KKT[m:, k * n : (k + 1) * n] = np.eye(n)
    dg = np.arange(m)
    Kdiag = np.tile(np.diag(K), c)
    best = _Best()
    F = K @ A
    for it in range(1, max_iter + 1):
        rd = F - onehot + lam[:, None] + w
        rp = A.sum(axis=1)
        rs = A + s - Cmat
        mu = float((s * w).mean())
        KKT[dg, dg] = Kdiag + (w / s).T.ravel()
        try:
            lu = lu_factor(KKT, check_finite=False)
        except (ValueError, np.linalg.LinAlgError):
            break

        def newton(rw, rd=rd, rp=rp, rs=rs, lu=lu, s=s, w=w):
            g = -rd + (rw - w * rs) / s
            sol = lu_solve(lu, np.concatenate([g.T.ravel(), -rp]), check_finite=False)
            dA = sol[:m].reshape(c, n).T
            ds = -rs - dA
            return dA, ds, (-rw - w * ds) / s, sol[m:]

        def longest(ds, dw, s=s, w=w):
            return min(_max_step(s[None], ds[None])[0], _max_step(w[None], dw[None])[0])

        dA, ds, dw, _ = newton(s * w)
        t = longest(ds, dw)
        mu_aff = float(((s + t * ds) * (w + t * dw)).mean())
        sm = (mu_aff / mu) ** 3 * mu
        dA, ds, dw, dlam = newton(s * w + ds * dw - sm)
        t = 0.99 * longest(ds, dw)
        A, s, w, lam = A + t * dA, s + t * ds, w + t * dw, lam + t * dlam
        if not (np.isfinite(A).all() and np.isfinite(w).all() and np.all(s > 0) and np.all(w > 0)):
            break
        F = K @ A
        # a dual-feasible certificate: restore the equalities through the y_i column
        off = np.minimum(A, 0.0)
        off[rows, y] = 0.0
        if np.all(-off.sum(axis=1) <= C):
            Af = off
            Af[rows, y] = -off.sum(axis=1)
            if best.stop(Af, K @ Af, y, C, "crammer_singer", tol):
                return best.result(it, best.done)
    return best.result(it, False)


def _cd(Xa, s2a, y, c, C, loss, bias, A, tol, max_epochs, seed):
    """Dual coordinate descent on the active features Xa (scales s2a), warm-started from A.

    Returns (A, U or None, F, P, D, epochs, converged).
    """
    n = y.size
    Zs = Xa * np.sqrt(s2a)
    Y = signed_labels(y, c)
    rng = np.random.default_rng(seed)
    kernel = n <= Zs.shape[1]
    if kernel:
        K = Zs @ Zs.T + bias
        diag = np.diag(K).copy()
        F = K @ A
        U = None
    else:
        U = Zs.T @ A
        b = bias * A.sum(axis=0)
        diag = np.einsum("ij,ij->i", Zs, Zs) + bias

    def decision():
        return F if kernel else Zs @ U + bias * b

    P, D = _primal_dual(A, decision(), y, C, loss)
    epochs = 0
    while not _done(P, D, tol) and epochs < max_epochs:
        epochs += 1
        for i in rng.permutation(n):
            Q = diag[i]
            if Q <= 0.0:
                continue
            fi = F[i] if kernel else Zs[i] @ U + bias * b
            if loss == "ovr":
                yi = Y[i]
                alpha = yi * A[i]
                delta = yi * (np.minimum(np.maximum(alpha - (yi * fi - 1.0) / Q, 0.0), C) - alpha)
            else:
                Bv = fi - Q * A[i]
                Bv[y[i]] -= 1.0
                delta = _cs_subproblem(Q, Bv, y[i], C) - A[i]
            if not delta.any():
                continue
            A[i] += delta
            if kernel:
                F += np.outer(K[:, i], delta)
            else:
                U += np.outer(Zs[i], delta)
                b += bias * delta
        P, D = _primal_dual(A, decision(), y, C, loss)
    return A, U, decision(), P, D, epochs, _done(P, D, tol)


def _liblinear(Xa, s2a, y, c, C, loss, fit_intercept, tol, max_iter):
    """LIBLINEAR (scikit-learn's LinearSVC) on the rescaled features: no warm start, no gap."""
    from sklearn.svm import LinearSVC  # noqa: PLC0415

    Z = Xa * np.sqrt(s2a)
    est = LinearSVC(
        loss="hinge",
        multi_class="ovr" if loss == "ovr" else "crammer_singer",
        fit_intercept=fit_intercept,
        intercept_scaling=1.0,
        C=C,
        tol=tol,
        max_iter=max_iter,
        dual=True,
        random_state=0,  # LIBLINEAR's dual CD shuffles; None would read numpy's global state
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(Z, y)
    ok = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    U, b = est.coef_.T, (est.intercept_ if fit_intercept else np.zeros(est.coef_.shape[0]))
    if c == 2:  # one classifier for class 1 vs 0; the one-vs-rest pair is (-u, u)
        U, b = np.hstack([-U, U]), np.concatenate([-b, b])
    F = Z @ U + b
    P = 0.5 * float(np.sum(U * U) + b @ b) + C * loss_value(F, y, loss)
    return U, b, F, P, int(np.max(est.n_iter_)), ok


def _subgradient_dual(F: np.ndarray, y: np.ndarray, C: float, loss: str) -> np.ndarray:
    """A dual point consistent with the margins of F: C times a subgradient of the loss.

    Margins exactly at 1 (free support vectors) get 0; used only to order features whose
    scale underflowed when the solver (LIBLINEAR) returns no dual variables.
    """
    n, c = F.shape
    if loss == "ovr":
        Y = signed_labels(y, c)
        return C * Y * (Y * F < 1.0)
    rows = np.arange(n)
    margins = F - F[rows, y][:, None] + 1.0
    margins[rows, y] = 0.0
    k = margins.argmax(axis=1)
    A = np.zeros((n, c))
    viol = margins[rows, k] > 0
    A[rows[viol], y[viol]] = C
    A[rows[viol], k[viol]] = -C
    return A


def solve_svm(
    X: np.ndarray,
    y: np.ndarray,
    n_classes: int,
    C: float,
    s2: np.ndarray | None = None,
    *,
    loss: str = "ovr",
    fit_intercept: bool = True,
    A0: np.ndarray | None = None,
    tol: float = 1e-8,
    method: str = "auto",
    max_iter: int = 200,
    max_epochs: int = 20000,
    fallback_epochs: int = 1000,
    seed: int = 0,
) -> SVMResult:
    """Solve (P) on the features X diag(sqrt(s2)) to a relative duality gap ``tol``.

    ``method`` is ``"ip"``, ``"cd"`` or ``"auto"`` (``"ip"`` when n <= IP_MAX_SAMPLES). Should
    the interior point break down or stall (an ill-conditioned kernel) above 100 * tol,
    coordinate descent continues from its best certificate for at most ``fallback_epochs``;
    ``converged`` tells whether the gap ``tol`` was reached (the gap itself is in the result).
    ``A0`` warm-starts coordinate descent (for ``"ovr"`` it is clipped into the box; for
    ``"crammer_singer"`` it must be feasible, as every iterate of this module is).
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    n, d = X.shape
    c = n_classes
    s2 = np.ones(d) if s2 is None else np.asarray(s2, dtype=float)
    # Features scaled below 1e-18 of the largest scale change K = Z Z^T by less than its
    # round-off (d eps): they are left out, with weight 0 (their G = X^T A is still returned).
    active = np.flatnonzero(s2 > PRUNE * s2.max(initial=0.0))
    bias = 1.0 if fit_intercept else 0.0
    if method == "auto":
        method = "ip" if n <= IP_MAX_SAMPLES else "liblinear"
        if method == "liblinear" and c == 2 and loss != "ovr":
            method = "cd"
    U = None
    steps = 0
    if method not in ("ip", "cd", "liblinear"):
        raise ValueError(f"method must be 'auto', 'ip', 'cd' or 'liblinear', got {method!r}")
    Xa = X if active.size == d else X[:, active]
    if method == "liblinear":
        U, b, F, P, steps, ok = _liblinear(
            Xa, s2[active], y, c, C, loss, fit_intercept, tol, max_epochs
        )
        W = np.zeros((d, c))
        W[active] = np.sqrt(s2[active])[:, None] * U
        G = np.zeros((d, c))
        G[active] = U / np.sqrt(s2[active])[:, None]
        if active.size < d:
            off = np.setdiff1d(np.arange(d), active)
            G[off] = X[:, off].T @ _subgradient_dual(F, y, C, loss)
        return SVMResult(
            A=None,
            G=G,
            W=W,
            b=b,
            F=F,
            primal=P,
            dual=np.nan,
            n_steps=steps,
            method=method,
            converged=ok,
        )
    if method == "ip":
        K = (Xa * s2[active]) @ Xa.T + bias
        solver = _ip_ovr if loss == "ovr" else _ip_cs
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            A, F, P, D, steps, ok = solver(K, y, c, C, tol, max_iter)
        # Rare: the interior point broke down or stalled (a nearly singular kernel). Within
        # 100 * tol its certificate is kept (the gap is reported); otherwise coordinate
        # descent continues from it.
        if not ok and not (A is not None and _rel_gap(P, D) <= 100 * tol):
            A0, method = (A if A is not None else A0), "ip+cd"
    if method in ("cd", "ip+cd"):
        if A0 is None:
            A = np.zeros((n, c))
        else:
            A = np.array(A0, dtype=float)
            if loss == "ovr":
                Y = signed_labels(y, c)
                A = Y * np.clip(Y * A, 0.0, C)
        cap = max_epochs if method == "cd" else fallback_epochs
        A, U, F, P, D, epochs, ok = _cd(Xa, s2[active], y, c, C, loss, bias, A, tol, cap, seed)
        steps = epochs if method == "cd" else steps + epochs
    G = X.T @ A
    W = np.zeros((d, c))
    if U is None:  # W = diag(s) Z^T A = diag(s^2) X^T A
        W[active] = s2[active, None] * G[active]
    else:
        W[active] = np.sqrt(s2[active])[:, None] * U
    return SVMResult(
        A=A,
        G=G,
        W=W,
        b=bias * A.sum(axis=0),
        F=F,
        primal=P,
        dual=D,
        n_steps=steps,
        method=method,
        converged=bool(ok),
    )


class ReweightedSVM(BaseSelector):
    """Base of the selectors that alternate an SVM step (P) with a closed-form reweighting.

    ``l21svm`` and ``sl21``/``sl2p``: each outer iteration solves (P) on the features scaled
    by ``s = exp(log_s2 / 2)`` (warm-started from the previous dual where the solver allows),
    records the selector's objective J at the resulting weights, and updates the selector's
    state (the reweighting: eta for L21-SVM, log theta for SL2P). Subclasses define
    ``_log_scales(state) -> log_s2`` and ``_reweight(res, log_s2, state, C, y) ->
    (J, new state, degenerate)``; the loop stops when J decreases by less than ``tol * J``,
    after ``max_iter`` iterations, or at once when the step is degenerate (W = 0).
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "C": [SVM_C],
        "loss": [StrOptions(set(LOSSES))],
        "fit_intercept": ["boolean"],
        # a relative decrease of J: 0 runs until J stops decreasing (or max_iter)
        "tol": [real(0, 1, "left")],
        "max_iter": [count(1, ITER_MAX)],
        # a relative duality gap: 0 is never certified in floating point
        "inner_tol": [real(0, 1, "neither")],
        "solver": [StrOptions(set(METHODS))],
    }

    def __init__(
        self,
        *,
        n_features_to_select: int = 10,
        C: float = 1.0,
        loss: str = "ovr",
        fit_intercept: bool = True,
        tol: float = 1e-5,
        max_iter: int = 200,
        inner_tol: float = 1e-8,
        solver: str = "auto",
    ):
        super().__init__(n_features_to_select=n_features_to_select)
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.solver = solver

    def _label(self) -> str:
        return type(self).__name__

    def _log_scales(self, state: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _reweight(self, res: SVMResult, log_s2, state, C: float, y) -> tuple[float, Any, bool]:
        raise NotImplementedError

    def _reweighting_loop(self, X, y, n_classes: int, C: float, state):
        """Run the outer iterations; sets coef_, intercept_, objective_, n_iter_.

        Returns (final state, last SVMResult, whether it stopped at a degenerate step, shared
        diagnostics) and warns if an SVM step ended above 100 * ``inner_tol``.
        """
        A = None
        objective, gaps, methods = [], [], set()
        converged = degenerate = False
        for it in range(1, self.max_iter + 1):
            log_s2 = self._log_scales(state)
            with np.errstate(under="ignore"):
                s2 = np.exp(log_s2)
            res = solve_svm(
                X,
                y,
                n_classes,
                C,
                s2,
                loss=self.loss,
                fit_intercept=self.fit_intercept,
                A0=A,
                tol=self.inner_tol,
                method=self.solver,
            )
            A = res.A
            methods.add(res.method)
            J, state, degenerate = self._reweight(res, log_s2, state, C, y)
            objective.append(J)
            gaps.append(res.gap / max(res.primal, np.finfo(float).tiny))
            if degenerate:
                break
            if it >= 2 and objective[-2] - objective[-1] <= self.tol * abs(objective[-1]):
                converged = True
                break
        with np.errstate(under="ignore"):
            self.coef_ = np.exp(log_s2)[:, None] * res.G  # W = diag(s^2) G, G = X^T A
        self.intercept_ = res.b
        self.objective_ = obj = np.asarray(objective)
        self.n_iter_ = len(objective)
        finite_gaps = np.asarray(gaps)[np.isfinite(gaps)]  # NaN: LIBLINEAR, uncertified
        inner_ok = bool(np.all(finite_gaps <= 100 * self.inner_tol))
        rises = (obj[1:] - obj[:-1]) / np.maximum(np.abs(obj[1:]), np.finfo(float).tiny)
        diagnostics = {
            "converged": bool(converged),
            "n_objective_rises": int(np.sum(rises > 0)),
            "max_objective_rise": float(max(rises.max(initial=0.0), 0.0)),
            "max_inner_gap": float(np.max(gaps)),
            "inner_converged": inner_ok,
            "inner_solver": ",".join(sorted(methods)),
        }
        if not inner_ok:
            warnings.warn(
                f"{self._label()}: an SVM step stopped at a relative duality gap of "
                f"{np.nanmax(gaps):.2g} (inner_tol={self.inner_tol}, a nearly singular kernel); "
                "the objective may rise by as much.",
                ConvergenceWarning,
                stacklevel=4,
            )
        return state, res, degenerate, diagnostics

    def _warn_not_converged(self) -> None:
        warnings.warn(
            f"{self._label()} did not converge in {self.max_iter} iterations (tol={self.tol}).",
            ConvergenceWarning,
            stacklevel=4,
        )
