"""Metrics beyond accuracy: the count-based metrics against scikit-learn's on the predictions
themselves, pooled over folds against scikit-learn on the concatenated predictions, and the
``--metric`` option of ``fsbench table``, ``plot`` and ``stats`` on hand-made results whose
every row comes from predictions kept here (the expected numbers are scikit-learn's on them).
"""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats as st
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    matthews_corrcoef,
)

from fsbench.cli import main
from fsbench.errors import FsbenchError
from fsbench.evaluation.metrics import (
    METRICS,
    metric_from_counts,
    parse_counts,
    pooled_metric,
    row_metric,
)


def sk_metric(metric: str, y: np.ndarray, p: np.ndarray) -> float:
    """scikit-learn's value of ``metric`` on true labels ``y`` and predictions ``p``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # absent classes, undefined kappa: their documented values
        if metric == "accuracy":
            return float(accuracy_score(y, p))
        if metric == "balanced_accuracy":
            return float(balanced_accuracy_score(y, p))
        if metric == "macro_f1":
            return float(f1_score(y, p, average="macro", zero_division=0))
        if metric == "kappa":
            return float(cohen_kappa_score(y, p))
        return float(matthews_corrcoef(y, p))


def counts_of(y: np.ndarray, p: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(support, predicted, correct) per class, by brute force over the samples."""
    support = np.array([np.sum(y == c) for c in range(n_classes)])
    predicted = np.array([np.sum(p == c) for c in range(n_classes)])
    correct = np.array([np.sum((y == c) & (p == c)) for c in range(n_classes)])
    return support, predicted, correct


def joined(a: np.ndarray) -> str:
    return ";".join(str(int(v)) for v in a)


def predictions(rng: np.random.Generator, y: np.ndarray, n_classes: int, kind: str) -> np.ndarray:
    """Predictions of one of several kinds: right with some probability, one class never predicted,
    all one class, or uniform noise."""
    if kind == "never":  # the last class is never predicted
        noisy = rng.integers(0, n_classes - 1, y.size)
        return np.where((rng.random(y.size) < 0.6) & (y < n_classes - 1), y, noisy)
    if kind == "constant":
        return np.full(y.size, int(rng.integers(n_classes)))
    if kind == "noise":
        return rng.integers(0, n_classes, y.size)
    return np.where(rng.random(y.size) < 0.7, y, rng.integers(0, n_classes, y.size))


def imbalanced_labels(rng: np.random.Generator, n: int, n_classes: int) -> np.ndarray:
    weights = rng.dirichlet(np.full(n_classes, 0.6))
    return rng.choice(n_classes, size=n, p=weights)


KINDS = ("mostly", "never", "constant", "noise")


