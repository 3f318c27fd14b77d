"""``results/papers/REPORT.md``: every paper's reproduction, generated from the committed results.

Nothing in the report is typed by hand: the printed values come from :mod:`fsbench.papers`,
ours from each results directory's ``runs.csv.gz``, the protocol text from the leading comment
block of each config, the cost from ``runlog.jsonl`` and the ``task_seconds`` column. The
output is deterministic (fixed order, fixed float formats), so a diff of REPORT.md shows what
changed in the results and nothing else.

Partial results are used as they are and labelled: only complete repetitions (every fold of
every selector of the config) enter the tables, the claims and the variant comparisons, and
the cost section lists what is present against what the config plans. A results directory
without ``runs.csv.gz`` (a run still in progress) is read from its per-task files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from fsbench.errors import FsbenchError
from fsbench.papers import PAPERS, TABLES, PrintedTable
from fsbench.papers.changes import CHANGES_FILE
from fsbench.papers.reproduce import Layout
from fsbench.report.figures import per_p_curves
from fsbench.report.paper import compare_table, format_paper_table, ill_posed, reproduction_summary
from fsbench.store import (
    COLUMNS,
    CONFIG_FILE,
    ROW_KEY,
    RUNS_FILE,
    TASK_KEY,
    DamagedTaskFile,
    atomic_write_text,
    finished_tasks,
    load_runs,
    read_runlog,
    read_task,
)

#: the method each paper proposes (SL2P's paper proposes SL21 and its generalisation SL2P)
PROPOSED: dict[str, tuple[str, ...]] = {"rfs": ("rfs",), "dso-fs": ("dso",), "sl2p": ("sl2p", "sl21")}
#: methods a proposed method is not held against (both are the SL2P paper's own)
NOT_COMPARED: dict[str, tuple[str, ...]] = {"sl21": ("sl2p",)}
TITLES = {"rfs": "RFS (Nie et al., NIPS 2010)", "dso-fs": "DSO-FS (Peng & Fan, IJCAI 2016)",
          "sl2p": "SL21 / SL2P (Xu, Nie & Han, IJCAI 2017)"}
FIGURES = (("curves", "accuracy vs number of selected features"),
           ("accuracy_per_p", "accuracy vs k for each fixed p"),
           ("objective", "objective per iteration"))
ALPHA = 0.05
REPORT_FILE = "REPORT.md"


# ----------------------------------------------------------------------------- formatting
def _num(value: Any, fmt: str = ".2f", signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return format(value, ("+" if signed else "") + fmt)


def _pvalue(p: float) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "n/a"


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _hours(seconds: float) -> str:
    return f"{seconds:.0f} s ({seconds / 3600:.2f} h)"


# ----------------------------------------------------------------------------- configs
def config_comment(config: Path) -> str:
    """The leading comment block of a YAML config, with the comment marks stripped."""
    lines = []
    for line in config.read_text().splitlines():
        if not line.startswith("#"):
            break
        text = line[1:]
        lines.append(text[1:] if text.startswith(" ") else text)
    return "\n".join(lines).strip("\n")


def variant_description(config: Path) -> str:
    """The first sentence of a variant config's leading comment (its name in the report)."""
    paragraph = []
    for line in config_comment(config).splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    match = re.search(r"\.(\s|$)", text)
    return text[: match.start() + 1] if match else text


def _selector_labels(selectors: Iterable[Any]) -> list[str]:
    labels = []
    for sel in selectors or []:
        labels.append(sel if isinstance(sel, str) else str(sel.get("label") or sel["name"]))
    return labels


