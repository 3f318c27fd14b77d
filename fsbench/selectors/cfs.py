"""Correlation-based Feature Selection (Hall 1999): best-first search on the merit of subsets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsbench.selectors import register
from fsbench.selectors._discretize import DiscretizingSelector
from fsbench.selectors.base import count
from fsbench.selectors.su import EntropyTable, equalize_su_ties, su_with_class, su_with_feature


@dataclass
class _Node:
    """An expanded subset: its features in order of inclusion, sum r_cf, sum over pairs r_ff, and
    t[j] = sum_{i in S} r_ij (in order of inclusion) for every feature j."""

    path: tuple[int, ...]
    cf: float
    ff: float
    t: np.ndarray


@dataclass
class CFSResult:
    best: tuple[int, ...]  # the best subset, features in order of inclusion
    merit: float  # its merit
    n_expanded: int  # subsets expanded (the empty set included)
    n_evaluated: int  # subsets evaluated (the empty set included)


def cfs_search(su_class: np.ndarray, su_row, max_stale: int = 5) -> CFSResult:
    """Hall's best-first forward search for the subset S of maximal merit (Hall 1999, section 3.2).

    merit(S) = sum_{i in S} r_ic / sqrt(k + 2 sum_{i < j in S} r_ij), k = |S|: Hall's
    k mean(r_cf) / sqrt(k + k (k - 1) mean(r_ff)), and 0 for the empty set. ``su_class`` holds r_ic
    for every feature and ``su_row(i)`` returns the vector r_i. (all features) of feature i.

    The search, exactly:

    1. OPEN holds the empty set, CLOSED is empty, BEST is the empty set with merit 0, stale = 0.
    2. While stale < ``max_stale`` and OPEN is not empty: remove from OPEN the subset S of largest
       merit (among equal merits the one added to OPEN first; the children of one expansion are
       added in increasing order of the added feature) and put it in CLOSED. Evaluate every child
       S + {j}, j not in S, that is in neither OPEN nor CLOSED, and add it to OPEN. If a child's
       merit is strictly larger than BEST's, BEST becomes the child of largest merit (the lowest j
       among equal merits) and stale = 0; otherwise stale += 1.
    3. Return BEST, its features in the order they were added along the path from the empty set.

    This is Hall's OPEN/CLOSED best first with his stopping rule (five consecutive fully expanded
    subsets without improvement: ``max_stale`` = 5), as WEKA's BestFirst (Hall's implementation)
    counts it: on the children of each expansion. WEKA's BestFirst (3.x) differs in that its OPEN
    list keeps only the ``max_stale`` best subsets, it adds children already seen to OPEN again
    (their cached merit) and clears that cache after n_features insertions, and a child improves
    only when its merit exceeds BEST's by more than 1e-5; here every merit is exact to round-off
    and subsets are never expanded twice.

    Merits of equal subsets up to a relabelling of features' states are bit-identical (the SU are,
    and sums run in the same order), so such ties follow the rules above. A child S + {j} was seen
    before exactly when an expanded subset of the same size as S lies inside it, i.e. equals
    S - {i} + {j}: CLOSED is scanned for those instead of hashing every child.
    """
    d = su_class.size
    root = _Node((), 0.0, 0.0, np.zeros(d))
    closed: dict[int, list[frozenset[int]]] = {}
    blocks: list[tuple[_Node, np.ndarray]] = []  # one per expansion: parent, children's merits
    block_max: list[float] = []
    best_merit, best_at = 0.0, None  # best_at: (block, feature); None = the empty set
    n_expanded, n_evaluated, stale = 0, 1, 0
    node: _Node | None = root
    while stale < max_stale and node is not None:
        members = frozenset(node.path)
        k = len(node.path)
        seen = [next(iter(e - members)) for e in closed.get(k, []) if len(e - members) == 1]
        closed.setdefault(k, []).append(members)
        n_expanded += 1
        merit = (node.cf + su_class) / np.sqrt((k + 1) + 2.0 * (node.ff + node.t))
        merit[list(node.path) + seen] = -np.inf
        n_evaluated += int(np.isfinite(merit).sum())
        j = int(np.argmax(merit))
        if merit[j] > best_merit:
            best_merit, best_at, stale = float(merit[j]), (len(blocks), j), 0
        else:
            stale += 1
        blocks.append((node, merit))
        block_max.append(float(merit[j]))
        node = None
        if stale < max_stale:
            b = int(np.argmax(block_max))
            if block_max[b] > -np.inf:
                parent, merits = blocks[b]
                j = int(np.argmax(merits))
                merits[j] = -np.inf
                block_max[b] = float(merits.max())
                node = _Node(parent.path + (j,), parent.cf + su_class[j], parent.ff + parent.t[j],
                             parent.t + su_row(j))
    if best_at is None:
        best: tuple[int, ...] = ()
    else:
        b, j = best_at
        best = blocks[b][0].path + (j,)
    return CFSResult(best, best_merit, n_expanded, n_evaluated)


@register("cfs")
class CFS(DiscretizingSelector):
    """CFS: best-first search for the subset of highest merit (features correlated with the class, not each other).

    Hall, "Correlation-based Feature Selection for Machine Learning", PhD thesis, University of
    Waikato, 1999; Hall & Smith, FLAIRS 1999. The merit of a subset S of k features is
    k mean(r_cf) / sqrt(k + k (k - 1) mean(r_ff)), with r the symmetrical uncertainty (``su``) of
    the discretized features, Hall's measure for a nominal class. A best-first forward search from
    the empty set (``cfs_search``: OPEN/CLOSED lists, ties to the subset added first, stop after
    ``max_stale`` consecutive expansions that do not improve on the best subset; Hall's and WEKA's
    default is 5) returns the subset of highest merit found.

    ``ranking_``: the best subset in the order its features were added along the search path, then
    every other feature by decreasing SU with the class, ties to the lower index. ``scores_`` are
    reversed positions (best = n_features), ``su_`` holds SU(X_j, Y); ``diagnostics_`` gives
    ``cfs_n_selected``, ``cfs_merit``, ``cfs_n_expanded`` and ``cfs_n_evaluated``.

    Differences from Hall's program: Hall (and WEKA's CfsSubsetEval) discretize numeric features
    with Fayyad & Irani's MDL method before computing SU, here ``discretize`` (``"mean_std"`` or
    ``"quantile"``, as ``su``); WEKA's default also adds "locally predictive" features after the
    search, which is not done here; WEKA's BestFirst bookkeeping differs as ``cfs_search`` states.
    scikit-feature 1.2.1's ``cfs`` is a greedy forward selection (the best child of the last pick,
    no backtracking) that stops after four consecutive non-increasing merits and returns all its
    picks, with each distinct value as a state: on discrete data its picks up to its first
    non-improving one are fsbench's best subset with ``max_stale=1`` (tests/test_su_fcbf_cfs.py).
    """

    _parameter_constraints: dict = {
        **DiscretizingSelector._parameter_constraints,
        # Hall's default is 5. Each stale expansion evaluates every feature and keeps a vector of
        # n_features merits in OPEN: beyond 1000 the search is exhaustive on small problems (every
        # subset of 10 features is expanded within 1024 expansions) and only costs time and memory
        # on large ones.
        "max_stale": [count(1, 1000)],
    }

    def __init__(self, *, n_features_to_select: int = 10, max_stale: int = 5, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select=n_features_to_select, discretize=discretize,
                         std_factor=std_factor, n_bins=n_bins)
        self.max_stale = max_stale

    def _score(self, codes, n_states, y, n_classes):
        d = codes.shape[1]
        table = EntropyTable(codes.shape[0])
        su_class, _ = su_with_class(codes, n_states, y, n_classes, table)
        rows: dict[int, np.ndarray] = {}

        def su_row(i: int) -> np.ndarray:
            if i not in rows:
                su, joint, denom = su_with_feature(codes, n_states, i, None, table)
                rows[i] = equalize_su_ties(su, joint, denom)
            return rows[i]

        result = cfs_search(su_class, su_row, int(self.max_stale))
        best = np.array(result.best, dtype=np.intp)
        by_su = np.lexsort((np.arange(d), -su_class))
        rest = by_su[~np.isin(by_su, best)]
        self.ranking_ = np.concatenate([best, rest]).astype(np.intp)
        self.su_ = su_class
        self.merit_ = result.merit
        self.diagnostics_ = {"cfs_n_selected": int(best.size), "cfs_merit": float(result.merit),
                             "cfs_n_expanded": result.n_expanded, "cfs_n_evaluated": result.n_evaluated}
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores
