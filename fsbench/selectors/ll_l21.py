"""LL-l2,1: logistic regression with an l2,1 penalty, by accelerated proximal gradient.

Liu, Ji & Ye, "Multi-task feature learning via efficient l2,1-norm minimization", UAI 2009 (the
accelerated gradient method with the row-wise prox of the l2,1 norm; SLEP's ``mcLogisticR``);
Beck & Teboulle, "A fast iterative shrinkage-thresholding algorithm", SIAM J. Imaging Sci. 2(1),
2009 (FISTA, backtracking); O'Donoghue & Candes, "Adaptive restart for accelerated gradient
schemes", Found. Comput. Math. 15, 2015 (the gradient restart).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from scipy.special import entr, expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real
from fsbench.selectors.ls_l21 import (
    L21_RATIO,
    centered_columns,
    duplicate_columns,
    fixed_row_norms,
    gradient_row_norms,
    l21_ranking,
    one_hot,
    sequential_column_sums,
    split_duplicates,
)

#: "multinomial": softmax cross-entropy, (1/n) sum_i -log softmax(z_i)_{y_i}; "ovr": one binary
#: logistic loss per class on +1/-1 labels, (1/(n c)) sum_i sum_k log(1 + exp(-y_ik z_ik)), the
#: loss of SLEP's mcLogisticR and scikit-feature's ll_l21
LOSSES = ("multinomial", "ovr")
#: the gap is computed every this many iterations (its cost is about one gradient)
CHECK_EVERY = 10
#: the step's Lipschitz estimate L shrinks by this factor before every iteration and doubles
#: until the step decreases the loss enough (measured on GLIOMA, multinomial, lambda ratio 0.1,
#: with the restart: 230 iterations to a gap of 1e-6, against 6,600 with L only increasing from a
#: 32nd of the global bound kappa ||[X, 1]||_2^2 / m, and 9,600 at that bound; 16,000 and more
#: without the restart)
SHRINK = 0.8
_MAX_DOUBLINGS = 60


def _scale(n: int, c: int, loss: str) -> int:
    """m, the number the summed loss is divided by: n (multinomial) or n c (ovr)."""
    return n if loss == "multinomial" else n * c


def probabilities(Z: np.ndarray, loss: str) -> np.ndarray:
    """softmax of each row (multinomial) or the sigmoid of each entry (ovr)."""
    if loss == "multinomial":
        E = np.exp(Z - Z.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True)
    return expit(Z)


def loss_value(Z: np.ndarray, T: np.ndarray, loss: str) -> float:
    """The smooth part f(Z), Z = X W + 1 b^T (n, c) and T the one-hot labels (n, c)."""
    n, c = T.shape
    if loss == "multinomial":
        top = Z.max(axis=1)
        lse = top + np.log(np.exp(Z - top[:, None]).sum(axis=1))
        return float((lse.sum() - np.vdot(T, Z)) / n)
    return float(np.logaddexp(0.0, (1.0 - 2.0 * T) * Z).sum() / (n * c))


def bregman(Zs: np.ndarray, Ps: np.ndarray, Zn: np.ndarray, loss: str) -> float:
    """f(Zn) - f(Zs) - <grad f(Zs), Zn - Zs> (Ps the probabilities at Zs), summed from per-sample
    terms that are accurate however small the step: with delta = zn_i - zs_i and
    u = delta - <p, delta>, a sample's term is log(sum_k p_k exp(u_k)) = log1p(sum_k p_k expm1(u_k))
    (for ovr, each entry is the two-class case, p = (1 - sigma, sigma) and delta = (0, delta)).
    The difference of the two loss values loses every digit once the step is below about 1e-8."""
    n, c = Zs.shape
    delta = Zn - Zs
    if loss == "multinomial":
        u = delta - np.einsum("ik,ik->i", Ps, delta)[:, None]
        return float(np.log1p(np.einsum("ik,ik->i", Ps, np.expm1(u))).sum() / n)
    q = 1.0 - Ps
    return float(np.log1p(q * np.expm1(-Ps * delta) + Ps * np.expm1(q * delta)).sum() / (n * c))


def _intercept_objective(Z0: np.ndarray, b: np.ndarray, counts: np.ndarray, loss: str) -> float:
    # n f(Z0 + b) up to terms free of b, for the line search of optimal_intercept
    if loss == "multinomial":
        Z = Z0 + b
        top = Z.max(axis=1)
        return float((top + np.log(np.exp(Z - top[:, None]).sum(axis=1))).sum() - counts @ b)
    return float(np.logaddexp(0.0, Z0 + b).sum() - counts @ b)


def optimal_intercept(Z0: np.ndarray, b: np.ndarray, T: np.ndarray, loss: str, max_steps: int = 50) -> np.ndarray:
    """The intercept minimizing f(Z0 + 1 b^T) for fixed Z0 = X W, by damped Newton from ``b``.

    At it the column sums of the probabilities equal the class counts (for multinomial up to a
    constant added to every b_k, which changes nothing): the dual point of :func:`dual_value` is
    then feasible. Each step costs O(n c^2).
    """
    counts = T.sum(axis=0)
    n = T.shape[0]
    b = np.array(b, dtype=float)
    value = _intercept_objective(Z0, b, counts, loss)
    for _ in range(max_steps):
        P = probabilities(Z0 + b, loss)
        g = P.sum(axis=0) - counts
        if np.abs(g).max() <= 1e-13 * n:
            break
        if loss == "multinomial":
            H = np.diag(P.sum(axis=0)) - P.T @ P
            H += np.diag(H).mean()  # a multiple of 1 1^T: fixes b's free constant, g _|_ 1
            step = np.linalg.solve(H, g)
        else:
            step = g / np.maximum((P * (1.0 - P)).sum(axis=0), np.finfo(float).tiny)
        t = 1.0
        for _ in range(40):
            new = _intercept_objective(Z0, b - t * step, counts, loss)
            if new < value:
                break
            t *= 0.5
        else:
            break  # no decrease left at this precision
        b, value = b - t * step, new
    return b


def dual_value(P: np.ndarray, T: np.ndarray, s: float, loss: str) -> float:
    """The dual objective at Theta = s (P - T) / m (a lower bound on the minimum; see :func:`l21_logistic_fit`).

    multinomial: (1/n) sum_i H(q_i), q_i = (1 - s) t_i + s p_i and H the entropy (nats);
    ovr: (1/(n c)) sum_ik h(a_ik), a_ik = s |p_ik - t_ik| and h the binary entropy.
    """
    n, c = T.shape
    if loss == "multinomial":
        return float(entr((1.0 - s) * T + s * P).sum() / n)
    A = s * np.abs(P - T)
    return float((entr(A) + entr(1.0 - A)).sum() / (n * c))


def _column_norms(Vt: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("kj,kj->j", Vt, Vt))


def group_soft_threshold(Vt: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The prox of threshold ||.||_{2,1} on V (d, c), given and returned transposed (Vt = V^T, c x d,
    the layout the solver keeps: its column operations run contiguously): each row v_j ->
    max(0, 1 - threshold / ||v_j||) v_j, exactly zero for rows of norm at most the threshold.
    Returns (W^T, the mask of non-zero rows)."""
    norms = _column_norms(Vt)
    factor = np.maximum(1.0 - threshold / np.maximum(norms, np.finfo(float).tiny), 0.0)
    return Vt * factor, factor > 0.0


