"""Sums whose bits do not depend on the machine: the reductions that decide a row, in a stated order.

A row can be decided by a tie that holds in exact arithmetic: a test sample on a decision
boundary (a GLIOMA fold whose top features take a handful of values puts a test point at
decision value 0 exactly), two features with equal scores. There the last bits of a kernel value
or a score decide the row, and BLAS chooses its kernel per CPU at run time: OpenBLAS's Haswell
``ddot`` sums a vector shorter than 16 in order with one rounding per product and per sum, its
SkylakeX ``ddot`` fuses each product into the sum (FMA), and both sum longer vectors in blocks
shaped by the SIMD width; ``dgemm`` and ``dgemv`` likewise. Measured: the same fsbench code gave
one GLIOMA row 3 correct under the Haswell kernel and 4 under SkylakeX.

Every function here is elementwise IEEE-754 arithmetic (numpy's ufuncs round each operation once
and never fuse a multiply into an add, whatever SIMD width they run at) in the order its
docstring states, so its result is the same on every machine: the order can be written as a plain
Python loop over floats, and tests/test_fixed_order.py checks it against such loops and, where the
sum is exact, against ``math.fsum``.

Sums run in order, one rounding per step: ``s = ((x_0 + x_1) + x_2) + ...``. For a dot product
``(((a_0 b_0) + a_1 b_1) + ...)`` this is what OpenBLAS's Haswell ``ddot`` computes for vectors
shorter than 16, so rows computed on such a machine with ``SVC(kernel="linear")`` at k < 16 are
reproduced bit for bit.
"""

from __future__ import annotations

import numpy as np

__all__ = ["column_sums", "group_sums", "linear_kernel", "extend_linear_kernel"]


def column_sums(X: np.ndarray) -> np.ndarray:
    """``s_j = ((X[0, j] + X[1, j]) + X[2, j]) + ...``: each column summed in row order.

    A prefix sum is sequential by definition, so its last row is this order on any machine
    (``X.sum(axis=0)`` is too on a C-ordered matrix of two or more columns, but numpy switches to
    pairwise summation for one column or a Fortran-ordered matrix).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"column_sums needs a 2-d array, got shape {X.shape}")
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    return np.cumsum(X, axis=0)[-1].copy()


def group_sums(X: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``S[g, j]``: column j summed over the rows of group g, in row order (:func:`column_sums`);
    0 for an empty group. Shape (n_groups, X.shape[1])."""
    X = np.asarray(X, dtype=np.float64)
    groups = np.asarray(groups)
    out = np.zeros((n_groups, X.shape[1]))
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        if rows.size:
            out[g] = column_sums(X[rows])
    return out


def linear_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``K[i, j] = (((A[i, 0] B[j, 0]) + A[i, 1] B[j, 1]) + ...)``: each product rounded, then
    added in column order (no fused multiply-add). ``K`` of A with itself is symmetric bit for bit."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    K = np.zeros((A.shape[0], B.shape[0]))
    return extend_linear_kernel(K, A, B)


def extend_linear_kernel(K: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Continue the sums of :func:`linear_kernel` with further columns, in place: a kernel over
    the first k columns extended by A and B (columns k, k + 1, ...) is the kernel over all of them,
    bit for bit. Returns K."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.shape[1] != B.shape[1] or K.shape != (A.shape[0], B.shape[0]):
        raise ValueError(f"shapes {K.shape}, {A.shape} and {B.shape} do not make a kernel")
    product = np.empty_like(K)
    AT, BT = np.ascontiguousarray(A.T), np.ascontiguousarray(B.T)
    for a, b in zip(AT, BT, strict=True):
        np.multiply(a[:, None], b[None, :], out=product)
        np.add(K, product, out=K)
    return K
