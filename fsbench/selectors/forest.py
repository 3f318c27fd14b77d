"""Random-forest importances (Breiman, Machine Learning 45, 2001): impurity (Gini) and permutation.

Both selectors grow scikit-learn's ``RandomForestClassifier(n_estimators, max_features="sqrt",
random_state, n_jobs=1)`` with its other defaults: Gini criterion, bootstrap samples of n draws,
trees grown until their leaves are pure (``min_samples_leaf=1``), features cast to float32 (as
scikit-learn does before growing a tree).

Determinism. Neither selector calls BLAS. A tree's growth draws its bootstrap sample from numpy's
RandomState and its candidate features from scikit-learn's own generator, both seeded from
``random_state``; the splitter (compiled Cython) sorts float32 values and sums integer bootstrap
weights; a tree's impurity importance is a sum over its nodes in node order, the forest's the mean
over trees (numpy adds the trees' vectors one after the other) divided by its sum (numpy's pairwise
sum, whose order does not depend on the CPU's SIMD width). The permutation scores are counts of
correct predictions (below). So the scores are the same bits on every x86-64 machine running the
same numpy and scikit-learn builds, and last bits cannot reorder features between machines.
Verified on an AVX-512 machine: ``rf_importance`` and ``permutation`` (500 trees, GLIOMA) give the
same scores and rankings bit for bit with OpenBLAS forced to its Haswell, SkylakeX and Katmai
kernels (``OPENBLAS_CORETYPE``) and with numpy's AVX2 and AVX-512 loops switched off
(``NPY_DISABLE_CPU_FEATURES``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn import config_context
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from fsbench.selectors import register
from fsbench.selectors.base import RANDOM_STATE, BaseSelector, count, real

#: the number of trees: 1 (a single randomized tree) to 10,000 (~40 s on Brain_Tumor_2, 50 x 10,367;
#: the importances' Monte Carlo error falls as 1 / sqrt(n_estimators), and 10,000 trees already use
#: every informative feature of the microarray sets many times over)
N_TREES = count(1, 10_000)
#: at most this many (tree, repeat, sample) rows are routed, or terms summed, at once (~8 MB per array)
_BLOCK = 1 << 20


def random_forest(n_estimators: int, random_state: int | np.random.RandomState | None) -> RandomForestClassifier:
    """The forest both selectors grow (see the module docstring)."""
    return RandomForestClassifier(n_estimators=n_estimators, max_features="sqrt", random_state=random_state,
                                  n_jobs=1)


def grow(forest: RandomForestClassifier, X: np.ndarray, y: np.ndarray) -> RandomForestClassifier:
    """``forest.fit(X, y)`` without scikit-learn's checks of finite data and valid parameters, which
    the selectors' ``fit`` has made."""
    with config_context(assume_finite=True, skip_parameter_validation=True):
        return forest.fit(X, y)


@register("rf_importance")
class RFImportance(BaseSelector):
    """Random-forest impurity importance: the mean decrease in Gini impurity a feature's splits bring.

    Breiman (2001); scikit-learn's ``feature_importances_``. A tree's importance of feature j is
    sum over the nodes s split on j of  N_s G_s - N_left G_left - N_right G_right, with N the
    (bootstrap-weighted) number of samples reaching a node and G = 1 - sum_k p_k^2 its Gini impurity,
    divided by the root's N and normalized to sum 1 over the features; the score is the mean over the
    trees (those that are a single leaf left out), normalized to sum 1 (all 0 if every tree is a leaf).

    ``n_estimators`` (default 500): on the microarray sets (50-83 samples) a tree has some 6 splits,
    so 500 trees make about 3,000 splits, which use 1,300 to 2,200 distinct features of each of the
    five sets (about 500 with 100 trees): the few hundred features fsbench evaluates all have a
    non-zero importance. Cost: 0.8-1.6 s on one core on each of the five sets (two to three times as
    much on a loaded machine), linear in ``n_estimators``.

    Ties: features no split uses score 0 exactly and follow every used feature, by index; equal
    non-zero scores (rare) also go to the lower index. The scores are the same bits on every machine
    (module docstring), so last bits cannot reorder features between machines.
    """

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "n_estimators": [N_TREES],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10, n_estimators: int = 500,
                 random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.n_estimators = n_estimators
        self.random_state = random_state

    def _fit(self, X, y, classes):
        forest = grow(random_forest(int(self.n_estimators), self.random_state), X, y)
        scores = forest.feature_importances_
        self.diagnostics_ = {"rf_n_used": int(np.count_nonzero(scores))}
        return scores


