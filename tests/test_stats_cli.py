"""``fsbench stats``: its files, checked against computations made here (scipy and the closed
forms), never against fsbench's own output; and its bad inputs (exit 2, one line, nothing written).

The results are hand-made runs.csv.gz (and rankings.csv.gz) files: 3 selectors x 4 datasets x
5 repetitions at k = 10 and 20, accuracies of 1000 test samples, so that no two selectors tie
on a dataset's mean (scipy's Friedman statistic, which corrects for ties, then equals Demšar's).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats as st

from fsbench.cli import main

SELECTORS = ["fisher", "relieff", "random"]
DATASETS = {"glioma": 4434, "lung": 3312, "srbct": 2308, "allaml": 7129}  # registered: their feature counts
KS = [10, 20]
N_TEST, N_TRAIN = 1000, 1500


def write_results(folder: Path, datasets: list[str] | None = None, selectors: list[str] | None = None,
                  repeats: int = 5, kfold: int = 0, seed: int = 0, rankings: bool = True) -> Path:
    """runs.csv.gz, config.yaml and (``rankings``) rankings.csv.gz of a made-up run. ``kfold`` > 0:
    ``repeats`` repetitions of kfold-fold CV (n_test = n_total / kfold)."""
    rng = np.random.default_rng(seed)
    datasets = list(DATASETS) if datasets is None else datasets
    selectors = SELECTORS if selectors is None else selectors
    folds = range(kfold) if kfold else [0]
    n_test, n_train = (500, 500 * (kfold - 1)) if kfold else (N_TEST, N_TRAIN)
    rows, ranks = [], []
    for dataset, repeat, fold, (s, selector) in itertools.product(datasets, range(repeats), folds,
                                                                  enumerate(selectors)):
        fit, task = float(rng.uniform(0.01, 2) * (s + 1)), float(rng.uniform(2, 5))
        for k in KS:
            correct = int(rng.integers(600, 900)) + 40 * (len(selectors) - s)
            rows.append({"experiment": "made-up", "dataset": dataset, "repeat": repeat, "fold": fold,
                         "selector": selector, "method": selector, "k": k, "accuracy": correct / n_test,
                         "n_correct": correct, "n_test": n_test, "n_train": n_train, "fit_seconds": fit,
                         "task_seconds": task})
        if selector == "fisher":  # the same ranking on every split
            features = np.arange(max(KS)) * 3
        else:
            features = rng.permutation(DATASETS[dataset])[: max(KS)]
        ranks += [{"dataset": dataset, "repeat": repeat, "fold": fold, "selector": selector, "position": p + 1,
                   "feature": int(f)} for p, f in enumerate(features)]
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "runs.csv.gz", index=False)
    if rankings:
        pd.DataFrame(ranks).to_csv(folder / "rankings.csv.gz", index=False)
    protocol = ({"kind": "kfold", "n_splits": kfold, "n_repeats": repeats} if kfold
                else {"kind": "holdout", "train_size": 0.6, "n_trials": repeats})
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": folder.name, "datasets": datasets,
                                                        "protocol": protocol}))
    return folder


def invoke(*args: str):
    return CliRunner().invoke(main, ["stats", *args])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One run of the command on the hand-made results (default k = 20), shared by the tests."""
    root = tmp_path_factory.mktemp("stats")
    folder = write_results(root / "res")
    result = invoke(str(folder))
    assert result.exit_code == 0, result.output
    return folder, folder / "stats", result


def runs_of(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "runs.csv.gz")


def dataset_means(runs: pd.DataFrame, k: int) -> pd.DataFrame:
    at = runs[runs["k"] == k]
    return at.pivot_table(index="dataset", columns="selector", values="accuracy", aggfunc="mean")[SELECTORS]


