"""RFS: feature selection by joint l2,1-norm minimization (Nie, Huang, Cai & Ding, NIPS 2010)."""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real


def label_matrix(y: np.ndarray, n_classes: int, coding: str) -> np.ndarray:
    """Class indicator matrix (n, c): ``"onehot"`` gives 1/0 entries, ``"pm1"`` gives +1/-1."""
    if coding not in ("onehot", "pm1"):
        raise ValueError(f"label_coding must be 'onehot' or 'pm1', got {coding!r}")
    off = 0.0 if coding == "onehot" else -1.0
    Y = np.full((y.size, n_classes), off)
    Y[np.arange(y.size), y] = 1.0
    return Y


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _spd_solve(K: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve K Z = B for symmetric positive semi-definite K; least squares if K is singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(K, lower=False, check_finite=False), B,
                                check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(K, B, check_finite=False)[0]


def rfs_objective(X: np.ndarray, Y: np.ndarray, W: np.ndarray, gamma: float) -> float:
    """J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} (eq. 10 with X samples x features)."""
    return float(_row_norms(X @ W - Y).sum() + gamma * _row_norms(W).sum())


def rfs_step_samples(X: np.ndarray, Y: np.ndarray, gamma: float, pi_w: np.ndarray,
                     pi_e: np.ndarray, out: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One iteration of Algorithm 1 in its n x n form.

    With A = [X, gamma I] and U = [W; E] (A U = Y), Algorithm 1 sets
    U = D^-1 A^T (A D^-1 A^T)^-1 Y with D^-1 = diag(2 ||u^i||); the factor 2 cancels, so with
    pi = ||u^i|| (the previous row norms) and
    K = A diag(pi) A^T = X diag(pi_w) X^T + gamma^2 diag(pi_e):
    W = diag(pi_w) X^T K^-1 Y and E = gamma diag(pi_e) K^-1 Y. A zero row has pi = 0 and stays
    zero (the footnote's first remedy: only D^-1 is needed). ``out`` is an optional (n, d) buffer.
    """
    Xs = np.multiply(X, np.sqrt(pi_w), out=out)
    K = Xs @ Xs.T
    K[np.diag_indices_from(K)] += gamma**2 * pi_e
    Lam = _spd_solve(K, Y)
    W = pi_w[:, None] * (X.T @ Lam)
    E = (gamma * pi_e)[:, None] * Lam
    return W, E


def rfs_step_features(X: np.ndarray, Y: np.ndarray, gamma: float, pi_w: np.ndarray,
                      pi_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same iteration solved as a d x d system (for more samples than features).

    Derivation: the n x n update is the minimizer of Tr(U^T D U) subject to A U = Y. Eliminating
    E = (Y - X W) / gamma, it minimizes sum_j ||w^j||^2 / pi_w_j + sum_i ||y_i - x_i W||^2 / r_i
    with r_i = gamma^2 pi_e_i = gamma ||y_i - x_i W_prev||, whose normal equations are
    (X^T R^-1 X + diag(1/pi_w)) W = X^T R^-1 Y. Substituting W = diag(pi_w)^(1/2) Omega gives
    the symmetric positive definite d x d system
    (diag(pi_w)^(1/2) X^T R^-1 X diag(pi_w)^(1/2) + I) Omega = diag(pi_w)^(1/2) X^T R^-1 Y,
    in which a zero row of W (pi_w = 0) stays zero. It needs every residual row non-zero
    (pi_e > 0); the push-through identity P X^T (X P X^T + R)^-1 = (P X^T R^-1 X + I)^-1 P X^T R^-1
    shows it equals :func:`rfs_step_samples`.
    """
    s = np.sqrt(pi_w)
    r = gamma**2 * pi_e
    Z = (X * s) / np.sqrt(r)[:, None]
    M = Z.T @ Z
    M[np.diag_indices_from(M)] += 1.0
    B = s[:, None] * (X.T @ (Y / r[:, None]))
    W = s[:, None] * _spd_solve(M, B)
    E = (Y - X @ W) / gamma
    return W, E


def rfs_fit(X: np.ndarray, Y: np.ndarray, gamma: float, *, tol: float = 1e-6, max_iter: int = 1000,
            form: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Run Algorithm 1 from D = I; return W (d, c) and the objective J after each iteration.

    Stops after the first iteration t >= 2 with J_(t-1) - J_t <= tol * J_(t-1), or after max_iter.
    ``form`` is "samples" (n x n system), "features" (d x d system) or "auto" (the smaller one).
    """
    if gamma <= 0:
        raise ValueError(f"gamma must be positive, got {gamma}")
    if form not in ("auto", "samples", "features"):
        raise ValueError(f"form must be 'auto', 'samples' or 'features', got {form!r}")
    n, d = X.shape
    use_features = form == "features" or (form == "auto" and n > d)
    pi_w, pi_e = np.ones(d), np.ones(n)
    objective: list[float] = []
    W = np.zeros((d, Y.shape[1]))
    buf = None  # (n, d) work array of the n x n form
    for _ in range(max_iter):
        # The d x d form divides by the residual norms: use it only while none is (nearly) zero.
        if use_features and pi_e.min() > 1e-10 * pi_e.max():
            W, E = rfs_step_features(X, Y, gamma, pi_w, pi_e)
        else:
            if buf is None:
                buf = np.empty_like(X)
            W, E = rfs_step_samples(X, Y, gamma, pi_w, pi_e, out=buf)
        pi_w, pi_e = _row_norms(W), _row_norms(E)
        # X W - Y = -gamma E (A U = Y): J = gamma (||E||_{2,1} + ||W||_{2,1}) = gamma ||U||_{2,1}
        objective.append(float(gamma * (pi_e.sum() + pi_w.sum())))
        if len(objective) >= 2 and objective[-2] - objective[-1] <= tol * objective[-2]:
            break
    return W, np.asarray(objective)


@register("rfs")
class RFS(BaseSelector):
    """RFS: joint l2,1-norm loss and regularizer, ranked by row norms of W (Nie et al. 2010).

    Minimizes J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} (eq. 10, with X samples x features)
    by Algorithm 1: eq. 14, min ||U||_{2,1} s.t. A U = Y with A = [X, gamma I] and U = [W; E],
    is solved by the iteration U <- D^-1 A^T (A D^-1 A^T)^-1 Y, D_ii = 1 / (2 ||u^i||) (eq. 19),
    started from D = I. The n x n system is solved by Cholesky (no inverse is formed); when
    samples outnumber features an equivalent d x d system is solved instead (see
    :func:`rfs_step_features`). Zero rows follow the paper's footnote 1: only D^-1 = 2 ||u^i||
    is used, so a zero row keeps weight 0 and stays zero. J never increases (Theorem 1) and the
    iteration reaches the global optimum of this convex problem.

    Stopping rule: stop after iteration t >= 2 when J_(t-1) - J_t <= tol * J_(t-1), or after
    ``max_iter`` iterations.

    Parameters
    ----------
    gamma : the regularization weight (> 0).
    label_coding : "onehot" (default; Y in {0, 1}, one column per class) or "pm1" (+1 / -1,
        the coding of scikit-feature's ``rfs``). The paper does not state its coding.
    fit_intercept : if True, append a constant feature whose weight row (penalized like any
        other, as in the paper's "absorbed" bias) is left out of the scores. The paper's eq. 10
        has no bias; default False.
    tol, max_iter : the stopping rule above.
    form : "auto" (the smaller system), "samples" (n x n) or "features" (d x d).

    Fitted attributes: ``coef_`` (d, c) = W, ``scores_`` = ||w^j||_2, ``n_iter_``,
    ``objective_`` (J after each iteration), ``intercept_`` (c,) when fit_intercept.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # gamma > 0 (eq. 10). Beyond 1e-8..1e8 the fit is numerically its gamma -> 0 or
        # gamma -> inf limit (measured on 45 x 12: the ranking of 1e-6 down to 1e-150, that of
        # 1e6 up to 1e50), and far beyond it breaks down (NaN scores below 1e-162, ties at
        # 1e60, overflow at 1e154).
        "gamma": [real(1e-8, 1e8, "both")],
        "label_coding": [StrOptions({"onehot", "pm1"})],
        "fit_intercept": ["boolean"],
        # a relative decrease of J: 0 runs until J stops decreasing (or max_iter); 1 would stop
        # at iteration 2 whatever J does
        "tol": [real(0, 1, "left")],
        "max_iter": [count(1, ITER_MAX)],
        "form": [StrOptions({"auto", "samples", "features"})],
    }

    def __init__(self, n_features_to_select: int = 10, gamma: float = 1.0,
                 label_coding: str = "onehot", fit_intercept: bool = False, tol: float = 1e-6,
                 max_iter: int = 1000, form: str = "auto"):
        super().__init__(n_features_to_select)
        self.gamma = gamma
        self.label_coding = label_coding
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.form = form

    def _fit(self, X, y, classes):
        Y = label_matrix(y, classes.size, self.label_coding)
        Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X
        W, objective = rfs_fit(Xa, Y, float(self.gamma), tol=float(self.tol),
                               max_iter=int(self.max_iter), form=self.form)
        if self.fit_intercept:
            self.intercept_ = W[-1].copy()
            W = W[:-1]
        self.coef_ = W
        self.n_iter_ = objective.size
        self.objective_ = objective
        return _row_norms(W)
