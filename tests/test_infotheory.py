"""The information-theoretic filters (mim, mifs, cife, jmi, jmim, cmim, icap, disr) against the definitions.

The reference is a brute force written here from Brown, Pocock, Zhao & Lujan (JMLR 2012): every
criterion of every candidate at every step, from empirical joint distributions counted with
``collections.Counter`` and ``math.log2``, the argmax taken with the stated tie rule (values within
1e-9 are ties: the more relevant candidate, then the lower index). The peers scikit-feature 1.2.1
and ITMO_FS 0.3.3 are checked where they compute the definition and shown to deviate where they do
not. ``mrmr``, which runs on the engine, is compared bit for bit with the loop that computed fsbench's
committed mRMR rows (fsbench.selectors.mrmr up to commit 228e876), copied here as the reference.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from functools import lru_cache

import numpy as np
import pytest
from scipy.stats import rankdata

from fsbench.selectors import make_selector
from fsbench.selectors._discretize import contingency, discretize, mutual_info_from_joint
from fsbench.selectors._it_engine import MAX_STATES, feature_states, mrmr_fit, select_states
from fsbench.selectors._it_engine import mrmr_order as engine_mrmr_order
from fsbench.selectors.mrmr import MRMR

discretize_features = discretize  # former_mrmr_fit's parameter `discretize` shadows the function

NAMES = ["mim", "mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr"]
TIE = 1e-9


# ----------------------------------------------------------------------------- the brute force
class Brute:
    """Entropies of joint empirical distributions of columns of ``states`` and the class (column -1)."""

    def __init__(self, states: np.ndarray, y: np.ndarray):
        self.cols = {f: tuple(states[:, f].tolist()) for f in range(states.shape[1])}
        self.cols[-1] = tuple(y.tolist())
        self.n = len(y)
        self.H = lru_cache(maxsize=None)(self._entropy)

    def _entropy(self, key: tuple[int, ...]) -> float:
        counts = Counter(zip(*(self.cols[f] for f in key), strict=True))
        return -sum(c / self.n * math.log2(c / self.n) for c in counts.values())

    def h(self, *features: int) -> float:
        return self.H(tuple(sorted(features)))

    def mi(self, a, b):  # I(A; B)
        return self.h(a) + self.h(b) - self.h(a, b)

    def cmi(self, a, b, z):  # I(A; B | Z)
        return self.h(a, z) + self.h(b, z) - self.h(a, b, z) - self.h(z)

    def joint(self, a, b):  # I(A B; Y)
        return self.h(a, b) + self.h(-1) - self.h(a, b, -1)


def criterion(name: str, b: Brute, k: int, S: list[int], beta: float = 1.0) -> float:
    """J(X_k) given the chosen S, as Brown et al. (2012) write each criterion."""
    Y = -1
    rel = b.mi(k, Y)
    if not S or name == "mim":
        return rel
    if name == "mifs":
        return rel - beta * sum(b.mi(k, j) for j in S)
    if name == "cife":
        return rel - sum(b.mi(k, j) for j in S) + sum(b.cmi(k, j, Y) for j in S)
    if name == "jmi":
        return sum(b.joint(k, j) for j in S)
    if name == "jmim":
        return min(b.joint(k, j) for j in S)
    if name == "cmim":
        return min(b.cmi(k, Y, j) for j in S)
    if name == "icap":
        return rel - sum(max(0.0, b.mi(k, j) - b.cmi(k, j, Y)) for j in S)
    if name == "disr":
        return sum(b.joint(k, j) / b.h(k, j, Y) for j in S)
    # what scikit-feature's disr computes: the DISR sum divided by sum_j (1 + I(X_k; X_j))
    if name == "skfeature_disr":
        return sum(b.joint(k, j) / b.h(k, j, Y) for j in S) / sum(1 + b.mi(k, j) for j in S)
    # what ITMO_FS's ICAP computes: the positive part of the sum instead of the sum of positive parts
    if name == "itmo_icap":
        return rel - max(0.0, sum(b.mi(k, j) - b.cmi(k, j, Y) for j in S))
    raise KeyError(name)


def brute_order(name, states, y, n_picks, beta=1.0, by_relevance=True):
    """Greedy picks, their criterion values and each step's margin (best minus second best)."""
    b = Brute(states, y)
    d = states.shape[1]
    rel = [b.mi(k, -1) for k in range(d)]
    S, values, margins = [], [], []
    while len(S) < n_picks:
        cand = [k for k in range(d) if k not in S]
        score = {k: criterion(name, b, k, S, beta) for k in cand}
        best = max(score.values())
        tied = [k for k in cand if score[k] >= best - TIE]
        if by_relevance and S:
            top = max(rel[k] for k in tied)
            tied = [k for k in tied if rel[k] >= top - TIE]
        k = min(tied)
        rest = sorted(score.values())
        margins.append(rest[-1] - rest[-2] if len(rest) > 1 else math.inf)
        S.append(k)
        values.append(score[k])
    return S, values, margins, rel