def lambda_max(Xc: np.ndarray, T: np.ndarray, loss: str) -> tuple[float, np.ndarray]:
    """(lambda_max, b0): the smallest lambda at which W = 0 is optimal, and the optimal intercept there.

    At W = 0 the optimal intercept gives every row the class priors pi (multinomial: b0 = log pi;
    ovr: b0_k = log(pi_k / (1 - pi_k))), so the loss gradient is G0 = X_c^T (1 pi^T - T) / m, and
    W = 0 is optimal iff every row of G0 has norm at most lambda: lambda_max = max_j ||G0_j||_2.
    """
    n, c = T.shape
    prior = T.sum(axis=0) / n
    b0 = np.log(prior) if loss == "multinomial" else np.log(prior) - np.log1p(-prior)
    G0t = (prior - T).T @ Xc / _scale(n, c, loss)  # (c, d); this layout is 3 to 4 times faster in BLAS
    return float(_column_norms(G0t).max(initial=0.0)), b0


class L21LogisticFit(NamedTuple):
    """The result of :func:`l21_logistic_fit`."""

    #: (d, c) and (c,): the returned point (b optimal for this W)
    W: np.ndarray
    b: np.ndarray
    #: F(W_k, b_k) after each iteration; the last entry is F at the returned (W, b)
    objective: np.ndarray
    #: (F(W, b) - D) / F(W, b) at the returned point, D the dual bound: an upper bound on
    #: (F(W, b) - min F) / F(W, b)
    duality_gap: float
    #: whether the gap reached tol before max_iter
    converged: bool


