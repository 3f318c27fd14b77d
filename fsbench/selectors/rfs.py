"""RFS: feature selection by joint l2,1-norm minimization (Nie, Huang, Cai & Ding, NIPS 2010)."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from fsbench.selectors import register
from fsbench.selectors.base import ITER_MAX, BaseSelector, count, real


def label_matrix(y: np.ndarray, n_classes: int, coding: str) -> np.ndarray:
    """Class indicator matrix (n, c): ``"onehot"`` gives 1/0 entries, ``"pm1"`` gives +1/-1."""
    if coding not in ("onehot", "pm1"):
        raise ValueError(f"label_coding must be 'onehot' or 'pm1', got {coding!r}")
    off = 0.0 if coding == "onehot" else -1.0
    Y = np.full((y.size, n_classes), off)
    Y[np.arange(y.size), y] = 1.0
    return Y


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", A, A))


def _spd_solve(K: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve K Z = B for symmetric positive semi-definite K; least squares if K is singular."""
    try:
        return linalg.cho_solve(linalg.cho_factor(K, lower=False, check_finite=False), B,
                                check_finite=False)
    except linalg.LinAlgError:
        return linalg.lstsq(K, B, check_finite=False)[0]


def rfs_objective(X: np.ndarray, Y: np.ndarray, W: np.ndarray, gamma: float) -> float:
    """J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} (eq. 10 with X samples x features)."""
    return float(_row_norms(X @ W - Y).sum() + gamma * _row_norms(W).sum())


#: A row of W whose share pi_j ||x_j||^2 of the trace of X diag(pi_w) X^T is below this can be
#: left out of the iteration's linear system (rfs_fit does once a tenth of the rows can): its
#: terms lie below the system's rounding error (2e-16) even summed over a million such rows. Its
#: own update w^j = pi_j x_j^T Lambda still runs, so its decay, which orders the tail of the
#: ranking, is that of the full system.
NEGLIGIBLE_ROW_SHARE = 1e-24


class RFSStep(NamedTuple):
    """One iteration: the new W (d, c) and E (n, c), its dual point Lam (n, c) and X^T Lam (d, c)."""

    W: np.ndarray
    E: np.ndarray
    Lam: np.ndarray
    XtLam: np.ndarray


class RFSFit(NamedTuple):
    """The result of :func:`rfs_fit`."""

    #: (d, c), the last iterate
    W: np.ndarray
    #: J after each iteration
    objective: np.ndarray
    #: the lower bound D(Lambda_t) on min J from each iteration's dual point
    dual_bound: np.ndarray
    #: (J(W) - D) / D for the returned W and the best bound D: (J(W) - min J) / min J <= this
    duality_gap: float
    #: whether the stopping rule fired before max_iter (stop="gap": duality_gap <= tol)
    converged: bool
    #: (d,) ||x_j^T Lambda|| / gamma at the last dual point (ADMM's fits; None from Algorithm 1)
    dual_scores: np.ndarray | None = None


def rfs_step_samples(X: np.ndarray, Y: np.ndarray, gamma: float, pi_w: np.ndarray,
                     pi_e: np.ndarray, rows: np.ndarray | None = None,
                     out: np.ndarray | None = None) -> RFSStep:
    """One iteration of Algorithm 1 in its n x n form.

    With A = [X, gamma I] and U = [W; E] (A U = Y), Algorithm 1 sets
    U = D^-1 A^T (A D^-1 A^T)^-1 Y with D^-1 = diag(2 ||u^i||); the factor 2 cancels, so with
    pi = ||u^i|| (the previous row norms) and
    K = A diag(pi) A^T = X diag(pi_w) X^T + gamma^2 diag(pi_e):
    W = diag(pi_w) X^T Lam and E = gamma diag(pi_e) Lam with Lam = K^-1 Y, the dual point of
    :func:`rfs_fit`'s stopping rule. A zero row has pi = 0 and stays zero (the footnote's first
    remedy: only D^-1 is needed). ``rows`` (indices) builds K from those rows of W only, the
    others having negligible weights (:data:`NEGLIGIBLE_ROW_SHARE`); every row is still updated.
    ``out`` is an optional (n, d) buffer, used when ``rows`` is None.
    """
    if rows is None:
        Xs = np.multiply(X, np.sqrt(pi_w), out=out)
    else:
        Xs = X[:, rows] * np.sqrt(pi_w[rows])
    K = Xs @ Xs.T
    K[np.diag_indices_from(K)] += gamma**2 * pi_e
    Lam = _spd_solve(K, Y)
    XtLam = X.T @ Lam
    return RFSStep(pi_w[:, None] * XtLam, (gamma * pi_e)[:, None] * Lam, Lam, XtLam)


