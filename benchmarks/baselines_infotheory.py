"""Baseline cases of the information-theoretic filters (mim, mifs, cife, jmi, jmim, cmim, icap, disr).

Each criterion is timed against scikit-feature 1.2.1 and ITMO_FS 0.3.3 for 100 picks. Both sides
get the same discretized states: ``prepare`` cuts every z-scored feature into fsbench's default
3 states (mean +- 1 std, ``fsbench.selectors._discretize.discretize``) and hands them over as a
float matrix; fsbench is called with ``discretize="none"`` on them, so its time includes coding
the states (per-feature distinct values), counting the marginal tables and the greedy search, and
gives the same ranking as its default ``discretize="mean_std"`` on the z-scored data. Neither side
is timed for the discretization itself.

Both peers recompute mutual information per candidate per step in Python loops over samples
(scikit-feature: ~1.5 s per pick for CMIM on GLIOMA's 4434 features, ~2.6 s for DISR), and
ITMO_FS recomputes the sums over every chosen feature at each step (quadratic in picks), so the
peers get the leading features only: ``max_features`` = 1000 for scikit-feature, 120 for ITMO_FS
(both sides get the same columns).

Where a peer has no criterion (JMIM in both, DISR in ITMO_FS) the case runs the peer's own greedy
loop with the criterion written from its own estimators (``_skfeature_greedy``, ``_itmo_measure``),
said in the peer column. Outputs are compared as orders of picks. Where the orders differ, the
peer's order is replayed on fsbench's criterion (``maximizing_picks``, on the states of the last
``prepare``): if every peer pick maximizes it exactly, the two differ only in how exact ties are
ordered (fsbench: the more relevant feature, then the lower index; the peers: the lower index,
or whichever their floating-point sums put ahead). Where a peer does not compute the definition
(scikit-feature's ICAP, DISR and JMI, ITMO_FS's ICAP) the comparison states the deviation, shown
on small problems in ``tests/test_infotheory.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from baseline_cases import Case

from fsbench.selectors._discretize import discretize
from fsbench.selectors._it_engine import feature_states, select_states

SKF, ITMO = "scikit-feature 1.2.1", "ITMO_FS 0.3.3"
SKF_MAX, ITMO_MAX = 1000, 120
NONE = {"discretize": "none"}
#: the states of the last ``prepare``, which the driver calls just before timing both sides and
#: comparing them: a comparison replays the peer's order on them
_PREPARED: dict[str, np.ndarray] = {}


def prepare(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """fsbench's default states (3 per feature, mean +- 1 std) as a float matrix, for both sides."""
    states = discretize(X, "mean_std")[0].astype(float)
    _PREPARED.update(X=states, y=y)
    return states, y


def maximizing_picks(criterion: str, order: np.ndarray, beta: float = 1.0) -> int:
    """At how many steps the pick of ``order`` maximizes fsbench's criterion exactly (the peer's
    order replayed on the prepared states)."""
    codes, states = feature_states(_PREPARED["X"], "none")
    classes, y = np.unique(_PREPARED["y"], return_inverse=True)
    replay = select_states(codes, states, y, classes.size, criterion, n_select=len(order), beta=beta,
                           forced=np.asarray(order, dtype=int))
    return int(replay.maximal.sum())


def order_compare(criterion: str, beta: float = 1.0, deviation: str = ""):
    """Compares the first k picks; where they differ, replays the peer's order on fsbench's criterion."""
    def compare(fitted: Any, peer: np.ndarray, k: int) -> str:
        ours, theirs = np.asarray(fitted.ranking_[:k]), np.asarray(peer[:k]).astype(int)
        if np.array_equal(ours, theirs):
            text = f"identical order of {k} picks"
        else:
            first = int(np.flatnonzero(ours != theirs)[0])
            common = np.intersect1d(ours, theirs).size
            hits = maximizing_picks(criterion, theirs, beta)
            text = f"orders differ from pick {first + 1} on ({common} of {k} picks in common); " + (
                "every peer pick maximizes the criterion exactly: exact ties ordered otherwise" if hits == k
                else f"the peer's pick maximizes the criterion at {hits} of {k} steps")
        return f"{text}; the peer computes {deviation}" if deviation else text
    return compare


def ranks_not_order(fitted: Any, peer: np.ndarray, k: int) -> str:
    perm = sorted(np.asarray(peer).astype(int).tolist()) == list(range(k))
    return ("not a selection: the peer returns ranks of its picks, a permutation of 0..k-1" if perm
            else "unexpected peer output")