# ----------------------------------------------------------------------------- one prediction set
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", KINDS)
def test_count_metrics_equal_scikit_learn(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    n_classes = 3 + seed % 3
    y = imbalanced_labels(rng, int(rng.integers(8, 80)), n_classes)
    p = predictions(rng, y, n_classes, kind)
    t, q, c = counts_of(y, p, n_classes)
    for metric in METRICS:
        got = metric_from_counts(metric, support=t, predicted=q, correct=c)
        assert got.shape == (1,)
        assert got[0] == pytest.approx(sk_metric(metric, y, p), abs=1e-12, nan_ok=True), metric


def test_a_class_absent_from_truth_and_predictions_is_left_out_as_scikit_learn_does() -> None:
    y = np.array([0, 0, 1, 1, 1, 3])  # class 2 neither in y nor in p
    p = np.array([0, 1, 1, 1, 0, 0])
    t, q, c = counts_of(y, p, 4)
    for metric in ("balanced_accuracy", "macro_f1", "kappa", "mcc"):
        got = metric_from_counts(metric, support=t, predicted=q, correct=c)[0]
        assert got == pytest.approx(sk_metric(metric, y, p), abs=1e-12), metric
    # macro F1 over the classes present (0, 1, 3): by hand 2*1/(2+3), 2*2/(3+3), 0
    assert metric_from_counts("macro_f1", support=t, predicted=q, correct=c)[0] == pytest.approx(
        (2 / 5 + 4 / 6 + 0) / 3, abs=1e-15)


def test_hand_worked_values() -> None:
    # truth 0 0 0 1 1 2, predictions 0 0 1 1 2 2: support 3 2 1, predicted 2 2 2, correct 2 1 1
    t, q, c = np.array([3, 2, 1]), np.array([2, 2, 2]), np.array([2, 1, 1])
    value = {m: metric_from_counts(m, support=t, predicted=q, correct=c)[0] for m in METRICS}
    assert value["accuracy"] == pytest.approx(4 / 6)
    assert value["balanced_accuracy"] == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    assert value["macro_f1"] == pytest.approx((4 / 5 + 2 / 4 + 2 / 3) / 3)
    p_e = (3 * 2 + 2 * 2 + 1 * 2) / 36
    assert value["kappa"] == pytest.approx((4 / 6 - p_e) / (1 - p_e))
    assert value["mcc"] == pytest.approx((4 * 6 - 12) / np.sqrt((36 - 12) * (36 - 14)))


def test_degenerate_cases_follow_scikit_learn() -> None:
    y = np.array([1, 1, 1, 1])
    p = np.array([1, 1, 1, 1])  # one class in truth and prediction: kappa undefined, MCC 0
    t, q, c = counts_of(y, p, 3)
    assert np.isnan(metric_from_counts("kappa", support=t, predicted=q, correct=c)[0])
    assert np.isnan(sk_metric("kappa", y, p))
    assert metric_from_counts("mcc", support=t, predicted=q, correct=c)[0] == sk_metric("mcc", y, p) == 0.0


# ----------------------------------------------------------------------------- pooled over folds
@pytest.mark.parametrize("seed", range(6))
def test_pooled_counts_equal_scikit_learn_on_the_concatenated_predictions(seed: int) -> None:
    """Two datasets with 3 and 5 classes, 2 repetitions of 4 folds: per repetition, the metric
    of the summed counts is scikit-learn's on the repetition's concatenated predictions."""
    rng = np.random.default_rng(100 + seed)
    rows, concatenated = [], {}
    for dataset, n_classes in (("three", 3), ("five", 5)):
        for repeat in range(2):
            ys, ps = [], []
            for fold in range(4):
                y = imbalanced_labels(rng, int(rng.integers(6, 30)), n_classes)
                p = predictions(rng, y, n_classes, KINDS[(fold + seed) % len(KINDS)])
                t, q, c = counts_of(y, p, n_classes)
                rows.append({"dataset": dataset, "repeat": repeat, "fold": fold, "accuracy": c.sum() / y.size,
                             "n_correct": int(c.sum()), "n_test": y.size, "class_support": joined(t),
                             "class_predicted": joined(q), "class_correct": joined(c)})
                ys.append(y)
                ps.append(p)
            concatenated[(dataset, repeat)] = (np.concatenate(ys), np.concatenate(ps))
    runs = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)  # any row order
    groups = list(runs.groupby(["dataset", "repeat"], sort=False).groups)
    for metric in METRICS:
        pooled = pooled_metric(runs, ["dataset", "repeat"], metric=metric)
        expected = [sk_metric(metric, *concatenated[g]) for g in groups]
        np.testing.assert_allclose(pooled, expected, rtol=0, atol=1e-12, err_msg=metric)
        # per row: each fold's own metric
        per_row = row_metric(runs, metric)
        assert per_row.index.equals(runs.index)
        by_hand = [metric_from_counts(metric, support=parse_counts([r.class_support], 5 if r.dataset == "five" else 3),
                                      predicted=parse_counts([r.class_predicted], 5 if r.dataset == "five" else 3),
                                      correct=parse_counts([r.class_correct], 5 if r.dataset == "five" else 3))[0]
                   for r in runs.itertuples()]
        np.testing.assert_allclose(per_row.to_numpy(), by_hand, rtol=0, atol=1e-15)