def test_every_file_with_the_contract_columns(made):
    _, out, _ = made
    for name in ("cd.png", "cd.pdf", "stability.png", "pareto.png"):
        assert (out / name).stat().st_size > 1000, name
    columns = {"ranks.csv": ["selector", "average_rank", "n_blocks"],
               "friedman.csv": ["statistic", "p_value", "iman_davenport", "iman_davenport_p", "n_blocks",
                                "n_selectors", "alpha", "cd"],
               "stability.csv": ["dataset", "selector", "k", "nogueira", "ci_low", "ci_high", "kuncheva"],
               "cost.csv": ["dataset", "selector", "n_tasks", "fit_seconds_median", "fit_seconds_total",
                            "task_seconds_median", "task_seconds_total"]}
    for name, expected in columns.items():
        assert list(pd.read_csv(out / name).columns) == expected, name
    pairwise = pd.read_csv(out / "pairwise.csv")
    assert {"scope", "dataset", "k", "selector_a", "selector_b", "mean_diff", "t_p_value", "wilcoxon_p",
            "p_a_better", "p_equivalent", "p_b_better", "p_holm"} <= set(pairwise.columns)


def test_friedman_and_ranks_against_scipy_and_hand(made):
    folder, out, _ = made
    means = dataset_means(runs_of(folder), 20)  # the default k: the largest every dataset ran
    n, k = means.shape
    ranks = means.rank(axis=1, ascending=False)
    assert not (ranks % 1).any().any(), "the made-up data must have no ties"
    table = pd.read_csv(out / "ranks.csv").set_index("selector")
    assert table["average_rank"].to_dict() == pytest.approx(ranks.mean().to_dict())
    assert (table["n_blocks"] == n).all()
    f = pd.read_csv(out / "friedman.csv").iloc[0]
    chi2, p = st.friedmanchisquare(*(means[c].to_numpy() for c in SELECTORS))
    assert f["statistic"] == pytest.approx(chi2, rel=1e-5) and f["p_value"] == pytest.approx(p, rel=1e-4)
    f_f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert f["iman_davenport"] == pytest.approx(f_f, rel=1e-5)
    assert f["iman_davenport_p"] == pytest.approx(st.f.sf(f_f, k - 1, (k - 1) * (n - 1)), rel=1e-4)
    # Demšar's Table 5a: q_0.05 = 2.343 for three classifiers
    assert f["cd"] == pytest.approx(2.343 * math.sqrt(k * (k + 1) / (6 * n)), abs=1e-3)
    assert (f["n_blocks"], f["n_selectors"], f["alpha"]) == (n, k, 0.05)


def _split_values(runs: pd.DataFrame, dataset: str, k: int, selector: str) -> np.ndarray:
    rows = runs[(runs["dataset"] == dataset) & (runs["k"] == k) & (runs["selector"] == selector)]
    return rows.sort_values(["repeat", "fold"])["accuracy"].to_numpy()


def test_pairwise_per_dataset_against_the_closed_forms(made):
    folder, out, _ = made
    runs = runs_of(folder)
    pairwise = pd.read_csv(out / "pairwise.csv")
    per = pairwise[pairwise["scope"] == "dataset"]
    assert len(per) == len(DATASETS) * 3 and set(per["k"]) == {20}
    for _, row in per.iterrows():
        a = _split_values(runs, row["dataset"], 20, row["selector_a"])
        b = _split_values(runs, row["dataset"], 20, row["selector_b"])
        x = a - b
        j, mean, var = len(x), x.mean(), x.var(ddof=1)
        rho = N_TEST / (N_TEST + N_TRAIN)
        t = mean / math.sqrt((1 / j + N_TEST / N_TRAIN) * var)  # Nadeau-Bengio
        assert row["correction"] == "nadeau-bengio" and row["test_fraction"] == pytest.approx(rho)
        assert row["mean_diff"] == pytest.approx(mean) and row["n"] == j
        assert row["t"] == pytest.approx(t) and row["t_p_value"] == pytest.approx(2 * st.t.sf(abs(t), j - 1))
        # equal accuracy gaps (0.02 = 20 / 1000) tie, whatever the floating-point noise
        assert row["wilcoxon_p"] == pytest.approx(st.wilcoxon(np.round(x, 12)).pvalue)
        scale = math.sqrt((1 / j + rho / (1 - rho)) * var)
        better, worse = st.t.sf(0.01, j - 1, mean, scale), st.t.cdf(-0.01, j - 1, mean, scale)
        assert row["p_a_better"] == pytest.approx(better, abs=1e-6)
        assert row["p_b_better"] == pytest.approx(worse, abs=1e-6)
        assert row["p_equivalent"] == pytest.approx(1 - better - worse, abs=1e-6)
        assert row["significant"] == (row["t_p_value"] < 0.05)


