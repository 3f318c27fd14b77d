"""su, fcbf and cfs against their definitions written out here, scikit-learn and scikit-feature.

The references are independent of fsbench: the discretization rules written out (mean_std with
``statistics``, quantile from the count of smaller values), symmetrical uncertainty from a
``Counter`` of joint values with ``math.log2``, FCBF as Yu & Liu's pseudo-code (their Figure 1)
with plain lists, CFS's merit of a subset from its means as Hall writes it, his best-first search
with a Python list for OPEN and a set of frozensets for the subsets seen, and the merit of every
subset of a tiny problem. Exact equality of SU is tested through integers: with the same n and
the same class counts, two tables have the same SU when they have the same prod O^O and the same
prod R^R (n I and n H(X) are the logarithms of rationals determined by them).

scikit-feature 1.2.1 (chappers' release) is the peer: ``su_calculation`` (each distinct value a
state, natural logarithms), ``fcbf`` (its integer cast orders features by index) and ``cfs``
(greedy forward selection); each difference is shown to be exactly what the docstrings state.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter

import numpy as np
import pytest
from scipy.stats import entropy as scipy_entropy
from sklearn.metrics import mutual_info_score

from fsbench.selectors import make_selector

sk_mi = pytest.importorskip("skfeature.utility.mutual_information")
sk_fcbf = pytest.importorskip("skfeature.function.information_theoretical_based.FCBF").fcbf
sk_cfs_module = pytest.importorskip("skfeature.function.statistical_based.CFS")


# ----------------------------------------------------------------------------- references
def mean_std_states(column, factor: float = 1.0) -> list[int]:
    """0 below mean - factor * sd, 2 above mean + factor * sd, else 1 (sd with n - 1)."""
    mu, sd = statistics.mean(column), statistics.stdev(column)
    if sd == 0:
        return [1] * len(column)
    return [0 if (v - mu) / sd < -factor else 2 if (v - mu) / sd > factor else 1 for v in column]


def quantile_states(column, n_bins: int) -> list[int]:
    """floor(n_bins r / n), r the number of samples with a smaller value."""
    n = len(column)
    return [n_bins * sum(v < x for v in column) // n for x in column]


def states_of(X: np.ndarray, discretize: str = "mean_std", std_factor: float = 1.0, n_bins: int = 3):
    cols = X.T.tolist()
    if discretize == "mean_std":
        return [mean_std_states(c, std_factor) for c in cols]
    return [quantile_states(c, n_bins) for c in cols]


def entropy_bits(values) -> float:
    """Plug-in entropy in bits; the terms summed correctly rounded (``math.fsum``), so relabelled
    values (the same multiset of counts) give the same float."""
    n = len(values)
    return -math.fsum(c / n * math.log2(c / n) for c in Counter(values).values())


def su_counter(a, b) -> float:
    """2 I(A; B) / (H(A) + H(B)) from counts of the values and of the pairs; 0 when both are constant."""
    ha, hb, hab = entropy_bits(list(a)), entropy_bits(list(b)), entropy_bits(list(zip(a, b, strict=True)))
    return 0.0 if ha + hb == 0 else 2 * (ha + hb - hab) / (ha + hb)


def exact_su_key(table) -> tuple[int, int]:
    """(prod O^O, prod R^R) of a (state x class) table: with the same n and class counts, equal keys
    mean exactly equal SU."""
    cells, rows = 1, 1
    for row in table:
        for o in row:
            cells *= o**o
        rows *= sum(row) ** sum(row)
    return cells, rows


def fcbf_plain(S, y, delta: float, *, order=None, strict: bool = False):
    """Yu & Liu's Figure 1: S'_list of the features with SU >= delta (> delta when ``strict``) in
    decreasing SU (``order``: another sort key), then for each F_p in turn remove every later F_q
    with SU(F_p, F_q) >= SU(F_q, C)."""
    su_c = [su_counter(s, y) for s in S]
    keep = [j for j in range(len(S)) if (su_c[j] > delta if strict else su_c[j] >= delta)]
    lst = sorted(keep, key=order or (lambda j: (-su_c[j], j)))
    i = 0
    while i < len(lst):
        p = lst[i]
        lst = lst[: i + 1] + [q for q in lst[i + 1:] if not su_counter(S[p], S[q]) >= su_c[q]]
        i += 1
    return lst, su_c


def cfs_merit(subset, r_c, r) -> float:
    """Hall's merit k mean(r_cf) / sqrt(k + k (k - 1) mean(r_ff)); 0 for the empty set."""
    k = len(subset)
    if k == 0:
        return 0.0
    mean_cf = sum(r_c[i] for i in subset) / k
    pairs = list(itertools.combinations(subset, 2))
    mean_ff = sum(r(i, j) for i, j in pairs) / len(pairs) if pairs else 0.0
    return k * mean_cf / math.sqrt(k + k * (k - 1) * mean_ff)