def rfs_step_features(X: np.ndarray, Y: np.ndarray, gamma: float, pi_w: np.ndarray,
                      pi_e: np.ndarray, rows: np.ndarray | None = None) -> RFSStep:
    """The same iteration solved as a d x d system (for more samples than features).

    Derivation: the n x n update is the minimizer of Tr(U^T D U) subject to A U = Y. Eliminating
    E = (Y - X W) / gamma, it minimizes sum_j ||w^j||^2 / pi_w_j + sum_i ||y_i - x_i W||^2 / r_i
    with r_i = gamma^2 pi_e_i = gamma ||y_i - x_i W_prev||, whose normal equations are
    (X^T R^-1 X + diag(1/pi_w)) W = X^T R^-1 Y. Substituting W = diag(pi_w)^(1/2) Omega gives
    the symmetric positive definite d x d system
    (diag(pi_w)^(1/2) X^T R^-1 X diag(pi_w)^(1/2) + I) Omega = diag(pi_w)^(1/2) X^T R^-1 Y,
    in which a zero row of W (pi_w = 0) stays zero. It needs every residual row non-zero
    (pi_e > 0); the push-through identity P X^T (X P X^T + R)^-1 = (P X^T R^-1 X + I)^-1 P X^T R^-1
    shows it equals :func:`rfs_step_samples`. Its dual point is Lam = R^-1 (Y - X W), the n x n
    form's K^-1 Y (there E = gamma diag(pi_e) Lam). The normal equations read
    W = diag(pi_w) X^T Lam; with ``rows`` the system holds those rows of W only and every other
    row is set by that identity.
    """
    Xr = X if rows is None else X[:, rows]
    s = np.sqrt(pi_w if rows is None else pi_w[rows])
    r = gamma**2 * pi_e
    Z = (Xr * s) / np.sqrt(r)[:, None]
    M = Z.T @ Z
    M[np.diag_indices_from(M)] += 1.0
    B = s[:, None] * (Xr.T @ (Y / r[:, None]))
    W_rows = s[:, None] * _spd_solve(M, B)
    residual = Y - Xr @ W_rows
    Lam = residual / r[:, None]
    XtLam = X.T @ Lam
    if rows is None:
        W = W_rows
    else:
        W = pi_w[:, None] * XtLam
        W[rows] = W_rows
    return RFSStep(W, residual / gamma, Lam, XtLam)


def rfs_dual_bound(Y: np.ndarray, gamma: float, step: RFSStep) -> float:
    """The lower bound on min J given by an iteration's dual point (derivation: :func:`rfs_fit`).

    D = gamma Tr(Lam^T Y) / s with s = max(max_j ||x_j^T Lam||, gamma max_i ||lam_i||), the
    largest row norm of A^T Lam; 0 (the bound of Lam = 0) if Tr(Lam^T Y) is not positive.
    """
    scale = max(float(_row_norms(step.XtLam).max(initial=0.0)), gamma * float(_row_norms(step.Lam).max()))
    value = float(np.vdot(step.Lam, Y))
    if not (value > 0 and np.isfinite(value) and 0 < scale < np.inf):
        return 0.0
    return gamma * value / scale


