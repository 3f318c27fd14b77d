"""REPORT.md generation on a tiny hand-made layout whose numbers are worked out by hand.

The RFS paper's main results hold two datasets (allaml, glioma), two selectors (relieff, rfs),
k = 20 and 80 (the printed table's k), 3 repetitions of a 2-fold CV with 10 test samples per
fold, so one repetition's CV accuracy is a multiple of 5 points. Each cell's three per-repeat
accuracies are chosen so that it lies clearly inside or clearly outside the reproduction rule
(|z| <= 2 with z = (mean - printed) / sd over repetitions, and one test sample = 5 points).
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml

from fsbench.papers.claims import compare_variant, headline_claims
from fsbench.papers.layout import Layout
from fsbench.papers.report import (
    build_report,
)
from fsbench.report.results import config_comment, load_results, variant_description

N_TEST = 10  # per fold; 2 folds -> 20 test samples per repetition
# per-repeat CV accuracy (%) of each cell; printed values are RFS Table 1's
OURS = {
    # printed 95.89: mean 95, sd 5, z = -0.18, delta = -0.18 samples -> reproduces, within one sample
    ("allaml", "rfs", 20): [90, 100, 95],
    # printed 90.36: mean 55, sd 5, z = -7.1 -> neither
    ("allaml", "relieff", 20): [50, 55, 60],
    # printed 97.32: mean 98.33, sd 2.89, z = +0.35, +0.2 samples -> both
    ("allaml", "rfs", 80): [95, 100, 100],
    # printed 95.89: mean 95, sd 0 -> |z| infinite, but -0.18 samples -> within one sample only
    ("allaml", "relieff", 80): [95, 95, 95],
    # printed 74: mean 75, sd 5, z = +0.2 -> both
    ("glioma", "rfs", 20): [70, 75, 80],
    # printed 50: mean 70, sd 5, z = +4 -> neither
    ("glioma", "relieff", 20): [75, 65, 70],
    # printed 70: mean 50, sd 5, z = -4 -> neither
    ("glioma", "rfs", 80): [45, 50, 55],
    # printed 54: mean 55, sd 5, z = +0.2 -> both
    ("glioma", "relieff", 80): [50, 55, 60],
}


def _rows(experiment: str, repeats: dict[str, list[int]], shift: int = 0) -> list[dict]:
    """runs.csv rows; ``shift`` removes (repeat + 1) * shift correct answers from fold 0."""
    rows = []
    for (dataset, selector, k), accs in OURS.items():
        for repeat in repeats[dataset]:
            correct = accs[repeat] // 5  # of 20
            folds = [math.ceil(correct / 2) - shift * (repeat + 1), correct // 2]
            for fold, c in enumerate(folds):
                rows.append({"experiment": experiment, "dataset": dataset, "repeat": repeat, "fold": fold,
                             "selector": selector, "method": selector, "k": k, "accuracy": c / N_TEST,
                             "n_correct": c, "n_test": N_TEST, "n_train": 40, "C": 1.0, "params": "{}",
                             "task_seconds": 1.5})
    return rows


def _results_config(name: str, datasets: list[str]) -> dict:
    return {"name": name, "datasets": [*datasets, "lung"], "skipped_datasets": ["lung"],
            "selectors": [{"name": "relieff", "label": "relieff"}, {"name": "rfs", "label": "rfs"}],
            "protocol": {"kind": "kfold", "n_splits": 2, "n_repeats": 3}}


@pytest.fixture
def layout(tmp_path):
    configs, results = tmp_path / "configs" / "papers", tmp_path / "results" / "papers"
    (configs / "variants").mkdir(parents=True)
    (configs / "rfs.yaml").write_text("# Tiny RFS protocol.\n#\n# - gamma = 1, a choice.\nname: rfs\nseed: 0\n")
    (configs / "variants" / "rfs-select-all.yaml").write_text(
        "# Leakage study: selection on all data\n# before CV. More text.\n#\n# Other paragraph.\nname: x\n")
    main = results / "rfs"
    main.mkdir(parents=True)
    pd.DataFrame(_rows("rfs", {"allaml": [0, 1, 2], "glioma": [0, 1, 2]})).to_csv(main / "runs.csv.gz", index=False)
    (main / "config.yaml").write_text(yaml.safe_dump(_results_config("rfs", ["allaml", "glioma"])))
    log = [{"seconds": 10.0, "machine": "Linux x86_64, 2 cores", "n_run": 10},
           {"seconds": 20.0, "machine": "Linux x86_64, 2 cores", "n_run": 4}]
    (main / "runlog.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log))
    # the variant is still running: task files only, glioma's third repetition missing
    variant = results / "variants" / "rfs-select-all"
    (variant / "tasks").mkdir(parents=True)
    rows = pd.DataFrame(_rows("rfs-select-all", {"allaml": [0, 1, 2], "glioma": [0, 1]}, shift=1))
    for i, (_, task) in enumerate(rows.groupby(["dataset", "repeat", "fold", "selector"])):
        (variant / "tasks" / f"t{i:03d}__{i:012x}.json").write_text(json.dumps(task.to_dict("records")))
    (variant / "config.yaml").write_text(yaml.safe_dump(_results_config("rfs-select-all", ["allaml", "glioma"])))
    return Layout(configs=configs, results=results)


def _t_pvalue(diffs: list[float]) -> float:
    """Two-sided paired t-test p-value by the closed-form t CDF for 1 and 2 degrees of freedom."""
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    t = abs(mean / (sd / math.sqrt(n)))
    if n == 2:  # Cauchy
        return 1.0 - 2.0 / math.pi * math.atan(t)
    assert n == 3
    return 1.0 - t / math.sqrt(t * t + 2.0)


def _corrected_pvalue(diffs: list[float], rho: float) -> float:
    """Nadeau-Bengio by hand: t = mean / sqrt((1/J + rho/(1 - rho)) s^2), Student t with J - 1 dof."""
    from scipy.stats import t as student

    j = len(diffs)
    mean = sum(diffs) / j
    var = sum((d - mean) ** 2 for d in diffs) / (j - 1)
    t = mean / math.sqrt((1 / j + rho / (1 - rho)) * var)
    return float(2 * student.sf(abs(t), j - 1))


def test_reproduction_shares_in_summary(layout):
    report = build_report(layout)
    rfs_row = next(line for line in report.splitlines() if line.startswith("| RFS"))
    cells = [c.strip() for c in rfs_row.strip("|").split("|")]
    assert cells[1] == "complete"
    assert cells[2].startswith("2/6 (")
    assert "LUNG: not available here" in cells[2] and "Carcinomas: not in the config" in cells[2]
    assert cells[3] == "8/72"
    assert cells[4] == "4/8 (50%)"  # allaml rfs 20 and 80, glioma rfs 20, glioma relieff 80
    assert cells[5] == "5/8 (62%)"  # the same four and allaml relieff 80 (sd 0, 0.18 samples off)


def test_headline_claims_by_hand(layout):
    runs = load_results("rfs", layout.results / "rfs").runs
    claims = headline_claims("rfs", runs).set_index(["dataset", "k"])
    # allaml k=20: rfs - relieff per repeat = 40, 45, 35
    row = claims.loc[("allaml", 20)]
    assert row["is_best"] and row["runner_up"] == "relieff"
    assert row["margin"] == pytest.approx(40.0)
    assert row["plain_t_pvalue"] == pytest.approx(_t_pvalue([40, 45, 35]))
    # per fold (2 folds: rho = 1/2, Bouckaert-Frank): rfs 90 90 100 100 100 90, relieff 50 50 60 50 60 60
    assert row["n_splits"] == 6
    assert row["t_pvalue"] == pytest.approx(_corrected_pvalue([40, 40, 40, 50, 40, 30], 0.5))
    assert row["significant"] and row["significant_plain"]
    # glioma k=20: -5, 10, 5... i.e. 70-75, 75-65, 80-70
    row = claims.loc[("glioma", 20)]
    assert row["is_best"] and row["plain_t_pvalue"] == pytest.approx(_t_pvalue([-5, 10, 10]))
    # per fold: rfs 70 70 80 70 80 80, relieff 80 70 70 60 70 70
    assert row["t_pvalue"] == pytest.approx(_corrected_pvalue([-10, 0, 10, 10, 10, 10], 0.5))
    assert not row["significant"] and not row["significant_plain"]
    # allaml k=80: 0, 5, 5 -> best, p = 0.18; glioma k=80: relieff is better
    assert claims.loc[("allaml", 80)]["is_best"] and not claims.loc[("allaml", 80)]["significant"]
    assert claims.loc[("glioma", 80)]["best"] == "relieff"
    assert not claims.loc[("lung", 20)]["has_results"]
    # printed: RFS is the best of its printed row on all six datasets at both k
    assert claims["printed_best"].all()

    report = build_report(layout)
    assert ("RFS has the best accuracy on 2 of 2 datasets at k = 20; its margin over the runner-up is "
            "significant (corrected resampled t-test p < 0.05) on 1 (plain paired t-test: 1). As printed, it is the "
            "best on 2 of the same 2 "
            "(on 6 of all 6 printed rows).") in report
    assert "RFS has the best accuracy on 1 of 2 datasets at k = 80" in report
    assert "on 1 of 2 datasets at k = 80; its margin over the runner-up is significant (corrected " \
           "resampled t-test p < 0.05) on 0 (plain paired t-test: 0)." in report


def test_variant_difference_by_hand(layout):
    main = load_results("rfs", layout.results / "rfs")
    variant = load_results("rfs-select-all", layout.results / "variants" / "rfs-select-all")
    assert variant.source == "tasks" and variant.partial and not main.partial
    table = compare_variant(main.complete(), variant.complete(), [20, 80]).set_index(["dataset", "selector", "k"])
    # the variant loses (repeat + 1) of 20 test samples: -5, -10, -15 points
    allaml = table.loc[("allaml", "rfs", 20)]
    assert allaml["diff"] == pytest.approx(-10.0)
    assert allaml["main"] == pytest.approx(95.0) and allaml["variant"] == pytest.approx(85.0)
    assert allaml["n_repeats"] == 3
    # per fold (rho = 1/2), variant - main: fold 0 loses repeat + 1 of 10 test samples, fold 1 nothing
    assert allaml["t_pvalue"] == pytest.approx(_corrected_pvalue([-10, 0, -20, 0, -30, 0], 0.5))
    glioma = table.loc[("glioma", "relieff", 80)]  # only repetitions 0 and 1 are complete in the variant
    assert glioma["n_repeats"] == 2 and glioma["diff"] == pytest.approx(-7.5)
    assert glioma["t_pvalue"] == pytest.approx(_corrected_pvalue([-10, 0, -20, 0], 0.5))

    report = build_report(layout)
    assert "Leakage study: selection on all data before CV." in report  # first sentence names the variant
    assert "Other paragraph" not in report
    assert "| ALLAML | RFS | 20 | 95.00 | 85.00 | -10.00 | 0.4971 | 3 |" in report  # corrected p, above
    # mean over the two datasets at each k: (-10 + -7.5) / 2
    assert "- RFS: -8.75 points at k = 20 (2 datasets), -8.75 points at k = 80 (2 datasets)" in report
    assert "**Partial results**: only repetitions complete in both runs are compared." in report


def test_cost_and_protocol(layout):
    report = build_report(layout)
    # the log covers 14 of the 24 tasks: the report says the wall time is partial
    assert ("- Wall time: 30 s (0.01 h) over 2 invocation(s) (runlog.jsonl; the logged invocations ran 14 of "
            "its 24 tasks, the others' wall time was not recorded).") in report
    assert "- Machine: Linux x86_64, 2 cores" in report
    # 2 datasets x 3 repeats x 2 folds x 2 selectors = 24 tasks of 1.5 s, each counted once (not per k)
    assert "- Tasks (dataset x repetition x fold x selector): 24." in report
    assert "- Compute time, summed over tasks (one worker): 36 s (0.01 h)." in report
    assert "| glioma | 8/12 | 2/3 |" in report  # the variant's glioma: 2 of 3 repetitions
    assert "Tiny RFS protocol.\n\n- gamma = 1, a choice." in report
    assert "![rfs: accuracy vs number of selected features]" not in report  # no figure files here


def test_missing_papers_and_determinism(layout, tmp_path):
    report = build_report(layout)
    assert "Not run yet: no results in results/papers/dso-fs/." in report
    assert "Not run yet: no results in results/papers/sl2p/." in report
    dso_row = next(line for line in report.splitlines() if line.startswith("| DSO-FS"))
    assert "| not run yet |" in dso_row and "0/30" in dso_row
    assert "### rfs-standardize-train" not in report  # no such config or results in this layout
    assert str(tmp_path) not in report
    assert build_report(layout) == report
    # SL2P forensics needs no results: GLIOMA's printed values imply 36 test samples of 50, not 25
    assert "| GLIOM | 50 | 25 | 36 | no | not run |" in report


def test_figure_links_are_relative(layout):
    (layout.results / "rfs" / "curves.png").write_bytes(b"\x89PNG")
    report = build_report(layout)
    assert "![rfs: accuracy vs number of selected features](rfs/curves.png)" in report


def test_config_comment_and_variant_description(tmp_path):
    path = tmp_path / "v.yaml"
    path.write_text("# One line without a period\n# that ends here. Second.\nname: v\n# not a header\n")
    assert config_comment(path) == "One line without a period\nthat ends here. Second."
    assert variant_description(path) == "One line without a period that ends here."


def test_paper_tables_use_complete_repetitions_only(layout, tmp_path):
    # the main run with an unfinished fourth repetition of glioma (one task of four present)
    from fsbench.papers.reproduce import write_paper_tables
    from fsbench.report.results import complete_runs

    main = layout.results / "rfs"
    runs = pd.read_csv(main / "runs.csv.gz")
    extra = runs[(runs.dataset == "glioma") & (runs.repeat == 0) & (runs.selector == "rfs") & (runs.fold == 0)]
    partial = pd.concat([runs, extra.assign(repeat=3, accuracy=0.0, n_correct=0)], ignore_index=True)
    partial.to_csv(main / "runs.csv.gz", index=False)
    assert len(complete_runs(main, partial)) == len(runs)
    write_paper_tables("rfs", main)
    comparison = pd.read_csv(main / "comparison.csv")
    cell = comparison.query("dataset == 'glioma' and method == 'rfs' and k == 20").iloc[0]
    assert cell.n_repeats == 3 and cell.ours == pytest.approx(75.0)


def test_a_variant_with_a_row_the_paper_config_lacks_gets_its_own_table(tmp_path):
    """DSO-FS's ISOLET variant: its rows beside the printed ISOLET row, fixed-p DSO-FS at k = 100,
    and none of it in the paper's summary (which counts AR only)."""
    configs, results = tmp_path / "configs" / "papers", tmp_path / "results" / "papers"
    (configs / "variants").mkdir(parents=True)
    (configs / "dso-fs.yaml").write_text("# Tiny DSO-FS protocol.\nname: dso-fs\n")
    (configs / "variants" / "dso-fs-isolet.yaml").write_text("# ISOLET under a reduced protocol.\nname: x\n")

    def rows(dataset, per_selector, n_test=20):
        out = []
        for (selector, method, params), correct in per_selector.items():
            for repeat, c in enumerate(correct):
                out.append({"dataset": dataset, "repeat": repeat, "fold": 0, "selector": selector,
                            "method": method, "k": 100, "accuracy": c / n_test, "n_correct": c,
                            "n_test": n_test, "n_train": 30, "C": 1.0, "params": params, "task_seconds": 1.0,
                            "diag_collapsed": selector == "dso-p0.5" or (selector == "dso-p1.0" and repeat == 1)})
        return out

    def config(name, dataset, selectors):
        return {"name": name, "datasets": [dataset], "protocol": {"kind": "holdout", "n_trials": 2},
                "selectors": [{"name": m, "label": s} for s, m in selectors]}

    main = results / "dso-fs"
    main.mkdir(parents=True)
    pd.DataFrame(rows("ar", {("mrmr", "mrmr", "{}"): [18, 17]})).to_csv(main / "runs.csv.gz", index=False)
    (main / "config.yaml").write_text(yaml.safe_dump(config("dso-fs", "ar", [("mrmr", "mrmr")])))
    variant = results / "variants" / "dso-fs-isolet"
    variant.mkdir(parents=True)
    # mRMR 90, 95 -> 92.50 ± 3.54; DSO-FS p = 0.5: 80, 90 -> 85.00 ± 7.07; p = 1: 100, 95 -> 97.50 ± 3.54
    per = {("mrmr", "mrmr", "{}"): [18, 19], ("dso-p0.5", "dso", '{"p": 0.5}'): [16, 18],
           ("dso-p1.0", "dso", '{"p": 1.0}'): [20, 19]}
    pd.DataFrame(rows("isolet", per)).to_csv(variant / "runs.csv.gz", index=False)
    (variant / "config.yaml").write_text(yaml.safe_dump(config(
        "dso-fs-isolet", "isolet", [("mrmr", "mrmr"), ("dso-p0.5", "dso"), ("dso-p1.0", "dso")])))

    report = build_report(Layout(configs=configs, results=results))
    section = report.split("### dso-fs-isolet")[-1].split("\n### ")[0]
    assert "Rows of the paper's tables that its own config does not run (ISOLET)" in section
    isolet = next(line for line in section.splitlines() if line.startswith("| ISOLET | **92.50"))
    assert "**92.50 ± 3.54** (90.82, +1.68)" in isolet  # printed mRMR on ISOLET: 90.82
    assert "not run: method or k not run (95.23*)" in isolet  # the tuned DSO-FS is not in the variant
    assert ("| ISOLET | 100 | 85.00 ± 7.07 [W collapsed in 2/2 splits] | 97.50 ± 3.54 [W collapsed in 1/2 splits] |"
            in section)
    assert "No shared rows yet." not in section
    dso_row = next(line for line in report.splitlines() if line.startswith("| DSO-FS"))
    assert "| 1/30 |" in dso_row  # the summary counts AR's mRMR cell only


