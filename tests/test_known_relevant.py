"""Data with known relevant features or probes, end to end: the config's contract
(``generate``, ``base`` + ``probes``, ``relevant`` / ``relevant_file``), the rows' counts of
relevant features and probes in the top k, and ``fsbench datasets info --config``.

The counts are checked against the rankings fsbench keeps (rankings.csv.gz) and the relevant
sets written in the test (declared indices, the probe columns' positions) or drawn by
scikit-learn's own generator; the planted-signal test against what a perfect filter and a random
ranking must give (all informative features; k * n_relevant / d on average).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from fsbench.cli import main
from fsbench.configuration.experiment import KnownDataConfig
from fsbench.configuration.parse import parse_experiment
from fsbench.datasets.known import build_known_data, selection_counts
from fsbench.errors import ConfigError

PROTOCOL = """\
seed: 0
preprocessing: {standardize: train}
protocol: {kind: holdout, train_size: 0.6, n_trials: 3}
inner_cv: {n_splits: 3}
classifier: {name: linear_svm, C: 1}
"""


def write_config(folder: Path, datasets: str, *, selectors: str = "[fisher, random]", n_features: str = "[2, 5, 10]",
                 name: str = "known") -> Path:
    text = f"name: {name}\n{PROTOCOL}datasets:\n{textwrap.indent(datasets, '  ')}selectors: {selectors}\n" \
           f"n_features: {n_features}\nn_jobs: 1\n"
    path = folder / "config.yaml"
    path.write_text(text)
    return path


def run(args: list[str]):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def toy_csv(folder: Path, n: int = 60, d: int = 12, signal: tuple[int, ...] = (3, 7), seed: int = 0) -> Path:
    """A CSV whose class depends on the features ``signal`` only (named f0..f{d-1})."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, d))
    X[:, list(signal)] += 3.0 * y[:, None]
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(d)])
    frame["class"] = np.where(y == 1, "b", "a")
    path = folder / "toy.csv"
    frame.to_csv(path, index=False)
    return path