# ----------------------------------------------------------------------------- results
@dataclass
class Results:
    """One results directory as the report sees it (a paper's main run or one variant)."""

    name: str
    results_dir: Path
    runs: pd.DataFrame | None = None  # every row found
    source: str = ""  # "runs.csv.gz", "tasks", or "" (nothing)
    config: dict[str, Any] = field(default_factory=dict)  # what ran (results config.yaml), else the config file
    _complete: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def ran(self) -> bool:
        return self.runs is not None and len(self.runs) > 0

    @property
    def protocol(self) -> dict[str, Any]:
        return self.config.get("protocol") or {}

    @property
    def n_repeats(self) -> int | None:
        p = self.protocol
        if not p:
            return None
        return int(p.get("n_trials", 10)) if p.get("kind", "holdout") == "holdout" else int(p.get("n_repeats", 1))

    @property
    def n_folds(self) -> int:
        p = self.protocol
        if p:
            return 1 if p.get("kind", "holdout") == "holdout" else int(p.get("n_splits", 5))
        if self.ran:
            return int(self.runs.groupby(["dataset", "repeat"])["fold"].nunique().max())
        return 1

    @property
    def selectors(self) -> list[str]:
        labels = _selector_labels(self.config.get("selectors"))
        if not labels and self.ran:
            labels = sorted(self.runs["selector"].unique())
        return labels

    @property
    def skipped(self) -> list[str]:
        return list(self.config.get("skipped_datasets") or [])

    @property
    def planned_datasets(self) -> list[str]:
        """The config's datasets that are available here (not skipped as missing)."""
        return [d for d in self.config.get("datasets") or [] if d not in self.skipped]

    def complete(self) -> pd.DataFrame | None:
        """Rows of the complete repetitions only (every fold of every selector present)."""
        if not self.ran:
            return None
        if self._complete is None:
            self._complete = complete_repetitions(self.runs, self.n_folds, self.selectors)
        return self._complete

    def progress(self) -> pd.DataFrame:
        """Per planned dataset: tasks present and planned, complete repetitions and planned."""
        per_rep = self.n_folds * len(self.selectors)
        runs = self.runs if self.ran else pd.DataFrame(columns=TASK_KEY)
        tasks = runs.drop_duplicates(TASK_KEY)
        complete = self.complete()
        rows = []
        datasets = self.planned_datasets or sorted(tasks["dataset"].unique())
        for dataset in datasets:
            mine = tasks[tasks["dataset"] == dataset]
            done = complete[complete["dataset"] == dataset]["repeat"].nunique() if complete is not None else 0
            rows.append({"dataset": dataset, "tasks": len(mine),
                         "tasks_planned": per_rep * self.n_repeats if self.n_repeats else None,
                         "repeats": int(done), "repeats_planned": self.n_repeats})
        return pd.DataFrame(rows, columns=["dataset", "tasks", "tasks_planned", "repeats", "repeats_planned"])

    @property
    def partial(self) -> bool:
        if not self.ran:
            return True
        progress = self.progress()
        if progress.empty or self.n_repeats is None:
            return False
        return bool((progress["tasks"] < progress["tasks_planned"]).any())


def read_task_files(results_dir: Path) -> pd.DataFrame | None:
    """The rows of every finished task file, typed as runs.csv.gz would type them (None if none)."""
    rows: list[dict[str, Any]] = []
    for task_id in sorted(finished_tasks(results_dir)):
        try:
            rows.extend(read_task(results_dir, task_id))
        except (OSError, DamagedTaskFile):
            continue  # a task file being replaced right now; the next report picks it up
    if not rows:
        return None
    df = pd.DataFrame(rows)
    df = df[[c for c in COLUMNS if c in df.columns] + sorted(c for c in df.columns if c not in COLUMNS)]
    return pd.read_csv(StringIO(df.to_csv(index=False, float_format="%.17g")))


