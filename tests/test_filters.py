"""The filter baselines (relieff, mrmr, ttest, chi2, infogain) against independent computations.

Every reference below is written here from the published definitions, as plain loops over
samples and features (slow and clear), or taken from scipy / scikit-learn; none reuses fsbench
code.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.feature_selection import chi2 as sklearn_chi2
from sklearn.metrics import mutual_info_score

import fsbench.selectors.relieff as relieff_module
from fsbench.selectors import make_selector, registry

FILTERS = ["relieff", "mrmr", "ttest", "chi2", "infogain"]


# ----------------------------------------------------------------------------- references
def ref_states(X, method="mean_std", factor=1.0, n_bins=3):
    """Discretization rules written out per value."""
    n, d = X.shape
    out = np.zeros((n, d), dtype=int)
    for j in range(d):
        col = [float(v) for v in X[:, j]]
        if method == "mean_std":
            mu, sd = statistics.mean(col), statistics.stdev(col)
            for i, v in enumerate(col):
                z = 0.0 if sd == 0 else (v - mu) / sd
                out[i, j] = 0 if z < -factor else (2 if z > factor else 1)
        else:
            for i, v in enumerate(col):
                smaller = sum(1 for w in col if w < v)
                out[i, j] = math.floor(n_bins * smaller / n)
    return out


def ref_entropy(labels):
    n = len(labels)
    return -sum(c / n * math.log2(c / n) for c in Counter(labels).values())


def ref_info_gain(states, y):
    """H(Y) - sum_u P(u) H(Y | u), in bits."""
    n = len(y)
    h_cond = 0.0
    for u in set(states):
        sub = [y[i] for i in range(n) if states[i] == u]
        h_cond += len(sub) / n * ref_entropy(sub)
    return ref_entropy(list(y)) - h_cond


def ref_mutual_info(a, b):
    n = len(a)
    pa, pb, pab = Counter(a), Counter(b), Counter(zip(a, b, strict=True))
    return sum(c / n * math.log2(c * n / (pa[u] * pb[v])) for (u, v), c in pab.items())


def ref_relieff(X, y, k, samples=None, nominal=None, weighting="prior"):
    """Robnik-Sikonja & Kononenko (2003, Fig. 3) with all instances or the given ones."""
    n, d = X.shape
    classes = sorted(set(y.tolist()))
    nominal = np.zeros(d, bool) if nominal is None else nominal
    span = X.max(0) - X.min(0)

    def diff(a, i, j):
        if span[a] == 0:
            return 0.0
        if nominal[a]:
            return float(X[i, a] != X[j, a])
        return abs(X[i, a] - X[j, a]) / span[a]

    prior = {c: float(np.mean(y == c)) for c in classes}
    rows = range(n) if samples is None else samples
    W = np.zeros(d)
    for i in rows:
        dist = {j: sum(diff(a, i, j) for a in range(d)) for j in range(n) if j != i}
        for c in classes:
            near = [j for _, j in sorted((dist[j], j) for j in dist if y[j] == c)[:k]]
            if not near:
                continue
            if c == y[i]:
                w = -1.0
            elif weighting == "prior":
                w = prior[c] / (1 - prior[y[i]])
            else:
                w = 1.0 / (len(classes) - 1)
            for a in range(d):
                W[a] += w * sum(diff(a, i, j) for j in near) / len(near)
    return W / len(rows)


def ref_chi2(states, y):
    n = len(y)
    rows, cols, cells = Counter(states), Counter(y), Counter(zip(states, y, strict=True))
    total = 0.0
    for u in rows:
        for c in cols:
            e = rows[u] * cols[c] / n
            total += (cells[(u, c)] - e) ** 2 / e
    return total


def informative(seed, n=60, d=12, c=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    rng.shuffle(y)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 5, size=d)
    X[:, : d // 3] += y[:, None] * rng.uniform(0.3, 1.5, size=d // 3)
    return X, y


# ----------------------------------------------------------------------------- registry
def test_all_five_registered_with_documented_parameters():
    reg = registry()
    for name in FILTERS:
        info = reg[name]
        assert info.params["n_features_to_select"] == 10
        assert info.summary
        est = make_selector(name, {"n_features_to_select": 3})
        assert clone(est).get_params() == est.get_params()
    assert reg["relieff"].params["n_neighbors"] == 10
    assert reg["relieff"].params["discrete_threshold"] == 0
    assert reg["mrmr"].params["discretize"] == "mean_std"


@pytest.mark.parametrize("name,params", [
    ("relieff", {"n_neighbors": 0}), ("relieff", {"miss_weighting": "equal"}),
    ("relieff", {"n_samples": 0}), ("mrmr", {"criterion": "mif"}), ("mrmr", {"n_ranked": 0}),
    ("chi2", {"discretize": "kmeans"}), ("infogain", {"discretize": "quantile", "n_bins": 1}),
    ("infogain", {"std_factor": -1.0}),
])
def test_bad_parameters_name_the_parameter(name, params):
    X, y = informative(0)
    with pytest.raises(ValueError, match=list(params)[-1]):
        make_selector(name, params).fit(X, y)


def test_selectors_transform_keeps_the_top_k():
    X, y = informative(1)
    for name in FILTERS:
        sel = make_selector(name, {"n_features_to_select": 4}).fit(X, y)
        np.testing.assert_array_equal(sel.transform(X), X[:, np.sort(sel.ranking_[:4])])
        assert sorted(sel.ranking_) == list(range(X.shape[1]))


# ----------------------------------------------------------------------------- discretization
def test_discretization_hand_worked():
    # x = 1, 2, 3, 4, 10: mean 4, sample std sqrt(50/4) = 3.536; z = -0.85 -0.57 -0.28 0 1.70
    x = np.array([[1.0], [2.0], [3.0], [4.0], [10.0]])
    y = np.array([0, 0, 1, 1, 1])
    h_y = -(0.4 * math.log2(0.4) + 0.6 * math.log2(0.6))
    np.testing.assert_array_equal(ref_states(x)[:, 0], [1, 1, 1, 1, 2])
    # factor 1: states 1 1 1 1 2 -> H(Y | X) = 4/5 H(1/2) + 1/5 * 0 = 0.8
    assert make_selector("infogain").fit(x, y).scores_[0] == pytest.approx(h_y - 0.8, abs=1e-12)
    # factor 0.5: states 0 0 1 1 2, every state pure -> IG = H(Y)
    sel = make_selector("infogain", {"std_factor": 0.5}).fit(x, y)
    assert sel.scores_[0] == pytest.approx(h_y, abs=1e-12)
    # quantile, x = 5 1 1 3 9 7, n_bins 3: r = 3 0 0 2 5 4 -> floor(3 r / 6) = 1 0 0 1 2 2
    xq = np.array([[5.0], [1.0], [1.0], [3.0], [9.0], [7.0]])
    np.testing.assert_array_equal(ref_states(xq, "quantile", n_bins=3)[:, 0], [1, 0, 0, 1, 2, 2])
    yq = np.array([1, 0, 0, 1, 2, 2])               # the class equals the state: IG = H(Y)
    sel = make_selector("infogain", {"discretize": "quantile", "n_bins": 3}).fit(xq, yq)
    assert sel.scores_[0] == pytest.approx(math.log2(3), abs=1e-12)


@pytest.mark.parametrize("method", ["mean_std", "quantile"])
def test_discretization_matches_rules_written_out(method):
    from fsbench.selectors._discretize import discretize

    rng = np.random.default_rng(3)
    X = rng.normal(size=(37, 9))
    X[:, 0] = np.round(X[:, 0])                     # ties
    X[:, 1] = 4.0                                   # constant
    for factor, bins in [(1.0, 3), (0.5, 4), (0.0, 5)]:
        codes, n_states = discretize(X, method, factor, bins)
        np.testing.assert_array_equal(codes, ref_states(X, method, factor, bins))
        assert n_states == (3 if method == "mean_std" else bins)


# ----------------------------------------------------------------------------- infogain, chi2
@pytest.mark.parametrize("method", ["mean_std", "quantile"])
def test_infogain_and_chi2_match_loops_sklearn_and_scipy(method):
    X, y = informative(4, n=50, d=10, c=4)
    params = {"discretize": method, **({"n_bins": 4} if method == "quantile" else {})}
    states = ref_states(X, method, 1.0, 4)
    ig = make_selector("infogain", params).fit(X, y).scores_
    chi = make_selector("chi2", params).fit(X, y).scores_
    for j in range(X.shape[1]):
        col = states[:, j].tolist()
        assert ig[j] == pytest.approx(ref_info_gain(col, y.tolist()), abs=1e-12)
        assert ig[j] == pytest.approx(mutual_info_score(col, y) / math.log(2), abs=1e-12)
        assert chi[j] == pytest.approx(ref_chi2(col, y.tolist()), rel=1e-12)
        table = np.array([[np.sum((states[:, j] == u) & (y == c)) for c in range(4)]
                          for u in np.unique(states[:, j])])
        assert chi[j] == pytest.approx(stats.chi2_contingency(table, correction=False)[0], rel=1e-12)
        # scikit-learn's chi2 on the one-hot states, summed over states, is the same statistic
        onehot = (states[:, [j]] == np.unique(states[:, j])).astype(float)
        assert chi[j] == pytest.approx(sklearn_chi2(onehot, y)[0].sum(), rel=1e-12)


def test_chi2_and_infogain_hand_worked_table():
    # states 0 0 1 1 vs classes 0 0 1 1: O = [[2, 0], [0, 2]], E = 1 everywhere -> chi2 = 4
    X = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0], [4.0, 4.0]])
    y = np.array([0, 0, 1, 1])
    p = {"discretize": "quantile", "n_bins": 2}
    np.testing.assert_allclose(make_selector("chi2", p).fit(X, y).scores_, [4.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(make_selector("infogain", p).fit(X, y).scores_, [1.0, 0.0], atol=1e-12)


# ----------------------------------------------------------------------------- ttest
def test_ttest_hand_worked():
    # class A {1, 3}: mean 2, s^2 2; class B {5, 6, 7}: mean 6, s^2 1
    # Welch se^2 = 2/2 + 1/3 = 4/3 -> |t| = 4 / sqrt(4/3) = 2 sqrt(3)
    # pooled s^2 = (2 + 2) / 3 = 4/3, se^2 = 4/3 (1/2 + 1/3) = 10/9 -> |t| = 12 / sqrt(10)
    X = np.array([[1, 0, 7, 0], [3, 0, 7, 0], [5, 0, 7, 1], [6, 0, 7, 1], [7, 1, 7, 1]], dtype=float)
    y = np.array([0, 0, 1, 1, 1])
    welch = make_selector("ttest").fit(X, y).scores_
    assert welch[0] == pytest.approx(2 * math.sqrt(3), rel=1e-12)
    assert welch[2] == 0.0                                   # constant feature
    assert welch[3] == np.inf                                # constant within, different between
    student = make_selector("ttest", {"equal_var": True}).fit(X, y).scores_
    assert student[0] == pytest.approx(12 / math.sqrt(10), rel=1e-12)


@pytest.mark.parametrize("equal_var", [False, True])
def test_ttest_two_classes_is_scipy_ttest_ind(equal_var):
    X, y = informative(5, n=41, d=15, c=2)
    scores = make_selector("ttest", {"equal_var": equal_var}).fit(X, y).scores_
    t = stats.ttest_ind(X[y == 0], X[y == 1], equal_var=equal_var).statistic
    np.testing.assert_allclose(scores, np.abs(t), rtol=1e-12)


def test_ttest_multiclass_is_max_one_vs_rest_scipy():
    X, y = informative(6, n=45, d=15, c=4)
    X += 1e3                                                  # cancellation would show here
    sel = make_selector("ttest").fit(X, y)
    t = np.array([stats.ttest_ind(X[y == k], X[y != k], equal_var=False).statistic for k in range(4)])
    np.testing.assert_allclose(sel.tstats_, t, rtol=1e-9)
    np.testing.assert_allclose(sel.scores_, np.abs(t).max(axis=0), rtol=1e-9)


# ----------------------------------------------------------------------------- relieff
def test_relieff_hand_worked():
    # distances: d01 1.1, d02 1.2, d03 1.8, d12 1.7, d13 0.9, d23 0.8 (ranges are 1)
    # k = 1: (hit, miss) = 0: (1, 2), 1: (0, 3), 2: (3, 0), 3: (2, 1)
    # feature 0: (-0.1 + 1) + (-0.1 + 0.8) + (-0.1 + 1) + (-0.1 + 0.8) = 3.2 -> 0.8
    # feature 1: (-1 + 0.2) + (-1 + 0.1) + (-0.7 + 0.2) + (-0.7 + 0.1) = -2.8 -> -0.7
    X = np.array([[0, 0], [0.1, 1], [1, 0.2], [0.9, 0.9]])
    y = np.array([0, 0, 1, 1])
    scores = make_selector("relieff", {"n_neighbors": 1}).fit(X, y).scores_
    np.testing.assert_allclose(scores, [0.8, -0.7], atol=1e-12)


@pytest.mark.parametrize("case", range(6))
def test_relieff_matches_loop_implementation(case, monkeypatch):
    rng = np.random.default_rng(100 + case)
    sizes = [[9, 12, 7], [3, 15, 11, 2], [20, 21], [1, 8, 9], [6, 6, 6, 6], [13, 4, 9]][case]
    y = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(y)
    n, d = y.size, 7
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d)
    X[:, 0] += y
    X[:, 1] = rng.integers(0, 3, size=n)                     # nominal when asked
    X[:, 2] = 5.0                                            # constant
    k = [3, 10, 5, 4, 2, 6][case]
    weighting = ["prior", "uniform"][case % 2]
    if case % 3 == 1:                                        # force small blocks, full rows
        monkeypatch.setattr(relieff_module, "_MAX_BLOCK_ROWS", 4)
        monkeypatch.setattr(relieff_module, "_UPPER_MAX_BYTES", 0)
    elif case % 3 == 2:                                      # small blocks, upper-triangle tiles
        monkeypatch.setattr(relieff_module, "_MAX_BLOCK_ROWS", 5)
    params = {"n_neighbors": k, "miss_weighting": weighting}
    np.testing.assert_allclose(make_selector("relieff", params).fit(X, y).scores_,
                               ref_relieff(X, y, k, weighting=weighting), atol=1e-12)
    nominal = np.zeros(d, bool)
    nominal[1] = True
    sel = make_selector("relieff", {**params, "discrete_threshold": 3}).fit(X, y)
    np.testing.assert_array_equal(sel.nominal_, nominal | (np.arange(d) == 2))
    np.testing.assert_allclose(sel.scores_, ref_relieff(X, y, k, nominal=nominal, weighting=weighting),
                               atol=1e-12)
    m = n // 2
    sel = make_selector("relieff", {**params, "n_samples": m, "random_state": case}).fit(X, y)
    samples = np.random.RandomState(case).choice(n, size=m, replace=False)
    np.testing.assert_allclose(sel.scores_, ref_relieff(X, y, k, samples=samples, weighting=weighting),
                               atol=1e-12)


def test_relieff_distance_ties_go_to_the_lower_index():
    # values in {0, 1, 2}: every diff is 0, 1/2 or 1, so distance ties are exact
    rng = np.random.default_rng(7)
    X = rng.integers(0, 3, size=(40, 5)).astype(float)
    X[-5:] = X[:5]                                           # duplicated samples
    y = rng.integers(0, 3, size=40)
    for k in (1, 3, 8):
        np.testing.assert_allclose(make_selector("relieff", {"n_neighbors": k}).fit(X, y).scores_,
                                   ref_relieff(X, y, k), atol=1e-12)


def test_relieff_invariances():
    X, y = informative(8, n=50, d=9, c=3)
    base = make_selector("relieff").fit(X, y).scores_
    perm = np.random.default_rng(0).permutation(9)
    np.testing.assert_allclose(make_selector("relieff").fit(X[:, perm], y).scores_, base[perm], atol=1e-12)
    scaled = X * np.array([1e-3, 7, -2, 1, 1, 1e4, 1, -1, 3]) + 100
    np.testing.assert_allclose(make_selector("relieff").fit(scaled, y).scores_, base, atol=1e-12)
    rows = np.random.default_rng(1).permutation(50)         # order of the samples is irrelevant
    np.testing.assert_allclose(make_selector("relieff").fit(X[rows], y[rows]).scores_, base, atol=1e-12)


# ----------------------------------------------------------------------------- mrmr
def ref_mrmr_check(X, y, sel, criterion, method, n_bins=3, eps=1e-4):
    """Each incremental pick maximizes the criterion (within 1e-12), with loop-computed MI."""
    states = ref_states(X, method, 1.0, n_bins)
    cols = [states[:, j].tolist() for j in range(X.shape[1])]
    rel = [ref_mutual_info(c, y.tolist()) for c in cols]
    np.testing.assert_allclose(sel.relevance_, rel, atol=1e-12)
    picks = list(sel.ranking_[: sel.criterion_.size])
    assert rel[picks[0]] == pytest.approx(max(rel), abs=1e-12)
    for m in range(1, len(picks)):
        chosen = picks[:m]

        def crit(j, chosen=chosen):
            red = sum(ref_mutual_info(cols[j], cols[i]) for i in chosen) / len(chosen)
            return rel[j] - red if criterion == "mid" else rel[j] / (red + eps)

        values = {j: crit(j) for j in range(X.shape[1]) if j not in chosen}
        assert values[picks[m]] == pytest.approx(sel.criterion_[m], rel=1e-10, abs=1e-12)
        assert values[picks[m]] >= max(values.values()) - 1e-12
    rest = sel.ranking_[len(picks):]
    assert np.all(np.diff(np.asarray(rel)[rest]) <= 0)


@pytest.mark.parametrize("criterion,method", [("mid", "mean_std"), ("miq", "mean_std"),
                                              ("mid", "quantile"), ("miq", "quantile")])
def test_mrmr_greedy_steps_match_loop_mutual_information(criterion, method):
    X, y = informative(9, n=48, d=14, c=3)
    bins = {"n_bins": 4} if method == "quantile" else {}  # n_bins is for quantile only
    sel = make_selector("mrmr", {"criterion": criterion, "discretize": method, **bins,
                                 "n_ranked": 8}).fit(X, y)
    assert sel.criterion_.size == 10 and sel.diagnostics_["mrmr_n_incremental"] == 10
    ref_mrmr_check(X, y, sel, criterion, method, n_bins=4)


def test_mrmr_hand_worked_duplicate_is_redundant():
    # y = 2 b1 + b2; f0 = b1, f1 = copy of f0, f2 = b2, f3 independent of y.
    # I(f0; y) = I(f1; y) = I(f2; y) = 1 bit, I(f3; y) = 0, I(f0; f1) = 1, I(f0; f2) = 0.
    # MID: f0 (tie, lower index); then f1: 1 - 1 = 0, f2: 1 - 0 = 1 -> f2;
    # then f1: 1 - (1 + 0)/2 = 0.5, f3: 0 -> f1, f3.
    b1 = np.array([0, 0, 0, 0, 1, 1, 1, 1.0])
    b2 = np.array([0, 0, 1, 1, 0, 0, 1, 1.0])
    f3 = np.array([0, 1, 0, 1, 0, 1, 0, 1.0])
    X = np.column_stack([b1, b1, b2, f3])
    y = (2 * b1 + b2).astype(int)
    p = {"discretize": "quantile", "n_bins": 2, "n_ranked": 4}
    mid = make_selector("mrmr", p).fit(X, y)
    np.testing.assert_array_equal(mid.ranking_, [0, 2, 1, 3])
    np.testing.assert_allclose(mid.criterion_, [1.0, 1.0, 0.5, 0.0], atol=1e-12)
    miq = make_selector("mrmr", {**p, "criterion": "miq"}).fit(X, y)
    np.testing.assert_array_equal(miq.ranking_, [0, 2, 1, 3])
    np.testing.assert_allclose(miq.criterion_, [1.0, 1e4, 1 / 0.5001, 0.0], rtol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_mrmr_never_takes_both_copies_before_a_distinct_informative_feature(seed):
    rng = np.random.default_rng(seed)
    n = 120
    b1, b2 = rng.integers(0, 2, n), rng.integers(0, 2, n)
    y = 2 * b1 + b2
    X = rng.normal(size=(n, 20))
    X[:, 3] = b1 + 0.3 * rng.normal(size=n)
    X[:, 11] = X[:, 3]                                       # exact copy
    X[:, 7] = b2 + 0.3 * rng.normal(size=n)                  # distinct, informative
    for criterion in ("mid", "miq"):
        for method in ("mean_std", "quantile"):
            r = list(make_selector("mrmr", {"criterion": criterion, "discretize": method,
                                            "n_ranked": 20}).fit(X, y).ranking_)
            assert r.index(7) < max(r.index(3), r.index(11)), (criterion, method, r[:5])


def test_mrmr_ranking_length_pool_and_invariances():
    X, y = informative(10, n=60, d=30, c=3)
    sel = make_selector("mrmr", {"n_features_to_select": 12, "n_ranked": 5}).fit(X, y)
    assert sel.criterion_.size == 12                         # max(n_features_to_select, n_ranked)
    assert sorted(sel.ranking_) == list(range(30))
    np.testing.assert_array_equal(np.argsort(-sel.scores_, kind="stable"), sel.ranking_)
    pooled = make_selector("mrmr", {"n_ranked": 20, "pool_size": 6}).fit(X, y)
    top6 = set(np.argsort(-pooled.relevance_, kind="stable")[:6])
    assert set(pooled.ranking_[:6]) == top6 and pooled.criterion_.size == 6
    # scaling, shifting and flipping features leaves the discretized problem unchanged
    scaled = X * np.linspace(-3, 1e3, 30) + 5
    scaled[:, 0] = X[:, 0] * 1e-4
    again = make_selector("mrmr", {"n_features_to_select": 12, "n_ranked": 5}).fit(scaled, y)
    np.testing.assert_array_equal(again.ranking_[:12], sel.ranking_[:12])
    np.testing.assert_allclose(again.relevance_, sel.relevance_, atol=1e-12)


# ----------------------------------------------------------------------------- shared properties
@pytest.mark.parametrize("name", ["ttest", "chi2", "infogain"])
def test_feature_permutation_permutes_scores_and_scale_is_irrelevant(name):
    X, y = informative(11, n=40, d=10, c=3)
    base = make_selector(name).fit(X, y).scores_
    perm = np.random.default_rng(2).permutation(10)
    np.testing.assert_allclose(make_selector(name).fit(X[:, perm], y).scores_, base[perm], rtol=1e-12)
    scale = np.array([1e-3, 2, -5, 1, 1e3, 1, -1, 3, 0.5, 10.0])
    np.testing.assert_allclose(make_selector(name).fit(X * scale + 7, y).scores_, base, rtol=1e-9)


def test_mrmr_feature_permutation_permutes_the_ranking():
    X, y = informative(12, n=80, d=25, c=3)
    p = {"discretize": "quantile", "n_bins": 5, "n_ranked": 25}
    base = make_selector("mrmr", p).fit(X, y)
    assert np.unique(np.round(base.relevance_, 12)).size == 25       # no ties to break by index
    perm = np.random.default_rng(3).permutation(25)
    moved = make_selector("mrmr", p).fit(X[:, perm], y)
    np.testing.assert_array_equal(perm[moved.ranking_], base.ranking_)
