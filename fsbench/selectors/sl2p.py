"""SL2P and SL21 (Xu, Nie & Han, IJCAI 2017): a multi-class SVM with feature scaling factors."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._l21_admm import (
    ADMM_ITERATIONS_PER_STEP,
    admm_ranking,
    admm_route,
    check_admm_params,
    hinge_l21_admm,
    warn_admm_not_converged,
)
from fsbench.selectors._svm import METHODS, DegenerateWeightsWarning, ReweightedSVM, loss_value, signed_labels
from fsbench.selectors.base import rank_by_scores, real


@register("sl2p")
class SL2P(ReweightedSVM):
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

    **Many samples, p = 1** (``solver="admm"``, and ``"auto"`` for the one-vs-rest loss when the
    training part has more samples than features): SL21's J, 1/(2 d^a) ||W||_{2,1}^2 + 1/2 ||b||^2
    + C loss, is convex and is minimized directly by ADMM (:mod:`fsbench.selectors._l21_admm`),
    which stops on a duality gap: ``tol`` is then the certified relative gap (J - min J <= tol J),
    ``max_iter`` allows 250 ADMM iterations per step, and ``inner_tol`` is not used. theta is
    eq. (12) at ADMM's W. Its zero rows are exactly zero and are ranked after the others by
    ||x_v^T (alpha o Y)|| at ADMM's dual point alpha, an optimal one (how near each is to
    entering the model; the hinge's optimal dual need not be unique, so the order is ADMM's
    choice among optimal duals). ``objective_`` records J at every check (every ten
    iterations); it need not decrease. ``diagnostics_`` then holds ``solver`` ("admm"; else
    "reweighted"), ``converged``, ``duality_gap``, ``all_tied``, ``w_negligible``,
    ``n_support`` and ``C_effective``. p > 1 (not convex) and ``crammer_singer`` keep the
    reweighting.
    """

    _parameter_constraints: dict = {
        **ReweightedSVM._parameter_constraints,
        # p >= 1 (the paper's range; p = 1 is SL21), up to 8: the first SVM step sees the
        # features scaled by d^(-p/4) (C_scale 0.5), and above p = 8 its weights are negligible
        # (measured: 20 x 60, p = 10; p = 8 already sends most theta below 1e-308)
        "p": [real(1, 8, "both")],
        # 0 (the paper's C) to 1 (C_eff = C d^p: already hard-margin at the sparse end, kernel
        # condition numbers ~1e16); beyond, the fit degrades (measured on 45 x 12: C_scale 2
        # drops an informative feature from the top 3, 1e10 gives negligible weights)
        "C_scale": [real(0, 1, "both")],
        # "admm" minimizes J directly when p = 1 (many samples); the others are the
        # reweighting's SVM step
        "solver": [StrOptions({*METHODS, "admm"})],
    }

    def __init__(
        self,
        *,
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
        super().__init__(
            n_features_to_select=n_features_to_select, C=C, loss=loss, fit_intercept=fit_intercept,
            tol=tol, max_iter=max_iter, inner_tol=inner_tol, solver=solver,
        )
        self.p = p
        self.C_scale = C_scale

    def check_params(self) -> None:
        check_admm_params(self, float(self.p) == 1.0, "p = 1, SL21")

    def _log_scale(self, d: int) -> float:
        return self.C_scale * float(self.p) * np.log(d)  # C_eff = C d^(a p)

    def _log_scales(self, log_theta):
        # features scaled by s = (d^a theta)^(p/2)
        return float(self.p) * log_theta + self._log_scale(log_theta.size)

    def _reweight(self, res, log_s2, log_theta, C, y):
        p = float(self.p)
        G = res.G  # effective weights W = diag(s^2) G, G = X^T A
        with np.errstate(divide="ignore"):
            log_h = 2.0 * log_s2 + np.log(np.einsum("ij,ij->i", G, G))  # log ||w^v||^2
        e = log_h / (1.0 + p)
        lse = logsumexp(e)
        fit_term = 0.5 * float(res.b @ res.b) + C * loss_value(res.F, y, self.loss)
        if not np.isfinite(lse):  # W = 0: theta is left as it is, every feature ties
            return fit_term, log_theta, True
        J = 0.5 * np.exp((1.0 + p) * lse - self._log_scale(log_theta.size)) + fit_term
        return J, e - lse, False  # eq. (12) on the effective weights

    def _fit(self, X, y, classes):
        n, d = X.shape
        p, C = float(self.p), float(self.C)
        log_scale = self._log_scale(d)
        if admm_route(self, n, d, convex=p == 1.0):
            return self._fit_admm(X, y, classes, C, log_scale)
        log_theta, res, zero_w, shared = self._reweighting_loop(
            X, y, classes.size, C, np.full(d, -np.log(d))
        )
        with np.errstate(under="ignore"):
            theta = np.exp(log_theta)
        self.theta_ = theta
        self.log_theta_ = log_theta
        positive = log_theta[np.isfinite(log_theta)]
        all_tied = zero_w or bool(positive.size > 1 and np.ptp(positive) == 0.0)
        w_negligible = zero_w or bool(np.abs(res.F - res.b).max(initial=0.0) < 1e-6)
        self.diagnostics_ = {
            "all_tied": bool(all_tied),
            "w_negligible": bool(w_negligible),
            "n_support": int(np.sum(theta > 1e-12)),
            "C_effective": float(C * np.exp(log_scale)),
            "solver": "reweighted",
            **shared,
        }
        if all_tied or w_negligible:
            warnings.warn(
                f"{type(self).__name__}: the SVM weights are "
                f"{'zero or all tied' if all_tied else 'negligible (|x^T w| < 1e-6)'} "
                f"(p={p}, C={C}, C_effective={C * np.exp(log_scale):.3g}); the ranking is not "
                "informative. Increase C or C_scale.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif not shared["converged"]:
            self._warn_not_converged()
        self.ranking_ = rank_by_scores(log_theta)
        return theta

    def _fit_admm(self, X, y, classes, C, log_scale):
        tol = float(self.tol)
        fit = hinge_l21_admm(X, signed_labels(y, classes.size), C, float(np.exp(-log_scale)),
                             penalty="l21_squared", fit_intercept=self.fit_intercept, tol=tol,
                             max_iter=ADMM_ITERATIONS_PER_STEP * int(self.max_iter))
        self.coef_, self.intercept_ = fit.W, fit.b
        self.objective_, self.n_iter_ = fit.objective, fit.n_iter
        norms = np.sqrt(np.einsum("ij,ij->i", fit.W, fit.W))
        total = norms.sum()
        with np.errstate(divide="ignore"):
            log_theta = np.log(norms) - np.log(total) if total > 0 else np.full(norms.size, -np.log(norms.size))
        theta = np.exp(log_theta)
        self.theta_, self.log_theta_ = theta, log_theta
        zero = total == 0.0
        w_negligible = zero or bool(np.abs(X @ fit.W).max(initial=0.0) < 1e-6)
        self.diagnostics_ = {
            "all_tied": bool(zero and np.ptp(fit.dual_scores) == 0.0),
            "w_negligible": w_negligible,
            "n_support": int(np.sum(theta > 1e-12)) if not zero else 0,
            "C_effective": float(C * np.exp(log_scale)),
            "solver": "admm",
            "converged": fit.converged,
            "duality_gap": fit.gap,
        }
        if w_negligible:
            warnings.warn(
                f"{type(self).__name__}: the SVM weights are "
                f"{'zero (the ranking follows the dual scores)' if zero else 'negligible (|x^T w| < 1e-6)'} "
                f"(p=1, C={C}, C_effective={C * np.exp(log_scale):.3g}); the ranking is not "
                "informative. Increase C or C_scale.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif tol > 0 and not fit.converged:
            warn_admm_not_converged(type(self).__name__, fit, tol)
        self.ranking_ = admm_ranking(norms, fit.dual_scores)
        return theta


@register("sl21")
class SL21(SL2P):
    """SL21 (Xu, Nie & Han 2017): SL2P with p = 1, i.e. 1/2 ||W||_{2,1}^2 + C hinge (eq. 17).

    Identical to ``SL2P(p=1)``, including the C scaling (C_eff = C d^(C_scale / 2)); see
    :class:`SL2P` for the objective, algorithm, stopping rule and diagnostics.
    """

    _parameter_constraints: dict = {k: v for k, v in SL2P._parameter_constraints.items() if k != "p"}

    def __init__(
        self,
        *,
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
        # p is fixed at 1 and is not a parameter of this class
        super().__init__(
            n_features_to_select=n_features_to_select, p=1.0, C=C, C_scale=C_scale, loss=loss,
            fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, inner_tol=inner_tol, solver=solver,
        )