def test_rows_without_counts_give_accuracy_only() -> None:
    runs = pd.DataFrame({"dataset": ["d", "d"], "repeat": [0, 0], "accuracy": [0.5, 0.75],
                         "n_correct": [2, 3], "n_test": [4, 4]})
    assert row_metric(runs, "accuracy").tolist() == [0.5, 0.75]
    assert pooled_metric(runs, ["dataset", "repeat"], metric="accuracy").tolist() == [5 / 8]
    with pytest.raises(FsbenchError, match=r"^results/old has no per-class counts to compute kappa.*--force"):
        row_metric(runs, "kappa", source="results/old")


def test_damaged_counts_are_one_sentence() -> None:
    runs = pd.DataFrame({"dataset": ["d"], "accuracy": [0.5], "n_correct": [1], "n_test": [2],
                         "class_support": ["1;1"], "class_predicted": ["1;x"], "class_correct": ["1;0"]})
    with pytest.raises(FsbenchError, match="not a list of 2"):
        row_metric(runs, "mcc")
    runs["class_predicted"] = "1;1"
    runs["class_correct"] = "1;1"  # sums to 2, n_correct is 1
    with pytest.raises(FsbenchError, match="n_correct"):
        row_metric(runs, "mcc")


def test_the_cli_offers_every_metric() -> None:
    result = CliRunner().invoke(main, ["table", "--help"])
    assert "accuracy|balanced_accuracy|macro_f1|kappa|mcc" in result.output.replace("\n", "").replace(" ", "")


# ----------------------------------------------------------------------------- hand-made results
SELECTORS = ["fisher", "relieff", "random"]
DATASETS = {"three": 3, "five": 5}
KS = [5, 10]
REPEATS, FOLDS = 3, 3
UNCONVERGED_CELL = ("three", "relieff", 10)  # the one cell with a fit that did not converge


def write_results(folder: Path, *, counts: bool = True, unconverged: bool = True,
                  seed: int = 0) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
    """runs.csv.gz and config.yaml of a made-up 3 x 3-fold CV run on two datasets (3 and 5
    classes); returns the predictions behind each row, keyed (dataset, repeat, fold, selector, k)."""
    rng = np.random.default_rng(seed)
    rows, kept = [], {}
    for dataset, n_classes in DATASETS.items():
        for repeat, fold in itertools.product(range(REPEATS), range(FOLDS)):
            y = imbalanced_labels(rng, 40, n_classes)
            for s, selector in enumerate(SELECTORS):
                for k in KS:
                    hit = 0.45 + 0.15 * s + 0.02 * k + rng.uniform(-0.1, 0.1)
                    p = np.where(rng.random(y.size) < hit, y, rng.integers(0, n_classes, y.size))
                    if selector == "random" and fold == 0:
                        p = np.where(p == n_classes - 1, 0, p)  # a class never predicted
                    t, q, c = counts_of(y, p, n_classes)
                    row = {"experiment": "made-up", "dataset": dataset, "repeat": repeat, "fold": fold,
                           "selector": selector, "method": selector, "k": k, "accuracy": c.sum() / y.size,
                           "n_correct": int(c.sum()), "n_test": y.size, "n_train": 80, "fit_seconds": 0.1 * (s + 1),
                           "task_seconds": 1.0}
                    if counts:
                        row.update(class_support=joined(t), class_predicted=joined(q), class_correct=joined(c))
                    if unconverged:
                        row["diag_classifier_unconverged"] = int(
                            (dataset, selector, k) == UNCONVERGED_CELL and repeat == 1 and fold == 2)
                    rows.append(row)
                    kept[(dataset, repeat, fold, selector, k)] = (y, p)
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "runs.csv.gz", index=False)
    protocol = {"kind": "kfold", "n_splits": FOLDS, "n_repeats": REPEATS}
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": folder.name, "datasets": list(DATASETS),
                                                        "protocol": protocol}))
    return kept


def expected_cells(kept: dict, metric: str, k: int) -> dict[tuple[str, str], tuple[float, float]]:
    """(dataset, selector) -> mean and std (ddof 1, x 100) over repetitions of scikit-learn's
    metric on each repetition's concatenated predictions."""
    out = {}
    for dataset, selector in itertools.product(DATASETS, SELECTORS):
        values = []
        for repeat in range(REPEATS):
            parts = [kept[(dataset, repeat, fold, selector, k)] for fold in range(FOLDS)]
            y, p = np.concatenate([y for y, _ in parts]), np.concatenate([p for _, p in parts])
            values.append(sk_metric(metric, y, p))
        out[(dataset, selector)] = (100 * float(np.mean(values)), 100 * float(np.std(values, ddof=1)))
    return out


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("metrics") / "res"
    return folder, write_results(folder)


