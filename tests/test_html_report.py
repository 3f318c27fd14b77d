"""``fsbench html``: the page of a small real run, checked without a browser.

The numbers embedded in the page are held against means and sds computed here with pandas from
runs.csv.gz (balanced accuracy from the per-class counts by its definition), the ≈ marks against
the corrected resampled t-test written out with scipy; the page is the same bytes twice, names no
other host, and its downloads are the source bytes. The browser checks are test_html_browser.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as st

from fsbench.cli import main

pytest.importorskip("plotly", reason="the HTML page needs plotly (pip install 'fsbench[html]')")

CONFIG = """\
name: tiny
seed: 0
datasets:
  - digits
  - name: syn
    generate: {kind: classification, n_samples: 120, n_features: 30, n_informative: 4, n_redundant: 0,
               n_repeated: 0, n_classes: 3, class_sep: 2.0, seed: 1}
protocol: {kind: holdout, train_size: 0.6, n_trials: 3}
inner_cv: {n_splits: 2}
selectors: [fisher, fstat, random]
classifier: {name: linear_svm, C: [1.0]}
n_features: [2, 5, 10]
n_jobs: 1
"""


def make_results(folder: Path) -> Path:
    """A real run of a tiny config (two datasets, three selectors, three splits) in ``folder``/res."""
    from fsbench.configuration.parse import load_experiment
    from fsbench.engine.runner import run_experiment

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(CONFIG)
    run_experiment(load_experiment(folder / "tiny.yaml"), folder / "res", n_jobs=1)
    return folder / "res"


def page_data(index: Path) -> dict:
    text = index.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="fsbench-data">(.*?)</script>', text, re.S)
    return json.loads(match.group(1).replace("<\\/", "</"))


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("html")
    results = make_results(root)
    first = invoke("html", str(results))
    assert first.exit_code == 0, first.output
    second = invoke("html", str(results), "--out", str(root / "again"))
    assert second.exit_code == 0, second.output
    return results, results / "html", root / "again"


def balanced_accuracy(row: pd.Series) -> float:
    support = np.array(row["class_support"].split(";"), dtype=float)
    correct = np.array(row["class_correct"].split(";"), dtype=float)
    present = support > 0
    return float(np.mean(correct[present] / support[present]))


def test_same_results_same_bytes(made):
    _, out, again = made
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert Path("index.html") in files and Path("plotly.min.js") in files
    for name in files:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_no_other_host_and_plotly_once(made):
    _, out, _ = made
    text = (out / "index.html").read_text(encoding="utf-8")
    sources = re.findall(r'<script[^>]*\bsrc="([^"]*)"', text)
    hrefs = re.findall(r'<link[^>]*\bhref="([^"]*)"', text) + re.findall(r'<a[^>]*\bhref="([^"]*)"', text)
    assert sources == ["plotly.min.js"]
    assert not [u for u in sources + hrefs if re.match(r"(?i)https?:|//", u)]
    assert len(list(out.rglob("plotly*.js"))) == 1
    assert len(text) < 1_000_000  # plotly.js is beside the page, not inside it
    assert (out / "plotly.min.js").stat().st_size > 1_000_000


def test_embedded_numbers_equal_pandas(made):
    results, out, _ = made
    runs = pd.read_csv(results / "runs.csv.gz")
    runs["balanced_accuracy"] = runs.apply(balanced_accuracy, axis=1)
    data = page_data(out / "index.html")
    assert {"accuracy", "balanced_accuracy", "macro_f1", "kappa", "mcc", "relevant_recall"} <= set(data["metrics"])
    assert "probe_rate" not in data["metrics"]  # no dataset of the run has probes
    (group,) = data["groups"]
    panels = {p["dataset"]: p for p in group["panels"]}
    assert set(panels) == {"digits", "syn"}
    checked = 0
    for metric in ("accuracy", "balanced_accuracy"):
        for (dataset, selector, k), rows in runs.groupby(["dataset", "selector", "k"]):
            values = panels[dataset]["metrics"][metric]
            i, j = values["selectors"].index(selector), values["ks"].index(k)
            per_split = 100 * rows[metric].to_numpy()  # hold-out: one fold per repetition
            assert values["mean"][i][j] == pytest.approx(per_split.mean(), abs=1e-4)
            assert values["sd"][i][j] == pytest.approx(per_split.std(ddof=1), abs=1e-4)
            assert values["n"][i][j] == len(per_split)
            checked += 1
    assert checked == 2 * 2 * 3 * 3
    # relevant recall exists on the generated set only
    assert "relevant_recall" in panels["syn"]["metrics"] and "relevant_recall" not in panels["digits"]["metrics"]


def test_best_and_not_worse_marks_against_the_corrected_ttest(made):
    results, out, _ = made
    runs = pd.read_csv(results / "runs.csv.gz")
    panels = {p["dataset"]: p for p in page_data(out / "index.html")["groups"][0]["panels"]}
    for (dataset, k), rows in runs.groupby(["dataset", "k"]):
        values = panels[dataset]["metrics"]["accuracy"]
        j = values["ks"].index(k)
        wide = rows.pivot(index="repeat", columns="selector", values="accuracy")
        best = wide.mean().idxmax()
        rho = float((rows["n_test"] / (rows["n_test"] + rows["n_train"])).mean())
        for selector in wide.columns:
            mark = values["mark"][values["selectors"].index(selector)][j]
            if wide[selector].mean() == wide[best].mean():
                assert mark == 2
                continue
            x = np.round(wide[best].to_numpy() - wide[selector].to_numpy(), 12)
            var = x.var(ddof=1)
            if var == 0:
                p = 1.0 if x.mean() == 0 else 0.0
            else:
                t = x.mean() / np.sqrt((1 / len(x) + rho / (1 - rho)) * var)
                p = 2 * st.t.sf(abs(t), len(x) - 1)
            assert mark == (1 if p >= 0.05 else 0), (dataset, k, selector, p)


def test_downloads_are_the_source_bytes(made):
    results, out, _ = made
    assert (out / "downloads" / "runs.csv.gz").read_bytes() == (results / "runs.csv.gz").read_bytes()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="downloads/runs.csv.gz"' in index and 'href="downloads/table-accuracy.csv"' in index
    table = pd.read_csv(out / "downloads" / "table-accuracy.csv")
    runs = pd.read_csv(results / "runs.csv.gz")
    expected = runs.groupby(["dataset", "selector", "k"])["accuracy"].agg(["mean", "std"]) * 100
    got = table.set_index(["dataset", "selector", "k"]).sort_index()
    assert len(got) == len(expected)
    np.testing.assert_allclose(got["accuracy_mean"], expected["mean"].sort_index(), atol=1e-4)
    np.testing.assert_allclose(got["accuracy_std"], expected["std"].sort_index(), atol=1e-4)


@pytest.mark.parametrize("args, says", [
    (["html", "{empty}"], "No runs.csv.gz in"),
    (["html", "{results}", "--metric", "f2"], "Invalid value for '--metric'"),
    (["html", "{results}", "--metric", "probe_rate"], "No probe_rate in"),
    (["html"], "Missing argument"),
])
def test_bad_input_one_sentence_exit_2(made, tmp_path, args, says):
    results, _, _ = made
    (tmp_path / "empty").mkdir()
    args = [a.format(empty=tmp_path / "empty", results=results) for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], result.output
    assert not (tmp_path / "empty" / "html").exists()


def test_run_names_the_page_command_last(made):
    results, _, _ = made
    result = CliRunner().invoke(main, ["run", str(results.parent / "tiny.yaml"), "--out", str(results), "-q"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == f"Browse the results: fsbench html {results}"
