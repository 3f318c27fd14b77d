"""``fsbench html RESULTS_DIR...``: the page of one or several results folders.

Read as ``fsbench stats`` reads them (:func:`fsbench.report.stats_command.load_inputs`: several
folders are concatenated, a dataset found in several renamed ``dataset (folder)``), once per
classifier the results record (never pooled over classifiers: a group of panels each). The
overview is what the folders record: config.yaml, the rows' columns (repetitions, folds,
code identity, versions) and runlog.jsonl (wall time, machine, library versions).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import ALL_METRICS, check_metric, check_metric_name, missing_reason
from fsbench.report.html.data import available_metrics, describe_metrics, group_values, metric_rows
from fsbench.report.html.page import Page, downloads_html, esc, hex_colors, number, table_html, write_page
from fsbench.report.stats_command import load_inputs
from fsbench.report.tables import classifiers_in
from fsbench.storage.runlog import read_runlog
from fsbench.storage.runs import RUNS_FILE, load_runs
from fsbench.storage.task_files import load_failures

#: the page's folder under the results folder (one), or under the folders' common parent (several)
HTML_DIR = "html"


def default_out(folders: list[Path]) -> Path:
    """RESULTS_DIR/html for one folder; COMMON_PARENT/html for several."""
    if len(folders) == 1:
        return folders[0] / HTML_DIR
    return Path(os.path.commonpath([str(f.resolve()) for f in folders])) / HTML_DIR


def missing_notes() -> dict[str, str]:
    """Per metric: why a dataset may lack it (shown in place of its table)."""
    return {m: (f"the dataset {missing_reason(m)}" if m in ("relevant_recall", "relevant_precision", "probe_rate")
                else "its rows have no per-class counts") for m in ALL_METRICS}


def explorer_groups(folders: list[Path], prefix: str = "") -> tuple[list[dict[str, Any]], list[str], pd.DataFrame]:
    """The groups (one per classifier) of the folders' results, the metrics they support, and
    every row read (for the overview)."""
    all_runs = {folder: load_runs(folder) for folder in folders}
    classifiers = list(dict.fromkeys(c for runs in all_runs.values() for c in classifiers_in(runs)))
    failures = pd.concat([load_failures(f) for f in folders], ignore_index=True)
    groups, metrics, every = [], None, []
    for classifier in classifiers if len(classifiers) > 1 else [None]:
        inputs = load_inputs(folders, classifier)
        runs = inputs.runs
        every.append(runs.assign(classifier=classifier) if classifier else runs)
        mine = available_metrics(runs)
        metrics = mine if metrics is None else [m for m in metrics if m in mine]
        group_id = prefix + ("all" if classifier is None else classifier)
        groups.append((group_id, classifier, inputs))
    out = []
    for group_id, classifier, inputs in groups:
        values = group_values(inputs.runs, inputs.rankings, inputs.protocols, inputs.n_features, failures,
                              metrics or ["accuracy"])
        selectors = [str(s) for s in dict.fromkeys(inputs.runs["selector"])]
        values.update(id=group_id, title=f"classifier {classifier}" if classifier else "", colors=hex_colors(selectors),
                      stability_note="no rankings.csv.gz, or fewer than two splits" if not values["stability"] else "")
        if classifier:
            values["heading"] = f"Results per dataset: classifier {classifier}"
            values["nav"] = f"Classifier {classifier}"
        out.append(values)
    return out, metrics or ["accuracy"], pd.concat(every, ignore_index=True)


# ----------------------------------------------------------------------------- overview
def _config(folder: Path) -> tuple[dict[str, Any], str]:
    path = folder / "config.yaml"
    if not path.is_file():
        return {}, ""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    return (doc if isinstance(doc, dict) else {}), text


def _protocol_text(protocol: dict[str, Any]) -> str:
    if not protocol:
        return "not recorded"
    if protocol.get("kind", "holdout") == "holdout":
        train = protocol.get("train_size")
        return f"{protocol.get('n_trials', '?')} random stratified hold-out splits" + (
            f", {100 * float(train):g}% for training" if train is not None else "")
    return f"{protocol.get('n_repeats', 1)} x {protocol.get('n_splits', '?')}-fold cross-validation"


def _unique(values: pd.Series) -> str:
    return ", ".join(str(v) for v in dict.fromkeys(values.dropna().astype(str))) or "not recorded"


def overview_html(folders: list[Path], runs: pd.DataFrame, failures: pd.DataFrame) -> str:
    """What the folders record: datasets, selectors, classifiers, protocol, code identity, config
    and run log."""
    parts = []
    selectors = [str(s) for s in dict.fromkeys(runs["selector"])]
    classifiers = classifiers_in(runs)
    configs = {f: _config(f) for f in folders}
    items = [f"<li><b>Results</b>: {', '.join(esc(f.name) for f in folders)} ({len(runs):,} rows, "
             f"{runs.drop_duplicates(['dataset', 'repeat', 'fold', 'selector']).shape[0]:,} tasks)</li>",
             f"<li><b>Datasets</b>: {esc(', '.join(map(str, dict.fromkeys(runs['dataset']))))}</li>",
             f"<li><b>Selectors</b> ({len(selectors)}): {esc(', '.join(selectors))}</li>"]
    for folder, (doc, _) in configs.items():
        clf = doc.get("classifier") or {}
        name = clf.get("name") if isinstance(clf, dict) else clf
        tuned = f", C tuned over {clf['C']}" if isinstance(clf, dict) and isinstance(clf.get("C"), list) else ""
        items.append(f"<li><b>{esc(folder.name)}</b>: {esc(_protocol_text(doc.get('protocol') or {}))}; "
                     f"classifier {esc(', '.join(classifiers) or name or 'not recorded')}{esc(tuned)}; "
                     f"k = {esc(', '.join(map(str, doc.get('n_features') or sorted(runs['k'].unique()))))}; "
                     f"standardize: {esc(doc.get('standardize', 'not recorded'))}; seed {esc(doc.get('seed', '?'))}"
                     "</li>")
    if len(failures):
        items.append(f"<li><b>Failed tasks</b>: {len(failures)} (see Failures below)</li>")
    parts.append("<ul>" + "".join(items) + "</ul>")
    rows = []
    for dataset, part in runs.groupby("dataset", sort=False):
        rows.append([str(dataset), (str(part["selector"].nunique()), str(part["selector"].nunique())),
                     (str(part["repeat"].nunique()), str(part["repeat"].nunique())),
                     (str(part["fold"].nunique()), str(part["fold"].nunique())),
                     ", ".join(map(str, sorted(int(k) for k in part["k"].unique()))),
                     (str(len(part.drop_duplicates(["repeat", "fold", "selector"]))),
                      str(len(part.drop_duplicates(["repeat", "fold", "selector"])))),
                     number(float(part.drop_duplicates(["repeat", "fold", "selector"])["n_test"].mean()), 1)])
    parts.append("<h3>Datasets</h3>" + table_html(["dataset", "selectors", "repetitions", "folds", "k", "tasks",
                                                    "mean test samples"], rows,
                                                   numeric=[False, True, True, True, False, True, True]))
    ident = []
    columns = [c for c in ("code", "protocol_code", "fsbench_version", "fingerprint") if c in runs.columns]
    if columns:
        for selector, part in runs.groupby("selector", sort=False):
            ident.append([str(selector), *(_unique(part[c]) for c in columns)])
        parts.append("<h3>Code identity</h3><p class=\"caption\">code: the digest of the selector's module and what "
                     "it imports; protocol_code: of the evaluation protocol; fingerprint: of the configuration.</p>"
                     + table_html(["selector", *columns], ident, numeric=[False] * (len(columns) + 1)))
    log_rows = []
    for folder in folders:
        for entry in read_runlog(folder):
            versions = entry.get("versions") or {}
            log_rows.append([folder.name, str(entry.get("finished", "")), number(entry.get("seconds"), 1),
                             f"{entry.get('n_run', '?')} of {entry.get('n_tasks', '?')}", str(entry.get("n_jobs", "")),
                             str(entry.get("machine", "")), ", ".join(f"{k} {v}" for k, v in sorted(versions.items()))
                             + (" (interrupted)" if entry.get("interrupted") else "")])
    if log_rows:
        parts.append("<h3>Run log (runlog.jsonl): machine and library versions</h3>"
                     + table_html(["results", "finished", "wall seconds", "tasks run", "jobs", "machine", "versions"],
                                  log_rows, numeric=[False, False, True, False, False, False, False]))
    for folder, (_, text) in configs.items():
        if text:
            parts.append(f"<details><summary>{esc(folder.name)}/config.yaml</summary><pre>{esc(text)}</pre></details>")
    return "".join(parts)


def cost_html(groups: list[dict[str, Any]]) -> str:
    parts = []
    for group in groups:
        rows = [[d, s, (str(n), str(n)), number(fit, 4), number(task, 4), number(total, 1)]
                for d, s, n, fit, task, total in group["cost"]]
        title = f"<h3>{esc(group['title'])}</h3>" if group["title"] else ""
        parts.append(title + table_html(["dataset", "selector", "tasks", "median fit s", "median task s",
                                         "total task s"], rows, numeric=[False, False, True, True, True, True]))
    return ("<p class=\"caption\">One value per task (dataset, repetition, fold, selector): fit seconds are the "
            "selector's final fit, task seconds the whole task (grid search, fit, evaluation).</p>" + "".join(parts))


def failures_html(failures: pd.DataFrame) -> str:
    if not len(failures):
        return "<p>No task failed.</p>"
    rows = [[str(r.dataset), str(r.repeat), str(r.fold), str(r.selector), str(r.error)] for r in failures.itertuples()]
    return ("<p>These tasks failed (failures.csv); their cells show as failed and are never marked best. Running "
            "the same command again retries them.</p>"
            + table_html(["dataset", "repeat", "fold", "selector", "error"], rows, numeric=[False] * 5))


def tables_csv(group: dict[str, Any], metric: str) -> str:
    """The group's values of ``metric`` in long form: dataset, selector, k, mean, sd, repetitions, best, not worse."""
    lines = [f"dataset,selector,k,{metric}_mean,{metric}_std,n_repeats,best,not_significantly_worse"]

    def cell(v: Any) -> str:
        return "" if v is None else f"{v:.4f}"

    def quote(text: str) -> str:
        return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text

    for panel in group["panels"]:
        values = panel["metrics"].get(metric)
        if values is None:
            continue
        for i, selector in enumerate(values["selectors"]):
            for j, k in enumerate(values["ks"]):
                if values["n"][i][j] is None:
                    continue
                mark = values["mark"][i][j]
                lines.append(",".join([quote(panel["dataset"]), quote(selector), str(k), cell(values["mean"][i][j]),
                                       cell(values["sd"][i][j]), str(values["n"][i][j]), str(int(mark == 2)),
                                       str(int(mark == 1))]))
    return "\n".join(lines) + "\n"


