"""L21-SVM (Cai, Nie, Huang & Ding, ICDM 2011): multi-class hinge loss with l2,1 regularization."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning

from fsbench.selectors import register
from fsbench.selectors._svm import LOSSES, DegenerateWeightsWarning, loss_value, solve_svm
from fsbench.selectors.base import BaseSelector, rank_by_scores


@register("l21svm")
class L21SVM(BaseSelector):
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

    def __init__(
        self,
        n_features_to_select: int = 10,
        C: float = 1.0,
        loss: str = "ovr",
        fit_intercept: bool = True,
        tol: float = 1e-5,
        max_iter: int = 200,
        inner_tol: float = 1e-8,
        solver: str = "auto",
    ):
        super().__init__(n_features_to_select)
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.solver = solver

    def _fit(self, X, y, classes):
        if not self.C > 0:
            raise ValueError(f"C must be positive, got {self.C}")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        n, d = X.shape
        C = float(self.C)
        log_eta = np.full(d, -np.log(2.0))
        A = None
        objective, gaps, methods = [], [], set()
        converged = False
        for it in range(1, self.max_iter + 1):
            log_s2 = np.log(2.0) + log_eta
            with np.errstate(under="ignore"):
                s2 = np.exp(log_s2)
            res = solve_svm(
                X,
                y,
                classes.size,
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
            G = res.G  # W = diag(s^2) G, G = X^T A
            with np.errstate(divide="ignore"):
                log_norm = log_s2 + 0.5 * np.log(np.einsum("ij,ij->i", G, G))  # log ||w^v||
            l21 = float(np.exp(logsumexp(log_norm))) if np.isfinite(log_norm).any() else 0.0
            objective.append(
                0.5 * l21 + 0.5 * float(res.b @ res.b) + C * loss_value(res.F, y, self.loss)
            )
            gaps.append(res.gap / max(res.primal, np.finfo(float).tiny))
            if l21 == 0.0:
                break
            log_eta = log_norm
            if it >= 2 and objective[-2] - objective[-1] <= self.tol * abs(objective[-1]):
                converged = True
                break
        with np.errstate(under="ignore"):
            self.coef_ = np.exp(log_s2)[:, None] * G
            scores = np.exp(log_norm)
        self.intercept_ = res.b
        self.objective_ = np.asarray(objective)
        self.n_iter_ = len(objective)
        obj = self.objective_
        finite_gaps = np.asarray(gaps)[np.isfinite(gaps)]  # NaN: LIBLINEAR, uncertified
        inner_ok = bool(np.all(finite_gaps <= 100 * self.inner_tol))
        rises = (obj[1:] - obj[:-1]) / np.maximum(np.abs(obj[1:]), np.finfo(float).tiny)
        zero = not np.isfinite(log_norm).any()
        self.diagnostics_ = {
            "all_tied": bool(zero),
            "converged": bool(converged),
            "n_objective_rises": int(np.sum(rises > 0)),
            "max_objective_rise": float(max(rises.max(initial=0.0), 0.0)),
            "max_inner_gap": float(np.max(gaps)),
            "inner_converged": inner_ok,
            "inner_solver": ",".join(sorted(methods)),
        }
        if not inner_ok:
            warnings.warn(
                f"l21svm: an SVM step stopped at a relative duality gap of "
                f"{np.nanmax(gaps):.2g} (inner_tol={self.inner_tol}, a nearly singular kernel); "
                "the objective may rise by as much.",
                ConvergenceWarning,
                stacklevel=3,
            )
        if zero:
            warnings.warn(
                "l21svm: W = 0, every feature ties; increase C.",
                DegenerateWeightsWarning,
                stacklevel=3,
            )
        elif not converged:
            warnings.warn(
                f"l21svm did not converge in {self.max_iter} iterations (tol={self.tol}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.ranking_ = rank_by_scores(log_norm)
        return scores
