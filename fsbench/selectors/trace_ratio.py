"""Trace ratio criterion for feature selection (Nie, Xiang, Jia, Zhang & Yan, AAAI 2008), supervised (Fisher) graphs."""

from __future__ import annotations

import numpy as np

from fsbench.fixed_order import column_sums
from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector, rank_by_scores
from fsbench.selectors.fisher import class_moments


def fisher_traces(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature traces (a, b) of the Fisher between- and within-class graphs.

    The supervised graphs of Nie et al. (2008): W_w(i, l) = 1 / n_k when samples i and l are both
    in class k (else 0), L_w = I - W_w and L_b = W_w - 1 1^T / n. For feature j with values x_j,
    b_j = x_j^T L_w x_j = sum_k sum_{i in k} (x_ij - mu_kj)^2 (within-class scatter) and
    a_j = x_j^T L_b x_j = sum_k n_k (mu_kj - mu_j)^2 (between-class scatter), computed from class
    means as sums over samples and classes (no n x n matrix), each in a fixed order
    (``fsbench.fixed_order``), so equal features get equal traces on every machine.
    """
    counts, means, within = class_moments(X, y, n_classes)
    overall = column_sums(X) / X.shape[0]
    between = column_sums(counts[:, None] * (means - overall) ** 2)
    return between, within


def _ratio(a: np.ndarray, b: np.ndarray, subset: np.ndarray) -> float:
    """sum_{i in subset} a_i / sum_{i in subset} b_i, both sums in increasing feature index."""
    idx = np.sort(subset)
    return float(np.cumsum(a[idx])[-1] / np.cumsum(b[idx])[-1])


def trace_ratio_search(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, float, list[float], int, int]:
    """Maximize sum_{i in S} a_i / sum_{i in S} b_i over subsets S of k features (a, b >= 0).

    Features with a_i = b_i = 0 (constant features) are no candidates; ``k`` is lowered to the
    number of candidates. Returns the final scores a_i - lambda* b_i (NaN for constant features),
    lambda*, the lambda of every accepted subset, the number of top-k selections made, and how
    many features of the final subset were not in the initial one. See :class:`TraceRatio`.
    """
    constant = (a == 0) & (b == 0)
    k = min(k, int((~constant).sum()))
    if k == 0:
        return np.full(a.size, np.nan), 0.0, [0.0], 0, 0
    zero_within = (b == 0) & ~constant
    if zero_within.sum() >= k:
        # every k-subset of these has trace ratio a / 0 = +inf: the limit of a - lambda b
        scores = np.where(zero_within, a, -b)
        scores[constant] = np.nan
        return scores, np.inf, [np.inf], 0, 0
    with np.errstate(divide="ignore", invalid="ignore"):
        fisher = a / b
    fisher[constant] = np.nan
    initial = rank_by_scores(fisher)[:k]
    lam = _ratio(a, b, initial)
    lambdas, steps = [lam], 0
    while True:
        scores = a - lam * b
        scores[constant] = np.nan
        steps += 1
        subset = rank_by_scores(scores)[:k]
        new = _ratio(a, b, subset)
        if not new > lam:
            break
        lam = new
        lambdas.append(lam)
    swaps = int(np.setdiff1d(subset, initial).size)
    return scores, lam, lambdas, steps, swaps


@register("trace_ratio")
class TraceRatio(BaseSelector):
    """Trace ratio: the k-subset maximizing between-class over within-class scatter (Fisher graphs).

    Nie, Xiang, Jia, Zhang & Yan (2008), "Trace ratio criterion for feature selection", AAAI:
    the subset S of k = ``n_features_to_select`` features maximizing
    tr(W_S^T X L_b X^T W_S) / tr(W_S^T X L_w X^T W_S) = sum_{i in S} a_i / sum_{i in S} b_i,
    with W_S the selection matrix and, in the paper's supervised (Fisher score) case, a_i the
    between-class and b_i the within-class scatter of feature i (``fisher_traces``; the ratio
    a_i / b_i of one feature is its Fisher score). The paper's iteration: start from the k
    features of largest a_i / b_i, set lambda = the trace ratio of the current subset, take the
    k features of largest a_i - lambda b_i, repeat while lambda increases. For lambda_t the ratio
    of S_t, sum_{S_t+1} (a - lambda_t b) >= sum_{S_t} (a - lambda_t b) = 0, so lambda increases
    monotonically; it stops at the lambda* where the largest k-sum of a - lambda* b is 0, which is
    the largest trace ratio of any k-subset (the global optimum; a Dinkelbach iteration). Each
    accepted step strictly increases lambda over finitely many subsets, so it terminates.

    The ranking (fsbench fits once with the largest k and evaluates every smaller k from it):
    every feature by its final score a_i - lambda* b_i (``scores_``), so its first k features are
    the optimal k-subset, ordered by that score, followed by the rest in the same order. For a
    smaller k' its first k' features are the best of the k-subset by that score, in general not
    the optimal k'-subset (the criterion selects for one k, as the paper does). Ties go to the
    lower index; a and b are sums in a fixed order, so identical features tie exactly.

    Degenerate cases: a constant feature (a = b = 0) is no candidate and ranks last (score NaN).
    When at least k features are constant within every class but not overall (b = 0 < a), every
    k-subset of them has an infinite ratio: lambda* = inf and the score is a_i for these
    features and -b_i for the others (the order of a - lambda b as lambda grows).

    On data z-scored on the samples it is fitted on (fsbench's default protocol), a_i + b_i = n
    for every non-constant feature, so the ratio sum a / sum b = k n / sum b - 1 is maximized by
    the k features of smallest b_i, i.e. of largest Fisher score, and a_i - lambda* b_i =
    n - (1 + lambda*) b_i orders all features as the Fisher score does: in exact arithmetic the
    ranking is the ``fisher`` selector's, except that constant features rank last here (Fisher
    scores them 0, tied by index with the features whose class means are all equal); computed,
    the two can also differ where features are tied to rounding.

    scikit-feature's ``trace_ratio`` (1.2.1, style ``"fisher"``, the same a and b from n x n
    graph matrices) differs:

    - it keeps only the k features of largest a_i / b_i before iterating, so its subset is always
      that initial one (its loop has nothing else to choose from), and it returns only those k
      features, ordered by a_i - lambda b_i with lambda their trace ratio. Where the Fisher top k
      is the optimal subset (always on the z-scored data above) its order is this selector's
      first k; elsewhere this selector's subset has the larger trace ratio;
    - it sets a_i = 0 to 1e-14, so a constant feature's ratio 1e-14 / 0 = inf puts it in every
      subset (ranked by its score 1e-14 among the k); here constant features rank last;
    - its sorts are reversed ascending sorts, so ties do not go to the lower index;
    - its first lambda sums the first k features by index, not the selected ones, and it stops
      when lambda changes by less than 1e-3; when that first lambda falls within 1e-3 of the
      subset's ratio, its order uses the first lambda.

    Fitted: ``between_`` (a), ``within_`` (b), ``trace_ratio_`` (lambda*), ``objective_`` (lambda
    of the initial and of every accepted subset, increasing), ``n_iter_`` (top-k selections,
    the last of which did not increase lambda), ``diagnostics_`` = {"trace_ratio_lambda",
    "trace_ratio_swaps" (features of the final subset not in the initial Fisher top k)}.
    """

    def _fit(self, X, y, classes):
        a, b = fisher_traces(X, y, classes.size)
        k = min(int(self.n_features_to_select), X.shape[1])
        scores, lam, lambdas, steps, swaps = trace_ratio_search(a, b, k)
        self.between_, self.within_ = a, b
        self.trace_ratio_ = lam
        self.objective_ = np.array(lambdas)
        self.n_iter_ = steps
        self.diagnostics_ = {"trace_ratio_lambda": lam, "trace_ratio_swaps": swaps}
        return scores