def results_page(folders: list[Path], metric: str = "accuracy") -> Page:
    """The page of ``folders``, showing ``metric`` first (FsbenchError when no row has it)."""
    check_metric_name(metric)
    for folder in folders:
        if not (folder / RUNS_FILE).is_file():
            raise FsbenchError(f"No {RUNS_FILE} in {str(folder)!r}; give a results folder written by 'fsbench run' "
                               "(a run still in progress writes it when it ends).")
    groups, metrics, runs = explorer_groups(folders)
    if metric not in metrics:
        check_metric(metric_rows(runs, metric) if len(metric_rows(runs, metric)) else runs, metric,
                     source=", ".join(str(f) for f in folders))
        raise FsbenchError(f"The results do not all carry {metric}; choose --metric among {', '.join(metrics)}.")
    failures = pd.concat([load_failures(f) for f in folders], ignore_index=True)
    title = "fsbench results: " + ", ".join(f.resolve().name for f in folders)
    data = {"metric": metric, "metrics": describe_metrics(metrics), "missing": missing_notes(), "groups": groups}
    page = Page(title, data)
    if len(folders) == 1:
        page.copies[RUNS_FILE] = folders[0] / RUNS_FILE
    else:
        page.copies.update({f"{f.resolve().name}-{RUNS_FILE}": f / RUNS_FILE for f in folders})
    for group in groups:
        stem = "table" if group["id"] == "all" else f"table-{group['id']}"
        page.texts.update({f"{stem}-{m}.csv": tables_csv(group, m) for m in metrics})
    explorers = "".join(f'<div class="explorer" id="group-{esc(g["id"])}"></div>' for g in groups)
    for group in groups:
        group.update(placed=True, nav=False)
    page.sections = [("overview", "Overview", overview_html(folders, runs, failures)),
                     ("results", "Results per dataset", explorers),
                     ("cost", "Cost", cost_html(groups)),
                     ("failures", "Failures", failures_html(failures)),
                     ("downloads", "Downloads", downloads_html(page)
                      + "<p class=\"caption\">runs.csv.gz: every row of the results (one per dataset, split, "
                      "selector and k); table-METRIC.csv: the values of the tables above, every k (best: 1 for "
                      "the best of its k; not_significantly_worse: 1 for the cells marked ≈).</p>")]
    return page


def write_results_page(folders: list[Path], out: Path | None = None, metric: str = "accuracy") -> Path:
    """Write the page of ``folders`` into ``out`` (default :func:`default_out`); returns index.html's path."""
    page = results_page(folders, metric)
    return write_page(out if out is not None else default_out(folders), page)


__all__ = ["HTML_DIR", "default_out", "explorer_groups", "results_page", "write_results_page"]