# ----------------------------------------------------------------------------- problems
def discrete_problem(seed: int, n: int = 40, d: int = 10, c: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Features of 2 to 4 states, some depending on the class, plus a duplicate, a mirror image
    (values relabeled) and a constant feature."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % c
    rng.shuffle(y)
    states = rng.integers(2, 5, size=d)
    X = np.floor(rng.random((n, d)) * states).astype(int)
    noisy = rng.random((n, d)) < 0.5
    X = np.where(noisy[:, :] & (np.arange(d) % 3 == 0), (y[:, None] + X) % states, X)
    X[:, d - 1] = X[:, 0]                      # a duplicate of feature 0 (at a higher index)
    X[:, 2] = states[3] - 1 - X[:, 3]          # feature 2: the mirror image of feature 3
    X[:, 4] = 7                                # a constant feature
    return X.astype(float), y


def fit(name, X, y, **params):
    return make_selector(name, {"n_features_to_select": X.shape[1], "n_ranked": X.shape[1], **params}).fit(X, y)


# ----------------------------------------------------------------------------- against the definitions
@pytest.mark.parametrize("name", NAMES)
def test_the_whole_pick_order_and_criterion_values_equal_the_brute_force(name):
    for seed, (n, d, c) in enumerate([(40, 10, 3), (30, 9, 2), (48, 11, 4), (25, 8, 2), (36, 10, 3)]):
        X, y = discrete_problem(seed, n, d, c)
        betas = [0.0, 0.5, 1.0] if name == "mifs" else [None]
        for beta in betas:
            params = {"discretize": "none", **({} if beta is None else {"beta": beta})}
            sel = fit(name, X, y, **params)
            order, values, _, rel = brute_order(name, X.astype(int), y, d, 1.0 if beta is None else beta)
            assert sel.ranking_.tolist() == order, (name, seed, beta)
            np.testing.assert_allclose(sel.criterion_, values, rtol=0, atol=1e-12)
            np.testing.assert_allclose(sel.relevance_, rel, rtol=0, atol=1e-12)
            assert sel.diagnostics_ == {"it_n_incremental": d}


@pytest.mark.parametrize("method", [{"discretize": "mean_std"}, {"discretize": "mean_std", "std_factor": 0.5},
                                    {"discretize": "quantile", "n_bins": 4}])
def test_continuous_features_are_selected_on_their_discretized_states(method):
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 45)
    X = rng.normal(size=(45, 9)) + (np.arange(9) % 2) * y[:, None]
    X[:, 5] = X[:, 1] * 3 + 2                  # same states as feature 1
    args = (method["discretize"], method.get("std_factor", 1.0), method.get("n_bins", 3))
    states = discretize(X, *args)[0]
    for name in NAMES:
        sel = fit(name, X, y, **method)
        order, values, _, _ = brute_order(name, states, y, 9)
        assert sel.ranking_.tolist() == order, name
        np.testing.assert_allclose(sel.criterion_, values, rtol=0, atol=1e-12)


