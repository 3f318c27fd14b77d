"""Selection metrics (relevant recall, relevant precision, probe rate): hand-worked values of
rows and pooled groups, and ``fsbench table``, ``plot`` and ``stats --metric`` on hand-made results
whose expected numbers are computed here from the counts written (ratio of the summed counts per
repetition, then mean and std over repetitions), ranks from scipy's ``rankdata`` and the Pareto
front by brute force. Probe rate is lower-is-better: its best marks, ranks, wins and front are
checked to go that way.
"""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats as st

from fsbench.cli import main
from fsbench.evaluation.metrics import (
    ALL_METRICS,
    SELECTION_METRICS,
    higher_is_better,
    metric_label,
    pooled_metric,
    row_metric,
)

# ----------------------------------------------------------------------------- hand-worked rows
# k = 3 < n_relevant = 5: recall 2 / min(3, 5) = 2/3, precision 2/3, probe rate 1/3;
# k = 8 > n_relevant = 5: recall 4 / min(8, 5) = 4/5, precision 4/8, probe rate 3/8.
HAND = pd.DataFrame({"dataset": ["d", "d", "e"], "selector": ["s", "s", "s"], "k": [3, 8, 8],
                     "relevant_selected": [2, 4, np.nan], "n_relevant": [5, 5, np.nan],
                     "probes_selected": [1, 3, np.nan], "n_probes": [10, 10, np.nan]})


def test_hand_worked_row_values() -> None:
    expected = {"relevant_recall": [2 / 3, 4 / 5], "relevant_precision": [2 / 3, 4 / 8],
                "probe_rate": [1 / 3, 3 / 8]}
    for metric, values in expected.items():
        got = row_metric(HAND, metric).to_numpy()
        np.testing.assert_allclose(got[:2], values, rtol=0, atol=1e-15)
        assert np.isnan(got[2])  # dataset e records none of the columns


def test_hand_worked_pooled_values_are_ratios_of_sums() -> None:
    # the group of the two rows of d: (2 + 4) / (3 + 5) = 3/4 for recall (the mean of the row values
    # would be 11/15), (2 + 4) / (3 + 8) = 6/11 for precision, (1 + 3) / (3 + 8) = 4/11 for probe rate
    expected = {"relevant_recall": 6 / 8, "relevant_precision": 6 / 11, "probe_rate": 4 / 11}
    for metric, value in expected.items():
        pooled = pooled_metric(HAND, ["dataset"], metric=metric)
        assert pooled[0] == pytest.approx(value, abs=1e-15)
        assert np.isnan(pooled[1])
        # a group holding a row without the columns has no value
        assert np.isnan(pooled_metric(HAND, ["selector"], metric=metric)[0])


def test_direction_and_labels() -> None:
    assert [m for m in ALL_METRICS if not higher_is_better(m)] == ["probe_rate"]
    assert [metric_label(m) for m in SELECTION_METRICS] == ["relevant recall (%)", "relevant precision (%)",
                                                           "probe rate (%)"]


def test_the_cli_offers_exactly_the_metrics() -> None:
    for name in ("table", "plot", "stats"):
        option = next(p for p in main.commands[name].params if p.name == "metric")
        assert tuple(option.type.choices) == ALL_METRICS


# ----------------------------------------------------------------------------- hand-made results
SELECTORS = ["fisher", "relieff", "random"]
#: dataset -> (n_relevant, n_probes, each selector's chance of a relevant and of a probe feature)
KNOWN = {"gen_a": (6, 20, [0.85, 0.55, 0.20], [0.05, 0.30, 0.60]),
         "gen_b": (12, 30, [0.80, 0.20, 0.50], [0.05, 0.60, 0.30]),
         "gen_c": (4, 15, [0.30, 0.90, 0.60], [0.10, 0.30, 0.65])}
PLAIN = "plain"  # a dataset without known relevant features or probes
KS = [5, 10]
REPEATS, FOLDS = 3, 3
COLUMNS = {"relevant_recall": ("relevant_selected", "n_relevant"),
           "relevant_precision": ("relevant_selected", "n_relevant"),
           "probe_rate": ("probes_selected", "n_probes")}


