"""The evaluation protocol: how a ranking of features becomes the rows of ``runs.csv.gz``.

- :mod:`fsbench.evaluation.protocol`: outer splits, standardization, inner-CV tuning of a
  selector's grid and of the classifier's parameters, the test scores at every k, and the rules
  that break ties (pure functions);
- :mod:`fsbench.evaluation.classifiers`: the built-in classifiers by name and any scikit-learn
  classifier by import path (:class:`~fsbench.evaluation.classifiers.ClassifierSpec`);
- :mod:`fsbench.evaluation.linear_libsvm` and :mod:`fsbench.evaluation.linear_liblinear`: the
  exact fast routes that give the same predictions as fitting scikit-learn's ``SVC`` and
  ``LinearSVC`` at every fold, k and C;
- :mod:`fsbench.evaluation.metrics`: balanced accuracy, macro F1, kappa and MCC from the per-class
  counts every row records.

The code identity of the protocol, recorded in every row as ``protocol_code``, is
:func:`protocol_code`: the digest of the protocol module and what it imports within
:data:`PROTOCOL_SCOPE` (this package's modules, not this ``__init__``, and the fixed-order sums).
The configuration's types are imported for annotations only: the configuration sits above.

Rows of the sparse route (a dataset held sparse, scaled without centring by
:mod:`fsbench.evaluation.sparse_scaling`, which the protocol does not import) record
``protocol_code(sparse=True)``: a digest of both modules' identities.

May import: errors, fixed_order, code_identity, storage, datasets, selectors and plugins.
"""

from __future__ import annotations

import hashlib

from fsbench.code_identity import module_digest

__all__ = ["PROTOCOL_SCOPE", "protocol_code"]

#: the code whose identity every row carries as ``protocol_code``: the protocol, the classifiers it
#: builds, its exact LIBSVM and LIBLINEAR routes and the fixed-order sums they call
PROTOCOL_SCOPE = ("fsbench.evaluation.", "fsbench.fixed_order")


def protocol_code(sparse: bool = False) -> str:
    """The code identity of the evaluation protocol: :func:`fsbench.code_identity.module_digest` of
    fsbench.evaluation.protocol within :data:`PROTOCOL_SCOPE`, recorded in every row as
    ``protocol_code``; moving a module unchanged keeps it.

    With ``sparse``, the identity of the sparse route's rows: 16 hex digits of the sha256 of the
    protocol's digest and that of :mod:`fsbench.evaluation.sparse_scaling` (within the same scope),
    so an edit of either changes it."""
    dense = module_digest("fsbench.evaluation.protocol", PROTOCOL_SCOPE)
    if not sparse:
        return dense
    scaling = module_digest("fsbench.evaluation.sparse_scaling", PROTOCOL_SCOPE)
    return hashlib.sha256(f"sparse {dense} {scaling}".encode()).hexdigest()[:16]
