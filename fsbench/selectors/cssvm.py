"""CS: the Crammer-Singer multi-class linear SVM as a feature ranker (SL2P's "CS" baseline)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._svm import METHODS, SVM_C, solve_svm
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real


@register("cssvm")
class CrammerSingerSVM(BaseSelector):
    """CS-SVM (Crammer & Singer 2001): l2-regularized multi-class linear SVM; rank by row norm of W.

    Minimizes (SL2P paper, eqs. 1-3)

        1/2 ||W||_F^2 + 1/2 ||b||^2 + C sum_i max(0, 1 - f_{i,y_i} + max_{k != y_i} f_ik),

    f_i = W^T x_i + b, with the intercept a regularized constant feature (LIBLINEAR's
    ``intercept_scaling=1`` convention). For n <= 400 samples solved by an interior-point
    method on the dual to a certified relative duality gap ``tol``; above, by LIBLINEAR's
    Crammer-Singer solver (``LinearSVC``) with tolerance ``tol`` and ``max_iter`` iterations
    (``solver`` overrides: "ip", "cd", "liblinear"; see ``_svm``). Scores are the
    row norms ||w^v||_2 of W (d x c); ``objective_`` holds the final primal value (one
    convex solve, so one entry), ``n_iter_`` the solver's steps, ``diagnostics_`` the gap.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "C": [SVM_C],
        "fit_intercept": ["boolean"],
        # a relative duality gap (LIBLINEAR: its stopping tolerance): 0 is never reached
        "tol": [real(0, 1, "neither")],
        "max_iter": [count(1, ITER_MAX)],
        "solver": [StrOptions(set(METHODS))],
    }

    def __init__(
        self,
        *,
        n_features_to_select: int = 10,
        C: float = 1.0,
        fit_intercept: bool = True,
        tol: float = 1e-8,
        max_iter: int = 2000,
        solver: str = "auto",
    ):
        super().__init__(n_features_to_select=n_features_to_select)
        self.C = C
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.solver = solver

    def _fit(self, X, y, classes):
        res = solve_svm(
            X,
            y,
            classes.size,
            float(self.C),
            loss="crammer_singer",
            fit_intercept=self.fit_intercept,
            tol=self.tol,
            max_epochs=self.max_iter,
            method=self.solver,
        )
        self.coef_ = res.W
        self.intercept_ = res.b
        self.objective_ = np.array([res.primal])
        self.n_iter_ = res.n_steps
        gap = res.gap / max(res.primal, np.finfo(float).tiny)
        self.diagnostics_ = {
            "converged": res.converged,
            "duality_gap": float(gap),
            "solver": res.method,
        }
        if not res.converged:
            warnings.warn(
                f"cssvm: relative duality gap {gap:.2g} > tol={self.tol} after "
                f"{res.n_steps} {res.method} steps.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return np.linalg.norm(res.W, axis=1)
