"""False-positive rate of paired tests over overlapping splits, on a null problem.

Two "selectors" whose accuracies are identical in distribution: a nearest-centroid classifier
on feature subset A (the first m features) or on subset B (the next m), where every feature
is equally informative (two balanced classes, x_f ~ N(-delta/2, 1) or N(+delta/2, 1), the
features independent). By symmetry A and B have the same expected accuracy on a fresh
dataset from this population, so any "significant" difference is a false positive.

Each experiment draws a dataset of ``n_samples`` from the population, scores A and B on the
same stratified splits of it, exactly as fsbench's protocols split (J hold-out splits of 6:4,
or r repetitions of k-fold cross-validation, each fold a split), and tests the J paired
differences at the 5% level with fsbench.stats:

- the plain paired t-test (``corrected_ttest`` with test_fraction = 0),
- the corrected resampled t-test (Nadeau-Bengio; Bouckaert-Frank for r x k-fold),
- the Wilcoxon signed-rank test over the splits (no correction for the overlap).

On one dataset, A and B differ a little (its samples happen to favour one subset); the
overlapping splits see that same difference again and again, so tests that take the J splits
as independent find it "significant" far more often than 5%. The correction widens the
variance by n_test / n_train for the overlap.

Run: ``python benchmarks/stats_false_positives.py [--experiments N]`` (about a minute on one
core with the default 10,000 experiments per setting). tests/test_stats.py runs the same code
with fewer experiments.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from fsbench.stats import corrected_ttest, wilcoxon_test

ALPHA = 0.05


@dataclass(frozen=True)
class Setting:
    """A protocol: ``holdout`` with ``n_splits`` trials of ``train_size``, or ``kfold`` with
    ``n_repeats`` x ``n_folds`` folds."""

    name: str
    kind: str
    n_splits: int = 10
    train_size: float = 0.6
    n_folds: int = 5
    n_repeats: int = 10

    @property
    def test_fraction(self) -> float:
        return 1.0 - self.train_size if self.kind == "holdout" else 1.0 / self.n_folds


SETTINGS = (
    Setting("hold-out 6:4, 10 trials (the papers' configs)", "holdout", n_splits=10),
    Setting("hold-out 6:4, 30 trials", "holdout", n_splits=30),
    Setting("10 x 5-fold CV (50 folds)", "kfold", n_folds=5, n_repeats=10),
)


def draw_dataset(rng: np.random.Generator, n_samples: int, n_features: int,
                 delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Balanced labels 0/1 and features N(+-delta/2, 1), every feature alike."""
    y = np.arange(n_samples) % 2
    x = rng.standard_normal((n_samples, n_features)) + np.where(y[:, None] == 1, delta / 2, -delta / 2)
    return x, y


def splits(rng: np.random.Generator, y: np.ndarray, setting: Setting) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified (train, test) index pairs of the setting."""
    by_class = [np.flatnonzero(y == c) for c in np.unique(y)]
    out = []
    if setting.kind == "holdout":
        for _ in range(setting.n_splits):
            train, test = [], []
            for idx in by_class:
                idx = rng.permutation(idx)
                cut = int(round(setting.train_size * idx.size))
                train.append(idx[:cut])
                test.append(idx[cut:])
            out.append((np.concatenate(train), np.concatenate(test)))
        return out
    for _ in range(setting.n_repeats):
        folds = [[] for _ in range(setting.n_folds)]
        for idx in by_class:
            for f, part in enumerate(np.array_split(rng.permutation(idx), setting.n_folds)):
                folds[f].append(part)
        tests = [np.concatenate(parts) for parts in folds]
        for f, test in enumerate(tests):
            out.append((np.concatenate([t for g, t in enumerate(tests) if g != f]), test))
    return out


def centroid_accuracy(x: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray) -> float:
    """Test accuracy of the nearest-centroid rule (scikit-learn's NearestCentroid) fitted on train."""
    c0 = x[train][y[train] == 0].mean(axis=0)
    c1 = x[train][y[train] == 1].mean(axis=0)
    w = c1 - c0
    predicted = (x[test] @ w - w @ (c0 + c1) / 2 > 0).astype(int)
    return float(np.mean(predicted == y[test]))


def experiment(rng: np.random.Generator, setting: Setting, n_samples: int, m: int, delta: float) -> dict[str, float]:
    """p-values of the three tests of A - B on one fresh dataset."""
    x, y = draw_dataset(rng, n_samples, 2 * m, delta)
    a, b = [], []
    for train, test in splits(rng, y, setting):
        a.append(centroid_accuracy(x[:, :m], y, train, test))
        b.append(centroid_accuracy(x[:, m:], y, train, test))
    return {"plain": corrected_ttest(a, b, 0.0).p_value,
            "corrected": corrected_ttest(a, b, setting.test_fraction).p_value,
            "wilcoxon": wilcoxon_test(a, b).p_value,
            "accuracy": float(np.mean(a + b))}


def false_positive_rates(setting: Setting, n_experiments: int, seed: int = 0, n_samples: int = 100,
                         m: int = 5, delta: float = 0.6) -> dict[str, float]:
    """Share of experiments with p < 0.05 per test (and the mean accuracy of A and B)."""
    rng = np.random.default_rng(seed)
    results = [experiment(rng, setting, n_samples, m, delta) for _ in range(n_experiments)]
    rates = {test: float(np.mean([r[test] < ALPHA for r in results])) for test in ("plain", "corrected", "wilcoxon")}
    rates["accuracy"] = float(np.mean([r["accuracy"] for r in results]))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=10_000, help="experiments per setting")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n = args.experiments
    se = math.sqrt(ALPHA * (1 - ALPHA) / n)
    print(f"Null problem: nearest centroid on 5 of 10 equally informative features (A) vs the other 5 (B); "
          f"100 samples per dataset; {n} datasets per setting; rejection at p < {ALPHA}.")
    print(f"A rate of 5% has a Monte Carlo standard error of {100 * se:.2f} points here.\n")
    print(f"{'protocol':<48} {'accuracy':>8} {'plain t':>8} {'corrected t':>12} {'Wilcoxon':>9}")
    for setting in SETTINGS:
        start = time.perf_counter()
        r = false_positive_rates(setting, n, seed=args.seed)
        print(f"{setting.name:<48} {100 * r['accuracy']:7.1f}% {100 * r['plain']:7.1f}% {100 * r['corrected']:11.1f}% "
              f"{100 * r['wilcoxon']:8.1f}%   ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
