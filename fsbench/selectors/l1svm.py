"""L1-SVM (Bradley & Mangasarian 1998): an l1-regularized linear SVM, one-vs-rest."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from fsbench.selectors import register
from fsbench.selectors._svm import signed_labels
from fsbench.selectors.base import BaseSelector


@register("l1svm")
class L1SVM(BaseSelector):
    """L1-SVM: l1-regularized one-vs-rest linear SVM; rank by row norm of W, zero weights by path.

    For each class k (one-vs-rest, y_ik = +1 in class k, else -1) LIBLINEAR minimizes

        ||w_k||_1 + |b_k| + C sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))^2,

    the squared hinge, because LIBLINEAR's l1 penalty exists only with that loss (scikit-learn
    ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``; the intercept is a constant
    feature and is penalized too). Scores are the row norms ||w^v||_2 of W (d x c).

    Features with zero weight at C are not left in index order. They are ordered by when they
    enter along a regularization path of increasing C: C * ``path_factor``^j for
    j = 1..``path_steps``; a feature that first becomes non-zero at step j ranks after every
    feature non-zero at step j - 1 and, within step j, by its row norm there. Features still
    zero at the end of the path are ordered by how close they are to entering: the largest
    |d loss / d w_vk| over classes at the last path point (a zero weight stays zero exactly
    while that gradient is at most 1), then by index. The path stops early once no feature
    is zero. ``diagnostics_``: ``n_nonzero`` (at C), ``n_entered_on_path``, ``n_never_entered``,
    ``converged`` (the fit at C; a warning if not) and ``path_converged`` (LIBLINEAR often
    stops at ``max_iter`` at the large-C end of the path, which only blurs the entry order).
    ``objective_`` holds the objective at C (sum over the c classes), ``n_iter_`` LIBLINEAR's
    iteration count.
    """

    def __init__(
        self,
        n_features_to_select: int = 10,
        C: float = 1.0,
        tol: float = 1e-4,
        max_iter: int = 10000,
        path_factor: float = 2.0,
        path_steps: int = 6,
        random_state=None,
    ):
        super().__init__(n_features_to_select)
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.path_factor = path_factor
        self.path_steps = path_steps
        self.random_state = random_state

    def _svm(self, X, y, C):
        est = LinearSVC(
            penalty="l1",
            loss="squared_hinge",
            dual=False,
            C=C,
            tol=self.tol,
            max_iter=self.max_iter,
            random_state=self.random_state,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            est.fit(X, y)
        converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        # (d, c) weights; with two classes LIBLINEAR fits one classifier (class 1 vs class 0)
        return est.coef_.T, est.intercept_, int(np.max(est.n_iter_)), converged

    def _fit(self, X, y, classes):
        if not (self.C > 0 and self.path_factor > 1 and self.path_steps >= 0):
            raise ValueError("need C > 0, path_factor > 1 and path_steps >= 0")
        d = X.shape[1]
        c = classes.size
        W, b, n_iter, converged = self._svm(X, y, float(self.C))
        norms = np.linalg.norm(W, axis=1)
        self.coef_, self.intercept_, self.n_iter_ = W, b, n_iter
        Y = signed_labels(y, c) if c > 2 else signed_labels(y, 2)[:, 1:]
        margin = np.maximum(0.0, 1.0 - Y * (X @ W + b))
        self.objective_ = np.array([np.abs(W).sum() + np.abs(b).sum() + self.C * np.sum(margin**2)])

        stage = np.where(norms > 0, 0, self.path_steps + 1)  # 0: non-zero at C; steps+1: never
        key2 = norms.copy()  # within a stage: norm at entry (or closeness to entry), larger first
        Cj, Wj, bj = float(self.C), W, b
        path_converged = True
        for j in range(1, self.path_steps + 1):
            if not np.any(stage > j - 1):
                break
            Cj *= self.path_factor
            Wj, bj, _, ok = self._svm(X, y, Cj)
            path_converged &= ok
            nj = np.linalg.norm(Wj, axis=1)
            entering = (stage == self.path_steps + 1) & (nj > 0)
            stage[entering] = j
            key2[entering] = nj[entering]
        never = stage == self.path_steps + 1
        if never.any():
            # d/dw_vk of C sum_i max(0, 1 - y_ik f_ik)^2 at the last path point
            marg = np.maximum(0.0, 1.0 - Y * (X @ Wj + bj))
            grad = -2.0 * Cj * (X.T @ (Y * marg))
            key2[never] = np.abs(grad[never]).max(axis=1)
        self.ranking_ = np.lexsort((np.arange(d), -key2, stage))
        self.diagnostics_ = {
            "n_nonzero": int(np.sum(stage == 0)),
            "n_entered_on_path": int(np.sum((stage > 0) & ~never)),
            "n_never_entered": int(np.sum(never)),
            "converged": bool(converged),
            "path_converged": bool(path_converged),
        }
        if not converged:
            warnings.warn(
                f"l1svm: LIBLINEAR did not converge (tol={self.tol}, max_iter={self.max_iter}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        return norms
