"""One greedy forward-selection engine for the information-theoretic criteria (``infotheory``, ``mrmr``).

Every criterion of Brown, Pocock, Zhao & Lujan (JMLR 13, 2012) that this package offers scores a
candidate X_k against the features S chosen so far through pairwise terms between X_k, one
chosen X_j and the class Y. After each pick j the engine counts, for every candidate at once,
the joint states of (X_j, X_k, Y) with one ``bincount`` over combined codes (the states of X_j
times a stride, plus a precomputed code of (candidate, state of X_k, class)), and derives from
those counts and the precomputed marginal counts

- I(X_k; X_j), I(X_k; X_j | Y), I(X_k X_j; Y), I(X_k; Y | X_j) and H(X_k X_j Y),

which each criterion folds into a running sum or minimum (``CRITERIA``); nothing is recomputed
for the features chosen before j.

Entropies come from counts, H = log2(n) - sum_c n_c log2(n_c) / n. The values k log2 k come
from a fixed-point table (``xlogx_fixed``): int64 multiples of 2^-e built from log2 of the primes,
each rounded once (computed with ``decimal``, the same on every machine), so that sum_c n_c log2
n_c of a count table is an exact integer that depends only on the table's prime exponents.
Every quantity above is a signed combination of such sums, an exact integer (n 2^e times the
quantity in bits), and the criteria's running sums (``ExactSum``) and minima are exact integers
too, except DISR's sums of ratios and MIFS with beta other than 0 or 1 (floating-point sums in
pick order). So criteria of equal value are equal integers: duplicated features, a feature's
mirror image or relabeled values, permuted samples or classes, and also different tables of
equal entropy (6 log 6 = 2 (3 log 3) + 3 (2 log 2)) tie exactly, and the tie rule decides: the
more relevant candidate (larger I(X_k; Y)), then the lower index, as in ``mrmr``; the first pick
is the most relevant feature (lower index on ties). No result depends on the machine (integer
arithmetic, no BLAS, no libm logarithm). The values reported (relevance, criterion) are the
integers divided by n 2^e, within about log2(n) 2^-e bits of the exact values (e = 47 for
n = 50 samples, 42 for n = 1000: 1e-13 and 1e-12 bits).

States: ``discretize`` as in ``fsbench.selectors._discretize`` (``mean_std``, ``quantile``), or
``none`` for features that are already discrete: each feature's distinct values are its states,
coded 0..u_j-1 in increasing order. A candidate's share of a step's table is u_j u_k c cells
(u_j states of the last pick, u_k of the candidate, c classes), so ``none`` refuses a feature
with more than ``MAX_STATES`` distinct values. Tables are built in blocks of candidates of at
most ``BLOCK`` cells and ``BLOCK`` sample-candidate codes, so memory stays bounded.

``greedy`` is the one search loop; a scorer gives it the comparison keys of every candidate at
each step: ``ExactScorer`` for the criteria above, ``MrmrScorer`` for mRMR's MID and MIQ in the
floating-point arithmetic in which mRMR's committed rows were computed (entropies summed in float
from a float k log2 k table), so that ``MRMR._fit`` calls ``mrmr_fit`` and gives the output of the
loop it replaced (fsbench.selectors.mrmr up to commit 228e876) bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from functools import lru_cache

import numpy as np

from fsbench.selectors._discretize import contingency, dense_codes, mutual_info_from_joint
from fsbench.selectors._discretize import discretize as discretize_features

#: discretize='none': the most distinct values a feature may have. A step's table holds
#: u_last * u_k * n_classes cells per candidate, so 32 values (the most states
#: discretize='quantile' makes, n_bins <= 32) already mean up to 1024 cells per candidate and class.
MAX_STATES = 32
#: the most cells of one step's table, and of sample-candidate codes, held at once (32 MB of int64)
BLOCK = 1 << 22
#: the integer k log2 k values are scaled so that the largest, n log2 n, is below 2^56: a
#: combination of four sums (each at most n log2 n) stays below 2^58, and ``ExactSum`` adds such
#: terms exactly
_FIXED_BITS = 56


# ----------------------------------------------------------------------------- states
def feature_states(X: np.ndarray, method: str, std_factor: float = 1.0,
                   n_bins: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Codes (n, d) of every feature's states and the number of states of each feature (d,).

    ``method`` is ``mean_std`` or ``quantile`` (``fsbench.selectors._discretize.discretize``: every
    feature gets the same number of possible states) or ``none`` (the distinct values of each
    feature, coded 0..u_j-1 in increasing order; at most ``MAX_STATES`` per feature).
    """
    d = X.shape[1]
    if method != "none":
        codes, n_states = discretize_features(X, method, std_factor, n_bins)
        return codes, np.full(d, n_states, dtype=np.intp)
    codes, states = dense_codes(X)
    over = np.flatnonzero(states > MAX_STATES)
    if over.size:
        j = int(over[0])
        more = f" (and {over.size - 1} more)" if over.size > 1 else ""
        raise ValueError(
            f"feature {j}{more} has {int(states[j])} distinct values, more than the {MAX_STATES} that "
            f"discretize='none' takes; use discretize='quantile' or 'mean_std' for continuous features, "
            f"or recode it into at most {MAX_STATES} values.")
    return codes.astype(np.intp, copy=False), states.astype(np.intp)


