"""`fsbench check` and the paper-reproduction layout: a rerun subset equals the committed rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fsbench.configuration.parse import parse_experiment
from fsbench.engine.runner import run_experiment
from fsbench.evaluation.protocol import outer_splits
from fsbench.papers import check as check_mod
from fsbench.papers.check import check_paper, compare_rows, subset_experiment
from fsbench.papers.reproduce import write_paper_tables


class _Spec:
    def __init__(self, name, n_features):
        self.name, self.n_features = name, n_features


def _experiment(kind: str = "kfold", selectors: str = "[fisher, random]"):
    protocol = ("{kind: kfold, n_splits: 3, n_repeats: 3}" if kind == "kfold"
                else "{kind: holdout, train_size: 0.5, n_trials: 3}")
    text = f"""
name: rfs
seed: 5
datasets: [digits]
protocol: {protocol}
selectors: {selectors}
classifier: {{name: linear_svm, C: 1}}
n_features: [4, 20]
"""
    return parse_experiment(text, "rfs.yaml", dataset_resolver=lambda n: _Spec("digits", 64))


@pytest.mark.parametrize("kind", ["kfold", "holdout"])
def test_the_subset_has_exactly_the_splits_of_the_full_protocol(kind):
    from sklearn.datasets import load_digits

    y = load_digits().target
    full = _experiment(kind)
    sub = subset_experiment(full, ("digits", "glioma"), 2)
    assert sub.datasets == ("digits",)
    big = outer_splits(y, full.protocol, full.seed, "digits")
    small = outer_splits(y, sub.protocol, sub.seed, "digits")
    assert len(small) == len(big) * 2 // 3
    for a, b in zip(small, big, strict=False):
        assert (a.repeat, a.fold) == (b.repeat, b.fold)
        assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)


def _frame(acc):
    return pd.DataFrame({"dataset": ["d"] * 2, "repeat": [0, 0], "fold": [0, 0], "selector": ["s"] * 2,
                         "k": [1, 2], "accuracy": acc, "n_correct": [1, 2], "params": ["{}", "{}"]})


def test_compare_rows_names_every_kind_of_difference():
    assert compare_rows(_frame([0.5, 0.75]), _frame([0.5, 0.75])) == []
    problems = compare_rows(_frame([0.5, 0.75]), _frame([0.5, 0.7500001]))
    assert len(problems) == 1 and "'accuracy'" in problems[0] and "k=2" in problems[0]
    fewer = _frame([0.5, 0.75]).iloc[:1]
    assert "no committed counterpart" in compare_rows(_frame([0.5, 0.75]), fewer)[0]
    renamed = _frame([0.5, 0.75]).assign(params=['{"C": 1}', "{}"])
    assert "'params'" in compare_rows(renamed, _frame([0.5, 0.75]))[0]


def test_rows_lacking_the_count_columns_fail_and_counts_are_compared_exactly():
    counts = {"class_support": ["1;1", "1;1"], "class_predicted": ["2;0", "1;1"], "class_correct": ["1;0", "1;1"],
              "diag_classifier_unconverged": [0, 0]}
    rerun, old = _frame([0.5, 1.0]).assign(**counts), _frame([0.5, 1.0])
    problems = compare_rows(rerun, old, [])
    assert len(problems) == 4 and all("lack the column" in p for p in problems)
    assert compare_rows(rerun, rerun, []) == []
    swapped = rerun.assign(class_predicted=["1;1", "1;1"], class_correct=["0;1", "1;1"])
    problems = compare_rows(swapped, rerun, [])
    assert any("'class_correct'" in p for p in problems) and any("'class_predicted'" in p for p in problems)


def test_check_passes_on_its_own_results_and_fails_on_tampering(tmp_path, monkeypatch):
    monkeypatch.setitem(check_mod.CHECK_SUBSETS, "rfs", (("digits",), 1))
    exp = _experiment()
    committed = tmp_path / "committed"
    run_experiment(exp, committed, n_jobs=1)
    write_paper_tables("rfs", committed)

    result = check_paper("rfs", exp, committed, tmp_path / "rerun1", n_jobs=2)
    assert result.ok, result.problems
    assert result.n_rows == 3 * 2 * 2  # 3 folds of the first repeat x 2 selectors x 2 k

    runs = pd.read_csv(committed / "runs.csv.gz")
    first = runs.index[(runs["repeat"] == 0) & (runs["selector"] == "fisher")][0]
    runs.loc[first, "accuracy"] += 0.01
    runs.to_csv(committed / "runs.csv.gz", index=False)
    result = check_paper("rfs", exp, committed, tmp_path / "rerun2", n_jobs=1)
    assert not result.ok
    assert any("'accuracy'" in p for p in result.problems)
    assert not any("table" in p for p in result.problems)

    (committed / "table1.md").write_text("edited by hand\n")
    result = check_paper("rfs", exp, committed, tmp_path / "rerun3", n_jobs=1)
    assert any("differs from the table regenerated" in p for p in result.problems)


def test_check_fails_when_a_reproducing_cell_stops_reproducing(tmp_path, monkeypatch):
    from fsbench.papers import RFS, PrintedCell, PrintedTable
    from fsbench.report.tables import per_repeat

    monkeypatch.setitem(check_mod.CHECK_SUBSETS, "rfs", (("digits",), 3))
    exp = _experiment()
    committed = tmp_path / "committed"
    run_experiment(exp, committed, n_jobs=1)
    # committed rows made 5 points better than the truth ...
    tampered = pd.read_csv(committed / "runs.csv.gz")
    hit = (tampered["selector"] == "fisher") & (tampered["k"] == 20)
    bump = np.minimum(np.round(0.05 * tampered["n_test"]), tampered["n_test"] - tampered["n_correct"])
    tampered.loc[hit, "n_correct"] += bump[hit]
    tampered.loc[hit, "accuracy"] = tampered["n_correct"] / tampered["n_test"]
    tampered.to_csv(committed / "runs.csv.gz", index=False)
    reps = per_repeat(tampered[hit])
    printed = 100 * reps["accuracy"].mean()
    # ... and a printed value equal to them: in the commit, the cell reproduces (z = 0)
    table = PrintedTable(RFS, "Table 1", "unit", (("digits", "DIGITS"),), (("fisher", "FS"),),
                         (PrintedCell("digits", "fisher", 20, printed),))
    monkeypatch.setattr("fsbench.papers.TABLES", {"rfs": (table,)})
    monkeypatch.setattr("fsbench.papers.reproduce.TABLES", {"rfs": (table,)})
    write_paper_tables("rfs", committed)
    result = check_paper("rfs", exp, committed, tmp_path / "rerun", n_jobs=1)
    assert result.reproducing == 1
    assert any("reproduced (z = 0.00) and no longer does" in p for p in result.problems), result.problems


def test_collect_rewrites_runs_from_the_finished_tasks(tmp_path):
    from fsbench.storage.runs import collect_runs
    from fsbench.storage.task_files import finished_tasks, task_path

    exp = _experiment("holdout")
    out = tmp_path / "run"
    full = run_experiment(exp, out, n_jobs=1).runs
    assert collect_runs(tmp_path / "empty") is None
    lost = sorted(finished_tasks(out))[0]
    task_path(out, lost).unlink()  # as if the run had been interrupted before this task
    partial = collect_runs(out)
    key = ["dataset", "repeat", "fold", "selector", "k"]
    assert len(partial) == len(full) - 2  # one task = 2 values of k
    merged = partial.merge(full, on=key, suffixes=("", "_full"))
    assert len(merged) == len(partial)
    assert np.array_equal(merged["accuracy"], merged["accuracy_full"])


def test_collect_leaves_the_runs_of_a_finished_run_as_written(tmp_path):
    from fsbench.storage.runs import RUNS_FILE, collect_runs

    out = tmp_path / "run"
    # the config's selector order is not the alphabetical order of the task files
    run_experiment(_experiment("holdout", "[random, fisher]"), out, n_jobs=1)
    written = (out / RUNS_FILE).read_bytes()
    assert written[:2] == b"\x1f\x8b" and written[4:8] == bytes(4)  # gzip without a timestamp
    collect_runs(out)
    assert (out / RUNS_FILE).read_bytes() == written  # the run's row order, not the task files' order


def test_missing_values_on_both_sides_are_equal_but_not_against_a_value():
    def frame(diag):
        return _frame([0.5, 0.75]).assign(diag_converged=diag)

    assert compare_rows(frame([np.nan, 1.0]), frame([np.nan, 1.0])) == []
    assert "'diag_converged'" in compare_rows(frame([np.nan, 1.0]), frame([1.0, 1.0]))[0]


def test_diagnostics_are_compared_within_round_off_and_results_exactly():
    base = {"dataset": "d", "repeat": 0, "fold": 0, "selector": "s", "k": 1, "n_correct": 3, "accuracy": 0.5,
            "diag_duality_gap": 5.004467352081252e-09, "diag_solver": "ip"}
    committed = pd.DataFrame([base])
    # measured across two machines with the same code and libraries: a gap moved in its 8th digit
    drift = pd.DataFrame([{**base, "diag_duality_gap": 5.0044669647811464e-09}])
    assert compare_rows(drift, committed) == []
    floor = {**base, "diag_duality_gap": 4.3647600944042334e-11}  # a gap at the noise floor
    assert compare_rows(pd.DataFrame([{**floor, "diag_duality_gap": 3.198661608677808e-11}]),
                        pd.DataFrame([floor])) == []
    for changed in ({"diag_duality_gap": 5.0e-07}, {"diag_solver": "cd"}, {"n_correct": 4}):
        problems = compare_rows(pd.DataFrame([{**base, **changed}]), committed)
        assert len(problems) == 1 and repr(next(iter(changed))) in problems[0], problems


def test_a_row_decided_by_rounding_is_reported_not_failed():
    """A count that differs where the rerun's top k was decided by two scores equal to rounding is
    listed as decided by rounding; the same difference with a clear margin, or a difference in
    anything but the outcome, still fails."""
    committed = _frame([0.5, 0.75])
    rerun = _frame([0.5, 1.0]).assign(n_correct=[1, 3], ranking_margin=[0.3, 2e-16])
    rounding: list[str] = []
    assert compare_rows(rerun, committed, rounding) == []
    assert len(rounding) == 1 and "k=2" in rounding[0] and "3 correct, committed 2" in rounding[0]
    assert compare_rows(rerun, committed) != []  # callers that take no excuse see the difference
    clear = rerun.assign(ranking_margin=[0.3, 1e-6])
    assert {"'n_correct'", "'accuracy'"} <= {p.split(" differ in ")[1].split(" ")[0] for p in
                                             compare_rows(clear, committed, [])}
    other = rerun.assign(params=["{}", '{"C": 2}'])
    assert any("'params'" in p for p in compare_rows(other, committed, []))


def test_ranking_margins_by_hand():
    from fsbench.engine.tasks import ranking_margins

    scores = np.array([1.0, 4.0, 2.0, 2.0 - 2.0**-51, 0.0])
    ranking = np.array([1, 2, 3, 0, 4])
    got = ranking_margins(scores, ranking, [1, 2, 3, 4, 5])
    assert got[0] == 0.5                      # (4 - 2) / 4
    assert got[1] == 2.0**-52                 # two scores one unit apart at 2
    assert got[2] == (2.0 - 2.0**-51 - 1.0) / (2.0 - 2.0**-51)
    assert got[3] == 1.0                      # (1 - 0) / 1
    assert np.isnan(got[4])                   # k = d: nothing below it
    assert np.isnan(ranking_margins(scores, ranking[::-1], [1])[0])  # not the scores' order
    assert np.isnan(ranking_margins(None, ranking, [1])[0])
    assert ranking_margins(np.zeros(3), np.arange(3), [1]) == [0.0]
