"""A paper's table regenerated from our runs, beside the printed values, and judged.

The reproduction rule, fixed here and stated in every report. What a paper printed is one
estimate with its own noise; a cell reproduces when the printed value lies within two
standard errors of ours, the standard error matching what was printed:

- a mean over n random splits with its std (DSO-FS): the difference of the two means,
  se = sqrt(sd_ours^2 / R + sd_printed^2 / n);
- a single split (SL2P): the spread of single-split accuracies, se = sd_ours over our R splits;
- a k-fold cross-validated accuracy (RFS): the spread of cross-validated accuracies,
  se = sd_ours over our R repetitions of the k-fold CV.

For every cell we report the delta (ours - printed, in points), z = delta / se, and the delta
in test samples (delta / 100 x the size of one test set; for k-fold CV the whole dataset), and
count the cells with |z| <= 2 and those within one test sample. A cell with results from a
single repetition has no spread of ours, hence no standard error: it is reported with its delta
but not judged, and the share within 2 se is over the judged cells only.

A printed cell is one classifier's accuracy: results that record several classifiers (the
papers' configs have one) are compared for the classifier given, and refused without one.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np
import pandas as pd

from fsbench.papers import PrintedTable
from fsbench.report.tables import one_classifier, per_repeat

Z_REPRODUCES = 2.0
NOT_JUDGED = "one repetition: not judged"


def standard_error(estimate: str, ours_std: float, n_repeats: int, printed_std: float | None, n_printed: int) -> float:
    """The standard error the reproduction rule uses for one cell (see the module docstring)."""
    if estimate == "mean_of_splits":
        printed_var = (printed_std or 0.0) ** 2 / n_printed
        return math.sqrt(ours_std**2 / n_repeats + printed_var)
    return ours_std


def paper_runs(runs: pd.DataFrame, classifier: str | None = None) -> pd.DataFrame:
    """The rows a paper table compares: ``classifier``'s, or all when the results record one
    classifier at most (FsbenchError when they hold several and none is given)."""
    return one_classifier(runs, classifier, why="a printed cell is one classifier's accuracy")


def compare_table(table: PrintedTable, runs: pd.DataFrame | None, planned: Collection[str] = (),
                  unavailable: Collection[str] | None = None, classifier: str | None = None) -> pd.DataFrame:
    """One row per printed cell: printed, ours, delta, z, delta in samples, reproduces, notes.

    A dataset without results is noted as an unfinished run when it is in ``planned``, as not
    available here when it is in ``unavailable`` (or that is None: not known), else as not in
    the configuration that produced ``runs``. ``classifier`` keeps that classifier's rows
    (:func:`paper_runs`).
    """
    if runs is not None:
        runs = paper_runs(runs, classifier)
    rows = []
    reps = per_repeat(runs) if runs is not None and len(runs) else None
    for cell in table.cells:
        row = {"table": table.name, "dataset": cell.dataset, "method": cell.method, "k": cell.k,
               "printed": cell.value, "printed_std": cell.std, "ours": np.nan, "ours_std": np.nan,
               "n_repeats": 0, "delta": np.nan, "se": np.nan, "z": np.nan, "delta_samples": np.nan,
               "reproduces": None, "within_one_sample": None, "status": "not run", "note": ""}
        if reps is None or cell.dataset not in set(reps["dataset"]):
            if cell.dataset in planned:
                row["note"] = "run not finished"
            elif unavailable is None or cell.dataset in unavailable:
                row["note"] = "dataset not available"
            else:
                row["note"] = "not in this configuration"
            rows.append(row)
            continue
        mine = reps[(reps["dataset"] == cell.dataset) & (reps["selector"] == cell.method) & (reps["k"] == cell.k)]
        if mine.empty:
            row["note"] = "method or k not run"
            rows.append(row)
            continue
        acc = 100.0 * mine["accuracy"].to_numpy()
        n_test = _test_size(runs, cell.dataset, cell.method, cell.k)
        delta = float(acc.mean() - cell.value)
        row.update(ours=float(acc.mean()), n_repeats=int(acc.size), delta=delta,
                   delta_samples=delta / 100.0 * n_test, status="ok")
        row["within_one_sample"] = bool(abs(row["delta_samples"]) <= 1.0 + 1e-9)
        notes = []
        if acc.size > 1:
            ours_std = float(np.std(acc, ddof=1))
            se = standard_error(table.paper.estimate, ours_std, acc.size, cell.std, table.paper.n_trials)
            z = delta / se if se > 0 else (0.0 if delta == 0 else math.copysign(math.inf, delta))
            row.update(ours_std=ours_std, se=se, z=z, reproduces=bool(abs(z) <= Z_REPRODUCES))
        else:
            notes.append(NOT_JUDGED)
        ill = ill_posed(runs, cell.dataset, cell.method)
        if ill:
            row["status"] = "ill-posed"
            notes.insert(0, ill)
        inexact = _inexact_e_steps(runs, cell.dataset, cell.method)
        if inexact:
            notes.append(inexact)
        row["note"] = "; ".join(notes)
        rows.append(row)
    table_rows = pd.DataFrame(rows)
    table_rows["not_worse"] = _not_worse_than_best(table_rows, runs)
    return table_rows


def _not_worse_than_best(cells: pd.DataFrame, runs: pd.DataFrame | None) -> list[bool | None]:
    """Per cell: True for the best mean of its (dataset, k) row and for every method not
    significantly worse than it (corrected resampled t-test over the outer splits, two-sided
    p >= 0.05, :mod:`fsbench.papers.claims`); False for the others; None without results or
    with fewer than two splits."""
    from fsbench.papers.claims import ALPHA, corrected_pvalue, split_accuracies, test_fraction

    out: list[bool | None] = [None] * len(cells)
    if runs is None or cells.empty or not {"fold", "n_train"} <= set(runs.columns):
        return out
    for (dataset, k), part in cells[cells["status"] != "not run"].groupby(["dataset", "k"], sort=False):
        best = part.loc[part["ours"].idxmax(), "method"]
        mine = runs[(runs["dataset"] == dataset) & (runs["k"] == k) & runs["selector"].isin(part["method"])]
        splits = split_accuracies(mine)
        if len(splits) < 2 or best not in splits:
            continue
        rho = test_fraction(mine)
        for index, method in part["method"].items():
            if method == best:
                out[cells.index.get_loc(index)] = True
            elif method in splits:
                p = corrected_pvalue(splits[best].to_numpy(), splits[method].to_numpy(), rho)
                out[cells.index.get_loc(index)] = bool(p >= ALPHA)
    return out


def _test_size(runs: pd.DataFrame, dataset: str, method: str, k: int) -> float:
    """Samples behind one printed accuracy: one test set, or all folds of one CV repetition."""
    mine = runs[(runs["dataset"] == dataset) & (runs["selector"] == method) & (runs["k"] == k)]
    return float(mine.groupby("repeat")["n_test"].sum().mean())


def _fits(runs: pd.DataFrame, dataset: str, method: str) -> pd.DataFrame:
    """One row per fit (split) of ``method`` on ``dataset``: where its diagnostics are read."""
    return runs[(runs["dataset"] == dataset) & (runs["selector"] == method)].drop_duplicates(["repeat", "fold"])


def ill_posed(runs: pd.DataFrame, dataset: str, method: str) -> str:
    """Where ``method``'s fits on ``dataset`` were ill-posed (from the diag_ columns): e.g. "W
    collapsed in 3/3 splits"; empty when none was."""
    mine = _fits(runs, dataset, method)
    notes = []
    for column, text in (("diag_feasible", "final W violates margins"), ("diag_collapsed", "W collapsed"),
                         ("diag_all_tied", "all scores tied")):
        if column not in mine:
            continue
        flags = mine[column].astype("boolean")
        bad = int((~flags).sum()) if column == "diag_feasible" else int(flags.sum())
        if bad:
            notes.append(f"{text} in {bad}/{len(mine)} splits")
    return "; ".join(notes)