def _relative_gap(primal: float, dual: float) -> float:
    return (primal - dual) / dual if dual > 0 else np.inf


#: The stopping rules of :func:`rfs_fit`: "gap", the certificate (the default), and "decrease",
#: the relative decrease of J that fsbench used before it (the papers' committed RFS rows).
STOPPING_RULES = ("gap", "decrease")

#: The selector's solvers: Algorithm 1 ("reweighted", :func:`rfs_fit`), ADMM ("admm",
#: :mod:`fsbench.selectors._rfs_admm`), or "auto": ADMM when samples outnumber features under the
#: certificate, Algorithm 1 otherwise.
SOLVERS = ("auto", "reweighted", "admm")


def rfs_fit(X: np.ndarray, Y: np.ndarray, gamma: float, *, stop: str = "gap", tol: float = 1e-7,
            max_iter: int = 50_000, form: str = "auto") -> RFSFit:
    """Run Algorithm 1 from D = I until a duality gap certifies J within ``tol`` of its minimum.

    Stops after the first iteration t whose W_t satisfies J(W_t) - D <= tol * D, where D is the
    largest dual bound D(Lambda_1..t) found so far (below), or after ``max_iter`` iterations
    (``converged`` False). Since D <= min J, the returned W then has
    (J(W) - min J) / min J <= tol. ``tol`` = 0 runs ``max_iter`` iterations. ``form`` is
    "samples" (n x n system), "features" (d x d system) or "auto" (the smaller one).

    ``stop="decrease"`` is the rule fsbench used before, kept so that results computed with it
    can be reproduced: stop after the first iteration t >= 2 with J_(t-1) - J_t <= tol J_(t-1),
    or after ``max_iter`` (``converged`` says whether the rule fired). It runs the iteration
    exactly as that code did, every row in the linear system and "auto" choosing by n > d, so
    with tol = 1e-6 and max_iter = 1000 its iterates are those of the committed rows bit for bit.
    The dual bounds are still computed (they change no iterate), so ``duality_gap`` says how far
    from the minimum such a fit stopped; it certifies nothing about the stop.

    The certificate. J(W) = gamma ||U||_{2,1} for U = [W; E] with E = (Y - X W) / gamma, so
    min J = gamma P* with the primal problem (eq. 14)

        P* = min ||U||_{2,1}  subject to  A U = Y,   A = [X, gamma I].

    Its Lagrangian ||U||_{2,1} + Tr(Lambda^T (Y - A U)) = Tr(Lambda^T Y) + sum_i (||u^i|| -
    <a^i, u^i>), with a^i the i-th row of A^T Lambda, is bounded below in U only if every
    ||a^i|| <= 1, and its infimum (at U = 0) is then Tr(Lambda^T Y). The dual problem is

        max Tr(Lambda^T Y)  subject to  ||x_j^T Lambda||_2 <= 1 (j = 1..d; x_j is column j of X)
                                        gamma ||lambda_i||_2 <= 1 (i = 1..n; lambda_i is row i).

    Weak duality: for A U = Y and a feasible Lambda, Tr(Lambda^T Y) = Tr(Lambda^T A U) =
    sum_i <a^i, u^i> <= sum_i ||a^i|| ||u^i|| <= ||U||_{2,1}. Any Lambda with Tr(Lambda^T Y) > 0,
    divided by s = max_i ||a^i||, is feasible, so D(Lambda) = gamma Tr(Lambda^T Y) / s <= min J.

    Each iteration already holds such a Lambda: Lambda_t = K^-1 Y in the n x n form (K =
    A diag(pi) A^T, pi the previous row norms of U), and the same matrix R^-1 (Y - X W_t) in the
    d x d form. As U_t = diag(pi) A^T Lambda_t, ||u_t^i|| = pi_i ||a^i|| and Tr(Lambda_t^T Y) =
    Tr(Lambda_t^T K Lambda_t) = sum_i pi_i ||a^i||^2 > 0. At the fixed point every non-zero row
    has ||a^i|| = 1, so Tr(Lambda^T Y) = ||U||_{2,1} and (if no zero row has ||a^i|| > 1) s = 1:
    the gap closes. A row that is exactly zero (pi = 0: a constant feature, or a weight that
    underflowed) stays zero; if the optimum needs it, its ||a^i|| stays above 1 and so does the
    gap, so such a stall is reported (``converged`` False), not hidden. The bound costs
    O((n + d) c) per iteration beyond the iteration itself, and in the d x d form one product
    X^T Lambda (n d c against the n d^2 of its system). gamma ||U_t||_{2,1} equals J(W_t) only
    as far as A U_t = Y holds in floating point (the n x n form solves for Lambda), so a stop is
    confirmed with J(W_t) computed from X W_t - Y, as is the returned gap.

    The relative decrease of J (the rule before: stop when J_(t-1) - J_t <= 1e-6 J_(t-1)) is no
    such certificate: rows of W converge slowly while J hardly moves, and on the papers' data that
    rule stopped up to 3.4e-4 above the minimum (UMIST, gamma = 0.1; mostly 1e-5 to 8e-5) with
    top-100 features that differ from the optimum's (benchmarks/rfs_dso.md).

    Once a tenth or more of the rows of W have negligible weight (:data:`NEGLIGIBLE_ROW_SHARE`)
    they are left out of the linear system, and "auto" solves the n x n or the d x d system over
    the rows kept, whichever is smaller (the d x d form only while no residual row is nearly
    zero).
    """
    if gamma <= 0:
        raise ValueError(f"gamma must be positive, got {gamma}")
    if form not in ("auto", "samples", "features"):
        raise ValueError(f"form must be 'auto', 'samples' or 'features', got {form!r}")
    if stop not in STOPPING_RULES:
        raise ValueError(f"stop must be 'gap' or 'decrease', got {stop!r}")
    certify = stop == "gap"
    n, d = X.shape
    column_sq = np.einsum("ij,ij->j", X, X)
    pi_w, pi_e = np.ones(d), np.ones(n)
    objective: list[float] = []
    dual: list[float] = []
    best_dual, gap, converged = 0.0, np.inf, False
    W = np.zeros((d, Y.shape[1]))
    buf = None  # (n, d) work array of the n x n form
    for _ in range(max_iter):
        share = pi_w * column_sq
        kept = share > NEGLIGIBLE_ROW_SHARE * share.sum()
        # leaving rows out copies the kept columns of X: worth it from a tenth left out
        # (not under the old rule: its iterates must stay those it computed, to the last bit)
        rows = None if not certify or kept.sum() > 0.9 * d else np.flatnonzero(kept)
        n_rows = d if rows is None else rows.size
        use_features = form == "features" or (form == "auto" and n > n_rows)
        # The d x d form divides by the residual norms: use it only while none is (nearly) zero.
        if use_features and n_rows > 0 and pi_e.min() > 1e-10 * pi_e.max():
            step = rfs_step_features(X, Y, gamma, pi_w, pi_e, rows)
        else:
            if buf is None and rows is None:
                buf = np.empty_like(X)
            step = rfs_step_samples(X, Y, gamma, pi_w, pi_e, rows, out=buf)
        W = step.W
        pi_w, pi_e = _row_norms(step.W), _row_norms(step.E)
        # X W - Y = -gamma E (A U = Y): J = gamma (||E||_{2,1} + ||W||_{2,1}) = gamma ||U||_{2,1}
        objective.append(float(gamma * (pi_e.sum() + pi_w.sum())))
        dual.append(rfs_dual_bound(Y, gamma, step))
        best_dual = max(best_dual, dual[-1])
        if not certify:
            if len(objective) >= 2 and objective[-2] - objective[-1] <= tol * objective[-2]:
                converged = True
                break
        elif tol > 0 and _relative_gap(objective[-1], best_dual) <= tol:
            gap = _relative_gap(rfs_objective(X, Y, W, gamma), best_dual)
            if gap <= tol:
                converged = True
                break
    if not (converged and certify):
        gap = _relative_gap(rfs_objective(X, Y, W, gamma), best_dual)
    return RFSFit(W, np.asarray(objective), np.asarray(dual), float(gap), converged)