def test_pairwise_across_datasets_wilcoxon_with_holm(made):
    folder, out, _ = made
    means = dataset_means(runs_of(folder), 20)
    across = pd.read_csv(out / "pairwise.csv").query("scope == 'across'")
    assert len(across) == 3 and across["dataset"].isna().all()
    raw = [st.wilcoxon(means[a], means[b]).pvalue for a, b in zip(across["selector_a"], across["selector_b"],
                                                                     strict=True)]
    assert across["wilcoxon_p"].to_numpy() == pytest.approx(raw)
    order = np.argsort(raw)  # Holm by hand: (m - i) p_(i), running maximum, capped at 1
    holm, running = np.empty(3), 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (3 - i) * raw[idx]))
        holm[idx] = running
    assert across["p_holm"].to_numpy() == pytest.approx(holm)


def test_stability_identical_rankings_is_one_and_kuncheva_by_hand(made):
    folder, out, _ = made
    stability = pd.read_csv(out / "stability.csv")
    assert len(stability) == len(DATASETS) * len(SELECTORS) * len(KS)
    fisher = stability[stability["selector"] == "fisher"]
    assert fisher["nogueira"].to_numpy() == pytest.approx(1.0) and fisher["kuncheva"].to_numpy() == pytest.approx(1.0)
    ranks = pd.read_csv(folder / "rankings.csv.gz")
    sets = [set(g.sort_values("position")["feature"].head(10)) for _, g in
            ranks.query("dataset == 'lung' and selector == 'relieff'").groupby("repeat")]
    d, k = DATASETS["lung"], 10
    kuncheva = np.mean([(len(a & b) * d - k * k) / (k * (d - k)) for a, b in itertools.combinations(sets, 2)])
    row = stability.query("dataset == 'lung' and selector == 'relieff' and k == 10").iloc[0]
    assert row["kuncheva"] == pytest.approx(kuncheva)
    assert row["nogueira"] == pytest.approx(kuncheva)  # equal for sets of one size (Nogueira et al., Sec. 5)
    assert row["ci_low"] < row["nogueira"] < row["ci_high"]


def test_cost_one_value_per_task_against_pandas(made):
    folder, out, _ = made
    tasks = runs_of(folder).drop_duplicates(["dataset", "repeat", "fold", "selector"])
    expected = tasks.groupby(["dataset", "selector"]).agg(
        n_tasks=("fit_seconds", "size"), fit_seconds_median=("fit_seconds", "median"),
        fit_seconds_total=("fit_seconds", "sum"), task_seconds_median=("task_seconds", "median"),
        task_seconds_total=("task_seconds", "sum"))
    cost = pd.read_csv(out / "cost.csv").set_index(["dataset", "selector"]).loc[expected.index]
    assert (cost["n_tasks"] == 5).all()
    for column in expected.columns:
        assert cost[column].to_numpy() == pytest.approx(expected[column].to_numpy(), rel=1e-5), column


def test_summary_is_printed(made):
    _, _, result = made
    assert "| selector | average rank |" in result.output and "Friedman over 4 datasets at k = 20" in result.output


