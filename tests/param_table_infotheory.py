"""What the parameters of the information-theoretic filters (mim, mifs, cife, jmi, jmim, cmim, icap,
disr) should accept, written from the papers: the discretizations of mrmr plus ``none`` (the
values as states), mrmr's ``n_ranked``, and MIFS's ``beta`` (Battiti 1994: 0 is relevance alone,
0.5 to 1 recommended; nothing above 1 studied, nothing negative meaningful)."""

from __future__ import annotations

from typing import Any

from param_table import DISCRETIZATION, N_SELECT, P

NAMES = ("mim", "mifs", "cife", "jmi", "jmim", "cmim", "icap", "disr")

_COMMON = {
    "n_features_to_select": N_SELECT,
    **DISCRETIZATION,
    "discretize": P("str", ["mean_std", "quantile", "none"], ["kmeans", "mean-std", "Quantile", "raw", "None"]),
    "n_ranked": P("int", [1, 10, 1000], [0, -5], edge=[2**31 - 1]),
}

EXPECT: dict[str, dict[str, P]] = {name: dict(_COMMON) for name in NAMES}
EXPECT["mifs"]["beta"] = P("float", [0, 0.5, 0.7, 1, 1.0], [-0.1, -1, 1.01, 2, 10])

COMBOS_INVALID: dict[str, list[tuple[dict[str, Any], str]]] = {
    name: [({"n_bins": 5}, "n_bins"), ({"discretize": "quantile", "std_factor": 2}, "std_factor"),
           ({"discretize": "none", "n_bins": 4}, "n_bins"), ({"discretize": "none", "std_factor": 0.5}, "std_factor")]
    for name in NAMES
}
COMBOS_VALID: dict[str, list[dict[str, Any]]] = {
    name: [{"discretize": "none"}, {"discretize": "quantile", "n_bins": 5}, {"discretize": "mean_std", "std_factor": 0}]
    for name in NAMES
}
COMBOS_VALID["mifs"] = COMBOS_VALID["mifs"] + [{"discretize": "none", "beta": 0.5}]
