"""``fsbench stats`` on results that tie exactly or have one split per dataset.

Ties: per-repetition accuracies are fractions n_correct / n_test, and their float mean depends on
the order of the terms (0.75 from 11, 11, 7, 7, 9 of 12 correct; 0.7499999999999999 from 11, 11,
2, 12, 9): two selectors with the same pooled counts must tie in the ranks, not be split by the
last bit. The expected ranks are worked out by hand in the comments.

One split per dataset: the per-dataset tests pair splits and have nothing to pair; the command
writes the rest with a note instead of a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from fsbench.cli import main
from fsbench.stats import block_matrix, friedman_test, single_split_groups

N_TEST, N_TRAIN = 12, 18
# n_correct per repetition (of 12): A and B pool 45 of 60 on d1 and d2 (mean 0.75) through
# different repetitions; in floats their means differ in the last bit
COUNTS = {
    "d1": {"A": [11, 11, 7, 7, 9], "B": [11, 11, 2, 12, 9], "C": [6, 6, 6, 6, 6]},   # A = B > C
    "d2": {"A": [11, 11, 7, 7, 9], "B": [11, 11, 2, 12, 9], "C": [12, 12, 12, 12, 12]},  # C > A = B
    "d3": {"A": [10, 10, 10, 10, 10], "B": [9, 9, 9, 9, 9], "C": [8, 8, 8, 8, 8]},  # A > B > C
}
# by hand: d1 ranks A 1.5, B 1.5, C 3; d2 C 1, A 2.5, B 2.5; d3 A 1, B 2, C 3
EXPECTED_RANKS = {"A": (1.5 + 2.5 + 1) / 3, "B": (1.5 + 2.5 + 2) / 3, "C": (3 + 1 + 3) / 3}


def rows(counts: dict[str, dict[str, list[int]]]) -> pd.DataFrame:
    out = []
    for dataset, by_selector in counts.items():
        for selector, correct in by_selector.items():
            for repeat, c in enumerate(correct):
                out.append({"experiment": "ties", "dataset": dataset, "repeat": repeat, "fold": 0,
                            "selector": selector, "method": selector, "k": 5, "accuracy": c / N_TEST,
                            "n_correct": c, "n_test": N_TEST, "n_train": N_TRAIN, "fit_seconds": 0.1 * (repeat + 1),
                            "task_seconds": 1.0})
    return pd.DataFrame(out)


def write_folder(folder: Path, counts: dict[str, dict[str, list[int]]]) -> Path:
    folder.mkdir(parents=True)
    rows(counts).to_csv(folder / "runs.csv.gz", index=False)
    n = len(next(iter(next(iter(counts.values())).values())))
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": folder.name, "datasets": list(counts),
                                                        "protocol": {"kind": "holdout", "n_trials": n}}))
    return folder


def test_the_float_means_do_differ_in_the_last_bit():
    # the premise of the test: pandas' float mean of these accuracies splits A and B
    reps = rows(COUNTS)
    means = reps.groupby(["dataset", "selector"])["accuracy"].mean()
    assert means["d1", "A"] != means["d1", "B"]


def test_equal_pooled_counts_tie_exactly_in_the_block_matrix_and_the_ranks():
    reps = rows(COUNTS).drop(columns=["fold"])
    scores = block_matrix(reps)
    assert scores.loc["d1", "A"] == scores.loc["d1", "B"] == 0.75
    ranks = friedman_test(scores).ranks.set_index("selector")["average_rank"]
    assert ranks.to_dict() == pytest.approx(EXPECTED_RANKS, abs=1e-12)
    assert ranks["A"] == pytest.approx(5 / 3, abs=1e-12) and ranks["B"] == 2.0


def test_fsbench_stats_ranks_tie_by_the_counts(tmp_path):
    folder = write_folder(tmp_path / "res", COUNTS)
    result = CliRunner().invoke(main, ["stats", str(folder)])
    assert result.exit_code == 0, result.output
    ranks = pd.read_csv(folder / "stats" / "ranks.csv").set_index("selector")["average_rank"]
    assert ranks.to_dict() == pytest.approx(EXPECTED_RANKS, abs=1e-9)
    # Friedman by hand from the ranks (Demšar): N = 3, K = 3, sum R^2 = 25/9 + 4 + 49/9 = 12.222...
    chi2 = 12 * 3 / (3 * 4) * (sum(r * r for r in EXPECTED_RANKS.values()) - 3 * 16 / 4)
    assert pd.read_csv(folder / "stats" / "friedman.csv")["statistic"].iloc[0] == pytest.approx(chi2, abs=1e-9)


ONE_SPLIT = {d: {s: c[:1] for s, c in by.items()} for d, by in COUNTS.items()}


def test_one_repetition_per_dataset_writes_what_needs_no_pairing_with_a_note(tmp_path):
    folder = write_folder(tmp_path / "res", ONE_SPLIT)
    result = CliRunner().invoke(main, ["stats", str(folder)])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "Traceback" not in result.output
    note = next(line for line in result.output.splitlines() if "one split" in line)
    assert "d1, d2, d3 have one split (k = 5)" in note and "run more repetitions" in note
    pairwise = pd.read_csv(folder / "stats" / "pairwise.csv")
    assert set(pairwise["scope"]) == {"across"} and len(pairwise) == 3  # the 3 pairs over the datasets
    # ranks by hand from the first repetition: d1 A = B (11) > C (6); d2 C (12) > A = B (11); d3 A > B > C
    ranks = pd.read_csv(folder / "stats" / "ranks.csv").set_index("selector")["average_rank"]
    assert ranks.to_dict() == pytest.approx(EXPECTED_RANKS, abs=1e-9)


def test_single_split_groups():
    reps = rows({"d1": {"A": [1, 2], "B": [3, 4]}, "d2": {"A": [5], "B": [6]}})
    assert single_split_groups(reps) == [("d2", 5)]