def correlations(S, y):
    r_c = [su_counter(s, y) for s in S]
    cache = {}

    def r(i, j):
        key = (min(i, j), max(i, j))
        if key not in cache:
            cache[key] = su_counter(S[key[0]], S[key[1]])
        return cache[key]

    return r_c, r


def cfs_plain(S, y, max_stale: int):
    """Hall's best first, plainly: OPEN a list of (merit, insertion number, subset in order of
    inclusion); pop the largest merit, first inserted among equals; evaluate the unseen children in
    increasing feature order; a child strictly better than the best becomes the best; an expansion
    without one is stale; stop after ``max_stale`` stale expansions or when OPEN is empty."""
    r_c, r = correlations(S, y)
    open_list = [(0.0, 0, ())]
    seen = {frozenset()}
    best, best_merit = (), 0.0
    stale, inserted, expanded, evaluated = 0, 1, 0, 1
    while stale < max_stale and open_list:
        top = max(open_list, key=lambda e: (e[0], -e[1]))
        open_list.remove(top)
        expanded += 1
        improved = False
        for j in range(len(S)):
            child = top[2] + (j,)
            if j in top[2] or frozenset(child) in seen:
                continue
            seen.add(frozenset(child))
            evaluated += 1
            merit = cfs_merit(child, r_c, r)
            open_list.append((merit, inserted, child))
            inserted += 1
            if merit > best_merit:
                best, best_merit, improved = child, merit, True
        stale = 0 if improved else stale + 1
    return best, best_merit, expanded, evaluated, r_c


def problem(seed: int, n: int, d: int, c: int, informative: int = 4, redundant: int = 3):
    """Gaussian features, the first ``informative`` shifted with the class, then noisy copies of them."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    rng.shuffle(y)
    X = rng.normal(size=(n, d))
    X[:, :informative] += 1.5 * (y[:, None] == (np.arange(informative) % c))
    for k in range(redundant):
        X[:, informative + k] = X[:, k % informative] + 0.4 * rng.normal(size=n)
    return X, y


def labels(class_sizes) -> np.ndarray:
    return np.repeat(np.arange(len(class_sizes)), class_sizes)


def features_of(tables, class_sizes) -> np.ndarray:
    """Columns whose values 0, 1, 2 within each class follow that class's column of the table."""
    y = labels(class_sizes)
    X = np.zeros((y.size, len(tables)))
    for j, table in enumerate(tables):
        for k in range(len(class_sizes)):
            X[y == k, j] = np.repeat(np.arange(len(table)), [row[k] for row in table])
    return X


SETTINGS = [{}, {"std_factor": 0.5}, {"discretize": "quantile", "n_bins": 3},
            {"discretize": "quantile", "n_bins": 7}]


