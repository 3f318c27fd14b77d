"""Outputs are written atomically: a figure through a temporary file renamed into place, and
``fsbench stats``'s set of files as a whole. Faults are injected midway (a writer that raises, a
full disk, Ctrl-C): the previous outputs stay byte for byte, and no temporary file is left."""

from __future__ import annotations

import errno
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from fsbench.cli import main

SELECTORS = ["fisher", "relieff", "random"]
DATASETS = {"glioma": 4434, "srbct": 2308, "allaml": 7129}  # registered: their feature counts


def _results(folder: Path, seed: int = 0, rankings: bool = True) -> Path:
    """A made-up run: runs.csv.gz, config.yaml and (``rankings``) rankings.csv.gz."""
    rng = np.random.default_rng(seed)
    rows, ranks = [], []
    for dataset, repeat, (s, selector) in itertools.product(DATASETS, range(4), enumerate(SELECTORS)):
        for k in (10, 20):
            correct = int(rng.integers(600, 900)) + 40 * (3 - s)
            rows.append({"experiment": "made-up", "dataset": dataset, "repeat": repeat, "fold": 0,
                         "selector": selector, "method": selector, "k": k, "accuracy": correct / 1000,
                         "n_correct": correct, "n_test": 1000, "n_train": 1500,
                         "fit_seconds": float(rng.uniform(0.1, 2)), "task_seconds": 3.0})
        features = rng.permutation(DATASETS[dataset])[:20]
        ranks += [{"dataset": dataset, "repeat": repeat, "fold": 0, "selector": selector, "position": p + 1,
                   "feature": int(f)} for p, f in enumerate(features)]
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "runs.csv.gz", index=False)
    if rankings:
        pd.DataFrame(ranks).to_csv(folder / "rankings.csv.gz", index=False)
    else:
        (folder / "rankings.csv.gz").unlink(missing_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump({
        "name": folder.name, "datasets": list(DATASETS),
        "protocol": {"kind": "holdout", "train_size": 0.6, "n_trials": 4}}))
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too), by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _temporary(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.startswith(".") or p.name.endswith(".tmp")]


def _stats(*args: str):
    return CliRunner().invoke(main, ["stats", *args])


# ----------------------------------------------------------------------------- one figure
def test_a_figure_that_fails_to_draw_leaves_the_previous_figure(tmp_path, monkeypatch):
    import matplotlib.figure

    from fsbench.report.plots import plot_curves
    from fsbench.storage.runs import load_runs

    folder = _results(tmp_path / "res")
    runs = load_runs(folder)
    plot_curves(runs, tmp_path / "curves")
    before = _snapshot(tmp_path)
    real = matplotlib.figure.Figure.savefig

    def png_then_fail(self, target, *args, **kwargs):
        if kwargs.get("format", str(target).rsplit(".", 1)[-1]) == "pdf":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, target, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", png_then_fail)
    other = runs.assign(n_correct=runs["n_correct"] // 2)  # another figure, drawn halfway
    with pytest.raises(OSError):
        plot_curves(other, tmp_path / "curves")
    assert _snapshot(tmp_path) == before  # curves.png is not the new one beside the old pdf
    assert _temporary(tmp_path) == []


def test_a_figure_is_renamed_into_place_never_written_at_its_name(tmp_path, monkeypatch):
    import os

    from fsbench.report.plots import plot_curves
    from fsbench.storage.runs import load_runs

    opened: list[str] = []
    real_open = os.open

    def watch(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    runs = load_runs(_results(tmp_path / "res"))
    monkeypatch.setattr(os, "open", watch)
    import builtins

    real_builtin_open = builtins.open

    def watch_builtin(path, *args, **kwargs):
        opened.append(os.fspath(path) if isinstance(path, str | os.PathLike) else "")
        return real_builtin_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", watch_builtin)
    paths = plot_curves(runs, tmp_path / "fig" / "curves")
    assert sorted(p.name for p in paths) == ["curves.pdf", "curves.png"]
    assert not any(Path(p).name in ("curves.png", "curves.pdf") for p in opened)
    assert _temporary(tmp_path / "fig") == []


# ----------------------------------------------------------------------------- fsbench stats
@pytest.mark.parametrize("fault, code, says", [
    (OSError(errno.ENOSPC, "No space left on device"), 2, "Error: Cannot write a file: the disk is full"),
    (KeyboardInterrupt(), 130, "Interrupted."),
])
def test_stats_failing_halfway_leaves_the_previous_set_intact(tmp_path, monkeypatch, fault, code, says):
    import fsbench.report.stats_figures as figures

    folder = _results(tmp_path / "res")
    assert _stats(str(folder)).exit_code == 0
    before = _snapshot(tmp_path)
    assert {"ranks.csv", "pairwise.csv", "cd.png", "pareto.png", "stability.csv"} <= {
        Path(p).name for p in before}
    _results(folder, seed=1)  # new results: every table would change
    before = _snapshot(tmp_path)

    def fail(*args, **kwargs):  # the last file of the set: every table is written by then
        raise fault

    monkeypatch.setattr(figures, "pareto_figure", fail)
    result = _stats(str(folder))
    assert result.exit_code == code
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(says)
    assert _snapshot(tmp_path) == before
    assert _temporary(tmp_path) == []


def test_stats_failing_into_a_new_folder_leaves_no_folder(tmp_path, monkeypatch):
    import fsbench.report.stats_figures as figures

    folder = _results(tmp_path / "res")

    def fail(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(figures, "stability_figure", fail)
    assert _stats(str(folder), "--out", str(tmp_path / "new")).exit_code == 2
    assert not (tmp_path / "new").exists()


def test_stats_replaces_its_set_as_a_whole(tmp_path):
    # the second set has no stability (no rankings): the first set's stability files go with it
    from fsbench.report.stats_command import STATS_FILES

    folder = _results(tmp_path / "res")
    assert _stats(str(folder)).exit_code == 0
    # every file of a set is one the next set replaces or removes
    assert {p.name for p in (folder / "stats").iterdir()} <= set(STATS_FILES)
    (folder / "stats" / "mine.txt").write_text("a file of the user's")
    _results(folder, seed=1, rankings=False)
    result = _stats(str(folder))
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (folder / "stats").iterdir())
    assert not [n for n in names if n.startswith("stability")]
    assert "mine.txt" in names and _temporary(folder) == []
    written = result.output.rsplit("wrote ", 1)[1].strip().split(", ")
    assert sorted(Path(p).name for p in written) == sorted(set(names) - {"mine.txt"})
    # and the tables are the new results' (ranks recomputed here from the runs)
    runs = pd.read_csv(folder / "runs.csv.gz")
    at = runs[runs["k"] == 20].groupby(["dataset", "selector"])["accuracy"].mean().unstack()
    ranks = at.rank(axis=1, ascending=False).mean()
    mine = pd.read_csv(folder / "stats" / "ranks.csv")
    column = [c for c in mine.columns if "rank" in c.lower()][0]
    got = dict(zip(mine["selector"], mine[column], strict=True))
    assert {s: pytest.approx(ranks[s]) for s in SELECTORS} == {s: got[s] for s in SELECTORS}
