"""SVM-RFE: recursive feature elimination with a linear SVM (Guyon, Weston, Barnhill & Vapnik,
Machine Learning 46, 2002)."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from fsbench.selectors import register
from fsbench.selectors.base import COUNT_MAX, RANDOM_STATE, BaseSelector, StrictInterval, real

#: LIBLINEAR's settings (scikit-learn's defaults): stopping tolerance of the dual coordinate descent
#: and its cap on passes over the samples
SVM_TOL = 1e-4
SVM_MAX_ITER = 1000


def linear_svm(C: float, random_state: int | np.random.RandomState | None) -> LinearSVC:
    """The SVM of every elimination step: hinge loss, l2 penalty, solved in the dual by LIBLINEAR."""
    return LinearSVC(C=C, loss="hinge", penalty="l2", dual=True, tol=SVM_TOL, max_iter=SVM_MAX_ITER,
                     random_state=random_state)


def step_size(step: float, n_features: int) -> int:
    """Features removed per iteration: ``step`` itself when it is at least 1, else
    max(1, int(step * n_features)) -- a fraction of the features the elimination starts from,
    as scikit-learn's ``RFE``."""
    return int(max(1, step * n_features)) if 0.0 < step < 1.0 else int(step)


@register("rfe")
class SVMRFE(BaseSelector):
    """SVM-RFE: refit a linear SVM, drop the features of smallest squared weight; rank by reverse elimination.

    Guyon et al. (2002): train a linear SVM on the surviving features, compute the ranking criterion
    c_j = sum_k w_kj^2 (w_k the weight vector of the one-vs-rest SVM of class k, one vector for two
    classes: the multi-class extension of Guyon et al., and scikit-learn's ``RFE`` with the importance
    of ``coef_`` squared), remove the ``step`` features of smallest c_j, and repeat until one feature
    is left. The ranking is the reverse order of elimination: the last survivor first, then the
    features removed in the last iteration, and so on; within one iteration, the removed features by
    decreasing c_j.

    The elimination is scikit-learn's ``RFE(LinearSVC(...), n_features_to_select=1, step=step)``
    step for step: the same fits on the same columns (the surviving features in index order), the
    same number removed per iteration, the same order of removal (the stable ascending sort of c_j:
    among equal c_j the lower index goes first). ``step`` is scikit-learn's: an int removes that many
    features per iteration; a float in (0, 1) removes max(1, int(step * n_features)) per iteration,
    a fraction of the features the elimination starts from (a constant chunk, not a fraction of the
    survivors as when Guyon et al. halve them). So the features removed together in iteration i are
    those with ``RFE.ranking_ == n_iterations + 2 - i``, and for every k the first k features of the
    ranking are the support of ``RFE(n_features_to_select=k)`` (unless two c_j tie at its boundary).
    One difference: a constant column is set to 0 first. On fsbench's z-scored data it is 0
    already; on raw data a constant non-zero column would act as a second intercept (LIBLINEAR's
    intercept is a penalized constant feature) and get weight.

    Ties: the ranking is exactly the reverse of the removal order, so among equal criteria the higher
    index ranks first (the reverse of scikit-learn's stable removal). Duplicated features get equal
    weights from LIBLINEAR and tie exactly; constant features (weight 0) come last.

    The SVM: ``LinearSVC(C, loss="hinge", penalty="l2", dual=True, tol=1e-4, max_iter=1000,
    random_state)``, i.e. LIBLINEAR's dual coordinate descent for
    min 1/2 (||w||^2 + b^2) + C sum_i max(0, 1 - y_i (w^T x_i + b)) per class (the intercept b is
    penalized, unlike in Guyon's SVM), stopped when the projected gradient's spread is below ``tol``
    or after ``max_iter`` passes, the samples visited in an order drawn from ``random_state`` (fsbench
    passes the task seed). The weights' last bits depend on the data, C, the seed and the compiled
    LIBLINEAR code (its own loops, no BLAS), not on the CPU's BLAS kernel; c_j is a sum over classes in
    class order. Verified on GLIOMA: the same ranking bit for bit under OpenBLAS's Haswell, SkylakeX and
    Katmai kernels and with numpy's AVX2 and AVX-512 loops switched off. On the z-scored microarray
    sets the SVM separates the classes with a hard margin (with all features of SRBCT or GLIOMA the
    weights are identical for C = 0.01 and C = 1, not for C = 0.001), so C matters only when it is
    small.

    Cost (one core, measured): 11 fits with the default ``step=0.1``, the first on all features;
    0.15-0.8 s on GLIOMA, ALLAML, MLL and Brain_Tumor_2 and 2 s on SRBCT (83 x 2,308), whose
    samples are linearly dependent (X X^T has an eigenvalue of 2e-12), so that LIBLINEAR's dual stops
    at ``max_iter`` in 8 of the 11 fits (two to three times as long on a loaded machine). A smaller
    ``step`` refines the order near the top at a proportional cost (``step=0.01``: 100 fits). The
    same fits as scikit-learn's ``RFE``, without its final refit on the survivor.

    ``diagnostics_``: ``rfe_n_fits`` and ``rfe_n_unconverged`` (fits that stopped at ``max_iter``; one
    warning if any). ``scores_``: the reversed rank (best = n_features), as the ranking is not a sort
    of one criterion.
    """

    # step: at least one feature per iteration; a float step must be a fraction (as in scikit-learn:
    # in (0, 1)), an integer step at most the largest count (it is capped at the features left)
    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "step": [StrictInterval(Integral, 1, COUNT_MAX, closed="both"), real(0, 1, "neither")],
        # C of the linear SVM: from 1e-8 to 1e8, as fsbench's other SVM selectors: beyond, the SVM is
        # numerically hard-margin (and LIBLINEAR's dual slows down) or its weights underflow to ties
        "C": [real(1e-8, 1e8, "both")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10, step: int | float = 0.1, C: float = 1.0,
                 random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.step = step
        self.C = C
        self.random_state = random_state

    def _fit(self, X, y, classes):
        d = X.shape[1]
        step = step_size(self.step, d)
        # LIBLINEAR penalizes the intercept as a constant feature of value 1: a constant non-zero
        # column would share its role and its weight; as 0 it gets none (z-scored data: already 0)
        constant = np.ptp(X, axis=0) == 0
        if constant.any():
            X = X.copy()
            X[:, constant] = 0.0
        svm = linear_svm(float(self.C), self.random_state)
        survivors = np.arange(d)
        removed: list[np.ndarray] = []
        fits = unconverged = 0
        # the data are checked (finite) and the parameters valid: scikit-learn need not check them again
        with warnings.catch_warnings(), config_context(assume_finite=True, skip_parameter_validation=True):
            warnings.simplefilter("ignore", ConvergenceWarning)  # counted below
            while survivors.size > 1:
                fitted = clone(svm).fit(X[:, survivors], y)
                fits += 1
                unconverged += int(np.max(fitted.n_iter_) >= SVM_MAX_ITER)
                criterion = np.square(fitted.coef_).sum(axis=0)
                order = np.argsort(criterion, kind="stable")
                cut = min(step, survivors.size - 1)
                removed.append(survivors[order[:cut]])
                survivors = np.sort(survivors[order[cut:]])
        # the last survivor, then each iteration's removed features, last iteration first, each
        # iteration's in the reverse of its removal order
        self.ranking_ = np.concatenate([survivors] + [r[::-1] for r in removed[::-1]])
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        self.diagnostics_ = {"rfe_n_fits": fits, "rfe_n_unconverged": unconverged}
        if unconverged:
            warnings.warn(f"rfe: {unconverged} of {fits} linear SVM fits reached max_iter={SVM_MAX_ITER} "
                          f"before tol={SVM_TOL}.", ConvergenceWarning, stacklevel=3)
        return scores
