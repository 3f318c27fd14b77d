"""Ties between chi2 and infogain scores are decided by exact values, not round-off.

Features whose statistics are equal in exact arithmetic must get equal scores, so that they rank
by index ("ties keep the lower index", base.rank_by_scores). The exact references are written
here independently of fsbench: chi2 with fractions.Fraction from its definition, and equality
of information gains through integers (n I(X; Y) is the logarithm of the rational number
n^n prod O^O / (prod R^R prod C^C), so with equal n and class counts two tables have the same
information gain exactly when they have the same prod O^O / prod R^R).
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsbench.selectors import make_selector
from fsbench.selectors._discretize import contingency
from fsbench.selectors.base import rank_by_scores
from fsbench.selectors.chi2 import chi2_from_counts
from fsbench.selectors.infogain import information_gain

# Two 3-state x 3-class tables (states in rows, 104 samples per class, n = 312) with the same
# exact chi2 = 53270/1647 = 32.343655130540378...; evaluated in floating point from the
# definition they gave 32.34365513054037 and 32.34365513054038, so the second ranked first.
ISSUE_A = [[81, 60, 42], [11, 28, 42], [12, 16, 20]]
ISSUE_B = [[80, 62, 41], [12, 26, 43], [12, 16, 20]]

# A table of the AR face data (warpAR10P, feature 250: 10 classes of 13 samples): its mirror
# image and permuted classes gave three different information gains in the last bits.
AR_TABLE = [[0, 6, 0, 0, 1, 13, 0, 0, 1, 1], [9, 7, 9, 9, 8, 0, 9, 9, 8, 8], [4, 0, 4, 4, 4, 0, 4, 4, 4, 4]]

# Two GLIOMA tables (classes of 14, 7, 14, 15) that are not permutations of each other but have
# exactly the same information gain (their sums of O log O - R log R agree through the prime
# factorizations of the counts); in floating point they differed by 4.4e-16 bits.
GLIOMA_A = [[0, 0, 2, 4], [6, 5, 11, 11], [8, 2, 1, 0]]
GLIOMA_B = [[3, 0, 2, 4], [8, 2, 12, 11], [3, 5, 0, 0]]


def exact_chi2(table) -> Fraction:
    """sum (O - E)^2 / E with E = R C / n over the non-empty states and classes, in fractions."""
    rows = [sum(r) for r in table]
    cols = [sum(c) for c in zip(*table, strict=True)]
    n = sum(rows)
    total = Fraction(0)
    for u, row in enumerate(table):
        for k, o in enumerate(row):
            if rows[u] and cols[k]:
                e = Fraction(rows[u] * cols[k], n)
                total += (o - e) ** 2 / e
    return total


def exact_info_key(table) -> Fraction:
    """prod O^O / prod R^R: equal for two tables with the same n and class counts iff their
    information gains are exactly equal (the logarithm is injective)."""
    num = 1
    for row in table:
        for o in row:
            num *= o ** o
    den = 1
    for row in table:
        den *= sum(row) ** sum(row)
    return Fraction(num, den)


def labels(class_sizes) -> np.ndarray:
    return np.repeat(np.arange(len(class_sizes)), class_sizes)


def codes_of(tables, class_sizes) -> np.ndarray:
    """States (n, d): within each class, the samples take the states of that class's column."""
    y = labels(class_sizes)
    codes = np.zeros((y.size, len(tables)), dtype=np.intp)
    for j, table in enumerate(tables):
        for k in range(len(class_sizes)):
            column = np.repeat(np.arange(len(table)), [row[k] for row in table])
            assert column.size == class_sizes[k]
            codes[y == k, j] = column
    return codes


def table_of(states, y, n_states: int, n_classes: int) -> list[list[int]]:
    counts = Counter(zip(states, y, strict=True))
    return [[counts[(u, k)] for k in range(n_classes)] for u in range(n_states)]


def mean_std_states(column, factor: float) -> list[int]:
    """The mean_std rule written out: 0 below mean - factor * sd, 2 above mean + factor * sd."""
    mu, sd = statistics.mean(column), statistics.stdev(column)
    return [0 if (v - mu) / sd < -factor else 2 if (v - mu) / sd > factor else 1 for v in column]


