"""L1-SVM (Bradley & Mangasarian 1998): an l1-regularized linear SVM, one-vs-rest.

Two solvers of the same problem, each to a certified relative duality gap:
:func:`solve_l1_sqhinge` (proximal Newton with exact LARS subproblems, built for d >> n) and
:func:`solve_l1_sqhinge_lbfgsb` (L-BFGS-B on the split variables, then an exact step on the
support, built for many samples and margin violators). ``benchmarks/large_n.md`` measures them
side by side.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from fsbench.selectors import register
from fsbench.selectors._svm import SVM_C, signed_labels
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real

_MAX_BACKTRACKS = 40
_CONTINUATION_START = 1.0  # in units of z-scored features, fsbench's protocol
#: the largest C of the regularization path, C * path_factor^path_steps: 1e12 (measured on a
#: 45 x 12 problem: the Newton method stops converging from C = 1e8 on and takes no step at 1e20)
_PATH_C_MAX = 1e12
#: L-BFGS-B iterations per Newton step of ``max_iter`` (the n > d solver's budget), and how often
#: the duality gap is computed
_LBFGSB_PER_STEP = 100
_GAP_EVERY = 10
#: the exact step on the support is tried once the relative gap is below this, and again only
#: after the gap has fallen tenfold since the last try
_EXACT_FROM = 1e-3
SOLVERS = ("auto", "lars", "lbfgsb")
#: auto's rule, per one-vs-rest problem: L-BFGS-B when s min(s, d + 1) > _LARS_WORK_RATIO n and
#: n >= (d + 1) / _LBFGSB_MAX_WIDTH, with s the margin violators at the start. A LARS-Newton step
#: costs about |S| (d + 1) |A| (a homotopy over the violators S to the support A, and |A| stays near
#: |S|: measured 0.85-0.97 |S| on ISOLET, SEMEION, UMIST and make_classification), some 10-20 steps;
#: an L-BFGS-B iteration costs 2 n (d + 1), some 500-3,700 of them. Measured per problem at C = 1
#: (CPU s, LARS / L-BFGS-B): ISOLET's training part (4,678 x 617, 26 classes, s 400-500) 1.7 / 10.5,
#: 1.2 / 9.7; UMIST (345 x 644, s 145) 0.17 / 0.28; make_classification 1,000 x 1,000 (s 390)
#: 3.7 / 0.26, 4.5 / 0.68, 300 x 1,000 (s 247) 0.65 / 0.14. With far more features than samples
#: L-BFGS-B needs many more iterations (whole fits: 200 x 10,000: 6.8 s / 32 s; 100 x 1,000:
#: 0.70 / 0.82; 200 x 1,000: 1.9 / 0.8). benchmarks/large_n.md has the whole fits side by side.
_LARS_WORK_RATIO = 100.0
_LBFGSB_MAX_WIDTH = 5


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


def _lasso_by_lars(A: np.ndarray, b: np.ndarray, alpha: float, max_steps: int, *,
                   first_cap: int | None = None) -> np.ndarray:
    """argmin_t ||b - A t||^2 / (2 n) + alpha ||t||_1 by scikit-learn's ``lars_path``.

    ``lars_path`` allocates its Cholesky buffer for min(max_iter, d) active features: (d + 1)^2
    values at d = 100,000 with the cap of ``max_steps`` (74.5 GiB). The active set never exceeds
    min(n, d), so the path is first run with room for 2 min(n, d) + 50 steps, and the cap is
    doubled (up to ``max_steps``) only if the path stopped at it before reaching ``alpha``: the
    same path, so the same solution, with a buffer that grows with the samples, not the features.
    """
    cap = min(max_steps, 2 * min(A.shape) + 50 if first_cap is None else first_cap)
    while True:
        alpha_end, _, coef, n_iter = lars_path(A, b, alpha_min=alpha, method="lasso", return_path=False,
                                               max_iter=cap, return_n_iter=True)
        if n_iter < cap or cap >= max_steps or float(np.max(alpha_end)) <= alpha:
            return coef
        cap = min(max_steps, 2 * cap)


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
                target = _lasso_by_lars(Z[S], y[S], 1.0 / (2.0 * C * S.size), 100 * m)
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


def _certificate(Z: np.ndarray, y: np.ndarray, theta: np.ndarray, C: float) -> tuple[float, float, np.ndarray]:
    """(primal value, relative duality gap, margins r) at theta: the bound of :func:`_dual_value`."""
    r = np.maximum(0.0, 1.0 - y * (Z @ theta))
    g = -2.0 * C * (Z.T @ (y * r))
    P = float(np.abs(theta).sum() + C * (r @ r))
    return P, (P - _dual_value(r, g, C)) / max(P, np.finfo(float).tiny), r


def _exact_support_step(Z: np.ndarray, y: np.ndarray, theta: np.ndarray, r: np.ndarray, C: float) -> np.ndarray | None:
    """The optimum if theta has the optimum's support, signs and margin violators.

    On the support A with signs s and the violators S (r > 0) the objective is the quadratic
    s^T t + C ||y_S - Z_SA t||^2, whose stationary point solves
    (Z_SA^T Z_SA) t = Z_SA^T y_S - s / (2 C). None when that system is singular; the caller keeps
    the point only if its certificate passes.
    """
    A = np.flatnonzero(theta)
    S = np.flatnonzero(r > 0)
    if A.size == 0 or S.size == 0:
        return None
    ZSA = Z[np.ix_(S, A)]
    rhs = ZSA.T @ y[S] - np.sign(theta[A]) / (2.0 * C)
    try:
        t = cho_solve(cho_factor(ZSA.T @ ZSA), rhs)
    except LinAlgError:
        return None
    if not np.all(np.isfinite(t)):
        return None
    out = np.zeros_like(theta)
    out[A] = t
    return out


def solve_l1_sqhinge_lbfgsb(
    Z: np.ndarray,
    y: np.ndarray,
    C: float,
    theta0: np.ndarray | None = None,
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> tuple[np.ndarray, int, float]:
    """The problem of :func:`solve_l1_sqhinge` by L-BFGS-B on split variables, for many samples.

    With theta = u - v, u, v >= 0, the objective sum(u + v) + C sum_i max(0, 1 - y_i z_i^T (u - v))^2
    is differentiable (the squared hinge is C^1) under simple bounds, and equals the original one
    where u and v do not overlap, as at every minimizer; scipy's L-BFGS-B solves it with one
    product by Z and one by Z^T per evaluation, O(n d), so the cost grows with n like the data
    rather than like LARS's homotopy over the margin violators. Every ``_GAP_EVERY`` iterations
    the relative duality gap of :func:`_dual_value` is computed at theta = u - v; once it is
    below ``_EXACT_FROM``, the stationary point on the current support, signs and violators
    (:func:`_exact_support_step`, one linear solve) is tried and kept when its certificate
    passes ``tol``. Stops when the gap is at most ``tol``, or after ``_LBFGSB_PER_STEP`` *
    ``max_iter`` L-BFGS-B iterations (restarted with a fresh memory when L-BFGS-B stops on its
    own before). Returns (theta, L-BFGS-B iterations, relative gap) of the point of smallest gap.
    """
    n, m = Z.shape
    theta = np.zeros(m) if theta0 is None else np.array(theta0, dtype=float)
    budget = _LBFGSB_PER_STEP * max_iter
    P, gap, r = _certificate(Z, y, theta, C)
    best = (gap, theta.copy())
    state = {"iterations": 0, "exact_gap": np.inf}

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        f = Z @ (x[:m] - x[m:])
        rr = np.maximum(0.0, 1.0 - y * f)
        g = -2.0 * C * (Z.T @ (y * rr))
        return float(x.sum() + C * (rr @ rr)), np.concatenate([1.0 + g, 1.0 - g])

    def check(th: np.ndarray) -> bool:
        """Records th (and the exact step from it) if certified better; True once within tol."""
        nonlocal best
        _, gap_th, r_th = _certificate(Z, y, th, C)
        if gap_th < best[0]:
            best = (gap_th, th.copy())
        if gap_th <= _EXACT_FROM and gap_th <= state["exact_gap"] / 10.0 and best[0] > tol:
            state["exact_gap"] = gap_th
            exact = _exact_support_step(Z, y, th, r_th, C)
            if exact is not None:
                gap_exact = _certificate(Z, y, exact, C)[1]
                if gap_exact < best[0]:
                    best = (gap_exact, exact)
        return best[0] <= tol

    def callback(intermediate_result) -> None:
        state["iterations"] += 1
        if state["iterations"] % _GAP_EVERY == 0 or state["iterations"] >= budget:
            x = intermediate_result.x
            if check(x[:m] - x[m:]):
                raise StopIteration

    if gap > tol and not check(theta):
        x = np.concatenate([np.maximum(theta, 0.0), np.maximum(-theta, 0.0)])
        while state["iterations"] < budget and best[0] > tol:
            before = state["iterations"]
            result = minimize(objective, x, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (2 * m),
                              callback=callback,
                              options={"maxiter": budget - before, "maxfun": 4 * budget, "ftol": 0.0, "gtol": 0.0})
            x = result.x
            if best[0] > tol:
                check(x[:m] - x[m:])
            if state["iterations"] == before:  # no step left at this precision
                break
    return best[1], state["iterations"], best[0]


@register("l1svm")
class L1SVM(BaseSelector):
    """L1-SVM: l1-regularized one-vs-rest linear SVM; rank by row norm of W, zero weights by path.

    For each class k (one-vs-rest, y_ik = +1 in class k, else -1; with two classes one
    problem, class 1 against class 0) minimizes

        ||w_k||_1 + |b_k| + C sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))^2,

    the squared hinge with an l1-penalized intercept: the problem of LIBLINEAR's l1-regularized
    SVM (scikit-learn ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``), here
    solved to a certified relative duality gap ``tol`` per class by ``solver``:

    - ``"lars"``: a proximal Newton method with exact LARS subproblems
      (:func:`solve_l1_sqhinge`), at most ``max_iter`` Newton steps. Each step's homotopy runs
      over the margin violators, so its cost grows steeply with n (about n^1.9 at d = 1,000);
    - ``"lbfgsb"``: L-BFGS-B on the split variables, finished by an exact step on the support
      (:func:`solve_l1_sqhinge_lbfgsb`), at most 100 ``max_iter`` iterations, O(n d) each;
    - ``"auto"`` (default): per one-vs-rest problem, by their predicted work: with s the margin
      violators at the start, ``"lbfgsb"`` when s min(s, d + 1) > 100 n and d + 1 <= 5 n, else ``"lars"``
      (``_LARS_WORK_RATIO``; ``benchmarks/large_n.md``: on ISOLET's 4,678 x 617 training part LARS
      is 6x the faster, on make_classification at 1,000 x 1,000 L-BFGS-B is 7-14x; at large C,
      near the hard margin, few samples violate it and LARS runs). Both reach the same optimum to
      ``tol``; the rows record which ran at C (``diagnostics_["solver"]``: ``lars``, ``lbfgsb`` or
      ``lars+lbfgsb`` when the classes differ). On sparse data LIBLINEAR solves the problem
      whatever ``solver`` says (the sparse route of ``fit_sparse``).

    The start is a rough l2-regularized SVM (20 dual
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
    ``duality_gap`` (the largest relative gap over the classes at C), ``solver`` (those that
    ran at C). ``objective_`` holds the objective at C (sum over the classes), ``n_iter_`` the largest
    number of Newton steps (L-BFGS-B iterations) over the classes at C.
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
        "solver": [StrOptions(set(SOLVERS))],
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
        solver: str = "auto",
    ):
        super().__init__(n_features_to_select=n_features_to_select)
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.path_factor = path_factor
        self.path_steps = path_steps
        self.full_path = full_path
        self.solver = solver

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

    def _solver_for(self, Z: np.ndarray, y: np.ndarray, theta0: np.ndarray) -> str:
        """The solver of one problem from ``theta0``: ``solver``, or auto's rule (``_LARS_WORK_RATIO``)."""
        if self.solver != "auto":
            return self.solver
        n, m = Z.shape
        violators = int(np.count_nonzero(y * (Z @ theta0) < 1.0))
        if m > _LBFGSB_MAX_WIDTH * n or violators * min(violators, m) <= _LARS_WORK_RATIO * n:
            return "lars"
        return "lbfgsb"

    def _svm(self, Z, Y, C, Theta0, tol=None):
        """Every one-vs-rest problem at C: (Theta (d + 1, c), max steps, max relative gap); the
        solvers that ran are in ``self._solvers_``."""
        Theta = np.zeros((Z.shape[1], Y.shape[1]))
        steps, gaps = [], []
        self._solvers_ = set()
        for k in range(Y.shape[1]):
            solver = self._solver_for(Z, Y[:, k], Theta0[:, k])
            self._solvers_.add(solver)
            solve = solve_l1_sqhinge_lbfgsb if solver == "lbfgsb" else solve_l1_sqhinge
            Theta[:, k], it, gap = solve(
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
        solvers = "+".join(sorted(self._solvers_))
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
            "solver": solvers,
        }
        if not converged:
            warnings.warn(
                f"l1svm: relative duality gap {gap:.2g} > tol={self.tol} (solver {solvers}, "
                f"max_iter={self.max_iter}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        return norms
