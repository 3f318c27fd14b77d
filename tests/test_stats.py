"""fsbench.stats against independent figures: Demšar's worked example, Nogueira's reference
implementation, hand-worked t, Bayesian and Holm arithmetic, scipy, and a null simulation."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from fsbench.report.tables import per_repeat
from fsbench.stats import (
    RECORD_FIELDS,
    average_ranks,
    bayesian_correlated_ttest,
    block_matrix,
    corrected_ttest,
    friedman_test,
    holm,
    kuncheva_index,
    nemenyi_cd,
    nemenyi_q,
    nogueira_stability,
    pairwise_splits,
    pvalue_matrix,
    selection_matrix,
    top_k_matrix,
    wilcoxon_holm,
    wilcoxon_test,
)

# ----------------------------------------------------------------------------- Demšar (2006)
#: Demšar (2006), Table 6: AUC of C4.5 and three variants on 14 UCI data sets, as printed
#: (three decimals). The same table ships as test data of several public statistics packages.
DEMSAR_NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]
DEMSAR_DATASETS = ["adult (sample)", "breast cancer", "breast cancer wisconsin", "cmc", "ionosphere", "iris",
                   "liver disorders", "lung cancer", "lymphography", "mushroom", "primary tumor", "rheum",
                   "voting", "wine"]
DEMSAR_AUC = np.array([
    [0.763, 0.768, 0.771, 0.798],
    [0.599, 0.591, 0.590, 0.569],
    [0.954, 0.971, 0.968, 0.967],
    [0.628, 0.661, 0.654, 0.657],
    [0.882, 0.888, 0.886, 0.898],
    [0.936, 0.931, 0.916, 0.931],
    [0.661, 0.668, 0.609, 0.685],
    [0.583, 0.583, 0.563, 0.625],
    [0.775, 0.838, 0.866, 0.875],
    [1.000, 1.000, 1.000, 1.000],
    [0.940, 0.962, 0.965, 0.962],
    [0.619, 0.666, 0.614, 0.669],
    [0.972, 0.981, 0.975, 0.975],
    [0.957, 0.978, 0.946, 0.970],
])


def demsar_table() -> pd.DataFrame:
    """The table as Demšar ranked it. The printed AUCs are rounded: on voting C4.5+cf and
    C4.5+m+cf both print 0.975, but the paper ranks C4.5+cf 2nd and C4.5+m+cf 3rd there, which
    is what its average ranks 2.893 and 1.964 need (tied, they would be 2.929 and 1.929; no
    other row ties these two). 0.9751 encodes that order."""
    auc = DEMSAR_AUC.copy()
    auc[DEMSAR_DATASETS.index("voting"), 2] = 0.9751
    return pd.DataFrame(auc, index=DEMSAR_DATASETS, columns=DEMSAR_NAMES)


def test_demsar_friedman_and_nemenyi_worked_example():
    res = friedman_test(demsar_table(), alpha=0.05)
    ranks = dict(zip(res.ranks["selector"], res.ranks["average_rank"], strict=True))
    # Demšar, Section 3.2.4: average ranks 3.143, 2.000, 2.893, 1.964
    for name, expected in zip(DEMSAR_NAMES, [3.143, 2.000, 2.893, 1.964], strict=True):
        assert ranks[name] == pytest.approx(expected, abs=5e-4)
    assert res.statistic == pytest.approx(9.28, abs=5e-3)  # chi2_F = 9.28
    assert res.iman_davenport == pytest.approx(3.69, abs=5e-3)  # F_F = 3.69
    assert res.cd == pytest.approx(1.25, abs=5e-3)  # CD = 2.569 sqrt(4 * 5 / (6 * 14)) = 1.25
    assert nemenyi_q(4, 0.05) == pytest.approx(2.569, abs=5e-4)
    # the p-values of those statistics: chi2 with 3 dof, F with 3 and 39 dof
    assert res.p_value == pytest.approx(st.chi2.sf(9.2786, 3), rel=1e-3)
    assert res.iman_davenport_p == pytest.approx(st.f.sf(3.6863, 3, 39), rel=1e-3)
    assert res.iman_davenport_p < 0.05  # "the null hypothesis is rejected" (F(3, 39) = 2.85 at 0.05)
    assert list(res.ranks["selector"]) == ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]  # best first
    assert (res.ranks["n_blocks"] == 14).all()
    assert list(res.record()) == list(RECORD_FIELDS)
    assert res.record()["n_blocks"] == 14 and res.record()["n_selectors"] == 4 and res.record()["alpha"] == 0.05


def test_demsar_nemenyi_decisions_at_5_and_10_percent():
    table = demsar_table()
    ranks = average_ranks(table)
    # at 0.05 "the post-hoc test is not powerful enough": the best and worst differ by 1.179 < 1.25
    cd05 = friedman_test(table, alpha=0.05).cd
    assert all(abs(ranks[a] - ranks[b]) <= cd05 for a, b in itertools.combinations(DEMSAR_NAMES, 2))
    # at 0.10, CD = 1.12 (q = 2.291) and C4.5 is worse than C4.5+m and C4.5+m+cf, nothing else
    cd10 = friedman_test(table, alpha=0.10).cd
    assert cd10 == pytest.approx(1.12, abs=5e-3)
    different = {(a, b) for a, b in itertools.combinations(DEMSAR_NAMES, 2) if abs(ranks[a] - ranks[b]) > cd10}
    assert different == {("C4.5", "C4.5+m"), ("C4.5", "C4.5+m+cf")}


@pytest.mark.parametrize(("alpha", "table"), [
    # Demšar (2006), Table 5(a): critical values of the two-tailed Nemenyi test, k = 2..10
    (0.05, [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]),
    (0.10, [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]),
])
def test_nemenyi_q_matches_demsar_table_5(alpha, table):
    for k, q in zip(range(2, 11), table, strict=True):
        assert nemenyi_q(k, alpha) == pytest.approx(q, abs=1e-3)
    assert nemenyi_cd(4, 14, alpha) == pytest.approx(nemenyi_q(4, alpha) * math.sqrt(20 / 84))


def test_printed_table_with_ties_and_scipy_tie_correction():
    table = pd.DataFrame(DEMSAR_AUC, columns=DEMSAR_NAMES)  # voting tied as printed
    ranks = average_ranks(table)
    assert ranks["C4.5+cf"] == pytest.approx(41 / 14) and ranks["C4.5+m+cf"] == pytest.approx(27 / 14)
    corrected = friedman_test(table, tie_correction=True)
    reference = st.friedmanchisquare(*DEMSAR_AUC.T)  # scipy corrects for ties
    assert corrected.statistic == pytest.approx(reference.statistic, rel=1e-12)
    assert corrected.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    assert friedman_test(table).statistic < corrected.statistic


def test_friedman_extremes():
    perfect = np.array([[3.0, 2.0, 1.0]] * 5)  # every block agrees: chi2_F = N (K - 1)
    res = friedman_test(perfect)
    assert res.statistic == pytest.approx(10.0)
    assert res.iman_davenport == math.inf and res.iman_davenport_p == 0.0
    tied = friedman_test(np.ones((4, 3)))
    assert tied.statistic == 0.0 and tied.p_value == 1.0 and tied.iman_davenport_p == pytest.approx(1.0)
    assert friedman_test(np.ones((4, 3)), tie_correction=True).statistic == 0.0
    lower = friedman_test(perfect, higher_is_better=False)
    assert lower.ranks["selector"].tolist() == ["s2", "s1", "s0"]  # the smallest score ranks first
    assert friedman_test(perfect).ranks["selector"].tolist() == ["s0", "s1", "s2"]


def test_demsar_wilcoxon_example():
    # Demšar, Section 3.1.3: C4.5+m vs C4.5 gives R+ = 93 and R- = 12 (the zero on mushroom
    # split), T = min = 12, below the critical 21 of N = 14 at alpha = 0.05
    c45, c45m = DEMSAR_AUC[:, 0], DEMSAR_AUC[:, 1]
    res = wilcoxon_test(c45m, c45)
    assert res.statistic == 12.0
    assert res.p_value < 0.05
    assert res.p_value == pytest.approx(st.wilcoxon(c45m, c45, zero_method="zsplit").pvalue, rel=1e-12)


# ----------------------------------------------------------------------------- Wilcoxon, Holm
def test_holm_hand_worked():
    # p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03;
    # 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> max(0.06, 0.04) = 0.06 (step-down keeps it monotone)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # 0.5 x 2 = 1 caps, and carries to 0.6
    assert holm([0.2]) == pytest.approx([0.2])
    assert holm([]).size == 0
    with pytest.raises(ValueError, match="p-values"):
        holm([0.1, 1.5])


def test_wilcoxon_matches_scipy_on_ties_zeros_and_untied_data():
    rng = np.random.default_rng(3)
    for trial in range(120):
        n = int(rng.integers(3, 30))
        zero_method = ("zsplit", "pratt", "wilcox")[trial % 3]
        if trial % 2:  # accuracies over 40 test samples: ties and zeros
            a, b = rng.integers(20, 32, n) / 40, rng.integers(20, 32, n) / 40
        else:
            a, b = rng.normal(size=n), rng.normal(size=n)
        d = np.round(a - b, 12)
        if np.count_nonzero(d) < 2:
            continue
        ours = wilcoxon_test(a, b, zero_method)
        ref = st.wilcoxon(d, zero_method=zero_method)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-14)
        assert ours.statistic == pytest.approx(ref.statistic)
    assert wilcoxon_test([0.5, 0.6, 0.7], [0.5, 0.6, 0.7]).p_value == 1.0


def test_wilcoxon_holm_against_scipy_and_hand_holm():
    table = demsar_table()
    pairs = wilcoxon_holm(table, alpha=0.05)
    assert len(pairs) == 6
    raw = [st.wilcoxon(table[a], table[b], zero_method="zsplit").pvalue
           for a, b in itertools.combinations(DEMSAR_NAMES, 2)]
    assert pairs["p_value"].to_numpy() == pytest.approx(raw, rel=1e-12)
    # Holm by hand: sort, multiply by 6, 5, ..., 1, running maximum, capped at 1
    order = np.argsort(raw)
    expected = np.empty(6)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (6 - rank) * raw[i]))
        expected[i] = running
    assert pairs["p_holm"].to_numpy() == pytest.approx(expected)
    assert (pairs["significant"] == (pairs["p_holm"] < 0.05)).all()
    matrix = pvalue_matrix(pairs)
    assert matrix.loc["C4.5", "C4.5+m"] == matrix.loc["C4.5+m", "C4.5"] == pairs["p_holm"].iloc[0]
    assert (np.diag(matrix) == 1.0).all()


# ----------------------------------------------------------------------------- corrected t, Bayesian
#: hand-worked differences: mean 0.03, deviations -0.01, 0.01, -0.03, 0.03, 0 -> squares sum
#: to 0.002, var (ddof 1) = 0.002 / 4 = 0.0005
B = np.array([0.80, 0.78, 0.82, 0.75, 0.79])
D = np.array([0.02, 0.04, 0.00, 0.06, 0.03])


def t4_cdf(t: float) -> float:
    """Student t CDF with 4 degrees of freedom, closed form:
    1/2 + (3/8) u (1 - u^2 / 12), u = t / sqrt(1 + t^2 / 4)."""
    u2 = t * t / (1 + t * t / 4)
    return 0.5 + 3 / 8 * (t / math.sqrt(1 + t * t / 4)) * (1 - u2 / 12)


def test_corrected_ttest_hand_worked():
    # hold-out with n_test / n_total = 0.2, so n_test / n_train = 0.25; J = 5:
    # factor = 1/5 + 0.25 = 0.45; variance of the mean 0.45 x 0.0005 = 0.000225 = 0.015^2;
    # t = 0.03 / 0.015 = 2, 4 dof, p = 2 (1 - F4(2)) = 0.1161
    res = corrected_ttest(B + D, B, test_fraction=0.2)
    assert res.mean_diff == pytest.approx(0.03)
    assert res.variance_factor == pytest.approx(0.45)
    assert res.t == pytest.approx(2.0)
    assert res.dof == 4
    assert res.p_value == pytest.approx(2 * (1 - t4_cdf(2.0)), rel=1e-9)
    assert res.p_value == pytest.approx(0.116117, abs=1e-6)
    # plain paired t-test (test_fraction 0): factor 1/5, t = 0.03 / 0.01 = 3, p = 0.0399
    plain = corrected_ttest(B + D, B, test_fraction=0.0)
    assert plain.t == pytest.approx(3.0)
    assert plain.p_value == pytest.approx(2 * (1 - t4_cdf(3.0)), rel=1e-9)
    assert plain.p_value == pytest.approx(st.ttest_rel(B + D, B).pvalue, rel=1e-9)
    # Bouckaert-Frank, 10 x 5-fold CV: J = 50, n_test / n_train = 1 / (5 - 1)
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.7, 0.9, 50), rng.uniform(0.7, 0.9, 50)
    assert corrected_ttest(a, b, test_fraction=1 / 5).variance_factor == pytest.approx(1 / 50 + 1 / 4)
    # zero variance
    assert corrected_ttest(B, B, 0.2).p_value == 1.0
    constant = corrected_ttest(B + 0.01, B, 0.2)
    assert constant.p_value == 0.0 and constant.t == math.inf


def test_bayesian_correlated_ttest_closed_form():
    # posterior: Student t, 4 dof, location 0.03, scale sqrt((1/5 + 0.2/0.8) x 0.0005) = 0.015;
    # P(mu < -0.01) = F4((-0.01 - 0.03) / 0.015) = F4(-8/3) = 0.028 exactly;
    # P(mu > 0.01) = 1 - F4((0.01 - 0.03) / 0.015) = F4(4/3) = 1/2 + (3/8)(4/sqrt 13)(35/39)
    res = bayesian_correlated_ttest(B + D, B, test_fraction=0.2, rope=0.01)
    assert res.mean_diff == pytest.approx(0.03) and res.scale == pytest.approx(0.015) and res.dof == 4
    assert res.p_worse == pytest.approx(0.028, rel=1e-9)
    assert res.p_worse == pytest.approx(t4_cdf(-8 / 3), rel=1e-9)
    assert res.p_better == pytest.approx(0.5 + 3 / 8 * 4 / math.sqrt(13) * 35 / 39, rel=1e-9)
    assert res.p_equivalent == pytest.approx(1 - res.p_better - res.p_worse)
    swapped = bayesian_correlated_ttest(B, B + D, test_fraction=0.2, rope=0.01)
    assert swapped.p_better == pytest.approx(res.p_worse) and swapped.p_worse == pytest.approx(res.p_better)
    assert bayesian_correlated_ttest(B + D, B, 0.2, rope=0.0).p_equivalent == pytest.approx(0.0, abs=1e-12)
    point = bayesian_correlated_ttest(B + 0.005, B, 0.2)  # zero variance, inside the rope
    assert (point.p_better, point.p_equivalent, point.p_worse) == (0.0, 1.0, 0.0)


def _benchmark():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "stats_false_positives.py"
    spec = importlib.util.spec_from_file_location("stats_false_positives", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_null_simulation_plain_ttest_is_liberal_corrected_is_not():
    """benchmarks/stats_false_positives.py, small: 600 fresh datasets of a null problem (two
    feature subsets identical in distribution), 10 stratified 6:4 hold-out splits each."""
    bench = _benchmark()
    n = 600
    rates = bench.false_positive_rates(bench.SETTINGS[0], n_experiments=n, seed=1)
    se = math.sqrt(0.05 * 0.95 / n)
    print(f"false positives at 5%: plain t {rates['plain']:.3f}, corrected t {rates['corrected']:.3f}")
    assert rates["plain"] > 0.05 + 5 * se  # about 40%
    assert rates["corrected"] <= 0.05


def test_equicorrelated_null_gives_the_nominal_rate():
    """The analytic model behind the correction: J split differences with correlation rho =
    n_test / n_total (Nadeau & Bengio) make the corrected statistic exactly Student t."""
    rng = np.random.default_rng(7)
    j, rho, n = 10, 0.4, 4000
    shared = rng.standard_normal((n, 1)) * math.sqrt(rho)
    x = shared + rng.standard_normal((n, j)) * math.sqrt(1 - rho)
    zeros = np.zeros(j)
    plain = np.mean([corrected_ttest(row, zeros, 0.0).p_value < 0.05 for row in x])
    corrected = np.mean([corrected_ttest(row, zeros, rho).p_value < 0.05 for row in x])
    se = math.sqrt(0.05 * 0.95 / n)
    assert plain > 0.3
    assert abs(corrected - 0.05) < 3 * se


# ----------------------------------------------------------------------------- fsbench's results
def runs_frame(kind: str = "holdout") -> pd.DataFrame:
    """Rows shaped like runs.csv.gz: 2 datasets, 3 selectors, 2 k; 10 hold-out trials, or
    3 repetitions of 4-fold CV."""
    rng = np.random.default_rng(5)
    rows = []
    splits = [(r, 0) for r in range(10)] if kind == "holdout" else [(r, f) for r in range(3) for f in range(4)]
    n_test, n_train = (40, 60) if kind == "holdout" else (25, 75)
    for dataset, k, (repeat, fold), (s, selector) in itertools.product(
            ["glioma", "lung"], [10, 20], splits, enumerate(["fisher", "rfs", "random"])):
        correct = int(rng.binomial(n_test, 0.8 - 0.1 * s))
        rows.append({"dataset": dataset, "repeat": repeat, "fold": fold, "selector": selector, "k": k,
                     "accuracy": correct / n_test, "n_correct": correct, "n_test": n_test, "n_train": n_train})
    return pd.DataFrame(rows)


def test_block_matrix_from_per_repeat():
    runs = runs_frame("kfold")
    reps = per_repeat(runs[runs["k"] == 20])
    table = block_matrix(reps)
    assert list(table.index) == ["glioma", "lung"] and list(table.columns) == ["fisher", "rfs", "random"]
    sel = runs[(runs["k"] == 20) & (runs["dataset"] == "lung") & (runs["selector"] == "rfs")]
    pooled = sel.groupby("repeat")["n_correct"].sum() / sel.groupby("repeat")["n_test"].sum()
    assert table.loc["lung", "rfs"] == pytest.approx(pooled.mean())
    both = block_matrix(per_repeat(runs), blocks=("dataset", "k"))
    assert list(both.index) == [("glioma", 10), ("glioma", 20), ("lung", 10), ("lung", 20)]
    assert friedman_test(both).n_blocks == 4


def test_pairwise_splits_holdout_and_kfold():
    runs = runs_frame("holdout")
    table = pairwise_splits(runs)
    assert len(table) == 2 * 2 * 3  # datasets x k x pairs
    row = table[(table["dataset"] == "lung") & (table["k"] == 10) & (table["selector_a"] == "fisher")
                & (table["selector_b"] == "random")].iloc[0]
    sel = runs[(runs["dataset"] == "lung") & (runs["k"] == 10)]
    a = sel[sel["selector"] == "fisher"].sort_values("repeat")["accuracy"].to_numpy()
    b = sel[sel["selector"] == "random"].sort_values("repeat")["accuracy"].to_numpy()
    assert row["n_splits"] == 10 and row["test_fraction"] == pytest.approx(0.4)
    assert row["t_p_value"] == pytest.approx(corrected_ttest(a, b, 0.4).p_value)
    assert row["wilcoxon_p"] == pytest.approx(st.wilcoxon(np.round(a - b, 12), zero_method="zsplit").pvalue)
    bayes = bayesian_correlated_ttest(a, b, 0.4)
    assert (row["p_a_better"], row["p_equivalent"], row["p_b_better"]) == pytest.approx(
        (bayes.p_better, bayes.p_equivalent, bayes.p_worse))
    cv = pairwise_splits(runs_frame("kfold"))
    assert (cv["n_splits"] == 12).all() and cv["test_fraction"].to_numpy() == pytest.approx(0.25)
    given = pairwise_splits(runs.drop(columns=["n_train"]), {"glioma": 0.4, "lung": 0.3})
    assert set(given["test_fraction"]) == {0.4, 0.3}


# ----------------------------------------------------------------------------- stability
#: Nogueira, Sechidis & Brown's reference implementation (github.com/nogueirs/JMLR2018,
#: python/stability: confidenceIntervals and getVarianceofStability) run on these inputs
#: gives (stability, variance, lower, upper) at alpha = 0.05; its MATLAB version
#: (getStabilityVariance.m) gives the same stability and variance.
NOGUEIRA_REFERENCE = {
    "A": ([[1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0]],
          (0.375, 0.0087890625, 0.19125337644936993, 0.5587466235506301)),
    "B": ([[1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 0, 0]],
          (0.2533333333333333, 0.03131164444444444, -0.09348418747775444, 0.600150854144421)),
    "C (sizes differ)": ([[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 1, 0]],
                         (0.39393939393939403, 0.007446158349127414, 0.22481189567095541, 0.5630668922078327)),
    "D": ([[1, 0, 1, 0, 1, 0, 1], [1, 0, 1, 0, 1, 0, 0], [0, 1, 0, 1, 1, 0, 1]],
          (0.04545454545454519, 0.035882908726635195, -0.32581720978694223, 0.4167263006960326)),
}


@pytest.mark.parametrize("name", list(NOGUEIRA_REFERENCE))
def test_nogueira_matches_the_reference_implementation(name):
    z, (stability, variance, lower, upper) = NOGUEIRA_REFERENCE[name]
    res = nogueira_stability(z)
    assert res.stability == pytest.approx(stability, rel=1e-12, abs=1e-15)
    assert res.variance == pytest.approx(variance, rel=1e-12)
    assert (res.lower, res.upper) == pytest.approx((lower, upper), rel=1e-12)


def test_nogueira_hand_worked_case_a():
    # case A: M = 4 sets of 2 from d = 6; p = (3/4, 3/4, 1/2, 0, 0, 0), kbar = 2;
    # sum p (1 - p) = 3/16 + 3/16 + 1/4 = 5/8; (4/3)(5/8)/6 = 5/36; (kbar/d)(1 - kbar/d) = 2/9;
    # Phi = 1 - (5/36)/(2/9) = 1 - 5/8 = 0.375. Kuncheva: intersections 1, 2, 1, 1, 1, 1, mean 7/6:
    # (7/6 x 6 - 4) / (2 x 4) = 3/8
    z = NOGUEIRA_REFERENCE["A"][0]
    assert nogueira_stability(z).stability == pytest.approx(3 / 8)
    assert kuncheva_index(z) == pytest.approx(3 / 8)


def test_nogueira_identical_sets_is_exactly_one():
    z = np.zeros((7, 30), dtype=bool)
    z[:, [2, 5, 11, 29]] = True
    res = nogueira_stability(z)
    assert res.stability == 1.0
    assert res.variance == 0.0 and res.lower == res.upper == 1.0
    assert kuncheva_index(z) == 1.0


def test_nogueira_random_sets_average_zero():
    rng = np.random.default_rng(11)
    values = [nogueira_stability([rng.choice(50, 5, replace=False) for _ in range(10)], 50).stability
              for _ in range(400)]
    assert abs(np.mean(values)) < 3 * np.std(values) / math.sqrt(len(values))
    assert abs(np.mean(values)) < 0.01


def test_nogueira_equals_kuncheva_for_sets_of_one_size():
    rng = np.random.default_rng(2)
    for m, d, k in [(2, 10, 3), (5, 40, 8), (10, 100, 10), (25, 12, 11)]:
        sets = [rng.choice(d, k, replace=False) for _ in range(m)]
        assert nogueira_stability(sets, d).stability == pytest.approx(kuncheva_index(sets, d), rel=1e-12, abs=1e-12)


def test_selection_inputs_agree():
    sets = [[0, 3], [3, 1], [0, 1]]
    z = selection_matrix(sets, 5)
    assert z.tolist() == [[True, False, False, True, False], [False, True, False, True, False],
                          [True, True, False, False, False]]
    assert nogueira_stability(sets, 5) == nogueira_stability(z) == nogueira_stability(z.astype(int))
    rankings = np.array([[0, 3, 2, 1, 4], [3, 1, 0, 2, 4], [1, 0, 4, 2, 3]])
    assert (top_k_matrix(rankings, 2) == z).all()


# ----------------------------------------------------------------------------- bad input
def test_bad_input_is_one_sentence():
    with pytest.raises(ValueError, match="at least two selectors"):
        friedman_test(np.ones((5, 1)))
    with pytest.raises(ValueError, match="at least 2 blocks.*per-dataset tests"):
        friedman_test(np.ones((1, 3)))
    with pytest.raises(ValueError, match="3 selector names for a matrix of 4 columns"):
        friedman_test(np.ones((5, 4)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="missing or not finite"):
        friedman_test(np.array([[0.5, np.nan], [0.4, 0.3]]))
    with pytest.raises(ValueError, match="alpha"):
        friedman_test(np.ones((3, 3)), alpha=1.5)
    with pytest.raises(ValueError, match="one length"):
        corrected_ttest([0.5, 0.6, 0.7], [0.5, 0.6], 0.4)
    with pytest.raises(ValueError, match="at least two splits"):
        corrected_ttest([0.5], [0.6], 0.4)
    with pytest.raises(ValueError, match="test_fraction"):
        bayesian_correlated_ttest([0.5, 0.6], [0.6, 0.7], 1.0)
    with pytest.raises(ValueError, match="at least two selectors"):
        wilcoxon_holm(np.ones((5, 1)))
    with pytest.raises(ValueError, match="at least two feature sets"):
        nogueira_stability([[1, 0, 1]])
    with pytest.raises(ValueError, match="empty or every set holds every feature"):
        nogueira_stability(np.zeros((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="twice"):
        nogueira_stability([[1, 1], [0, 2]], 4)
    with pytest.raises(ValueError, match="outside"):
        nogueira_stability([[1, 7], [0, 2]], 4)
    with pytest.raises(ValueError, match="columns but n_features"):
        nogueira_stability(np.ones((3, 4), dtype=bool), 5)
    with pytest.raises(ValueError, match="one size"):
        kuncheva_index([[0, 1], [0, 1, 2]], 5)


def test_bad_results_frames():
    runs = runs_frame("holdout")
    with pytest.raises(ValueError, match="several k"):
        block_matrix(per_repeat(runs))
    with pytest.raises(ValueError, match="pool the folds"):
        block_matrix(runs_frame("kfold")[lambda r: r["k"] == 10])
    reps = per_repeat(runs[runs["k"] == 10])
    with pytest.raises(ValueError, match="'rfs' has no results in block 'lung'"):
        block_matrix(reps[~((reps["dataset"] == "lung") & (reps["selector"] == "rfs"))])
    all_k = per_repeat(runs)
    with pytest.raises(ValueError, match=r"'random' has no results in block \('glioma', 20\)"):
        block_matrix(all_k[~((all_k["k"] == 20) & (all_k["dataset"] == "glioma") & (all_k["selector"] == "random"))],
                     blocks=("dataset", "k"))
    with pytest.raises(ValueError, match="do not share their repetitions"):
        block_matrix(reps[~((reps["dataset"] == "lung") & (reps["selector"] == "rfs") & (reps["repeat"] == 3))])
    with pytest.raises(ValueError, match="several classifiers"):
        block_matrix(reps.assign(classifier=np.where(reps["repeat"] % 2 == 0, "svm", "knn")))
    with pytest.raises(ValueError, match="lacks 1 of the 10 splits"):
        pairwise_splits(runs[~((runs["selector"] == "rfs") & (runs["repeat"] == 0))])
    with pytest.raises(ValueError, match="at least two selectors"):
        pairwise_splits(runs[runs["selector"] == "rfs"])
    with pytest.raises(ValueError, match="test_fraction"):
        pairwise_splits(runs.drop(columns=["n_train"]))
    with pytest.raises(ValueError, match="Several rows"):
        pairwise_splits(pd.concat([runs, runs.iloc[:1]]))


# ----------------------------------------------------------------------------- the diagram
def test_cd_diagram_posthocs_agree_and_it_draws(tmp_path):
    from fsbench.report.cd_diagram import posthoc_pvalues, write_cd_diagram

    table = demsar_table()
    ranks = average_ranks(table)
    for alpha in (0.05, 0.10):
        cd = friedman_test(table, alpha=alpha).cd
        nemenyi = posthoc_pvalues(table, test="nemenyi")  # scikit-posthocs
        for a, b in itertools.combinations(DEMSAR_NAMES, 2):
            assert (nemenyi.loc[a, b] < alpha) == (abs(ranks[a] - ranks[b]) > cd)
    wilcoxon = posthoc_pvalues(table, test="wilcoxon")
    ours = pvalue_matrix(wilcoxon_holm(table)).reindex(index=DEMSAR_NAMES, columns=DEMSAR_NAMES)
    assert wilcoxon.to_numpy() == pytest.approx(ours.to_numpy(), rel=1e-10)
    paths = write_cd_diagram(table, tmp_path / "cd", alpha=0.10)
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 1000 for p in paths)
    with pytest.raises(ValueError, match="test must be"):
        posthoc_pvalues(table, test="t")


def test_cd_diagram_bytes_do_not_depend_on_the_hash_seed(tmp_path):
    # scikit-posthocs joins a crossbar's points in set order; the committed diagrams must not
    # change when only Python's hash seed does
    import os
    import subprocess

    script = ("import sys, numpy as np, pandas as pd; from fsbench.report.cd_diagram import write_cd_diagram; "
              "rng = np.random.default_rng(0); scores = pd.DataFrame(rng.uniform(size=(12, 6)) + "
              "np.linspace(0, 0.2, 6), columns=list('abcdef')); write_cd_diagram(scores, sys.argv[1])")
    outputs = []
    for seed in ("1", "2"):
        stem = tmp_path / f"cd{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "MPLBACKEND": "Agg"}
        subprocess.run([sys.executable, "-c", script, str(stem)], check=True, env=env)
        outputs.append((stem.with_suffix(".png").read_bytes(), stem.with_suffix(".pdf").read_bytes()))
    assert outputs[0] == outputs[1]


def test_a_dataset_of_one_split_has_no_per_dataset_row():
    # one split has no variance to test: the group is left out, the others are kept
    runs = runs_frame("holdout")
    one = runs[(runs["dataset"] == "lung") & (runs["repeat"] == 0)]
    table = pairwise_splits(pd.concat([runs[runs["dataset"] != "lung"], one]))
    assert "lung" not in set(table["dataset"]) and len(table) == len(pairwise_splits(runs)) // 2