# ----------------------------------------------------------------------------- su
@pytest.mark.parametrize("params", SETTINGS)
def test_su_is_the_definition_from_counts_and_from_scikit_learn(params):
    X, y = problem(0, 45, 14, 3)
    X[:, 13] = np.round(X[:, 13])
    selector = make_selector("su", params).fit(X, y)
    S = states_of(X, **params)
    expected = [su_counter(s, y.tolist()) for s in S]
    np.testing.assert_allclose(selector.scores_, expected, rtol=0, atol=1e-13)
    # scikit-learn's mutual information (nats) and scipy's entropies: the ratio has no unit
    for j, s in enumerate(S):
        h = scipy_entropy(np.bincount(s)) + scipy_entropy(np.bincount(y))
        assert selector.scores_[j] == pytest.approx(2 * mutual_info_score(y, s) / h, abs=1e-13)


def test_su_hand_worked():
    # x = 0 0 0 1 against y = 0 0 1 1: H(X) = h(1/4) = 0.811278..., H(Y) = 1, H(X, Y) = 1.5,
    # I = 0.311278..., SU = 0.622556... / 1.811278... = 0.343711...
    y = np.array([0, 0, 1, 1])
    X = np.array([[0, 0, 0, 5], [0, 0, 1, 5], [0, 1, 0, 5], [1, 1, 1, 5]], dtype=float)
    selector = make_selector("su", {"discretize": "quantile", "n_bins": 4}).fit(X, y)
    h = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    assert selector.scores_[0] == pytest.approx(2 * (h + 1 - 1.5) / (h + 1), abs=1e-15)
    assert selector.scores_[1] == 1.0  # the class itself, up to names
    assert selector.scores_[2] == 0.0  # independent of the class
    assert selector.scores_[3] == 0.0  # constant
    assert selector.ranking_.tolist() == [1, 0, 2, 3]


def test_su_equals_scikit_feature_on_the_same_states():
    X, y = problem(1, 50, 20, 4)
    S = states_of(X)
    selector = make_selector("su").fit(X, y)
    peer = [sk_mi.su_calculation(np.array(s), y) for s in S]
    np.testing.assert_allclose(selector.scores_, peer, rtol=0, atol=1e-13)


def test_itmo_fs_su_measure_is_information_plus_entropy_over_the_entropies():
    itmo = pytest.importorskip("ITMO_FS.filters.univariate.measures")
    X, y = problem(2, 40, 10, 3)
    S = np.array(states_of(X)).T
    ours = make_selector("su").fit(X, y).scores_
    peer = itmo.su_measure(S, y)
    for j in range(S.shape[1]):
        hx, hy = entropy_bits(S[:, j].tolist()), entropy_bits(y.tolist())
        # ITMO_FS calls conditional_entropy(y, x), which is H(X | Y):
        # (H(X) + H(Y) - H(X|Y)) / (H(X) + H(Y)) = (I + H(Y)) / (H(X) + H(Y)), I = SU (H(X) + H(Y)) / 2
        assert peer[j] == pytest.approx((ours[j] * (hx + hy) / 2 + hy) / (hx + hy), abs=1e-12)


def test_su_relabelled_states_give_identical_bits_and_rank_by_index():
    X, y = problem(3, 40, 8, 3)
    # a mirror image (the mean_std states reversed exactly), a shifted and scaled copy, a copy
    X = np.column_stack([X, -X[:, 2], 5 * X[:, 2] + 3, X[:, 2]])
    selector = make_selector("su").fit(X, y)
    assert selector.scores_[2] == selector.scores_[8] == selector.scores_[9] == selector.scores_[10]
    position = np.argsort(selector.ranking_)
    assert position[2] < position[8] < position[9] < position[10]
    # permuted class labels: the same SU, bit for bit
    again = make_selector("su").fit(X, (y + 1) % 3)
    assert again.scores_.tolist() == selector.scores_.tolist()


# Two (state x class) tables for classes of 12 and 8 that are not relabellings of each other but
# have exactly the same SU: their prod O^O (1 4^4 1 4^4 10^10 = 2^2 2^8 5^5 5^5 up to the 1s)
# and prod R^R agree. Computed naively they differed in the last bit.
TIES_A = [[1, 4], [1, 4], [10, 0]]
TIES_B = [[2, 8], [5, 0], [5, 0]]


