"""The information-theoretic filters of Brown, Pocock, Zhao & Lujan's unifying framework, on one engine.

Brown, G., Pocock, A., Zhao, M.-J. & Lujan, M. (2012). Conditional likelihood maximisation: a
unifying framework for information theoretic feature selection. Journal of Machine Learning
Research 13, 27-66. With S the features chosen so far, X_k a candidate and Y the class, each
method adds, one feature at a time, the candidate maximizing

- ``mim``  (Lewis 1992): I(X_k; Y)
- ``mifs`` (Battiti 1994, IEEE Trans. Neural Networks 5(4)): I(X_k; Y) - beta sum_{j in S} I(X_k; X_j)
- ``cife`` (Lin & Tang 2006, ECCV): I(X_k; Y) - sum_{j in S} I(X_k; X_j) + sum_{j in S} I(X_k; X_j | Y)
- ``jmi``  (Yang & Moody 1999, NIPS): sum_{j in S} I(X_k X_j; Y)
- ``jmim`` (Bennasar, Hicks & Setchi 2015, Expert Systems with Applications 42): min_{j in S} I(X_k X_j; Y)
- ``cmim`` (Fleuret 2004, JMLR 5): min_{j in S} I(X_k; Y | X_j)
- ``icap`` (Jakulin 2005, PhD thesis): I(X_k; Y) - sum_{j in S} max(0, I(X_k; X_j) - I(X_k; X_j | Y))
- ``disr`` (Meyer, Schretter & Bontempi 2008, IEEE J. Sel. Topics Signal Process. 2(3)):
  sum_{j in S} I(X_k X_j; Y) / H(X_k X_j Y)

(each in the notation of Brown et al.; mRMR, another member of the framework, is ``mrmr``). The
first pick is the feature of largest I(X_f; Y) for every criterion. Mutual information is the
plug-in estimate in bits on discretized features (``discretize``: ``mean_std``, 3 states at mean
+- ``std_factor`` std, the default as in ``mrmr``; ``quantile``, ``n_bins`` equal-frequency
states; ``none``, each feature's distinct values as they are, for features that are already
discrete such as SNP genotypes, counts or categorical codes, at most 32 distinct values per
feature: a feature with more is refused, in one sentence naming it).

Ties: exact ties of a criterion go to the more relevant candidate (larger I(X_k; Y)), then to the
lower index, as in ``mrmr``; on the first pick, to the lower index. The criteria are computed
as exact integers (``fsbench.selectors._it_engine``: entropies from counts with a fixed-point
k log2 k table built from the logarithms of the primes, running sums and minima in integers),
so criteria of equal value are equal, and the rule decides: duplicated features, a feature's
mirror image or relabeled values, and different count tables of equal entropy tie exactly. The
exceptions are DISR's sums of ratios and MIFS with beta other than 0 or 1, summed in floating
point in pick order (identical terms still give identical sums). Nothing depends on the machine.

``ranking_`` holds the first max(``n_features_to_select``, ``n_ranked``) features in pick order,
then every other feature by decreasing I(X_f; Y) (ties to the lower index); ``scores_`` are
reversed positions (best = n_features), ``relevance_`` is I(X_f; Y) of every feature,
``criterion_`` the criterion value of each pick, and ``diagnostics_`` gives the number of
greedy picks (``it_n_incremental``).

Peers (checked in ``tests/test_infotheory.py``): scikit-feature 1.2.1's ``cmim`` selects what the
definition gives; its ``icap`` computes CMIM's criterion (I(f;y) - max_j (I(f;f_j) - I(f;f_j|y)),
a maximum instead of the sum of positive parts), its ``disr`` divides the sum of symmetric
relevances by sum_j (1 + I(X_k; X_j)), and its ``jmi``, ``mifs`` and ``cife`` with
``mode="index"`` return ranks of the picks (a permutation of 0..k-1), not a selection order
(its ``jmi`` moreover runs its LCSI with beta = 0.8, gamma = 0.5, not JMI). ITMO_FS 0.3.3's ICAP
subtracts max(0, sum_j (I(X_k;X_j) - I(X_k;X_j|Y))), the positive part of the sum instead of
the sum of positive parts; its JMI is I(X_k;Y) - mean_j I(X_k;X_j) + mean_j I(X_k;X_j|Y), which
Brown et al. show ranks candidates as sum_j I(X_k X_j; Y) does; it computes in nats.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from fsbench.selectors import register
from fsbench.selectors._discretize import DISCRETIZATION_CONSTRAINTS, check_discretization_relations
from fsbench.selectors._it_engine import select
from fsbench.selectors.base import BaseSelector, count, real


class InformationTheoreticSelector(BaseSelector):
    """Greedy forward selection by one criterion of Brown et al. (2012); see the module docstring."""

    #: the engine's criterion (a key of ``fsbench.selectors._it_engine.CRITERIA``)
    criterion: str = ""

    _parameter_constraints: dict = {
        **BaseSelector._parameter_constraints,
        # the discretizations of mrmr, chi2 and infogain (same bounds), plus "none": the values as states
        "discretize": [StrOptions({"mean_std", "quantile", "none"})],
        "std_factor": DISCRETIZATION_CONSTRAINTS["std_factor"],
        "n_bins": DISCRETIZATION_CONSTRAINTS["n_bins"],
        # as mrmr: any number of greedy picks (capped by the number of features)
        "n_ranked": [count(1)],
    }

    def __init__(self, *, n_features_to_select: int = 10, n_ranked: int = 100, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3):
        super().__init__(n_features_to_select=n_features_to_select)
        self.n_ranked = n_ranked
        self.discretize = discretize
        self.std_factor = std_factor
        self.n_bins = n_bins

    def check_params(self) -> None:
        if self.discretize == "none":
            self._reject_unused("std_factor", "discretize='mean_std'")
            self._reject_unused("n_bins", "discretize='quantile'")
        else:
            check_discretization_relations(self)

    def _beta(self) -> float:
        return 1.0

    def _fit(self, X, y, classes):
        d = X.shape[1]
        n_select = max(int(self.n_features_to_select), int(self.n_ranked))
        result = select(X, y, classes.size, self.criterion, n_select=n_select, discretize=self.discretize,
                        std_factor=self.std_factor, n_bins=self.n_bins, beta=self._beta())
        self.ranking_ = result.ranking
        self.relevance_ = result.relevance
        self.criterion_ = result.criterion
        self.diagnostics_ = {"it_n_incremental": int(result.n_incremental)}
        scores = np.empty(d)
        scores[self.ranking_] = np.arange(d, 0, -1, dtype=float)
        return scores


@register("mim")
class MIM(InformationTheoreticSelector):
    """MIM: mutual information maximization, I(X_k; Y) in bits on discretized features (Lewis 1992).

    The ranking by decreasing I(X_k; Y), ties to the lower index (Brown et al. 2012's J_mim).
    """

    criterion = "mim"


@register("mifs")
class MIFS(InformationTheoreticSelector):
    """MIFS: I(X_k; Y) - beta sum_{j in S} I(X_k; X_j), greedy (Battiti 1994).

    Battiti, R. (1994). Using mutual information for selecting features in supervised neural net
    learning. IEEE Transactions on Neural Networks 5(4), 537-550. ``beta`` weighs the redundancy
    with the features already chosen against the relevance: beta = 0 ranks by relevance alone
    (MIM); Battiti recommends values between 0.5 and 1. The default 1 is the upper end of that
    range and the default of FEAST, the toolbox of Brown et al. (2012), whose framework places
    MIFS at (beta, gamma = 0).
    """

    criterion = "mifs"

    _parameter_constraints: dict = {
        **InformationTheoreticSelector._parameter_constraints,
        # [0, 1]: 0 is MIM (no redundancy term); Battiti studies and recommends beta <= 1, and above
        # 1 one bit shared with a chosen feature outweighs a bit of relevance, which the method
        # was not proposed for; a negative beta would reward redundancy.
        "beta": [real(0, 1, "both")],
    }

    def __init__(self, *, n_features_to_select: int = 10, n_ranked: int = 100, discretize: str = "mean_std",
                 std_factor: float = 1.0, n_bins: int = 3, beta: float = 1.0):
        super().__init__(n_features_to_select=n_features_to_select, n_ranked=n_ranked, discretize=discretize,
                         std_factor=std_factor, n_bins=n_bins)
        self.beta = beta

    def _beta(self) -> float:
        return float(self.beta)


@register("cife")
class CIFE(InformationTheoreticSelector):
    """CIFE: I(X_k; Y) - sum_{j in S} I(X_k; X_j) + sum_{j in S} I(X_k; X_j | Y), greedy (Lin & Tang 2006).

    Lin, D. & Tang, X. (2006). Conditional infomax learning: an integrated framework for feature
    extraction and fusion. ECCV 2006; in Brown et al. (2012) the point beta = gamma = 1.
    """

    criterion = "cife"


@register("jmi")
class JMI(InformationTheoreticSelector):
    """JMI: sum_{j in S} I(X_k X_j; Y), greedy (Yang & Moody 1999).

    Yang, H. H. & Moody, J. (1999). Data visualization and feature selection: new algorithms for
    nongaussian data. NIPS 12; in the form of Brown et al. (2012).
    """

    criterion = "jmi"


@register("jmim")
class JMIM(InformationTheoreticSelector):
    """JMIM: min_{j in S} I(X_k X_j; Y), greedy (Bennasar, Hicks & Setchi 2015).

    Bennasar, M., Hicks, Y. & Setchi, R. (2015). Feature selection using joint mutual information
    maximisation. Expert Systems with Applications 42(22), 8520-8532.
    """

    criterion = "jmim"


@register("cmim")
class CMIM(InformationTheoreticSelector):
    """CMIM: min_{j in S} I(X_k; Y | X_j), greedy (Fleuret 2004).

    Fleuret, F. (2004). Fast binary feature selection with conditional mutual information. JMLR 5,
    1531-1555; equal to I(X_k; Y) - max_{j in S} (I(X_k; X_j) - I(X_k; X_j | Y)) (Brown et al. 2012).
    """

    criterion = "cmim"


@register("icap")
class ICAP(InformationTheoreticSelector):
    """ICAP: I(X_k; Y) - sum_{j in S} max(0, I(X_k; X_j) - I(X_k; X_j | Y)), greedy (Jakulin 2005).

    Jakulin, A. (2005). Machine learning based on attribute interactions. PhD thesis, University of
    Ljubljana; in the form of Brown et al. (2012).
    """

    criterion = "icap"


@register("disr")
class DISR(InformationTheoreticSelector):
    """DISR: sum_{j in S} I(X_k X_j; Y) / H(X_k X_j Y), greedy (Meyer, Schretter & Bontempi 2008).

    Meyer, P. E., Schretter, C. & Bontempi, G. (2008). Information-theoretic feature selection in
    microarray data using variable complementarity. IEEE Journal of Selected Topics in Signal
    Processing 2(3), 261-274; in the form of Brown et al. (2012).
    """

    criterion = "disr"
