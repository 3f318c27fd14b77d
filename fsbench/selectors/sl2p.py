"""SL2P and SL21 (Xu, Nie & Han, IJCAI 2017): a multi-class SVM with feature scaling factors."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from fsbench.selectors import register
from fsbench.selectors._svm import LOSSES, DegenerateWeightsWarning, loss_value, solve_svm
from fsbench.selectors.base import BaseSelector, rank_by_scores


@register("sl2p")
class SL2P(BaseSelector):
    """SL2P (Xu, Nie & Han 2017): SVM with feature scales theta^(p/2), theta on the simplex.

    Minimizes, over weights W (d x c), intercepts b and theta on the simplex,

        J = 1/(2 d^(a p)) sum_v ||w^v||^2 / theta_v^p + 1/2 ||b||^2
            + C sum_k sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))                   (eq. 8)

    with y_ik = +1 if sample i is in class k else -1 (the one-vs-rest hinge of eq. 5) or, with
    ``loss="crammer_singer"``, the Crammer-Singer loss sum_i max(0, 1 - f_iy_i + max_k!=y_i f_ik)
    (eq. 2). Here W are the effective weights theta^(p/2) * W_eq5 of eq. 5, so that (eq. 5) and
    (eq. 8) are the same problem. Minimizing over theta in closed form gives (eq. 6, Theorem 1)

        J(W) = 1/(2 d^(a p)) ||W||_{2, 2/(1+p)}^2 + 1/2 ||b||^2 + C loss,

    using sum_v ||w^v||^2 / theta_v^p = (sum_v ||w^v||^(2/(1+p)))^(1+p) at the optimal theta
    (the identity behind the garbled eq. 13). p = 1 is SL21 (eq. 17, convex); p > 1 is not
    convex and the iteration finds a stationary point.

    **C scaling** (``C_scale = a``): J above equals eq. (5)/(8) with C_eff = C d^(a p),
    divided by d^(a p). ``C_scale=0`` is the paper's C. On the simplex the rescaled features
    are theta^(p/2) ~ d^(-p/2) of their size, and with the paper's C (0.1..10) and p > 1 the
    first SVM step returns numerically zero weights (measured: GLIOMA, p = 3, C = 1: the
    iteration stops after 2 steps with the loss at its W = 0 value). ``C_scale=1`` makes the
    first step a plain SVM with C but the sparse end effectively hard-margin (kernel
    condition numbers ~1e16 measured). The default ``C_scale=0.5`` (C_eff = C d^(p/2)) lies
    between and was well posed on every dataset tried; it also applies to p = 1.
    ``objective_`` records J, i.e. eq. (6) with C_eff divided by d^(a p); the intercept
    (a constant feature, regularized like LIBLINEAR's) is not scaled by theta.

    **Algorithm 1** with the errata of DESIGN.md: theta starts at 1/d (not 1/c), and each
    iteration (i) solves the SVM (eq. 14/15) on the features x_v (d^a theta_v)^(p/2) to a
    certified relative duality gap ``inner_tol`` (``solver="auto"``: an interior-point method
    for n <= 400 samples; above, LIBLINEAR with tolerance ``inner_tol``, uncertified and not
    warm-started; ``"cd"``: dual coordinate descent warm-started from the previous
    iteration; see ``_svm``), (ii) records
    J at the resulting effective weights, (iii) sets theta by eq. (12) on the *effective*
    weights, theta_v = ||w^v||^(2/(1+p)) / sum_s ||w^s||^(2/(1+p)) (computed in logarithms,
    so that no theta underflows to a tie). Each step minimizes J over its block, so J never
    increases except by the inner solver's gap: J_t <= J_{t-1} + gap_t, gap_t <= inner_tol * J_t
    (both recorded in ``diagnostics_``; a NaN gap means uncertified, LIBLINEAR). Stops when J
    decreases by less than ``tol * J`` or after ``max_iter`` iterations.

    Scores are theta (``scores_``); ``ranking_`` sorts by log theta (the same order, without
    underflowed ties), ties by index. A feature constant in the training data has theta = 0
    and ranks last. ``diagnostics_``: ``all_tied`` (every theta equal, e.g. W = 0),
    ``w_negligible`` (|x_i^T w_k| < 1e-6 for all i, k: the features play no role),
    ``n_support`` (theta_v > 1e-12), ``C_effective``, ``converged``, ``n_objective_rises``,
    ``max_objective_rise`` and ``max_inner_gap`` (both relative to J); a degenerate result
    warns with ``DegenerateWeightsWarning``; ``inner_converged`` is False (and a
    ``ConvergenceWarning`` is raised) if an SVM step ended above 100 * ``inner_tol``.
    """

    def __init__(
        self,
        n_features_to_select: int = 10,
        p: float = 2.0,
        C: float = 1.0,
        C_scale: float = 0.5,
        loss: str = "ovr",
        fit_intercept: bool = True,
        tol: float = 1e-5,
        max_iter: int = 200,
        inner_tol: float = 1e-8,
        solver: str = "auto",
    ):
        super().__init__(n_features_to_select)
        self.p = p
        self.C = C
        self.C_scale = C_scale
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.solver = solver

    def _check_params(self) -> None:
        if not self.p >= 1:
            raise ValueError(f"p must be >= 1 (the paper's range), got {self.p}")
        if not self.C > 0:
            raise ValueError(f"C must be positive, got {self.C}")
        if not self.C_scale >= 0:
            raise ValueError(f"C_scale must be >= 0, got {self.C_scale}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not (self.max_iter >= 1 and self.tol >= 0 and self.inner_tol > 0):
            raise ValueError("max_iter must be >= 1, tol >= 0 and inner_tol > 0")

    def _fit(self, X, y, classes):
        self._check_params()
        n, d = X.shape
        c = classes.size
        p, C = float(self.p), float(self.C)
        log_scale = self.C_scale * p * np.log(d)  # C_eff = C d^(a p)
        log_theta = np.full(d, -np.log(d))
        A = None
        objective, gaps, methods = [], [], set()
        converged = False
        zero_w = False
        for it in range(1, self.max_iter + 1):
            log_s2 = p * log_theta + log_scale  # features scaled by s = (d^a theta)^(p/2)
            with np.errstate(under="ignore"):
                s2 = np.exp(log_s2)
            res = solve_svm(
                X,
                y,
                c,
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
            G = res.G  # effective weights W = diag(s^2) G, G = X^T A
            with np.errstate(divide="ignore"):
                log_h = 2.0 * log_s2 + np.log(np.einsum("ij,ij->i", G, G))  # log ||w^v||^2
            e = log_h / (1.0 + p)
            lse = logsumexp(e)
            fit_term = 0.5 * float(res.b @ res.b) + C * loss_value(res.F, y, self.loss)
            if not np.isfinite(lse):  # W = 0: theta is left as it is, every feature ties
                zero_w = True
                objective.append(fit_term)
                gaps.append(res.gap / max(res.primal, np.finfo(float).tiny))
                break
            objective.append(0.5 * np.exp((1.0 + p) * lse - log_scale) + fit_term)
            gaps.append(res.gap / max(res.primal, np.finfo(float).tiny))
            log_theta = e - lse  # eq. (12) on the effective weights
            if it >= 2 and objective[-2] - objective[-1] <= self.tol * abs(objective[-1]):
                converged = True
                break
        with np.errstate(under="ignore"):
            self.coef_ = np.exp(log_s2)[:, None] * G
            theta = np.exp(log_theta)
        self.intercept_ = res.b
        self.theta_ = theta
        self.log_theta_ = log_theta
        self.objective_ = np.asarray(objective)
        self.n_iter_ = len(objective)
        obj = self.objective_
        finite_gaps = np.asarray(gaps)[np.isfinite(gaps)]  # NaN: LIBLINEAR, uncertified
        inner_ok = bool(np.all(finite_gaps <= 100 * self.inner_tol))
        rises = (obj[1:] - obj[:-1]) / np.maximum(np.abs(obj[1:]), np.finfo(float).tiny)
        positive = log_theta[np.isfinite(log_theta)]
        all_tied = zero_w or bool(positive.size > 1 and np.ptp(positive) == 0.0)
        w_negligible = zero_w or bool(np.abs(res.F - res.b).max(initial=0.0) < 1e-6)
        self.diagnostics_ = {
            "all_tied": bool(all_tied),
            "w_negligible": bool(w_negligible),
            "n_support": int(np.sum(theta > 1e-12)),
            "C_effective": float(C * np.exp(log_scale)),
            "converged": bool(converged),
            "n_objective_rises": int(np.sum(rises > 0)),
            "max_objective_rise": float(max(rises.max(initial=0.0), 0.0)),
            "max_inner_gap": float(np.max(gaps)),
            "inner_converged": inner_ok,
            "inner_solver": ",".join(sorted(methods)),
        }
        if not inner_ok:
            warnings.warn(
                f"{type(self).__name__}: an SVM step stopped at a relative duality gap of "
                f"{np.nanmax(gaps):.2g} (inner_tol={self.inner_tol}, a nearly singular kernel); "
                "the objective may rise by as much.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if all_tied or w_negligible:
            warnings.warn(
                f"{type(self).__name__}: the SVM weights are "
                f"{'zero or all tied' if all_tied else 'negligible (|x^T w| < 1e-6)'} "
                f"(p={p}, C={C}, C_effective={C * np.exp(log_scale):.3g}); the ranking is not "
                "informative. Increase C or C_scale.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif not converged:
            warnings.warn(
                f"{type(self).__name__} did not converge in {self.max_iter} iterations "
                f"(tol={self.tol}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.ranking_ = rank_by_scores(log_theta)
        return theta


@register("sl21")
class SL21(SL2P):
    """SL21 (Xu, Nie & Han 2017): SL2P with p = 1, i.e. 1/2 ||W||_{2,1}^2 + C hinge (eq. 17).

    Identical to ``SL2P(p=1)``, including the C scaling (C_eff = C d^(C_scale / 2)); see
    :class:`SL2P` for the objective, algorithm, stopping rule and diagnostics.
    """

    p = 1.0  # fixed; not a parameter of this class

    def __init__(
        self,
        n_features_to_select: int = 10,
        C: float = 1.0,
        C_scale: float = 0.5,
        loss: str = "ovr",
        fit_intercept: bool = True,
        tol: float = 1e-5,
        max_iter: int = 200,
        inner_tol: float = 1e-8,
        solver: str = "auto",
    ):
        BaseSelector.__init__(self, n_features_to_select)
        self.C = C
        self.C_scale = C_scale
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.solver = solver