# ----------------------------------------------------------------------------- permutation importance
def _seed(random_state: int | np.random.RandomState | None) -> int:
    """An int seed: ``random_state`` itself, or one draw from it (a RandomState or None)."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max + 1))


def holdout_split(y: np.ndarray, holdout_size: float, seed: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(training indices, hold-out indices, stratified): ``train_test_split`` of the sample indices.

    Stratified when every class has at least 2 samples and both parts can hold one sample of every
    class (scikit-learn's conditions for a stratified split), else a plain random split of the same
    size. The indices come in ``train_test_split``'s order, which the forest's bootstrap and the
    permutations depend on.
    """
    n, n_classes = y.size, np.unique(y).size
    n_hold = int(np.ceil(holdout_size * n))
    stratified = bool(np.bincount(y).min(initial=n) >= 2 and min(n_hold, n - n_hold) >= n_classes)
    train, hold = train_test_split(np.arange(n), test_size=holdout_size, random_state=seed,
                                   stratify=y if stratified else None)
    return train, hold, stratified


class _Nodes:
    """The nodes of every tree of a fitted forest in one set of arrays (tree t's nodes from
    ``offsets[t]`` on), to route many samples through many trees at once."""

    def __init__(self, forest: RandomForestClassifier):
        trees = [e.tree_ for e in forest.estimators_]
        counts = np.array([t.node_count for t in trees])
        self.offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        shift = np.repeat(self.offsets, counts)
        left = np.concatenate([t.children_left for t in trees])
        self.internal = left >= 0
        self.left = np.where(self.internal, left + shift, -1)
        self.right = np.where(self.internal, np.concatenate([t.children_right for t in trees]) + shift, -1)
        self.feature = np.concatenate([t.feature for t in trees])
        self.threshold = np.concatenate([t.threshold for t in trees])
        # a tree's predict_proba is its leaf's row of value (class fractions)
        self.value = np.concatenate([t.value[:, 0, : forest.n_classes_] for t in trees])
        self.tree = np.repeat(np.arange(len(trees)), counts)

    def leaves(self, X: np.ndarray, tree: np.ndarray, sample: np.ndarray, permuted: np.ndarray | None = None,
               permuted_sample: np.ndarray | None = None) -> np.ndarray:
        """The leaf each (tree, sample) row reaches, as ``tree_.apply`` routes it: left when
        x <= threshold, x the float32 value compared in double precision. Row r reads feature
        ``permuted[r]`` from sample ``permuted_sample[r]`` instead of ``sample[r]``."""
        node = self.offsets[tree].copy()
        rows = np.flatnonzero(self.internal[node])
        while rows.size:
            at = node[rows]
            f = self.feature[at]
            s = sample[rows] if permuted is None else np.where(f == permuted[rows], permuted_sample[rows],
                                                               sample[rows])
            node[rows] = np.where(X[s, f] <= self.threshold[at], self.left[at], self.right[at])
            rows = rows[self.internal[node[rows]]]
        return node


def _shuffles(seed: int, n: int, n_repeats: int) -> np.ndarray:
    """Row r: the order of the hold-out samples in repeat r, as scikit-learn's
    ``permutation_importance`` makes it: from ``RandomState(seed)`` one seed s, then for every
    feature the same sequence -- ``RandomState(s)`` shuffles an index array in place once per
    repeat, and the column is re-indexed by it each time, so repeat r reads x[q_r] with
    q_r = q_{r-1}[s_r], s_r the index array after the r-th shuffle."""
    rng = check_random_state(check_random_state(seed).randint(np.iinfo(np.int32).max + 1))
    shuffling, q = np.arange(n), np.arange(n)
    out = np.empty((n_repeats, n), dtype=np.intp)
    for r in range(n_repeats):
        rng.shuffle(shuffling)
        q = q[shuffling]
        out[r] = q
    return out


