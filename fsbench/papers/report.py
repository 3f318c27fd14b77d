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

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd

from fsbench.errors import FsbenchError
from fsbench.papers import PAPERS, PROPOSED, TABLES, TITLES, PrintedTable, dataset_titles, method_titles, paper_datasets
from fsbench.papers.changes import CHANGES_FILE
from fsbench.papers.claims import ALPHA, claims_section, compare_variant, headline_claims
from fsbench.papers.figures import per_p_curves
from fsbench.papers.layout import Layout
from fsbench.papers.statistics import ranks_section, stability_section
from fsbench.papers.tables import compare_table, format_paper_table, ill_posed, reproduction_summary
from fsbench.report.markdown import hours, md_table, num, pvalue, share
from fsbench.report.results import Results, config_comment, load_results, variant_description
from fsbench.report.stats_command import read_rankings
from fsbench.storage.atomic import atomic_write_text
from fsbench.storage.runlog import read_runlog
from fsbench.storage.runs import RUNS_FILE
from fsbench.storage.task_files import TASK_KEY

FIGURES = (("curves", "accuracy vs number of selected features"),
           ("accuracy_per_p", "accuracy vs k for each fixed p"),
           ("objective", "objective per iteration"))
REPORT_FILE = "REPORT.md"


# ----------------------------------------------------------------------------- helpers
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
        datasets = paper_datasets(paper)
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
            missing.append(f"{dataset_titles(paper)[d]}: {reason}")
        run_text = f"{sum(d in present for d in datasets)}/{len(datasets)}"
        if missing:
            run_text += " (" + "; ".join(missing) + ")"
        summary = reproduction_summary(_comparisons(paper, runs))
        claims = headline_claims(paper, runs)
        verdicts = []
        for method in PROPOSED[paper]:
            part = claims[(claims["method"] == method)]
            ours = part[part["has_results"]]
            name = method_titles(paper)[method]
            if ours.empty:
                verdicts.append(f"{name}: not checked yet; printed best in {int(part['printed_best'].sum())}"
                                f"/{len(part)}")
                continue
            corrected, plain = int(ours["significant"].sum()), int(ours["significant_plain"].sum())
            verdicts.append(f"{name}: best in {int(ours['is_best'].sum())}/{len(ours)} (dataset, k), significant "
                            f"in {corrected} ({plain}); printed best in {int(ours['printed_best'].sum())}/{len(ours)}")
        rows.append([TITLES[paper], _state(result), run_text, f"{summary['ran']}/{summary['cells']}",
                     share(summary["reproduce"], summary["judged"])
                     + (f" ({summary['ran'] - summary['judged']} from one repetition, not judged)"
                        if summary["judged"] < summary["ran"] else ""),
                     share(summary["within_one_sample"], summary["ran"]), "; ".join(verdicts)])
    lines = ["## Summary", ""]
    lines += md_table(header, rows)
    lines += ["", "Cells compared: printed cells with results here (of all printed cells). The share within 2 se "
              "is over the judged cells (those with at least two repetitions), the share within one test "
              "sample over the cells compared; the rule is stated below. (dataset, k): the paper's datasets "
              "with results at each k of its tables; significant: a positive margin over the runner-up with a "
              f"corrected resampled t-test p < {ALPHA} over our outer splits (the plain paired t-test over "
              "repetitions, used before, in brackets).", ""]
    return lines