def test_kfold_uses_bouckaert_frank_and_k_all_makes_dataset_k_blocks(tmp_path):
    folder = write_results(tmp_path / "cv", kfold=4, repeats=2)
    result = invoke(str(folder), "--k", "all", "--out", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert pd.read_csv(tmp_path / "o" / "friedman.csv")["n_blocks"].iloc[0] == len(DATASETS) * len(KS)
    per = pd.read_csv(tmp_path / "o" / "pairwise.csv").query("scope == 'dataset'")
    assert set(per["k"]) == set(KS) and (per["correction"] == "bouckaert-frank").all()
    row = per.iloc[0]
    runs = runs_of(folder)
    x = (_split_values(runs, row["dataset"], row["k"], row["selector_a"])
         - _split_values(runs, row["dataset"], row["k"], row["selector_b"]))
    assert row["n"] == 8 and row["test_fraction"] == pytest.approx(0.25)
    t = x.mean() / math.sqrt((1 / 8 + 1 / 3) * x.var(ddof=1))  # J = r k folds, n_test / n_train = 1 / (k - 1)
    assert row["t"] == pytest.approx(t)


def test_baseline_restricts_the_pairs(tmp_path):
    folder = write_results(tmp_path / "res")
    result = invoke(str(folder), "--baseline", "random", "--k", "10", "--format", "csv")
    assert result.exit_code == 0, result.output
    pairwise = pd.read_csv(folder / "stats" / "pairwise.csv")
    assert (pairwise["selector_a"] == "random").all() and set(pairwise["k"]) == {10}
    across = pairwise.query("scope == 'across'")
    assert sorted(across["selector_b"]) == ["fisher", "relieff"]
    p = np.sort(across["wilcoxon_p"].to_numpy())
    assert np.sort(across["p_holm"].to_numpy()) == pytest.approx(np.maximum.accumulate(np.minimum(1, [2 * p[0], p[1]])))
    assert result.output.startswith("selector,average_rank,accuracy")


def test_no_rankings_one_note_and_everything_else(tmp_path):
    folder = write_results(tmp_path / "res", rankings=False)
    result = invoke(str(folder))
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if "rankings.csv.gz" in line]
    assert len(notes) == 1 and str(folder) in notes[0]
    written = {p.name for p in (folder / "stats").iterdir()}
    assert {"ranks.csv", "friedman.csv", "cd.png", "pairwise.csv", "cost.csv", "pareto.png"} <= written
    assert not {"stability.csv", "stability.png"} & written


def test_one_dataset_a_note_and_the_per_dataset_parts(tmp_path):
    folder = write_results(tmp_path / "res", datasets=["glioma"])
    result = invoke(str(folder), "--k", "all", "--format", "latex")  # the ks of one dataset are no blocks
    assert result.exit_code == 0, result.output
    assert "need two or more datasets" in result.output and r"\begin{tabular}" in result.output
    written = {p.name for p in (folder / "stats").iterdir()}
    assert {"pairwise.csv", "stability.csv", "stability.png", "cost.csv", "pareto.png"} <= written
    assert not {"ranks.csv", "friedman.csv", "cd.png"} & written
    assert set(pd.read_csv(folder / "stats" / "pairwise.csv")["k"]) == set(KS)


def test_several_folders_pool_datasets_and_drop_a_missing_selector(tmp_path):
    a = write_results(tmp_path / "runs" / "a", datasets=["glioma", "lung"])
    b = write_results(tmp_path / "runs" / "b", datasets=["srbct", "glioma"], selectors=["fisher", "relieff"], seed=1)
    result = invoke(str(a), str(b))
    assert result.exit_code == 0, result.output
    out = tmp_path / "runs" / "stats" / "a+b"
    friedman = pd.read_csv(out / "friedman.csv").iloc[0]
    assert (friedman["n_blocks"], friedman["n_selectors"]) == (4, 2)
    assert "Left out of the ranks" in result.output and "random" in result.output
    stability = pd.read_csv(out / "stability.csv")
    assert set(stability["dataset"]) == {"glioma (a)", "lung", "srbct", "glioma (b)"}
    pairwise = pd.read_csv(out / "pairwise.csv")
    assert len(pairwise.query("scope == 'dataset' and dataset == 'lung'")) == 3  # random compared where it ran


