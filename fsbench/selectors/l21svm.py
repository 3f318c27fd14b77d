"""L21-SVM (Cai, Nie, Huang & Ding, ICDM 2011): multi-class hinge loss with l2,1 regularization."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp

from fsbench.selectors import register
from fsbench.selectors._svm import DegenerateWeightsWarning, ReweightedSVM, loss_value
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
    """

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
        d = X.shape[1]
        log_norm, _, _, shared = self._reweighting_loop(
            X, y, classes.size, float(self.C), np.full(d, -np.log(2.0))
        )
        with np.errstate(under="ignore"):
            scores = np.exp(log_norm)
        zero = not np.isfinite(log_norm).any()
        self.diagnostics_ = {"all_tied": bool(zero), **shared}
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
