"""DSO-FS (Peng & Fan 2016) against independent computations.

Oracles: cvxpy's optimum of the convex p = 1 problem and of single reweighted steps, a literal
transcription of the paper's Algorithm 1 (Gaussian-elimination solution space, eq. 12 U step,
CVX-style E step), scipy's NNLS, Theorem 1 (monotone ||W||_{2,p}) as a property, and planted
and overdetermined problems.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.optimize import nnls

from fsbench.selectors import make_selector
from fsbench.selectors._dso_columns import _LQ, QPError, _Column, _NullColumn
from fsbench.selectors._dso_qp import nnls_columns, nnqp
from fsbench.selectors.dso import DSOFS, DSOWarning, dso_fit

cp = pytest.importorskip("cvxpy")


def pm1(y, c):
    Y = -np.ones((y.size, c))
    Y[np.arange(y.size), y] = 1.0
    return Y


def problem(m, n, c, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    y = np.arange(m) % c
    rng.shuffle(y)
    return X, y, pm1(y, c)


def norm2p(W, p):
    return np.sum(np.linalg.norm(W, axis=1) ** p) ** (1 / p)


def cvx_optimum(X, Y, penalize_bias=True):
    m, n = X.shape
    Xa = np.hstack([X, np.ones((m, 1))])
    W = cp.Variable((n + 1, Y.shape[1]))
    rows = W if penalize_bias else W[:n]
    prob = cp.Problem(cp.Minimize(cp.sum(cp.norm(rows, 2, axis=1))), [cp.multiply(Y, Xa @ W) >= 1])
    prob.solve(solver="CLARABEL")
    return prob.value


# ---------------------------------------------------------------------------------------------
# the exact sign-constrained solvers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("with_eq", [False, True])
def test_nnqp_matches_cvxpy(seed, with_eq):
    rng = np.random.default_rng(seed)
    m, s = 25, [3, 8, 40][seed % 3]  # s < m: singular H
    X = rng.standard_normal((m, s))
    y = np.sign(X @ rng.standard_normal(s) + 0.3)  # separable
    H = np.outer(y, y) * (X @ X.T)
    f = 1.0 + 0.5 * rng.random(m)
    a = cp.Variable(m)
    cons = [a >= 0] + ([y @ a == 0] if with_eq else [])
    ref = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(H)) - f @ a), cons)
    ref.solve(solver="CLARABEL")
    x, _ = nnqp(H, f, e=y if with_eq else None)
    assert np.all(x >= 0)
    if with_eq:
        assert abs(y @ x) <= 1e-9 * np.abs(x).sum()
    val = 0.5 * x @ H @ x - f @ x
    assert val <= ref.value + 1e-7 * abs(ref.value)
    # warm start from a perturbed point reaches the same value
    x2, _ = nnqp(H, f, x0=x * (1 + rng.random(m)), e=y if with_eq else None)
    assert 0.5 * x2 @ H @ x2 - f @ x2 == pytest.approx(val, rel=1e-9, abs=1e-12)


def test_nnqp_detects_unbounded():
    X = np.array([[1.0], [2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0])  # not separable through the origin
    with pytest.raises(QPError):
        nnqp(np.outer(y, y) * (X @ X.T), np.ones(3))


@pytest.mark.parametrize("seed", range(8))
def test_nnls_columns_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(3, 25))
    m = int(rng.integers(r, 4 * r))
    F = rng.standard_normal((r, m)) * np.exp(rng.standard_normal(r))[:, None]
    S = np.where(rng.random((m, 3)) < 0.5, 1.0, -1.0)
    B = 3 * rng.standard_normal((r, 3))
    Z, Res = nnls_columns(F, S, B)
    Zw, _ = nnls_columns(F, S, B, Z0=np.maximum(Z + 0.3 * rng.standard_normal(Z.shape), 0))
    for j in range(3):
        A = F * S[:, j]
        ref = nnls(A, -B[:, j], maxiter=50 * m)[1]
        for ZZ in (Z, Zw):
            assert np.all(ZZ[:, j] >= 0)
            got = np.linalg.norm(A @ ZZ[:, j] + B[:, j])
            assert got <= ref + 1e-9 * max(1.0, np.linalg.norm(B[:, j]))
        np.testing.assert_allclose(Res[:, j], A @ Z[:, j] + B[:, j], atol=1e-10 * np.abs(B).max())


@pytest.mark.parametrize("seed", range(4))
def test_nnls_interior_point_path_matches_scipy(seed):
    # the path used for large least-squares spaces: interior point, then crossover to a vertex
    rng = np.random.default_rng(seed)
    r, m = 30, 150
    Xp = np.linalg.pinv(rng.standard_normal((m, r)))  # the DSO-FS structure: F = D X^+
    F = Xp * np.exp(rng.standard_normal(r))[:, None]
    S = np.where(rng.random((m, 2)) < 0.2, 1.0, -1.0)
    if seed % 2:
        S[:, 1] = np.sign(rng.standard_normal(m) + Xp.T @ rng.standard_normal(r))  # separable-ish
    B = F @ S  # b = F y
    Z, Res = nnls_columns(F, S, B, ipm_rows=10)
    for j in range(2):
        A = F * S[:, j]
        ref = nnls(A, -B[:, j], maxiter=50 * m)[1]
        assert np.all(Z[:, j] >= 0)
        assert np.linalg.norm(Res[:, j]) == pytest.approx(ref, rel=1e-8, abs=1e-9 * np.abs(B).max())


def test_column_qr_updates_factor_the_passive_columns():
    # after inserts and deletes (Givens downdates), Q R must equal the passive columns of
    # F diag(s) and Q must stay orthonormal, independently of how the factors were updated
    rng = np.random.default_rng(3)
    r, m = 12, 40
    F = rng.standard_normal((r, m))
    s = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    col = _Column(F, s, rng.standard_normal(r))
    col.factor([3, 7, 8, 20, 31])
    for t in [1, 2, 5, 11, 13, 17, 19]:
        assert col.insert(t)
    for i in [0, 5, 3, 8]:  # first, middle and last passive positions
        col.delete(i)
    k = col.k
    assert k == 8
    Q, R = col.Q[:, :k], col.R[:k, :k]
    np.testing.assert_allclose(Q @ R, F[:, col.P] * s[col.P], atol=1e-12)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(np.tril(R, -1), 0.0, atol=0)
    np.testing.assert_allclose(col.qb[:k], Q.T @ col.b, atol=1e-12)
    # the full Q stays orthogonal, the buffer's trailing columns are the identity's (the
    # solves run on the whole buffer), and the least-squares solution and residual on P are
    # those of a dense solver
    np.testing.assert_allclose(col.Q.T @ col.Q, np.eye(r), atol=1e-12)
    np.testing.assert_array_equal(col.R[:, k:], np.eye(r)[:, k:])
    A = F[:, col.P] * s[col.P]
    x = np.linalg.lstsq(A, -col.b, rcond=None)[0]
    np.testing.assert_allclose(col.ls(), x, atol=1e-10)
    np.testing.assert_allclose(col.residual(), col.b + A @ x, atol=1e-10)
    # a square Q (k = r) is downdated too
    col.factor(list(range(r)))
    assert col.k == r
    col.delete(2)
    np.testing.assert_allclose(col.Q[:, :r - 1] @ col.R[:r - 1, :r - 1],
                               F[:, col.P] * s[col.P], atol=1e-12)



def _scaled_wide(rng, r, m, span):
    """F = diag(d) R11^-1 Q^T as DSO-FS's least-squares E step builds it (d over ``span``
    decades), with its factors for :class:`_LQ`."""
    Q = linalg.qr(rng.standard_normal((m, r)), mode="economic")[0]
    R11 = np.triu(rng.standard_normal((r, r))) + 5 * np.eye(r)
    d = 10.0 ** rng.uniform(0, span, r)
    F = d[:, None] * linalg.solve_triangular(R11, Q.T)
    V = linalg.qr(Q, mode="full")[0][:, r:]
    return F, (d, R11, Q, V)


@pytest.mark.parametrize("span", [0, 8])
@pytest.mark.parametrize("structured", [True, False])
def test_null_column_solves_the_passive_least_squares_after_updates(span, structured):
    # the complement factorization gives the dense solver's least-squares solution and residual
    # on P, from scratch and after inserts and deletes, under rows scaled over 8 decades
    rng = np.random.default_rng(5)
    r, m = 37, 40
    F, parts = _scaled_wide(rng, r, m, span)
    lq = _LQ.from_scaled_basis(*parts) if structured else _LQ.from_matrix(F)
    s = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    b = F @ rng.standard_normal(m)
    P = sorted(rng.choice(m, 30, replace=False).tolist())
    col = _NullColumn(F, s, b, P, lq=lq)
    for t in [i for i in range(m) if i not in P][:4]:
        assert col.insert(t)
    for i in [3, 0, 20]:
        col.delete(i)
    col.delete(col.k - 1)  # the last passive position
    k = col.k
    np.testing.assert_allclose(col.Q[:, k:].T @ col.Q[:, k:], np.eye(r - k), atol=1e-12)
    A = F[:, col.P] * s[col.P]
    x = np.linalg.lstsq(A, -b, rcond=None)[0]
    rel = 1e-9 if span else 1e-12
    np.testing.assert_allclose(col.ls(), x, rtol=rel, atol=rel * np.abs(x).max())
    res = b + A @ x
    # (scaled rows: lstsq's own residual is accurate to its scale, ||b||, not to the residual's)
    np.testing.assert_allclose(col.residual(), res, atol=rel * np.abs(b if span else res).max())
    # a duplicated column does not enter
    F2 = np.hstack([F, F[:, col.P[:1]]])
    lq2 = _LQ.from_matrix(F2)
    s2 = np.append(s, s[col.P[0]])
    dup = _NullColumn(F2, s2, b, list(col.P), lq=lq2)
    assert not dup.insert(m)


@pytest.mark.parametrize("seed", range(3))
def test_nnls_columns_on_the_complement_matches_the_full_qr(seed):
    rng = np.random.default_rng(seed)
    r, m, c = 37, 40, 4
    F, parts = _scaled_wide(rng, r, m, 4)
    S = np.where(rng.random((m, c)) < 0.5, 1.0, -1.0)
    B = F @ rng.standard_normal((m, c))
    Z, Res = nnls_columns(F, S, B)
    Zn, Resn = nnls_columns(F, S, B, lq=_LQ.from_scaled_basis(*parts))
    np.testing.assert_array_equal(Zn > 0, Z > 0)
    np.testing.assert_allclose(Zn, Z, atol=1e-9 * np.abs(Z).max())
    # warm-started from a perturbed solution
    Z0 = np.maximum(Z + 0.3 * rng.standard_normal(Z.shape), 0)
    Zw, _ = nnls_columns(F, S, B, Z0=Z0, lq=_LQ.from_scaled_basis(*parts))
    np.testing.assert_allclose(np.linalg.norm(B + F @ (S * Zw), axis=0),
                               np.linalg.norm(Res, axis=0), rtol=1e-9)


def test_column_keeps_independent_columns_that_live_in_small_rows():
    # DSO-FS's row weights span many decades: a column supported on small-scale rows is
    # independent of the others however small its norm is next to theirs, and must stay in the
    # passive set (a test against the largest column norm dropped it)
    rng = np.random.default_rng(8)
    r, m = 8, 10
    F = rng.standard_normal((r, m))
    F[:4] *= 1e12
    F[:4, 5] = 0.0  # column 5 lives in the rows of scale 1
    s = np.ones(m)
    P = [0, 1, 2, 5]
    col = _Column(F, s, rng.standard_normal(r), P)
    assert col.P == P
    A = F[:, P]
    np.testing.assert_allclose(col.Q[:, :4] @ col.R[:4, :4], A, rtol=0, atol=1e-15 * np.abs(A).max())
    # and its least-squares solution makes the residual orthogonal to every passive column,
    # each measured on its own scale
    col.x = np.zeros(4)
    x = col.ls()
    res = col.b + A @ x
    for j in range(4):
        assert abs(A[:, j] @ res) <= 1e-10 * np.linalg.norm(A[:, j]) * np.linalg.norm(res)
    # a column that is a multiple of a passive one is still dependent at any scale
    F2 = np.hstack([F, 1e-9 * F[:, [5]]])
    dup = _Column(F2, np.ones(m + 1), col.b, [0, 1, 2, 5, m])
    assert dup.k == 4 and {0, 1, 2} < set(dup.P) and len({5, m} & set(dup.P)) == 1


@pytest.mark.parametrize("seed", range(3))
def test_full_qr_and_complement_solvers_agree_under_rows_over_9_decades(seed):
    # two factorizations of different sizes (the passive columns, their complement) reach the
    # same optimal residuals on UMIST-like problems (3 null directions) whose row weights span
    # 9 decades, cold and warm-started (the warm start refactors the whole passive set). From
    # about 10 decades on they part by round-off: 3e-6 relative at 10, 4e-4 at 12 (measured)
    rng = np.random.default_rng(seed)
    r, m, c = 57, 60, 4
    F, parts = _scaled_wide(rng, r, m, 9)
    S = np.where(rng.random((m, c)) < 0.5, 1.0, -1.0)
    B = F @ rng.standard_normal((m, c))
    lq = _LQ.from_scaled_basis(*parts)
    Z, Res = nnls_columns(F, S, B)
    Zn, Resn = nnls_columns(F, S, B, lq=lq)
    scale = np.abs(B).max(axis=0)
    np.testing.assert_allclose(np.linalg.norm(Res, axis=0), np.linalg.norm(Resn, axis=0), rtol=1e-6,
                               atol=1e-12 * scale.max())
    Z0 = np.maximum(Z + 0.5 * np.abs(Z).max() * rng.standard_normal(Z.shape), 0)
    for kw in ({}, {"lq": lq}):
        Zw, Resw = nnls_columns(F, S, B, Z0=Z0, **kw)
        np.testing.assert_allclose(np.linalg.norm(Resw, axis=0), np.linalg.norm(Res, axis=0), rtol=1e-6,
                                   atol=1e-12 * scale.max())

@pytest.mark.parametrize(("r", "k"), [(9, 1), (30, 17), (64, 64), (300, 260)])
def test_column_factor_is_scipys_full_qr_bit_for_bit(r, k):
    # the passive set's factorization reaches the same doubles as scipy.linalg.qr(mode="full"),
    # so DSO-FS's iterates do not depend on how the buffers are filled
    rng = np.random.default_rng(r + k)
    m = r + 5
    F = rng.standard_normal((r, m)) * np.exp(rng.uniform(-8, 8, r))[:, None]
    s = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    b = rng.standard_normal(r)
    P = sorted(rng.choice(m, k, replace=False).tolist())
    col = _Column(F, s, b, P)
    Q, R = linalg.qr(F[:, P] * s[P], mode="full", check_finite=False)
    assert col.P == P and col.k == k
    np.testing.assert_array_equal(col.Q, Q)
    np.testing.assert_array_equal(col.R[:, :k], R)
    np.testing.assert_array_equal(col.R[:, k:], np.eye(r)[:, k:])
    np.testing.assert_array_equal(col.qb, Q.T @ b)
    # refactoring an existing column with another passive set gives the same as a fresh one
    col.factor(P[: k // 2])
    fresh = _Column(F, s, b, P[: k // 2])
    np.testing.assert_array_equal(col.Q, fresh.Q)
    np.testing.assert_array_equal(col.R, fresh.R)


def test_column_factor_of_dependent_columns_keeps_an_independent_subset():
    rng = np.random.default_rng(5)
    r, m = 10, 14
    F = rng.standard_normal((r, m))
    F[:, 6] = 2.0 * F[:, 2]  # column 6 depends on column 2
    s = np.ones(m)
    col = _Column(F, s, rng.standard_normal(r), [1, 2, 6, 9])
    assert col.k == 3 and set(col.P) < {1, 2, 6, 9} and 1 in col.P and 9 in col.P
    np.testing.assert_allclose(col.Q[:, :3] @ col.R[:3, :3], F[:, col.P], atol=1e-12)
    np.testing.assert_array_equal(col.R[:, 3:], np.eye(r)[:, 3:])
    np.testing.assert_allclose(col.Q.T @ col.Q, np.eye(r), atol=1e-12)
    empty = _Column(F, s, np.ones(r), [6, 6])  # a passive set of one direction twice
    assert empty.k == 1

@pytest.mark.parametrize("seed", range(4))
def test_nnls_warm_start_on_the_interior_point_path_matches_scipy(seed):
    # DSO-FS least-squares structure (F = D X^+, b = F y, labels that depend on X); scipy's
    # solution of a nearby problem (other row weights D) warm-starts the active set in place of
    # the interior point
    rng = np.random.default_rng(10 + seed)
    r, m, c = 20, 60, 3
    X = rng.standard_normal((m, r))
    lab = np.argmax(X @ rng.standard_normal((r, c)) + 0.3 * rng.standard_normal((m, c)), axis=1)
    S = pm1(lab, c)
    F0 = np.linalg.pinv(X) * np.exp(rng.standard_normal(r))[:, None]
    Z0 = np.column_stack([nnls(F0 * S[:, j], -F0 @ S[:, j], maxiter=50 * m)[0] for j in range(c)])
    F = F0 * np.exp(1e-3 * rng.standard_normal(r))[:, None]
    B = F @ S
    for Zs, budget in ((Z0, 30), (Z0, None), (rng.random((m, c)), 5), (Z0, 0)):
        stats = {}
        Z, Res = nnls_columns(F, S, B, Z0=Zs, ipm_rows=10, stats=stats, warm_pivots=budget)
        assert stats["warm"] + stats["ipm"] == c
        # a close vertex finishes in 30 pivots, and in the default budget of r = 20
        assert (stats["warm"] > 0) == (budget in (30, None))
        for j in range(c):
            A = F * S[:, j]
            ref = nnls(A, -B[:, j], maxiter=50 * m)[1]
            assert np.all(Z[:, j] >= 0)
            assert np.linalg.norm(A @ Z[:, j] + B[:, j]) == pytest.approx(ref, rel=1e-9)
            np.testing.assert_allclose(Res[:, j], A @ Z[:, j] + B[:, j],
                                       atol=1e-10 * np.abs(B).max())


@pytest.mark.parametrize("seed", range(3))
def test_nnls_with_a_zero_optimum_stops_at_round_off(seed):
    # b inside the cone of the columns -F diag(s): the optimal residual is zero, reached by
    # many z. Exactness here means a residual at round-off (scipy's nnls gives 1e-13 relative),
    # in about r pivots from a cold start; the gradient at round-off must not keep it pivoting
    # (it used to pivot ~1000 times per column on such E steps of SEMEION).
    rng = np.random.default_rng(seed)
    r, m = 12, 400
    F = rng.standard_normal((r, m)) * np.exp(rng.standard_normal(r))[:, None]
    S = np.where(rng.random((m, 2)) < 0.5, 1.0, -1.0)
    B = -np.column_stack([F @ (S[:, j] * rng.random(m)) for j in range(2)])
    for Z0 in (None, rng.random((m, 2)) * (rng.random((m, 2)) < 0.05)):
        stats = {}
        Z, Res = nnls_columns(F, S, B, Z0, stats=stats)
        assert np.all(Z >= 0)
        for j in range(2):
            ref = nnls(F * S[:, j], -B[:, j], maxiter=50 * m)[1]
            assert ref <= 1e-10 * np.linalg.norm(B[:, j])
            assert np.linalg.norm(Res[:, j]) <= 1e-10 * np.linalg.norm(B[:, j])
        assert stats["pivots"] <= 2 * 3 * r


@pytest.mark.parametrize("seed", [1, 2, 5, 7, 10])
def test_nnls_with_a_small_optimal_residual_under_bad_scaling_is_exact(seed):
    # the least-squares E step's structure: F = C Q^T with rows scaled over 7 orders of
    # magnitude, b = F s; the optimal residual is 1e-6 to 1e-5 of ||b|| but not zero. A fixed
    # round-off floor of 1e3 eps ||b|| on the gradients took such a residual for zero and
    # stopped 8e-5 to 1e-3 above the optimum on these seeds (as on ISOLET with p = 0.3)
    rng = np.random.default_rng(seed)
    r, m = 40, 240
    X = rng.standard_normal((m, r))
    Q = np.linalg.qr(X)[0]
    C = np.diag(10.0 ** rng.uniform(-3, 4, r)) @ np.triu(rng.standard_normal((r, r)) + 3 * np.eye(r))
    F = C @ Q.T
    s = np.where(X @ rng.standard_normal(r) + 0.5 * rng.standard_normal(m) > 0, 1.0, -1.0)
    b = F @ s
    ref = nnls(F * s, -b, maxiter=50 * m)[1]
    assert 1e-7 * np.linalg.norm(b) < ref < 1e-4 * np.linalg.norm(b)
    for ipm_rows in (10, 1000):  # interior point and crossover; active set
        Z, Res = nnls_columns(F, s[:, None], b[:, None], ipm_rows=ipm_rows)
        assert np.all(Z >= 0)
        assert np.linalg.norm(Res[:, 0]) <= ref * (1 + 1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_nnls_with_a_zero_optimum_under_rows_scaled_over_14_decades_is_exact(seed):
    # UMIST's E step with p = 0.1: nearly square (r = m - 4), rows scaled from 1e-2 to 1e12, and
    # b = F s in the cone of -F diag(s), so the optimum is zero and the interior point stalls on
    # its analytic centre. The crossover's active set from there needs up to 18.6 r pivots on
    # ISOLET and UMIST; capped at 2 r, 2 to 4 of these 4 columns were left above zero
    rng = np.random.default_rng(seed)
    m, r, c = 60, 56, 4
    S = rng.choice([-1.0, 1.0], size=(m, c))
    V = S * (1.0 + rng.exponential(1.0, size=(m, c)))  # F V = 0 with s * v >= 1: residual 0
    Qp = np.linalg.qr(np.hstack([V, rng.standard_normal((m, m - c))]))[0][:, c:c + r]
    scales = rng.permutation(np.logspace(-2, 12, r))
    F = (scales[:, None] * np.linalg.qr(rng.standard_normal((r, r)))[0]) @ Qp.T
    B = F @ S
    stats: dict = {}
    Z, Res = nnls_columns(F, S, B, ipm_rows=1, stats=stats)
    assert stats["ipm_rescued"] > 0 and stats["inexact"] == 0
    assert np.all(Z >= 0)
    assert np.all(np.linalg.norm(Res, axis=0) <= 1e-8 * np.linalg.norm(B, axis=0))


# ---------------------------------------------------------------------------------------------
# the algorithm
# ---------------------------------------------------------------------------------------------

def paper_algorithm1(X, Y, p, n_iter):
    """Algorithm 1 as printed (with the errata's sign, P = [-M; I]), solution space by
    elimination on the pivoted-QR basis, U step by eq. 12, E step by cvxpy (the paper's CVX)."""
    m, n = X.shape
    Xa = np.hstack([X, np.ones((m, 1))])
    piv = linalg.qr(Xa, mode="r", pivoting=True)[1]
    Bc, Fc = piv[:m], piv[m:]
    L = np.linalg.inv(Xa[:, Bc])
    M, N = L @ Xa[:, Fc], L @ Y
    c = Y.shape[1]
    E, S = np.zeros((m, c)), np.ones(n + 1)
    iterates = []
    for _ in range(n_iter):
        K = N + L @ E
        U = np.linalg.solve(M.T @ (S[Bc, None] * M) + np.diag(S[Fc]), M.T @ (S[Bc, None] * K))
        V = -M @ U + K
        lam2 = np.linalg.norm(V, axis=1) ** (p - 2)
        Ev = cp.Variable((m, c))
        obj = cp.sum(cp.multiply(lam2[:, None], cp.square(L @ Ev - M @ U + N)))
        cp.Problem(cp.Minimize(obj), [cp.multiply(Y, Ev) >= 0]).solve(
            solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        E = Ev.value
        W = np.zeros((n + 1, c))
        W[Bc], W[Fc] = -M @ U + N + L @ E, U
        S = np.linalg.norm(W, axis=1) ** (p - 2)
        iterates.append(W)
    return iterates


@pytest.mark.parametrize("p,n_iter", [(1.0, 4), (0.5, 3)])
def test_alternating_equals_literal_algorithm1(p, n_iter):
    X, _, Y = problem(8, 15, 3, 3)
    ref = paper_algorithm1(X, Y, p, n_iter)
    ours = []
    dso_fit(X, Y, p, solver="alternating", tol=0.0, max_iter=n_iter,
            callback=lambda k, W: ours.append(W))
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-7 * np.abs(b).max())


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("penalize_bias", [True, False])
def test_joint_reaches_convex_optimum_and_alternating_stays_above(seed, penalize_bias):
    X, _, Y = problem(10, 20, 3, seed)
    ref = cvx_optimum(X, Y, penalize_bias)
    j = dso_fit(X, Y, 1.0, solver="joint", penalize_bias=penalize_bias, tol=1e-12, max_iter=4000)
    a = dso_fit(X, Y, 1.0, solver="alternating", penalize_bias=penalize_bias, tol=1e-12,
                max_iter=4000)
    assert abs(j.objective[-1] - ref) <= 1e-4 * ref
    assert a.objective[-1] >= ref * (1 - 1e-6)


def test_alternating_stalls_above_the_optimum():
    # DESIGN.md errata: Theorem 2 (global optimum for p = 1) fails for the alternating scheme
    gaps = []
    for seed in range(4):
        X, _, Y = problem(10, 20, 3, seed)
        ref = cvx_optimum(X, Y)
        a = dso_fit(X, Y, 1.0, solver="alternating", tol=1e-12, max_iter=4000)
        gaps.append(a.objective[-1] / ref - 1)
    assert max(gaps) > 1e-3


@pytest.mark.parametrize("seed", range(2))
def test_least_squares_step_is_the_exact_reweighted_minimizer(seed):
    # m > n + 1: one joint iteration from Sigma = I solves min ||W||_F^2 over the least-squares
    # solution space X^T X W = X^T (Y + E), Y * E >= 0 (X of full column rank)
    X, _, Y = problem(30, 4, 3, seed)
    Xa = np.hstack([X, np.ones((30, 1))])
    W1 = []
    dso_fit(X, Y, 0.5, solver="joint", tol=0.0, max_iter=1, callback=lambda k, W: W1.append(W))
    Wv, Ev = cp.Variable((5, 3)), cp.Variable((30, 3))
    cons = [Xa.T @ Xa @ Wv == Xa.T @ (Y + Ev), cp.multiply(Y, Ev) >= 0]
    cp.Problem(cp.Minimize(cp.sum_squares(Wv)), cons).solve(solver="CLARABEL")
    assert np.sum(W1[0] ** 2) == pytest.approx(np.sum(Wv.value**2), rel=1e-6)


SHAPES = [(10, 30), (15, 15), (40, 6)]  # m < n + 1, m = n, m > n + 1 (least-squares space)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("solver", ["alternating", "joint"])
def test_objective_never_increases(shape, p, solver):
    for seed in range(2):
        X, _, Y = problem(*shape, 3, seed)
        r = dso_fit(X, Y, p, solver=solver, tol=0.0, max_iter=40)
        obj = r.objective
        assert np.all(np.diff(obj) <= 1e-9 * obj[:-1]), np.diff(obj).max()


@pytest.mark.parametrize("shape", [(10, 30), (16, 15)])
@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("solver", ["alternating", "joint"])
def test_every_iterate_is_feasible_when_m_le_n_plus_1(shape, p, solver):
    X, _, Y = problem(*shape, 3, 5)
    Xa = np.hstack([X, np.ones((shape[0], 1))])
    margins = []
    dso_fit(X, Y, p, solver=solver, tol=0.0, max_iter=30,
            callback=lambda k, W: margins.append((Y * (Xa @ W)).min()))
    assert len(margins) >= 5
    assert min(margins) >= 1 - 1e-8


@pytest.mark.parametrize("p", [0.5, 1.0])
@pytest.mark.parametrize("solver", ["alternating", "joint"])
def test_planted_features_rank_first(p, solver):
    # feature informative[j] marks class j (mean +4 there): every one-vs-rest column needs it
    rng = np.random.default_rng(11)
    m, n, c = 40, 200, 5
    y = np.arange(m) % c
    X = rng.standard_normal((m, n))
    informative = [5, 50, 90, 130, 170]
    X[np.arange(m), np.array(informative)[y]] += 4.0
    X = (X - X.mean(0)) / X.std(0)
    sel = DSOFS(p=p, solver=solver, n_features_to_select=5).fit(X, y)
    assert set(sel.ranking_[:5]) == set(informative)
    assert sel.diagnostics_["feasible"] and not sel.diagnostics_["collapsed"]


def test_collapse_on_overdetermined_problem_is_detected_and_ranked():
    # labels independent of the features, many more samples than features: the least-squares
    # solution space lets every feature row of W go to zero
    rng = np.random.default_rng(0)
    m, n = 300, 8
    X = rng.standard_normal((m, n))
    y = rng.integers(0, 3, m)
    iterates = []
    import fsbench.selectors.dso as dso_mod

    orig = dso_mod.dso_fit

    def spy(*args, **kw):
        kw["callback"] = lambda k, W: iterates.append(W)
        return orig(*args, **kw)

    dso_mod.dso_fit = spy
    try:
        with pytest.warns(DSOWarning, match="collapsed"):
            sel = DSOFS(p=0.5).fit(X, y)
    finally:
        dso_mod.dso_fit = orig
    d = sel.diagnostics_
    assert d["collapsed"] and d["least_squares"] and not d["feasible"]
    assert d["violated_share"] > 0 and d["min_margin"] < 1
    assert np.all(sel.coef_ == 0)
    # the ranking is that of the last iterate with a non-zero feature row, by row norm; the
    # minimum-norm solution of X W = X X^+ Y counts as iteration 0
    Xa = np.hstack([X, np.ones((m, 1))])
    W0 = np.linalg.pinv(Xa) @ pm1(y, 3)
    last = next(W for W in reversed([W0] + iterates) if np.any(W[:n]))
    norms = np.linalg.norm(last[:n], axis=1)
    k = int(np.count_nonzero(norms))
    assert list(sel.ranking_[:k]) == list(np.argsort(-norms, kind="stable")[:k])
    assert sorted(sel.ranking_) == list(range(n))


def test_infeasible_problem_is_reported():
    # a sample repeated with the other label: no W meets the hard margins
    X, y, _ = problem(60, 5, 2, 1)
    X[:, 0] += 3.0 * (2 * y - 1)
    X[1], y[1] = X[0], 1 - y[0]
    with pytest.warns(DSOWarning):
        sel = DSOFS(p=1.0).fit(X, y)
    d = sel.diagnostics_
    assert d["least_squares"] and not d["feasible"]
    assert 0 < d["violated_share"] and d["min_margin"] < 1 - 1e-8
    assert sel.ranking_[0] == 0


def test_registered_and_diagnostics_are_scalars():
    X, y, _ = problem(12, 20, 3, 2)
    sel = make_selector("dso", {"p": 0.5, "solver": "joint", "n_features_to_select": 4}).fit(X, y)
    assert sel.transform(X).shape == (12, 4)
    assert all(isinstance(v, (bool, int, float, str)) for v in sel.diagnostics_.values())
    assert sel.objective_.shape == (sel.n_iter_,)
    with pytest.raises(ValueError, match="'p' parameter of DSOFS must be"):
        DSOFS(p=1.5).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        DSOFS(solver="cvx").fit(X, y)


def test_stop_on_a_rising_objective_is_not_reported_as_converged(monkeypatch):
    # the least-squares iteration can raise ||W||_{2,p} (seen on ISOLET); simulate a rise at
    # iteration 3 by scaling that iterate up and check the bookkeeping against the trace
    import fsbench.selectors.dso as dso_mod

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 10))  # m > n + 1: the least-squares case
    Y = pm1(np.argmax(X[:, :3] + rng.standard_normal((30, 3)), axis=1), 3)
    orig = dso_mod._ls_step
    calls = {"n": 0}

    def bumped(*args, **kw):
        W, Vt, Z = orig(*args, **kw)
        calls["n"] += 1
        return (2.0 * W if calls["n"] == 3 else W), Vt, Z

    monkeypatch.setattr(dso_mod, "_ls_step", bumped)
    r = dso_fit(X, Y, 1.0, tol=1e-6, max_iter=50)
    obj = r.objective
    assert obj.size == 3 and obj[2] > obj[1] * (1 + 1e-6)
    assert r.increased and not r.converged
    monkeypatch.setattr(dso_mod, "_ls_step", orig)
    r = dso_fit(X, Y, 1.0, tol=1e-6, max_iter=500)
    assert r.converged and not r.increased
    assert 0 <= r.objective[-2] - r.objective[-1] <= 1e-6 * r.objective[-2]