def write_results(folder: Path, *, known: dict | None = None, plain: bool = True, seed: int = 0) -> list[dict]:
    """runs.csv.gz and config.yaml of a made-up 3 x 3-fold CV run; returns its rows."""
    rng = np.random.default_rng(seed)
    known = KNOWN if known is None else known
    rows = []
    datasets = [*known, *([PLAIN] if plain else [])]
    for dataset, repeat, fold, (s, selector) in itertools.product(datasets, range(REPEATS), range(FOLDS),
                                                                  enumerate(SELECTORS)):
        for k in KS:
            correct = int(rng.integers(20, 40))
            row = {"experiment": "made-up", "dataset": dataset, "repeat": repeat, "fold": fold,
                   "selector": selector, "method": selector, "k": k, "accuracy": correct / 40, "n_correct": correct,
                   "n_test": 40, "n_train": 80, "fit_seconds": 0.1 * (3 - s), "task_seconds": 1.0}
            if dataset in known:
                n_relevant, n_probes, p_relevant, p_probe = known[dataset]
                relevant = int(rng.binomial(min(k, n_relevant), p_relevant[s]))
                probes = int(rng.binomial(min(k - relevant, n_probes), p_probe[s]))
                row.update(relevant_selected=relevant, n_relevant=n_relevant, probes_selected=probes,
                           n_probes=n_probes)
            rows.append(row)
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "runs.csv.gz", index=False)
    protocol = {"kind": "kfold", "n_splits": FOLDS, "n_repeats": REPEATS}
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": folder.name, "datasets": datasets,
                                                        "protocol": protocol}))
    return rows


def terms(row: dict, metric: str) -> tuple[int, int]:
    """The definition, written out: (numerator, denominator) of one row."""
    if metric == "relevant_recall":
        return row["relevant_selected"], min(row["k"], row["n_relevant"])
    if metric == "relevant_precision":
        return row["relevant_selected"], row["k"]
    return row["probes_selected"], row["k"]


def repetition_values(rows: list[dict], metric: str, dataset: str, selector: str, k: int) -> list[float]:
    """Each repetition's value: its folds' summed numerators over their summed denominators."""
    out = []
    for repeat in range(REPEATS):
        mine = [r for r in rows if (r["dataset"], r["selector"], r["k"], r["repeat"]) == (dataset, selector, k, repeat)]
        assert len(mine) == FOLDS
        parts = [terms(r, metric) for r in mine]
        out.append(sum(n for n, _ in parts) / sum(d for _, d in parts))
    return out


