"""What the parameters of the statistical filters and the trace ratio should accept (see ``param_table.py``).

Kruskal-Wallis, AUC and variance score every feature on its own and the trace ratio's iteration
stops by itself (lambda strictly increases over finitely many subsets), so each has one parameter,
the number of features to select (the trace ratio's k: the subset size the criterion optimizes);
none needs ``FAST`` settings.
"""

from __future__ import annotations

from param_table import N_SELECT, P

EXPECT: dict[str, dict[str, P]] = {
    "kruskal": {"n_features_to_select": N_SELECT},
    "auc": {"n_features_to_select": N_SELECT},
    "variance": {"n_features_to_select": N_SELECT},
    "trace_ratio": {"n_features_to_select": N_SELECT},
}