def test_mirror_images_and_duplicates_tie_exactly_and_go_to_the_lower_index():
    """Feature 6 is the most relevant; feature 1 is its mirror image and feature 3 a copy with
    relabeled values: the three have bit-identical relevance, and feature 1 is picked first."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 3, 50)
    X = rng.integers(0, 3, (50, 8)).astype(float)
    X[:, 6] = np.where(rng.random(50) < 0.8, y, X[:, 6])
    X[:, 1] = 2 - X[:, 6]
    X[:, 3] = np.choose(X[:, 6].astype(int), [5.0, -1.0, 2.5])
    for name in NAMES:
        sel = fit(name, X, y, discretize="none")
        assert sel.relevance_[1] == sel.relevance_[3] == sel.relevance_[6], name
        assert sel.ranking_[0] == 1, name
        order, _, _, _ = brute_order(name, X.astype(int), y, 8)
        assert sel.ranking_.tolist() == order, name


def test_ties_through_prime_factorizations_are_exact():
    """Different count tables can have exactly equal entropies (6 log 6 = 2 (3 log 3) + 3 (2 log 2),
    so counts {6} and {3, 3, 2, 2, 2} give the same sum k log k): the fixed-point table is built
    from the logarithms of the primes, so a b log(ab) = b (a log a) + a (b log b) holds exactly,
    and the tie rule, not rounding, decides between candidates whose criteria are mathematically
    equal. On these problems a table of k log2 k rounded per k picks differently at some step."""
    from fsbench.selectors._it_engine import xlogx_fixed

    table, _ = xlogx_fixed(300)
    t = table.tolist()
    for a in range(1, 18):
        for b in range(1, 300 // a + 1):
            assert t[a * b] == b * t[a] + a * t[b], (a, b)
    for seed, name in ((93, "cmim"), (100, "cmim"), (100, "icap"), (102, "jmim"), (252, "jmim")):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 3, 40)
        X = rng.integers(0, 3, (40, 14))
        X[:, :5] = np.where(rng.random((40, 5)) < 0.5, y[:, None], X[:, :5])
        order, values, _, _ = brute_order(name, X, y, 14)
        sel = fit(name, X.astype(float), y, discretize="none")
        assert sel.ranking_.tolist() == order, (seed, name)
        np.testing.assert_allclose(sel.criterion_, values, rtol=0, atol=1e-12)


def test_blocked_tables_give_the_same_fit(monkeypatch):
    """Tables built in blocks of candidates (forced here by a tiny block size) give the same fit,
    bit for bit, as one block."""
    import fsbench.selectors._it_engine as engine

    X, y = discrete_problem(4, 40, 12, 4)
    ref = {name: fit(name, X, y, discretize="none") for name in NAMES}
    monkeypatch.setattr(engine, "BLOCK", 50)
    assert len(engine._blocks(np.full(12, 16), 40, 4)) == 12  # one candidate per block
    for name in NAMES:
        got = fit(name, X, y, discretize="none")
        assert np.array_equal(got.ranking_, ref[name].ranking_), name
        assert got.criterion_.tobytes() == ref[name].criterion_.tobytes(), name


def test_exact_sums_of_many_large_terms():
    from fsbench.selectors._it_engine import ExactSum

    rng = np.random.default_rng(0)
    terms = rng.integers(-(2**60), 2**60, size=(300, 5), dtype=np.int64)
    acc = ExactSum(5)
    for t in terms:
        acc.add(t)
    hi, lo = acc.key()
    exact = [sum(int(v) for v in terms[:, i]) for i in range(5)]
    assert [int(h) * 2**29 + int(v) for h, v in zip(hi, lo, strict=True)] == exact
    assert np.all((lo >= 0) & (lo < 2**29))
    start = rng.integers(0, 2**58, size=5, dtype=np.int64)
    hi, lo = acc.key(minus_from=start)
    assert [int(h) * 2**29 + int(v) for h, v in zip(hi, lo, strict=True)] == [int(a) - b for a, b in
                                                                                zip(start, exact, strict=True)]


# ----------------------------------------------------------------------------- the ranking itself
def test_ranking_holds_the_picks_then_the_rest_by_relevance():
    X, y = discrete_problem(3, 40, 12, 3)
    for name in NAMES:
        sel = make_selector(name, {"n_features_to_select": 2, "n_ranked": 4, "discretize": "none"}).fit(X, y)
        order, values, _, rel = brute_order(name, X.astype(int), y, 4)
        assert sel.ranking_[:4].tolist() == order
        rest = sorted(set(range(12)) - set(order), key=lambda f: (-round(rel[f], 9), f))
        assert sel.ranking_[4:].tolist() == rest, name
        assert sel.criterion_.size == 4 and sel.diagnostics_ == {"it_n_incremental": 4}
        assert np.array_equal(sel.scores_[sel.ranking_], np.arange(12, 0, -1))
        assert sel.get_support(indices=True).tolist() == sorted(order[:2])
        # n_features_to_select beyond n_ranked extends the picks
        wide = make_selector(name, {"n_features_to_select": 6, "n_ranked": 1, "discretize": "none"}).fit(X, y)
        assert wide.ranking_[:6].tolist() == brute_order(name, X.astype(int), y, 6)[0]


@pytest.mark.parametrize("name", NAMES)
def test_edge_cases_give_a_permutation(name):
    rng = np.random.default_rng(5)
    cases = {
        "constant features": (np.zeros((12, 5)), np.arange(12) % 2),
        "more features than samples": (rng.normal(size=(10, 40)), np.arange(10) % 2),
        "a class of 2 samples": (rng.normal(size=(20, 6)), np.r_[np.zeros(18, int), 1, 1]),
        "one feature": (rng.normal(size=(15, 1)), np.arange(15) % 3),
        "four classes, ties": (np.round(rng.normal(size=(30, 7))), np.arange(30) % 4),
    }
    for label, (X, y) in cases.items():
        sel = make_selector(name, {"n_features_to_select": 1}).fit(X, y)
        d = X.shape[1]
        assert sorted(sel.ranking_.tolist()) == list(range(d)), label
        assert np.all(np.isfinite(sel.criterion_)) and np.all(np.isfinite(sel.relevance_)), label
        assert sel.criterion_.size == min(100, d)
    # all features constant: nothing is relevant or redundant; the order is the index order
    assert make_selector(name, {}).fit(np.ones((12, 5)), np.arange(12) % 2).ranking_.tolist() == [0, 1, 2, 3, 4]


# ----------------------------------------------------------------------------- discretize: none
def test_none_on_discrete_codes_equals_the_discretized_path():
    """Handing the states of a discretization to discretize='none' gives the same fit, bit for
    bit, and so do any relabeling of each feature's values and a permutation of the samples or
    of the class labels (the counts are the same)."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 4, 60)
    X = rng.normal(size=(60, 30)) + 0.7 * (np.arange(30) % 3 == 0) * y[:, None]
    for method, kw in (("quantile", {"n_bins": 5}), ("mean_std", {})):
        states = discretize(X, method, 1.0, kw.get("n_bins", 3))[0].astype(float)
        relabel = np.array([rng.permutation(6) * 3.5 - 4 for _ in range(30)])  # per-feature new labels
        relabeled = np.take_along_axis(relabel.T, states.astype(int), axis=0)
        perm = rng.permutation(60)
        for name in NAMES:
            ref = fit(name, X, y, discretize=method, **kw)
            for Z, yy in ((states, y), (relabeled, y), (states[perm], y[perm]), (states, (y + 1) % 4 * 10)):
                got = fit(name, Z, yy, discretize="none")
                assert np.array_equal(got.ranking_, ref.ranking_), (name, method)
                assert got.criterion_.tobytes() == ref.criterion_.tobytes(), (name, method)
                assert got.relevance_.tobytes() == ref.relevance_.tobytes(), (name, method)