# ----------------------------------------------------------------------------- fixed-point entropies
@lru_cache(maxsize=8)
def _log2_primes(n: int) -> tuple[np.ndarray, tuple[Decimal, ...]]:
    """The primes p <= n and log2(p) to 30 significant digits (``decimal``: correctly rounded,
    the same on every machine)."""
    sieve = np.ones(n + 1, dtype=bool)
    sieve[:2] = False
    for q in range(2, math.isqrt(n) + 1):
        if sieve[q]:
            sieve[q * q::q] = False
    primes = np.flatnonzero(sieve)
    with localcontext() as ctx:
        ctx.prec = 30
        ln2 = Decimal(2).ln()
        return primes, tuple(Decimal(int(q)).ln() / ln2 for q in primes)


def xlogx_fixed(n: int) -> tuple[np.ndarray, float]:
    """k log2 k for k = 0..n in fixed point (int64 in units of 1/scale), and scale (a power of two).

    log2 of each prime p <= n is rounded once to a multiple of 1/scale (F_p), and k log2 k is
    sum_p k v_p(k) F_p exactly (v_p(k): the exponent of p in k). A sum of such values over the
    cells of a count table is therefore sum_p E_p F_p with the table's integer exponents E_p, so
    two combinations of tables with the same exponents, which are the combinations of equal
    value (the logarithms of the primes are linearly independent over the rationals), come out
    as the same integer. scale puts n log2 n below 2^56 (with log2 n bounded by n's bit length).
    """
    n = max(int(n), 1)
    e = _FIXED_BITS - (n * n.bit_length()).bit_length()
    primes, logs = _log2_primes(n)
    table = np.zeros(n + 1, dtype=np.int64)
    k = np.arange(n + 1, dtype=np.int64)
    with localcontext() as ctx:
        ctx.prec = 30
        fixed = [int((log * (Decimal(2) ** e)).to_integral_value(ROUND_HALF_EVEN)) for log in logs]
    for q, f in zip(primes.tolist(), fixed, strict=True):
        power = q
        while power <= n:  # k v_q(k) F_q: k F_q once for every power of q dividing k
            table[power::power] += k[power::power] * f
            power *= q
    return table, 2.0 ** e


