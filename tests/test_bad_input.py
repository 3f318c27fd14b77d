"""Every bad input a user can give the command line: one sentence naming the problem, exit status 2,
no traceback, and nothing written or changed.

Each case prepares a folder, runs one command and checks the message names what it should. The
folder's files (but for a results folder's lock file) are compared before and after.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsbench.cli import main

GOOD = """\
name: bad-input
seed: 0
datasets: [digits]
protocol: {kind: holdout, train_size: 0.5, n_trials: 2}
selectors: [fisher]
classifier: {name: linear_svm, C: 1}
n_features: [4, 8]
"""


def _config(folder: Path, text: str = GOOD, name: str = "c.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _edit(old: str, new: str) -> Callable[[Path], list[str]]:
    """A case whose config is GOOD with ``old`` replaced by ``new``, run into folder/out."""
    assert old in GOOD

    def setup(folder: Path) -> list[str]:
        return ["run", str(_config(folder, GOOD.replace(old, new))), "--out", str(folder / "out"), "-q"]

    return setup


def _selector(entry: str) -> Callable[[Path], list[str]]:
    return _edit("selectors: [fisher]", f"selectors: [{entry}]")


def _results(folder: Path, seed: int = 0) -> Path:
    """A finished small run in folder/res (written by the CLI itself)."""
    out = folder / "res"
    config = _config(folder, GOOD.replace("seed: 0", f"seed: {seed}"), f"seed{seed}.yaml")
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def _damaged_runs(kind: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        out = _results(folder)
        data = (out / "runs.csv.gz").read_bytes()
        damaged = {"random": os.urandom(300), "truncated": data[: len(data) // 2],
                   "empty": b"", "not-runs": gzip.compress(b"a,b\n1,2\n")}[kind]
        (out / "runs.csv.gz").write_bytes(damaged)
        return ["table", str(out)]

    return setup


@dataclass
class Case:
    name: str
    setup: Callable[[Path], list[str]]
    says: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def _runs_of_another_seed(folder: Path) -> list[str]:
    out = _results(folder, seed=0)
    (out / "config.yaml").unlink()
    for task in (out / "tasks").iterdir():
        task.unlink()
    return ["run", str(_config(folder, GOOD.replace("seed: 0", "seed: 1"))), "--out", str(out), "-q"]


def _other_configuration(folder: Path) -> list[str]:
    out = _results(folder, seed=0)
    return ["run", str(_config(folder, GOOD.replace("seed: 0", "seed: 1"))), "--out", str(out), "-q"]


def _out_under_a_file(folder: Path) -> list[str]:
    (folder / "afile").write_text("x")
    return ["run", str(_config(folder)), "--out", str(folder / "afile" / "out"), "-q"]


def _out_is_a_file(folder: Path) -> list[str]:
    (folder / "afile").write_text("x")
    return ["run", str(_config(folder)), "--out", str(folder / "afile"), "-q"]


def _put(target: Path, content: bytes | str | None) -> None:
    """Write ``content`` (bytes or text) to ``target``, or make it a folder (None)."""
    if content is None:
        target.mkdir()
    elif isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)


def _data_entry(entry: str, files: dict[str, bytes | str | None] | None = None) -> Callable[[Path], list[str]]:
    """A case whose config reads a user's data file: ``entry`` replaces the dataset list."""

    def setup(folder: Path) -> list[str]:
        for name, content in (files or {}).items():
            _put(folder / name, content)
        return ["run", str(_config(folder, GOOD.replace("datasets: [digits]", f"datasets: [{entry}]"))),
                "--out", str(folder / "out"), "-q"]

    return setup


_CSV = "a,b,class\n" + "".join(f"{i},{i % 3},{'xy'[i % 2]}\n" for i in range(20))


def _classifiers(entry: str) -> Callable[[Path], list[str]]:
    return _edit("classifier: {name: linear_svm, C: 1}", f"classifiers: [{entry}]")