def expected_cells(rows: list[dict], metric: str, k: int) -> dict[tuple[str, str], tuple[float, float]]:
    """(dataset, selector) -> mean and std (ddof 1) over repetitions, x 100, of the known datasets."""
    return {(d, s): (100 * float(np.mean(v)), 100 * float(np.std(v, ddof=1)))
            for d in KNOWN for s in SELECTORS
            for v in [repetition_values(rows, metric, d, s, k)]}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert lines[0].count(". ") == 0 and lines[0].endswith("."), lines[0]  # one sentence
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def markdown_cells(text: str) -> dict[tuple[str, str], str]:
    header = next(line for line in text.splitlines() if line.startswith("| dataset"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    cells = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| dataset"):
            parts = [c.strip() for c in line.strip("|").split("|")]
            for column, value in zip(columns, parts[1:], strict=True):
                cells[(parts[0], column)] = value
    return cells


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("selection") / "res"
    return folder, write_results(folder)


def test_the_made_up_results_separate_the_selectors(made) -> None:
    """No two selectors tie on a dataset's mean (so that best marks and ranks are unambiguous)."""
    _, rows = made
    for metric, k in itertools.product(SELECTION_METRICS, KS):
        cells = expected_cells(rows, metric, k)
        for d in KNOWN:
            means = sorted(cells[(d, s)][0] for s in SELECTORS)
            assert min(np.diff(means)) > 0.01, (metric, k, d, means)


@pytest.mark.parametrize("metric", SELECTION_METRICS)
def test_table_csv_values(made, metric: str) -> None:
    folder, rows = made
    result = invoke("table", str(folder), "--metric", metric, "--format", "csv", "--k", "5")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(io.StringIO(result.stdout))
    expected = expected_cells(rows, metric, 5)
    for row in table.itertuples():
        mean, std = getattr(row, f"{metric}_mean"), getattr(row, f"{metric}_std")
        if row.dataset == PLAIN:
            assert np.isnan(mean) and np.isnan(std)
        else:
            assert mean == pytest.approx(expected[(row.dataset, row.selector)][0], abs=1e-4)  # 4 decimals printed
            assert std == pytest.approx(expected[(row.dataset, row.selector)][1], abs=1e-4)
    assert set(table["dataset"]) == {*KNOWN, PLAIN}


@pytest.mark.parametrize("metric", SELECTION_METRICS)
def test_table_markdown_marks_the_best_in_the_metric_s_direction(made, metric: str) -> None:
    folder, rows = made
    result = invoke("table", str(folder), "--metric", metric, "--k", "10")
    assert result.exit_code == 0, result.output
    label = {"relevant_recall": "Relevant recall (%)", "relevant_precision": "Relevant precision (%)",
             "probe_rate": "Probe rate (%)"}[metric]
    assert result.output.startswith(f"{label} with the top 10 features")
    assert ("best (lowest) per row" in result.output) == (metric == "probe_rate")
    cells = markdown_cells(result.output)
    expected = expected_cells(rows, metric, 10)
    pick = min if metric == "probe_rate" else max
    for dataset in KNOWN:
        best = pick(SELECTORS, key=lambda s: expected[(dataset, s)][0])
        for selector in SELECTORS:
            mean, std = expected[(dataset, selector)]
            text = cells[(dataset, selector)]
            assert text.strip("*") == f"{mean:.2f} ± {std:.2f}"
            assert text.startswith("**") == (selector == best), (dataset, selector, text)
    assert all(cells[(PLAIN, s)] == "" for s in SELECTORS)  # no value, no mark


def test_latex_table_marks_the_lowest_probe_rate(made) -> None:
    folder, rows = made
    result = invoke("table", str(folder), "--metric", "probe_rate", "--k", "5", "--format", "latex")
    assert result.exit_code == 0, result.output
    expected = expected_cells(rows, "probe_rate", 5)
    for dataset in KNOWN:
        line = next(line for line in result.output.splitlines() if line.startswith(dataset.replace("_", r"\_")))
        best = min(SELECTORS, key=lambda s: expected[(dataset, s)][0])
        bold = re.findall(r"\\textbf\{([0-9.]+)", line)
        assert bold == [f"{expected[(dataset, best)][0]:.2f}"], line


def test_plot_draws_the_known_datasets_only(made, tmp_path, saved_figures) -> None:
    folder, rows = made
    figures = saved_figures
    result = invoke("plot", str(folder), "--metric", "probe_rate", "-o", str(tmp_path / "rate"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "rate.png").is_file() and (tmp_path / "rate.pdf").is_file()
    assert PLAIN in result.stderr and "left out" in result.stderr and "probe" in result.stderr
    (panels,) = figures
    assert [title.splitlines()[0] for title, _, _ in panels] == list(KNOWN)
    assert {ylabel for _, ylabel, _ in panels} == {"probe rate (%)"}
    for title, _, lines in panels:
        dataset = title.splitlines()[0]
        for selector in SELECTORS:
            xy = lines[selector]
            np.testing.assert_allclose(xy[:, 0], KS)
            means = [expected_cells(rows, "probe_rate", k)[(dataset, selector)][0] for k in KS]
            np.testing.assert_allclose(xy[:, 1], means, rtol=0, atol=1e-9)


def block_values(rows: list[dict], metric: str, k: int) -> np.ndarray:
    """Known datasets x selectors: the mean over repetitions of each repetition's pooled value."""
    return np.array([[np.mean(repetition_values(rows, metric, d, s, k)) for s in SELECTORS] for d in KNOWN])


@pytest.mark.parametrize("metric", SELECTION_METRICS)
def test_stats_ranks_in_the_metric_s_direction(made, tmp_path, metric: str) -> None:
    folder, rows = made
    out = tmp_path / "stats"
    result = invoke("stats", str(folder), "--metric", metric, "--k", "10", "-o", str(out), "--format", "csv")
    assert result.exit_code == 0, result.output
    assert f"Note: {PLAIN} left out" in result.stderr
    values = block_values(rows, metric, 10)
    ranks = st.rankdata(values if metric == "probe_rate" else -values, axis=1).mean(axis=0)
    table = pd.read_csv(out / "ranks.csv")
    np.testing.assert_allclose(table.set_index("selector").loc[SELECTORS, "average_rank"], ranks, atol=1e-12)
    assert table["selector"].tolist() == [SELECTORS[j] for j in np.argsort(ranks, kind="stable")]
    assert (table["n_blocks"] == len(KNOWN)).all()
    friedman = pd.read_csv(out / "friedman.csv")
    assert friedman["statistic"].iloc[0] == pytest.approx(st.friedmanchisquare(*values.T).statistic)
    summary = pd.read_csv(io.StringIO(result.stdout))
    assert summary["selector"].tolist() == table["selector"].tolist()
    for row in summary.itertuples():
        j = SELECTORS.index(row.selector)
        assert getattr(row, metric) == pytest.approx(100 * values[:, j].mean(), abs=1e-4)
    cost = pd.read_csv(out / "cost.csv")
    assert set(cost["dataset"]) == set(KNOWN)  # the rows of the dataset without the metric are left out


def per_split(rows: list[dict], metric: str, dataset: str, selector: str, k: int) -> np.ndarray:
    """Each split's (fold's) own value, in (repeat, fold) order."""
    mine = sorted((r for r in rows if (r["dataset"], r["selector"], r["k"]) == (dataset, selector, k)),
                  key=lambda r: (r["repeat"], r["fold"]))
    return np.array([n / d for n, d in (terms(r, metric) for r in mine)])


def test_stats_pairwise_and_wins_go_by_the_lower_probe_rate(made, tmp_path) -> None:
    folder, rows = made
    out = tmp_path / "stats"
    rope = 0.01
    result = invoke("stats", str(folder), "--metric", "probe_rate", "--k", "10", "-o", str(out), "--format", "csv")
    assert result.exit_code == 0, result.output
    pairwise = pd.read_csv(out / "pairwise.csv")
    rows_k = pairwise[(pairwise["scope"] == "dataset") & (pairwise["k"] == 10)]
    assert set(rows_k["dataset"]) == set(KNOWN)
    wins = dict.fromkeys(SELECTORS, 0)
    losses = dict.fromkeys(SELECTORS, 0)
    n_significant = 0
    for row in rows_k.itertuples():
        x = (per_split(rows, "probe_rate", row.dataset, row.selector_a, 10)
             - per_split(rows, "probe_rate", row.dataset, row.selector_b, 10))
        j = x.size
        scale = np.sqrt((1 / j + (1 / FOLDS) / (1 - 1 / FOLDS)) * x.var(ddof=1))
        posterior = st.t(j - 1, loc=x.mean(), scale=scale)
        assert row.mean_diff == pytest.approx(x.mean(), abs=1e-9)
        # a better = a's probe rate lower than b's by more than the rope
        assert row.p_a_better == pytest.approx(posterior.cdf(-rope), abs=1e-9)
        assert row.p_b_better == pytest.approx(posterior.sf(rope), abs=1e-9)
        if row.significant:
            n_significant += 1
            winner, loser = (row.selector_a, row.selector_b) if x.mean() < 0 else (row.selector_b, row.selector_a)
            wins[winner] += 1
            losses[loser] += 1
    assert n_significant > 0  # the check below means something
    summary = pd.read_csv(io.StringIO(result.stdout)).set_index("selector")
    assert summary["wins"].to_dict() == wins
    assert summary["losses"].to_dict() == losses


def test_stats_cd_diagram_and_pareto_front_go_by_the_lower_probe_rate(made, tmp_path, monkeypatch) -> None:
    from fsbench.report import cd_diagram, stats_figures

    folder, rows = made
    drawn = {}
    real_cd, real_figures = cd_diagram.save_figure, stats_figures.save_figure

    def keep_cd(fig, stem):
        drawn["cd"] = [t.get_text() for ax in fig.axes for t in ax.texts]
        return real_cd(fig, stem)

    def keep_figure(fig, stem):
        if Path(stem).name == "pareto":
            drawn["pareto"] = {ax.get_title(): ax.get_lines()[0].get_xydata() for ax in fig.axes if ax.get_visible()
                               and ax.get_title()}
        return real_figures(fig, stem)

    monkeypatch.setattr(cd_diagram, "save_figure", keep_cd)
    monkeypatch.setattr(stats_figures, "save_figure", keep_figure)
    out = tmp_path / "stats"
    result = invoke("stats", str(folder), "--metric", "probe_rate", "--k", "10", "-o", str(out))
    assert result.exit_code == 0, result.output
    values = block_values(rows, "probe_rate", 10)
    ranks = st.rankdata(values, axis=1).mean(axis=0)
    labels = {}
    for text in drawn["cd"]:
        match = re.fullmatch(r"\s*(?:(\w+) \(([0-9.]+)\)|\(([0-9.]+)\) (\w+))\s*", text)
        if match:
            name, rank = (match[1], match[2]) if match[1] else (match[4], match[3])
            labels[name] = float(rank)
    assert labels == {s: pytest.approx(round(r, 2), abs=1e-9) for s, r in zip(SELECTORS, ranks, strict=True)}
    # the front: no other selector both as fast or faster and as low or lower, one strictly (brute force)
    seconds = np.array([0.1 * (3 - s) for s in range(len(SELECTORS))])
    assert set(drawn["pareto"]) == set(KNOWN)
    for d, dataset in enumerate(KNOWN):
        rate = 100 * values[d]
        front = [j for j in range(len(SELECTORS))
                 if not any(seconds[i] <= seconds[j] and rate[i] <= rate[j] and (seconds[i], rate[i])
                            != (seconds[j], rate[j]) for i in range(len(SELECTORS)))]
        front.sort(key=lambda j: seconds[j])
        xy = drawn["pareto"][dataset]
        np.testing.assert_allclose(xy[:, 0], seconds[front])
        np.testing.assert_allclose(xy[:, 1], rate[front], atol=1e-9)


def test_stats_pools_a_folder_without_the_columns(made, tmp_path) -> None:
    folder, rows = made
    other = tmp_path / "other"
    write_results(other, known={}, plain=True, seed=5)
    out = tmp_path / "stats"
    result = invoke("stats", str(folder), str(other), "--metric", "relevant_recall", "--k", "10", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "left out" in result.stderr and "declares no relevant features" in result.stderr
    values = block_values(rows, "relevant_recall", 10)
    table = pd.read_csv(out / "ranks.csv").set_index("selector")
    np.testing.assert_allclose(table.loc[SELECTORS, "average_rank"], st.rankdata(-values, axis=1).mean(axis=0))


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("metric", SELECTION_METRICS)
def test_results_without_the_columns_are_refused(tmp_path, metric: str) -> None:
    folder = tmp_path / "old"
    write_results(folder, known={}, plain=True)
    what = "probe columns" if metric == "probe_rate" else "declares relevant features"
    fix = "`probes:`" if metric == "probe_rate" else "`generate:` or `relevant:`"
    before = sorted(p.name for p in folder.iterdir())
    for command in (["table", str(folder)], ["table", str(folder), "-o", str(tmp_path / "t.md")],
                    ["plot", str(folder), "-o", str(tmp_path / "c")], ["stats", str(folder)]):
        result = invoke(*command, "--metric", metric)
        assert_one_line_error(result, metric, str(folder), "no dataset of these results", what, fix,
                              "another --metric")
    assert sorted(p.name for p in folder.iterdir()) == before  # no stats folder, no curves
    assert not any(tmp_path.glob("t.md")) and not any(tmp_path.glob("c.*"))
    result = invoke("table", str(folder))  # accuracy still works
    assert result.exit_code == 0 and result.output.startswith("Test accuracy (%)")


def test_damaged_counts_are_one_sentence(tmp_path) -> None:
    folder = tmp_path / "bad"
    write_results(folder, plain=False)
    runs = pd.read_csv(folder / "runs.csv.gz")
    runs.loc[0, "relevant_selected"] = runs.loc[0, "k"] + 1  # more relevant features than selected
    runs.to_csv(folder / "runs.csv.gz", index=False)
    result = invoke("table", str(folder), "--metric", "relevant_recall", "--k", str(runs.loc[0, "k"]))
    assert_one_line_error(result, "relevant_selected", "recompute")


def test_accuracy_ignores_the_columns(made) -> None:
    folder, rows = made
    result = invoke("table", str(folder), "--format", "csv", "--k", "5")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(io.StringIO(result.stdout)).set_index(["dataset", "selector"])
    for dataset, selector in itertools.product([*KNOWN, PLAIN], SELECTORS):
        values = []
        for repeat in range(REPEATS):
            mine = [r for r in rows if (r["dataset"], r["selector"], r["k"], r["repeat"]) == (dataset, selector, 5,
                                                                                             repeat)]
            values.append(sum(r["n_correct"] for r in mine) / sum(r["n_test"] for r in mine))
        assert table.loc[(dataset, selector), "accuracy_mean"] == pytest.approx(100 * np.mean(values), abs=1e-4)