def _blocks(width: np.ndarray, n: int, rows: int) -> list[tuple[int, int]]:
    """Contiguous candidate ranges of at most BLOCK table cells (``rows`` x their widths) and at
    most BLOCK sample-candidate codes, one candidate at least."""
    p = width.size
    cum = np.cumsum(width.astype(np.int64) * rows)
    out, a = [], 0
    while a < p:
        start = int(cum[a - 1]) if a else 0
        b = int(np.searchsorted(cum, start + BLOCK, side="right"))
        b = max(min(b, a + max(BLOCK // max(n, 1), 1)), a + 1)
        out.append((a, min(b, p)))
        a = min(b, p)
    return out


@dataclass
class _Block:
    lo: int
    hi: int
    base: np.ndarray    # (n, hi - lo): offset of the candidate + its state * n_classes + class
    offsets: np.ndarray  # (hi - lo,): first cell of each candidate (per state of the last pick)
    width: int          # cells per state of the last pick


class Tables:
    """Marginal sums of every feature, and the pairwise quantities of one step, from exact counts.

    ``codes`` (n, p) and ``states`` (p,) are the candidates', ``y`` the class codes
    0..n_classes-1. A sum ``S`` is sum_cells k log2 k of a count table in fixed point
    (``xlogx_fixed``), so n H = L - S with L = n log2 n, and every quantity below is an exact
    integer: n * scale times the quantity in bits.
    """

    def __init__(self, codes: np.ndarray, states: np.ndarray, y: np.ndarray, n_classes: int):
        n, p = codes.shape
        self.n, self.p, self.c = n, p, n_classes
        self.codes, self.states = codes, states
        self.xlogx, scale = xlogx_fixed(n)
        self.unit = float(n) * scale
        self.L = int(self.xlogx[n])
        self.S_y = int(self.xlogx[np.bincount(y, minlength=n_classes)].sum())
        width = states * n_classes
        self.blocks: list[_Block] = []
        self.S_k = np.empty(p, dtype=np.int64)
        self.S_ky = np.empty(p, dtype=np.int64)
        for lo, hi in _blocks(width, n, int(states.max())):
            offsets = np.zeros(hi - lo, dtype=np.intp)
            np.cumsum(width[lo:hi - 1], out=offsets[1:])
            base = codes[:, lo:hi] * n_classes + offsets
            base += y[:, None]
            block = _Block(lo, hi, base, offsets, int(width[lo:hi].sum()))
            self.blocks.append(block)
            # the marginal tables (candidate, state, class) are a step's tables with one last state
            self.S_k[lo:hi], self.S_ky[lo:hi] = self._sums(np.bincount(base.ravel(), minlength=block.width),
                                                            1, block)

    def _sums(self, counts: np.ndarray, rows: int, block: _Block) -> tuple[np.ndarray, np.ndarray]:
        """sum k log2 k per candidate of the tables without and with the class."""
        c = self.c
        with_class = self.xlogx[counts].reshape(rows, block.width).sum(axis=0)
        by_class = counts.reshape(rows * block.width // c, c)
        pair = by_class[:, 0].copy()
        for k in range(1, c):  # the classes summed out (faster than a sum over a short last axis)
            pair += by_class[:, k]
        without = self.xlogx[pair].reshape(rows, block.width // c).sum(axis=0)
        return np.add.reduceat(without, block.offsets // c), np.add.reduceat(with_class, block.offsets)

    def relevance(self) -> np.ndarray:
        """n * scale * I(X_k; Y) (int64)."""
        return np.maximum(self.L - self.S_k - self.S_y + self.S_ky, 0)

    def step(self, j: int) -> Step:
        """The pairwise quantities between candidate j (just chosen) and every candidate."""
        last = self.codes[:, j]
        u = int(self.states[j])
        S_kj = np.empty(self.p, dtype=np.int64)
        S_kjy = np.empty(self.p, dtype=np.int64)
        for block in self.blocks:
            cells = block.base + (last * block.width)[:, None]
            counts = np.bincount(cells.ravel(), minlength=u * block.width)
            S_kj[block.lo:block.hi], S_kjy[block.lo:block.hi] = self._sums(counts, u, block)
        return Step(self, j, S_kj, S_kjy)


class Step:
    """n * scale times I(X_k; X_j), I(X_k; X_j | Y), I(X_k X_j; Y), I(X_k; Y | X_j) in bits, exact
    integers for every candidate k against the last pick j (quantities that cannot be negative
    are clipped at 0 against rounding), and the float I(X_k X_j; Y) / H(X_k X_j Y)."""

    def __init__(self, t: Tables, j: int, S_kj: np.ndarray, S_kjy: np.ndarray):
        self.t = t
        self.S_j, self.S_jy = int(t.S_k[j]), int(t.S_ky[j])
        self.S_kj, self.S_kjy = S_kj, S_kjy

    def mi(self) -> np.ndarray:
        """I(X_k; X_j) = H(k) + H(j) - H(kj)"""
        return np.maximum(self.t.L - self.t.S_k - self.S_j + self.S_kj, 0)

    def cmi_given_class(self) -> np.ndarray:
        """I(X_k; X_j | Y) = H(kY) + H(jY) - H(kjY) - H(Y)"""
        return np.maximum(self.S_kjy + self.t.S_y - self.t.S_ky - self.S_jy, 0)

    def redundancy_gain(self) -> np.ndarray:
        """I(X_k; X_j) - I(X_k; X_j | Y) (negative for a complementary pair)"""
        return self.mi() - self.cmi_given_class()

    def joint_mi(self) -> np.ndarray:
        """I(X_k X_j; Y) = H(kj) + H(Y) - H(kjY)"""
        return np.maximum(self.t.L - self.S_kj - self.t.S_y + self.S_kjy, 0)

    def cmi_given_last(self) -> np.ndarray:
        """I(X_k; Y | X_j) = H(kj) + H(jY) - H(kjY) - H(j)"""
        return np.maximum(self.S_kjy + self.S_j - self.S_kj - self.S_jy, 0)

    def symmetric_relevance(self) -> np.ndarray:
        """I(X_k X_j; Y) / H(X_k X_j Y), a float (the class has two states at least, so H(kjY) > 0)"""
        return self.joint_mi().astype(float) / (self.t.L - self.S_kjy).astype(float)


# ----------------------------------------------------------------------------- criteria
_SPLIT = 29
_LOW = (1 << _SPLIT) - 1


class ExactSum:
    """Running sums of int64 terms (|term| < 2^58, as every quantity of ``Step``), exact for up
    to 2^33 terms: the high bits and the low 29 bits of the terms are summed apart."""

    def __init__(self, p: int):
        self.hi = np.zeros(p, dtype=np.int64)
        self.lo = np.zeros(p, dtype=np.int64)

    def add(self, term: np.ndarray) -> None:
        self.hi += term >> _SPLIT
        self.lo += term & _LOW

    def key(self, minus_from: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(high, low) with 0 <= low < 2^29 of the sums, or of ``minus_from`` minus the sums: the
        integers high * 2^29 + low, ordered as the pairs are lexicographically."""
        hi, lo = self.hi, self.lo
        if minus_from is not None:
            hi, lo = (minus_from >> _SPLIT) - hi, (minus_from & _LOW) - lo
        return hi + (lo >> _SPLIT), lo & _LOW


@dataclass(frozen=True)
class Criterion:
    """term: the per-step quantity of a candidate against the last pick (exact int64, or float
    when ``exact`` is False); combine: how the terms over S accumulate ("sum" or "min"); score:
    "acc" (the criterion is the accumulated terms) or "relevance - acc" (I(X_k; Y) minus them;
    "relevance - beta acc" for MIFS)."""

    term: Callable[[Step], np.ndarray]
    combine: str
    score: str
    exact: bool = True


CRITERIA: dict[str, Criterion] = {
    "mim": Criterion(Step.mi, "sum", "relevance - beta acc"),  # with beta = 0: I(X_k; Y) alone
    "mifs": Criterion(Step.mi, "sum", "relevance - beta acc"),
    "cife": Criterion(Step.redundancy_gain, "sum", "relevance - acc"),
    "icap": Criterion(lambda q: np.maximum(q.redundancy_gain(), 0), "sum", "relevance - acc"),
    "jmi": Criterion(Step.joint_mi, "sum", "acc"),
    "jmim": Criterion(Step.joint_mi, "min", "acc"),
    "cmim": Criterion(Step.cmi_given_last, "min", "acc"),
    "disr": Criterion(Step.symmetric_relevance, "sum", "acc", exact=False),
}


class ExactScorer:
    """A criterion of ``CRITERIA`` on ``Tables``: the comparison keys are exact integers (a pair
    (high, low) for sums), except for DISR's sums of ratios and MIFS with beta not 0 or 1, which
    are floating point sums in pick order."""

    def __init__(self, tables: Tables, rule: Criterion, beta: float = 1.0):
        self.tables, self.rule, self.beta = tables, rule, float(beta)
        self.rel = tables.relevance()
        self.unit = tables.unit  # the keys are in units of 1 / (n scale) bits (DISR's sums: bits / bits)
        p = tables.p
        if rule.score == "relevance - beta acc" and self.beta == 1.0:
            self.rule = rule = Criterion(rule.term, rule.combine, "relevance - acc")
        if rule.combine == "min":
            self.acc = np.full(p, np.iinfo(np.int64).max) if rule.exact else np.full(p, np.inf)
        else:
            self.acc = ExactSum(p) if rule.exact else np.zeros(p)

    def first(self) -> tuple[np.ndarray, None]:
        return self.rel, None

    def update(self, last: int) -> None:
        if self.rule.score == "relevance - beta acc" and self.beta == 0.0:
            return  # MIM: nothing to accumulate
        term = self.rule.term(self.tables.step(last))
        if self.rule.combine == "min":
            np.minimum(self.acc, term, out=self.acc)
        elif isinstance(self.acc, ExactSum):
            self.acc.add(term)
        else:
            self.acc += term

    def key(self, m: int) -> tuple[np.ndarray, np.ndarray | None]:
        rule, acc = self.rule, self.acc
        if not rule.exact:  # DISR's sums of ratios
            self.unit = 1.0
        if rule.combine == "min" or not rule.exact:
            return acc, None
        if rule.score == "acc":
            return acc.key()
        if rule.score == "relevance - acc":
            return acc.key(minus_from=self.rel)
        if self.beta == 0.0:
            return self.rel, None
        hi, lo = acc.key()  # relevance - beta acc in floating point
        return self.rel.astype(float) - self.beta * (hi.astype(float) * (1 << _SPLIT) + lo), None

    def value(self, major: np.ndarray, minor: np.ndarray | None, j: int) -> float:
        """The criterion of candidate j in bits."""
        if minor is not None:
            return (int(major[j]) * (1 << _SPLIT) + int(minor[j])) / self.unit
        return float(major[j]) / self.unit


def _best(major: np.ndarray, minor: np.ndarray | None, free: np.ndarray) -> np.ndarray:
    """Which free candidates have the largest (major, minor)."""
    tied = free & (major == major[free].max())
    if minor is not None and np.count_nonzero(tied) > 1:
        tied &= minor == minor[tied].max()
    return tied


def greedy(scorer: ExactScorer | MrmrScorer, n_select: int, rank: np.ndarray | None = None,
           forced: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The greedy forward search: the picks, the criterion value of each, and whether each
    maximized the criterion.

    ``scorer`` gives the comparison keys of every candidate (``first()`` for the first pick,
    ``key(m)`` after ``update(last pick)`` at step m >= 1; a key is an array ``major`` and an
    optional ``minor`` compared when the majors are equal) and ``value`` turns a key into the
    criterion. Each step picks the free candidate of largest key, and among equal keys the one of
    lowest ``rank`` (None: the lowest position). With ``forced`` (a sequence of candidates) the
    picks are those instead, so that another implementation's order can be replayed.
    """
    major, minor = scorer.first()
    p = major.size
    free = np.ones(p, dtype=bool)
    chosen, values, best = [], [], []
    for m in range(n_select):
        if m:
            scorer.update(chosen[-1])
            major, minor = scorer.key(m)
        tied = _best(major, minor, free)
        if forced is not None:
            j = int(forced[m])
        else:
            where = np.flatnonzero(tied)
            j = int(where[0] if rank is None else where[np.argmin(rank[where])])
        chosen.append(j)
        values.append(scorer.value(major, minor, j))
        best.append(bool(tied[j]))
        free[j] = False
    return np.array(chosen), np.array(values), np.array(best)


@dataclass
class Selection:
    """A fitted search: the full ranking, I(X_f; Y) of every feature, the criterion of each pick,
    the number of greedy picks; with a replayed order, whether each pick maximized the criterion."""

    ranking: np.ndarray
    relevance: np.ndarray
    criterion: np.ndarray
    n_incremental: int
    maximal: np.ndarray | None = None


def _ranking(picks: np.ndarray, by_relevance: np.ndarray) -> np.ndarray:
    return np.concatenate([picks, by_relevance[~np.isin(by_relevance, picks)]])


def select(X: np.ndarray, y: np.ndarray, n_classes: int, criterion: str, *, n_select: int,
           discretize: str = "mean_std", std_factor: float = 1.0, n_bins: int = 3,
           beta: float = 1.0) -> Selection:
    """Greedy forward selection of ``n_select`` features (at most all) by a criterion of ``CRITERIA``,
    then every other feature by decreasing relevance (ties to the lower index)."""
    codes, states = feature_states(X, discretize, std_factor, n_bins)
    return select_states(codes, states, y, n_classes, criterion, n_select=n_select, beta=beta)


def select_states(codes: np.ndarray, states: np.ndarray, y: np.ndarray, n_classes: int, criterion: str, *,
                  n_select: int, beta: float = 1.0, forced: np.ndarray | None = None) -> Selection:
    """``select`` on states already coded: ``codes`` (n, d) in 0..states[f]-1. With ``forced`` (a
    sequence of features), those are the picks (``maximal`` says which maximized the criterion)."""
    d = codes.shape[1]
    tables = Tables(codes, states, y, n_classes)
    scorer = ExactScorer(tables, CRITERIA[criterion], 0.0 if criterion == "mim" else beta)
    order = np.lexsort((np.arange(d), -scorer.rel))
    rank = np.empty(d, dtype=np.intp)
    rank[order] = np.arange(d)
    n_select = min(int(n_select), d) if forced is None else len(forced)
    picks, values, maximal = greedy(scorer, n_select, rank, forced)
    return Selection(_ranking(picks, order), scorer.rel / tables.unit, values, n_select, maximal)


# ----------------------------------------------------------------------------- mRMR (float arithmetic)
class MrmrScorer:
    """mRMR's MID / MIQ on candidates ordered by (relevance decreasing, index increasing), in the
    floating-point arithmetic of the loop mRMR ran on before (same cells, same order of summation,
    same operations), so that the first maximum breaks ties as it does."""

    def __init__(self, codes: np.ndarray, n_states: int, rel: np.ndarray, criterion: str, miq_eps: float):
        n, p = codes.shape
        self.n, self.p, self.S = n, p, n_states
        self.rel, self.criterion, self.miq_eps = rel, criterion, miq_eps
        self.cand = np.ascontiguousarray(codes)
        self.base = self.cand + np.arange(p) * (n_states * n_states)
        self.xlogx = np.zeros(n + 1)
        self.xlogx[1:] = np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))
        marg = np.bincount((self.cand + np.arange(p) * n_states).ravel(), minlength=p * n_states)
        self.h = np.log2(n) - self.xlogx[marg].reshape(p, n_states).sum(axis=1) / n
        self.redundancy = np.zeros(p)

    def first(self) -> tuple[np.ndarray, None]:
        return self.rel, None

    def update(self, last: int) -> None:
        """Add I(x_j; x_last) of every candidate j to the running redundancy."""
        s2 = self.S * self.S
        joint = np.bincount((self.base + (self.cand[:, last] * self.S)[:, None]).ravel(), minlength=self.p * s2)
        h_joint = np.log2(self.n) - self.xlogx[joint].reshape(self.p, s2).sum(axis=1) / self.n
        self.redundancy += np.maximum(self.h[last] + self.h - h_joint, 0.0)

    def key(self, m: int) -> tuple[np.ndarray, None]:
        mean_red = self.redundancy / m
        return (self.rel - mean_red if self.criterion == "mid" else self.rel / (mean_red + self.miq_eps)), None

    def value(self, major: np.ndarray, minor: None, j: int) -> float:
        return major[j]


def mrmr_order(codes: np.ndarray, n_states: int, relevance: np.ndarray, n_select: int,
               criterion: str = "mid", miq_eps: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """mRMR's incremental search on this engine: the first ``n_select`` picks and their criterion.

    Step m maximizes I(x_j; c) - R_j (MID) or I(x_j; c) / (R_j + miq_eps) (MIQ) with R_j the mean
    of I(x_j; x_i) over the m picks so far; exact ties go to the more relevant candidate, then
    the lower index. Same arguments and output, bit for bit, as mRMR's former loop (tests/test_infotheory.py).
    """
    p = codes.shape[1]
    order = np.lexsort((np.arange(p), -relevance))
    scorer = MrmrScorer(codes[:, order], n_states, relevance[order], criterion, miq_eps)
    picks, values, _ = greedy(scorer, n_select)
    return order[picks], values


def mrmr_fit(X: np.ndarray, y: np.ndarray, n_classes: int, *, n_features_to_select: int, criterion: str = "mid",
             n_ranked: int = 100, discretize: str = "mean_std", std_factor: float = 1.0, n_bins: int = 3,
             pool_size: int | None = None, miq_eps: float = 1e-4) -> Selection:
    """What ``MRMR._fit`` computes (ranking, relevance, criterion of each pick, number of picks),
    with ``mrmr``'s parameters, on this engine."""
    d = X.shape[1]
    codes, n_states = discretize_features(X, discretize, std_factor, n_bins)
    relevance = mutual_info_from_joint(contingency(codes, n_states, y, n_classes))
    by_relevance = np.lexsort((np.arange(d), -relevance))
    pool = by_relevance[: min(pool_size or d, d)]
    n_select = min(max(int(n_features_to_select), int(n_ranked)), pool.size)
    picks, values = mrmr_order(codes[:, pool], n_states, relevance[pool], n_select, criterion, float(miq_eps))
    return Selection(_ranking(pool[picks], by_relevance), relevance, values, int(n_select))
