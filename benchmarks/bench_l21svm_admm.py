"""L21-SVM's problem by a plain ADMM, measured at the bar's size: how far the RFS solver's template goes.

L21-SVM (``fsbench/selectors/l21svm.py``) minimizes

    J(W, b) = 1/2 ||W||_{2,1} + 1/2 ||b||^2 + C sum_k sum_i max(0, 1 - y_ik (x_i^T w_k + b_k))

by iterative reweighting with one SVM per step, without a certificate, and passes 600 s at
n = 5,000, d = 2,000 (``scale.md``, ``--axis bar``). This script solves the same problem with the
template of ``fsbench/selectors/_rfs_admm.py`` (scaled ADMM, over-relaxation 1.6, residual
balancing, one Cholesky factor of [X 1]^T [X 1] + diag(sigma I, 1 / rho)) on the splitting
M = Y o (X W + 1 b^T), V = W, and stops on a duality gap: for alpha in [0, C]^(n x c) scaled so
that every row of X^T (alpha o Y) has norm <= 1/2, D(alpha) = sum alpha - 1/2 ||1^T (alpha o Y)||^2
is a lower bound on min J (the hinge's conjugate and the l2,1 norm's dual ball); ADMM's dual
variable gives alpha = -rho U1. It is a measurement, not a selector: fsbench does not import it.

Usage::

    python benchmarks/bench_l21svm_admm.py [--shapes 200x100,5000x2000] [--C 1] [--tol 1e-6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_scale import make_data
from scipy import linalg
from threadpoolctl import threadpool_limits


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.linalg.norm(A, axis=1)


def _shrink(A: np.ndarray, t: float) -> np.ndarray:
    """Each row a scaled by max(0, 1 - t / ||a||) (t > 0)."""
    return A * (1.0 - t / np.maximum(_row_norms(A), t))[:, None]


def objective(X, Y, W, b, C):
    return 0.5 * _row_norms(W).sum() + 0.5 * b @ b + C * np.maximum(0.0, 1.0 - Y * (X @ W + b)).sum()


def dual_bound(X, Y, alpha, C):
    alpha = np.clip(alpha, 0.0, C)
    alpha = alpha / max(1.0, 2.0 * _row_norms(X.T @ (alpha * Y)).max())
    return alpha.sum() - 0.5 * np.sum((alpha * Y).sum(axis=0) ** 2)


def l21svm_admm(X, Y, C, tol, *, rho=1.0, alpha=1.6, max_iter=50_000):
    """(V, b, iterations, relative gap) of the ADMM above."""
    n, d = X.shape
    sigma = np.einsum("ij,ij->", X, X) / d
    XT = np.ascontiguousarray(X.T)
    gram = XT @ X
    sums = X.sum(axis=0)

    def factor(rho):
        K = np.empty((d + 1, d + 1))
        K[:d, :d] = gram
        K[:d, :d][np.diag_indices(d)] += sigma
        K[:d, d] = K[d, :d] = sums
        K[d, d] = n + 1.0 / rho
        return linalg.cho_factor(K, check_finite=False)

    cf = factor(rho)
    c = Y.shape[1]
    V, b = np.zeros((d, c)), np.zeros(c)
    Z, U1, U2 = np.ones((n, c)), np.zeros((n, c)), np.zeros((d, c))
    best, gap = -np.inf, np.inf
    for it in range(1, max_iter + 1):
        T = Y * (Z - U1)
        solution = linalg.cho_solve(cf, np.vstack([(T.T @ X).T + sigma * (V - U2), T.sum(axis=0)[None, :]]),
                                    check_finite=False)
        W, b = solution[:d], solution[d]
        M = Y * ((W.T @ XT).T + b)
        Z_old, V_old = Z, V
        M_relaxed, W_relaxed = alpha * M + (1 - alpha) * Z_old, alpha * W + (1 - alpha) * V_old
        Q = M_relaxed + U1
        Z = np.where(Q >= 1, Q, np.where(Q <= 1 - C / rho, Q + C / rho, 1.0))  # prox of C hinge
        V = _shrink(W_relaxed + U2, 0.5 / (rho * sigma))
        U1 += M_relaxed - Z
        U2 += W_relaxed - V
        if it % 10:
            continue
        best = max(best, dual_bound(X, Y, -rho * U1, C))
        gap = (objective(X, Y, V, b, C) - best) / abs(best)
        if gap <= tol:
            break
        primal_residual = np.sqrt(np.sum((M - Z) ** 2) + sigma * np.sum((W - V) ** 2))
        change = ((Y * (Z - Z_old)).T @ X).T - sigma * (V - V_old)
        dual_residual = rho * np.sqrt(np.sum(change**2))
        if primal_residual > 10 * dual_residual:
            rho, U1, U2, cf = 2 * rho, U1 / 2, U2 / 2, factor(2 * rho)
        elif dual_residual > 10 * primal_residual:
            rho, U1, U2, cf = rho / 2, U1 * 2, U2 * 2, factor(rho / 2)
    return V, b, it, gap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="200x100,5000x2000")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-6)
    args = ap.parse_args()
    print("| n x d | C | iterations | relative gap | CPU s |")
    print("|---|---:|---:|---:|---:|")
    for shape in args.shapes.split(","):
        n, d = map(int, shape.split("x"))
        X, y = make_data(n, d)
        Y = np.where(np.unique(y)[None, :] == y[:, None], 1.0, -1.0)
        with threadpool_limits(1):
            start = time.process_time()
            _, _, iterations, gap = l21svm_admm(X, Y, args.C, args.tol)
            seconds = time.process_time() - start
        print(f"| {n:,} x {d:,} | {args.C:g} | {iterations:,} | {gap:.1e} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
