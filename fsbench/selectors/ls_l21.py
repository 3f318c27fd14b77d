"""LS-l2,1: least squares on one-hot labels with an l2,1 penalty (the multi-task lasso).

Obozinski, Taskar & Jordan, "Joint covariate selection and joint subspace selection for multiple
classification problems", Statistics and Computing 20(2), 2010; Liu, Ji & Ye, "Multi-task feature
learning via efficient l2,1-norm minimization", UAI 2009 (their least-squares loss, SLEP's
``mcLeastR``). The helpers here (duplicate columns, fixed-order norms, the ranking of the rows
that the penalty sets to zero) are shared with :mod:`fsbench.selectors.ll_l21`.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import MultiTaskLasso

from fsbench.fixed_order import column_sums, linear_kernel
from fsbench.selectors import register
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real

#: the smallest penalty a ``*_ratio`` parameter may ask for, as a fraction of the one that zeros
#: every row: glmnet's default end of the regularization path for n >= d (1e-4). Below it, for
#: d > n, the fit only approaches the unpenalized limit (on the microarray data the number of
#: non-zero rows has stopped growing near n long before: 107 at 0.01 on GLIOMA, 50 x 4434), while
#: coordinate descent needs ever more sweeps (ALLAML: 270 at 0.1, 5,800 at 0.01; GLIOMA: 15,000 at
#: 0.001, 82,000 at 1e-4, 88 s); the proximal gradient of ll_l21 is less affected (GLIOMA: 750
#: iterations at 1e-4).
RATIO_MIN = 1e-4
#: a parameter ``*_ratio`` in [RATIO_MIN, 1]: 1 is the penalty at which every row is zero (the fit is
#: then W = 0 in closed form and the ranking that of the gradient at W = 0); above 1 nothing changes
L21_RATIO = real(RATIO_MIN, 1, "both")


def one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    """The (n, c) class indicator matrix: T[i, y_i] = 1, every other entry 0."""
    T = np.zeros((y.size, n_classes))
    T[np.arange(y.size), y] = 1.0
    return T


def sequential_column_sums(A: np.ndarray) -> np.ndarray:
    """:func:`fsbench.fixed_order.column_sums` bit for bit (each column summed in row order, one
    rounding per addition), by adding row after row when there are at most 1,000 rows: for a few
    dozen samples and thousands of features that is 15 times faster than the prefix sum (50 x 4434:
    0.08 ms against 1.3 ms)."""
    A = np.asarray(A, dtype=np.float64)
    if A.shape[0] > 1000 or A.shape[0] == 0:
        return column_sums(A)
    total = A[0].copy()
    for row in A[1:]:
        total += row
    return total


def fixed_row_norms(A: np.ndarray) -> np.ndarray:
    """||a_j||_2 of each row of A (d, c): the squares summed over the columns in column order
    (:func:`sequential_column_sums`), so rows equal bit for bit get norms equal bit for bit
    on every machine."""
    A = np.asarray(A, dtype=float)
    return np.sqrt(sequential_column_sums((A * A).T))


def centered_columns(X: np.ndarray) -> np.ndarray:
    """X minus its column means (summed in row order); a column whose entries are all equal becomes
    exactly 0, whatever the rounding of its mean."""
    n = X.shape[0]
    Xc = X - sequential_column_sums(X) / n
    Xc[:, np.all(X == X[:1], axis=0)] = 0.0
    return Xc


class ColumnGroups(NamedTuple):
    """Columns of X grouped by exact equality (:func:`duplicate_columns`)."""

    #: index of the first column of each group, ascending: X[:, keep] has no two equal columns
    keep: np.ndarray
    #: (d,) the group of each column, an index into ``keep``
    group: np.ndarray
    #: (len(keep),) the number of columns in each group
    size: np.ndarray


def duplicate_columns(X: np.ndarray) -> ColumnGroups:
    """Group the columns of X that are equal entry for entry (0.0 and -0.0 count as equal).

    Each column gets a key, its entries weighted by fixed weights and summed in row order
    (:func:`sequential_column_sums`), so equal columns get equal keys; only columns whose
    keys collide are compared entry by entry. Costs one pass over X (np.unique over the columns
    costs 10 to 50 times as much).
    """
    n, d = X.shape
    weights = np.sqrt(np.arange(2.0, n + 2.0))  # fixed, distinct and not rationally related
    if n <= 1000:  # sequential_column_sums(X * weights) without the n x d product
        key, term = X[0] * weights[0], np.empty(d)
        for row, w in zip(X[1:], weights[1:], strict=True):
            key += np.multiply(row, w, out=term)
    else:
        key = column_sums(X * weights[:, None])
    sorted_key = np.sort(key)
    if not np.any(sorted_key[1:] == sorted_key[:-1]):  # no two keys equal: no two columns equal
        every = np.arange(d)
        return ColumnGroups(every, every, np.ones(d, dtype=np.intp))
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    start = np.r_[0, np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1]
    length = np.diff(np.r_[start, d])
    group = np.arange(d)
    for s, m in zip(start[length > 1], length[length > 1], strict=True):
        members = np.sort(order[s:s + m])  # columns with one key: split by exact equality
        while members.size > 1:
            same = np.all(X[:, members[1:]] == X[:, members[:1]], axis=0)
            group[members[1:][same]] = members[0]
            members = members[1:][~same]
    keep = np.flatnonzero(group == np.arange(d))
    position = np.searchsorted(keep, group)
    return ColumnGroups(keep, position, np.bincount(position, minlength=keep.size))


def split_duplicates(W_kept: np.ndarray, groups: ColumnGroups) -> np.ndarray:
    """The rows of the full W from those of the fit on X[:, keep]: each of m equal columns gets 1/m
    of its group's row. With an l2,1 penalty that is an optimum of the full problem (the loss sees
    only the sum of the m rows, and the penalty of m parallel rows is the norm of their sum), the
    one of least Frobenius norm, and it gives the m columns equal rows, so they tie exactly."""
    if groups.keep.size == groups.group.size:
        return W_kept
    return W_kept[groups.group] / groups.size[groups.group, None]


def gradient_row_norms(X: np.ndarray, R: np.ndarray, scale: float) -> np.ndarray:
    """||x_j^T R||_2 / scale for every column x_j of X (n, d), R (n, c); every sum in a fixed order
    (:func:`fsbench.fixed_order.linear_kernel`, over samples in order, then over columns of R in
    order), so equal columns of X get norms equal bit for bit on every machine. The kernel is
    built as (c, d), the same sums as its transpose, with contiguous rows of d (9 times faster)."""
    return fixed_row_norms(linear_kernel(R.T, X.T).T / scale)


def l21_ranking(norms: np.ndarray, entry: np.ndarray) -> np.ndarray:
    """Non-zero rows first by decreasing norm, then the zero rows by decreasing ``entry`` (the norm
    of the loss gradient: how close each is to entering); equal values by index."""
    nonzero, zero = np.flatnonzero(norms != 0), np.flatnonzero(norms == 0)
    return np.concatenate([nonzero[np.argsort(-norms[nonzero], kind="stable")],
                           zero[np.argsort(-entry[zero], kind="stable")]])


@register("ls_l21")
class LSL21(BaseSelector):
    """LS-l2,1: least squares on one-hot labels + alpha ||W||_{2,1} (multi-task lasso); rank by row norm.

    Minimizes over W (d x c) and an unpenalized intercept b (c,)

        J(W, b) = 1 / (2n) ||Y - X W - 1 b^T||_F^2 + alpha ||W||_{2,1},   ||W||_{2,1} = sum_j ||w_j||_2,

    Y the one-hot class indicators (n x c, one column per class, also with two classes), which is
    exactly scikit-learn's ``MultiTaskLasso`` problem; it is solved by ``MultiTaskLasso(alpha,
    fit_intercept=True, tol, max_iter)`` (cyclic coordinate descent over the rows, stopping when
    its duality gap is at most ``tol * ||Y - mean(Y)||_F^2``; in units of J, at most
    ``2 tol`` times J(0, mean(Y)), the value at W = 0). The equation is that of Obozinski, Taskar
    & Jordan (2010) and of Liu, Ji & Ye (UAI 2009, least-squares loss).

    The penalty is given relative to the data: alpha = ``alpha_ratio`` * alpha_max, with

        alpha_max = max_j ||x_j^T Y_c||_2 / n   (x_j the centred column j, Y_c the centred Y),

    the smallest alpha at which W = 0 is the solution (the gradient of the loss at W = 0 and the
    optimal b = mean(Y) is -X_c^T Y_c / n, and W = 0 is optimal iff each of its rows has norm at
    most alpha). An absolute alpha would mean a different sparsity on every dataset; a ratio
    means the same place on each dataset's path. ``alpha_ratio`` = 1 gives W = 0 without a fit.
    The default 0.1 keeps, on the five microarray sets of the papers (z-scored), 36 (ALLAML) to 78
    (Brain_Tumor_2) non-zero rows in 150 to 270 sweeps; smaller ratios add few rows (their number
    saturates near n: 107 rows at 0.01 on GLIOMA, 50 x 4434) at 3 to 30 times the cost. The
    default tol = 1e-6 gives there the first 200 places of the ranking of a fit to tol = 1e-11
    (sklearn's default 1e-4 leaves one row more or less non-zero at small ratios).

    Scores are the row norms ||w_j||_2 (equal norms by index). Features whose row is zero tie at 0;
    they are ranked after every non-zero row by ||x_j^T R||_2 / n, R = Y - X W - 1 b^T the residual
    at the solution: the norm of the loss gradient for row j, at most alpha for a zero row, the one
    that leaves zero first as alpha decreases from the fitted value (the next to enter along the
    path); then by index. Columns of X equal entry for entry are fitted as one column whose row is
    split equally between them (:func:`split_duplicates`: an optimum as well, the one of least
    norm), so duplicated features get equal rows and tie exactly, the lower index first; without
    duplicates the fit is ``MultiTaskLasso`` on X itself, coefficient for coefficient. The norms and
    the gradient norms are summed in a fixed order (:mod:`fsbench.fixed_order`), so exact ties
    (duplicated features, constant features: gradient 0, ranked last) stay exact on every machine.

    Fitted attributes: ``coef_`` (d, c) = W, ``intercept_`` (c,), ``scores_`` = ||w_j||_2,
    ``alpha_max_``, ``alpha_`` = alpha_ratio * alpha_max_, ``gradient_norms_`` (d,) =
    ||x_j^T R||_2 / n, ``n_iter_`` (coordinate descent sweeps), ``objective_`` (one value: J at the
    solution), ``diagnostics_`` = {"converged", "n_nonzero", "duality_gap" (relative to J)}; a
    ConvergenceWarning when ``max_iter`` sweeps end the fit before its gap reaches ``tol``.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # a fraction of alpha_max: see RATIO_MIN and L21_RATIO for the bounds
        "alpha_ratio": [L21_RATIO],
        # MultiTaskLasso's tolerance on the duality gap, relative to ||Y_c||_F^2: 0 is never
        # certified in floating point (the fit would run max_iter sweeps), 1 certifies W = 0
        "tol": [real(0, 1, "neither")],
        # coordinate descent sweeps, at tol 1e-6: ALLAML takes 5,800 at alpha_ratio 0.01, GLIOMA
        # 82,000 at the smallest ratio, 1e-4 (SRBCT 65,000): the default cap covers the range
        "max_iter": [count(1, ITER_MAX)],
    }

    def __init__(self, *, n_features_to_select: int = 10, alpha_ratio: float = 0.1, tol: float = 1e-6,
                 max_iter: int = 100_000):
        super().__init__(n_features_to_select=n_features_to_select)
        self.alpha_ratio = alpha_ratio
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, X, y, classes):
        n, d = X.shape
        c = classes.size
        Y = one_hot(y, c)
        Yc = Y - column_sums(Y) / n
        # n times the loss gradient at W = 0 (with the optimal b), up to its sign: X_c^T Y_c = X^T Y_c,
        # Y_c's columns summing to 0 (to rounding); computed as (c, d), BLAS's faster layout
        G0t = Yc.T @ X
        self.alpha_max_ = float(np.sqrt(np.einsum("kj,kj->j", G0t, G0t)).max() / n)
        alpha = float(self.alpha_ratio) * self.alpha_max_
        self.alpha_ = alpha
        converged, n_iter, gap = True, 0, 0.0
        if self.alpha_ratio >= 1 or self.alpha_max_ == 0.0:
            # alpha >= alpha_max: W = 0 is the solution (every feature constant: alpha_max = 0)
            W, b = np.zeros((d, c)), column_sums(Y) / n
        else:
            groups = duplicate_columns(X)
            Xk = X if groups.keep.size == d else X[:, groups.keep]
            model = MultiTaskLasso(alpha=alpha, fit_intercept=True, tol=float(self.tol), max_iter=int(self.max_iter))
            # X was checked for NaN and infinity by fit: MultiTaskLasso need not scan it again
            with warnings.catch_warnings(record=True) as caught, config_context(assume_finite=True):
                warnings.simplefilter("always", ConvergenceWarning)
                model.fit(Xk, Y)
            converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
            for w in caught:  # any other warning goes on as it came
                if not issubclass(w.category, ConvergenceWarning):
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            W, b = split_duplicates(model.coef_.T, groups), model.intercept_
            n_iter, gap = int(model.n_iter_), float(model.dual_gap_)
        rows = np.flatnonzero(np.any(W != 0, axis=1))
        R = Y - X[:, rows] @ W[rows] - b  # its columns sum to 0 (to rounding): x_j^T R = (x_j - mean)^T R
        objective = float(np.vdot(R, R) / (2 * n) + alpha * np.sqrt(np.einsum("ij,ij->i", W, W)).sum())
        norms = fixed_row_norms(W)
        G = linear_kernel(R.T, X.T).T / n
        # a constant column x_j = a 1 has gradient a 1^T R / n = 0 in exact arithmetic (R's columns sum
        # to 0), in floating point a rounding error far below 1e-10 |a| sum_i |r_i| / n: only columns
        # with a gradient that small are checked for being constant (a = X[0, j]), and get exactly 0
        bound = 1e-10 * np.abs(X[0])[:, None] * (np.abs(R).sum(axis=0) / n)
        small = np.flatnonzero(np.all(np.abs(G) <= bound, axis=1))
        G[small[np.all(X[:, small] == X[:1, small], axis=0)]] = 0.0
        self.gradient_norms_ = fixed_row_norms(G)
        self.ranking_ = l21_ranking(norms, self.gradient_norms_)
        self.coef_, self.intercept_ = W, b
        self.n_iter_, self.objective_ = n_iter, np.array([objective])
        self.diagnostics_ = {"converged": converged, "n_nonzero": int(np.count_nonzero(norms)),
                             "duality_gap": gap / objective if objective > 0 else 0.0}
        if not converged:
            warnings.warn(
                f"ls_l21: duality gap {gap:.2g} above tol * ||Y_c||^2 / n after max_iter={self.max_iter} "
                f"coordinate descent sweeps (alpha_ratio={self.alpha_ratio:g}); W may not be the optimum. "
                "Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return norms