def test_a_stalled_interior_point_is_finished_exactly(monkeypatch):
    # a stalled interior point (simulated: a feasible, non-optimal z with z > mu everywhere, as
    # on ISOLET with badly scaled row weights) must not be returned: the crossover starts the
    # active set from the r columns of largest z / mu and ends at the optimum
    import fsbench.selectors._dso_qp as qp

    rng = np.random.default_rng(4)
    r, m, c = 15, 90, 2
    X = rng.standard_normal((m, r))
    S = pm1(np.argmax(X @ rng.standard_normal((r, c)), axis=1), c)
    F = np.linalg.pinv(X) * np.exp(rng.standard_normal(r))[:, None]
    B = F @ S
    monkeypatch.setattr(qp, "_nnls_ipm",
                        lambda F, s, b: (1.0 + rng.random(F.shape[1]), 1e-3 * rng.random(F.shape[1])))
    stats = {}
    Z, _ = qp.nnls_columns(F, S, B, ipm_rows=10, stats=stats)
    assert stats["ipm"] == c and stats["ipm_rescued"] == c
    for j in range(c):
        A = F * S[:, j]
        assert np.all(Z[:, j] >= 0)
        assert np.linalg.norm(A @ Z[:, j] + B[:, j]) == pytest.approx(
            nnls(A, -B[:, j], maxiter=50 * m)[1], rel=1e-9)


