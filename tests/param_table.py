"""What each selector parameter should accept: the hand table of ``test_param_validation.py``.

Written from the papers and the docstrings, independently of the selectors' declared constraints,
so that a missing or too loose constraint fails there. This module holds the kind of entry and
the entries shared by several selectors; ``param_table_*.py`` beside it hold the table of one
family of selectors each (``EXPECT``, and the combinations ``COMBOS_INVALID`` / ``COMBOS_VALID``
of parameters that constrain each other), merged by the test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class P:
    """What one parameter should accept: its kind, some valid and some invalid values."""

    kind: str  # "int", "float", "bool" or "str"
    valid: list[Any]
    invalid: list[Any]
    nullable: bool = False
    context: dict[str, Any] = field(default_factory=dict)  # what the valid values need besides
    edge: list[Any] = field(default_factory=list)  # valid, but too slow to fit: config only

    def all_invalid(self) -> list[Any]:
        """The table's invalid values plus those of the wrong type for this kind."""
        wrong = {
            "int": [1.5, 0.5, True, False, "10", math.inf, -math.inf, math.nan, 1e300, -1e300, 2**63],
            "float": [True, False, "1.0", "abc", math.inf, -math.inf, math.nan, 1e300, -1e300],
            "bool": [0, 1, 1.0, "true", "yes", "no"],
            "str": [1, 0.5, True, "", "no-such-option"]
            + [v.upper() for v in self.valid if isinstance(v, str) and v.upper() != v]
            + [v + " " for v in self.valid if isinstance(v, str)],
        }[self.kind]
        nulls = [] if self.nullable else [None]
        return self.invalid + wrong + nulls + [[1, 2], {"a": 1}]


N_SELECT = P("int", [1, 5, 64], [0, -1, 2**31], edge=[2**31 - 1])
SEED = P("int", [0, 7, 2**32 - 1, None], [-1, 2**32, "seed"], nullable=True)
BOOL = P("bool", [True, False], [])
ITERS = P("int", [1, 3, 1000], [0, -1, -100, 1_000_001, 10**9], edge=[1_000_000])
DECREASE_TOL = P("float", [0, 1e-8, 1e-5, 0.5], [-1e-6, -1, 1, 1.5, 100])  # a relative decrease
GAP_TOL = P("float", [1e-12, 1e-8, 0.5], [0, 0.0, -1e-8, 1, 2])  # a relative duality gap
SVM_C = P("float", [1e-8, 0.1, 10, 1e8], [0, -1, 1e-9, 1.01e8, 1e9, 1e300])
SOLVER = P("str", ["auto", "ip", "cd", "liblinear"], ["lbfgs", "newton", "IP"])
#: l21svm's and SL21's: the reweighting's SVM step, or ADMM on the whole problem
SOLVER_ADMM = P("str", ["auto", "ip", "cd", "liblinear", "admm"], ["lbfgs", "newton", "IP", "ADMM"])
DISCRETIZATION = {
    "discretize": P("str", ["mean_std", "quantile"], ["kmeans", "mean-std", "Quantile"]),
    "std_factor": P("float", [0, 0.5, 1.0, 5], [-0.1, -1, 5.5, 10, 1e6]),
    "n_bins": P("int", [2, 3, 10, 32], [1, 0, -3, 33, 1000], context={"discretize": "quantile"}),
}
REWEIGHTED = {
    "n_features_to_select": N_SELECT, "C": SVM_C,
    "loss": P("str", ["ovr", "crammer_singer"], ["squared_hinge", "hinge", "cs"]),
    "fit_intercept": BOOL, "tol": DECREASE_TOL, "max_iter": ITERS, "inner_tol": GAP_TOL,
    "solver": SOLVER_ADMM,
}