def test_su_different_tables_with_exactly_equal_su_score_equal():
    assert exact_su_key(TIES_A) == exact_su_key(TIES_B)
    X = features_of([TIES_B, TIES_A, TIES_B, TIES_A], [12, 8])
    y = labels([12, 8])
    naive = [su_counter(states, y.tolist()) for states in X.T.tolist()]
    assert naive[0] == pytest.approx(naive[1], abs=1e-15)
    selector = make_selector("su", {"discretize": "quantile", "n_bins": 32}).fit(X, y)
    for j, table in enumerate([TIES_B, TIES_A, TIES_B, TIES_A]):  # n = 20 <= 32: a state per value
        states = quantile_states(X[:, j].tolist(), 32)
        assert [[sum(1 for s, k in zip(states, y, strict=True) if s == u and k == c) for c in (0, 1)]
                for u in sorted(set(states))] == table
    assert len(set(selector.scores_.tolist())) == 1
    assert selector.ranking_.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(4))
def test_su_exact_ties_among_random_tables_rank_by_index(seed):
    rng = np.random.default_rng(seed)
    sizes = [int(v) for v in rng.integers(3, 9, size=int(rng.integers(2, 4)))]
    bases = []
    for _ in range(3):
        cols = []
        for size in sizes:
            a = int(rng.integers(0, size + 1))
            b = int(rng.integers(0, size - a + 1))
            cols.append([a, b, size - a - b])
        bases.append(np.array(cols).T)
    tables = []
    for _ in range(10):  # rows permuted: same SU, different cells' order
        base = bases[int(rng.integers(0, 3))]
        tables.append(base[rng.permutation(3)].tolist())
    X, y = features_of(tables, sizes), labels(sizes)
    scores = make_selector("su", {"discretize": "quantile", "n_bins": 32}).fit(X, y).scores_
    keys = [exact_su_key(t) for t in tables]
    order = np.argsort(make_selector("su", {"discretize": "quantile", "n_bins": 32}).fit(X, y).ranking_)
    for i, j in itertools.combinations(range(len(tables)), 2):
        if keys[i] == keys[j]:
            assert scores[i] == scores[j] and order[i] < order[j]


# ----------------------------------------------------------------------------- fcbf
@pytest.mark.parametrize(("seed", "delta", "params"), [(4, 0.0, {}), (5, 0.05, {}), (6, 0.15, {}),
                                                       (7, 0.0, {"discretize": "quantile", "n_bins": 4}),
                                                       (8, 0.0, {"std_factor": 0.5})])
def test_fcbf_is_yu_and_liu_pseudo_code(seed, delta, params):
    X, y = problem(seed, 60, 40, 3, informative=6, redundant=8)
    selector = make_selector("fcbf", {"delta": delta, **params}).fit(X, y)
    predominant, su_c = fcbf_plain(states_of(X, **params), y.tolist(), delta)
    m = selector.diagnostics_["fcbf_n_selected"]
    assert m == len(predominant) > 1
    rest = sorted(set(range(X.shape[1])) - set(predominant), key=lambda j: (-su_c[j], j))
    assert selector.ranking_.tolist() == predominant + rest
    np.testing.assert_allclose(selector.su_, su_c, atol=1e-13)


def test_fcbf_hand_worked():
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    X = np.array([
        y,                           # 0: the class itself: SU 1
        y,                           # 1: a copy: SU(0, 1) = 1 >= 1, redundant
        [0, 0, 1, 1, 0, 0, 1, 1],    # 2: independent of the class: SU 0, redundant to anything
        [0, 0, 0, 1, 1, 1, 1, 1],    # 3: SU(0, 3) = SU(3, Y) exactly (0 is Y): redundant by >=
    ], dtype=float).T
    selector = make_selector("fcbf", {"discretize": "quantile", "n_bins": 8}).fit(X, y)
    assert selector.diagnostics_ == {"fcbf_n_selected": 1}
    assert selector.ranking_.tolist() == [0, 1, 3, 2]
    # without the class feature: 3 is predominant, 2 (SU 0 < delta) is not relevant
    selector = make_selector("fcbf", {"discretize": "quantile", "n_bins": 8, "delta": 0.2}).fit(X[:, 2:], y)
    assert selector.ranking_.tolist() == [1, 0] and selector.diagnostics_["fcbf_n_selected"] == 1


