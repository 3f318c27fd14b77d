"""SURF, SURF*, MultiSURF and MultiSURF* against a brute force of their definition and skrebate 0.8.4.

The reference below is the definition of the module docstring of ``fsbench.selectors.surf``
written as plain loops over instances and features (slow and clear), in exact rational
arithmetic where asked, so that a distance exactly on a threshold is decided exactly. Its
keyword switches reproduce skrebate's conventions one at a time; each comparison with skrebate
turns on only the switches of the stated differences, and shows that without them the results
differ. Nothing here reuses fsbench code.
"""

from __future__ import annotations

import math
import tracemalloc
import warnings
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import fsbench.selectors.surf as surf_module
from fsbench.selectors import make_selector, registry

METHODS = ["surf", "surfstar", "multisurf", "multisurfstar"]
STAR = {"surfstar", "multisurfstar"}
MEAN = {"surf", "surfstar"}


# ----------------------------------------------------------------------------- the reference
def ref_surf(X, y, method, *, nominal=None, weighting="prior", exact=True, self_in_mean=False,
             far_form="opposite", ramp=False, nominal_scale=False):
    """The weights W_A, the near and far set sizes, and the number of distances exactly on a threshold.

    SURF / SURF*: T = mean of d(i, j) over the n(n - 1) ordered pairs i != j (``self_in_mean``:
    over all n^2 entries, the zero self-distances included, as skrebate). MultiSURF(*): near if
    d < mu_i - sigma_i / 2, far if d > mu_i + sigma_i / 2, mu_i and sigma_i (population) over the
    n - 1 other instances. S_i = -mean diff over the hits + sum_C w(C) mean diff over the misses
    of class C, over the miss classes K present; w(C) = P(C) / sum_K P ("prior"), 1/|K|
    ("uniform") or skrebate's (c - 1)(m_C / m)^2 ("rebate"). W = 1/n sum_i S_i(near) - S_i(far)
    (``far_form="one_minus"``: + S_i(far) computed with 1 - diff, as skrebate's MultiSURF*).
    ``ramp``: with nominal and numeric features mixed, a numeric diff is 1 when the raw
    difference exceeds the feature's (population) standard deviation; ``nominal_scale``: with
    mixed features, a mismatch counts d / d_nominal in the distance (both skrebate's).
    """
    n, d = X.shape
    y = [int(v) for v in y]
    nominal = [False] * d if nominal is None else [bool(v) for v in nominal]
    num = (lambda v: Fraction(float(v))) if exact else float
    x = [[num(v) for v in row] for row in X]
    lo = [min(x[i][a] for i in range(n)) for a in range(d)]
    span = [max(x[i][a] for i in range(n)) - lo[a] for a in range(d)]
    sd = [num(np.std(X[:, a])) for a in range(d)]
    n_nom = sum(nominal)
    mixed = 0 < n_nom < d
    scale = (Fraction(d, n_nom) if exact else d / n_nom) if (nominal_scale and mixed) else 1

    def diff(a, i, j):
        if nominal[a]:
            return int(x[i][a] != x[j][a])
        if span[a] == 0:
            return 0
        raw = abs(x[i][a] - x[j][a])
        if ramp and mixed and raw > sd[a]:
            return 1
        return raw / span[a]

    def dist(i, j):
        s = sum(abs(x[i][a] - x[j][a]) / span[a] for a in range(d) if not nominal[a] and span[a] != 0)
        return s + scale * sum(x[i][a] != x[j][a] for a in range(d) if nominal[a])

    D = [[dist(i, j) for j in range(n)] for i in range(n)]
    others = [[j for j in range(n) if j != i] for i in range(n)]
    ties = 0
    if method in MEAN:
        total = sum(D[i][j] for i in range(n) for j in others[i])
        T = total / (n * n if self_in_mean else n * (n - 1))
        near = [[j for j in others[i] if D[i][j] < T] for i in range(n)]
        far = [[j for j in others[i] if D[i][j] > T] for i in range(n)]
        ties = sum(D[i][j] == T for i in range(n) for j in others[i])
    else:
        near, far = [], []
        for i in range(n):
            mu = sum(D[i][j] for j in others[i]) / (n - 1)
            var = sum((D[i][j] - mu) ** 2 for j in others[i]) / (n - 1)
            if exact:   # d < mu - sigma/2  <=>  mu - d > 0 and 4 (mu - d)^2 > var; likewise far
                near.append([j for j in others[i] if mu - D[i][j] > 0 and 4 * (mu - D[i][j]) ** 2 > var])
                far.append([j for j in others[i] if D[i][j] - mu > 0 and 4 * (D[i][j] - mu) ** 2 > var])
                ties += sum(4 * (mu - D[i][j]) ** 2 == var for j in others[i])
            else:
                sigma = math.sqrt(var)
                near.append([j for j in others[i] if D[i][j] < mu - sigma / 2])
                far.append([j for j in others[i] if D[i][j] > mu + sigma / 2])
    if method not in STAR:
        far = [[] for _ in range(n)]
    prior = Counter(y)
    classes = sorted(prior)
    one = Fraction(1) if exact else 1.0

    def S(i, members, f):
        """S_i(A) for every feature A over the set ``members`` of target i."""
        hits = [j for j in members if y[j] == y[i]]
        by = {c: [j for j in members if y[j] == c] for c in classes if c != y[i]}
        K = [c for c in by if by[c]]
        m = sum(len(by[c]) for c in K)
        w = {}
        for c in K:
            if weighting == "prior":
                w[c] = one * prior[c] / sum(prior[k] for k in K)
            elif weighting == "uniform":
                w[c] = one / len(K)
            else:
                w[c] = (len(classes) - 1) * (one * len(by[c]) / m) ** 2
        out = []
        for a in range(d):
            total = 0
            if hits:
                total -= sum(f(a, i, j) for j in hits) / (one * len(hits))
            for c in K:
                total += w[c] * sum(f(a, i, j) for j in by[c]) / len(by[c])
            out.append(total)
        return out

    W = [0] * d
    for i in range(n):
        for a, v in enumerate(S(i, near[i], diff)):
            W[a] += v
        if far[i] and far_form == "opposite":
            for a, v in enumerate(S(i, far[i], diff)):
                W[a] -= v
        elif far[i]:
            for a, v in enumerate(S(i, far[i], lambda a, i, j: 1 - diff(a, i, j))):
                W[a] += v
    scores = np.array([float(w / (n * one)) for w in W])
    return scores, np.array([len(s) for s in near]), np.array([len(s) for s in far]), ties


