"""Stability selection (Meinshausen & Buehlmann, JRSS-B 72, 2010) with l1-penalized logistic regression."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from fsbench.fixed_order import column_sums, group_sums
from fsbench.selectors import register
from fsbench.selectors.base import RANDOM_STATE, BaseSelector, count, real

#: LIBLINEAR's settings (scikit-learn's defaults for LogisticRegression): stopping tolerance and cap
#: on Newton iterations of its l1-regularized logistic regression (newGLMNET)
LR_TOL = 1e-4
LR_MAX_ITER = 100


#: how this scikit-learn asks for the l1 penalty: ``penalty="l1"`` before 1.8, ``l1_ratio=1`` since
#: (``penalty`` deprecated): the same problem
_L1 = ({"l1_ratio": 1.0} if inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"
       else {"penalty": "l1"})


def l1_logistic(C: float, seed: int) -> LogisticRegression:
    """scikit-learn's l1-penalized logistic regression solved by LIBLINEAR."""
    return LogisticRegression(C=C, solver="liblinear", tol=LR_TOL, max_iter=LR_MAX_ITER, random_state=seed, **_L1)


def lambda_max(X: np.ndarray, y: np.ndarray, n_classes: int) -> float:
    """max_{k, j} |sum_i y_ik x_ij| / (2 n), y_ik = +1 in class k, else -1.

    The smallest lambda (per sample: the penalty lambda ||w||_1 against the mean logistic loss) at
    which every feature weight of every one-vs-rest problem is zero with a zero intercept: the
    gradient of the mean loss at w = 0 is -sum_i y_ik x_i / (2 n). It is 1 / (n C) for the C of
    scikit-learn's ``l1_min_c(X, y_k, loss="log", fit_intercept=False)``. The sums run in sample
    order (:mod:`fsbench.fixed_order`: y_ik x_ij summed is 2 S_kj - T_j, S_k the class sum, T the total).
    """
    S = group_sums(X, y, n_classes)
    T = column_sums(X)
    return float(np.abs(2.0 * S - T).max(initial=0.0)) / (2.0 * X.shape[0])