def markdown_cells(text: str) -> dict[tuple[str, str], str]:
    lines = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| dataset")]
    header = next(line for line in text.splitlines() if line.startswith("| dataset"))
    columns = [c.strip() for c in header.strip("|").split("|")][1:]
    cells = {}
    for line in lines:
        parts = [c.strip() for c in line.strip("|").split("|")]
        for column, value in zip(columns, parts[1:], strict=True):
            cells[(parts[0], column)] = value
    return cells


@pytest.mark.parametrize("metric", METRICS)
def test_table_metric_csv_equals_scikit_learn_pooled_over_folds(made, metric: str) -> None:
    folder, kept = made
    result = invoke("table", str(folder), "--metric", metric, "--format", "csv", "--k", "10")
    assert result.exit_code == 0, result.output
    table = pd.read_csv(__import__("io").StringIO(result.output))
    assert f"{metric}_mean" in table.columns
    expected = expected_cells(kept, metric, 10)
    for row in table.itertuples():
        mean, std = expected[(row.dataset, row.selector)]
        assert getattr(row, f"{metric}_mean") == pytest.approx(mean, abs=1e-4)  # csv prints 4 decimals
        assert getattr(row, f"{metric}_std") == pytest.approx(std, abs=1e-4)


def test_table_markdown_names_the_metric_and_marks_unconverged_cells(made) -> None:
    folder, kept = made
    result = invoke("table", str(folder), "--metric", "balanced_accuracy", "--k", "10")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Test balanced accuracy (%) with the top 10 features")
    cells = markdown_cells(result.output)
    expected = expected_cells(kept, "balanced_accuracy", 10)
    for (dataset, selector), (mean, std) in expected.items():
        text = cells[(dataset, selector)].strip("*†")
        assert text.rstrip("*") == f"{mean:.2f} ± {std:.2f}"
        marked = cells[(dataset, selector)].endswith("†")
        assert marked == ((dataset, selector, 10) == UNCONVERGED_CELL), (dataset, selector)
    notes = [line for line in result.output.splitlines() if line.startswith("†")]
    assert len(notes) == 1 and "did not converge" in notes[0]
    # at k = 5 no fit failed to converge: no mark, no footnote
    result = invoke("table", str(folder), "--metric", "balanced_accuracy", "--k", "5")
    assert result.exit_code == 0 and "†" not in result.output


def test_unconverged_mark_in_csv_and_latex(made) -> None:
    folder, _ = made
    result = invoke("table", str(folder), "--format", "csv", "--k", "10")
    table = pd.read_csv(__import__("io").StringIO(result.output))
    flagged = table[table["n_unconverged"] > 0]
    assert [tuple(r) for r in flagged[["dataset", "selector"]].to_numpy()] == [UNCONVERGED_CELL[:2]]
    assert flagged["n_unconverged"].tolist() == [1]
    result = invoke("table", str(folder), "--format", "latex", "--k", "10")
    assert result.exit_code == 0, result.output
    assert result.output.count(r"$^\dagger$") == 2  # the cell and the footnote
    assert "did not converge" in result.output


def test_no_unconverged_column_marks_nothing(tmp_path) -> None:
    folder = tmp_path / "res"
    write_results(folder, unconverged=False)
    for fmt in ("markdown", "latex", "csv"):
        result = invoke("table", str(folder), "--format", fmt, "--k", "10", "--metric", "mcc")
        assert result.exit_code == 0, result.output
        assert "†" not in result.output and "dagger" not in result.output and "unconverged" not in result.output