def skrebate_scores(method, X, y, **kw):
    from skrebate import SURF, MultiSURF, MultiSURFstar, SURFstar
    cls = {"surf": SURF, "surfstar": SURFstar, "multisurf": MultiSURF, "multisurfstar": MultiSURFstar}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(n_jobs=1, **kw).fit(X, y).feature_importances_


SKREBATE = {  # skrebate's conventions, per method: the switches of ref_surf
    "surf": {"self_in_mean": True},
    "surfstar": {"self_in_mean": True},
    "multisurf": {},
    "multisurfstar": {"far_form": "one_minus"},
}


def ours(method, X, y, **params):
    return make_selector(method, params).fit(X, y)


def data(seed, n=36, d=9, sizes=None, scale=True):
    rng = np.random.default_rng(seed)
    sizes = sizes or [n // 2, n - n // 2]
    y = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(y)
    X = rng.normal(size=(y.size, d)) * (rng.uniform(0.2, 5, size=d) if scale else 1)
    X[:, : max(1, d // 3)] += y[:, None] * rng.uniform(0.3, 1.5, size=max(1, d // 3))
    return X, y


# ----------------------------------------------------------------------------- registry
def test_registered_with_documented_parameters():
    reg = registry()
    for name in METHODS:
        info = reg[name]
        assert info.params == {"n_features_to_select": 10, "discrete_threshold": 0, "miss_weighting": "prior"}
        assert info.summary and info.cls.__doc__
    assert {reg[m].cls.__name__ for m in METHODS} == {"SURF", "SURFStar", "MultiSURF", "MultiSURFStar"}


# ----------------------------------------------------------------------------- by hand
def test_hand_worked():
    # ranges 1; d01 1.1, d02 1.2, d03 1.8, d12 1.7, d13 0.9, d23 0.8; T = 7.5 / 6 = 1.25
    # SURF near (hit, miss): 0 (1, 2), 1 (0, 3), 2 (3, 0), 3 (2, 1); far: 0 {3}, 1 {2}, 2 {1}, 3 {0}, all misses
    # near, feature 0: (-.1 + 1) + (-.1 + .8) + (-.1 + 1) + (-.1 + .8) = 3.2; feature 1: -.8 - .9 - .5 - .6 = -2.8
    # far misses, feature 0: .9 + .9 + .9 + .9 = 3.6; feature 1: .9 + .8 + .8 + .9 = 3.4
    # MultiSURF thresholds mu - sigma/2: 1.2121, 1.0634, 1.0492, 0.9418 -> near 0 {1, 2}, 1 {3}, 2 {3}, 3 {1, 2}
    # feature 0: (-.1 + 1) + .8 - .1 + (-.1 + .8) = 2.3; feature 1: (-1 + .2) + .1 - .7 + (-.7 + .1) = -2.0
    # MultiSURF* far (mu + sigma/2 = 1.521, 1.403, 1.417, 1.391): 0 {3}, 1 {2}, 2 {1}, 3 {0}, as SURF*
    X = np.array([[0, 0], [0.1, 1], [1, 0.2], [0.9, 0.9]])
    y = np.array([0, 0, 1, 1])
    expect = {"surf": [0.8, -0.7], "surfstar": [(3.2 - 3.6) / 4, (-2.8 - 3.4) / 4],
              "multisurf": [2.3 / 4, -2.0 / 4], "multisurfstar": [(2.3 - 3.6) / 4, (-2.0 - 3.4) / 4]}
    for method, want in expect.items():
        sel = ours(method, X, y)
        np.testing.assert_allclose(sel.scores_, want, atol=1e-12)
    np.testing.assert_allclose(ours("multisurf", X, y).near_threshold_, [1.2121, 1.0634, 1.0492, 0.9418], atol=1e-4)
    np.testing.assert_array_equal(ours("surfstar", X, y).n_far_, [1, 1, 1, 1])


# ----------------------------------------------------------------------------- the definition
CASES = [  # class sizes, features, miss weighting, block sizes forced small
    ([9, 12, 7], 7, "prior", False), ([3, 15, 11, 2], 6, "uniform", True), ([14, 13], 8, "prior", True),
    ([2, 8, 9], 5, "prior", False), ([6, 6, 6, 6], 6, "uniform", False), ([2, 3], 12, "prior", True),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_the_definition(case, monkeypatch):
    sizes, d, weighting, small = CASES[case]
    X, y = data(200 + case, d=d, sizes=sizes)
    X[:, 1] = np.random.default_rng(case).integers(0, 3, size=y.size)   # nominal when asked
    X[:, 2] = 5.0                                                          # constant
    if small:   # blocks of 2 rows, chunks of 5 differences, distances not kept
        monkeypatch.setattr(surf_module, "_BLOCK_ELEMENTS", 2 * y.size)
        monkeypatch.setattr(surf_module, "_CHUNK_ELEMENTS", 5)
        monkeypatch.setattr(surf_module, "_KEEP_ELEMENTS", 0)
    nominal = np.zeros(d, bool)
    nominal[1] = True
    for method in METHODS:
        for threshold, mask in ((0, None), (3, nominal)):
            sel = ours(method, X, y, miss_weighting=weighting, discrete_threshold=threshold)
            want, n_near, n_far, _ = ref_surf(X, y, method, nominal=mask, weighting=weighting)
            np.testing.assert_allclose(sel.scores_, want, atol=1e-12, err_msg=f"{method} {threshold}")
            np.testing.assert_array_equal(sel.n_near_, n_near)
            if method in STAR:
                np.testing.assert_array_equal(sel.n_far_, n_far)
            assert sel.scores_[2] == 0.0
            assert sorted(sel.ranking_) == list(range(d))
        np.testing.assert_array_equal(sel.nominal_, nominal | (np.arange(d) == 2))


def test_more_features_than_samples():
    X, y = data(5, n=12, d=40, sizes=[5, 7])
    for method in METHODS:
        np.testing.assert_allclose(ours(method, X, y).scores_, ref_surf(X, y, method)[0], atol=1e-12)


def test_a_distance_exactly_on_a_threshold_is_neither_near_nor_far():
    # values in {0, 1, 2}: every diff is 0, 1/2 or 1, and with n - 1 = 8 every mean and
    # variance is exact in binary; these seeds put distances exactly on the thresholds
    checked = Counter()
    for seed in (4, 12, 28, 51):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 3, size=(9, 4)).astype(float)
        y = np.arange(9) % 3
        for method in METHODS:
            want, n_near, n_far, ties = ref_surf(X, y, method)
            sel = ours(method, X, y)
            np.testing.assert_array_equal(sel.n_near_, n_near)
            if method in STAR:
                np.testing.assert_array_equal(sel.n_far_, n_far)
            np.testing.assert_allclose(sel.scores_, want, atol=1e-12)
            checked[method] += ties
    assert min(checked.values()) > 0, checked      # every method met exact ties


def test_distances_and_thresholds_are_the_stated_sequential_sums(monkeypatch):
    """Thresholds are bit for bit those of plain Python loops in the order the docstring states
    (so the same on every machine), whatever the block and chunk sizes."""
    X, y = data(11, n=17, d=9, sizes=[5, 6, 6])
    X[:, 4] = np.random.default_rng(1).integers(0, 4, size=17)
    n = 17
    lo, span = X.min(0), X.max(0) - X.min(0)
    numeric = [a for a in range(9) if a != 4]
    xn = (X - lo) / span                   # elementwise, as a Python loop over floats would
    D = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            s = 0.0
            for a in numeric:
                s += abs(float(xn[i, a]) - float(xn[j, a]))
            D[i][j] = s + float(X[i, 4] != X[j, 4])
    rows = []
    for i in range(n):
        r = 0.0
        for j in range(n):
            r += D[i][j]
        rows.append(r)
    total = 0.0
    for r in rows:
        total += r
    mean_t = total / (n * (n - 1.0))
    inst_near, inst_far = [], []
    for i in range(n):
        mu = rows[i] / (n - 1)
        v = 0.0
        for j in range(n):
            if j != i:
                v += (D[i][j] - mu) * (D[i][j] - mu)
        sigma = math.sqrt(v / (n - 1))
        inst_near.append(mu - sigma / 2)
        inst_far.append(mu + sigma / 2)
    for sizes in ((None, None, None, None), (n, 3, 0, 1), (3 * n, 1, 10**9, 10**9)):
        with monkeypatch.context() as m:
            names = ("_BLOCK_ELEMENTS", "_CHUNK_ELEMENTS", "_KEEP_ELEMENTS", "_WIDE")
            for name, value in zip(names, sizes, strict=True):
                if value is not None:
                    m.setattr(surf_module, name, value)
            s = ours("surfstar", X, y, discrete_threshold=4)
            assert s.nominal_[4] and s.nominal_.sum() == 1
            np.testing.assert_array_equal(s.near_threshold_, np.full(n, mean_t))
            np.testing.assert_array_equal(s.far_threshold_, np.full(n, mean_t))
            s = ours("multisurfstar", X, y, discrete_threshold=4)
            np.testing.assert_array_equal(s.near_threshold_, inst_near)
            np.testing.assert_array_equal(s.far_threshold_, inst_far)


def test_block_and_chunk_sizes_change_no_bit(monkeypatch):
    X, y = data(3, n=41, d=13, sizes=[10, 20, 11])
    X[:, 5] = X[:, 0]                                          # a duplicated feature
    X[:, 6] = np.round(X[:, 6])
    base = {m: ours(m, X, y, discrete_threshold=8).scores_ for m in METHODS}
    # one row per block, or three, or ten; chunks of 1 to 50 differences; the distances kept or
    # not; each sum a prefix sum or vectorized additions
    for block, chunk, keep, wide in ((41, 1, 0, 1), (3 * 41, 7, 10**9, 10**9), (10 * 41, 50, 0, 4)):
        monkeypatch.setattr(surf_module, "_BLOCK_ELEMENTS", block)
        monkeypatch.setattr(surf_module, "_CHUNK_ELEMENTS", chunk)
        monkeypatch.setattr(surf_module, "_KEEP_ELEMENTS", keep)
        monkeypatch.setattr(surf_module, "_WIDE", wide)
        for m in METHODS:
            np.testing.assert_array_equal(ours(m, X, y, discrete_threshold=8).scores_, base[m])


# ----------------------------------------------------------------------------- edge cases
def test_edge_cases():
    X, y = data(21, n=30, d=8, sizes=[2, 28])                 # a class of two samples
    X[:, 3] = X[:, 1]                                          # duplicated features tie exactly ...
    X[:, 6] = -7.5                                             # constant: weight 0
    X[:, 7] = X[:, 0] * 3 + 1                                  # an affine copy ties too
    for method in METHODS:
        sel = ours(method, X, y)
        np.testing.assert_allclose(sel.scores_, ref_surf(X, y, method)[0], atol=1e-12)
        assert sel.scores_[1] == sel.scores_[3] and sel.scores_[6] == 0.0
        rank = list(sel.ranking_)
        assert sorted(rank) == list(range(8)) and rank.index(1) < rank.index(3)   # ... to the lower index
        again = ours(method, X, y)
        np.testing.assert_array_equal(again.scores_, sel.scores_)                  # deterministic
        np.testing.assert_array_equal(again.ranking_, sel.ranking_)
    flat = np.ones((6, 4))                                     # nothing differs: no neighbours at all
    for method in METHODS:
        sel = ours(method, flat, np.array([0, 1, 0, 1, 0, 1]))
        np.testing.assert_array_equal(sel.scores_, np.zeros(4))
        np.testing.assert_array_equal(sel.ranking_, np.arange(4))
        assert sel.n_near_.sum() == 0
    two = np.array([[0.0, 1.0], [1.0, 0.0]])                   # two instances: mu = d, sigma = 0
    for method in METHODS:
        np.testing.assert_array_equal(ours(method, two, np.array([0, 1])).scores_, [0.0, 0.0])


def test_invariances():
    X, y = data(8, n=40, d=9, sizes=[12, 15, 13])
    for method in METHODS:
        base = ours(method, X, y).scores_
        perm = np.random.default_rng(0).permutation(9)
        np.testing.assert_allclose(ours(method, X[:, perm], y).scores_, base[perm], atol=1e-12)
        scaled = X * np.array([1e-3, 7, -2, 1, 1, 1e4, 1, -1, 3]) + 100
        np.testing.assert_allclose(ours(method, scaled, y).scores_, base, atol=1e-12)
        rows = np.random.default_rng(1).permutation(40)     # the order of the samples is irrelevant
        np.testing.assert_allclose(ours(method, X[rows], y[rows]).scores_, base, atol=1e-12)
        labels = np.array(["c", "a", "b"])[y]                 # nor the coding of the labels
        np.testing.assert_allclose(ours(method, X, labels).scores_, base, atol=1e-12)


def test_memory_is_bounded_at_ten_thousand_samples():
    rng = np.random.default_rng(0)
    n = 10_000
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, 2))
    X[:, 0] += y
    tracemalloc.start()
    try:
        sel = ours("multisurf", X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200e6, peak                                 # an n x n matrix of float64 is 800 MB
    assert sel.scores_[0] > 0.01 > abs(sel.scores_[1])
    assert sel.n_near_.min() > 0


# ----------------------------------------------------------------------------- skrebate 0.8.4
def test_skrebate_two_classes_continuous():
    X, y = data(31, n=40, d=10)
    for method in METHODS:
        sk = skrebate_scores(method, X, y, categorical_threshold=0)
        mine = ours(method, X, y).scores_
        np.testing.assert_allclose(mine, ref_surf(X, y, method, exact=False)[0], atol=1e-12)
        if method in MEAN:
            # the one difference: skrebate's mean distance counts the n zero self-distances
            assert np.abs(mine - sk).max() > 1e-4
            np.testing.assert_allclose(sk, ref_surf(X, y, method, exact=False, self_in_mean=True)[0], atol=1e-10)
        else:
            # the definitions agree for two classes (MultiSURF*'s 1 - diff cancels between hits and misses
            # whenever a far set has both)
            np.testing.assert_allclose(mine, sk, atol=1e-10)


def test_skrebate_several_classes_continuous():
    X, y = data(32, n=40, d=8, sizes=[8, 20, 12])
    for method in METHODS:
        sk = skrebate_scores(method, X, y, categorical_threshold=0)
        mine = ours(method, X, y).scores_
        np.testing.assert_allclose(mine, ref_surf(X, y, method, exact=False)[0], atol=1e-12)
        assert np.abs(mine - sk).max() > 1e-4
        conv = SKREBATE[method]
        # the miss weighting (with the threshold / far form of the method) is the whole difference
        np.testing.assert_allclose(sk, ref_surf(X, y, method, exact=False, weighting="rebate", **conv)[0],
                                   atol=1e-10)
        if method == "multisurfstar":
            # skrebate's far form (1 - diff, near signs) shifts every feature by one and the same amount
            shift = sk - ref_surf(X, y, method, exact=False, weighting="rebate")[0]
            assert np.ptp(shift) < 1e-12 and abs(shift[0]) > 1e-6


def test_skrebate_discrete():
    rng = np.random.default_rng(33)
    X = rng.integers(0, 3, size=(34, 12)).astype(float)
    y2 = rng.integers(0, 2, size=34)
    y3 = rng.integers(0, 3, size=34)
    X[:, 0] += 2 * y3                                         # values 0..6: 7 distinct, still nominal
    nominal = np.ones(12, bool)
    for y, weighting in ((y2, "prior"), (y3, "rebate")):
        for method in METHODS:
            conv = SKREBATE[method]
            sk = skrebate_scores(method, X, y, categorical_threshold=7)
            sel = ours(method, X, y, discrete_threshold=7)
            assert sel.nominal_.all()
            want, _, _, ties = ref_surf(X, y, method, nominal=nominal)
            np.testing.assert_allclose(sel.scores_, want, atol=1e-12)
            # skrebate's distance is the mismatch fraction (ours / 12): the same neighbours unless a
            # distance sits exactly on a threshold, which this data avoids
            peer, _, _, peer_ties = ref_surf(X, y, method, nominal=nominal, weighting=weighting, **conv)
            assert peer_ties == 0
            np.testing.assert_allclose(sk, peer, atol=1e-10)
            if weighting == "prior" and method not in MEAN:
                np.testing.assert_allclose(sel.scores_, sk, atol=1e-10)


def test_skrebate_mixed_features():
    X, y = data(34, n=36, d=8, sizes=[10, 14, 12])
    X[:, 2] = np.random.default_rng(2).integers(0, 3, size=36)
    X[:, 5] = np.random.default_rng(3).integers(0, 2, size=36) + y
    nominal = np.zeros(8, bool)
    nominal[[2, 5]] = True
    for method in METHODS:
        sk = skrebate_scores(method, X, y, categorical_threshold=4)
        sel = ours(method, X, y, discrete_threshold=4)
        np.testing.assert_array_equal(sel.nominal_, nominal)
        np.testing.assert_allclose(sel.scores_, ref_surf(X, y, method, nominal=nominal, exact=False)[0], atol=1e-12)
        # skrebate: a ramp on the numeric diffs and mismatches weighted d / d_nominal in the distance
        peer = ref_surf(X, y, method, nominal=nominal, exact=False, weighting="rebate", ramp=True,
                        nominal_scale=True, **SKREBATE[method])[0]
        np.testing.assert_allclose(sk, peer, atol=1e-10)
        no_ramp = ref_surf(X, y, method, nominal=nominal, exact=False, weighting="rebate", nominal_scale=True,
                           **SKREBATE[method])[0]
        assert np.abs(sk - no_ramp).max() > 1e-4


def test_skrebate_microarray_shape():
    X, y = data(35, n=30, d=400, sizes=[9, 12, 9])
    X = (X - X.mean(0)) / X.std(0)
    for method in ("surf", "multisurf", "multisurfstar"):
        sk = skrebate_scores(method, X, y, categorical_threshold=0)
        mine = ours(method, X, y).scores_
        np.testing.assert_allclose(mine, ref_surf(X, y, method, exact=False)[0], atol=1e-12)
        peer = ref_surf(X, y, method, exact=False, weighting="rebate", **SKREBATE[method])[0]
        np.testing.assert_allclose(sk, peer, atol=1e-10)
    yb = (y > 0).astype(int)
    np.testing.assert_allclose(ours("multisurf", X, yb).scores_,
                               skrebate_scores("multisurf", X, yb, categorical_threshold=0), atol=1e-10)