# Classes of 14 and 7; feature q has the (state x class) table Q_Y and the (state x state of P)
# table Q_P: not relabellings of each other, but equal prod O^O and prod R^R, so SU(P, q) =
# SU(q, Y) exactly (in floating point 0.1886668218296119 and 0.18866682182961203), and P is more
# relevant (SU(P, Y) = 0.274): FCBF's >= removes q.
Q_Y = [[2, 3], [2, 3], [10, 1]]
Q_P = [[4, 1], [5, 0], [5, 6]]
# samples as (state of q, state of P, class): count
Q_SAMPLES = {(0, 0, 0): 1, (0, 0, 1): 3, (0, 1, 0): 1, (1, 0, 0): 2, (1, 0, 1): 3, (2, 0, 0): 4, (2, 0, 1): 1,
             (2, 1, 0): 6}


def test_fcbf_exactly_equal_su_removes_the_feature_whatever_the_floats():
    rows = [key for key, count in Q_SAMPLES.items() for _ in range(count)]
    q, p, y = (np.array(v) for v in zip(*rows, strict=True))
    assert exact_su_key(Q_Y) == exact_su_key(Q_P)
    assert [[int(np.sum((q == u) & (y == k))) for k in (0, 1)] for u in range(3)] == Q_Y
    assert [[int(np.sum((q == u) & (p == k))) for k in (0, 1)] for u in range(3)] == Q_P
    assert su_counter(p.tolist(), y.tolist()) > su_counter(q.tolist(), y.tolist())
    X = np.column_stack([p, q]).astype(float)
    selector = make_selector("fcbf", {"discretize": "quantile", "n_bins": 32}).fit(X, y)  # n = 21: a state per value
    assert selector.diagnostics_ == {"fcbf_n_selected": 1}
    assert selector.ranking_.tolist() == [0, 1]


def test_fcbf_delta_above_every_su_selects_nothing_and_ranks_by_su():
    X, y = problem(9, 40, 12, 2)
    selector = make_selector("fcbf", {"delta": 1.0}).fit(X, y)
    assert selector.diagnostics_["fcbf_n_selected"] == 0
    su_c = [su_counter(s, y.tolist()) for s in states_of(X)]
    assert selector.ranking_.tolist() == sorted(range(12), key=lambda j: (-su_c[j], j))


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_fcbf_equals_scikit_feature_on_features_sorted_by_su(seed):
    X, y = problem(seed, 50, 30, 3, informative=5, redundant=6)
    S = np.array(states_of(X)).T.astype(float)
    peer_su = np.array([sk_mi.su_calculation(S[:, j], y) for j in range(S.shape[1])])
    by_su = np.lexsort((np.arange(S.shape[1]), -peer_su))
    X, S = X[:, by_su], S[:, by_su]
    selector = make_selector("fcbf").fit(X, y)
    m = selector.diagnostics_["fcbf_n_selected"]
    assert sk_fcbf(S, y, mode="index").tolist() == selector.ranking_[:m].tolist()


@pytest.mark.parametrize("seed", [13, 14])
def test_scikit_feature_fcbf_is_the_pseudo_code_in_index_order(seed):
    """The peer's int cast: SU below 1 becomes 0, so its list is in index order (SU 1 first), and
    it keeps SU > delta; otherwise it is FCBF."""
    X, y = problem(seed, 50, 30, 3, informative=5, redundant=6)
    rng = np.random.default_rng(seed)
    X = X[:, rng.permutation(30)]
    S = states_of(X)
    peer = sk_fcbf(np.array(S).T.astype(float), y, mode="index").tolist()
    as_peer, su_c = fcbf_plain(S, y.tolist(), 0.0, order=None, strict=True)
    as_peer, _ = fcbf_plain(S, y.tolist(), 0.0, order=lambda j: (-int(su_c[j]), j), strict=True)
    assert peer == as_peer
    ours = make_selector("fcbf").fit(X, y)
    assert peer != ours.ranking_[: ours.diagnostics_["fcbf_n_selected"]].tolist()  # the order matters


