"""L1-SVM (Bradley & Mangasarian 1998): an l1-regularized linear SVM, one-vs-rest."""

from __future__ import annotations

import math
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError

from fsbench.selectors import register
from fsbench.selectors._svm import SVM_C, signed_labels
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real

_MAX_BACKTRACKS = 40
_CONTINUATION_START = 1.0  # in units of z-scored features, fsbench's protocol
#: the largest C of the regularization path, C * path_factor^path_steps: 1e12 (measured on a
#: 45 x 12 problem: the Newton method stops converging from C = 1e8 on and takes no step at 1e20)
_PATH_C_MAX = 1e12


def l1_sqhinge_objective(Z: np.ndarray, y: np.ndarray, theta: np.ndarray, C: float) -> float:
    """||theta||_1 + C sum_i max(0, 1 - y_i z_i^T theta)^2 (the intercept is a column of Z)."""
    r = np.maximum(0.0, 1.0 - y * (Z @ theta))
    return float(np.abs(theta).sum() + C * (r @ r))


def _dual_value(r: np.ndarray, g: np.ndarray, C: float) -> float:
    """The best dual value on the ray s * alpha, alpha = 2 C max(0, 1 - y f) (the primal guess).

    Dual of the problem: max_{a >= 0} sum(a) - ||a||^2 / (4 C) s.t. ||Z^T (a * y)||_inf <= 1.
    Z^T (alpha * y) = -g, so s <= 1 / ||g||_inf keeps the point feasible.
    """
    alpha_sum, alpha_sq = 2.0 * C * r.sum(), 4.0 * C * C * (r @ r)
    if alpha_sq == 0.0:
        return 0.0
    s = alpha_sum * 2.0 * C / alpha_sq
    gmax = np.abs(g).max(initial=0.0)
    if gmax > 0.0:
        s = min(s, 1.0 / gmax)
    return s * alpha_sum - s * s * alpha_sq / (4.0 * C)