# ----------------------------------------------------------------------------- scikit-feature
def _skf(name: str, **kwargs):
    def run(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
        from skfeature.function.information_theoretical_based import CMIM, DISR, ICAP, JMI, LCSI
        fn = {"cmim": CMIM.cmim, "icap": ICAP.icap, "disr": DISR.disr, "jmi": JMI.jmi, "lcsi": LCSI.lcsi}[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(fn(X, y, mode="index", n_selected_features=k, **kwargs))
    return run


def _skfeature_greedy(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """JMIM in scikit-feature's loop (its cmim's structure) and estimators: the running minimum of
    I(f_sel; y) + I(f; y | f_sel) = I(f f_sel; y) over the chosen features."""
    from skfeature.utility.entropy_estimators import cmidd, midd

    n_features = X.shape[1]
    t1 = np.array([midd(X[:, i], y) for i in range(n_features)])
    F = [int(np.argmax(t1))]
    min_vals = np.full(n_features, np.inf)
    while len(F) < k:
        f_select = X[:, F[-1]]
        best, idx = -np.inf, -1
        for i in range(n_features):
            if i not in F:
                min_vals[i] = min(min_vals[i], midd(f_select, y) + cmidd(X[:, i], y, f_select))
                if min_vals[i] > best:
                    best, idx = min_vals[i], i
        F.append(idx)
    return np.array(F)


# ----------------------------------------------------------------------------- ITMO_FS
def _itmo(measure, beta: float | None = None):
    def run(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
        from ITMO_FS.filters.multivariate import MultivariateFilter
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer = MultivariateFilter(measure if isinstance(measure, str) else measure(), k, beta=beta)
            peer.fit(X, y)
        return np.asarray(peer.selected_features, dtype=int)
    return run


def _itmo_measure(name: str):
    """JMIM or DISR as an ITMO_FS measure (its MultivariateFilter's signature) from its estimators:
    I(X_k X_j; Y) is its joint_mutual_information, H(X_k X_j Y) its entropy of the zipped columns."""
    def make():
        from ITMO_FS.utils.information_theory import entropy, joint_mutual_information, matrix_mutual_information

        def measure(selected, free, X, y):
            if selected.size == 0:
                return matrix_mutual_information(X, y)
            if name == "jmim":
                return np.array([min(joint_mutual_information(X[:, f], X[:, j], y) for j in selected) for f in free])
            return np.array([sum(joint_mutual_information(X[:, f], X[:, j], y)
                                 / entropy(list(zip(X[:, f], X[:, j], y, strict=True))) for j in selected)
                             for f in free])
        return measure
    return make


# ----------------------------------------------------------------------------- the cases
def _case(method, params, peer, run_peer, max_features, note="", deviation="", compare=None):
    compare = compare or order_compare(method, params.get("beta", 1.0), deviation)
    return Case(method=method, params={**NONE, **params}, peer=peer, run_peer=run_peer, compare=compare,
                prepare=prepare, max_features=max_features, note=note)


ICAP_SKF = "CMIM's criterion I(f;y) - max_j (I(f;f_j) - I(f;f_j|y)), not ICAP's sum of positive parts"
DISR_SKF = "the DISR sum divided by sum_j (1 + I(f;f_j))"
ICAP_ITMO = "I(f;y) - max(0, sum_j (I(f;f_j) - I(f;f_j|y))), not the sum of positive parts"

CASES: list[Case] = [
    # scikit-feature: LCSI with mode="index" is the loop its mim, mifs and cife run (their own
    # mode="index" returns ranks of the picks, not the order)
    _case("mim", {}, f"{SKF} LCSI(beta=0, gamma=0) (what its mim runs)", _skf("lcsi", beta=0, gamma=0), SKF_MAX),
    _case("mifs", {"beta": 1.0}, f"{SKF} LCSI(beta=1, gamma=0) (its mifs)", _skf("lcsi", beta=1.0, gamma=0),
          SKF_MAX, "beta = 1 on both sides"),
    _case("cife", {}, f"{SKF} LCSI(beta=1, gamma=1) (its cife)", _skf("lcsi", beta=1, gamma=1), SKF_MAX),
    _case("jmi", {}, f"{SKF} jmi(mode='index')", _skf("jmi"), SKF_MAX,
          "the peer's jmi runs LCSI(beta=0.8, gamma=0.5), not JMI, and returns ranks", compare=ranks_not_order),
    _case("jmim", {}, f"{SKF} estimators (midd, cmidd) in its CMIM loop (no JMIM in the package)",
          _skfeature_greedy, SKF_MAX),
    _case("cmim", {}, f"{SKF} cmim", _skf("cmim"), SKF_MAX),
    _case("icap", {}, f"{SKF} icap", _skf("icap"), SKF_MAX, deviation=ICAP_SKF),
    _case("disr", {}, f"{SKF} disr", _skf("disr"), SKF_MAX, deviation=DISR_SKF),
    # ITMO_FS: MultivariateFilter with its measures (natural logarithms: the same orders)
    _case("mim", {}, f"{ITMO} MultivariateFilter('MIM')", _itmo("MIM"), ITMO_MAX),
    _case("mifs", {"beta": 1.0}, f"{ITMO} MultivariateFilter('MIFS', beta=1)", _itmo("MIFS", 1.0), ITMO_MAX),
    _case("cife", {}, f"{ITMO} MultivariateFilter('CIFE')", _itmo("CIFE"), ITMO_MAX),
    _case("jmi", {}, f"{ITMO} MultivariateFilter('JMI')", _itmo("JMI"), ITMO_MAX,
          "the peer's JMI is I(f;y) - mean_j I(f;f_j) + mean_j I(f;f_j|y), which ranks as sum_j I(f f_j;y)"),
    _case("jmim", {}, f"{ITMO} MultivariateFilter with JMIM from its estimators (no JMIM in the package)",
          _itmo(_itmo_measure("jmim")), ITMO_MAX),
    _case("cmim", {}, f"{ITMO} MultivariateFilter('CMIM')", _itmo("CMIM"), ITMO_MAX),
    _case("icap", {}, f"{ITMO} MultivariateFilter('ICAP')", _itmo("ICAP"), ITMO_MAX, deviation=ICAP_ITMO),
    _case("disr", {}, f"{ITMO} MultivariateFilter with DISR from its estimators (no DISR in the package)",
          _itmo(_itmo_measure("disr")), ITMO_MAX),
]
