"""The pure parts of benchmarks/bench_scale.py (no timings): the growth exponent against
numpy.polyfit, the skip and extrapolation rule on hand-worked numbers, the table cells and the
CSV read back with its types."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(scope="module")
def bench():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scale.py"
    spec = importlib.util.spec_from_file_location("bench_scale", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_growth_exponent_is_the_least_squares_slope_of_numpy_polyfit(bench):
    rng = np.random.default_rng(3)
    sizes = np.array([100, 300, 1_000, 3_000, 10_000, 30_000], dtype=float)
    times = 2e-3 * sizes**1.7 * np.exp(rng.normal(scale=0.2, size=sizes.size))
    assert bench.growth_exponent(sizes, times) == pytest.approx(np.polyfit(np.log(sizes), np.log(times), 1)[0],
                                                                rel=1e-12)
    # the noiseless power law gives its exponent
    assert bench.growth_exponent(sizes, 3.0 * sizes**2.5, min_time=0) == pytest.approx(2.5, rel=1e-12)


def test_growth_exponent_leaves_out_short_and_missing_times(bench):
    sizes = [100, 300, 1_000, 3_000, 10_000]
    times = [0.01, 0.04, 0.2, 1.9, math.nan]  # the first two below 0.05 s, the last not measured
    keep = slice(2, 4)
    expected = np.polyfit(np.log(sizes[keep]), np.log(times[keep]), 1)[0]
    assert bench.growth_exponent(sizes, times) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(math.log(1.9 / 0.2) / math.log(3), rel=1e-12)
    assert math.isnan(bench.growth_exponent(sizes[:3], times[:3]))  # one time >= 0.05 s
    assert math.isnan(bench.growth_exponent([100, 100], [1.0, 2.0]))  # one size


def _points(bench, rows):
    return [bench.Point(n, d, t, status) for n, d, t, status in rows]


def test_plan_runs_until_the_extrapolation_passes_twice_the_cap(bench):
    # 1 s at n = 100 and 9 s at n = 300: exponent 2; n = 1,000 predicted 9 (10/3)^2 = 100 s: run
    done = _points(bench, [(100, 1000, 1.0, "ok"), (300, 1000, 9.0, "ok")])
    assert bench.plan_size(done, 1000, 1000, cap_s=300)[0] == "run"
    # measured 100 s: exponent log(100/9)/log(10/3) = 2; n = 3,000: 100 * 3^2 = 900 s > 600 s
    done += _points(bench, [(1000, 1000, 100.0, "ok")])
    status, predicted, note = bench.plan_size(done, 3000, 1000, cap_s=300)
    assert status == "predicted_beyond_cap"
    assert predicted == pytest.approx(900.0, rel=1e-12)
    assert "900" in note
    # a cap of 450 s: 900 s is not more than twice it
    assert bench.plan_size(done, 3000, 1000, cap_s=450)[0] == "run"
    # the sizes after a predicted one: extrapolated from the same two measurements, 100 * 10^2
    done += _points(bench, [(3000, 1000, math.nan, "predicted_beyond_cap")])
    status, predicted, _ = bench.plan_size(done, 10000, 1000, cap_s=300)
    assert (status, predicted) == ("predicted_beyond_cap", pytest.approx(10_000.0, rel=1e-12))


def test_plan_does_not_extrapolate_from_short_times_or_other_axes(bench):
    # 0.01 s then 30 s: exponent 7.3, but the first time is below 0.05 s: run
    done = _points(bench, [(100, 1000, 0.01, "ok"), (300, 1000, 30.0, "ok")])
    assert bench.plan_size(done, 1000, 1000, cap_s=300)[0] == "run"
    # d axis (n = 200): the n-axis points (d = 1,000, n != 200) are not its sizes
    done = _points(bench, [(300, 1000, 1.0, "ok"), (1000, 1000, 100.0, "ok"), (200, 1000, 1.0, "ok")])
    assert bench.plan_size(done, 200, 10_000, cap_s=300)[0] == "run"
    # with two d-axis points: exponent log(50)/log(10) = 1.699, d = 100,000: 50 * 10^1.699 = 2,500 s
    done += _points(bench, [(200, 10_000, 50.0, "ok")])
    status, predicted, _ = bench.plan_size(done, 200, 100_000, cap_s=300)
    assert (status, predicted) == ("predicted_beyond_cap", pytest.approx(2500.0, rel=1e-9))
    # an error between two measured sizes is skipped: the exponent comes from the two measured ones
    done = _points(bench, [(100, 1000, 1.0, "ok"), (300, 1000, math.nan, "error: ValueError: x"),
                           (1000, 1000, 10.0, "ok")])
    status, predicted, _ = bench.plan_size(done, 3000, 1000, cap_s=10)
    assert (status, predicted) == ("predicted_beyond_cap", pytest.approx(10 * 3.0, rel=1e-12))


def test_plan_marks_every_size_dominating_a_capped_one(bench):
    done = _points(bench, [(100, 1000, 2.0, "ok"), (300, 1000, math.nan, "beyond_time_cap")])
    status, predicted, note = bench.plan_size(done, 1000, 1000, cap_s=300)
    assert status == "beyond_time_cap" and math.isnan(predicted) and "300 x 1000" in note
    # n = 200 of the d axis is not at least 300: it runs; n = 300 at any larger d does not
    assert bench.plan_size(done, 200, 10_000, cap_s=300)[0] == "run"
    assert bench.plan_size(done, 300, 10_000, cap_s=300)[0] == "beyond_time_cap"
    # the capped size itself (a resumed run) is not dominated by itself
    assert bench.plan_size(done, 300, 1000, cap_s=300)[0] == "run"
    done = _points(bench, [(200, 10_000, math.nan, "beyond_memory_cap")])
    assert bench.plan_size(done, 200, 100_000, cap_s=300)[0] == "beyond_memory_cap"
    # more samples but fewer features than the capped size: not dominated
    assert bench.plan_size(done, 300, 1000, cap_s=300)[0] == "run"


def _row(**kw):
    base = {"label": "before", "what": "selector", "name": "relieff", "method": "relieff", "pair": "", "axis": "n",
            "n": 100, "d": 1000, "cpu_s": math.nan, "wall_s": math.nan, "peak_mb": math.nan, "base_mb": math.nan,
            "status": "ok", "predicted_s": math.nan, "cap_s": 300.0, "cap_gb": 10.0, "note": "", "load1": 1.5,
            "date": "2026-01-02T03:04:05", "commit": "abc1234"}
    return {**base, **kw}


def test_cells_of_measured_and_capped_sizes(bench):
    assert bench.format_cell(_row(cpu_s=1.234, peak_mb=145.4)) == "1.23 / 145"
    assert bench.format_cell(_row(cpu_s=1234.5, peak_mb=2048.0)) == "1,234 / 2048"
    assert bench.format_cell(_row(cpu_s=0.00123, peak_mb=99.6)) == "1.2e-03 / 100"
    assert bench.format_cell(_row(status="beyond_time_cap")) == "> 300 s"
    assert bench.format_cell(_row(status="beyond_memory_cap")) == "> 10 GB"
    assert bench.format_cell(_row(status="predicted_beyond_cap", predicted_s=1234.4)) == \
        "> cap (predicted 1,234 s)"
    assert bench.format_cell(_row(status="error: ValueError: bad")) == "error"


def test_size_table_puts_capped_cells_in_their_columns(bench):
    df = pd.DataFrame([_row(n=100, cpu_s=0.5, peak_mb=200.0), _row(n=300, status="beyond_time_cap"),
                       _row(n=1000, status="predicted_beyond_cap", predicted_s=5000.0),
                       _row(name="fisher", method="fisher", n=300, cpu_s=0.02, peak_mb=150.0)])
    assert bench.size_table(df, "n") == [
        "| name | n = 100 | n = 300 | n = 1,000 |",
        "|---|---:|---:|---:|",
        "| fisher |  | 0.02 / 150 |  |",
        "| relieff | 0.5 / 200 | > 300 s | > cap (predicted 5,000 s) |",
    ]
    assert bench.size_table(df[df.n == 300], "n", with_method=True) == [
        "| method | name | n = 300 |",
        "|---|---|---:|",
        "| fisher | fisher | 0.02 / 150 |",
        "| relieff | relieff | > 300 s |",
    ]


def test_ratio_uses_the_paired_row_when_the_peer_has_one(bench):
    df = pd.DataFrame([
        _row(name="mim", method="mim", cpu_s=0.5),
        _row(what="paired", name="mim(discretize=none) on prep", method="mim", cpu_s=0.25),
        _row(what="peer", name="peer A", method="mim", pair="mim(discretize=none) on prep", cpu_s=10.0),
        _row(what="peer", name="peer B", method="mim", pair="", cpu_s=10.0),
        _row(what="peer", name="peer C", method="mim", pair="", status="beyond_time_cap"),
        _row(what="peer", name="peer D", method="mim", pair="", status="predicted_beyond_cap", predicted_s=900.0),
        _row(what="peer", name="peer E", method="mim", pair="", n=300, cpu_s=1.0),  # fsbench not measured there
    ])
    got = bench.ratios(df).set_index("peer")
    assert got.ratio.to_dict() == {"peer A": 40.0, "peer B": 20.0, "peer C": 600.0}  # C: cap 300 s / 0.5 s
    assert got.bound.to_dict() == {"peer A": "=", "peer B": "=", "peer C": ">"}


def test_table_written_row_by_row_reads_back_typed(bench, tmp_path):
    path = tmp_path / "scale.csv"
    table = bench.Table(path, resume=False)
    table.append(_row(cpu_s=0.125, wall_s=0.25, peak_mb=180.0, base_mb=170.0))
    table.append(_row(n=300, status="predicted_beyond_cap", predicted_s=900.0, note="predicted 900 s, x"))
    df = bench.load_scale_table(path)
    assert list(df.columns) == list(bench.COLUMNS)
    assert df.n.tolist() == [100, 300] and df.n.dtype == np.int64
    assert df.cpu_s.iloc[0] == 0.125 and math.isnan(df.cpu_s.iloc[1])
    assert df.predicted_s.iloc[1] == 900.0 and df.note.tolist() == ["", "predicted 900 s, x"]
    assert df.pair.tolist() == ["", ""] and df.status.tolist() == ["ok", "predicted_beyond_cap"]
    with pytest.raises(SystemExit, match="--resume"):
        bench.Table(path, resume=False)
    resumed = bench.Table(path, resume=True)
    entry = bench.Entry("selector", "relieff", "relieff")
    assert resumed.find("before", entry, 300, 1000)["status"] == "predicted_beyond_cap"
    assert resumed.find("after", entry, 300, 1000) is None
    assert [p.n for p in resumed.history("before", entry)] == [100, 300]


def test_coverage_counts_statuses_and_lists_the_sizes_reached(bench):
    df = pd.DataFrame([_row(n=100, cpu_s=0.1, peak_mb=1.0), _row(n=300, status="error: ValueError: bad"),
                       _row(axis="d", n=200, d=10_000, status="beyond_time_cap"),
                       _row(axis="d", n=200, d=1_000, cpu_s=0.1, peak_mb=1.0)])
    assert bench.coverage(df) == ("4 rows: 2 ok, 1 beyond_time_cap, 1 error; sizes reached: n 100, 300; "
                                  "d 1,000, 10,000.")
