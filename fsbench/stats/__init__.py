"""Statistics for comparing selectors: pure functions, no I/O.

- :mod:`fsbench.stats.friedman`: Friedman test over blocks (datasets or (dataset, k) pairs),
  average ranks, Iman-Davenport's F, Nemenyi's critical difference; :func:`block_matrix`
  builds the blocks x selectors table from per-repetition accuracies.
- :mod:`fsbench.stats.pairwise`: per dataset over its splits, the corrected resampled t-test
  (Nadeau-Bengio; Bouckaert-Frank for repeated k-fold), the Wilcoxon signed-rank test and
  the Bayesian correlated t-test (Corani & Benavoli); across datasets, Wilcoxon signed-rank
  tests with Holm's correction.
- :mod:`fsbench.stats.stability`: Nogueira's stability estimate with its confidence interval
  and Kuncheva's index of the top-k sets over the outer splits.
- :func:`score_matrix`: the checked blocks x selectors table every Friedman-type statistic and
  the critical-difference diagram start from.

Accuracies are fractions (0..1), as in ``runs.csv.gz``; the default region of practical
equivalence, 1 accuracy point, is 0.01. Every bad input is a ValueError of one sentence.
The critical-difference diagram, which draws, is :mod:`fsbench.report.cd_diagram`.

May import: errors, fixed_order, code_identity, storage, datasets, selectors, plugins, evaluation,
configuration and engine.

It imports none of them: the statistics are functions of numpy, scipy and pandas alone.
"""

from fsbench.stats._checks import score_matrix
from fsbench.stats.friedman import (
    RECORD_FIELDS,
    FriedmanResult,
    average_ranks,
    block_matrix,
    friedman_test,
    nemenyi_cd,
    nemenyi_q,
    rank_matrix,
)
from fsbench.stats.pairwise import (
    ROPE,
    BayesianResult,
    TTestResult,
    WilcoxonResult,
    bayesian_correlated_ttest,
    corrected_ttest,
    holm,
    pairwise_splits,
    pvalue_matrix,
    single_split_groups,
    wilcoxon_holm,
    wilcoxon_test,
)
from fsbench.stats.stability import (
    StabilityResult,
    kuncheva_index,
    nogueira_stability,
    selection_matrix,
    top_k_matrix,
)

__all__ = [
    "RECORD_FIELDS", "ROPE", "BayesianResult", "FriedmanResult", "StabilityResult", "TTestResult",
    "WilcoxonResult", "average_ranks", "bayesian_correlated_ttest", "block_matrix", "corrected_ttest",
    "friedman_test", "holm", "kuncheva_index", "nemenyi_cd", "nemenyi_q", "nogueira_stability",
    "pairwise_splits", "pvalue_matrix", "rank_matrix", "score_matrix", "selection_matrix", "single_split_groups",
    "top_k_matrix", "wilcoxon_holm", "wilcoxon_test",
]
