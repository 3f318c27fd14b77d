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
