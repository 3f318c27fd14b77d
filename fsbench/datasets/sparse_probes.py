"""Probes appended to a sparse dataset (a user's file stored sparse, kept as CSR).

:func:`add_probes_sparse` returns the matrix :func:`fsbench.datasets.synthetic.add_probes` would
return for the densified data, as CSR, without densifying it: the same draws from
``Generator(PCG64(seed))`` in the same order (the source columns by rounds of permutations, then
one permutation of the samples per probe; or the gaussian columns), so a permuted probe keeps its
source column's non-zeros, moved to the permuted rows. It lives beside ``synthetic`` rather than
in it: ``synthetic``'s code identity is part of every generated or probed dataset's fingerprint,
and a sparse route must not change the fingerprints of committed results. The equality with the
dense probes is tested.

May import: numpy, scipy, fsbench.errors and fsbench.datasets.synthetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

from fsbench.datasets.synthetic import add_probes
from fsbench.errors import DataError

__all__ = ["add_probes_sparse"]


def add_probes_sparse(X: Any, *, n: int, kind: str, seed: int) -> scipy.sparse.csr_matrix:
    """``add_probes(X.toarray(), n=n, kind=kind, seed=seed)`` as a canonical float64 CSR matrix,
    built from the sparse ``X`` (not modified). The parameters are checked as ``add_probes`` checks
    them (the same one-sentence DataError)."""
    X = scipy.sparse.csc_matrix(X, dtype=np.float64)
    n_samples, d = X.shape
    if n_samples == 0 or d == 0:
        raise DataError(f"probes need a samples x features matrix with at least one sample and one feature, "
                        f"got shape {X.shape}; add probes to a non-empty dataset.")
    add_probes(np.zeros((1, 1)), n=n, kind=kind, seed=seed)  # its checks of n, kind and seed, on a stand-in
    n, seed = int(n), int(seed)
    rng = np.random.Generator(np.random.PCG64(seed))
    if kind == "gaussian":
        probes = scipy.sparse.csc_matrix(rng.standard_normal(size=(n_samples, n)))
    else:
        rounds = -(-n // d)
        sources = np.concatenate([rng.permutation(d) for _ in range(rounds)])[:n]
        rows, cols, vals = [], [], []
        for j, source in enumerate(sources):  # probe j at row i is X[perm[i], source]
            inverse = np.argsort(rng.permutation(n_samples))
            start, stop = X.indptr[source], X.indptr[source + 1]
            rows.append(inverse[X.indices[start:stop]])
            cols.append(np.full(stop - start, j))
            vals.append(X.data[start:stop])
        probes = scipy.sparse.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                         shape=(n_samples, n))
    out = scipy.sparse.hstack([X, probes], format="csr", dtype=np.float64)
    out.sum_duplicates()
    out.sort_indices()
    return out
