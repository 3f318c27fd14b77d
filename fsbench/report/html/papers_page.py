"""``fsbench report --html``: the papers' reproduction as a page, beside REPORT.md.

The papers layer computes what REPORT.md shows (the printed tables beside ours, the shares that
reproduce, the headline claims, the variants) and hands it here as :class:`PaperSection`
objects of plain DataFrames; this module lays them out, adds per paper the results explorer of
:mod:`fsbench.report.html.results_page` (tables and curves per dataset for every metric, ranks,
stability, cost) and the cost of every results folder from its runlog.jsonl and task_seconds.

The paper results' runs.csv.gz are linked where they are committed (``../PAPER/runs.csv.gz``),
not copied: the page stays small, and works from the file system inside results/papers/.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fsbench.report.html.data import describe_metrics
from fsbench.report.html.page import Page, downloads_html, esc, number, table_html, write_page
from fsbench.report.html.results_page import explorer_groups, missing_notes, tables_csv
from fsbench.storage.runlog import read_runlog
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import TASK_KEY

HTML_DIR = "html"


@dataclass
class PaperTable:
    """One printed table beside ours: ``comparison`` has a row per printed cell (dataset, method,
    k, printed, ours, ours_std, delta, z, reproduces, not_worse, status, note)."""

    title: str
    rows: list[tuple[str, str]]  # (dataset, the paper's row title)
    columns: list[tuple[str, str]]  # (selector, the paper's column title)
    comparison: pd.DataFrame


@dataclass
class Variant:
    name: str
    description: str
    results_dir: Path
    comparison: pd.DataFrame | None  # dataset, selector, k, main, variant, diff, t_pvalue, n_repeats


@dataclass
class PaperSection:
    key: str
    title: str
    citation: str
    protocol: str
    results_dir: Path
    state: str  # "complete", "partial", "not run yet"
    summary: dict[str, Any] = field(default_factory=dict)  # cells, ran, judged, reproduce, within_one_sample
    tables: list[PaperTable] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100.0 * part / whole:.0f}%)" if whole else "n/a"


def _paper_table_html(table: PaperTable) -> str:
    """Per k: the printed rows x columns, each cell "ours ± sd (printed, delta)"; bold: our best of
    the row; ≈: not significantly worse than it; *: the paper's best; z beside."""
    parts = []
    comparison = table.comparison
    for k in sorted(comparison["k"].unique()):
        part = comparison[comparison["k"] == k]
        rows = []
        for dataset, title in table.rows:
            mine = part[part["dataset"] == dataset].set_index("method")
            if mine.empty:
                continue
            best_ours = mine["ours"].max() if mine["ours"].notna().any() else None
            best_printed = mine["printed"].max()
            cells: list[Any] = [esc(title)]
            for method, _ in table.columns:
                if method not in mine.index:
                    cells.append("")
                    continue
                c = mine.loc[method]
                printed = f"{c.printed:g}" + ("*" if c.printed == best_printed else "")
                if c.status == "not run":
                    cells.append(f'<span class="muted">not run: {esc(c.note)} ({esc(printed)})</span>')
                    continue
                sd = f'<span class="sd"> ± {c.ours_std:.2f}</span>' if pd.notna(c.ours_std) else ""
                ours = f"{c.ours:.2f}{sd}"
                if best_ours is not None and c.ours == best_ours:
                    ours = f"<b>{ours}</b>"
                elif c.get("not_worse") is True:
                    ours += '<span class="mark"> ≈</span>'
                z = "" if pd.isna(c.z) else f"; z = {c.z:+.2f}" + ("" if c.reproduces else " ✗")
                note = f' <span class="note">[{esc(c.note)}]</span>' if c.note else ""
                cells.append((f"{ours} <span class=\"muted\">({esc(printed)}, {c.delta:+.2f}{z})</span>{note}",
                              repr(float(c.ours))))
            rows.append(cells)
        header = ["dataset", *(t for _, t in table.columns)]
        parts.append(f"<h4>{esc(table.title)}, top {int(k)} features</h4>"
                     + table_html(header, rows, numeric=[False] + [True] * len(table.columns), raw=True))
    return "".join(parts)


def _cost_rows(name: str, folder: Path) -> list[Any]:
    log = read_runlog(folder)
    wall = sum(float(e.get("seconds", 0.0)) for e in log)
    tasks, compute = 0, None
    if (folder / RUNS_FILE).is_file():
        runs = load_runs(folder).drop_duplicates(TASK_KEY)
        tasks = len(runs)
        if "task_seconds" in runs.columns and runs["task_seconds"].notna().any():
            compute = float(runs["task_seconds"].sum())
    machines = ", ".join(sorted({str(e.get("machine", "unknown")) for e in log})) or "not recorded"
    return [name, (str(tasks), str(tasks)), number(wall if log else None, 0), number(compute, 0),
            str(len(log)), machines]


