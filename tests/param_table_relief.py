"""What the parameters of the SURF family (surf, surfstar, multisurf, multisurfstar) should accept.

Written from the papers and the module docstring, independently of the declared constraints:
the four methods use every instance as a target and choose neighbours by distance thresholds,
so their only choices are which features are nominal (a count of distinct values, 0 for none,
any count beyond the sample size meaning all) and how the misses of several classes are
weighted (ReliefF's class priors, or uniformly). They need no ``FAST`` entry: a fit on the
estimator checks' problems takes milliseconds.
"""

from __future__ import annotations

from param_table import N_SELECT, P

_SURF = {
    "n_features_to_select": N_SELECT,
    "discrete_threshold": P("int", [0, 1, 2, 10, 1000, 2**31 - 1], [-1, -10]),
    "miss_weighting": P("str", ["prior", "uniform"], ["equal", "priors", "rebate", "neighbourhood"]),
}

EXPECT: dict[str, dict[str, P]] = {name: dict(_SURF) for name in ("surf", "surfstar", "multisurf", "multisurfstar")}