def run_and_read(config: Path, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``fsbench run CONFIG -o OUT``, which must succeed, then its runs and rankings tables."""
    result = run(["run", str(config), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return pd.read_csv(out / "runs.csv.gz"), pd.read_csv(out / "rankings.csv.gz")


def top_k(rankings: pd.DataFrame, dataset: str, selector: str, repeat: int, k: int) -> np.ndarray:
    mine = rankings[(rankings.dataset == dataset) & (rankings.selector == selector) & (rankings.repeat == repeat)]
    return mine.sort_values("position")["feature"].to_numpy()[:k]


# ----------------------------------------------------------------------------- counting
def test_selection_counts_by_hand():
    # ranking 5, 0, 9, 2, 7 over 8 real features and 2 probes (8, 9); relevant {0, 2, 3}
    got = selection_counts([5, 0, 9, 2, 7], [1, 2, 3, 5], relevant=np.array([0, 2, 3]), n_real=8, n_probes=2)
    assert got[1] == {"relevant_selected": 0, "n_relevant": 3, "probes_selected": 0, "n_probes": 2}
    assert got[2]["relevant_selected"] == 1 and got[2]["probes_selected"] == 0
    assert got[3]["relevant_selected"] == 1 and got[3]["probes_selected"] == 1
    assert got[5]["relevant_selected"] == 2 and got[5]["probes_selected"] == 1
    only_relevant = selection_counts([1, 0], [2], relevant=np.array([0]), n_real=2, n_probes=0)
    assert only_relevant[2] == {"relevant_selected": 1, "n_relevant": 1}


# ----------------------------------------------------------------------------- the config's contract
def test_each_form_parses_and_names_its_known_features(tmp_path):
    toy_csv(tmp_path)
    (tmp_path / "relevant.txt").write_text("# the signal\nf3\nf7\n")
    config = write_config(tmp_path, """\
- name: syn
  generate: {kind: classification, n_samples: 120, n_features: 30, n_informative: 3, n_redundant: 2,
             n_repeated: 0, n_classes: 3, class_sep: 2.0, seed: 1}
- name: digits-probes
  base: digits
  probes: {n: 20, kind: permuted, seed: 1}
- name: toy
  path: toy.csv
  label: class
  relevant: [3, 7]
- name: toy-by-name
  base: {path: toy.csv, label: class}
  relevant_file: relevant.txt
  probes: {n: 5, kind: gaussian}
- name: toy-under-base
  base: {path: toy.csv, label: class, relevant: [f7, 3]}
  probes: {n: 5}
""")
    experiment = parse_experiment(config.read_text(), str(config), base_dir=tmp_path)
    assert experiment.datasets == ("syn", "digits-probes", "toy", "toy-by-name", "toy-under-base")
    assert experiment.known("toy-under-base").relevant == (3, 7)
    syn = experiment.known("syn")
    assert dict(syn.generate)["n_informative"] == 3 and dict(syn.generate)["kind"] == "classification"
    assert syn.generator_code  # generated data are identified by the code that draws them
    assert experiment.known("digits-probes").base == "digits"
    assert dict(experiment.known("digits-probes").probes) == {"n": 20, "kind": "permuted", "seed": 1}
    assert experiment.known("toy").relevant == (3, 7) and experiment.known("toy").generator_code == ""
    by_name = experiment.known("toy-by-name")
    assert by_name.relevant == (3, 7) and dict(by_name.probes)["kind"] == "gaussian"
    assert dict(by_name.probes)["seed"] == 0


@pytest.mark.parametrize("entry, said", [
    ("- name: toy\n  path: toy.csv\n  label: class\n  relevant: [3, 12]\n", "feature 12, which does not exist"),
    ("- name: toy\n  path: toy.csv\n  label: class\n  relevant: [f3, g7]\n", "'g7'"),
    ("- name: toy\n  path: toy.csv\n  label: class\n  relevant: [3, 3]\n", "twice"),
    ("- name: toy\n  path: toy.csv\n  label: class\n  relevant: []\n", "empty"),
    ("- name: d\n  base: digits\n  relevant: [pixel]\n", "no column names"),
    ("- name: d\n  base: digits\n", "neither 'probes' nor 'relevant'"),
    ("- name: d\n  base: digits\n  probes: {n: 0}\n", "at least 1"),
    ("- name: d\n  base: digits\n  probes: {n: 5, kind: uniform}\n", "uniform"),
    ("- name: d\n  base: digitz\n  probes: {n: 5}\n", "digits"),
    ("- name: digits\n  base: digits\n  probes: {n: 5}\n", "registered dataset"),
    ("- name: s\n  generate: {kind: classification, n_features: 5, n_informative: 8}\n", "n_informative"),
    ("- name: s\n  generate: {kind: spirals}\n", "spirals"),
    ("- name: s\n  generate: {n_samples: 100}\n", "'kind'"),
    ("- name: s\n  generate: {kind: xor}\n  relevant: [0]\n", "declare their own relevant"),
    ("- name: s\n  generate: {kind: xor}\n  base: digits\n", "exactly one source"),
    ("- name: t\n  base: {path: toy.csv, label: class, relevant: [3]}\n  relevant: [7]\n", "given twice"),
])
def test_bad_entries_are_refused_in_one_sentence(tmp_path, entry, said):
    toy_csv(tmp_path)
    config = write_config(tmp_path, entry, n_features="[2]")
    with pytest.raises(ConfigError) as caught:
        parse_experiment(config.read_text(), str(config), base_dir=tmp_path)
    message = str(caught.value)
    assert said in message, message
    assert "\n" not in message and "Traceback" not in message


def test_bad_relevant_index_from_the_command_line_exits_2_and_writes_nothing(tmp_path):
    toy_csv(tmp_path)
    config = write_config(tmp_path, "- name: toy\n  path: toy.csv\n  label: class\n  relevant: [40]\n")
    result = CliRunner().invoke(main, ["run", str(config), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2
    assert "relevant" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_the_fingerprint_covers_the_known_features():
    base = KnownDataConfig(name="x", base="digits", probes=(("kind", "permuted"), ("n", 5), ("seed", 1)),
                           generator_code="abc")
    from fsbench.configuration.experiment import Experiment, SelectorConfig

    def fingerprint(known: KnownDataConfig) -> str:
        return Experiment(name="e", seed=0, datasets=("x",), selectors=(SelectorConfig("fisher", "fisher"),),
                          n_features=(2,), known_data=(known,)).fingerprint()

    seen = {fingerprint(base)}
    for changed in (KnownDataConfig(**{**base.__dict__, "probes": (("kind", "permuted"), ("n", 5), ("seed", 2))}),
                    KnownDataConfig(**{**base.__dict__, "generator_code": "abd"}),
                    KnownDataConfig(**{**base.__dict__, "relevant": (1, 2)})):
        seen.add(fingerprint(changed))
    assert len(seen) == 4


# ----------------------------------------------------------------------------- rows
def test_rows_count_the_relevant_features_and_probes_of_their_top_k(tmp_path):
    toy_csv(tmp_path)
    config = write_config(tmp_path, """\
- name: toy
  path: toy.csv
  label: class
  relevant: [3, 7]
  probes: {n: 6, kind: permuted, seed: 4}
- name: digits-probes
  base: digits
  probes: {n: 30, kind: gaussian, seed: 2}
""")
    runs, rankings = run_and_read(config, tmp_path / "out")
    assert len(runs) == 2 * 2 * 3 * 3
    for row in runs.itertuples():
        top = top_k(rankings, row.dataset, row.selector, row.repeat, row.k)
        n_real = 12 if row.dataset == "toy" else 64
        assert row.probes_selected == int((top >= n_real).sum())
        assert row.n_probes == (6 if row.dataset == "toy" else 30)
        if row.dataset == "toy":
            assert row.relevant_selected == int(np.isin(top, [3, 7]).sum()) and row.n_relevant == 2
        else:
            assert pd.isna(row.relevant_selected) and pd.isna(row.n_relevant)
    # the planted signal: fisher puts both relevant features first on every split
    fisher = runs[(runs.dataset == "toy") & (runs.selector == "fisher") & (runs.k == 2)]
    assert (fisher.relevant_selected == 2).all()


def test_planted_signal_fisher_finds_every_informative_feature_random_finds_its_share(tmp_path):
    d, k = 100, 20
    rng = np.random.default_rng(11)
    planted = np.sort(rng.choice(d, 8, replace=False))
    toy_csv(tmp_path, n=200, d=d, signal=tuple(int(j) for j in planted), seed=11)
    config = write_config(tmp_path, f"""\
- name: planted
  path: toy.csv
  label: class
  relevant: {[int(j) for j in planted]}
""", n_features=f"[8, {k}]")
    config.write_text(config.read_text().replace("n_trials: 3", "n_trials: 10"))
    result = run(["run", str(config), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.output
    runs = pd.read_csv(tmp_path / "out" / "runs.csv.gz")
    fisher = runs[(runs.selector == "fisher") & (runs.k == 8)]
    assert len(fisher) == 10 and (fisher.relevant_selected == 8).all()
    # a random ranking holds k * n_relevant / d relevant features on average (hypergeometric)
    random_rows = runs[(runs.selector == "random") & (runs.k == k)]
    expected = k * 8 / d
    sd = np.sqrt(stats.hypergeom(d, 8, k).var() / len(random_rows))
    assert abs(random_rows.relevant_selected.mean() - expected) < 4 * sd


def test_generated_classification_relevant_set_carries_the_signal(tmp_path):
    # the generator's relevant set (checked against scikit-learn's column order in test_synthetic.py):
    # with one cluster per class the classes sit on two vertices of the hypercube: the coordinates in
    # which they differ separate the classes, and only relevant columns may
    config = write_config(tmp_path, """\
- name: syn
  generate: {kind: classification, n_samples: 300, n_features: 120, n_informative: 6, n_redundant: 0,
             n_repeated: 0, n_classes: 2, n_clusters_per_class: 1, class_sep: 3.0, flip_y: 0.0, seed: 5}
""", n_features="[6]", selectors="[random]")
    data = build_known_data("syn", generate={"kind": "classification", "n_samples": 300, "n_features": 120,
                                             "n_informative": 6, "n_redundant": 0, "n_repeated": 0,
                                             "n_classes": 2, "n_clusters_per_class": 1, "class_sep": 3.0,
                                             "flip_y": 0.0, "seed": 5})
    X, y = np.asarray(data.X), np.asarray(data.y)
    p = stats.f_oneway(X[y == 0], X[y == 1]).pvalue
    noise = np.setdiff1d(np.arange(120), data.relevant)
    separating = np.flatnonzero(p < 1e-6)
    assert separating.size >= 1 and np.isin(separating, data.relevant).all()  # only relevant columns separate
    assert p[noise].min() > 1e-4
    assert run(["run", str(config), "-o", str(tmp_path / "out"), "-q"]).exit_code == 0
    runs = pd.read_csv(tmp_path / "out" / "runs.csv.gz")
    assert (runs.n_relevant == 6).all()


def test_rows_are_the_same_for_any_n_jobs_and_on_a_cluster(tmp_path):
    config = write_config(tmp_path, """\
- name: xor
  generate: {kind: xor, n_samples: 160, n_features: 20, n_relevant: 2, seed: 3}
  probes: {n: 10, seed: 1}
""", selectors="[fisher, relieff, random]")
    ways = {"j1": ["-j", "1"], "j2": ["-j", "2"]}
    try:
        import distributed  # noqa: F401
    except ImportError:
        pass
    else:  # the cluster's workers compute, the client counts and writes
        ways["cluster"] = ["--scheduler", "local:1"]
    for name, option in ways.items():
        assert run(["run", str(config), "-o", str(tmp_path / name), "-q", *option]).exit_code == 0
    columns = ["dataset", "selector", "repeat", "k", "accuracy", "relevant_selected", "probes_selected"]
    frames = [pd.read_csv(tmp_path / name / "runs.csv.gz")[columns].sort_values(columns[:4]).reset_index(drop=True)
              for name in ways]
    assert frames[0]["probes_selected"].notna().all() and frames[0]["relevant_selected"].notna().all()
    for other in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], other)


def test_changing_the_relevant_set_refuses_to_mix_rows(tmp_path):
    toy_csv(tmp_path)
    entry = "- name: toy\n  path: toy.csv\n  label: class\n  relevant: [3, 7]\n"
    config = write_config(tmp_path, entry, selectors="[fisher]")
    out = tmp_path / "out"
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    before = (out / "runs.csv.gz").read_bytes()
    write_config(tmp_path, entry.replace("[3, 7]", "[3]"), selectors="[fisher]")
    result = CliRunner().invoke(main, ["run", str(config), "-o", str(out), "-q"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (out / "runs.csv.gz").read_bytes() == before


# ----------------------------------------------------------------------------- datasets info
def test_datasets_info_describes_a_generated_dataset_and_its_relevant_set(tmp_path):
    config = write_config(tmp_path, """\
- name: xor
  generate: {kind: xor, n_samples: 64, n_features: 10, n_relevant: 2, seed: 3}
  probes: {n: 4, kind: gaussian, seed: 0}
- digits
""")
    result = run(["datasets", "info", "xor", "--config", str(config)])
    assert result.exit_code == 0, result.output
    data = build_known_data("xor", generate={"kind": "xor", "n_samples": 64, "n_features": 10, "n_relevant": 2,
                                             "seed": 3}, probes={"n": 4, "kind": "gaussian", "seed": 0})
    assert f"relevant: 2 features: {data.relevant[0]}, {data.relevant[1]}" in result.output
    assert "64 samples x 14 features (10 real, 4 probes)" in result.output
    assert "probes:   features 10 to 13" in result.output
    registered = run(["datasets", "info", "digits", "--config", str(config)])
    assert registered.exit_code == 0 and "1797 samples" in registered.output
    missing = CliRunner().invoke(main, ["datasets", "info", "nope", "--config", str(config)])
    assert missing.exit_code == 2 and "has no dataset 'nope'" in missing.output


def test_stats_measures_stability_over_the_real_features_and_the_probes(tmp_path):
    config = write_config(tmp_path, """\
- name: xor
  generate: {kind: xor, n_samples: 120, n_features: 16, n_relevant: 2, seed: 3}
  probes: {n: 8, kind: gaussian, seed: 1}
""", selectors="[fisher, random]", n_features="[2, 5]")
    out = tmp_path / "out"
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    result = run(["stats", str(out), "--metric", "relevant_recall", "--k", "5", "-o", str(tmp_path / "st")])
    assert result.exit_code == 0, result.output
    stability = pd.read_csv(tmp_path / "st" / "stability.csv")
    rankings = pd.read_csv(out / "rankings.csv.gz")
    d = 16 + 8  # the generated features and the probes
    for selector in ("fisher", "random"):
        top = rankings[(rankings.selector == selector) & (rankings.position <= 5)]
        Z = np.zeros((3, d))
        for repeat, picks in top.groupby("repeat"):
            Z[repeat, picks.feature.to_numpy()] = 1
        p = Z.mean(axis=0)
        variance = 3 / 2 * p * (1 - p)  # Nogueira, Sechidis & Brown (JMLR 2018), eq. 4, M = 3 runs
        expected = 1 - variance.mean() / (5 / d * (1 - 5 / d))
        got = stability[(stability.selector == selector) & (stability.k == 5)].nogueira.item()
        assert got == pytest.approx(expected, abs=1e-9)  # stability.csv keeps 10 significant digits


def test_an_interrupted_run_resumes_with_the_same_counts(tmp_path):
    # the counts are written with each task: restored from task files, or from runs.csv.gz when the
    # task files are gone, the rows are those of an uninterrupted run
    toy_csv(tmp_path)
    config = write_config(tmp_path, "- name: toy\n  path: toy.csv\n  label: class\n  relevant: [3, 7]\n"
                                    "  probes: {n: 4, seed: 2}\n", selectors="[fisher, random]")
    out = tmp_path / "out"
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    columns = ["dataset", "selector", "repeat", "k", "relevant_selected", "probes_selected", "n_relevant", "n_probes"]

    def rows() -> pd.DataFrame:
        return pd.read_csv(out / "runs.csv.gz")[columns].sort_values(columns[:4]).reset_index(drop=True)

    full = rows()
    tasks = sorted((out / "tasks").iterdir())
    for path in tasks[::2]:  # as if killed before these tasks ran
        path.unlink()
    (out / "runs.csv.gz").rename(tmp_path / "kept.csv.gz")
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    pd.testing.assert_frame_equal(rows(), full)
    for path in (out / "tasks").iterdir():  # the task files lost: restored from runs.csv.gz
        path.unlink()
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    pd.testing.assert_frame_equal(rows(), full)


def test_stats_on_a_hand_edited_config_skips_stability_without_a_traceback(tmp_path):
    config = write_config(tmp_path, """\
- name: xor
  generate: {kind: xor, n_samples: 120, n_features: 16, n_relevant: 2, seed: 3}
""", selectors="[fisher, random]", n_features="[2]")
    out = tmp_path / "out"
    assert run(["run", str(config), "-o", str(out), "-q"]).exit_code == 0
    text = (out / "config.yaml").read_text()
    (out / "config.yaml").write_text(text.replace("n_features: 16", "n_features: sixteen"))
    result = CliRunner().invoke(main, ["stats", str(out), "--metric", "relevant_recall", "-o", str(tmp_path / "st")])
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output


def test_a_sparse_file_with_probes_stays_sparse_and_counts_its_probes(tmp_path):
    """An svmlight file (read as CSR) as the base of probes: the dataset stays sparse (its rows record
    the sparse protocol), and each row's probe count is that of its stored ranking's top k."""
    import scipy.sparse
    from sklearn.datasets import dump_svmlight_file

    from fsbench.evaluation import protocol_code

    rng = np.random.default_rng(0)
    y = np.arange(60) % 3
    X = scipy.sparse.random(60, 400, density=0.02, format="csr", random_state=1)
    X = scipy.sparse.hstack([X, scipy.sparse.csr_matrix(np.eye(3)[y] * rng.uniform(1, 2, (60, 1)))], format="csr")
    dump_svmlight_file(X, y, str(tmp_path / "text.svm"))
    config = write_config(tmp_path, """\
- name: text-probes
  base: {path: text.svm}
  probes: {n: 50, kind: permuted, seed: 1}
""")
    runs, rankings = run_and_read(config, tmp_path / "out")
    assert set(runs.protocol_code) == {protocol_code(sparse=True)}
    for row in runs.itertuples():
        top = top_k(rankings, row.dataset, row.selector, row.repeat, row.k)
        assert row.n_probes == 50 and row.probes_selected == int((top >= 403).sum())