# ----------------------------------------------------------------------------- cfs
@pytest.mark.parametrize("seed", range(3))
def test_cfs_exhaustive_search_finds_the_best_subset_of_all(seed):
    X, y = problem(20 + seed, 30, 7, 3, informative=3, redundant=2)
    S = states_of(X)
    r_c, r = correlations(S, y.tolist())
    merits = {sub: cfs_merit(sub, r_c, r) for k in range(1, 8) for sub in itertools.combinations(range(7), k)}
    best = max(merits, key=merits.get)
    # 2^7 subsets: OPEN empties long before 1000 stale expansions
    selector = make_selector("cfs", {"max_stale": 1000}).fit(X, y)
    m = selector.diagnostics_["cfs_n_selected"]
    assert sorted(selector.ranking_[:m].tolist()) == list(best)
    assert selector.merit_ == pytest.approx(merits[best], abs=1e-13)
    assert selector.diagnostics_["cfs_n_evaluated"] == 2**7  # every subset, the empty one too


@pytest.mark.parametrize(("seed", "max_stale", "params"), [(30, 5, {}), (31, 5, {}), (32, 1, {}), (33, 2, {}),
                                                           (34, 5, {"discretize": "quantile", "n_bins": 4}),
                                                           (35, 12, {"std_factor": 0.5})])
def test_cfs_is_halls_best_first_written_plainly(seed, max_stale, params):
    X, y = problem(seed, 40, 18, 3, informative=5, redundant=5)
    best, merit, expanded, evaluated, r_c = cfs_plain(states_of(X, **params), y.tolist(), max_stale)
    selector = make_selector("cfs", {"max_stale": max_stale, **params}).fit(X, y)
    m = selector.diagnostics_["cfs_n_selected"]
    assert selector.ranking_[:m].tolist() == list(best)
    rest = sorted(set(range(18)) - set(best), key=lambda j: (-r_c[j], j))
    assert selector.ranking_[m:].tolist() == rest
    assert selector.merit_ == pytest.approx(merit, abs=1e-13)
    assert (selector.diagnostics_["cfs_n_expanded"], selector.diagnostics_["cfs_n_evaluated"]) == (expanded, evaluated)


@pytest.mark.parametrize(("seed", "max_stale", "copies"), [(36, 60, 0), (41, 30, 2), (52, 30, 0), (45, 200, 2)])
def test_cfs_is_halls_best_first_with_mirrored_features(seed, max_stale, copies):
    """Mirror images and copies tie with their originals in every merit, in one expansion and
    across expansions: the order of OPEN among equal merits (first added first) decides what is
    expanded (on these problems taking the last added instead changes the counts or the subset)."""
    X, y = problem(seed, 40, 10, 3, informative=4, redundant=2)
    X = np.column_stack([X, -X[:, :4 - copies], X[:, :copies]])
    best, merit, expanded, evaluated, r_c = cfs_plain(states_of(X), y.tolist(), max_stale)
    selector = make_selector("cfs", {"max_stale": max_stale}).fit(X, y)
    m = selector.diagnostics_["cfs_n_selected"]
    assert selector.ranking_[:m].tolist() == list(best)
    assert (selector.diagnostics_["cfs_n_expanded"], selector.diagnostics_["cfs_n_evaluated"]) == (expanded, evaluated)


def test_cfs_backtracking_finds_better_subsets_than_greedy_search():
    """On some problems the best first search (5 stale expansions) ends on a subset of larger merit
    than the greedy ascent (``max_stale=1``): the search is not a hill climb."""
    better = 0
    for seed in range(40, 52):
        X, y = problem(seed, 30, 12, 3, informative=4, redundant=4)
        greedy, _, _, _, _ = cfs_plain(states_of(X), y.tolist(), 1)
        greedy_merit = make_selector("cfs", {"max_stale": 1}).fit(X, y).merit_
        full = make_selector("cfs").fit(X, y)
        assert full.merit_ >= greedy_merit
        better += full.merit_ > greedy_merit
        assert make_selector("cfs", {"max_stale": 1}).fit(X, y).ranking_[: len(greedy)].tolist() == list(greedy)
    assert better > 0


