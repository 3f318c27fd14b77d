"""What the parameters of the l2,1-penalized models ``ls_l21`` and ``ll_l21`` should accept (see
``param_table.py``).

- ``alpha_ratio`` / ``lambda_ratio``: the penalty as a fraction of the smallest one that zeros every
  row of W. Positive (0 is the unpenalized fit, not unique when d > n), at most 1 (above, W = 0 as
  at 1), and not below 1e-4, glmnet's default end of the regularization path (below it the
  microarray fits have stopped gaining rows and only cost more iterations).
- ``tol``: a relative duality gap (the multi-task lasso's relative to ||Y_c||_F^2), in (0, 1): 0
  is never certified in floating point, 1 certifies any W.
- ``loss`` (``ll_l21``): the softmax cross-entropy or the one-vs-rest binary logistic losses of Liu,
  Ji & Ye (SLEP's mcLogisticR).
- ``max_iter``: iteration caps, the shared ``ITERS`` bounds.

No ``FAST`` entry: both fit the estimator checks' tiny problems in milliseconds.
"""

from __future__ import annotations

from param_table import GAP_TOL, ITERS, N_SELECT, P

RATIO = P("float", [1e-4, 0.001, 0.1, 0.5, 1, 1.0], [0, 0.0, -0.1, 9.9e-5, 1e-5, 1.01, 2, 10])

EXPECT: dict[str, dict[str, P]] = {
    "ls_l21": {"n_features_to_select": N_SELECT, "alpha_ratio": RATIO, "tol": GAP_TOL, "max_iter": ITERS},
    "ll_l21": {
        "n_features_to_select": N_SELECT,
        "lambda_ratio": RATIO,
        "loss": P("str", ["multinomial", "ovr"], ["softmax", "logistic", "ova", "one-vs-rest"]),
        "tol": GAP_TOL,
        "max_iter": ITERS,
    },
}
