"""What the parameters of the forest, RFE and stability-selection selectors should accept (see
``param_table.py``).

- Trees (``rf_importance``, ``permutation``): at least one; a forest beyond 10,000 trees costs
  minutes per fit and changes the importances by less than their Monte Carlo error.
- ``n_repeats`` (permutations per feature): at least one, at most 1,000 (the mean decrease is then
  resolved far below one hold-out sample).
- ``holdout_size``: a fraction of the training data that leaves a usable hold-out (at least 10%: 5
  samples of 50) and a forest trained on at least as many samples as it is scored on (at most 50%).
- ``step`` (RFE): features removed per iteration, an int >= 1 or a fraction in (0, 1) of the
  features, as scikit-learn's RFE; an integral float such as 2.0 is the int 2 in a config, so it
  is not listed as invalid.
- ``C`` (RFE's linear SVM): the range of fsbench's other SVM selectors.
- Stability selection: at least two subsamples (one measures no stability), at most 10,000; one to
  100 grid points; the grid's smallest lambda a fraction of lambda_max in [0.01, 1] (below, the
  half-samples of a microarray set, separable, are nearly unpenalized and LIBLINEAR runs to its cap).

``FAST`` keeps the forests and the resampling small on scikit-learn's estimator checks.
"""

from __future__ import annotations

from typing import Any

from param_table import N_SELECT, SEED, SVM_C, P

TREES = P("int", [1, 10, 500], [0, -1, -500, 10_001, 10**6], edge=[10_000])

EXPECT: dict[str, dict[str, P]] = {
    "rf_importance": {"n_features_to_select": N_SELECT, "n_estimators": TREES, "random_state": SEED},
    "permutation": {
        "n_features_to_select": N_SELECT,
        "n_estimators": TREES,
        "n_repeats": P("int", [1, 5, 100], [0, -1, 1001, 10**5], edge=[1000]),
        "holdout_size": P("float", [0.1, 0.25, 1 / 3, 0.5], [0, 0.0, 0.05, 0.099, 0.51, 0.75, 1, -0.25]),
        "random_state": SEED,
    },
    "rfe": {
        "n_features_to_select": N_SELECT,
        "step": P("float", [1, 2, 7, 1000, 0.01, 0.1, 0.5, 0.999],
                  [0, 0.0, -1, -0.1, 1.5, 2.5, 100.25, 2**31]),
        "C": SVM_C,
        "random_state": SEED,
    },
    "stability_selection": {
        "n_features_to_select": N_SELECT,
        "n_resamples": P("int", [2, 10, 100], [1, 0, -1, 10_001], edge=[10_000]),
        "n_lambdas": P("int", [1, 3, 20], [0, -1, 101, 1000], edge=[100]),
        "lambda_min_ratio": P("float", [0.01, 0.1, 0.5, 1], [0, 0.0, 0.009, -0.1, 1.01, 2, 10]),
        "random_state": SEED,
    },
}

FAST: dict[str, dict[str, Any]] = {
    "rf_importance": {"n_estimators": 10},
    "permutation": {"n_estimators": 10, "n_repeats": 2},
    "stability_selection": {"n_resamples": 4},
}
