"""The printed tables as data, the forensics of printed values, and the reproduction rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fsbench.papers import DSO_FS_TABLE1, RFS_TABLE1, SL2P_TABLE2, SL2P_TABLE3, TABLES
from fsbench.papers.forensics import consistent_test_sizes, implied_test_sizes
from fsbench.papers.tables import compare_table, reproduction_summary, standard_error

# The RFS paper's printed Average row (DESIGN.md): an independent check of the transcription.
RFS_AVERAGE = {20: [80.09, 81.04, 79.29, 87.09, 85.78, 91.48], 80: [85.81, 87.18, 83.25, 89.10, 87.0, 92.02]}


def test_rfs_table_agrees_with_the_printed_average_row():
    for k, averages in RFS_AVERAGE.items():
        for (method, _), printed in zip(RFS_TABLE1.column_titles, averages, strict=True):
            values = [c.value for c in RFS_TABLE1.cells if c.k == k and c.method == method]
            assert len(values) == 6
            assert np.mean(values) == pytest.approx(printed, abs=0.05)


def test_every_table_is_complete():
    for tables in TABLES.values():
        for table in tables:
            n = len(table.row_titles) * len(table.column_titles) * len(table.ks)
            assert len(table.cells) == n
            assert len({(c.dataset, c.method, c.k) for c in table.cells}) == n
    assert DSO_FS_TABLE1.value("cll-sub-111", "dso", 100).std == 6.60


def test_consistent_test_sizes_by_hand():
    # 2/3 = 66.6667 and 1/3 = 33.3333 are fractions of 3, 6, 9, ... but 50 is not a third
    assert consistent_test_sizes([66.6667, 33.3333], 12) == [3, 6, 9, 12]
    assert consistent_test_sizes([66.6667, 33.3333, 50.0], 12) == [6, 12]


def test_sl2p_printed_values_imply_test_sets_other_than_half():
    sizes = implied_test_sizes([SL2P_TABLE2, SL2P_TABLE3],
                               {"brain-tumor-2": 50, "glioma": 50, "mll": 72, "srbct": 83})
    assert sizes == {"brain-tumor-2": [28], "glioma": [36], "mll": [51], "srbct": [63]}


def _runs(dataset, method, k, accuracies, n_test):
    return pd.DataFrame({"dataset": dataset, "selector": method, "k": k, "repeat": range(len(accuracies)),
                         "fold": 0, "n_test": n_test,
                         "n_correct": [round(a * n_test / 100) for a in accuracies],
                         "accuracy": [round(a * n_test / 100) / n_test for a in accuracies]})


def test_standard_errors_follow_what_was_printed():
    assert standard_error("single_split", 5.0, 10, None, 1) == 5.0
    assert standard_error("cv_mean", 2.0, 10, None, 1) == 2.0
    assert standard_error("mean_of_splits", 3.0, 9, 4.0, 16) == pytest.approx(np.sqrt(1 + 1))


def test_compare_single_split_cell():
    # GLIOMA, SL2P at k = 20 printed 80.5556; our ten splits of 25 test samples
    accs = [80, 72, 88, 76, 84, 80, 72, 88, 76, 84]
    runs = _runs("glioma", "sl2p", 20, accs, 25)
    table = compare_table(SL2P_TABLE2, runs)
    cell = table[(table.dataset == "glioma") & (table.method == "sl2p")].iloc[0]
    sd = np.std(accs, ddof=1)
    assert cell.ours == pytest.approx(80.0) and cell.se == pytest.approx(sd)
    assert cell.z == pytest.approx((80.0 - 80.5556) / sd)
    assert cell.delta_samples == pytest.approx((80.0 - 80.5556) / 100 * 25)
    assert cell.reproduces and cell.within_one_sample
    other = table[(table.dataset == "lung")].iloc[0]
    assert other.status == "not run" and other.note == "dataset not available"
    # a dataset the run plans but has not reached is not "not available"
    pending = compare_table(SL2P_TABLE2, runs, planned=["glioma", "lung"], unavailable=["mll"])
    assert (pending[pending.dataset == "lung"]["note"] == "run not finished").all()
    assert (pending[pending.dataset == "mll"]["note"] == "dataset not available").all()
    assert (pending[pending.dataset == "srbct"]["note"] == "not in this configuration").all()
    summary = reproduction_summary(table)
    assert summary["ran"] == 1 and summary["reproduce"] == 1


def test_a_far_cell_does_not_reproduce():
    runs = _runs("glioma", "sl2p", 20, [50, 52, 48, 50, 50, 52, 48, 50], 25)
    cell = compare_table(SL2P_TABLE2, runs).query("dataset == 'glioma' and method == 'sl2p'").iloc[0]
    assert cell.z < -2 and not cell.reproduces and not cell.within_one_sample


def test_a_single_repetition_is_not_judged():
    # DSO-FS UMIST at k = 100, printed as a mean ± std over 10 splits; one split of ours at 92%
    runs = _runs("umist", "dso", 100, [92.0], 100)
    table = compare_table(DSO_FS_TABLE1, runs)
    cell = table.query("dataset == 'umist' and method == 'dso' and k == 100").iloc[0]
    printed = DSO_FS_TABLE1.value("umist", "dso", 100).value
    assert cell.status == "ok" and cell.n_repeats == 1
    assert cell.delta == pytest.approx(92.0 - printed)
    assert np.isnan(cell.se) and np.isnan(cell.z) and cell.reproduces is None
    assert cell.note == "one repetition: not judged"
    assert cell.within_one_sample == (abs(92.0 - printed) <= 1.0)
    summary = reproduction_summary(table)
    assert summary["ran"] == 1 and summary["judged"] == 0 and summary["reproduce"] == 0
    assert np.isnan(summary["share_reproduce"])
    # a second repetition makes it judgeable
    two = compare_table(DSO_FS_TABLE1, _runs("umist", "dso", 100, [92.0, 90.0], 100))
    assert reproduction_summary(two)["judged"] == 1


def test_inexact_e_steps_are_a_caveat_not_ill_posedness():
    # two DSO-FS splits on UMIST, one of them with E-step columns left above their optimum
    runs = _runs("umist", "dso", 100, [92.0, 90.0], 100).assign(
        diag_inexact_e_columns=[0, 3], diag_feasible=True, diag_collapsed=False)
    cell = compare_table(DSO_FS_TABLE1, runs).query("dataset == 'umist' and method == 'dso' and k == 100").iloc[0]
    assert cell.status == "ok"
    assert cell.note == "approximate E steps in 1/2 splits"
    clean = compare_table(DSO_FS_TABLE1, runs.assign(diag_inexact_e_columns=0))
    assert clean.query("dataset == 'umist' and method == 'dso' and k == 100").iloc[0].note == ""