def test_least_squares_e_steps_warm_start_when_little_moved_and_match_cold_ones(monkeypatch):
    # 111 rows (>= ipm_rows): cold E steps go to the interior point. The first two E steps have
    # no history, later ones warm-start with a budget of r pivots, one after a pruned basic row
    # does not; the iterates are those of a run that never warm-starts.
    import fsbench.selectors.dso as dso_module

    rng = np.random.default_rng(0)
    m, n, c = 260, 110, 3
    X = rng.standard_normal((m, n))
    lab = np.argmax(X @ rng.standard_normal((n, c)) + 2 * rng.standard_normal((m, c)), axis=1)
    Y = pm1(lab, c)
    budgets = []
    real = dso_module.nnls_columns

    def recording(F, S, B, Z0=None, **kw):
        budgets.append((F.shape[0], kw["warm_pivots"]))
        return real(F, S, B, Z0, **kw)

    monkeypatch.setattr(dso_module, "nnls_columns", recording)
    warm = dso_fit(X, Y, 1.0, max_iter=10)
    assert warm.least_squares
    assert budgets[:2] == [(111, 0), (111, 0)]
    assert all(b == r for r, b in budgets[2:8])  # the rows did not change: warm, budget r
    shrunk = [i for i in range(1, len(budgets)) if budgets[i][0] != budgets[i - 1][0]]
    assert shrunk and all(budgets[i][1] == 0 for i in shrunk)
    monkeypatch.setattr(dso_module, "_warm_pivots", lambda moved, r: 0)
    cold = dso_fit(X, Y, 1.0, max_iter=10)
    np.testing.assert_allclose(warm.objective, cold.objective, rtol=1e-9)
    np.testing.assert_allclose(warm.W, cold.W, atol=1e-9 * np.abs(cold.W).max())