@pytest.mark.parametrize("seed", [60, 61, 62])
def test_cfs_without_backtracking_is_scikit_feature_greedy_search(seed):
    """scikit-feature's cfs picks the best child of its last pick until four merits in a row do
    not increase, and returns every pick; its picks before the first non-increasing merit are
    fsbench's best subset with max_stale = 1, on the same states."""
    X, y = problem(seed, 40, 20, 3, informative=5, redundant=5)
    S = np.array(states_of(X)).T.astype(float)
    peer = sk_cfs_module.cfs(S, y, mode="index").tolist()
    merits = [sk_cfs_module.merit_calculation(S[:, peer[: i + 1]], y) for i in range(len(peer))]
    m = next(i for i in range(1, len(merits)) if merits[i] <= merits[i - 1])
    selector = make_selector("cfs", {"max_stale": 1}).fit(X, y)
    assert selector.diagnostics_["cfs_n_selected"] == m
    assert selector.ranking_[:m].tolist() == peer[:m]
    assert selector.merit_ == pytest.approx(merits[m - 1], abs=1e-12)


def test_cfs_relabelled_duplicates_tie_and_the_lower_index_is_taken():
    X, y = problem(70, 40, 8, 3, informative=4, redundant=0)
    X = np.column_stack([X, -X[:, 0]])  # 8 mirrors 0: identical SU with everything
    selector = make_selector("cfs").fit(X, y)
    assert selector.su_[0] == selector.su_[8]
    best = selector.ranking_[: selector.diagnostics_["cfs_n_selected"]].tolist()
    assert 0 in best and 8 not in best
    X2 = X[:, [8, 1, 2, 3, 4, 5, 6, 7, 0]]  # swapped: the mirror is now the lower index, and taken
    swapped = make_selector("cfs").fit(X2, y)
    assert swapped.ranking_.tolist() == selector.ranking_.tolist()


# ----------------------------------------------------------------------------- all three
@pytest.mark.parametrize("name", ["su", "fcbf", "cfs"])
def test_edge_cases_give_a_deterministic_permutation(name):
    rng = np.random.default_rng(80)
    cases = [
        (rng.normal(size=(6, 50)), np.array([0, 0, 0, 1, 1, 1])),  # d > n
        (rng.normal(size=(11, 7)), np.array([0, 1, 1, 2, 2, 2, 2, 2, 0, 2, 2])),  # classes of 2
        (np.zeros((8, 3)), np.array([0, 1] * 4)),  # constant features only
    ]
    X, y = problem(81, 30, 8, 2)
    cases.append((np.column_stack([X, X[:, 0], np.zeros(30), -X[:, 1]]), y))  # copies, mirror, constant
    for X, y in cases:
        selector = make_selector(name).fit(X, y)
        assert sorted(selector.ranking_.tolist()) == list(range(X.shape[1]))
        assert np.all(np.isfinite(selector.scores_))
        again = make_selector(name).fit(X.copy(), y.copy())
        assert again.ranking_.tolist() == selector.ranking_.tolist()
        assert again.scores_.tolist() == selector.scores_.tolist()
    X, y = cases[-1]
    su = make_selector("su").fit(X, y).scores_
    assert su[9] == 0.0 and su[8] == su[0] and su[10] == su[1]


@pytest.mark.parametrize("name", ["su", "fcbf", "cfs"])
def test_permuting_features_permutes_the_ranking(name):
    X, y = problem(90, 40, 15, 3, informative=5, redundant=4)
    perm = np.random.default_rng(91).permutation(15)
    base = make_selector(name).fit(X, y)
    moved = make_selector(name).fit(X[:, perm], y)
    assert perm[moved.ranking_].tolist() == base.ranking_.tolist()
