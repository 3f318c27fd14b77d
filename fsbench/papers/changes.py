"""What a recomputation changed: two trees of paper results compared row by row and cell by cell.

``fsbench report`` includes ``results/papers/CHANGES.md`` when it exists; :func:`changes_markdown`
writes it from the results before (for example ``git archive`` of the previous commit) and after
a recomputation, so the report says what changed in numbers nobody typed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fsbench.storage.runs import ROW_KEY, RUNS_FILE, load_runs

CHANGES_FILE = "CHANGES.md"
COMPARISON_FILE = "comparison.csv"


def result_dirs(root: Path) -> list[Path]:
    """The results folders of a paper results tree (papers, then variants), relative to ``root``."""
    found = sorted(p.parent.relative_to(root) for p in root.glob(f"*/{RUNS_FILE}"))
    return found + sorted(p.parent.relative_to(root) for p in root.glob(f"variants/*/{RUNS_FILE}"))


def row_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Per selector: rows compared, rows whose test accuracy changed, the largest change (points),
    and rows only one side has."""
    key = ROW_KEY + (["classifier"] if "classifier" in after.columns and "classifier" in before.columns else [])
    merged = before[key + ["accuracy"]].merge(after[key + ["accuracy"]], on=key, how="outer",
                                              suffixes=("_before", "_after"), indicator=True)
    out = []
    for selector, rows in merged.groupby("selector", sort=True):
        both = rows[rows["_merge"] == "both"]
        delta = (both["accuracy_after"] - both["accuracy_before"]).abs() * 100
        out.append({"selector": selector, "rows": len(both), "changed": int((delta > 1e-9).sum()),
                    "max_change": float(delta.max()) if len(delta) else 0.0,
                    "only_before": int((rows["_merge"] == "left_only").sum()),
                    "only_after": int((rows["_merge"] == "right_only").sum())})
    return pd.DataFrame(out)


def count_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """Every row present on both sides whose number of correct test predictions changed: its key,
    ``n_correct`` before and after, the recomputed row's ``ranking_margin`` and ``by_rounding``
    (a margin below :data:`fsbench.papers.check.ROUNDING_MARGIN`: its top k was decided by two
    scores equal to rounding, which the check excuses)."""
    from fsbench.papers.check import ROUNDING_MARGIN

    key = ROW_KEY + (["classifier"] if "classifier" in after.columns and "classifier" in before.columns else [])
    right = after[key + ["n_correct"] + (["ranking_margin"] if "ranking_margin" in after.columns else [])]
    merged = before[key + ["n_correct"]].merge(right, on=key, suffixes=("_before", "_after"))
    changed = merged[merged["n_correct_before"] != merged["n_correct_after"]].copy()
    if "ranking_margin" not in changed.columns:
        changed["ranking_margin"] = np.nan
    changed["by_rounding"] = np.abs(changed["ranking_margin"].to_numpy(float)) < ROUNDING_MARGIN
    return changed.sort_values(key, kind="stable").reset_index(drop=True)


def count_changes_markdown(folders: list[tuple[str, pd.DataFrame, pd.DataFrame]]) -> list[str]:
    """Markdown lines listing :func:`count_changes` of each (name, before, after), row by row."""
    lines = ["| results | dataset | repeat | fold | selector | k | correct before -> after | ranking margin |",
             "|---|---|---|---|---|---|---|---|"]
    for name, before, after in folders:
        for row in count_changes(before, after).itertuples():
            margin = f"{row.ranking_margin:.1e}" + (" (rounding)" if row.by_rounding else "")
            lines.append(f"| {name} | {row.dataset} | {row.repeat} | {row.fold} | {row.selector} | {row.k} | "
                         f"{row.n_correct_before} -> {row.n_correct_after} | {margin} |")
    if len(lines) == 2:
        return ["Every row's number of correct test predictions is unchanged."]
    return ["Rows whose number of correct test predictions changed (a margin below 1e-9 means the "
            "top k was decided by two scores equal to rounding):", "", *lines]


def cell_changes(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The printed cells (comparison.csv) whose value (at the printed two decimals) or verdict changed."""
    key = ["table", "dataset", "method", "k"]
    merged = before.merge(after, on=key, suffixes=("_before", "_after"))
    value_changed = (merged["ours_before"].round(2) != merged["ours_after"].round(2)) & \
        ~(merged["ours_before"].isna() & merged["ours_after"].isna())
    verdict_changed = merged["reproduces_before"].map(_verdict) != merged["reproduces_after"].map(_verdict)
    return merged[value_changed | verdict_changed][
        key + ["printed_before", "ours_before", "ours_after", "z_before", "z_after", "reproduces_before",
               "reproduces_after"]].rename(columns={"printed_before": "printed"})


def changes_markdown(before_root: Path, after_root: Path, reason: str) -> str:
    """The CHANGES.md section: ``reason`` (what was recomputed and why), then per results folder the
    rows that changed, and per paper the printed cells whose value or verdict changed."""
    lines = ["## What changed in the last recomputation", "", reason.strip(), ""]
    rows_table = ["| results | selector | rows compared | accuracy changed | largest change (points) |",
                  "|---|---|---|---|---|"]
    for folder in result_dirs(after_root):
        if not (before_root / folder / RUNS_FILE).is_file():
            continue
        changes = row_changes(load_runs(before_root / folder), load_runs(after_root / folder))
        shown = changes[(changes["changed"] > 0) | (changes["only_before"] + changes["only_after"] > 0)]
        for row in shown.itertuples():
            rows_table.append(f"| {folder.as_posix()} | {row.selector} | {row.rows} | {row.changed} | "
                              f"{row.max_change:.2f} |")
    if len(rows_table) > 2:
        lines += ["Rows whose test accuracy changed (every other selector's rows are identical):", "", *rows_table, ""]
    else:
        lines += ["No row's test accuracy changed.", ""]
    for folder in result_dirs(after_root):
        old, new = before_root / folder / COMPARISON_FILE, after_root / folder / COMPARISON_FILE
        if not (old.is_file() and new.is_file()):
            continue
        cells = cell_changes(pd.read_csv(old), pd.read_csv(new))
        n_before = int(pd.read_csv(old)["reproduces"].fillna(False).astype(bool).sum())
        n_after = int(pd.read_csv(new)["reproduces"].fillna(False).astype(bool).sum())
        lines += [f"### {folder.as_posix()}: {len(cells)} printed cells changed; cells within 2 se "
                  f"{n_before} -> {n_after}", ""]
        if len(cells):
            lines += ["| table | dataset | method | k | printed | ours before | ours after | z before | z after "
                      "| verdict before -> after |", "|---|---|---|---|---|---|---|---|---|---|"]
            for c in cells.itertuples():
                verdict = f"{_verdict(c.reproduces_before)} -> {_verdict(c.reproduces_after)}"
                if _verdict(c.reproduces_before) != _verdict(c.reproduces_after):
                    verdict = f"**{verdict}**"
                lines.append(f"| {c.table} | {c.dataset} | {c.method} | {c.k} | {c.printed:.2f} | "
                             f"{c.ours_before:.2f} | {c.ours_after:.2f} | {_z(c.z_before)} | {_z(c.z_after)} | "
                             f"{verdict} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _verdict(value: object) -> str:
    return "reproduces" if str(value) == "True" else ("no" if str(value) == "False" else "-")


def _z(value: float) -> str:
    return "-" if value is None or not np.isfinite(value) else f"{value:.2f}"