def test_inexact_e_steps_are_counted_in_the_diagnostics_and_warned(monkeypatch):
    # least-squares case (m > n + 1); an E step that reports inexact columns (as the crossover
    # does past its pivot cap) must reach diagnostics_ and a DSOWarning, summed over iterations
    import fsbench.selectors.dso as dso_module

    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 20))
    y = np.argmax(X[:, :3] + 0.5 * rng.standard_normal((120, 3)), axis=1)
    real = dso_module.nnls_columns
    calls = []

    def two_inexact(F, S, B, Z0=None, stats=None, **kw):
        out = real(F, S, B, Z0, stats=stats, **kw)
        stats["inexact"] = stats.get("inexact", 0) + 2
        calls.append(1)
        return out

    monkeypatch.setattr(dso_module, "nnls_columns", two_inexact)
    sel = DSOFS(p=1.0, max_iter=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel.fit(X, y)
    assert any(issubclass(w.category, DSOWarning) and "stopped above their optimum" in str(w.message)
               for w in caught)
    assert sel.diagnostics_["least_squares"]
    assert sel.diagnostics_["inexact_e_columns"] == 2 * len(calls) > 0
    monkeypatch.setattr(dso_module, "nnls_columns", real)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exact = DSOFS(p=1.0, max_iter=5).fit(X, y)
    assert exact.diagnostics_["inexact_e_columns"] == 0
    assert not any("above their optimum" in str(w.message) for w in caught)


def test_crossover_past_its_pivot_cap_is_counted_inexact_and_keeps_the_better_point():
    # a stalled interior point on a problem whose active set needs many pivots: with a cap of one
    # pivot the crossover must count the column inexact and return a feasible point no worse
    # than z; with the default cap it must reach scipy's optimum and count nothing
    from fsbench.selectors._dso_qp import _crossover

    rng = np.random.default_rng(5)
    r, m = 30, 200  # the E step's structure F = C Q^T, b = F s: a non-zero optimal residual
    X = rng.standard_normal((m, r))
    F = np.triu(rng.standard_normal((r, r)) + 3 * np.eye(r)) @ np.linalg.qr(X)[0].T
    s = np.where(X @ rng.standard_normal(r) + 0.5 * rng.standard_normal(m) > 0, 1.0, -1.0)
    b = F @ s
    z, mu = 1.0 + rng.random(m), np.full(m, 1e-3)  # z > mu everywhere, no information in z / mu
    res = lambda v: np.linalg.norm(F @ (s * v) + b)  # noqa: E731
    capped = {"ipm_rescued": 0, "inexact": 0, "pivots": 0}
    out = _crossover(F, s, b, z, mu, capped, max_pivots=1)
    assert capped["inexact"] == 1 and capped["pivots"] == 1
    assert np.all(out >= 0) and res(out) <= res(z)
    full = {"ipm_rescued": 0, "inexact": 0, "pivots": 0}
    out = _crossover(F, s, b, z, mu, full)
    assert full["inexact"] == 0 and full["pivots"] > 1
    ref = nnls(F * s, -b, maxiter=50 * m)[1]
    assert ref > 1e-3 * np.linalg.norm(b)
    assert res(out) == pytest.approx(ref, rel=1e-9)


def test_dso_fit_with_duplicated_samples_takes_the_complement_solver_and_matches_the_full_qr(monkeypatch):
    # duplicated samples (UMIST) make [X, 1] rank-deficient by a few directions: the default E
    # step then runs on the passive sets' complements, and reaches the full QR's iterates
    import fsbench.selectors._dso_qp as qp
    import fsbench.selectors.dso as dso

    X0, y0, _ = problem(40, 50, 4, 11)
    X = np.vstack([X0, X0[:3]])
    y = np.concatenate([y0, y0[:3]])
    Y = pm1(y, 4)
    used = []
    original = qp._NullColumn.__init__

    def counting(self, *args, **kwargs):
        used.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(qp._NullColumn, "__init__", counting)
    fast = dso_fit(X, Y, 1.0, max_iter=25)
    assert fast.least_squares and used
    monkeypatch.setattr(dso, "E_STEP_SOLVER", "qr")
    used.clear()
    full = dso_fit(X, Y, 1.0, max_iter=25)
    assert not used
    np.testing.assert_allclose(fast.W, full.W, rtol=0, atol=1e-8 * np.abs(full.W).max())
    np.testing.assert_array_equal(fast.objective.size, full.objective.size)
    n = X.shape[1]
    assert np.array_equal(dso._rank_rows(fast.last_iter[:n], fast.last_norm[:n]),
                          dso._rank_rows(full.last_iter[:n], full.last_norm[:n]))
