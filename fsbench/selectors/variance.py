"""Variance of each feature: the unsupervised null baseline that never looks at the labels."""

from __future__ import annotations

import numpy as np

from fsbench.fixed_order import column_sums
from fsbench.selectors import register
from fsbench.selectors.base import BaseSelector


def sorted_variance(X: np.ndarray) -> np.ndarray:
    """Population variance (ddof = 0) of every column, from its values sorted in increasing order.

    var_j = sum_i (x_(i)j - m_j)^2 / n with m_j = sum_i x_(i)j / n, each sum running over the
    sorted values in increasing order (``fsbench.fixed_order.column_sums``: no BLAS, the same bits
    on every machine). Sorting first makes the result a function of the multiset of a column's
    values: columns that are permutations of each other get bit-identical variances. A constant
    column gets 0 exactly (its computed mean need not equal its value, e.g. ten times 0.1).
    """
    srt = np.sort(X, axis=0)
    n = X.shape[0]
    dev = srt - column_sums(srt) / n
    var = column_sums(np.multiply(dev, dev, out=dev)) / n
    var[srt[0] == srt[-1]] = 0.0
    return var


@register("variance")
class Variance(BaseSelector):
    """Variance: rank features by their variance on the data the selector is fitted on; ignores y.

    score_j = (1 / n) sum_i (x_ij - mean_j)^2 (ddof = 0, numpy's ``var`` default and the z-score
    of fsbench's protocol); high variance first, ties to the lower index. The classic unsupervised
    low-variance filter (scikit-learn's ``VarianceThreshold`` keeps features by the same
    ``variances_``), here a null baseline: a method that never sees the labels.

    What it measures under fsbench's protocol (``preprocessing.standardize``, ``protocol.select_on``):

    - ``standardize: train`` (the default) with ``select_on: train`` (the default), or
      ``standardize: train`` or ``global`` with ``select_on: all``: the selector is fitted on
      exactly the samples the z-score was computed on, so every non-constant feature has
      variance 1 in exact arithmetic and the computed variances differ from 1 by rounding only
      (up to about n units in the last place; 16 on GLIOMA z-scored on its 50 samples). The ranking is then
      set by rounding: deterministic and the same on every machine (see below) but carrying no
      information about the features, and every row's ``ranking_margin`` is at the level of
      rounding (``fsbench check`` counts such rows as decided by rounding). Features whose
      variance comes out as exactly 1.0 keep their index order; constant features (0) rank last.
    - ``standardize: global`` with ``select_on: train`` (the papers' protocol): the z-score
      comes from all samples, so the score is the training part's variance relative to the
      whole data's, a sampling fluctuation that again ignores the classes.
    - ``standardize: none``: the raw variance, the classic unsupervised filter; it depends on
      each feature's units.

    Exactness: the sums run over each feature's values sorted in increasing order, in a fixed
    order (``sorted_variance``), so features with the same values in any sample order
    (duplicates, discrete features with equal value counts) get bit-identical variances and rank
    by index. A negated or shifted copy has the same variance in exact arithmetic but may differ
    in the last bits.
    """

    def _fit(self, X, y, classes):
        return sorted_variance(X)