@register("rfs")
class RFS(BaseSelector):
    """RFS: joint l2,1-norm loss and regularizer, ranked by row norms of W (Nie et al. 2010).

    Minimizes J(W) = ||X W - Y||_{2,1} + gamma ||W||_{2,1} (eq. 10, with X samples x features)
    by Algorithm 1: eq. 14, min ||U||_{2,1} s.t. A U = Y with A = [X, gamma I] and U = [W; E],
    is solved by the iteration U <- D^-1 A^T (A D^-1 A^T)^-1 Y, D_ii = 1 / (2 ||u^i||) (eq. 19),
    started from D = I. The n x n system is solved by Cholesky (no inverse is formed); when
    samples outnumber features an equivalent d x d system is solved instead (see
    :func:`rfs_step_features`). Zero rows follow the paper's footnote 1: only D^-1 = 2 ||u^i||
    is used, so a zero row keeps weight 0 and stays zero. J never increases (Theorem 1) and the
    iteration reaches the global optimum of this convex problem.

    Stopping rule: a duality gap (derived in :func:`rfs_fit`). Each iteration's linear system
    also yields a dual point Lambda; scaled to dual feasibility it gives a lower bound D <= min J,
    and the fit stops after the first iteration whose W has J(W) - D <= tol * D, which certifies
    (J(W) - min J) / min J <= tol. If ``max_iter`` iterations end the fit first, a
    ConvergenceWarning says so. The default tol = 1e-7 gives, on the papers' datasets at
    gamma = 1 (configs/papers/rfs.yaml), the top-100 features of a fit run to 1e-12; the
    previous rule (relative decrease of J <= 1e-6, max_iter 1000) stopped 3.3e-5 to 3.8e-5
    above the minimum there, with 90-92 of them (benchmarks/rfs_dso.md). Features whose
    optimal row is zero are ranked by how far their rows have decayed, which depends on when
    the iteration stops, not on the optimum: where the optimum has fewer than 100 non-zero rows,
    or none (gamma >= max_j ||x_j^T Y||), the tail of the top-100 can differ from a 1e-12 fit's
    at any tolerance above 1e-8 to 1e-11 (measured on the dso-fs grid: AR at gamma = 10 and
    100, SEMEION at 100, UMIST at 100). Certifying takes many more iterations than the old rule
    (hundreds to tens of thousands); max_iter = 50,000 covers the papers' microarray data at
    gamma = 1 about three times over, and gamma <= 0.01 on AR and <= 0.1 on UMIST runs into it.

    ``stop="decrease"`` selects the rule fsbench used before: stop after iteration t >= 2 when
    J_(t-1) - J_t <= tol J_(t-1), or after ``max_iter``, no warning either way. With tol = 1e-6
    and max_iter = 1000 (the defaults it had) it computes exactly what that code computed,
    iterate for iterate, and the papers' configs pin it (configs/papers/) because their
    committed RFS rows were computed that way: about 230 iterations, 3e-5 above the minimum.
    (The authors' released code stops after a fixed 20, 30 or 50 iterations, further from it.)
    Under that rule ``diagnostics_`` is empty, as those rows' were; ``duality_gap_`` still
    says how far above the minimum the fit stopped.

    Solvers. Algorithm 1 solves an n x n or d x d system per iteration; where samples outnumber
    features some residual rows reach zero at the optimum, their weights grow without bound and
    the iteration crawls (a 5,000 x 2,000 problem: a gap of 3.5e-5 after 300 iterations and
    570 s). ``solver="admm"`` minimizes the same J by ADMM (:mod:`fsbench.selectors._rfs_admm`:
    one Cholesky factor of X^T X + sigma I, two passes over X per iteration) to the same
    certificate, and returns rows that are exactly zero where the optimum's are. Those features
    are ranked after the others by ||x_j^T Lambda|| / gamma at ADMM's last dual point Lambda: at
    the optimum it is at most 1 on a zero row (the subgradient condition) and reaches 1 where
    the row is about to enter the model as gamma decreases, so the tail is ordered by an
    optimal dual point, not by an iteration's path (the optimal dual is unique when no residual
    row of the optimum is zero; otherwise the order is ADMM's choice among optimal duals).
    ``"auto"`` (default) runs
    ADMM when n > d under ``stop="gap"`` and Algorithm 1 otherwise; ``stop="decrease"`` is a
    rule on Algorithm 1's iterates and always runs it. Where both certify the gap their weights
    agree to the gap's accuracy (benchmarks/rfs_large_n.md). ADMM was faster at every size
    measured, n <= d included (make_classification, 4 classes: 200 x 1,000 0.24 s against
    3.8 s; 200 x 10,000 10.5 s against 176 s; 1,000 x 1,000 0.7 s against over 300 s), so
    ``solver="admm"`` is worth setting there; ``"auto"`` keeps Algorithm 1 at n <= d, the shapes
    of the committed results, whose rankings' tails (the optimum's zero rows) it orders by its
    own path.

    Parameters
    ----------
    gamma : the regularization weight (> 0).
    label_coding : "onehot" (default; Y in {0, 1}, one column per class) or "pm1" (+1 / -1,
        the coding of scikit-feature's ``rfs``). The paper does not state its coding.
    fit_intercept : if True, append a constant feature whose weight row (penalized like any
        other, as in the paper's "absorbed" bias) is left out of the scores. The paper's eq. 10
        has no bias; default False.
    stop : "gap" (default, the certificate) or "decrease" (the relative decrease of J).
    tol, max_iter : the stopping rule above; tol = 0 runs max_iter iterations (no warning)
        under "gap", and runs until J stops decreasing under "decrease".
    form : Algorithm 1's system: "auto" (the smaller one), "samples" (n x n) or "features" (d x d).
    solver : "auto" (default), "reweighted" (Algorithm 1) or "admm" (above).

    Fitted attributes: ``coef_`` (d, c) = W, ``scores_`` = ||w^j||_2, ``n_iter_``,
    ``objective_`` (J after each iteration of Algorithm 1, after every tenth of ADMM),
    ``intercept_`` (c,) when fit_intercept, ``duality_gap_`` = (J(W) - D) / D (J(W) - min J <=
    that times min J), and ``diagnostics_`` = {"converged": the gap met tol, "duality_gap":
    duality_gap_, "solver": the one that ran} under "gap", {} under "decrease".
    """

    # what `fsbench selectors` prints: the default stop is the certificate, not the old rule
    summary = ("RFS: joint l2,1-norm loss and regularizer, ranked by row norms of W (Nie et al. 2010); "
               "by default it stops when a duality gap certifies J within tol of its minimum (stop: gap), "
               "solved by ADMM when samples outnumber features (solver: auto).")

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # gamma > 0 (eq. 10). Beyond 1e-8..1e8 the fit is numerically its gamma -> 0 or
        # gamma -> inf limit (measured on 45 x 12: the ranking of 1e-6 down to 1e-150, that of
        # 1e6 up to 1e50), and far beyond it breaks down (NaN scores below 1e-162, ties at
        # 1e60, overflow at 1e154).
        "gamma": [real(1e-8, 1e8, "both")],
        "label_coding": [StrOptions({"onehot", "pm1"})],
        "fit_intercept": ["boolean"],
        # "gap" (default): the fit stops once a duality gap certifies J(W) within tol of min J.
        # "decrease": the relative decrease of J, which certifies nothing (it stopped up to 3e-4
        # above the minimum on the papers' data) and is kept only to reproduce the results
        # computed with it: the papers' configs pin it with tol 1e-6, max_iter 1000.
        "stop": [StrOptions(set(STOPPING_RULES))],
        # "gap": the relative duality gap, 0 runs max_iter iterations; "decrease": the relative
        # decrease of J, 0 runs until J stops decreasing (or max_iter), 1 would stop at
        # iteration 2 whatever J does
        "tol": [real(0, 1, "left")],
        "max_iter": [count(1, ITER_MAX)],
        "form": [StrOptions({"auto", "samples", "features"})],
        # "auto": ADMM when n > d under stop "gap" (Algorithm 1 crawls there), else Algorithm 1
        "solver": [StrOptions(set(SOLVERS))],
    }

    def __init__(self, *, n_features_to_select: int = 10, gamma: float = 1.0,
                 label_coding: str = "onehot", fit_intercept: bool = False, stop: str = "gap",
                 tol: float = 1e-7, max_iter: int = 50_000, form: str = "auto", solver: str = "auto"):
        super().__init__(n_features_to_select=n_features_to_select)
        self.gamma = gamma
        self.label_coding = label_coding
        self.fit_intercept = fit_intercept
        self.stop = stop
        self.tol = tol
        self.max_iter = max_iter
        self.form = form
        self.solver = solver

    def check_params(self) -> None:
        if self.solver == "admm" and self.stop == "decrease":
            raise InvalidParameterError(
                "solver='admm' cannot use stop='decrease', a rule on Algorithm 1's iterates; "
                "set stop: gap or solver: reweighted."
            )
        if self.solver == "admm":
            self._reject_unused("form", "solver is 'reweighted' or 'auto'")

    def _solver_for(self, n: int, d: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "admm" if self.stop == "gap" and n > d else "reweighted"

    def _fit(self, X, y, classes):
        from fsbench.selectors._rfs_admm import CHECK_EVERY, rfs_fit_admm  # it imports this module

        Y = label_matrix(y, classes.size, self.label_coding)
        Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X
        solver = self._solver_for(*Xa.shape)
        if solver == "admm":
            fit = rfs_fit_admm(Xa, Y, float(self.gamma), tol=float(self.tol), max_iter=int(self.max_iter))
            n_iter = min(int(self.max_iter), CHECK_EVERY * fit.objective.size)
            d = X.shape[1]
            norms, closeness = _row_norms(fit.W)[:d], fit.dual_scores[:d]
            # the non-zero rows by norm, then the zero rows by how near they are to entering
            self.ranking_ = np.lexsort((np.arange(d), -closeness, -norms))
        else:
            fit = rfs_fit(Xa, Y, float(self.gamma), stop=self.stop, tol=float(self.tol),
                          max_iter=int(self.max_iter), form=self.form)
            n_iter = fit.objective.size
        W = fit.W
        if self.fit_intercept:
            self.intercept_ = W[-1].copy()
            W = W[:-1]
        self.coef_ = W
        self.n_iter_ = n_iter
        self.objective_ = fit.objective
        self.duality_gap_ = fit.duality_gap
        if self.stop == "decrease":
            # the old rule's fits had no diagnostics and no warning: rows it computes stay the same
            self.diagnostics_ = {}
            return _row_norms(W)
        self.diagnostics_ = {"converged": fit.converged, "duality_gap": fit.duality_gap, "solver": solver}
        if self.tol > 0 and not fit.converged:
            warnings.warn(
                f"rfs: relative duality gap {fit.duality_gap:.2g} > tol={self.tol:g} after "
                f"max_iter={self.max_iter} iterations (gamma={self.gamma:g}, solver {solver}); W may be above the "
                "optimum and the ranking not yet the optimum's. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return _row_norms(W)