def l21_logistic_fit(Xc: np.ndarray, T: np.ndarray, lam: float, *, loss: str = "multinomial",
                     tol: float = 1e-6, max_iter: int = 10_000) -> L21LogisticFit:
    """Minimize F(W, b) = f(X_c W + 1 b^T) + lam ||W||_{2,1} by FISTA until a duality gap certifies it.

    f is the loss of :func:`loss_value` (T the one-hot labels); X_c should be centred (then b is
    nearly decoupled from W; a constant column must be exactly 0). Starts at W = 0 and the optimal
    intercept there.

    Iteration (FISTA, Beck & Teboulle 2009): at the extrapolated point S = W_k + beta_k (W_k -
    W_(k-1)) (likewise for b), W_(k+1) = prox_(lam/L)(S - grad_W f / L) with the row-wise group
    soft threshold (:func:`group_soft_threshold`) and b_(k+1) = b_S - grad_b f / L, where L is
    found by backtracking: it is first multiplied by :data:`SHRINK` and then doubled until
    f(W_(k+1), b_(k+1)) <= f(S) + <grad f(S), step> + L / 2 ||step||^2 (the left side minus the
    first two terms of the right computed as one sum of small non-negative terms, :func:`bregman`).
    beta_k follows FISTA's t_(k+1) = (1 + sqrt(1 + 4 t_k^2)) / 2, reset to t = 1 whenever the step
    turns against the previous one (<S - W_(k+1), W_(k+1) - W_k> + the same for b > 0; O'Donoghue
    & Candes 2015).
    Letting L shrink and restarting carry no convergence rate of their own; the stopping rule is
    what certifies the result.

    Stopping rule: every :data:`CHECK_EVERY` iterations the intercept is made optimal for the
    current W (:func:`optimal_intercept`), P the probabilities there and R = (P - T) / m the loss
    gradient in Z. Fenchel duality gives, for every Theta with 1^T Theta = 0 and every row
    ||x_j^T Theta||_2 <= lam, min F >= -f*(Theta); with Theta = s R, s = min(1, lam / max_j
    ||x_j^T R||_2), both hold and -f*(Theta) is :func:`dual_value` (multinomial: f*(Theta) =
    (1/n) sum_i sum_k q_ik log q_ik with q_i = t_i + n theta_i on the simplex; ovr: the binary
    entropies of a_ik = |m theta_ik|). The fit stops at the first check with
    F(W, b*) - D <= tol F(W, b*), which certifies (F - min F) / F <= tol, or after ``max_iter``
    iterations (``converged`` False).
    """
    n, d = Xc.shape
    c = T.shape[1]
    m = _scale(n, c, loss)
    lam_max, b = lambda_max(Xc, T, loss)
    # W is kept transposed, Wt = W^T (c, d), and gradients as R^T X_c: see group_soft_threshold
    Wt = np.zeros((c, d))
    XW = np.zeros((n, c))
    if lam >= lam_max:  # W = 0 and the prior intercept are optimal (the KKT conditions hold)
        value = loss_value(XW + b, T, loss)
        return L21LogisticFit(Wt.T.copy(), b, np.array([value]), 0.0, True)
    objective: list[float] = []
    Wt_prev, b_prev, XW_prev = Wt, b, XW
    t = 1.0
    kappa = 0.5 if loss == "multinomial" else 0.25  # the Hessian of the loss per sample is <= kappa I
    # the mean eigenvalue of kappa [X_c, 1]^T [X_c, 1] / m: below the largest, backtracking raises it
    L = kappa * (np.vdot(Xc, Xc) + n) / (m * min(n, d + 1))
    gap, converged, stalled = math.inf, False, False
    for k in range(1, max_iter + 1):
        t_next = (1.0 + math.sqrt(1.0 + 4.0 * t * t)) / 2.0
        beta = (t - 1.0) / t_next
        St, Sb = Wt + beta * (Wt - Wt_prev), b + beta * (b - b_prev)
        Zs = XW + beta * (XW - XW_prev) + Sb
        Ps = probabilities(Zs, loss)
        Rs = (Ps - T) / m
        Gt, Gb = Rs.T @ Xc, Rs.sum(axis=0)
        L *= SHRINK
        for _ in range(_MAX_DOUBLINGS):
            Wt_new, nonzero = group_soft_threshold(St - Gt / L, lam / L)
            b_new = Sb - Gb / L
            rows = np.flatnonzero(nonzero)
            XW_new = Xc[:, rows] @ Wt_new[:, rows].T if rows.size < d // 4 else Xc @ Wt_new.T
            Dt, Db = Wt_new - St, b_new - Sb
            if bregman(Zs, Ps, XW_new + b_new, loss) <= 0.5 * L * (np.vdot(Dt, Dt) + Db @ Db):
                break
            L *= 2.0
        else:
            stalled = True
        if np.vdot(St - Wt_new, Wt_new - Wt) + (Sb - b_new) @ (b_new - b) > 0:
            t_next = 1.0
        Wt_prev, b_prev, XW_prev = Wt, b, XW
        Wt, b, XW, t = Wt_new, b_new, XW_new, t_next
        objective.append(loss_value(XW + b, T, loss) + lam * float(_column_norms(Wt).sum()))
        if stalled or k % CHECK_EVERY == 0 or k == max_iter:
            b_star, primal, gap = _certify(Xc, T, Wt, XW, b, lam, loss)
            if gap <= tol or stalled or k == max_iter:
                converged = gap <= tol
                b = b_star
                objective[-1] = primal
                break
    return L21LogisticFit(Wt.T.copy(), b, np.asarray(objective), float(gap), converged)


