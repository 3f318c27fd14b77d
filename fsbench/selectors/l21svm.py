"""L21-SVM (Cai, Nie, Huang & Ding, ICDM 2011): multi-class hinge loss with l2,1 regularization."""

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
from fsbench.selectors.base import rank_by_scores


@register("l21svm")
class L21SVM(ReweightedSVM):
    """L21-SVM (Cai et al. 2011): multi-class hinge loss + l2,1 penalty; rank by row norm of W.

    Minimizes (the form of the SL2P paper's eq. 4, with a regularized intercept)

        J(W, b) = 1/2 ||W||_{2,1} + 1/2 ||b||^2 + C sum_k sum_i max(0, 1 - y_ik (x_i^T w_k + b_k)),

    ||W||_{2,1} = sum_v ||w^v||_2 over the rows of W (d x c), y_ik = +1 if sample i is in class
    k else -1 (``loss="crammer_singer"`` swaps in the Crammer-Singer loss). Convex.

    Iterative reweighting: ||w|| = min_{eta > 0} (||w||^2 / eta + eta) / 2, so J is the
    minimum over eta of 1/4 sum_v (||w^v||^2 / eta_v + eta_v) + ...; for fixed eta the W step
    is an l2 SVM on the features x_v sqrt(2 eta_v) (solved to a certified relative duality gap
    ``inner_tol`` by an interior-point method for n <= 400, else by LIBLINEAR with tolerance
    ``inner_tol``; ``solver`` overrides, see ``_svm``), and the eta step is eta_v = ||w^v||
    (the D_vv = 1 / (2 ||w^v||) of Cai et al. and Nie et al. 2010). eta starts at 1/2, so
    the first W step is the plain SVM with C. J never increases except by the inner gap
    (``diagnostics_``). A row that tends to zero does so geometrically and never exactly; eta
    is kept in logarithms, so such rows keep their order instead of underflowing to a tie.
    Stops when J decreases by less than ``tol * J`` or after ``max_iter`` iterations;
    ``objective_`` records J after every W step. Scores are the row norms ||w^v||, ties
    (constant features) by index.

    **Many samples** (``solver="admm"``, and ``"auto"`` for the one-vs-rest loss when the
    training part has more samples than features): the reweighting's SVM steps grow steeply in
    n (over 600 s at 5,000 x 2,000), so J is minimized directly by ADMM
    (:mod:`fsbench.selectors._l21_admm`), which stops on a duality gap: ``tol`` is then the
    certified relative gap (J - min J <= tol J), ``max_iter`` allows 250 ADMM iterations per
    step, and ``inner_tol`` is not used. ADMM's zero rows are exactly zero; they are ranked
    after the others by ||x_v^T (alpha o Y)|| at its dual point alpha, an optimal one (how near
    each is to entering the model: at most 1/2, and 1/2 on the non-zero rows). The hinge's
    optimal dual need not be unique, so that order is ADMM's choice among optimal duals (as the
    reweighting's is its path's), not a property of the problem. ``objective_`` records J at
    every check (every ten iterations); it need not decrease. ``diagnostics_["solver"]`` says
    which ran ("reweighted" or "admm"); ``crammer_singer`` has no ADMM and keeps the reweighting.
    """

    _parameter_constraints: dict = {
        **ReweightedSVM._parameter_constraints,
        # "admm" minimizes J directly (many samples); the others are the reweighting's SVM step
        "solver": [StrOptions({*METHODS, "admm"})],
    }

    def check_params(self) -> None:
        check_admm_params(self, True, "")

    def _label(self) -> str:
        return "l21svm"

    def _log_scales(self, log_eta):
        return np.log(2.0) + log_eta

    def _reweight(self, res, log_s2, log_eta, C, y):
        G = res.G  # W = diag(s^2) G, G = X^T A
        with np.errstate(divide="ignore"):
            log_norm = log_s2 + 0.5 * np.log(np.einsum("ij,ij->i", G, G))  # log ||w^v||
        l21 = float(np.exp(logsumexp(log_norm))) if np.isfinite(log_norm).any() else 0.0
        J = 0.5 * l21 + 0.5 * float(res.b @ res.b) + C * loss_value(res.F, y, self.loss)
        return J, log_norm, l21 == 0.0  # the eta step: eta_v = ||w^v||

    def _fit(self, X, y, classes):
        n, d = X.shape
        if admm_route(self, n, d):
            return self._fit_admm(X, y, classes)
        log_norm, _, _, shared = self._reweighting_loop(
            X, y, classes.size, float(self.C), np.full(d, -np.log(2.0))
        )
        with np.errstate(under="ignore"):
            scores = np.exp(log_norm)
        zero = not np.isfinite(log_norm).any()
        self.diagnostics_ = {"all_tied": bool(zero), "solver": "reweighted", **shared}
        if zero:
            warnings.warn(
                "l21svm: W = 0, every feature ties; increase C.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif not shared["converged"]:
            self._warn_not_converged()
        self.ranking_ = rank_by_scores(log_norm)
        return scores

    def _fit_admm(self, X, y, classes):
        C, tol = float(self.C), float(self.tol)
        fit = hinge_l21_admm(X, signed_labels(y, classes.size), C, 0.5, penalty="l21",
                             fit_intercept=self.fit_intercept, tol=tol,
                             max_iter=ADMM_ITERATIONS_PER_STEP * int(self.max_iter))
        self.coef_, self.intercept_ = fit.W, fit.b
        self.objective_, self.n_iter_ = fit.objective, fit.n_iter
        norms = np.sqrt(np.einsum("ij,ij->i", fit.W, fit.W))
        zero = not norms.any()
        self.diagnostics_ = {
            "all_tied": bool(zero and np.ptp(fit.dual_scores) == 0.0),
            "solver": "admm",
            "converged": fit.converged,
            "duality_gap": fit.gap,
        }
        if zero:
            warnings.warn(
                "l21svm: W = 0, no feature enters the model (the ranking follows the dual scores); "
                "increase C.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif tol > 0 and not fit.converged:
            warn_admm_not_converged("l21svm", fit, tol)
        self.ranking_ = admm_ranking(norms, fit.dual_scores)
        return norms