def test_none_refuses_a_feature_with_too_many_values_in_one_sentence():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (80, 6)).astype(float)
    X[:, 4] = np.arange(80) % (MAX_STATES + 1)
    X[:, 5] = np.arange(80) % MAX_STATES
    y = np.arange(80) % 2
    for name in ("jmi", "mim"):
        with pytest.raises(ValueError) as info:
            make_selector(name, {"discretize": "none"}).fit(X, y)
        msg = str(info.value)
        assert msg.startswith(f"feature 4 has {MAX_STATES + 1} distinct values, more than the {MAX_STATES} "
                              "that discretize='none' takes; use discretize='quantile'"), msg
        assert "\n" not in msg and msg.endswith(".") and msg.count(". ") == 0
        fit(name, X[:, [0, 1, 5]], y, discretize="none")  # 32 values are accepted
    X[:, 0] = rng.normal(size=80)
    with pytest.raises(ValueError, match=r"^feature 0 \(and 1 more\) has 80 distinct values"):
        make_selector("cmim", {"discretize": "none"}).fit(X, y)


def test_determinism():
    X, y = discrete_problem(9, 50, 14, 3)
    Xc = X + np.random.default_rng(1).normal(scale=0.3, size=X.shape)
    for name in NAMES:
        a, b = fit(name, Xc, y), fit(name, Xc.copy(), y.copy())
        assert np.array_equal(a.ranking_, b.ranking_) and a.criterion_.tobytes() == b.criterion_.tobytes()