def _certify(Xc, T, Wt, XW, b, lam, loss):
    """(b*, F(W, b*), relative duality gap) for the current W (see :func:`l21_logistic_fit`)."""
    n, c = T.shape
    b_star = optimal_intercept(XW, b, T, loss)
    Z = XW + b_star
    P = probabilities(Z, loss)
    largest = float(_column_norms((P - T).T @ Xc / _scale(n, c, loss)).max(initial=0.0))
    s = min(1.0, lam / largest) if largest > 0 else 1.0
    primal = loss_value(Z, T, loss) + lam * float(_column_norms(Wt).sum())
    return b_star, primal, (primal - dual_value(P, T, s, loss)) / primal


@register("ll_l21")
class LLL21(BaseSelector):
    """LL-l2,1: logistic regression + lambda ||W||_{2,1} by accelerated proximal gradient; rank by row norm.

    Minimizes over W (d x c) and an unpenalized intercept b (c,)

        F(W, b) = (1/n) sum_i -log softmax(x_i W + b)_{y_i} + lambda ||W||_{2,1}

    (``loss="multinomial"``, the default), or with ``loss="ovr"`` the loss of Liu, Ji & Ye (UAI
    2009) for multi-class data, SLEP's ``mcLogisticR``: one binary logistic loss per class on
    labels y_ik = +1 (sample i in class k) or -1, weighted 1/(n c),

        F(W, b) = 1/(n c) sum_i sum_k log(1 + exp(-y_ik (x_i w_k + b_k))) + lambda ||W||_{2,1}.

    Both are convex; solved by FISTA with backtracking, adaptive restart and the row-wise group
    soft threshold as prox, from W = 0 (no warm start), until a duality gap certifies
    (F - min F) / F <= ``tol``, checked every 10 iterations, or ``max_iter`` iterations
    (derivation and details: :func:`l21_logistic_fit`). X is centred first (the intercept absorbs
    it; ``intercept_`` is that of the uncentred X).

    lambda = ``lambda_ratio`` * lambda_max, with lambda_max = max_j ||x_j^T (T - 1 pi^T)||_2 / m
    (x_j the centred column j, T the one-hot labels, pi the class priors, m = n for multinomial
    and n c for ovr), the smallest lambda at which W = 0 is optimal (:func:`lambda_max`); a ratio
    means the same place on each dataset's path, whatever the loss's scaling. ``lambda_ratio`` = 1
    gives W = 0 without iterating. The default 0.1 is that of ``ls_l21``: on the five microarray
    sets of the papers (z-scored) it keeps 23 (ALLAML) to 36 (SRBCT) rows non-zero in 140 to 240
    iterations (ovr: 23 to 48 rows, 140 to 280 iterations), 0.1 to 0.5 s. The default tol = 1e-6
    gives there the first 200 places of the ranking of a fit to tol = 1e-11.

    Scores are the row norms ||w_j||_2. Zero rows tie at 0 and are ranked after the non-zero rows by
    the norm of the loss gradient ||x_j^T (P - T)||_2 / m at the solution (at most lambda; the next
    to leave zero as lambda decreases), then by index, as in ``ls_l21``. Columns of X equal entry
    for entry are fitted as one, their row split equally (:func:`fsbench.selectors.ls_l21.split_duplicates`:
    an optimum too), so they tie exactly, the lower index first. Row norms and gradient norms are
    summed in a fixed order, so exact ties stay exact on every machine.

    scikit-feature 1.2.1's ``ll_l21.proximal_gradient_descent(X, y, z)`` solves the ``loss="ovr"``
    problem with lambda = z given in absolute terms: z = lambda_ratio * lambda_max(ovr) is the same
    problem. It stops when F changes by less than 1e-3 (absolute) between two iterations or after
    1000 iterations, its step estimate only grows (from 1 / (n c)), and it ranks by row norms with
    numpy's unstable argsort reversed (zero rows in no stated order). On GLIOMA at lambda_ratio 0.1
    its rule stops after 35 iterations 29% above the optimum, with 1774 non-zero rows against 47;
    run to its 1000-iteration cap it is still 6e-4 above. Under numpy 2 it raises at its first
    line-search step (np.inner of a (1, c) and a (c,) array lands in a float array's slot); the
    tests and the benchmark run it with that one term taken by ``.item()``.

    Fitted attributes: ``coef_`` (d, c) = W, ``intercept_`` (c,), ``scores_`` = ||w_j||_2,
    ``lambda_max_``, ``lambda_`` = lambda_ratio * lambda_max_, ``gradient_norms_`` (d,),
    ``n_iter_``, ``objective_`` (F after each iteration; the last entry at the returned point),
    ``duality_gap_`` (relative), ``diagnostics_`` = {"converged", "n_nonzero", "duality_gap"}; a
    ConvergenceWarning when ``max_iter`` ends the fit before the gap reaches ``tol``.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # a fraction of lambda_max: see fsbench.selectors.ls_l21.RATIO_MIN for the bounds
        "lambda_ratio": [L21_RATIO],
        "loss": [StrOptions(set(LOSSES))],
        # a relative duality gap: 0 is never certified in floating point, 1 certifies anything
        "tol": [real(0, 1, "neither")],
        # FISTA iterations (each about two products with X): 50 to 460 on the microarray data
        # for ratios 0.5 to 0.02 at tol 1e-6
        "max_iter": [count(1, ITER_MAX)],
    }

    def __init__(self, *, n_features_to_select: int = 10, lambda_ratio: float = 0.1, loss: str = "multinomial",
                 tol: float = 1e-6, max_iter: int = 10_000):
        super().__init__(n_features_to_select=n_features_to_select)
        self.lambda_ratio = lambda_ratio
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, X, y, classes):
        n, d = X.shape
        c = classes.size
        T = one_hot(y, c)
        Xc = centered_columns(X)
        self.lambda_max_, _ = lambda_max(Xc, T, self.loss)
        lam = float(self.lambda_ratio) * self.lambda_max_
        self.lambda_ = lam
        groups = duplicate_columns(X)
        Xk = Xc if groups.keep.size == d else Xc[:, groups.keep]
        lam_fit = lam if self.lambda_ratio < 1 else math.inf  # ratio 1: W = 0 exactly, no iteration
        fit = l21_logistic_fit(Xk, T, lam_fit, loss=self.loss, tol=float(self.tol), max_iter=int(self.max_iter))
        W = split_duplicates(fit.W, groups)
        Z = Xc @ W + fit.b
        R = probabilities(Z, self.loss) - T
        norms = fixed_row_norms(W)
        self.gradient_norms_ = gradient_row_norms(Xc, R, _scale(n, c, self.loss))
        self.ranking_ = l21_ranking(norms, self.gradient_norms_)
        self.coef_ = W
        self.intercept_ = fit.b - (sequential_column_sums(X) / n) @ W
        self.n_iter_ = fit.objective.size if self.lambda_ratio < 1 else 0
        self.objective_ = fit.objective
        self.duality_gap_ = fit.duality_gap
        self.diagnostics_ = {"converged": fit.converged, "n_nonzero": int(np.count_nonzero(norms)),
                             "duality_gap": fit.duality_gap}
        if not fit.converged:
            warnings.warn(
                f"ll_l21: relative duality gap {fit.duality_gap:.2g} > tol={self.tol:g} after "
                f"{self.n_iter_} iterations (max_iter={self.max_iter}, lambda_ratio={self.lambda_ratio:g}); "
                "W may not be the optimum. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return norms
