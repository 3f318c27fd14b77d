"""fsbench.papers.changes: what a recomputation changed, on hand-made before/after results."""

from __future__ import annotations

import gzip

import pandas as pd

from fsbench.papers.changes import cell_changes, changes_markdown, row_changes


def _runs(acc_rfs: list[float]) -> pd.DataFrame:
    rows = []
    for repeat in range(2):
        for selector, accs in (("rfs", acc_rfs), ("fisher", [0.5, 0.6])):
            rows.append({"dataset": "d", "repeat": repeat, "fold": 0, "selector": selector, "k": 10,
                         "accuracy": accs[repeat], "n_correct": 1, "n_test": 2})
    return pd.DataFrame(rows)


def test_rows_that_changed_are_counted_per_selector():
    changes = row_changes(_runs([0.70, 0.80]), _runs([0.70, 0.85])).set_index("selector")
    assert changes.loc["rfs", "changed"] == 1 and abs(changes.loc["rfs", "max_change"] - 5.0) < 1e-9
    assert changes.loc["fisher", "changed"] == 0 and changes.loc["fisher", "rows"] == 2


def test_cells_whose_value_or_verdict_changed():
    base = {"table": "Table 1", "dataset": "d", "k": 10, "printed": 80.0}
    before = pd.DataFrame([{**base, "method": "rfs", "ours": 75.0, "z": -2.5, "reproduces": False},
                           {**base, "method": "fisher", "ours": 79.0, "z": -0.5, "reproduces": True},
                           {**base, "method": "mrmr", "ours": None, "z": None, "reproduces": None}])  # not run
    after = before.copy()
    after.loc[0, ["ours", "z", "reproduces"]] = [78.5, -1.5, True]
    cells = cell_changes(before, after)
    assert list(cells["method"]) == ["rfs"]


def test_changes_markdown_names_folders_selectors_and_verdicts(tmp_path):
    for side, accs in (("before", [0.70, 0.80]), ("after", [0.70, 0.85])):
        folder = tmp_path / side / "rfs"
        folder.mkdir(parents=True)
        (folder / "runs.csv.gz").write_bytes(gzip.compress(_runs(accs).to_csv(index=False).encode()))
        z, ok = (-2.5, False) if side == "before" else (-1.0, True)
        pd.DataFrame([{"table": "Table 1", "dataset": "d", "method": "rfs", "k": 10, "printed": 80.0,
                       "ours": 75.0 if side == "before" else 77.5, "z": z, "reproduces": ok}]).to_csv(
            folder / "comparison.csv", index=False)
    text = changes_markdown(tmp_path / "before", tmp_path / "after", "RFS recomputed.")
    assert "RFS recomputed." in text
    assert "| rfs | rfs | 2 | 1 | 5.00 |" in text
    assert "1 printed cells changed; cells within 2 se 0 -> 1" in text
    assert "**no -> reproduces**" in text


def test_rows_whose_count_changed_are_listed_with_their_margin():
    from fsbench.papers.changes import count_changes, count_changes_markdown

    before = pd.DataFrame([{"dataset": "d", "repeat": r, "fold": 0, "selector": s, "k": 2, "n_correct": 3}
                           for r in range(3) for s in ("fisher", "fstat")])
    after = before.copy()
    after["ranking_margin"] = 0.5
    after.loc[1, "n_correct"] = 4                                   # repeat 0, fstat: a real change
    after.loc[4, ["n_correct", "ranking_margin"]] = [2, 1e-13]      # repeat 2, fisher: decided by rounding
    changed = count_changes(before, after)
    assert [(r.repeat, r.selector, r.n_correct_before, r.n_correct_after, r.by_rounding)
            for r in changed.itertuples()] == [(0, "fstat", 3, 4, False), (2, "fisher", 3, 2, True)]
    lines = count_changes_markdown([("papers/rfs", before, after)])
    assert "| papers/rfs | d | 0 | 0 | fstat | 2 | 3 -> 4 | 5.0e-01 |" in lines
    assert "| papers/rfs | d | 2 | 0 | fisher | 2 | 3 -> 2 | 1.0e-13 (rounding) |" in lines
    assert count_changes_markdown([("x", before, before)]) == [
        "Every row's number of correct test predictions is unchanged."]