def test_tables_mark_methods_not_significantly_worse_than_the_best(layout):
    from fsbench.papers import TABLES
    from fsbench.papers.tables import compare_table, format_paper_table

    runs = load_results("rfs", layout.results / "rfs").runs
    table = TABLES["rfs"][0]
    cells = compare_table(table, runs).set_index(["dataset", "method", "k"])
    # glioma k=20: rfs (75) best; relieff - by fold, rfs - relieff = -10 0 10 10 10 10
    assert _corrected_pvalue([-10, 0, 10, 10, 10, 10], 0.5) >= 0.05
    assert cells.loc[("glioma", "rfs", 20), "not_worse"] is True
    assert cells.loc[("glioma", "relieff", 20), "not_worse"] is True
    # allaml k=20: rfs - relieff = 40 40 40 50 40 30, p far below 0.05
    assert _corrected_pvalue([40, 40, 40, 50, 40, 30], 0.5) < 0.05
    assert cells.loc[("allaml", "relieff", 20), "not_worse"] is False
    assert cells.loc[("lung", "rfs", 20), "not_worse"] is None  # not run
    text = format_paper_table(table, compare_table(table, runs))
    glioma = next(line for line in text.splitlines() if line.startswith("| GLIOMA") and "**75.00" in line)
    assert "70.00 ± 5.00 ≈ (" in glioma


def test_ranks_across_datasets_by_hand(layout):
    # k = 20: RFS beats ReliefF on both datasets (95 vs 55, 75 vs 70): ranks 1 and 2.
    # Friedman: 12 N / (k (k + 1)) (sum R_j^2 - k (k + 1)^2 / 4) = 12*2/6 (1 + 4 - 4.5) = 2, 1 dof;
    # Nemenyi CD = q(2) sqrt(k (k + 1) / (6 N)) = 1.960 * sqrt(6 / 12) = 1.386
    from scipy.stats import chi2

    report = build_report(layout, write_figures=True)
    row = next(line for line in report.splitlines() if line.startswith("| k = 20 | 2 | 2 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "2.00" and cells[4] == f"{chi2.sf(2.0, 1):.4f}" and cells[7] == "1.39"
    assert "Average ranks at k = 20 (1 = best): RFS 1.00, RF 2.00." in report
    assert (layout.results / "rfs" / "cd_k20.png").is_file() and "![rfs: critical-difference diagram, k = 20]" in report
    assert "No rankings.csv.gz in these results yet" in report