def permutation_correct(forest: RandomForestClassifier, X: np.ndarray, y: np.ndarray, shuffles: np.ndarray
                        ) -> tuple[int, np.ndarray]:
    """(correct predictions on (X, y), correct predictions with feature j permuted, (d, n_repeats)).

    The forest predicts the class of largest mean class probability over its trees, the trees' outputs
    summed in tree order from 0 and divided by the number of trees (scikit-learn's ``predict_proba``),
    the first class on a tie. Only the trees that split on feature j change when j is permuted; a feature
    no tree uses keeps every prediction (its count is the baseline's). When every leaf is pure (class
    fractions 0 or 1, the rule for forests grown to purity on distinct samples), every partial sum is an
    integer, exact in any order, and each feature's sums are the baseline's minus its trees' old outputs
    plus their new ones; otherwise each feature's sums are redone in tree order from its first tree on,
    so that they are the same floating-point values as scikit-learn's. Work is done in blocks of
    features and repeats of at most ``_BLOCK`` routed samples (and summed terms), so memory stays
    bounded whatever the number of trees and repeats.
    """
    nodes = _Nodes(forest)
    X = X.astype(np.float32).astype(np.float64)
    n, d = X.shape
    n_trees, n_repeats, n_classes = len(forest.estimators_), shuffles.shape[0], forest.n_classes_
    classes = forest.classes_
    # baseline: every tree on every sample, summed in tree order
    tree, sample = np.repeat(np.arange(n_trees), n), np.tile(np.arange(n), n_trees)
    P = nodes.value[nodes.leaves(X, tree, sample)].reshape(n_trees, n, n_classes)
    S = np.cumsum(P, axis=0)

    def correct(total: np.ndarray) -> np.ndarray:
        return np.count_nonzero(classes[np.argmax(total / n_trees, axis=-1)] == y, axis=-1)

    base = int(correct(S[-1]))
    out = np.full((d, n_repeats), base)
    # the (tree, feature) pairs of the splits, by feature then tree
    split = np.flatnonzero(nodes.internal)
    pair = np.unique(nodes.feature[split].astype(np.int64) * n_trees + nodes.tree[split])
    if pair.size == 0:
        return base, out
    p_feature, p_tree = pair // n_trees, pair % n_trees
    used, first = np.unique(p_feature, return_index=True)
    bounds = np.append(first, pair.size)  # feature used[u]'s pairs: bounds[u]:bounds[u + 1]
    leaf_values = nodes.value[~nodes.internal]
    pure = bool(np.all((leaf_values == 0) | (leaf_values == 1)))
    width = n * (1 if pure else (n_trees + 1) * n_classes)  # per repeat: routed rows or summed terms
    r_step = int(max(1, min(n_repeats, _BLOCK // (n * np.diff(bounds).max()), _BLOCK // width)))
    for r0 in range(0, n_repeats, r_step):
        reps = shuffles[r0:r0 + r_step]
        rr = reps.shape[0]
        u0 = 0
        while u0 < used.size:
            # the next features whose pairs, on rr repeats of n samples, fit in a block
            u1 = max(u0 + 1, int(np.searchsorted(bounds, bounds[u0] + _BLOCK // (rr * n), side="right")) - 1)
            a, b = bounds[u0], bounds[u1]
            q = b - a
            # every pair's tree on every repeat's permuted hold-out: rows (pair, repeat, sample)
            leaf = nodes.leaves(X, np.repeat(p_tree[a:b], rr * n), np.tile(np.arange(n), q * rr),
                                np.repeat(p_feature[a:b], rr * n), np.tile(reps.ravel(), q))
            new = nodes.value[leaf].reshape(q, rr, n, n_classes)
            if pure:
                delta = np.add.reduceat(new - P[p_tree[a:b]][:, None], bounds[u0:u1] - a, axis=0)
                out[used[u0:u1], r0:r0 + rr] = correct(S[-1] + delta)
            else:
                for u in range(u0, u1):
                    trees = p_tree[bounds[u]:bounds[u + 1]]
                    t0 = trees[0]
                    terms = np.empty((n_trees - t0 + 1, rr, n, n_classes))
                    terms[0] = S[t0 - 1] if t0 > 0 else 0.0
                    terms[1:] = P[t0:, None]
                    terms[trees - t0 + 1] = new[bounds[u] - a:bounds[u + 1] - a]
                    out[used[u], r0:r0 + rr] = correct(np.cumsum(terms, axis=0)[-1])
            u0 = u1
    return base, out


@register("permutation")
class PermutationImportance(BaseSelector):
    """Permutation importance: the mean drop in a random forest's hold-out accuracy when a feature is shuffled.

    Breiman (2001, sec. 10), on an inner hold-out, as scikit-learn's ``permutation_importance``: the
    training data are split by ``train_test_split(test_size=holdout_size, stratify=y,
    random_state=seed)`` (a plain random split when a class has a single sample or the hold-out cannot
    hold one sample of every class), the forest of :class:`RFImportance` (``n_estimators`` trees,
    ``random_state=seed``) is grown on the rest, and the score of feature j is

        I_j = 1/R sum_r (acc(X_h) - acc(X_h with column j shuffled by the r-th permutation)),

    R = ``n_repeats``, acc the forest's accuracy on the hold-out (X_h, y_h): exactly the
    ``importances_mean`` of ``permutation_importance(forest, X_h, y_h, n_repeats=R, random_state=seed)``
    (the same permutations, the same floating-point values). seed is ``random_state`` itself (one draw
    from it when it is a RandomState). Only the trees that split on j are re-evaluated when j is
    shuffled (:func:`permutation_correct`); scikit-learn predicts with every tree for every feature and
    repeat, which takes hours on a microarray set.

    Ties: on a hold-out of 13-21 samples the accuracy moves in steps of 1/n_hold, and every feature no
    tree uses, and most that few trees use, has I_j = 0 exactly. Features are ranked by the mean
    decrease in exact arithmetic (compared as integer counts of correct predictions, so that equal
    means stay equal whatever the rounding of the mean), then by the impurity importance of the same
    forest, then by index. ``scores_`` are the means I_j, ``impurity_importances_`` the forest's.
    On the five microarray sets with the defaults, the hold-out accuracy is 0.85-1 and at most one
    feature has I_j > 0 (a vote of 500 trees rarely changes when one of thousands of features is
    shuffled): the ranking is then, past its first place, the impurity importance of the forest grown
    on 75% of the training data.

    Defaults: ``n_estimators=500`` (see :class:`RFImportance`), ``n_repeats=10``, ``holdout_size=0.25``
    (13 of GLIOMA's 50 samples). Cost: 0.7-1.3 s on one core on each of the five sets, most of it
    the forest; the permutations' share grows with ``n_repeats`` and the number of splits, not with
    the number of features. scikit-learn's ``permutation_importance`` takes about 15 s for the first
    40 features of each set (0.04 s per prediction), so some half an hour for all of GLIOMA's.

    ``diagnostics_``: ``permutation_stratified``, ``permutation_n_holdout``, ``permutation_accuracy``
    (the forest's hold-out accuracy), ``permutation_n_used`` (features some split uses),
    ``permutation_n_positive`` (features with I_j > 0).
    """

    # a hold-out under 10% of a 50-sample set has fewer than 5 samples (accuracy steps of 20% or more);
    # above half, the forest learns from fewer samples than it is judged on
    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        "n_estimators": [N_TREES],
        # the mean's Monte Carlo error falls as 1 / sqrt(n_repeats), the cost grows linearly: 1,000
        # repeats resolve mean decreases far below one hold-out sample
        "n_repeats": [count(1, 1000)],
        "holdout_size": [real(0.1, 0.5, "both")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, n_features_to_select: int = 10, n_estimators: int = 500, n_repeats: int = 10,
                 holdout_size: float = 0.25, random_state: int | np.random.RandomState | None = None):
        super().__init__(n_features_to_select=n_features_to_select)
        self.n_estimators = n_estimators
        self.n_repeats = n_repeats
        self.holdout_size = holdout_size
        self.random_state = random_state

    def _fit(self, X, y, classes):
        seed = _seed(self.random_state)
        train, hold, stratified = holdout_split(y, float(self.holdout_size), seed)
        forest = grow(random_forest(int(self.n_estimators), seed), X[train], y[train])
        n_hold, R = hold.size, int(self.n_repeats)
        base, correct = permutation_correct(forest, X[hold], y[hold], _shuffles(seed, n_hold, R))
        # scikit-learn's arithmetic: accuracies k / n_hold, decreases, their mean over the repeats
        importances = base / n_hold - correct / n_hold
        scores = np.mean(importances, axis=1)
        impurity = forest.feature_importances_
        decrease = (base * R - correct.sum(axis=1)).astype(np.int64)
        self.ranking_ = np.lexsort((np.arange(X.shape[1]), -impurity, -decrease))
        self.impurity_importances_ = impurity
        self.diagnostics_ = {
            "permutation_stratified": stratified,
            "permutation_n_holdout": int(n_hold),
            "permutation_accuracy": base / n_hold,
            "permutation_n_used": int(np.count_nonzero(impurity)),
            "permutation_n_positive": int(np.count_nonzero(decrease > 0)),
        }
        return scores
