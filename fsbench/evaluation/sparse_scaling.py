"""Standardization of sparse data: every feature divided by its standard deviation, never centred.

The dense route z-scores (:func:`fsbench.evaluation.protocol.standardize`); centring a sparse
matrix would fill every zero, so a matrix held sparse (:mod:`fsbench.datasets.user_files`) is
scaled without centring instead: ``x / std``, zeros stay zeros and the matrix keeps its
non-zeros. ``std`` comes from the same reference part as the dense z-score: the training part
(``train``), all data (``global``) or nowhere (``none``: the data unscaled). A feature whose
standard deviation is 0 is left as it is. This is scikit-learn's
``StandardScaler(with_mean=False)`` fitted on the reference part (tests/test_sparse_data.py checks
it to 1e-12 relative), computed in a stated order:

- ``mean_j = s_j / n`` where ``s_j`` sums the stored values of column j in row order,
  ``((x_0 + x_1) + x_2) + ...``, one rounding per step (the zeros add nothing);
- ``var_j = (q_j + (n - nnz_j) mean_j^2) / n`` where ``q_j`` sums ``(x - mean_j)^2`` over the
  stored values of column j in row order, and ``(n - nnz_j) mean_j^2`` counts the zeros;
- ``std_j = sqrt(var_j)``, 1 where it is 0.

The sums run over each column's stored values (CSC data, rows sorted) with :func:`column_sums`
of :mod:`fsbench.fixed_order` (a prefix sum: sequential by definition) on blocks of columns of
similar length padded with zeros, so no BLAS kernel and no pairwise summation decides a bit, and
memory stays within twice the number of stored values.

Rows of the sparse route record the code identity of this module with the protocol's
(:func:`fsbench.evaluation.protocol_code` with ``sparse=True``); the protocol module does not
import it, so the dense rows' ``protocol_code`` does not depend on it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from fsbench.fixed_order import column_sums

__all__ = ["SCALING_MODES", "scale_sparse", "segment_sums", "sparse_std"]

#: the values of ``preprocessing.standardize`` (the reference part of the standard deviations)
SCALING_MODES = ("train", "global", "none")


def segment_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """``s_j = ((v[a] + v[a+1]) + v[a+2]) + ...`` over ``v[indptr[j]:indptr[j+1]]``, in order; 0
    for an empty segment.

    Segments are grouped by length (lengths in ``(2^(b-1), 2^b]`` together, a loop over at most
    log2(longest) + 1 groups); each group is padded with trailing zeros to a matrix of one column
    per segment, summed in row order by :func:`fsbench.fixed_order.column_sums`: a trailing zero
    adds nothing, so each sum is the sequential one.
    """
    values = np.asarray(values, dtype=np.float64)
    indptr = np.asarray(indptr, dtype=np.int64)
    starts, lengths = indptr[:-1], np.diff(indptr)
    out = np.zeros(lengths.size)
    if not lengths.size or not lengths.max(initial=0):
        return out
    group = np.zeros(lengths.size, dtype=np.int64)
    positive = lengths > 0
    group[positive] = np.ceil(np.log2(lengths[positive])).astype(np.int64) + 1
    for g in np.unique(group[positive]):
        segments = np.flatnonzero(group == g)
        seg_len = lengths[segments]
        width = int(seg_len.max())
        offsets = np.arange(width)[:, None]
        inside = offsets < seg_len[None, :]
        positions = np.where(inside, starts[segments][None, :] + offsets, 0)
        block = np.where(inside, values[positions], 0.0)
        out[segments] = column_sums(block)
    return out


def sparse_std(X: scipy.sparse.spmatrix | scipy.sparse.sparray) -> np.ndarray:
    """The standard deviation of every column of ``X`` (zeros included, divided by n), in the order
    the module docstring states; 1 where it is 0."""
    csc = scipy.sparse.csc_matrix(X, dtype=np.float64, copy=True)
    csc.sum_duplicates()
    csc.sort_indices()
    n = csc.shape[0]
    if n == 0:
        return np.ones(csc.shape[1])
    counts = np.diff(csc.indptr)
    mean = segment_sums(csc.data, csc.indptr) / n
    deviation = csc.data - np.repeat(mean, counts)
    squares = segment_sums(np.multiply(deviation, deviation, out=deviation), csc.indptr)
    var = (squares + (n - counts) * (mean * mean)) / n
    std = np.sqrt(var)
    std[std == 0] = 1.0
    return std


def _divided(X: scipy.sparse.csr_matrix, std: np.ndarray) -> scipy.sparse.csr_matrix:
    out = scipy.sparse.csr_matrix((X.data / std[X.indices], X.indices.copy(), X.indptr.copy()), shape=X.shape)
    out.has_sorted_indices = X.has_sorted_indices
    return out


def scale_sparse(X: scipy.sparse.spmatrix | scipy.sparse.sparray, train: np.ndarray, test: np.ndarray,
                 mode: str) -> tuple[scipy.sparse.csr_matrix, scipy.sparse.csr_matrix]:
    """The training and test rows of ``X`` (CSR float64, rows in the order of ``train`` and
    ``test``), each feature divided by its standard deviation over the training part (``train``),
    all rows (``global``) or left unscaled (``none``): the sparse counterpart of
    :func:`fsbench.evaluation.protocol.standardize`, without centring."""
    if mode not in SCALING_MODES:
        raise ValueError(f"standardize must be one of {', '.join(SCALING_MODES)}, got {mode!r}")
    X = scipy.sparse.csr_matrix(X, dtype=np.float64)
    X_train, X_test = X[np.asarray(train)], X[np.asarray(test)]
    if mode == "none":
        return X_train, X_test
    std = sparse_std(X_train if mode == "train" else X)
    return _divided(X_train, std), _divided(X_test, std)
