"""Experiment configuration: YAML -> a validated, frozen :class:`Experiment`.

Every problem is reported before anything runs, as one sentence that starts with the file,
the line and the key's path (``glioma.yaml:12: protocol.train_size: ...``).

Schema (see ``configs/quickstart.yaml`` for a commented example)::

    name: str                       # experiment name; results go to results/<name> by default
    description: str                # optional
    seed: int                       # every random choice derives from it and the task identity
    datasets: [name, ...]           # registry names or aliases ('fsbench datasets list'), users' files
                                    # ({name, path, label}), or data with known relevant features:
                                    # {name, generate: {kind: classification | madelon | xor, ...}},
                                    # {name, base: glioma, probes: {n: 1000, kind: permuted, seed: 1}},
                                    # {name, path, label, relevant: [0, 3]} (fsbench.configuration.known_data)
    preprocessing:
      standardize: train | global | none     # z-score fit on the training part / all data / off
    protocol:
      kind: holdout | kfold
      train_size: 0.6               # holdout: fraction in (0, 1) or a sample count
      n_trials: 10                  # holdout: number of random stratified splits
      n_splits: 5                   # kfold: folds (stratified)
      n_repeats: 1                  # kfold: repetitions with fresh shuffles
      select_on: train              # fit selectors on the training part, or on 'all' data
                                    # before splitting (a leakage study; never the default)
    inner_cv:
      n_splits: 3                   # or the DSO-FS rule: {below: 200, small: 3, large: 8}
    selectors:                      # a name, or a mapping:
      - name: rfs
        label: rfs                  # optional, unique; the name in tables
        params: {max_iter: 50}      # fixed hyper-parameters
        grid: {gamma: [0.1, 1, 10]} # tuned by inner CV on the training part
    classifier:
      name: linear_svm | crammer_singer
      backend: auto | libsvm | liblinear   # linear_svm only: SVC(kernel='linear') (LIBSVM, one-vs-one,
                                    # hinge) or LinearSVC (LIBLINEAR, one-vs-rest, squared hinge);
                                    # auto (the default): LIBSVM when the task's training part has
                                    # at most 300 samples (LIBSVM_MAX_TRAIN), LIBLINEAR above
      C: [0.01, 0.1, 1, 10]         # a list is tuned by inner CV; a number is fixed
    n_features: [10, 20, 30]        # or {start: 10, stop: 100, step: 10} (stop included)
    n_jobs: 1
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fsbench.configuration.entries import parse_classifier, parse_classifiers, parse_data_file, parse_selector
from fsbench.configuration.experiment import (
    BACKENDS,
    CLASSIFIERS,
    PROTOCOLS,
    RESERVED_PARAMS,
    SELECT_ON,
    STANDARDIZE,
    ClassifierConfig,
    Experiment,
    InnerCVConfig,
    ProtocolConfig,
    SelectorConfig,
    reads_as_missing,
)
from fsbench.configuration.known_data import is_known_data_entry, parse_known_data
from fsbench.configuration.yamlio import Located, Reader, join_key, load_yaml
from fsbench.errors import ConfigError, FsbenchError

__all__ = ["BACKENDS", "CLASSIFIERS", "PROTOCOLS", "RESERVED_PARAMS", "SELECT_ON", "STANDARDIZE",
           "ClassifierConfig", "Experiment", "InnerCVConfig", "ProtocolConfig", "SelectorConfig",
           "load_experiment", "parse_experiment"]


TOP_KEYS = {
    "name": "experiment name", "description": "free text", "seed": "integer",
    "datasets": "list of dataset names", "preprocessing": "mapping", "protocol": "mapping",
    "inner_cv": "mapping", "selectors": "list", "classifier": "mapping", "classifiers": "list",
    "n_features": "list of k", "n_jobs": "integer",
}


@dataclass(frozen=True)
class _FileSpec:
    name: str
    n_features: int


def parse_experiment(
    text: str,
    source: str = "<config>",
    *,
    dataset_resolver: Callable[[str], Any] | None = None,
    base_dir: str | Path | None = None,
) -> Experiment:
    """Validate a YAML experiment description and return it frozen.

    ``dataset_resolver(name)`` returns the registry spec of a dataset (with ``name`` and
    ``n_features``) or raises ConfigError; it defaults to :func:`fsbench.datasets.resolve`.
    Paths of users' data files are relative to ``base_dir`` (the config file's folder; default
    the working directory).
    """
    if dataset_resolver is None:
        from fsbench.datasets import resolve as dataset_resolver
    r = Reader(source)
    root = load_yaml(text, source)
    top = r.mapping(root, "", TOP_KEYS)
    for required in ("name", "datasets", "selectors", "n_features"):
        if required not in top:
            r.fail(root, "", f"the required key {required!r} is missing.")

    name = r.string(top["name"], "name")
    if not name or any(ch in name for ch in "/\\") or name.startswith("."):
        r.fail(top["name"], "name", "must be a non-empty name without slashes (it names the results folder).")
    description = r.string(top["description"], "description") if "description" in top else ""
    seed = r.integer(top["seed"], "seed", minimum=0) if "seed" in top else 0
    n_jobs = r.integer(top["n_jobs"], "n_jobs") if "n_jobs" in top else 1
    if n_jobs == 0:
        r.fail(top["n_jobs"], "n_jobs", "must be a positive number of workers or -1 for all cores.")

    # datasets: registry names, or users' files
    datasets: list[str] = []
    specs = []
    data_files = []
    known_data = []
    for i, item in enumerate(r.sequence(top["datasets"], "datasets")):
        path = join_key("datasets", i)
        if is_known_data_entry(item):
            _refuse_missing_name(r, item, path, "name", "dataset")
            known, width = parse_known_data(r, item, path, Path(base_dir) if base_dir else Path.cwd())
            spec = _FileSpec(known.name, width)
            known_data.append(known)
        elif isinstance(item.value, dict):
            _refuse_missing_name(r, item, path, "name", "dataset")
            data_file, data = parse_data_file(r, item, path, Path(base_dir) if base_dir else Path.cwd())
            spec = _FileSpec(data_file.name, data.n_features)
            data_files.append(data_file)
        else:
            try:
                spec = dataset_resolver(r.string(item, path))
            except ConfigError as exc:
                r.fail(item, path, str(exc))
        if spec.name in datasets:
            r.fail(item, path, f"dataset {spec.name!r} is listed twice; give each a distinct name.")
        datasets.append(spec.name)
        specs.append(spec)

    standardize = "train"
    if "preprocessing" in top:
        pre = r.mapping(top["preprocessing"], "preprocessing", {"standardize": ""})
        if "standardize" in pre:
            standardize = r.string(pre["standardize"], "preprocessing.standardize", STANDARDIZE)

    protocol = _parse_protocol(r, top.get("protocol"))
    inner_cv = _parse_inner_cv(r, top.get("inner_cv"))
    if "classifier" in top and "classifiers" in top:
        r.fail(top["classifiers"], "classifiers", "give 'classifier' (one) or 'classifiers' (a list), not both.")
    classifier = parse_classifier(r, top.get("classifier"))
    classifiers = parse_classifiers(r, top["classifiers"]) if "classifiers" in top else ()
    for i, item in enumerate(top["classifiers"].value if classifiers else ()):
        _refuse_missing_name(r, item, join_key("classifiers", i), "label", "classifier")
    n_features = _parse_n_features(r, top["n_features"])
    for spec in specs:
        if spec.n_features and max(n_features) > spec.n_features:
            r.fail(top["n_features"], "n_features",
                   f"k = {max(n_features)} exceeds the {spec.n_features} features of dataset "
                   f"{spec.name!r}; lower n_features or drop the dataset.")

    selectors: list[SelectorConfig] = []
    for i, item in enumerate(r.sequence(top["selectors"], "selectors")):
        sel = parse_selector(r, item, join_key("selectors", i), standardize=standardize)
        _refuse_missing_name(r, item, join_key("selectors", i), "label", "selector")
        if any(s.label == sel.label for s in selectors):
            r.fail(item, join_key("selectors", i),
                   f"label {sel.label!r} is used twice; give each entry a distinct 'label'.")
        selectors.append(sel)

    return Experiment(
        name=name, seed=seed, datasets=tuple(datasets), selectors=tuple(selectors),
        n_features=n_features, standardize=standardize, protocol=protocol, inner_cv=inner_cv,
        classifier=classifier, classifiers=classifiers, data_files=tuple(data_files),
        known_data=tuple(known_data),
        n_jobs=n_jobs, description=description, source=source,
        base_dir=str(base_dir) if base_dir is not None else None,
    )


def _refuse_missing_name(r: Reader, item: Located, path: str, key: str, noun: str) -> None:
    """Refuse an entry whose ``key`` (else its ``name``, which then labels it) is a string pandas
    reads as missing ('NA', 'None', 'null', 'nan', '', ...): its rows would come back from
    runs.csv.gz without a name, and ``run``, ``table``, ``plot`` and the rerun would fail after
    every task had run. ``noun`` is what the entry is (selector, classifier, dataset)."""
    mapping = isinstance(item.value, dict)
    entry = item.value if mapping else {"name": item}  # a bare name (a plugin's entry point may be so named)
    field = key if key in entry else "name"
    node = entry.get(field)
    if node is None or not isinstance(node.value, str) or not reads_as_missing(node.value):
        return
    said, fix = f"{noun} {field} {node.value!r}", f"give another {key}"
    if field != key:  # the entry's name labels it
        said, fix = f"{said} (its {key}, as none is given)", f"give it a {key}"
    r.fail(node, join_key(path, field) if mapping else path,
           f"the {said} would be read back from runs.csv.gz as a missing value (pandas reads '', NA, N/A, None, "
           f"null, nan and the like so, in any case); {fix}.")


def _parse_protocol(r: Reader, node: Located | None) -> ProtocolConfig:
    if node is None:
        return ProtocolConfig()
    keys = {"kind": "", "train_size": "", "n_trials": "", "n_splits": "", "n_repeats": "", "select_on": ""}
    m = r.mapping(node, "protocol", keys)
    kind = r.string(m["kind"], "protocol.kind", PROTOCOLS) if "kind" in m else "holdout"
    wrong = {"holdout": ("n_splits", "n_repeats"), "kfold": ("train_size", "n_trials")}[kind]
    for key in wrong:
        if key in m:
            r.fail(m[key], f"protocol.{key}", f"does not apply to protocol.kind {kind!r}; remove it.")
    out = ProtocolConfig(kind=kind)
    if "train_size" in m:
        value = m["train_size"].value
        if isinstance(value, int) and not isinstance(value, bool):
            size: float | int = r.integer(m["train_size"], "protocol.train_size", minimum=2)
        else:
            size = r.number(m["train_size"], "protocol.train_size")
            if not 0 < size < 1:
                r.fail(m["train_size"], "protocol.train_size",
                       f"a fraction must lie strictly between 0 and 1, got {size}.")
        out = replace(out, train_size=size)
    if "n_trials" in m:
        out = replace(out, n_trials=r.integer(m["n_trials"], "protocol.n_trials", minimum=1))
    if "n_splits" in m:
        out = replace(out, n_splits=r.integer(m["n_splits"], "protocol.n_splits", minimum=2))
    if "n_repeats" in m:
        out = replace(out, n_repeats=r.integer(m["n_repeats"], "protocol.n_repeats", minimum=1))
    if "select_on" in m:
        out = replace(out, select_on=r.string(m["select_on"], "protocol.select_on", SELECT_ON))
    return out


def _parse_inner_cv(r: Reader, node: Located | None) -> InnerCVConfig:
    if node is None:
        return InnerCVConfig()
    m = r.mapping(node, "inner_cv", {"n_splits": ""})
    if "n_splits" not in m:
        return InnerCVConfig()
    value = m["n_splits"]
    if isinstance(value.value, dict):
        rule = r.mapping(value, "inner_cv.n_splits", {"below": "", "small": "", "large": ""})
        for key in ("below", "small", "large"):
            if key not in rule:
                r.fail(value, "inner_cv.n_splits",
                       f"the rule needs 'below', 'small' and 'large' (missing {key!r}), "
                       "e.g. {below: 200, small: 3, large: 8}.")
        return InnerCVConfig(
            n_splits=None,
            below=r.integer(rule["below"], "inner_cv.n_splits.below", minimum=1),
            small=r.integer(rule["small"], "inner_cv.n_splits.small", minimum=2),
            large=r.integer(rule["large"], "inner_cv.n_splits.large", minimum=2),
        )
    return InnerCVConfig(n_splits=r.integer(value, "inner_cv.n_splits", minimum=2))


def _parse_n_features(r: Reader, node: Located) -> tuple[int, ...]:
    if isinstance(node.value, dict):
        m = r.mapping(node, "n_features", {"start": "", "stop": "", "step": ""})
        for key in ("start", "stop"):
            if key not in m:
                r.fail(node, "n_features", f"a range needs 'start' and 'stop' (missing {key!r}).")
        start = r.integer(m["start"], "n_features.start", minimum=1)
        stop = r.integer(m["stop"], "n_features.stop", minimum=1)
        step = r.integer(m["step"], "n_features.step", minimum=1) if "step" in m else 1
        if stop < start:
            r.fail(m["stop"], "n_features.stop", f"must be at least start ({start}).")
        return tuple(range(start, stop + 1, step))
    if isinstance(node.value, int) and not isinstance(node.value, bool):
        return (r.integer(node, "n_features", minimum=1),)
    ks = [r.integer(v, join_key("n_features", i), minimum=1)
          for i, v in enumerate(r.sequence(node, "n_features"))]
    if len(set(ks)) != len(ks):
        r.fail(node, "n_features", "lists a value twice.")
    return tuple(sorted(ks))


def load_experiment(path: str | Path, **kwargs: Any) -> Experiment:
    """Read and validate a YAML experiment file.

    Its folder is put first on the import path (``sys.path``, which joblib's workers inherit), so
    ``class:`` and ``score_func:`` may name a module beside the config, as ``examples/`` does.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FsbenchError(f"Config file {str(path)!r} does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FsbenchError(f"Cannot read config file {str(path)!r} ({exc}); check the file.") from None
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return parse_experiment(text, source=path.name, base_dir=folder, **kwargs)