def half_samples(y: np.ndarray, n_classes: int, n_resamples: int, rng: np.random.RandomState) -> list[np.ndarray]:
    """The subsamples, stratified: from each class k (n_k samples, in class order) max(1, n_k // 2)
    samples drawn without replacement, ``idx_k[rng.permutation(n_k)[:h_k]]``; each subsample is the
    sorted union (every class is present, so every one-vs-rest problem has both labels)."""
    members = [np.flatnonzero(y == k) for k in range(n_classes)]
    out = []
    for _ in range(n_resamples):
        parts = [idx[rng.permutation(idx.size)[: max(1, idx.size // 2)]] for idx in members]
        out.append(np.sort(np.concatenate(parts)))
    return out


def without_constants(X: np.ndarray) -> np.ndarray:
    """X (C-ordered), its constant columns replaced by 0 in a copy when there are any.

    LIBLINEAR penalizes the intercept as a constant feature of value 1, so a constant non-zero
    column would share the intercept's role and be selected; a zero column never is (its gradient
    is 0). On fsbench's z-scored data a feature constant on the whole training data is 0 already.
    """
    constant = np.ptp(X, axis=0) == 0
    if not constant.any():
        return np.ascontiguousarray(X, dtype=np.float64)
    X = np.array(X, dtype=np.float64, order="C")
    X[:, constant] = 0.0
    return X


@register("stability_selection")
class StabilitySelection(BaseSelector):
    """Stability selection: how often l1-logistic regression on half-samples selects a feature (max over lambdas).

    Meinshausen & Buehlmann (2010): for each of B = ``n_resamples`` random subsamples I of about half
    the samples (without replacement, stratified: :func:`half_samples`) and each lambda of a grid,
    fit an l1-penalized logistic regression on I and record the selected set S^lambda(I); the
    selection frequency is Pi_j^lambda = #{I : j in S^lambda(I)} / B and the score
    max_lambda Pi_j^lambda. A feature constant on a subsample is not selected on it: its column is
    set to 0 for the fits on that subsample (:func:`without_constants`; a no-op on fsbench's
    z-scored data unless a feature is constant on a half-sample).

    The model: scikit-learn's ``LogisticRegression`` with the l1 penalty and ``solver="liblinear"``
    (``tol=1e-4``, ``max_iter=100``), minimizing ||w||_1 + C sum_{i in I} log(1 + exp(-y_i (w^T x_i +
    b))) with the intercept b a penalized constant feature (LIBLINEAR's ``intercept_scaling=1``).
    LIBLINEAR is binary: with c > 2 classes one problem per class (class k against the rest, as
    ``OneVsRestClassifier``), with 2 classes one problem (class 1 against class 0); a feature is
    selected when the weight of any class is non-zero. Every fit gets ``random_state`` = one seed drawn
    first from ``random_state`` (LIBLINEAR visits coordinates in a random order); the subsamples are
    drawn after it from the same generator.

    The grid: lambda_l = lambda_max * ``lambda_min_ratio`` ** (l / L), l = 1..L = ``n_lambdas``
    (geometric, from just below lambda_max down to ``lambda_min_ratio`` lambda_max), lambda_max of the
    whole training data (:func:`lambda_max`, per sample, constant features as 0); on a subsample of m
    samples the fit at lambda_l has C = 1 / (lambda_l m). The grid is the same for every subsample.
    Data whose features are all constant (lambda_max = 0) select nothing.

    Ties: the frequencies are multiples of 1/B and many features tie (at 0: every feature never
    selected). Features are ranked by the largest selection count over the grid, then by the count
    summed over the grid (the mean frequency), then by index -- integer counts, so equal frequencies
    are equal. ``scores_`` are the maximal frequencies, ``frequencies_`` the (L, d) frequencies,
    ``lambdas_`` the grid. LIBLINEAR's loops use no BLAS and lambda_max is summed in a fixed order, so
    the frequencies do not depend on the CPU's BLAS kernel (verified on GLIOMA: the same frequencies
    and ranking under OpenBLAS's Haswell, SkylakeX and Katmai kernels and with numpy's AVX2 and
    AVX-512 loops switched off).

    Defaults: B = 20, L = 2, ``lambda_min_ratio=0.1`` (lambda / lambda_max = 0.32 and 0.1: some 30 to
    100 non-zero weights per subsample, summed over the classes, on GLIOMA and Brain_Tumor_2). Meinshausen &
    Buehlmann use B = 100; B = 20 (frequencies in steps of 0.05, ties broken by the grid's sum) keeps
    the cost to seconds. Cost: B L fits for two classes, B L c otherwise, each 5 to 20 ms at 25-42
    samples x 2,300-12,600 features (LIBLINEAR's time grows faster than the number of features). On one
    core: 0.6 s on ALLAML (72 x 7,129, 2 classes: 40 fits), 0.8 s on SRBCT, 1.8 s on GLIOMA, 2.1 s on
    Brain_Tumor_2 and 2.2 s on MLL (72 x 12,582, 3 classes: 120 fits); two to three times as long on
    a loaded machine; linear in B and L. Every fit gets every feature, as a plain loop over
    scikit-learn would: dropping features that cannot enter would change LIBLINEAR's random
    coordinate order, and so its fits.

    ``diagnostics_``: ``stability_n_fits``, ``stability_n_unconverged`` (fits that reached
    ``max_iter``; one warning if any), ``stability_n_selected`` (features selected at least once).
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # one subsample measures no stability; 10,000 subsamples resolve frequencies to 1e-4, far below
        # their Monte Carlo error, at 200 times the default's cost
        "n_resamples": [count(2, 10_000)],
        # every lambda of the grid is one more fit per subsample and class
        "n_lambdas": [count(1, 100)],
        # below 1% of lambda_max a half-sample of a microarray set (separable) is nearly unpenalized:
        # the weights grow without bound and LIBLINEAR stops at max_iter; 1 is lambda_max itself
        "lambda_min_ratio": [real(0.01, 1, "both")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10, n_resamples: int = 20, n_lambdas: int = 2,
                 lambda_min_ratio: float = 0.1, random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.n_resamples = n_resamples
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.random_state = random_state

    def _fit(self, X, y, classes):
        n, d = X.shape
        c, B, L = classes.size, int(self.n_resamples), int(self.n_lambdas)
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max + 1))
        subsamples = half_samples(y, c, B, rng)
        lam = lambda_max(without_constants(X), y, c) * float(self.lambda_min_ratio) ** (np.arange(1, L + 1) / L)
        problems = [1] if c == 2 else list(range(c))
        counts = np.zeros((L, d), dtype=np.int64)
        fits = unconverged = 0
        if lam[0] > 0:
            # the data are checked (finite) and the parameters valid: scikit-learn need not check them
            # again in each of the B L c fits (its checks cost some 20% of a fit on SRBCT)
            with warnings.catch_warnings(), config_context(assume_finite=True, skip_parameter_validation=True):
                warnings.simplefilter("ignore", ConvergenceWarning)  # counted below
                for idx in subsamples:
                    Xi, yi = without_constants(X[idx]), y[idx]
                    for l_, lam_l in enumerate(lam):
                        selected = np.zeros(d, dtype=bool)
                        for k in problems:
                            model = l1_logistic(1.0 / (lam_l * idx.size), seed).fit(Xi, (yi == k).astype(np.int64))
                            selected |= model.coef_[0] != 0
                            fits += 1
                            unconverged += int(np.max(model.n_iter_) >= LR_MAX_ITER)
                        counts[l_] += selected
        best, total = counts.max(axis=0), counts.sum(axis=0)
        self.ranking_ = np.lexsort((np.arange(d), -total, -best))
        self.frequencies_ = counts / B
        self.lambdas_ = lam
        self.diagnostics_ = {"stability_n_fits": fits, "stability_n_unconverged": unconverged,
                             "stability_n_selected": int(np.count_nonzero(best))}
        if unconverged:
            warnings.warn(f"stability_selection: {unconverged} of {fits} l1-logistic fits reached "
                          f"max_iter={LR_MAX_ITER} before tol={LR_TOL}.", ConvergenceWarning, stacklevel=3)
        return best / B