def solve_l1_sqhinge(
    Z: np.ndarray,
    y: np.ndarray,
    C: float,
    theta0: np.ndarray | None = None,
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> tuple[np.ndarray, int, float]:
    """min_theta ||theta||_1 + C sum_i max(0, 1 - y_i z_i^T theta)^2, y_i in {-1, +1}.

    A proximal Newton method with the generalized Hessian. With S the samples of positive
    slack at theta, the loss is C ||y_S - Z_S theta||^2 near theta (y_i^2 = 1), so the
    proximal Newton subproblem is the lasso min ||t||_1 + C ||y_S - Z_S t||^2, solved exactly
    by LARS (scikit-learn's ``lars_path``: a finite homotopy, not slowed down by the
    ill-conditioning that makes coordinate descent crawl on this problem); a backtracking
    line search on the true objective from theta towards the lasso solution follows. Once S
    is that of the optimum, one step is exact. A warm start (``theta0``) with a small S
    makes the first lassos cheap.

    Stops when the relative duality gap (P - D) / P <= ``tol``, D the dual value of the
    scaled primal guess (see :func:`_dual_value`): the returned objective is certified within
    ``tol`` (relative) of the optimum. Returns (theta, iterations, relative gap).
    """
    n, m = Z.shape
    theta = np.zeros(m) if theta0 is None else np.array(theta0, dtype=float)
    f = Z @ theta
    gap = np.inf
    for it in range(max_iter + 1):
        r = np.maximum(0.0, 1.0 - y * f)
        S = np.flatnonzero(r > 0)
        g = -2.0 * C * (Z[S].T @ (y[S] * r[S]))
        P = float(np.abs(theta).sum() + C * (r @ r))
        gap = (P - _dual_value(r, g, C)) / max(P, np.finfo(float).tiny)
        if gap <= tol or it == max_iter:
            break
        target = np.zeros(m)
        if S.size:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # LARS on degenerate columns
                # lars_path minimizes ||y - Z t||^2 / (2 |S|) + alpha ||t||_1
                _, _, target = lars_path(
                    Z[S],
                    y[S],
                    alpha_min=1.0 / (2.0 * C * S.size),
                    method="lasso",
                    return_path=False,
                    max_iter=100 * m,
                )
        step = target - theta
        Zstep = Z @ step
        t, moved = 1.0, False
        for _ in range(_MAX_BACKTRACKS):
            f_new = f + t * Zstep
            r_new = np.maximum(0.0, 1.0 - y * f_new)
            if np.abs(theta + t * step).sum() + C * (r_new @ r_new) < P:
                theta, f, moved = theta + t * step, f_new, True
                break
            t *= 0.5
        if not moved:  # no decrease left at this precision
            break
    return theta, it, gap


@register("l1svm")
class L1SVM(BaseSelector):
    """L1-SVM: l1-regularized one-vs-rest linear SVM; rank by row norm of W, zero weights by path.

    For each class k (one-vs-rest, y_ik = +1 in class k, else -1; with two classes one
    problem, class 1 against class 0) minimizes

        ||w_k||_1 + |b_k| + C sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))^2,

    the squared hinge with an l1-penalized intercept: the problem of LIBLINEAR's l1-regularized
    SVM (scikit-learn ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``), here
    solved by a proximal Newton method with exact LARS subproblems
    (:func:`solve_l1_sqhinge`) to a certified relative duality gap ``tol`` per class, at most
    ``max_iter`` Newton steps. The start is a rough l2-regularized SVM (20 dual
    coordinate-descent epochs of LIBLINEAR at min(C, 1)), which only sets where the Newton
    method starts (a good first set of margin violators), not where it ends. For C > 1 the
    fit at C is reached by continuation: C' = 1, 2, 4, ... < C, each solved to a relative gap
    max(``tol``, 1e-3) and warm-starting the next (measured on ISOLET, C = 100: from the rough
    start directly, 30 Newton steps left the gap at 0.95; by continuation 21 steps in all reach
    1e-10). Scores are the row norms ||w^v||_2 of W (d x c).

    Features with zero weight at C are not left in index order. They are ordered by when they
    enter along a regularization path of increasing C: C * ``path_factor``^j for
    j = 1..``path_steps``, each point warm-started from the previous one; a feature that
    first becomes non-zero at step j ranks after every feature non-zero at step j - 1 and,
    within step j, by its row norm there. Features still zero at the end of the path are
    ordered by how close they are to entering: the largest |d loss / d w_vk| over classes at
    the last path point (a zero weight stays zero exactly while that gradient is at most 1),
    then by index. The path stops early once no feature is zero or, unless ``full_path``,
    once at least ``n_features_to_select`` features have entered: the first
    ``n_features_to_select`` places of the ranking are then those of the full path, and only
    the order further down (by the gradient test) can differ.

    ``diagnostics_``: ``n_nonzero`` (at C), ``n_entered_on_path``, ``n_never_entered``,
    ``path_points`` (fits after the one at C), ``converged`` (every class at C reached the
    gap ``tol``; a warning if not), ``path_converged`` (the same along the path) and
    ``duality_gap`` (the largest relative gap over the classes at C). ``objective_`` holds the
    objective at C (sum over the classes), ``n_iter_`` the largest number of Newton steps
    over the classes at C.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "C": [SVM_C],
        # a relative duality gap: 0 is never certified in floating point
        "tol": [real(0, 1, "neither")],
        "max_iter": [count(1, ITER_MAX)],
        # each path point multiplies C by path_factor (> 1); with path_steps they must keep
        # the path's last C below _PATH_C_MAX (check_params)
        "path_factor": [real(1, 1000, "right")],
        "path_steps": [count(0, 100)],
        "full_path": ["boolean"],
    }

    def __init__(
        self,
        *,
        n_features_to_select: int = 10,
        C: float = 1.0,
        tol: float = 1e-6,
        max_iter: int = 100,
        path_factor: float = 2.0,
        path_steps: int = 6,
        full_path: bool = False,
    ):
        super().__init__(n_features_to_select=n_features_to_select)
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.path_factor = path_factor
        self.path_steps = path_steps
        self.full_path = full_path

    def check_params(self) -> None:
        if self.path_steps == 0:
            self._reject_unused("full_path", "path_steps >= 1")
            self._reject_unused("path_factor", "path_steps >= 1")
        last = math.log10(self.C) + self.path_steps * math.log10(self.path_factor)
        if last > math.log10(_PATH_C_MAX):
            raise InvalidParameterError(
                f"the regularization path would end at C * path_factor^path_steps = "
                f"{self.C:g} * {self.path_factor:g}^{self.path_steps} ~ 10^{last:.1f}, above "
                f"{_PATH_C_MAX:g}; lower path_steps, path_factor or C.")

    def _svm(self, Z, Y, C, Theta0, tol=None):
        """Every one-vs-rest problem at C: (Theta (d + 1, c), max steps, max relative gap)."""
        Theta = np.zeros((Z.shape[1], Y.shape[1]))
        steps, gaps = [], []
        for k in range(Y.shape[1]):
            Theta[:, k], it, gap = solve_l1_sqhinge(
                Z, Y[:, k], C, Theta0[:, k], tol=self.tol if tol is None else tol, max_iter=self.max_iter
            )
            steps.append(it)
            gaps.append(gap)
        return Theta, max(steps), max(gaps)

    @staticmethod
    def _rough_l2_svm(X, y, C):
        """A start for the Newton method: 20 epochs of LIBLINEAR's l2 SVM, (d + 1, c)."""
        # fixed seed: LIBLINEAR shuffles, and the start should not depend on numpy's global state
        est = LinearSVC(C=C, loss="squared_hinge", dual=True, max_iter=20, tol=1e-2, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, y)
        return np.vstack([est.coef_.T, est.intercept_[None, :]])

    def _fit(self, X, y, classes):
        n, d = X.shape
        c = classes.size
        Y = signed_labels(y, c) if c > 2 else signed_labels(y, 2)[:, 1:]
        Z = np.hstack([X, np.ones((n, 1))])  # the intercept as a penalized constant feature
        C = float(self.C)
        # continuation for C > 1: from a far start the Newton steps are short when C is large
        # (nearly hard margin); each doubling of C moves the solution little
        Cj = min(C, _CONTINUATION_START)
        Theta = self._rough_l2_svm(X, y, Cj)
        while Cj < C:
            Theta = self._svm(Z, Y, Cj, Theta, tol=max(self.tol, 1e-3))[0]
            Cj = min(2.0 * Cj, C)
        Theta, n_iter, gap = self._svm(Z, Y, C, Theta)
        W, b = Theta[:d], Theta[d]
        norms = np.linalg.norm(W, axis=1)
        self.coef_, self.intercept_, self.n_iter_ = W, b, n_iter
        margin = np.maximum(0.0, 1.0 - Y * (X @ W + b))
        self.objective_ = np.array([np.abs(Theta).sum() + C * np.sum(margin**2)])
        converged = gap <= self.tol

        never_code = self.path_steps + 1
        stage = np.where(norms > 0, 0, never_code)  # 0: non-zero at C; steps + 1: never
        key2 = norms.copy()  # within a stage: norm at entry (or closeness to entry), larger first
        Cj, Thetaj = C, Theta
        path_converged, points = True, 0
        enough = d if self.full_path else min(d, self.n_features_to_select)
        for j in range(1, self.path_steps + 1):
            if not np.any(stage == never_code) or np.sum(stage < never_code) >= enough:
                break
            Cj *= self.path_factor
            Thetaj, _, gap_j = self._svm(Z, Y, Cj, Thetaj)
            points += 1
            path_converged &= gap_j <= self.tol
            nj = np.linalg.norm(Thetaj[:d], axis=1)
            entering = (stage == never_code) & (nj > 0)
            stage[entering] = j
            key2[entering] = nj[entering]
        never = stage == never_code
        if never.any():
            # d/dw_vk of Cj sum_i max(0, 1 - y_ik f_ik)^2 at the last path point
            marg = np.maximum(0.0, 1.0 - Y * (Z @ Thetaj))
            grad = -2.0 * Cj * (X.T @ (Y * marg))
            key2[never] = np.abs(grad[never]).max(axis=1)
        self.ranking_ = np.lexsort((np.arange(d), -key2, stage))
        self.diagnostics_ = {
            "n_nonzero": int(np.sum(stage == 0)),
            "n_entered_on_path": int(np.sum((stage > 0) & ~never)),
            "n_never_entered": int(np.sum(never)),
            "path_points": points,
            "converged": bool(converged),
            "path_converged": bool(path_converged),
            "duality_gap": float(gap),
        }
        if not converged:
            warnings.warn(
                f"l1svm: relative duality gap {gap:.2g} > tol={self.tol} (max_iter="
                f"{self.max_iter} Newton steps).",
                ConvergenceWarning,
                stacklevel=3,
            )
        return norms
