"""What the parameters of su, fcbf, cfs and gini should accept (merged by test_param_validation.py).

Written from the papers: FCBF's threshold delta is a value of symmetrical uncertainty, which lies in
[0, 1] (Yu & Liu 2003); CFS's best-first search stops after a positive number of non-improving
expansions (Hall 1999: five; WEKA's BestFirst refuses -N below 1). The discretization entries are
the shared ones of infogain and mrmr.
"""

from __future__ import annotations

from typing import Any

from param_table import DISCRETIZATION, N_SELECT, P

EXPECT: dict[str, dict[str, P]] = {
    "su": {"n_features_to_select": N_SELECT, **DISCRETIZATION},
    "fcbf": {
        "n_features_to_select": N_SELECT, **DISCRETIZATION,
        "delta": P("float", [0, 0.0, 0.05, 0.5, 1], [-0.01, -1, 1.01, 2, 100]),
    },
    "cfs": {
        "n_features_to_select": N_SELECT, **DISCRETIZATION,
        "max_stale": P("int", [1, 5, 50, 1000], [0, -1, -5, 1001, 10**6]),
    },
    "gini": {"n_features_to_select": N_SELECT},
}

COMBOS_INVALID: dict[str, list[tuple[dict[str, Any], str]]] = {
    "su": [({"n_bins": 5}, "n_bins"), ({"discretize": "quantile", "std_factor": 2}, "std_factor")],
    "fcbf": [({"discretize": "mean_std", "n_bins": 4}, "n_bins"),
             ({"discretize": "quantile", "std_factor": 0.5, "delta": 0.1}, "std_factor")],
    "cfs": [({"n_bins": 10, "max_stale": 3}, "n_bins"), ({"discretize": "quantile", "std_factor": 1.5}, "std_factor")],
}

COMBOS_VALID: dict[str, list[dict[str, Any]]] = {
    "su": [{"discretize": "quantile", "n_bins": 32}, {"discretize": "mean_std", "std_factor": 0}],
    "fcbf": [{"discretize": "quantile", "n_bins": 5, "delta": 0.2}, {"delta": 1, "std_factor": 0.5}],
    "cfs": [{"discretize": "quantile", "n_bins": 2, "max_stale": 1}, {"max_stale": 1000, "std_factor": 2}],
}