# ----------------------------------------------------------------------------- scikit-feature
def _skfeature():
    pytest.importorskip("skfeature")
    from skfeature.function.information_theoretical_based import CIFE, CMIM, DISR, ICAP, JMI, LCSI, MIFS, MIM
    return {"cmim": CMIM.cmim, "icap": ICAP.icap, "disr": DISR.disr, "jmi": JMI.jmi, "mifs": MIFS.mifs,
            "cife": CIFE.cife, "mim": MIM.mim, "lcsi": LCSI.lcsi}


def peer_problem(seed: int, n: int = 60, d: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Random discrete features (3 states, some informative): no near-ties at any step."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.integers(0, 3, (n, d))
    X[:, ::3] = np.where(rng.random((n, (d + 2) // 3)) < 0.4, y[:, None], X[:, ::3])
    return X, y


PEER_SEEDS = (0, 1, 2, 3)


def synergy_problem(seed: int, n: int = 40, d: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Noisy copies of the class (features 0-3), and features 4-6 that carry the class only
    together with features 7-9 ((x + y) mod 3): interaction terms of both signs."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.integers(0, 3, (n, d))
    noisy = rng.random((n, d)) < 0.5
    X[:, 0:4] = np.where(noisy[:, 0:4], y[:, None], X[:, 0:4])
    X[:, 4:7] = np.where(noisy[:, 4:7], (X[:, 7:10] + y[:, None]) % 3, X[:, 4:7])
    return X, y


K = 8


def _untied(name, X, y, k=K, beta=1.0, by_relevance=True):
    order, _, margins, _ = brute_order(name, X, y, k, beta, by_relevance)
    assert min(margins[1:]) > 1e-6, (name, margins)  # the peers' rounding cannot flip a pick
    return order


def test_skfeature_cmim_selects_what_the_definition_gives():
    sk = _skfeature()
    for seed in PEER_SEEDS:
        X, y = peer_problem(seed)
        order = _untied("cmim", X, y)
        assert sk["cmim"](X, y, mode="index", n_selected_features=K).tolist() == order
        assert fit("cmim", X.astype(float), y, discretize="none").ranking_[:K].tolist() == order


def test_skfeature_icap_is_cmim():
    """scikit-feature's icap computes I(f;y) - max_j (I(f;f_j) - I(f;f_j|y)), CMIM's criterion,
    instead of ICAP's sum of positive parts: its order is CMIM's, and differs from ICAP's."""
    sk = _skfeature()
    differs = 0
    for seed in PEER_SEEDS:
        X, y = peer_problem(seed)
        peer = sk["icap"](X, y, mode="index", n_selected_features=K).tolist()
        assert peer == _untied("cmim", X, y)
        ours = fit("icap", X.astype(float), y, discretize="none").ranking_[:K].tolist()
        assert ours == brute_order("icap", X, y, K)[0]
        differs += ours != peer
        # replayed on the engine, the peer's picks maximize CMIM at every step, not ICAP
        codes, states = feature_states(X.astype(float), "none")
        for name, all_best in (("cmim", True), ("icap", ours == peer)):
            replay = select_states(codes, states, y, 3, name, n_select=K, forced=np.array(peer))
            assert bool(replay.maximal.all()) == all_best, name
    assert differs >= 2


def test_skfeature_disr_divides_by_the_summed_redundancy():
    """scikit-feature's disr accumulates I(f f_j; y) / H(f f_j y) (written as
    (I(f_j;y) + I(f;y|f_j)) / (H(f) + H(f_j|f) + H(y|f_j) - I(y;f|f_j)), the same quantity) but
    ranks by that sum divided by sum_j (1 + I(f; f_j)), which is not Meyer et al.'s DISR."""
    sk = _skfeature()
    differs = 0
    for seed in PEER_SEEDS:
        X, y = peer_problem(seed)
        peer = sk["disr"](X, y, mode="index", n_selected_features=K).tolist()
        assert peer == _untied("skfeature_disr", X, y, by_relevance=False)
        ours = fit("disr", X.astype(float), y, discretize="none").ranking_[:K].tolist()
        assert ours == brute_order("disr", X, y, K)[0]
        differs += ours != peer
    assert differs >= 2


def test_skfeature_jmi_mifs_cife_in_index_mode_return_ranks_not_a_selection():
    """``mode="index"`` of jmi, mifs, cife (and mim) returns ``reverse_argsort`` of the LCSI picks:
    rankdata(-picks) - 1, a permutation of 0..k-1 whatever was picked. LCSI itself, called with
    mode="index", returns the order: with (beta, gamma) = (beta, 0) it is MIFS and with (1, 1)
    CIFE, both equal to fsbench's; scikit-feature's jmi runs LCSI's defaults (0.8, 0.5), not JMI."""
    sk = _skfeature()
    lcsi = sk["lcsi"]
    seen_jmi_differ = 0
    for seed in PEER_SEEDS:
        X, y = peer_problem(seed)
        Xf = X.astype(float)
        for name, (beta, gamma), ours in (
                ("mifs", (0.5, 0), fit("mifs", Xf, y, discretize="none", beta=0.5)),
                ("cife", (1, 1), fit("cife", Xf, y, discretize="none")),
                ("jmi", (0.8, 0.5), fit("jmi", Xf, y, discretize="none")),
                ("mim", (0, 0), fit("mim", Xf, y, discretize="none"))):
            picks = lcsi(X, y, mode="index", beta=beta, gamma=gamma, n_selected_features=K)
            out = np.asarray(sk[name](X, y, mode="index", n_selected_features=K))
            assert out.tolist() == (rankdata(-picks) - 1).astype(int).tolist(), name
            assert sorted(out.tolist()) == list(range(K)), name
            assert max(ours.ranking_[:K]) >= K  # the true picks are not 0..k-1
            if name == "jmi":
                seen_jmi_differ += picks.tolist() != ours.ranking_[:K].tolist()
            else:
                by_rel = name != "mim"
                assert picks.tolist() == _untied(name, X, y, beta=beta, by_relevance=by_rel), name
                assert picks.tolist() == ours.ranking_[:K].tolist(), name
    assert seen_jmi_differ >= 2


# ----------------------------------------------------------------------------- ITMO_FS
def test_itmo_fs_agrees_except_icap():
    """ITMO_FS's MIM, MIFS, CIFE, JMI and CMIM select what the definitions give (in nats, and JMI
    as I(X_k;Y) - mean_j I(X_k;X_j) + mean_j I(X_k;X_j|Y), which ranks as sum_j I(X_k X_j; Y));
    its ICAP subtracts max(0, sum_j (I(X_k;X_j) - I(X_k;X_j|Y))) instead of the sum of positive parts."""
    pytest.importorskip("ITMO_FS")
    from ITMO_FS.filters.multivariate import MultivariateFilter

    differs = 0
    for seed in (0, 3, 29):
        X, y = synergy_problem(seed)
        k = 8
        for name, measure, beta in (("mim", "MIM", None), ("mifs", "MIFS", 0.7), ("cife", "CIFE", None),
                                    ("jmi", "JMI", None), ("cmim", "CMIM", None), ("icap", "ICAP", None)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                peer = MultivariateFilter(measure, k, beta=beta)
                peer.fit(X, y)
            got = list(map(int, peer.selected_features))
            b = 1.0 if beta is None else beta
            params = {"discretize": "none", **({"beta": beta} if beta is not None else {})}
            ours = fit(name, X.astype(float), y, **params).ranking_[:k].tolist()
            if name == "icap":
                assert got == _untied("itmo_icap", X, y, k, by_relevance=False)
                assert ours == brute_order("icap", X, y, k)[0]
                differs += got != ours
            else:
                assert got == _untied(name, X, y, k, b) == ours, name
    assert differs == 3


# ----------------------------------------------------------------------------- mRMR on the engine
def _mrmr_problems():
    for seed in range(24):
        rng = np.random.default_rng(100 + seed)
        n = int(rng.integers(8, 70))
        d = int(rng.integers(1, 60))
        c = int(rng.integers(2, 5))
        y = rng.integers(0, c, n)
        y[:c] = np.arange(c)
        kind = seed % 3
        if kind == 0:
            X = rng.integers(0, 3, (n, d)).astype(float)      # many exact ties
        elif kind == 1:
            X = rng.normal(size=(n, d)) + 0.5 * y[:, None] * (rng.random(d) < 0.3)
        else:
            X = np.round(rng.normal(size=(n, d)), 1)
        if d > 4:
            X[:, 3] = X[:, 0]                                 # duplicated features
            X[:, 4] = 1.5                                     # a constant one
        yield seed, X, y


MRMR_SETTINGS = [
    {}, {"criterion": "miq"}, {"criterion": "miq", "miq_eps": 0.5}, {"std_factor": 0.5},
    {"discretize": "quantile", "n_bins": 2}, {"discretize": "quantile", "n_bins": 5, "criterion": "miq"},
    {"pool_size": 7}, {"pool_size": 1}, {"n_ranked": 3, "n_features_to_select": 5}, {"n_ranked": 1000},
]


def former_mrmr_order(codes, n_states, relevance, n_select, criterion="mid", miq_eps=1e-4):
    """mRMR's incremental search as fsbench.selectors.mrmr computed it before it moved onto the
    engine (commit 228e876), verbatim: the committed mRMR rows were computed with it."""
    n, p = codes.shape
    s2 = n_states * n_states
    order = np.lexsort((np.arange(p), -relevance))
    cand = np.ascontiguousarray(codes[:, order])
    rel = relevance[order]
    base = cand + np.arange(p) * s2
    xlogx = np.zeros(n + 1)
    xlogx[1:] = np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))
    marg = np.bincount((cand + np.arange(p) * n_states).ravel(), minlength=p * n_states)
    h_cand = np.log2(n) - xlogx[marg].reshape(p, n_states).sum(axis=1) / n
    chosen = [0]
    crit_values = [rel[0]]
    taken = np.zeros(p, dtype=bool)
    taken[0] = True
    redundancy = np.zeros(p)
    for m in range(1, n_select):
        last = chosen[-1]
        joint = np.bincount((base + (cand[:, last] * n_states)[:, None]).ravel(), minlength=p * s2)
        h_joint = np.log2(n) - xlogx[joint].reshape(p, s2).sum(axis=1) / n
        redundancy += np.maximum(h_cand[last] + h_cand - h_joint, 0.0)
        mean_red = redundancy / m
        crit = rel - mean_red if criterion == "mid" else rel / (mean_red + miq_eps)
        crit[taken] = -np.inf
        j = int(np.argmax(crit))
        chosen.append(j)
        crit_values.append(crit[j])
        taken[j] = True
    return order[np.array(chosen)], np.array(crit_values)


def former_mrmr_fit(X, y_coded, n_classes, *, n_features_to_select=4, criterion="mid", n_ranked=100,
                    discretize="mean_std", std_factor=1.0, n_bins=3, pool_size=None, miq_eps=1e-4):
    """The former ``MRMR._fit``, verbatim: (ranking, relevance, criterion of each pick, number of picks)."""
    d = X.shape[1]
    codes, n_states = discretize_features(X, discretize, std_factor, n_bins)
    relevance = mutual_info_from_joint(contingency(codes, n_states, y_coded, n_classes))
    by_relevance = np.lexsort((np.arange(d), -relevance))
    pool = by_relevance[: min(pool_size or d, d)]
    n_select = min(max(int(n_features_to_select), n_ranked), pool.size)
    picks, crit = former_mrmr_order(codes[:, pool], n_states, relevance[pool], n_select, criterion, miq_eps)
    picks = pool[picks]
    rest = by_relevance[~np.isin(by_relevance, picks)]
    return np.concatenate([picks, rest]), relevance, crit, n_select


def _same_as_mrmr(X, y, params):
    params = {"n_features_to_select": 4, **params}
    got = MRMR(**params).fit(X, y)
    classes, y_coded = np.unique(y, return_inverse=True)
    ranking, relevance, crit, n_select = former_mrmr_fit(X.astype(float), y_coded, classes.size, **params)
    assert np.array_equal(got.ranking_, ranking), params
    assert got.criterion_.tobytes() == crit.tobytes(), params
    assert got.relevance_.tobytes() == relevance.tobytes(), params
    assert got.diagnostics_["mrmr_n_incremental"] == n_select
    direct = mrmr_fit(X.astype(float), y_coded, classes.size, **params)
    assert np.array_equal(direct.ranking, ranking) and direct.criterion.tobytes() == crit.tobytes()


def test_mrmr_on_the_engine_is_the_former_mrmr_bit_for_bit():
    for seed, X, y in _mrmr_problems():
        for params in MRMR_SETTINGS:
            _same_as_mrmr(X, y, params)
        # the order function alone, with the same arguments
        codes, n_states = discretize(X, "mean_std")
        rel = np.random.default_rng(seed).integers(0, 3, X.shape[1]) / 4.0   # tied relevances
        for crit in ("mid", "miq"):
            a = former_mrmr_order(codes, n_states, rel, X.shape[1], crit, 1e-4)
            b = engine_mrmr_order(codes, n_states, rel, X.shape[1], crit, 1e-4)
            assert np.array_equal(a[0], b[0]) and a[1].tobytes() == b[1].tobytes(), seed


def test_mrmr_on_the_engine_is_the_former_mrmr_on_glioma():
    from fsbench import load_dataset
    from fsbench.errors import DataError

    try:
        ds = load_dataset("glioma")
    except DataError:
        pytest.skip("GLIOMA is not available")
    X = np.asarray(ds.X, dtype=float)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    for params in ({}, {"criterion": "miq"}, {"discretize": "quantile", "n_bins": 4}, {"pool_size": 500}):
        _same_as_mrmr(X, ds.y, {**params, "n_ranked": 60})