def test_one_classifier_of_several(tmp_path):
    folder = write_results(tmp_path / "res")
    runs = runs_of(folder)
    correct = runs["n_correct"][::-1].to_numpy()
    other = runs.assign(classifier="knn", n_correct=correct, accuracy=correct / N_TEST)
    pd.concat([runs.assign(classifier="linear_svm"), other]).to_csv(folder / "runs.csv.gz", index=False)
    refused = invoke(str(folder))
    assert refused.exit_code == 2 and "linear_svm, knn" in refused.output
    result = invoke(str(folder), "--classifier", "knn")
    assert result.exit_code == 0, result.output
    means = dataset_means(other, 20)
    ranks = pd.read_csv(folder / "stats" / "ranks.csv").set_index("selector")["average_rank"]
    assert ranks.to_dict() == pytest.approx(means.rank(axis=1, ascending=False).mean().to_dict())
    assert "classifier knn" in result.output


@pytest.mark.parametrize("name", ["glioma", "allaml"])
def test_committed_results(name, tmp_path):
    result = invoke(str(Path(__file__).resolve().parents[1] / "results" / name), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pairwise.csv").is_file() and (tmp_path / "pareto.png").is_file()


# ----------------------------------------------------------------------------- bad input
def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


BAD = [
    ("no results", lambda f: [str(f / "empty")], ("No results",)),
    ("one selector", lambda f: [str(write_results(f / "one", selectors=["fisher"]))], ("one selector", "fisher")),
    ("unknown baseline", lambda f: [str(write_results(f / "r")), "--baseline", "rfs"],
     ("'rfs'", "fisher, relieff, random")),
    ("k not run", lambda f: [str(write_results(f / "r")), "--k", "30"], ("k = 30", "10, 20")),
    ("k not a number", lambda f: [str(write_results(f / "r")), "--k", "many"], ("'many'",)),
    ("unknown classifier", lambda f: [str(write_results(f / "r")), "--classifier", "knn"], ("knn",)),
    ("alpha 0", lambda f: [str(write_results(f / "r")), "--alpha", "0"], ("--alpha",)),
    ("alpha above 1", lambda f: [str(write_results(f / "r")), "--alpha", "1.5"], ("--alpha",)),
    ("negative rope", lambda f: [str(write_results(f / "r")), "--rope", "-0.01"], ("--rope",)),
    ("a folder twice", lambda f: [str(write_results(f / "r"))] * 2, ("twice",)),
    ("damaged rankings", lambda f: [str(_damaged_rankings(f / "r"))], ("rankings.csv.gz",)),
]


def _damaged_rankings(folder: Path) -> Path:
    write_results(folder)
    (folder / "rankings.csv.gz").write_bytes(b"\x1f\x8b garbage")
    return folder


@pytest.mark.parametrize("setup, says", [(s, w) for _, s, w in BAD], ids=[n for n, _, _ in BAD])
def test_bad_input_exit_2_one_line_nothing_written(setup, says, tmp_path):
    (tmp_path / "empty").mkdir()
    args = setup(tmp_path)
    before = _snapshot(tmp_path)
    result = invoke(*args)
    message = result.output.strip()
    assert result.exit_code == 2, (result.exit_code, message, result.exception)
    assert message.startswith("Error: ") and "\n" not in message and "Traceback" not in message, message
    for fragment in says:
        assert fragment in message, message
    assert _snapshot(tmp_path) == before, "a refused command wrote files"


@pytest.mark.parametrize("written_by, ok", [("aaaa", True), ("bbbb", False)])
def test_rankings_of_another_configuration_are_refused(tmp_path, written_by, ok):
    from fsbench.storage.rankings import write_rankings_table

    folder = write_results(tmp_path / "r")
    runs = pd.read_csv(folder / "runs.csv.gz").assign(fingerprint="aaaa")
    runs.to_csv(folder / "runs.csv.gz", index=False)
    write_rankings_table(folder, pd.read_csv(folder / "rankings.csv.gz"), written_by)
    out = tmp_path / "out"
    result = invoke(str(folder), "--out", str(out))
    if ok:
        assert result.exit_code == 0, result.output
        assert (out / "stability.csv").is_file()
    else:
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "was written by configuration bbbb, the rows beside it by aaaa" in result.output
        assert not out.exists()
