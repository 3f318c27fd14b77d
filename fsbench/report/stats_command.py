"""What ``fsbench stats`` does: read results folders, build the tables of
:mod:`fsbench.report.statistics`, check everything, then write the files and return the summary.

Nothing is written before every input has been checked and every table computed: a bad input
(no results, one selector, a --k or --baseline the results lack, an unknown classifier, alpha
outside (0, 1)) is a FsbenchError and leaves no file behind.

Several folders are concatenated: their datasets become blocks. A dataset name found in more
than one folder is renamed ``dataset (folder name)`` in every output, so that each stays its
own block. Rankings (``rankings.csv.gz``, for stability) are read when the folder has them;
without them stability is skipped with a note. A dataset's number of features (which the
stability estimators need) comes from the dataset registry, or for a user's data file from
reading it at the path its config.yaml records (skipped with a note when it cannot be read).

``metric`` (:data:`fsbench.evaluation.metrics.ALL_METRICS`, default accuracy) is the score ranked, tested and
plotted; a classification metric other than accuracy needs every folder's per-class counts (a
folder written before fsbench recorded them is refused in one sentence). A selection metric
(relevant recall or precision, probe rate) compares the datasets that have it, and leaves out the
rows of the others with a note; results none of whose rows have it are refused.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import (
    check_metric,
    check_metric_name,
    datasets_without_metric,
    is_selection_metric,
    metric_label,
    missing_reason,
    rows_without_selection,
)
from fsbench.report import statistics as S
from fsbench.report.tables import FORMATS, one_classifier
from fsbench.stats import ROPE

#: the output folder's name under the results folder (one folder), or under the folders' common
#: parent, as stats/NAME1+NAME2 (several)
STATS_DIR = "stats"


@dataclass
class Inputs:
    """The results of every folder, of one classifier, concatenated."""

    runs: pd.DataFrame
    rankings: pd.DataFrame | None
    protocols: dict[str, dict[str, Any]]
    n_features: dict[str, int]
    notes: list[str] = field(default_factory=list)


@dataclass
class Output:
    """The summary to print, the notes (one line each) and the files written."""

    summary: str
    notes: list[str]
    written: list[Path]


# ----------------------------------------------------------------------------- reading
def _config(folder: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load((folder / "config.yaml").read_text()) if (folder / "config.yaml").is_file() else None
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        doc = None
    return doc if isinstance(doc, dict) else {}


def read_rankings(folder: Path, runs: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """A folder's rankings (columns dataset, repeat, fold, selector, position, feature), None
    when it has none; FsbenchError when the file is damaged or, given the folder's ``runs``, was
    written by another configuration than theirs (the fingerprint in its gzip header)."""
    from fsbench.storage.rankings import RANKINGS_FILE, load_rankings, rankings_fingerprint

    if not (folder / RANKINGS_FILE).is_file():
        return None
    rankings = load_rankings(folder)
    recorded = rankings_fingerprint(folder)
    if runs is not None and recorded is not None and "fingerprint" in runs:
        ours = set(runs["fingerprint"].astype(str))
        if ours != {recorded}:
            raise FsbenchError(f"{str(folder / RANKINGS_FILE)!r} was written by configuration {recorded}, the rows "
                               f"beside it by {', '.join(sorted(ours))}; move it away, or regenerate it with "
                               f"'fsbench rankings regenerate {folder}'.")
    return rankings


def _n_features(dataset: str, config: dict[str, Any]) -> int | None:
    """The number of features of ``dataset`` as the config ran it (a user's file read again; data
    with known features: the generator's or base's features plus the probes); None if unknown."""
    from fsbench.datasets import resolve

    known = {k.get("name"): k for k in config.get("known_data") or [] if isinstance(k, dict)}
    if dataset in known:
        entry = known[dataset]
        try:  # a hand-edited config.yaml: the size unknown, stability skipped with a note
            probes = int((entry.get("probes") or {}).get("n", 0))
            if entry.get("generate"):
                return int(entry["generate"]["n_features"]) + probes
            base = _file_features(entry["base_file"]) if entry.get("base_file") else _n_features(entry["base"], {})
        except (AttributeError, KeyError, TypeError, ValueError):
            return None
        return None if base is None else base + probes
    files = {f.get("name"): f for f in config.get("data_files") or [] if isinstance(f, dict)}
    if dataset in files:
        return _file_features(files[dataset])
    try:
        return int(resolve(dataset).n_features)
    except FsbenchError:
        return None


def _file_features(entry: dict[str, Any]) -> int | None:
    from fsbench.datasets.user_files.files import read_data_file

    try:
        data = read_data_file(entry["path"], label=entry.get("label"), x=entry.get("x"), y=entry.get("y"))
    except (FsbenchError, OSError, KeyError):
        return None
    return int(data.X.shape[1])


def load_inputs(folders: list[Path], classifier: str | None, *, metric: str = "accuracy") -> Inputs:
    """Every folder's runs (of ``classifier``), rankings, protocol and datasets' sizes; FsbenchError
    when a folder lacks the per-class counts ``metric`` needs, or when no row of any folder has
    the selection metric ``metric``. The rows without a selection metric are left out (with a
    note naming the datasets left out entirely)."""
    from fsbench.storage.runs import load_runs

    if len({f.resolve() for f in folders}) < len(folders):
        raise FsbenchError("A results folder is given twice; give each once.")
    loaded = []
    for folder in folders:
        runs = load_runs(folder)
        try:
            runs = one_classifier(runs, classifier, "the statistics compare the selectors under one")
        except FsbenchError as exc:
            raise FsbenchError(f"In {folder}: {str(exc)[0].lower()}{str(exc)[1:]}") from None
        if not is_selection_metric(metric):  # a selection metric: checked on every folder's rows together
            check_metric(runs, metric, source=str(folder))
        loaded.append((folder, runs.drop(columns="classifier", errors="ignore"), read_rankings(folder, runs)))
    seen: dict[str, int] = {}
    for _, runs, _ in loaded:
        for dataset in {str(d) for d in runs["dataset"].unique()}:
            seen[dataset] = seen.get(dataset, 0) + 1
    all_runs, all_rankings, protocols, n_features, notes = [], [], {}, {}, []
    for folder, runs, rankings in loaded:
        config = _config(folder)
        names = {d: (f"{d} ({folder.name})" if seen[d] > 1 else d) for d in map(str, runs["dataset"].unique())}
        runs = runs.assign(dataset=runs["dataset"].astype(str).map(names))
        all_runs.append(runs)
        for original, name in names.items():
            protocols[name] = dict(config.get("protocol") or {})
            if rankings is not None and (d := _n_features(original, config)) is not None:
                n_features[name] = d
            elif rankings is not None:
                notes.append(f"Stability of {name} skipped: its number of features is unknown (its data file "
                             "cannot be read)")
        if rankings is None:
            notes.append(f"No rankings.csv.gz in {folder}: stability skipped for its datasets (results written "
                         "before fsbench kept rankings; rerun the experiment to get them)")
        else:
            rankings = rankings[rankings["dataset"].astype(str).isin(names)]
            all_rankings.append(rankings.assign(dataset=rankings["dataset"].astype(str).map(names)))
    renamed = sorted(d for d, n in seen.items() if n > 1)
    if renamed:
        notes.append(f"Datasets found in several folders are kept apart as 'dataset (folder)': {', '.join(renamed)}")
    runs = pd.concat(all_runs, ignore_index=True)
    runs["selector"] = runs["selector"].astype(str)
    rankings = pd.concat(all_rankings, ignore_index=True) if all_rankings else None
    if is_selection_metric(metric):
        check_metric(runs, metric, source=", ".join(str(f) for f in folders))
        lacking = datasets_without_metric(runs, metric)
        if lacking:
            notes.append(f"{', '.join(lacking)} left out: no {metric_label(metric, percent=False)} (the dataset "
                         f"{missing_reason(metric)})")
        runs = runs[~rows_without_selection(runs, metric)].reset_index(drop=True)
        if rankings is not None:
            rankings = rankings[~rankings["dataset"].astype(str).isin(lacking)]
    if rankings is not None:
        rankings["selector"] = rankings["selector"].astype(str)
    return Inputs(runs, rankings, protocols, n_features, notes)


def default_out(folders: list[Path]) -> Path:
    """RESULTS_DIR/stats for one folder; COMMON_PARENT/stats/NAME1+NAME2 for several."""
    if len(folders) == 1:
        return folders[0] / STATS_DIR
    parent = Path(os.path.commonpath([str(f.resolve()) for f in folders]))
    try:
        parent = parent.relative_to(Path.cwd())
    except ValueError:
        pass
    return parent / STATS_DIR / "+".join(f.resolve().name for f in folders)


# ----------------------------------------------------------------------------- checking
def check_options(alpha: float, rope: float, fmt: str) -> None:
    if not (math.isfinite(alpha) and 0 < alpha < 1):
        raise FsbenchError(f"--alpha must lie strictly between 0 and 1 (for example 0.05); got {alpha:g}.")
    if not (math.isfinite(rope) and rope >= 0):
        raise FsbenchError(f"--rope is a difference of accuracy (0.01 = 1 point) and must be >= 0; got {rope:g}.")
    if fmt not in FORMATS:
        raise FsbenchError(f"Unknown format {fmt!r}; use one of {', '.join(FORMATS)}.")


def _check_selectors(runs: pd.DataFrame, baseline: str | None) -> list[str]:
    selectors = [str(s) for s in dict.fromkeys(runs["selector"])]
    if len(selectors) < 2:
        raise FsbenchError(f"The results hold one selector ({selectors[0]}); statistics compare two or more: add "
                           "results folders or selectors.")
    if baseline is not None and baseline not in selectors:
        raise FsbenchError(f"No selector {baseline!r} in the results; choose --baseline among {', '.join(selectors)}.")
    return selectors


def _single_split_notes(compared: pd.DataFrame) -> list[str]:
    """A note naming the datasets (and k) compared over one split only: the per-dataset tests
    pair splits, so they have no rows there (the ranks and the across-dataset tests pair the
    datasets and still run)."""
    from fsbench.stats import single_split_groups

    single = single_split_groups(S.common_splits(compared)[0]) if len(compared) else []
    if not single:
        return []
    datasets = list(dict.fromkeys(d for d, _ in single))
    ks = sorted({k for _, k in single})
    at = f"k = {ks[0]}" if len(ks) == 1 else f"k in {', '.join(map(str, ks))}"
    return [f"{', '.join(datasets)} {'has' if len(datasets) == 1 else 'have'} one split ({at}), and the per-dataset "
            "tests of pairwise.csv (corrected t-test, Wilcoxon, Bayesian) and selection stability compare two or "
            "more splits, so they are left out there; run more repetitions (protocol.n_trials or n_repeats) to get "
            "them"]


# ----------------------------------------------------------------------------- the command
def run_stats(folders: list[Path], *, k: int | str | None = None, classifier: str | None = None,
              baseline: str | None = None, alpha: float = 0.05, rope: float = ROPE, out: Path | None = None,
              fmt: str = "markdown", metric: str = "accuracy") -> Output:
    """Compute every table of ``fsbench stats`` and write them (with the figures) under ``out``.

    ``k``: an int, ``"all"`` (a Friedman block per (dataset, k)) or None (:func:`S.default_k`).
    ``metric``: the score compared (default accuracy).
    """
    from fsbench.report.stats_summary import format_summary, selector_summary
    from fsbench.storage.lock import check_writable_folder

    check_options(alpha, rope, fmt)
    check_metric_name(metric)
    inputs = load_inputs(folders, classifier, metric=metric)
    runs, notes = inputs.runs, list(inputs.notes)
    selectors = _check_selectors(runs, baseline)
    if k == "all":
        k_table, at_k = None, S.default_k(runs)
        compared = runs
    else:
        at_k = S.default_k(runs) if k is None else int(k)
        have = S.check_k(runs, at_k)
        lacking = [d for d in dict.fromkeys(runs["dataset"].astype(str)) if d not in have]
        if lacking:
            notes.append(f"k = {at_k} was not run on {', '.join(lacking)}: left out of the comparisons")
        k_table, compared = at_k, runs[runs["k"] == at_k]
    out = out if out is not None else default_out(folders)
    check_writable_folder(out)
    compared, split_notes = S.common_splits(compared)
    notes += split_notes
    notes += _single_split_notes(compared)
    friedman = S.ranks_and_friedman(compared, k_table, alpha, metric=metric)
    if friedman.dropped:
        notes.append(f"Left out of the ranks (absent from some {friedman.block_name}): {', '.join(friedman.dropped)}")
    if friedman.note:
        notes.append(friedman.note)
    pairwise = S.pairwise_table(compared, S.split_fractions(compared, inputs.protocols), baseline=baseline,
                                rope=rope, alpha=alpha, metric=metric)
    stability = None
    if inputs.rankings is not None:
        rankings = inputs.rankings[inputs.rankings["selector"].isin(selectors)]
        stability = S.stability_table(rankings, S.ks_by_dataset(runs), inputs.n_features)
    cost = S.cost_table(runs)
    points = S.pareto_points(S.common_splits(runs[runs["k"] == at_k])[0], at_k, metric=metric)
    summary_table = selector_summary(selectors, friedman, points, stability, cost, pairwise, at_k, baseline,
                                     metric=metric)
    summary = format_summary(summary_table, friedman, pairwise, k_table, at_k, fmt, baseline, classifier, alpha,
                             metric=metric)
    at = f"k = {k_table}" if k_table is not None else "every k (descriptive)"
    written = _write(out, friedman, pairwise, stability, cost, points, selectors, alpha, classifier, runs, at,
                     metric)
    return Output(summary, notes, written)


#: every file ``fsbench stats`` may write: a run replaces the previous run's set as a whole
STATS_FILES = ("ranks.csv", "friedman.csv", "cd.png", "cd.pdf", "pairwise.csv", "stability.csv", "stability.png",
               "stability.pdf", "cost.csv", "pareto.png", "pareto.pdf")


def _write(out: Path, friedman: S.FriedmanTables, pairwise: pd.DataFrame, stability: pd.DataFrame | None,
           cost: pd.DataFrame, points: pd.DataFrame, selectors: list[str], alpha: float,
           classifier: str | None, runs: pd.DataFrame, at: str, metric: str = "accuracy") -> list[Path]:
    """Write the set of files into ``out``, replacing the previous set only once every file is
    written (:func:`fsbench.report.output_set.replace_outputs`): a failure leaves it intact."""
    from fsbench.report.output_set import replace_outputs

    return replace_outputs(out, STATS_FILES, lambda folder: _write_files(
        folder, friedman, pairwise, stability, cost, points, selectors, alpha, classifier, runs, at, metric))


def _write_files(out: Path, friedman: S.FriedmanTables, pairwise: pd.DataFrame, stability: pd.DataFrame | None,
                 cost: pd.DataFrame, points: pd.DataFrame, selectors: list[str], alpha: float,
                 classifier: str | None, runs: pd.DataFrame, at: str, metric: str = "accuracy") -> list[Path]:
    from fsbench.report.plots import spread_captions
    from fsbench.report.stats_figures import cd_figure, pareto_figure, stability_figure
    from fsbench.storage.atomic import atomic_write_text

    written: list[Path] = []

    def csv(name: str, table: pd.DataFrame) -> None:
        atomic_write_text(out / name, table.to_csv(index=False, float_format="%.10g"))
        written.append(out / name)

    of = f" (classifier {classifier})" if classifier else ""
    name = metric_label(metric, percent=False)
    by = "" if metric == "accuracy" else f" by {name}"
    if friedman.ranks is not None and friedman.friedman is not None:
        csv("ranks.csv", friedman.ranks)
        csv("friedman.csv", friedman.friedman)
        written += cd_figure(friedman, out / "cd", alpha, title=f"Critical difference diagram{by} at {at}{of}")
    csv("pairwise.csv", pairwise)
    if stability is not None:
        csv("stability.csv", stability)
        if len(stability):
            written += stability_figure(stability, out / "stability", selectors, title=f"Selection stability{of}")
    csv("cost.csv", cost)
    captions = set(spread_captions(runs).values())
    splits = captions.pop().split(" over ", 1)[-1] if len(captions) == 1 else None
    written += pareto_figure(points, out / "pareto", selectors, title=f"{name[0].upper()}{name[1:]} and cost{of}",
                             n_splits=splits, metric=metric)
    return written