def complete_runs(results_dir: Path, runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``runs`` from complete repetitions only, as REPORT.md uses them; the folds and
    selectors of a repetition come from ``results_dir``'s config.yaml. All of ``runs`` for a
    finished run."""
    result = Results(results_dir.name, results_dir, runs=runs, config=_read_config(results_dir))
    return result.complete() if result.ran else runs


def _read_config(results_dir: Path, config: Path | None = None) -> dict[str, Any]:
    """The resolved config.yaml of a results directory, else the config file ``config``, else {}."""
    for path in (results_dir / CONFIG_FILE, config):
        if path is not None and path.is_file():
            try:
                return yaml.safe_load(path.read_text()) or {}
            except yaml.YAMLError:
                continue
    return {}


def load_results(name: str, results_dir: Path, config: Path | None = None) -> Results:
    """A results directory: its runs (runs.csv.gz, else the task files of a run in progress) and config."""
    result = Results(name, results_dir, config=_read_config(results_dir, config))
    runs = None
    if (results_dir / RUNS_FILE).is_file():
        runs, result.source = load_runs(results_dir), RUNS_FILE
    elif results_dir.is_dir():
        runs = read_task_files(results_dir)
        result.source = "tasks" if runs is not None else ""
    if runs is not None:
        runs = runs.sort_values(ROW_KEY, kind="stable").reset_index(drop=True)
    result.runs = runs
    return result


def complete_repetitions(runs: pd.DataFrame, n_folds: int, selectors: Sequence[str]) -> pd.DataFrame:
    """Rows of the (dataset, repeat) pairs for which every fold of every selector is present."""
    tasks = runs[runs["selector"].isin(selectors)].drop_duplicates(TASK_KEY)
    counts = tasks.groupby(["dataset", "repeat"]).size()
    full = counts[counts >= n_folds * len(selectors)].index
    keep = pd.MultiIndex.from_frame(runs[["dataset", "repeat"]]).isin(full)
    return runs[keep].reset_index(drop=True)


# ----------------------------------------------------------------------------- the claims
def _paired_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided paired t-test and Wilcoxon signed-rank p-values of a - b (nan under 2 pairs)."""
    diff = a - b
    if diff.size < 2:
        return float("nan"), float("nan")
    if np.all(diff == diff[0]):
        t_p = 1.0 if diff[0] == 0 else 0.0
    else:
        t_p = float(stats.ttest_rel(a, b).pvalue)
    if not np.any(diff != 0):
        return t_p, 1.0
    try:
        w_p = float(stats.wilcoxon(diff).pvalue)
    except ValueError:
        w_p = float("nan")
    return t_p, w_p


def _printed_rows(paper: str, k: int) -> dict[str, dict[str, float]]:
    """dataset -> method -> printed value, for every printed row at k."""
    out: dict[str, dict[str, float]] = {}
    for table in TABLES[paper]:
        for cell in table.cells:
            if cell.k == k:
                out.setdefault(cell.dataset, {})[cell.method] = cell.value
    return out


def _competitors(paper: str, method: str) -> list[str]:
    excluded = {method, *NOT_COMPARED.get(method, ())}
    methods = []
    for table in TABLES[paper]:
        methods += [m for m, _ in table.column_titles if m not in excluded and m not in methods]
    return methods


def headline_claims(paper: str, runs: pd.DataFrame | None) -> pd.DataFrame:
    """Per proposed method, dataset of the paper and k of its tables: best in ours and as printed.

    Ours: the mean accuracy over our repetitions; the margin is the mean paired difference to
    the runner-up (the best other method), tested by a paired t-test and a Wilcoxon signed-rank
    test over the repetitions; "significant" means a positive margin with t-test p < 0.05.
    Printed: whether the method's printed value is the largest of the printed row.
    """
    rows = []
    ks = sorted({k for table in TABLES[paper] for k in table.ks})
    datasets = _paper_datasets(paper)
    for method in PROPOSED[paper]:
        others = _competitors(paper, method)
        for k in ks:
            printed = _printed_rows(paper, k)
            for dataset in datasets:
                row: dict[str, Any] = {"method": method, "dataset": dataset, "k": k, "has_results": False}
                values = printed.get(dataset, {})
                if method in values:
                    rival = max((v for m, v in values.items() if m in others), default=float("nan"))
                    row.update(printed=values[method], printed_margin=values[method] - rival,
                               printed_best=bool(values[method] >= rival))
                if runs is not None and len(runs):
                    mine = runs[(runs["dataset"] == dataset) & (runs["k"] == k)]
                    row.update(_measured(mine, method, others))
                rows.append(row)
    return pd.DataFrame(rows)


def _measured(runs: pd.DataFrame, method: str, others: list[str]) -> dict[str, Any]:
    if runs.empty:
        return {}
    grouped = runs.groupby(["selector", "repeat"])[["n_correct", "n_test"]].sum()
    acc = (100.0 * grouped["n_correct"] / grouped["n_test"]).unstack("selector")
    present = [m for m in others if m in acc.columns]
    if method not in acc.columns or not present:
        return {}
    acc = acc[[method, *present]].dropna()
    if acc.empty:
        return {}
    means = acc.mean()
    best = means.idxmax()  # ties go to the proposed method (first column)
    runner_up = means.drop(method).idxmax()
    t_p, w_p = _paired_test(acc[method].to_numpy(), acc[runner_up].to_numpy())
    margin = float((acc[method] - acc[runner_up]).mean())
    return {"has_results": True, "best": best, "mean": float(means[method]), "runner_up": runner_up,
            "runner_up_mean": float(means[runner_up]), "margin": margin, "t_pvalue": t_p,
            "wilcoxon_pvalue": w_p, "n_repeats": len(acc), "is_best": bool(best == method),
            "significant": bool(margin > 0 and t_p < ALPHA)}


def claim_sentences(paper: str, claims: pd.DataFrame) -> list[str]:
    """One sentence per proposed method and k: the claim as measured, then as printed."""
    sentences = []
    names = _method_titles(paper)
    for method in PROPOSED[paper]:
        for k in sorted(claims.loc[claims["method"] == method, "k"].unique()):
            sentences.append(_claim_sentence(names.get(method, method), int(k),
                                             claims[(claims["method"] == method) & (claims["k"] == k)]))
    return sentences


def _claim_sentence(name: str, k: int, part: pd.DataFrame) -> str:
    ours = part[part["has_results"]]
    n = len(ours)
    printed_all = int(part["printed_best"].sum())
    if not n:
        return (f"{name} at k = {k}: no dataset of the paper has results yet; as printed, it is the best on "
                f"{printed_all} of {len(part)} datasets.")
    best, significant = int(ours["is_best"].sum()), int(ours["significant"].sum())
    text = (f"{name} has the best accuracy on {best} of {n} datasets at k = {k}; its margin over the runner-up is "
            f"significant (paired t-test p < {ALPHA}) on {significant}. As printed, it is the best on "
            f"{int(ours['printed_best'].sum())} of the same {n}")
    return text + (f" (on {printed_all} of all {len(part)} printed rows)." if n != len(part) else ".")


# ----------------------------------------------------------------------------- variants
def compare_variant(main: pd.DataFrame, variant: pd.DataFrame, ks: Iterable[int]) -> pd.DataFrame:
    """Main vs variant on the same (dataset, repeat, fold, selector, k) rows, per dataset x selector x k.

    Accuracy per repetition is pooled over the shared folds (as :func:`per_repeat` does); the
    difference is variant - main in points, tested by a paired t-test over repetitions.
    """
    ks = list(ks)
    keys = main[main["k"].isin(ks)][ROW_KEY].merge(variant[variant["k"].isin(ks)][ROW_KEY], on=ROW_KEY)
    columns = ["dataset", "selector", "k", "main", "variant", "diff", "t_pvalue", "n_repeats"]
    if keys.empty:
        return pd.DataFrame(columns=columns)

    def pooled(runs: pd.DataFrame) -> pd.DataFrame:
        shared = runs.merge(keys, on=ROW_KEY)
        grouped = shared.groupby(["dataset", "selector", "k", "repeat"])[["n_correct", "n_test"]].sum()
        return (100.0 * grouped["n_correct"] / grouped["n_test"]).rename("accuracy").reset_index()

    both = pooled(main).merge(pooled(variant), on=["dataset", "selector", "k", "repeat"], suffixes=("_main", "_var"))
    rows = []
    for (dataset, selector, k), part in both.groupby(["dataset", "selector", "k"], sort=True):
        a, b = part["accuracy_var"].to_numpy(), part["accuracy_main"].to_numpy()
        t_p, _ = _paired_test(a, b)
        rows.append({"dataset": dataset, "selector": selector, "k": int(k), "main": float(b.mean()),
                     "variant": float(a.mean()), "diff": float((a - b).mean()), "t_pvalue": t_p,
                     "n_repeats": len(part)})
    return pd.DataFrame(rows, columns=columns)


# ----------------------------------------------------------------------------- helpers
def _paper_datasets(paper: str) -> list[str]:
    datasets: list[str] = []
    for table in TABLES[paper]:
        datasets += [d for d, _ in table.row_titles if d not in datasets]
    return datasets


def _method_titles(paper: str) -> dict[str, str]:
    titles: dict[str, str] = {}
    for table in TABLES[paper]:
        titles.update(dict(table.column_titles))
    return titles


def _dataset_titles(paper: str) -> dict[str, str]:
    titles: dict[str, str] = {}
    for table in TABLES[paper]:
        titles.update(dict(table.row_titles))
    return titles


def _comparisons(paper: str, runs: pd.DataFrame | None) -> pd.DataFrame:
    return pd.concat([compare_table(table, runs) for table in TABLES[paper]], ignore_index=True)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _load_paper(layout: Layout, paper: str) -> Results:
    config = layout.configs / f"{paper}.yaml"
    return load_results(paper, layout.results_dir(paper), config if config.is_file() else None)


def _variant_configs(layout: Layout, paper: str) -> list[tuple[str, Path | None]]:
    """(name, config) of each variant of the paper: its configs, and result dirs without one."""
    found = {c.stem: c for c in layout.variants(paper)}
    folder = layout.results / "variants"
    if folder.is_dir():
        for d in folder.iterdir():
            if d.is_dir() and d.name.startswith(f"{paper}-") and d.name not in found:
                found[d.name] = None
    return sorted(found.items())


def _state(result: Results) -> str:
    if not result.ran:
        return "not run yet"
    return "partial" if result.partial else "complete"


# ----------------------------------------------------------------------------- sections
def _summary_section(papers: dict[str, Results]) -> list[str]:
    header = ["paper", "results", "datasets run / in the paper", "cells compared", "within 2 se (\\|z\\| <= 2)",
              "within one test sample", "headline claim (ours; as printed)"]
    rows = []
    for paper, result in papers.items():
        datasets = _paper_datasets(paper)
        runs = result.complete()
        present = set(runs["dataset"]) if runs is not None else set()
        missing = []
        started = set(result.runs["dataset"]) if result.ran else set()
        for d in datasets:
            if d in present:
                continue
            if d in result.skipped:
                reason = "not available here"
            elif d in started:
                reason = "in progress, no complete repetition yet"
            elif result.config and d not in result.planned_datasets:
                reason = "not in the config"
            else:
                reason = "not run yet"
            missing.append(f"{_dataset_titles(paper)[d]}: {reason}")
        run_text = f"{sum(d in present for d in datasets)}/{len(datasets)}"
        if missing:
            run_text += " (" + "; ".join(missing) + ")"
        summary = reproduction_summary(_comparisons(paper, runs))
        claims = headline_claims(paper, runs)
        verdicts = []
        for method in PROPOSED[paper]:
            part = claims[(claims["method"] == method)]
            ours = part[part["has_results"]]
            name = _method_titles(paper)[method]
            if ours.empty:
                verdicts.append(f"{name}: not checked yet; printed best in {int(part['printed_best'].sum())}"
                                f"/{len(part)}")
                continue
            verdicts.append(f"{name}: best in {int(ours['is_best'].sum())}/{len(ours)} (dataset, k), significant "
                            f"in {int(ours['significant'].sum())}; printed best in "
                            f"{int(ours['printed_best'].sum())}/{len(ours)}")
        rows.append([TITLES[paper], _state(result), run_text, f"{summary['ran']}/{summary['cells']}",
                     _share(summary["reproduce"], summary["judged"])
                     + (f" ({summary['ran'] - summary['judged']} from one repetition, not judged)"
                        if summary["judged"] < summary["ran"] else ""),
                     _share(summary["within_one_sample"], summary["ran"]), "; ".join(verdicts)])
    lines = ["## Summary", ""]
    lines += _md_table(header, rows)
    lines += ["", "Cells compared: printed cells with results here (of all printed cells). The share within 2 se "
              "is over the judged cells (those with at least two repetitions), the share within one test "
              "sample over the cells compared; the rule is stated below. (dataset, k): the paper's datasets "
              "with results at each k of its tables; significant: a positive margin over the runner-up with a "
              f"paired t-test p < {ALPHA} over our repetitions.", ""]
    return lines


def _rule_section() -> list[str]:
    import fsbench.report.paper as paper_module

    return ["## The reproduction rule", "", (paper_module.__doc__ or "").strip(), ""]


def _cost_rows(result: Results) -> list[str]:
    log = read_runlog(result.results_dir)
    lines = [f"### {result.name}", ""]
    if not result.ran:
        return lines + ["Not run yet.", ""]
    tasks = result.runs.drop_duplicates(TASK_KEY)
    wall = sum(float(e.get("seconds", 0.0)) for e in log)
    machines = sorted({str(e.get("machine", "unknown")) for e in log})
    if log:
        stopped = sum(bool(e.get("interrupted")) for e in log)
        logged = sum(int(e.get("n_run", 0)) for e in log)
        partial = (f"; the logged invocations ran {logged} of its {len(tasks)} tasks, the others' wall time "
                   "was not recorded" if logged < len(tasks) else "")
        lines.append(f"- Wall time: {_hours(wall)} over {len(log)} invocation(s)"
                     + (f", {stopped} of them interrupted" if stopped else "") + f" (runlog.jsonl{partial}).")
        lines += [f"- Machine: {m}" for m in machines]
    else:
        lines.append("- Wall time: not recorded (no runlog.jsonl: the tasks ran in an invocation that was "
                     "killed, or one still running; an interrupted invocation logs its time).")
    if "task_seconds" in tasks.columns and tasks["task_seconds"].notna().any():
        lines.append(f"- Compute time, summed over tasks (one worker): {_hours(float(tasks['task_seconds'].sum()))}.")
    else:
        lines.append("- Compute time: not recorded (runs.csv.gz has no task_seconds).")
    lines.append(f"- Tasks (dataset x repetition x fold x selector): {len(tasks)}.")
    if result.source == "tasks":
        lines.append("- Read from the per-task files: the run is in progress and has not written runs.csv.gz yet.")
    progress = result.progress()
    if result.partial:
        lines.append("- **Partial results**: only complete repetitions enter the tables and claims.")
    if not progress.empty:
        lines += ["", *_md_table(["dataset", "tasks present / planned", "complete repetitions / planned"],
                                 [[r.dataset, f"{r.tasks}/{_num(r.tasks_planned, 'd')}",
                                   f"{r.repeats}/{_num(r.repeats_planned, 'd')}"]
                                  for r in progress.itertuples()])]
    if result.skipped:
        lines += ["", f"Datasets in the config but not available here (skipped): {', '.join(result.skipped)}."]
    return lines + [""]


def _cost_section(papers: dict[str, Results], variants: dict[str, list[Results]]) -> list[str]:
    lines = ["## Cost", "",
             "Wall time is the sum over the invocations in runlog.jsonl (a run may span sessions); compute "
             "time is the sum of task_seconds, each task counted once, i.e. the time one worker would take.",
             ""]
    for paper, result in papers.items():
        lines += _cost_rows(result)
        for variant in variants[paper]:
            lines += _cost_rows(variant)
    return lines


def _paper_section(layout: Layout, paper: str, result: Results) -> list[str]:
    lines = [f"## {TITLES[paper]}", "", PAPERS[paper].citation, ""]
    config = layout.configs / f"{paper}.yaml"
    lines += ["### Protocol and choices", ""]
    if config.is_file():
        lines += [f"From configs/papers/{paper}.yaml:", "", config_comment(config), ""]
    else:
        lines += ["The config file is missing.", ""]
    if not result.ran:
        return lines + [f"Not run yet: no results in results/papers/{paper}/.", ""]
    if result.skipped:
        lines += [f"Datasets skipped (not available here): {', '.join(result.skipped)}.", ""]
    if result.partial:
        lines += ["**Partial results**: the run has not finished; only complete repetitions are used.", ""]
    runs = result.complete()
    lines += ["### Tables", ""]
    present = set(runs["dataset"]) if runs is not None else set()
    pending = [d for d in result.planned_datasets if d not in present]
    for table in TABLES[paper]:
        comparison = compare_table(table, runs, pending, result.skipped)
        lines += [format_paper_table(table, comparison, "markdown"), ""]
    figures = _figure_lines(paper, result.results_dir, layout.results)
    if figures:
        lines += ["### Figures", "", *figures]
    lines += _claims_section(paper, runs)
    return lines


def _claims_section(paper: str, runs: pd.DataFrame | None) -> list[str]:
    claims = headline_claims(paper, runs)
    titles, dtitles = _method_titles(paper), _dataset_titles(paper)
    lines = ["### Headline claim", ""]
    for method in PROPOSED[paper]:
        against = ", ".join(titles[m] for m in _competitors(paper, method))
        lines += [f"{titles[method]} against {against}:", ""]
        part = claims[claims["method"] == method]
        header = ["dataset", "k", "our best", f"{titles[method]} (ours)", "runner-up (ours)", "margin",
                  "t-test p", "Wilcoxon p", "repetitions", "best?", "beyond noise?", f"{titles[method]} printed",
                  "printed margin", "best as printed?"]
        rows = []
        for r in part.itertuples():
            if not r.has_results:
                continue
            rows.append([dtitles[r.dataset], r.k, titles.get(r.best, r.best), _num(r.mean),
                         f"{titles.get(r.runner_up, r.runner_up)} {_num(r.runner_up_mean)}",
                         _num(r.margin, signed=True), _pvalue(r.t_pvalue), _pvalue(r.wilcoxon_pvalue),
                         int(r.n_repeats), "yes" if r.is_best else "no", "yes" if r.significant else "no",
                         _num(getattr(r, "printed", float("nan"))),
                         _num(getattr(r, "printed_margin", float("nan")), signed=True),
                         "yes" if getattr(r, "printed_best", False) else "no"])
        if rows:
            lines += _md_table(header, rows) + [""]
    lines += [*(f"- {sentence}" for sentence in claim_sentences(paper, claims)), ""]
    return lines


def _restrict(table: PrintedTable, datasets: Sequence[str]) -> PrintedTable:
    """The printed table with only the rows of ``datasets``."""
    return replace(table, row_titles=tuple(r for r in table.row_titles if r[0] in datasets),
                   cells=tuple(c for c in table.cells if c.dataset in datasets))


def _extra_datasets_section(root: Path, paper: str, result: Results, variant: Results) -> list[str]:
    """A variant's results on printed rows the paper's own config does not run (ISOLET under a
    reduced protocol): the printed table's rows beside ours, fixed-p DSO-FS at the table's k, and
    the variant's figures. Not counted in the paper's share of cells that reproduce."""
    runs = variant.complete()
    if runs is None:
        return []
    extra = [d for d in _paper_datasets(paper)
             if d in set(runs["dataset"]) and d not in set(result.config.get("datasets") or [])]
    if not extra:
        return []
    dtitles = _dataset_titles(paper)
    lines = [f"Rows of the paper's tables that its own config does not run ({', '.join(dtitles[d] for d in extra)}), "
             "under this variant's protocol (above), not the paper's: shown beside the printed values and not "
             "counted in the paper's share of cells that reproduce.", ""]
    for table in TABLES[paper]:
        sub = _restrict(table, extra)
        if sub.cells:
            lines += [format_paper_table(sub, compare_table(sub, runs)), ""]
    per_p = per_p_curves(runs)
    if not per_p.empty:
        ks = sorted({k for table in TABLES[paper] for k in table.ks})
        at_k = per_p[per_p["k"].isin(ks) & per_p["dataset"].isin(extra)]
        lines += ["DSO-FS at each fixed p (mean ± sd over the repetitions; in brackets where the problem is "
                  "ill-posed, as in the tables):", ""]
        rows = []
        for (d, k), group in at_k.groupby(["dataset", "k"], sort=False):
            cells = []
            for r in group.sort_values("p").itertuples():
                ill = ill_posed(runs, d, r.selector)
                cells.append(f"{_num(r.mean)} ± {_num(r.std)}" + (f" [{ill}]" if ill else ""))
            rows.append([dtitles[d], k, *cells])
        lines += _md_table(["dataset", "k", *(f"p = {p:g}" for p in sorted(set(at_k["p"])))], rows)
        lines.append("")
    return lines + _figure_lines(variant.name, variant.results_dir, root)


def _figure_lines(name: str, results_dir: Path, root: Path) -> list[str]:
    """Markdown images of the figures of :data:`FIGURES` present in ``results_dir``."""
    lines = []
    for stem, what in FIGURES:
        if (results_dir / f"{stem}.png").is_file():
            lines += [f"![{name}: {what}]({_relative(results_dir / f'{stem}.png', root)})", ""]
    return lines


def _variants_section(root: Path, papers: dict[str, Results], variants: dict[str, list[Results]],
                      descriptions: dict[str, str]) -> list[str]:
    lines = ["## Variants: what the papers' choices cost", "",
             "Each variant reruns a paper's config with one thing changed. Compared on the same (dataset, "
             "repetition, fold, selector, k) rows at the k of the paper's tables; diff = variant - main in "
             "points; p: paired t-test over repetitions.", ""]
    any_variant = False
    for paper, result in papers.items():
        ks = sorted({k for table in TABLES[paper] for k in table.ks})
        titles, dtitles = _method_titles(paper), _dataset_titles(paper)
        for variant in variants[paper]:
            any_variant = True
            lines += [f"### {variant.name}", "", descriptions.get(variant.name, ""), ""]
            if not variant.ran:
                lines += ["Not run yet.", ""]
                continue
            if not result.ran:
                lines += [f"The main {paper} results are not run yet; nothing to compare with.", ""]
                continue
            if result.partial or variant.partial:
                lines += ["**Partial results**: only repetitions complete in both runs are compared.", ""]
            table = compare_variant(result.complete(), variant.complete(), ks)
            extra = _extra_datasets_section(root, paper, result, variant)
            if table.empty:
                lines += extra or ["No shared rows yet.", ""]
                continue
            lines += _md_table(["dataset", "selector", "k", "main", "variant", "diff", "p", "repetitions"],
                               [[dtitles.get(r.dataset, r.dataset), titles.get(r.selector, r.selector), r.k,
                                 _num(r.main), _num(r.variant), _num(r.diff, signed=True), _pvalue(r.t_pvalue),
                                 r.n_repeats]
                                for r in table.itertuples()])
            lines += ["", "Mean difference per selector over the datasets compared:", ""]
            for selector, part in table.groupby("selector", sort=True):
                per_k = part.groupby("k")["diff"].agg(["mean", "size"])
                text = ", ".join(f"{_num(row['mean'], signed=True)} points at k = {k} ({int(row['size'])} datasets)"
                                 for k, row in per_k.iterrows())
                lines.append(f"- {titles.get(selector, selector)}: {text}")
            lines += ["", *extra]
    if not any_variant:
        lines += ["No variant configs.", ""]
    return lines


def _forensics_section(sl2p: Results | None, variants: Sequence[str] = ()) -> list[str]:
    from fsbench.datasets import all_datasets
    from fsbench.papers.forensics import implied_test_sizes

    n_samples = {spec.name: spec.n_samples for spec in all_datasets()}
    implied = implied_test_sizes(TABLES["sl2p"], n_samples)
    titles = _dataset_titles("sl2p")
    ours: dict[str, list[int]] = {}
    if sl2p is not None and sl2p.ran:
        for dataset, part in sl2p.runs.groupby("dataset"):
            ours[dataset] = sorted(int(v) for v in part["n_test"].unique())
    lines = ["## SL2P forensics: the test-set sizes the printed values imply", "",
             "A value printed to four decimals from one test set is 100 x correct / n_test, rounded. The sizes "
             "below are those (up to the dataset's size) for which every printed value of the row, in both "
             "Tables 2 and 3, is such a fraction. The text states a 50/50 split.", ""]
    rows = []
    for dataset in _paper_datasets("sl2p"):
        if dataset not in implied:
            continue
        n = n_samples[dataset]
        half = n - n // 2
        sizes = implied[dataset]
        rows.append([titles[dataset], n, half, ", ".join(map(str, sizes)) or "none",
                     "yes" if half in sizes else "no", ", ".join(map(str, ours.get(dataset, []))) or "not run"])
    lines += _md_table(["dataset", "n", "50% test set", "sizes consistent with the printed values",
                        "50% consistent?", "our test sets"], rows)
    lines.append("")
    if variants:
        lines += ["The variant(s) " + ", ".join(variants) + " rerun the SL2P config with a changed split; see "
                  "Variants above.", ""]
    return lines


# ----------------------------------------------------------------------------- the report
def build_report(layout: Layout) -> str:
    """The markdown of results/papers/REPORT.md, generated from the results under ``layout``."""
    papers = {paper: _load_paper(layout, paper) for paper in PAPERS}
    variants: dict[str, list[Results]] = {}
    descriptions: dict[str, str] = {}
    for paper in PAPERS:
        variants[paper] = []
        for name, config in _variant_configs(layout, paper):
            variants[paper].append(load_results(name, layout.results / "variants" / name, config))
            descriptions[name] = variant_description(config) if config is not None else "(no config file)"
    lines = ["# Reproduction report: RFS, DSO-FS, SL21/SL2P", "",
             "Generated by `fsbench report` from the results under results/papers/ (regenerate: `make "
             "reproduce`, then `fsbench report`); `fsbench check` reruns a subset in CI and fails when a "
             "result changes. No number here is typed by hand.", ""]
    lines += _summary_section(papers)
    changes = layout.results / CHANGES_FILE
    if changes.is_file():  # written by fsbench.papers.changes after a recomputation
        lines += [changes.read_text().rstrip(), ""]
    lines += _rule_section()
    lines += _cost_section(papers, variants)
    for paper, result in papers.items():
        lines += _paper_section(layout, paper, result)
    lines += _variants_section(layout.results, papers, variants, descriptions)
    lines += _forensics_section(papers.get("sl2p"), [v.name for v in variants["sl2p"]])
    return "\n".join(lines).rstrip("\n") + "\n"


def write_report(layout: Layout) -> Path:
    """Write :func:`build_report` to results/papers/REPORT.md; returns its path.

    Refuses (FsbenchError) where there is nothing to report: no paper config or no paper results.
    """
    if not any((layout.configs / f"{paper}.yaml").is_file() for paper in PAPERS):
        raise FsbenchError(f"No paper configs in {str(layout.configs)!r}: run 'fsbench report' in a checkout of "
                           "fsbench (or pass --configs and --results).")
    if not any((layout.results_dir(paper) / RUNS_FILE).is_file() for paper in PAPERS):
        raise FsbenchError(f"No paper results in {str(layout.results)!r}; run 'fsbench reproduce' first (or pass "
                           "--results).")
    path = layout.results / REPORT_FILE
    atomic_write_text(path, build_report(layout))
    return path


__all__: Sequence[str] = ["PROPOSED", "Results", "build_report", "claim_sentences", "compare_variant",
                          "complete_repetitions", "config_comment", "headline_claims", "load_results",
                          "variant_description", "write_report"]