def _inexact_e_steps(runs: pd.DataFrame, dataset: str, method: str) -> str:
    """DSO-FS fits whose least-squares E steps were left above their optimum (a caveat on the
    cell, not ill-posedness: the iterates are approximate, the problem itself is posed)."""
    if "diag_inexact_e_columns" not in runs:
        return ""
    mine = _fits(runs, dataset, method)
    bad = int((mine["diag_inexact_e_columns"].fillna(0) > 0).sum())
    return f"approximate E steps in {bad}/{len(mine)} splits" if bad else ""


def format_paper_table(table: PrintedTable, comparison: pd.DataFrame, fmt: str = "markdown") -> str:
    """Each cell "ours ± sd (printed, delta)"; the best per row bold among ours, starred among printed."""
    if fmt == "csv":
        return comparison.to_csv(index=False, float_format="%.4f")
    lines = []
    for k in table.ks:
        part = comparison[comparison["k"] == k]
        header = ["dataset"] + [title for _, title in table.column_titles]
        body = []
        for dataset, title in table.row_titles:
            row = part[part["dataset"] == dataset].set_index("method")
            best_ours = row["ours"].max() if row["ours"].notna().any() else None
            best_printed = row["printed"].max()
            cells = [title]
            for method, _ in table.column_titles:
                c = row.loc[method]
                printed = f"{c.printed:g}" + ("*" if c.printed == best_printed else "")
                if c.status == "not run":
                    cells.append(f"not run: {c.note} ({printed})")
                    continue
                ours = f"{c.ours:.2f}" + (f" ± {c.ours_std:.2f}" if not pd.isna(c.ours_std) else "")
                if best_ours is not None and c.ours == best_ours:
                    ours = f"**{ours}**" if fmt == "markdown" else rf"\textbf{{{ours}}}"
                elif c.get("not_worse") is True:
                    ours += " ≈"
                text = f"{ours} ({printed}, {c.delta:+.2f})"
                if c.status == "ill-posed":
                    text += f" [ill-posed: {c.note}]"
                elif c.note:
                    text += f" [{c.note}]"
                cells.append(text)
            body.append(cells)
        caption = (f"{table.paper.key} {table.name}, top {k} features: ours mean ± sd over our repetitions "
                   "(printed, ours - printed); bold: our best in the row; ≈: not significantly worse than it "
                   "(corrected resampled t-test over the outer splits, p >= 0.05); *: the paper's best in the row.")
        if fmt == "markdown":
            lines.append(caption + "\n")
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "---|" * len(header))
            lines += ["| " + " | ".join(cells) + " |" for cells in body]
            lines.append("")
        else:
            def tex(s: str) -> str:
                return s.replace("_", r"\_").replace("%", r"\%").replace("±", r"$\pm$").replace("≈", r"$\approx$")

            lines += [r"\begin{table}[t]", r"\centering", rf"\caption{{{tex(caption)}}}",
                      r"\resizebox{\linewidth}{!}{\begin{tabular}{l" + "c" * (len(header) - 1) + "}",
                      r"\toprule", " & ".join(tex(h) for h in header) + r" \\", r"\midrule"]
            lines += [" & ".join(tex(c) for c in cells) + r" \\" for cells in body]
            lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}", ""]
    return "\n".join(lines)


def reproduction_summary(comparison: pd.DataFrame) -> dict[str, float | int]:
    """Share of the judged cells that reproduce (|z| <= 2), and of the cells that ran which lie
    within one test sample (a cell from a single repetition ran but is not judged)."""
    ran = comparison[comparison["status"] != "not run"]
    judged = ran[ran["reproduces"].notna()]
    n, n_judged = len(ran), len(judged)
    return {"cells": len(comparison), "ran": n, "judged": n_judged,
            "reproduce": int(judged["reproduces"].astype(bool).sum()),
            "share_reproduce": float(judged["reproduces"].astype(bool).mean()) if n_judged else float("nan"),
            "within_one_sample": int(ran["within_one_sample"].astype(bool).sum()),
            "share_within_one_sample": float(ran["within_one_sample"].astype(bool).mean()) if n else float("nan")}