def _report_outside_a_checkout(folder: Path) -> list[str]:
    return ["report", "--configs", str(folder / "configs"), "--results", str(folder / "results")]


def _report_without_results(folder: Path) -> list[str]:
    (folder / "configs").mkdir()
    (folder / "configs" / "rfs.yaml").write_text(GOOD)
    return ["report", "--configs", str(folder / "configs"), "--results", str(folder / "results")]


def _alias_bomb(levels: int = 7) -> str:
    """The "billion laughs": each level a list of ten aliases of the one before (10^levels values)."""
    text = 'lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, levels + 1):
        text += f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n"
    return text


def _text_config(text: str) -> Callable[[Path], list[str]]:
    return lambda f: ["run", str(_config(f, text)), "--out", str(f / "out"), "-q"]


def _paper_table_of_another_experiment(folder: Path) -> list[str]:
    return ["table", str(_results(folder)), "--paper", "rfs"]


def _data_info(name: str, content: bytes | str | None, *options: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        _put(folder / name, content)
        return ["datasets", "info", str(folder / name), *options]

    return setup


_REPO = Path(__file__).resolve().parents[1]
_LABEL_FIRST = "class,a,b\n" + "".join(f"{'xy'[i % 2]},{i},{i % 3}\n" for i in range(20))
_BINARY = bytes(range(256)) * 4
_GZIP_NAMED_CSV = gzip.compress(_CSV.encode())

CASES = [
    # the config file
    Case("config missing", lambda f: ["run", str(f / "nope.yaml")], ("does not exist",)),
    Case("config is a folder", lambda f: ["run", str(f)], ("is a directory",)),
    Case("config not YAML", lambda f: ["run", str(_config(f, "name: [unclosed\n"))], ("c.yaml",)),
    Case("config empty", lambda f: ["run", str(_config(f, ""))], ("c.yaml",)),
    Case("config a list", lambda f: ["run", str(_config(f, "- a\n- b\n"))], ("expected a mapping",)),
    Case("unknown top key", _edit("seed: 0", "seeds: 0"), ("unknown key", "seed")),
    Case("required key missing", _edit("name: bad-input\n", ""), ("'name'", "missing")),
    Case("negative seed", _edit("seed: 0", "seed: -1"), ("seed", "at least 0")),
    Case("unknown dataset", _edit("[digits]", "[digitz]"), ("digitz",)),
    Case("dataset twice", _edit("[digits]", "[digits, digits]"), ("listed twice",)),
    Case("k beyond the features", _edit("[4, 8]", "[4, 100]"), ("100", "64 features")),
    Case("k not a number", _edit("[4, 8]", "[4, eight]"), ("n_features[1]", "integer")),
    Case("k twice", _edit("[4, 8]", "[4, 4]"), ("twice",)),
    Case("unknown protocol", _edit("kind: holdout", "kind: bootstrap"), ("bootstrap", "holdout")),
    Case("train_size above 1", _edit("train_size: 0.5", "train_size: 1.5"), ("train_size", "between 0 and 1")),
    Case("no trials", _edit("n_trials: 2", "n_trials: 0"), ("n_trials", "at least 1")),
    Case("1e8 trials", _edit("n_trials: 2", "n_trials: 1e8"), ("100000000", "at most 10000")),
    Case("unknown classifier", _edit("name: linear_svm", "name: svm"), ("svm", "linear_svm")),
    Case("negative C", _edit("C: 1", "C: -1"), ("classifier.C", "positive")),
    Case("C twice", _edit("C: 1", "C: [1, 1]"), ("twice",)),
    Case("n_jobs -5 in the config", lambda f: ["run", str(_config(f, GOOD + "n_jobs: -5\n")), "-q"],
         ("n_jobs", "-1 for all cores")),
    # YAML beyond what a config needs: refused before validation, naming the file and line
    Case("alias bomb", _text_config(GOOD + _alias_bomb()), ("c.yaml:12", "lol4", "expands to more than")),
    Case("unknown tag", _edit("seed: 0", "seed: !foo 3"), ("c.yaml:2", "'!foo'", "tag")),
    Case("python tag", _edit("seed: 0", "seed: !!python/tuple [1, 2]"), ("c.yaml:2", "'!!python/tuple'")),
    Case("binary tag", _edit("seed: 0", "seed: !!binary aGVsbG8="), ("'!!binary'",)),
    Case("set tag", _edit("seed: 0", "seed: !!set {a, b}"), ("'!!set'",)),
    Case("timestamp tag", _edit("seed: 0", "seed: !!timestamp 2001-12-14"), ("'!!timestamp'",)),
    Case("tag on a key", _edit("seed: 0", "!foo seed: 0"), ("'!foo'",)),
    Case("int tag on a word", _edit("seed: 0", "seed: !!int three"), ("'three'", "!!int")),
    Case("NUL byte in the config", _text_config(GOOD.replace("seed: 0", "seed: 0\x00")), ("c.yaml:2", "U+0000")),
    Case("nested 60 deep", _edit("seed: 0", "seed: " + "[" * 60 + "]" * 60), ("c.yaml:2", "nested more than")),
    # names pandas reads back from runs.csv.gz as missing values
    Case("selector label NA", _selector('fisher, {name: random, label: "NA"}'),
         ("c.yaml:5", "selectors[1].label", "'NA'", "missing value")),
    Case("selector label empty", _selector('fisher, {name: random, label: ""}'), ("selectors[1].label", "''")),
    Case("selector label None", _selector("fisher, {name: random, label: None}"), ("'None'",)),
    Case("selector label N/a", _selector("fisher, {name: random, label: N/a}"), ("'N/a'",)),
    Case("selector label <NA>", _selector("fisher, {name: random, label: '<NA>'}"), ("'<NA>'",)),
    Case("plugin named nan", _selector("fisher, {name: nan, score_func: 'sklearn.feature_selection:f_classif'}"),
         ("selectors[1].name", "'nan'", "give it a label")),
    Case("dataset named null", _data_entry("{name: 'null', path: tox.csv}", {"tox.csv": _CSV}),
         ("datasets[0].name", "'null'", "missing value")),
    Case("dataset named #N/A", _data_entry("{name: '#N/A', path: tox.csv}", {"tox.csv": _CSV}), ("'#N/A'",)),
    Case("classifier label NaN", _classifiers("knn, {name: linear_svm, label: NaN}"),
         ("classifiers[1].label", "'NaN'")),
    # selectors and their parameters
    Case("unknown selector", _selector("fishr"), ("fishr", "fisher")),
    Case("duplicate label", _selector("fisher, fisher"), ("used twice",)),
    Case("unknown parameter", _selector("{name: rfs, params: {lambda: 1}}"), ("no parameter 'lambda'",)),
    Case("reserved parameter", _selector("{name: rfs, params: {random_state: 1}}"), ("random_state",)),
    Case("dso p above 1", _selector("{name: dso, params: {p: 2}}"), ("params.p", "2")),
    Case("rfs negative gamma", _selector("{name: rfs, params: {gamma: -1}}"), ("gamma", "-1")),
    Case("rfs no iterations", _selector("{name: rfs, params: {max_iter: 0}}"), ("max_iter", "0")),
    Case("cssvm negative max_iter", _selector("{name: cssvm, params: {max_iter: -1}}"), ("max_iter", "-1")),
    Case("string for a number", _selector("{name: relieff, params: {n_neighbors: many}}"),
         ("n_neighbors", "many")),
    Case("unknown option", _selector("{name: chi2, params: {discretize: kmeans}}"), ("discretize", "kmeans")),
    Case("bad grid value", _selector("{name: rfs, grid: {gamma: [1, -1]}}"), ("gamma", "-1")),
    Case("param and grid", _selector("{name: rfs, params: {gamma: 1}, grid: {gamma: [1, 2]}}"), ("keep one",)),
    # the command line
    Case("-j -5", lambda f: ["run", str(_config(f)), "-j", "-5", "--out", str(f / "out")], ("-1 for all cores",)),
    Case("-j 0", lambda f: ["run", str(_config(f)), "-j", "0", "--out", str(f / "out")], ("-1 for all cores",)),
    Case("--out under a file", _out_under_a_file, ("is a file",)),
    Case("--out is a file", _out_is_a_file, ("is a file",)),
    # results folders
    Case("another configuration's folder", _other_configuration, ("different configuration", "--force")),
    Case("runs.csv.gz of another seed", _runs_of_another_seed, ("different configuration",)),
    Case("table of a missing folder", lambda f: ["table", str(f / "nothing")], ("No results", "nothing")),
    Case("table without a folder", lambda f: ["table"], ("RESULTS_DIR",)),
    Case("runs.csv.gz of random bytes", _damaged_runs("random"), ("is damaged",)),
    Case("runs.csv.gz cut short", _damaged_runs("truncated"), ("is damaged",)),
    Case("runs.csv.gz empty", _damaged_runs("empty"), ("is damaged",)),
    Case("a CSV that is no runs table", _damaged_runs("not-runs"), ("not an fsbench runs table",)),
    Case("plot of damaged results", lambda f: ["plot", str(_damaged_runs("random")(f)[1])], ("is damaged",)),
    Case("discard without results", lambda f: ["discard", str(f), "-s", "fisher"], ("holds no results",)),
    Case("discard unknown selector", lambda f: ["discard", str(_results(f)), "-s", "fishr"], ("'fishr'", "fisher")),
    Case("report outside a checkout", _report_outside_a_checkout, ("No paper configs",)),
    Case("report without results", _report_without_results, ("No paper results",)),
    # users' data files
    Case("data file missing", _data_entry("{name: tox, path: tox.csv}"), ("tox.csv", "does not exist")),
    Case("data path a folder", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": None}), ("folder",)),
    Case("unknown extension", _data_entry("{name: tox, path: tox.xlsx}", {"tox.xlsx": "x"}), (".xlsx",)),
    Case("no such label column", _data_entry("{name: tox, path: tox.csv, label: klass}", {"tox.csv": _CSV}),
         ("'klass'",)),
    Case("non-numeric feature",
         _data_entry("{name: tox, path: tox.csv}",
                     {"tox.csv": _CSV.replace("a,b,class", "a,site,class").replace(",0,", ",liver,")}),
         ("'site'",)),
    Case("one class", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": _CSV.replace(",y\n", ",x\n")}),
         ("one class",)),
    Case("two datasets of one name", _data_entry("{name: tox, path: tox.csv}, {name: tox, path: tox.csv}",
                                                 {"tox.csv": _CSV}), ("'tox'", "twice")),
    Case("file under a registry name", _data_entry("{name: glioma, path: tox.csv}", {"tox.csv": _CSV}),
         ("registered dataset",)),
    Case("binary bytes named .csv", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": _BINARY}),
         ("tox.csv", "not a text file", "0x00")),
    Case("UTF-16 CSV", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": _CSV.encode("utf-16")}),
         ("UTF-16", "UTF-8")),
    Case("gzip named .csv", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": _GZIP_NAMED_CSV}),
         ("gzip-compressed", ".gz")),
    Case("xlsx named .csv", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": b"PK\x03\x04" + _BINARY}),
         ("ZIP archive", "CSV")),
    Case("empty data file", _data_entry("{name: tox, path: tox.csv}", {"tox.csv": b""}), ("tox.csv", "is empty")),
    Case("label column empty in every row",
         _data_entry("{name: tox, path: tox.csv}", {"tox.csv": "a,b,class\n" + "1,2,\n3,4,NA\n" * 5}),
         ("no label in any sample", "'class'", "label:")),
    # users' selectors and classifiers
    Case("plugin module missing", _selector("{name: mine, class: 'nosuchpkg.sel:Mine'}"), ("nosuchpkg",)),
    Case("plugin attribute missing", _selector("{name: mine, score_func: 'sklearn.feature_selection:f_clasif'}"),
         ("f_clasif", "f_classif")),
    Case("plugin not an estimator", _selector("{name: mine, class: 'collections:OrderedDict'}"), ("class",)),
    Case("estimator without scores", _selector("{name: mine, class: 'sklearn.preprocessing:StandardScaler'}"),
         ("ranking_", "coef_")),
    Case("class and score_func", _selector("{name: mine, class: 'sklearn.ensemble:RandomForestClassifier', "
                                           "score_func: 'sklearn.feature_selection:f_classif'}"), ("both",)),
    Case("plugin grid key", _selector("{name: mine, class: 'sklearn.ensemble:RandomForestClassifier', "
                                      "grid: {n_tree: [10, 20]}}"), ("n_tree",)),
    Case("classifier without predict", _classifiers("{name: scale, class: 'sklearn.preprocessing:StandardScaler'}"),
         ("predict",)),
    Case("classifier grid key", _classifiers("{name: knn, grid: {neighbours: [1, 3]}}"), ("neighbours",)),
    Case("unknown classifier name", _classifiers("knnn"), ("knnn", "knn")),
    Case("classifier and classifiers",
         _edit("classifier: {name: linear_svm, C: 1}", "classifier: {name: linear_svm, C: 1}\nclassifiers: [knn]"),
         ("not both",)),
    # datasets
    Case("info of an unknown dataset", lambda f: ["datasets", "info", "digitz"], ("digitz",)),
    Case("fetch of an unknown dataset", lambda f: ["datasets", "fetch", "digitz"], ("digitz",)),
    Case("fetch names and --all", lambda f: ["datasets", "fetch", "lung", "--all"], ("not both",)),
    Case("info of a label-first CSV names --label", _data_info("toy.csv", _LABEL_FIRST),
         ("column 'class'", "--label class")),
    Case("info --label beyond the columns", _data_info("toy.csv", _LABEL_FIRST, "--label", "9"), ("--label 9",)),
    Case("info --label of no column", _data_info("toy.csv", _LABEL_FIRST, "--label", "klass"),
         ("'klass'", "set --label")),
    Case("info of a folder", _data_info("data", None), ("is a folder", "data file")),
    Case("info of a relative folder", lambda f: (f / "data").mkdir() or (f / "data" / "toy.csv").write_text(
        _LABEL_FIRST) and ["datasets", "info", "data"], ("data is a folder", "data/toy.csv")),
    Case("info of binary bytes", _data_info("x.csv", _BINARY), ("not a text file",)),
    Case("info of CR-only binary", _data_info("x.txt", b"\x01\r\x02\r"), ("not a text file",)),
    # tables
    Case("paper table of another experiment", _paper_table_of_another_experiment,
         ("experiment 'bad-input'", "not the rfs paper's", "leave out --paper")),
    # the sl2p results share datasets and methods with rfs's tables: refused by their experiment's name
    Case("paper table of another paper",
         lambda f: ["table", str(_REPO / "results" / "papers" / "sl2p"), "--paper", "rfs"],
         ("experiment 'sl2p'", "not the rfs paper's")),
]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file() and p.name != ".fsbench.lock"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_sentence_exit_2_and_writes_nothing(case: Case, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "cache"))
    args = case.setup(tmp_path)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(main, args)
    message = result.output.strip()
    assert result.exit_code == 2, (result.exit_code, message, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert message.startswith("Error: ") and "\n" not in message and "Traceback" not in message, message
    for fragment in case.says:
        assert fragment in message, message
    if args[:2] == ["datasets", "info"]:
        assert "label:" not in message, message  # the command's option is --label
    assert _snapshot(tmp_path) == before, "a refused command changed files"
    assert not (tmp_path / "out").exists()


def test_at_least_forty_kinds_of_bad_input_are_covered():
    assert len(CASES) >= 40