def _rule_section() -> list[str]:
    import fsbench.papers.tables as paper_module

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
        lines.append(f"- Wall time: {hours(wall)} over {len(log)} invocation(s)"
                     + (f", {stopped} of them interrupted" if stopped else "") + f" (runlog.jsonl{partial}).")
        lines += [f"- Machine: {m}" for m in machines]
    else:
        lines.append("- Wall time: not recorded (no runlog.jsonl: the tasks ran in an invocation that was "
                     "killed, or one still running; an interrupted invocation logs its time).")
    if "task_seconds" in tasks.columns and tasks["task_seconds"].notna().any():
        lines.append(f"- Compute time, summed over tasks (one worker): {hours(float(tasks['task_seconds'].sum()))}.")
    else:
        lines.append("- Compute time: not recorded (runs.csv.gz has no task_seconds).")
    lines.append(f"- Tasks (dataset x repetition x fold x selector): {len(tasks)}.")
    if result.source == "tasks":
        lines.append("- Read from the per-task files: the run is in progress and has not written runs.csv.gz yet.")
    progress = result.progress()
    if result.partial:
        lines.append("- **Partial results**: only complete repetitions enter the tables and claims.")
    if not progress.empty:
        lines += ["", *md_table(["dataset", "tasks present / planned", "complete repetitions / planned"],
                                 [[r.dataset, f"{r.tasks}/{num(r.tasks_planned, 'd')}",
                                   f"{r.repeats}/{num(r.repeats_planned, 'd')}"]
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


def _n_features() -> dict[str, int]:
    from fsbench.datasets import all_datasets

    return {spec.name: int(spec.n_features) for spec in all_datasets()}


def _paper_section(layout: Layout, paper: str, result: Results, write_figures: bool) -> list[str]:
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
    lines += claims_section(paper, runs)
    lines += ranks_section(paper, runs, result.results_dir, layout.results, write_figures)
    lines += stability_section(paper, runs, read_rankings(result.results_dir, result.runs), _n_features())
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
    extra = [d for d in paper_datasets(paper)
             if d in set(runs["dataset"]) and d not in set(result.config.get("datasets") or [])]
    if not extra:
        return []
    dtitles = dataset_titles(paper)
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
                cells.append(f"{num(r.mean)} ± {num(r.std)}" + (f" [{ill}]" if ill else ""))
            rows.append([dtitles[d], k, *cells])
        lines += md_table(["dataset", "k", *(f"p = {p:g}" for p in sorted(set(at_k["p"])))], rows)
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
             "points; p: the corrected resampled t-test over the shared outer splits (fsbench.papers.claims).", ""]
    any_variant = False
    for paper, result in papers.items():
        ks = sorted({k for table in TABLES[paper] for k in table.ks})
        titles, dtitles = method_titles(paper), dataset_titles(paper)
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
            lines += md_table(["dataset", "selector", "k", "main", "variant", "diff", "p", "repetitions"],
                               [[dtitles.get(r.dataset, r.dataset), titles.get(r.selector, r.selector), r.k,
                                 num(r.main), num(r.variant), num(r.diff, signed=True), pvalue(r.t_pvalue),
                                 r.n_repeats]
                                for r in table.itertuples()])
            lines += ["", "Mean difference per selector over the datasets compared:", ""]
            for selector, part in table.groupby("selector", sort=True):
                per_k = part.groupby("k")["diff"].agg(["mean", "size"])
                text = ", ".join(f"{num(row['mean'], signed=True)} points at k = {k} ({int(row['size'])} datasets)"
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
    titles = dataset_titles("sl2p")
    ours: dict[str, list[int]] = {}
    if sl2p is not None and sl2p.ran:
        for dataset, part in sl2p.runs.groupby("dataset"):
            ours[dataset] = sorted(int(v) for v in part["n_test"].unique())
    lines = ["## SL2P forensics: the test-set sizes the printed values imply", "",
             "A value printed to four decimals from one test set is 100 x correct / n_test, rounded. The sizes "
             "below are those (up to the dataset's size) for which every printed value of the row, in both "
             "Tables 2 and 3, is such a fraction. The text states a 50/50 split.", ""]
    rows = []
    for dataset in paper_datasets("sl2p"):
        if dataset not in implied:
            continue
        n = n_samples[dataset]
        half = n - n // 2
        sizes = implied[dataset]
        rows.append([titles[dataset], n, half, ", ".join(map(str, sizes)) or "none",
                     "yes" if half in sizes else "no", ", ".join(map(str, ours.get(dataset, []))) or "not run"])
    lines += md_table(["dataset", "n", "50% test set", "sizes consistent with the printed values",
                        "50% consistent?", "our test sets"], rows)
    lines.append("")
    if variants:
        lines += ["The variant(s) " + ", ".join(variants) + " rerun the SL2P config with a changed split; see "
                  "Variants above.", ""]
    return lines


# ----------------------------------------------------------------------------- the report
def build_report(layout: Layout, write_figures: bool = False) -> str:
    """The markdown of results/papers/REPORT.md, generated from the results under ``layout``;
    ``write_figures`` also (re)draws the papers' critical-difference diagrams it shows."""
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
        lines += _paper_section(layout, paper, result, write_figures)
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
    atomic_write_text(path, build_report(layout, write_figures=True))
    return path


__all__: Sequence[str] = ["REPORT_FILE", "build_report", "write_report"]
