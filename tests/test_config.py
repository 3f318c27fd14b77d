"""Config validation: every rejection names file, line and key; YAML 1.1 number traps handled."""

from __future__ import annotations

import textwrap

import pytest

from fsbench.configuration.parse import parse_experiment
from fsbench.configuration.yamlio import load_yaml, resolve_plain_scalar
from fsbench.errors import ConfigError


class _Spec:
    def __init__(self, name: str, n_features: int):
        self.name, self.n_features = name, n_features


def _resolver(name: str) -> _Spec:
    known = {"glioma": 4434, "gliom": 4434, "digits": 64, "allaml": 7129}
    if name.lower() not in known:
        raise ConfigError(f"Unknown dataset {name!r}. Did you mean 'glioma'?")
    return _Spec("glioma" if name.lower() == "gliom" else name.lower(), known[name.lower()])


BASE = """\
name: demo
seed: 3
datasets: [glioma]
protocol:
  kind: holdout
  train_size: 0.6
  n_trials: 2
selectors: [fisher]
classifier:
  name: linear_svm
  C: [0.1, 1]
n_features: [10, 20]
"""


def parse(text: str):
    return parse_experiment(textwrap.dedent(text), "exp.yaml", dataset_resolver=_resolver)


def reject(text: str, *fragments: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse(text)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert "\n" not in message.strip()
    return message


def test_valid_config_is_frozen_and_complete():
    exp = parse(BASE)
    assert exp.name == "demo" and exp.seed == 3 and exp.datasets == ("glioma",)
    assert exp.protocol.train_size == 0.6 and exp.protocol.n_trials == 2
    assert exp.classifier.C == (0.1, 1.0) and exp.classifier.tuned
    assert exp.n_features == (10, 20)
    assert exp.selectors[0].name == "fisher" and exp.selectors[0].label == "fisher"
    with pytest.raises(AttributeError):
        exp.seed = 4  # type: ignore[misc]


def test_fingerprint_ignores_n_jobs_but_not_seed():
    a = parse(BASE)
    assert a.fingerprint() == parse(BASE + "n_jobs: 2\n").fingerprint()
    assert a.fingerprint() != parse(BASE.replace("seed: 3", "seed: 4")).fingerprint()


@pytest.mark.parametrize(
    ("text", "value"),
    [("1e-3", 0.001), ("1E3", 1000.0), ("-2.5e+2", -250.0), (".5", 0.5), ("1.", 1.0), ("10", 10),
     ("0x1f", 31), ("0o17", 15), ("10:30", "10:30"), ("yes", "yes"), ("on", "on"), ("true", True),
     ("~", None), (".inf", float("inf")), ("1_000", "1_000")],
)
def test_yaml12_scalars(text, value):
    assert resolve_plain_scalar(text) == value


def test_exponent_without_dot_is_a_number_in_config():
    exp = parse(BASE.replace("C: [0.1, 1]", "C: [1e-4, 1e-3, 1e2]"))
    assert exp.classifier.C == (1e-4, 1e-3, 100.0)


def test_quoted_number_stays_a_string_and_is_rejected():
    reject(BASE.replace("C: [0.1, 1]", 'C: ["1e-3", 1]'), "exp.yaml:11", "classifier.C[0]", "expected a number")


def test_sexagesimal_is_rejected_by_name():
    msg = reject(BASE.replace("n_trials: 2", "n_trials: 10:30"), "exp.yaml:7", "protocol.n_trials", "base-60")
    assert "630" not in msg


def test_malformed_yaml_names_the_line():
    reject(BASE + "protocol: [unclosed\n", "exp.yaml:", "malformed YAML")


def test_empty_file():
    reject("", "empty")


def test_unknown_top_level_key_with_suggestion():
    reject(BASE + "n_feature: [5]\n", "exp.yaml:13", "n_feature", "Did you mean 'n_features'")


def test_unknown_nested_key_names_path_and_line():
    reject(BASE.replace("  n_trials: 2", "  n_trails: 2"), "exp.yaml:7", "protocol.n_trails", "n_trials")


def test_wrong_type():
    reject(BASE.replace("seed: 3", "seed: three"), "exp.yaml:2", "seed", "expected an integer")
    reject(BASE.replace("n_features: [10, 20]", "n_features: [10, 2.5]"), "n_features[1]", "integer")


def test_train_size_fraction_range():
    reject(BASE.replace("train_size: 0.6", "train_size: 1.5"), "protocol.train_size", "between 0 and 1")


def test_key_of_other_protocol_rejected():
    reject(BASE.replace("  n_trials: 2", "  n_splits: 5"), "protocol.n_splits", "does not apply")


def test_unknown_dataset_with_suggestion():
    reject(BASE.replace("[glioma]", "[gliomaa]"), "exp.yaml:3", "datasets[0]", "Did you mean 'glioma'")


def test_alias_resolves_to_canonical_and_duplicates_rejected():
    assert parse(BASE.replace("[glioma]", "[GLIOM]")).datasets == ("glioma",)
    reject(BASE.replace("[glioma]", "[glioma, GLIOM]"), "listed twice")


def test_unknown_selector_with_suggestion():
    reject(BASE.replace("[fisher]", "[fishr]"), "selectors[0].name", "Did you mean 'fisher'")


def test_unknown_selector_parameter():
    text = BASE.replace("selectors: [fisher]", "selectors:\n  - name: random\n    params: {random_stat: 1}")
    reject(text, "selectors[0].params.random_stat", "no parameter")


def test_reserved_parameter_rejected():
    text = BASE.replace("selectors: [fisher]", "selectors:\n  - name: fisher\n    params: {n_features_to_select: 5}")
    reject(text, "n_features_to_select", "cannot be set")


def test_duplicate_labels_rejected():
    reject(BASE.replace("[fisher]", "[fisher, fisher]"), "selectors[1]", "label")


def test_k_larger_than_dataset_rejected_before_running():
    reject(BASE.replace("[10, 20]", "[10, 5000]"), "n_features", "5000", "4434")


def test_n_features_range_inclusive():
    exp = parse(BASE.replace("n_features: [10, 20]", "n_features: {start: 10, stop: 100, step: 10}"))
    assert exp.n_features == tuple(range(10, 101, 10))


def test_inner_cv_rule_of_dso_fs():
    exp = parse(BASE + "inner_cv:\n  n_splits: {below: 200, small: 3, large: 8}\n")
    assert exp.inner_cv.folds_for(199) == 3 and exp.inner_cv.folds_for(200) == 8
    reject(BASE + "inner_cv:\n  n_splits: {below: 200, small: 3}\n", "inner_cv.n_splits", "large")


def test_classifier_fixed_C_and_crammer_singer():
    exp = parse(BASE.replace("  name: linear_svm\n  C: [0.1, 1]", "  name: crammer_singer\n  C: 1"))
    assert exp.classifier.name == "crammer_singer" and exp.classifier.C == (1.0,) and not exp.classifier.tuned
    reject(BASE.replace("name: linear_svm", "name: svm"), "classifier.name", "not one of")


def test_duplicate_key_rejected():
    reject(BASE + "seed: 4\n", "exp.yaml:13", "appears twice")


def test_lines_are_tracked_through_nested_values():
    root = load_yaml("a:\n  b:\n    - 1\n    - x: 2\n")
    assert root.value["a"].value["b"].value[1].value["x"].line == 4


def test_invalid_selector_parameter_value_is_rejected_before_running():
    text = BASE.replace("selectors: [fisher]", "selectors:\n  - name: relieff\n    params: {n_neighbors: 0}")
    reject(text, "exp.yaml:10: selectors[0].params.n_neighbors: must be an int in [1, ", "got 0.")
    text = BASE.replace("selectors: [fisher]", "selectors:\n  - name: mrmr\n    grid: {criterion: [mid, miz]}")
    reject(text, "selectors[0].grid.criterion[1]: must be one of 'mid', 'miq', got the string 'miz'",
           "Did you mean 'miq'?")


def test_integral_float_for_an_integer_parameter():
    text = BASE.replace("selectors: [fisher]", "selectors:\n  - name: relieff\n    params: {n_neighbors: 1e1}")
    assert parse(text).selectors[0].params_dict == {"n_neighbors": 10}


# ----------------------------------------------------------------------------- names pandas reads as missing
def _pandas_missing_strings() -> list[str]:
    """pandas' default missing-value strings, each checked here to come back from a CSV as NaN
    (the independent reference: pandas itself), and their case variants (a reader that lists
    them, or a later pandas, reads those as missing too)."""
    import io

    import pandas as pd
    from pandas._libs.parsers import STR_NA_VALUES

    default = pd.read_csv(io.StringIO("label\n" + "\n".join(sorted(STR_NA_VALUES - {""})) + "\n"))
    assert default["label"].isna().all() and len(default) == len(STR_NA_VALUES) - 1
    return sorted({v for s in STR_NA_VALUES for v in (s, s.lower(), s.upper(), s.title(), f" {s} ")})


@pytest.mark.parametrize("value", _pandas_missing_strings())
def test_labels_and_names_pandas_reads_as_missing_are_refused(value):
    quoted = value.replace("'", "''")
    message = reject(BASE.replace("selectors: [fisher]", f"selectors: [fisher, {{name: random, label: '{quoted}'}}]"),
                     "exp.yaml:8", "selectors[1].label", repr(value), "missing value")
    assert message.count("\n") == 0
    plain = BASE.replace("classifier:\n  name: linear_svm\n  C: [0.1, 1]\n",
                         f"classifiers: [knn, {{name: linear_svm, label: '{quoted}'}}]\n")
    reject(plain, "classifiers[1].label", repr(value))


@pytest.mark.parametrize("label", ["nana", "NA1", "none-control", "na_filter", "n-a", "0"])
def test_labels_that_only_resemble_missing_values_are_kept(label):
    exp = parse(BASE.replace("selectors: [fisher]", f"selectors: [fisher, {{name: random, label: '{label}'}}]"))
    assert [s.label for s in exp.selectors] == ["fisher", label]


# ----------------------------------------------------------------------------- YAML beyond a config
@pytest.mark.parametrize(("text", "value"), [("!!str 10", "10"), ("! 10", "10"), ("!!int 10", 10),
                                             ("!!float 1e-3", 0.001), ("!!float 2", 2.0), ("!!bool true", True),
                                             ("!!null ~", None), ("!!str true", "true")])
def test_yaml_core_tags_are_honoured(text, value):
    got = load_yaml(f"a: {text}\n").plain()["a"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("tag", ["!foo", "!!python/tuple", "!!binary", "!!timestamp", "!!omap", "!custom"])
def test_other_tags_are_refused_naming_the_tag_and_line(tag):
    with pytest.raises(ConfigError) as info:
        load_yaml(f"name: x\nseed: {tag} 3\n", "t.yaml")
    assert str(info.value).startswith("t.yaml:2: ") and repr(tag) in str(info.value)


def test_alias_bomb_is_refused_within_a_second():
    # 7 levels of 10 aliases: 10^7 values (PyYAML's safe_load takes minutes and gigabytes)
    import resource
    import subprocess
    import sys

    text = 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, 8):
        text += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n"
    script = ("import sys; from fsbench.configuration.yamlio import load_yaml\n"
              "try:\n    load_yaml(sys.stdin.read(), 'bomb.yaml')\nexcept Exception as exc:\n    print(exc)\n")
    # imports warm in the cache
    subprocess.run([sys.executable, "-c", "import fsbench.configuration.yamlio"], check=True)

    def children_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    start = children_cpu()
    out = subprocess.run([sys.executable, "-c", script], input=text, capture_output=True, text=True, timeout=60)
    seconds = children_cpu() - start  # CPU time, not wall time: the machine's load does not count
    assert "expands to more than 100,000 values" in out.stdout, out.stdout + out.stderr
    assert seconds < 1.5, seconds  # a second of work at most, plus the interpreter's start


def test_aliases_within_the_bound_still_work():
    tree = load_yaml("grid: &g [1, 2, 3]\nother: *g\n").plain()
    assert tree == {"grid": [1, 2, 3], "other": [1, 2, 3]}


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x1b"])
def test_a_character_yaml_refuses_is_one_sentence_with_its_line(char):
    with pytest.raises(ConfigError) as info:
        load_yaml(f"name: x\nseed: 0{char}\n", "t.yaml")
    assert str(info.value).startswith("t.yaml:2: ") and f"U+{ord(char):04X}" in str(info.value)
    assert "\n" not in str(info.value)


def test_merge_keys_are_refused_before_any_alias_is_expanded():
    # '<<' would copy the keys of the aliased mapping, values the bound on aliases does not see
    with pytest.raises(ConfigError) as info:
        load_yaml("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n", "m.yaml")
    assert str(info.value).startswith("m.yaml:3: ") and "merge keys" in str(info.value)
