"""What the parameters of the statistical filters should accept (see ``param_table.py``).

Kruskal-Wallis, AUC and variance score every feature on its own from a closed formula, so each has
one parameter, the number of features to select; none needs ``FAST`` settings.
"""

from __future__ import annotations

from param_table import N_SELECT, P

EXPECT: dict[str, dict[str, P]] = {
    "kruskal": {"n_features_to_select": N_SELECT},
    "auc": {"n_features_to_select": N_SELECT},
    "variance": {"n_features_to_select": N_SELECT},
}