def test_results_without_counts_refuse_other_metrics(tmp_path) -> None:
    folder = tmp_path / "old"
    write_results(folder, counts=False)
    for command in (["table", str(folder)], ["plot", str(folder), "-o", str(tmp_path / "c")], ["stats", str(folder)]):
        result = invoke(*command, "--metric", "macro_f1")
        assert_one_line_error(result, str(folder), "macro_f1", "recompute")
        assert not (tmp_path / "c.png").exists() and not (folder / "stats").exists()
    result = invoke("table", str(folder))  # accuracy still works
    assert result.exit_code == 0 and "Test accuracy (%)" in result.output


def test_paper_table_refuses_another_metric() -> None:
    result = invoke("table", "--paper", "rfs", "--metric", "kappa")
    assert_one_line_error(result, "--paper", "accuracy", "kappa")


def test_unknown_metric_is_one_line(made) -> None:
    result = invoke("table", str(made[0]), "--metric", "auc")
    assert_one_line_error(result, "auc")


def test_plot_draws_the_metric_and_labels_its_axis(made, tmp_path, saved_figures) -> None:
    folder, kept = made
    figures = saved_figures
    result = invoke("plot", str(folder), "--metric", "kappa", "-o", str(tmp_path / "kappa"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "kappa.png").is_file()
    (panels,) = figures
    assert {ylabel for _, ylabel, _ in panels} == {"Cohen's kappa (x 100)"}
    for title, _, lines in panels:
        dataset = title.splitlines()[0]
        for selector in SELECTORS:
            xy = lines[selector]
            expected = [expected_cells(kept, "kappa", k)[(dataset, selector)][0] for k in KS]
            np.testing.assert_allclose(xy[:, 0], KS)
            np.testing.assert_allclose(xy[:, 1], expected, rtol=0, atol=1e-9)


def test_stats_ranks_and_tests_the_metric(made, tmp_path) -> None:
    folder, kept = made
    out = tmp_path / "stats"
    result = invoke("stats", str(folder), "--metric", "macro_f1", "--k", "10", "-o", str(out), "--format", "csv")
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(__import__("io").StringIO(result.stdout))
    assert "macro_f1" in summary.columns
    cells = expected_cells(kept, "macro_f1", 10)
    for row in summary.itertuples():
        assert row.macro_f1 == pytest.approx(np.mean([cells[(d, row.selector)][0] for d in DATASETS]), abs=1e-4)
    # Friedman on the datasets' mean metric (scipy), 2 datasets x 3 selectors
    scores = np.array([[cells[(d, s)][0] for s in SELECTORS] for d in DATASETS])
    friedman = pd.read_csv(out / "friedman.csv")
    ranks = st.rankdata(-scores, axis=1)
    assert all(len(set(r)) == len(r) for r in scores)  # no ties: scipy's statistic is then Demšar's
    assert friedman["statistic"].iloc[0] == pytest.approx(st.friedmanchisquare(*scores.T).statistic)
    avg = pd.read_csv(out / "ranks.csv").set_index("selector")["average_rank"]
    for j, selector in enumerate(SELECTORS):
        assert avg[selector] == pytest.approx(ranks[:, j].mean())
    # pairwise per dataset: the mean difference of each fold's own metric
    pairwise = pd.read_csv(out / "pairwise.csv")
    rows = pairwise[pairwise["scope"] == "dataset"]
    assert len(rows) == 2 * 3
    for row in rows.itertuples():
        diffs = [sk_metric("macro_f1", *kept[(row.dataset, r, f, row.selector_a, 10)])
                 - sk_metric("macro_f1", *kept[(row.dataset, r, f, row.selector_b, 10)])
                 for r in range(REPEATS) for f in range(FOLDS)]
        assert row.mean_diff == pytest.approx(np.mean(diffs), abs=1e-9)  # written with 10 digits
        assert row.n == REPEATS * FOLDS
    # the printed summary names the metric
    result = invoke("stats", str(folder), "--metric", "macro_f1", "--k", "10", "-o", str(tmp_path / "md"))
    assert result.exit_code == 0 and "macro F1 (%)" in result.stdout


def test_default_metric_leaves_the_table_unchanged(made) -> None:
    folder, kept = made
    plain = invoke("table", str(folder), "--k", "10")
    explicit = invoke("table", str(folder), "--k", "10", "--metric", "accuracy")
    assert plain.output == explicit.output
    assert plain.output.startswith("Test accuracy (%) with the top 10 features")
    cells = markdown_cells(plain.output)
    for (dataset, selector), (mean, _) in expected_cells(kept, "accuracy", 10).items():
        assert cells[(dataset, selector)].strip("*†").startswith(f"{mean:.2f} ±")


# ----------------------------------------------------------------------------- a real run
RUN_CONFIG = """\
name: metrics-run
seed: 3
datasets: [digits]
preprocessing: {standardize: train}
protocol: {kind: kfold, n_splits: 3, n_repeats: 2}
inner_cv: {n_splits: 3}
selectors: [fisher, random]
classifier: {name: linear_svm, backend: libsvm, C: 0.01}
n_features: [6, 12]
n_jobs: 1
"""


def test_a_run_s_metrics_equal_scikit_learn_on_predictions_recomputed_here(tmp_path, monkeypatch) -> None:
    """Run a small 2 x 3-fold experiment on the digits, then for every row of one selector and k
    refit SVC(kernel="linear") here on the row's split (fsbench.evaluation.protocol.outer_splits), its
    top-k features (rankings.csv.gz), data standardized with numpy on the training part: the
    metrics of ``fsbench table --metric`` (pooled over each repetition's folds) and of
    :func:`row_metric` (per fold) equal scikit-learn's on those predictions."""
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    from fsbench.configuration.parse import load_experiment
    from fsbench.evaluation.protocol import outer_splits

    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "cache"))
    config, out = tmp_path / "run.yaml", tmp_path / "res"
    config.write_text(RUN_CONFIG)
    result = invoke("run", str(config), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    runs = pd.read_csv(out / "runs.csv.gz")
    rankings = pd.read_csv(out / "rankings.csv.gz")
    assert {"class_support", "class_predicted", "class_correct", "diag_classifier_unconverged"} <= set(runs.columns)
    experiment = load_experiment(config)
    X, y = load_digits(return_X_y=True)
    splits = {(s.repeat, s.fold): s for s in outer_splits(y, experiment.protocol, experiment.seed, "digits")}
    selector, k = "fisher", 12
    mine = runs[(runs["selector"] == selector) & (runs["k"] == k)].sort_values(["repeat", "fold"])
    assert len(mine) == 6
    recomputed = {}
    for row in mine.itertuples():
        split = splits[(row.repeat, row.fold)]
        ranked = rankings[(rankings["repeat"] == row.repeat) & (rankings["fold"] == row.fold)
                          & (rankings["selector"] == selector)].sort_values("position")
        features = ranked["feature"].to_numpy()[:k]
        train, test = X[split.train].astype(float), X[split.test].astype(float)
        mean, std = train.mean(axis=0), train.std(axis=0)
        std[std == 0] = 1.0
        train, test = (train - mean) / std, (test - mean) / std
        clf = SVC(kernel="linear", C=float(row.C)).fit(train[:, features], y[split.train])
        recomputed[(row.repeat, row.fold)] = (y[split.test], clf.predict(test[:, features]))
    for metric in METRICS:
        per_fold = row_metric(mine, metric).to_numpy()
        expected = [sk_metric(metric, *recomputed[(r.repeat, r.fold)]) for r in mine.itertuples()]
        np.testing.assert_allclose(per_fold, expected, rtol=0, atol=1e-12, err_msg=metric)
        result = invoke("table", str(out), "--metric", metric, "--k", str(k), "--format", "csv")
        assert result.exit_code == 0, result.output
        table = pd.read_csv(__import__("io").StringIO(result.output)).set_index("selector")
        pooled = [sk_metric(metric, *(np.concatenate(parts) for parts in zip(
            *(recomputed[(repeat, fold)] for fold in range(3)), strict=True))) for repeat in range(2)]
        assert table.at[selector, f"{metric}_mean"] == pytest.approx(100 * np.mean(pooled), abs=1e-4)
        assert table.at[selector, f"{metric}_std"] == pytest.approx(100 * np.std(pooled, ddof=1), abs=1e-4)