def papers_page(root: Path, papers: list[PaperSection], out: Path) -> Page:
    """The page of ``papers`` (results under ``root``), to be written into ``out``."""
    groups, metrics_seen, sections, cost_rows = [], None, [], []
    summary_rows = []
    page = Page("fsbench: reproduction of RFS, DSO-FS, SL21/SL2P", {})
    for paper in papers:
        body = [f"<p>{esc(paper.citation)}</p>",
                f"<details><summary>Protocol and choices (configs/papers/{esc(paper.key)}.yaml)</summary>"
                f"<pre>{esc(paper.protocol)}</pre></details>"]
        cost_rows.append(_cost_rows(paper.key, paper.results_dir))
        s = paper.summary
        summary_rows.append([esc(paper.title), esc(paper.state), f"{s.get('ran', 0)}/{s.get('cells', 0)}",
                             _share(s.get("reproduce", 0), s.get("judged", 0)),
                             _share(s.get("within_one_sample", 0), s.get("ran", 0)),
                             "<br>".join(esc(c) for c in paper.claims)])
        if paper.state == "not run yet":
            sections.append((f"paper-{paper.key}", paper.title, "".join(body) + "<p>Not run yet.</p>"))
            continue
        body.append("<h3>Tables: ours beside the printed values</h3><p class=\"caption\">Each cell: ours, mean ± sd "
                    "over our repetitions (printed, ours - printed; z = delta / se, ✗: |z| > 2, the cell does not "
                    "reproduce); bold: our best in the row; ≈: not significantly worse than it (corrected resampled "
                    "t-test over the outer splits, p ≥ 0.05); *: the paper's best in the row.</p>")
        body += [_paper_table_html(t) for t in paper.tables]
        if paper.claims:
            body.append("<h3>Headline claims</h3><ul>" + "".join(f"<li>{esc(c)}</li>" for c in paper.claims) + "</ul>")
        mine, metrics, _ = explorer_groups([paper.results_dir], prefix=f"{paper.key}-")
        metrics_seen = metrics if metrics_seen is None else [m for m in metrics_seen if m in metrics]
        for group in mine:
            group.update(placed=True, nav=False, title=paper.key + (f", {group['title']}" if group["title"] else ""))
            page.texts.update({f"table-{paper.key}-{m}.csv": tables_csv(group, m) for m in metrics})
        groups += mine
        body.append("<h3>Our results per dataset (every metric, every k)</h3>"
                    + "".join(f'<div class="explorer" id="group-{esc(g["id"])}"></div>' for g in mine))
        comparisons = pd.concat([t.comparison for t in paper.tables], ignore_index=True)
        page.texts[f"comparison-{paper.key}.csv"] = comparisons.to_csv(index=False, float_format="%.4f")
        page.links.append((f"{paper.key}/{RUNS_FILE} (committed results)",
                           os.path.relpath(paper.results_dir / RUNS_FILE, out)))
        sections.append((f"paper-{paper.key}", paper.title, "".join(body)))
    variant_parts = []
    for paper in papers:
        for variant in paper.variants:
            cost_rows.append(_cost_rows(variant.name, variant.results_dir))
            part = [f"<h3>{esc(variant.name)}</h3><p>{esc(variant.description)}</p>"]
            if variant.comparison is None or variant.comparison.empty:
                part.append("<p class=\"muted\">No shared rows with the main results yet.</p>")
            else:
                rows = [[str(r.dataset), str(r.selector), (str(r.k), str(r.k)), number(r.main), number(r.variant),
                         number(r.diff), number(r.t_pvalue, 4), (str(r.n_repeats), str(r.n_repeats))]
                        for r in variant.comparison.itertuples()]
                part.append(table_html(["dataset", "selector", "k", "main", "variant", "diff", "p", "repetitions"],
                                       rows, numeric=[False, False, True, True, True, True, True, True]))
                page.texts[f"variant-{variant.name}.csv"] = variant.comparison.to_csv(index=False, float_format="%.4f")
            if (variant.results_dir / RUNS_FILE).is_file():
                page.links.append((f"variants/{variant.name}/{RUNS_FILE}",
                                   os.path.relpath(variant.results_dir / RUNS_FILE, out)))
            variant_parts.append("".join(part))
    summary = ("<p class=\"caption\">Cells compared: printed cells with results here (of all printed cells); within "
               "2 se: over the judged cells (two or more repetitions); within one test sample: over the cells "
               "compared. Generated by <code>fsbench report --html</code> from the results under results/papers/, "
               "as REPORT.md is.</p>"
               + table_html(["paper", "results", "cells compared", "within 2 se (|z| ≤ 2)", "within one test sample",
                             "headline claims (ours)"], summary_rows, numeric=[False] * 6, raw=True))
    metrics = metrics_seen or ["accuracy"]
    page.data = {"metric": "accuracy", "metrics": describe_metrics(metrics), "missing": missing_notes(),
                 "groups": groups}
    variants_html = ("<p class=\"caption\">Each variant reruns a paper's config with one thing changed; diff = "
                     "variant - main in points at the k of the paper's tables, p: the corrected resampled t-test over "
                     "the shared outer splits.</p>" + "".join(variant_parts))
    cost = table_html(["results", "tasks", "wall seconds (runlog)", "compute seconds (sum of task_seconds)",
                       "invocations", "machine"], cost_rows, numeric=[False, True, True, True, False, False])
    page.sections = [("summary", "Summary", summary), *sections, ("variants", "Variants", variants_html),
                     ("cost", "Cost", cost),
                     ("downloads", "Downloads", downloads_html(page)
                      + "<p class=\"caption\">comparison-PAPER.csv: every printed cell beside ours; "
                      "table-PAPER-METRIC.csv: our values per dataset, selector and k; the runs.csv.gz files are "
                      "the committed results, linked where they are.</p>")]
    return page


def write_papers_page(root: Path, papers: list[PaperSection], out: Path | None = None) -> Path:
    """Write the papers' page into ``out`` (default ``root/html``); returns index.html's path."""
    out = out if out is not None else root / HTML_DIR
    return write_page(out, papers_page(root, papers, out))


__all__ = ["HTML_DIR", "PaperSection", "PaperTable", "Variant", "papers_page", "write_papers_page"]