# ----------------------------------------------------------------------------- chi2
@pytest.mark.parametrize("first, second", [(ISSUE_A, ISSUE_B), (ISSUE_B, ISSUE_A)])
def test_issue_tables_score_equal_and_keep_the_lower_index_first(first, second):
    assert exact_chi2(ISSUE_A) == exact_chi2(ISSUE_B) == Fraction(53270, 1647)
    y = labels([104, 104, 104])
    # both tables have state counts (183, 81, 48): values -1, 15, 76 (mean exactly 15) fall
    # in states 0, 1, 2 with std_factor 0.5
    X = np.array([-1.0, 15.0, 76.0])[codes_of([first, second], [104, 104, 104])]
    for j, table in enumerate([first, second]):
        assert table_of(mean_std_states(X[:, j].tolist(), 0.5), y.tolist(), 3, 3) == table

    selector = make_selector("chi2", {"std_factor": 0.5}).fit(X, y)
    assert selector.scores_[0] == selector.scores_[1] == float(Fraction(53270, 1647))
    assert selector.ranking_.tolist() == [0, 1]


@st.composite
def permuted_features(draw):
    """Balanced classes, a few random base tables, and features that are base tables with their
    states and classes permuted (equal exact statistics, different floating-point sums)."""
    n_classes = draw(st.integers(2, 4))
    per_class = draw(st.integers(3, 40))
    bases = []
    for _ in range(draw(st.integers(1, 3))):
        columns = []
        for _ in range(n_classes):
            a = draw(st.integers(0, per_class))
            b = draw(st.integers(0, per_class - a))
            columns.append([a, b, per_class - a - b])
        bases.append(np.array(columns).T)
    tables = []
    for _ in range(draw(st.integers(2, 8))):
        base = bases[draw(st.integers(0, len(bases) - 1))]
        rows = draw(st.permutations(range(3)))
        cols = draw(st.permutations(range(n_classes)))
        tables.append(base[list(rows)][:, list(cols)].tolist())
    return tables, [per_class] * n_classes


@settings(max_examples=150, deadline=None)
@given(permuted_features())
def test_features_with_equal_exact_chi2_rank_by_index(case):
    tables, class_sizes = case
    y = labels(class_sizes)
    scores = chi2_from_counts(contingency(codes_of(tables, class_sizes), 3, y, len(class_sizes)))
    position = np.argsort(rank_by_scores(scores))
    exact = [exact_chi2(t) for t in tables]
    for i, j in itertools.combinations(range(len(tables)), 2):
        if exact[i] == exact[j]:
            assert scores[i] == scores[j], (tables[i], tables[j])
            assert position[i] < position[j]
        elif exact[i] > exact[j]:
            assert scores[i] >= scores[j]
        else:
            assert scores[i] <= scores[j]


# ----------------------------------------------------------------------------- infogain
def test_permuted_states_and_classes_give_identical_infogain_bits():
    table = np.array(AR_TABLE)
    cycle = np.r_[1:10, 0]
    tables = [table, table[::-1], table[:, cycle], table[::-1][:, ::-1]]
    class_sizes = [13] * 10
    ig = information_gain(codes_of([t.tolist() for t in tables], class_sizes), 3, labels(class_sizes), 10)
    assert ig.tolist() == [ig[0]] * 4
    assert rank_by_scores(ig).tolist() == [0, 1, 2, 3]


def test_different_tables_with_exactly_equal_infogain_score_equal():
    assert exact_info_key(GLIOMA_A) == exact_info_key(GLIOMA_B)
    class_sizes = [14, 7, 14, 15]
    codes = codes_of([GLIOMA_B, GLIOMA_A, GLIOMA_B], class_sizes)
    ig = information_gain(codes, 3, labels(class_sizes), 4)
    assert ig[0] == ig[1] == ig[2]
    assert rank_by_scores(ig).tolist() == [0, 1, 2]


def test_pure_states_of_different_sizes_score_equal():
    # ALLAML tables (classes of 47 and 25): whichever way the 11 class-0 samples outside the
    # middle state split into pure states, those states leave no uncertainty, so the four tables
    # have exactly the same information gain; in floating point they gave two different values
    tables = [[[0, 0], [36, 25], [11, 0]], [[1, 0], [36, 25], [10, 0]], [[3, 0], [36, 25], [8, 0]],
              [[4, 0], [36, 25], [7, 0]]]
    assert len({exact_info_key(t) for t in tables}) == 1
    ig = information_gain(codes_of(tables, [47, 25]), 3, labels([47, 25]), 2)
    assert ig.tolist() == [ig[0]] * 4


@settings(max_examples=150, deadline=None)
@given(permuted_features())
def test_features_with_equal_exact_infogain_rank_by_index(case):
    tables, class_sizes = case
    y = labels(class_sizes)
    ig = information_gain(codes_of(tables, class_sizes), 3, y, len(class_sizes))
    position = np.argsort(rank_by_scores(ig))
    exact = [exact_info_key(t) for t in tables]
    for i, j in itertools.combinations(range(len(tables)), 2):
        if exact[i] == exact[j]:
            assert ig[i] == ig[j], (tables[i], tables[j])
            assert position[i] < position[j]
