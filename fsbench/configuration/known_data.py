"""A config's dataset entries with known relevant features or probes, validated.

```yaml
datasets:
  - name: syn
    generate: {kind: classification, n_samples: 300, n_features: 1000, n_informative: 10, seed: 1}
  - name: glioma-probes
    base: glioma                       # a registered name, or a data file mapping (path, label, relevant)
    probes: {n: 1000, kind: permuted, seed: 1}
  - name: mine
    path: data/mine.csv
    label: class
    relevant: [0, 3, 17]               # or relevant_file: a file of indices or column names
```

:func:`parse_known_data` turns one such entry into a
:class:`~fsbench.configuration.experiment.KnownDataConfig`, or raises ConfigError naming the file,
line and key: a generator's parameters are checked without generating anything
(:func:`fsbench.datasets.synthetic.check_generator`), a user's file is read now, and declared
relevant features must exist (indices of the real features, or column names of a file with a header).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fsbench.configuration.entries import DATA_FILE_KEYS, _plain_mapping, _plain_value, parse_data_file
from fsbench.configuration.experiment import KnownDataConfig
from fsbench.configuration.yamlio import Located, Reader, describe_value, join_key
from fsbench.errors import ConfigError, DataError

__all__ = ["KNOWN_DATA_KEYS", "is_known_data_entry", "parse_known_data"]

#: the keys that make a dataset entry one with known features
KNOWN_DATA_KEYS = ("generate", "base", "probes", "relevant", "relevant_file")
PROBE_KEYS = {"n": "", "kind": "", "seed": ""}


def is_known_data_entry(node: Located) -> bool:
    return isinstance(node.value, dict) and any(key in node.value for key in KNOWN_DATA_KEYS)


def parse_known_data(r: Reader, node: Located, path: str, base_dir: Path) -> tuple[KnownDataConfig, int]:
    """The entry at ``path`` and its number of features (real features plus probes)."""
    from fsbench.code_identity import module_digest
    from fsbench.datasets import synthetic

    allowed = {key: "" for key in ("name", *KNOWN_DATA_KEYS, *DATA_FILE_KEYS)}
    m = r.mapping(node, path, allowed)
    if "name" not in m:
        r.fail(node, path, "a dataset entry needs a 'name' (for example {name: syn, generate: {kind: xor}}).")
    name = r.string(m["name"], join_key(path, "name"))
    if not name or any(ch in name for ch in "/\\"):
        r.fail(m["name"], join_key(path, "name"), "must be a non-empty name without slashes.")
    file_keys = [key for key in DATA_FILE_KEYS if key != "name" and key in m]
    sources = [key for key in ("generate", "base") if key in m] + (["path"] if "path" in m else [])
    if len(sources) != 1:
        said = " and ".join(repr(s) for s in sources) if sources else "none of them"
        r.fail(node, path, f"dataset {name!r} needs exactly one source, 'generate', 'base' or 'path' (it gives "
                           f"{said}).")
    _refuse_registered_name(r, m["name"], join_key(path, "name"), name)

    generate: tuple[tuple[str, Any], ...] = ()
    base, base_file, feature_names, n_real = None, None, None, 0
    relevant_where = {key: join_key(path, key) for key in ("relevant", "relevant_file")}
    if "generate" in m:
        if file_keys:
            r.fail(m[file_keys[0]], join_key(path, file_keys[0]), "applies to a data file; generated data have none.")
        for key in ("relevant", "relevant_file"):
            if key in m:
                r.fail(m[key], join_key(path, key),
                       "generated data declare their own relevant features; remove it.")
        where = join_key(path, "generate")
        params = _plain_mapping(r, m["generate"], where)
        if "kind" not in params:
            r.fail(m["generate"], where, f"needs a 'kind' ({', '.join(synthetic.GENERATOR_KINDS)}).")
        kind = params.pop("kind")
        try:
            completed = synthetic.check_generator(kind, params)
        except DataError as exc:
            r.fail(m["generate"], where, _sentence(exc))
        generate = tuple(sorted({**completed, "kind": kind}.items()))
        n_real = int(completed["n_features"])
    elif "base" in m:
        if file_keys:
            r.fail(m[file_keys[0]], join_key(path, file_keys[0]),
                   "belongs under 'base' (base: {path: ..., label: ...}), not beside it.")
        where = join_key(path, "base")
        if isinstance(m["base"].value, dict):
            inner = dict(m["base"].value)
            inner.setdefault("name", Located(name, m["base"].line))
            for key in ("relevant", "relevant_file"):  # a file's relevant features may sit under base too
                if key in inner:
                    if key in m or ("relevant" if key == "relevant_file" else "relevant_file") in m:
                        r.fail(inner[key], join_key(where, key),
                               "the relevant features are given twice; give them once, under 'base' or beside it.")
                    m = {**m, key: inner.pop(key)}
                    relevant_where[key] = join_key(where, key)
            base_file, data = parse_data_file(r, Located(inner, m["base"].line), where, base_dir)
            n_real, feature_names = data.n_features, data.feature_names
        else:
            from fsbench.datasets import resolve

            try:
                spec = resolve(r.string(m["base"], where))
            except ConfigError as exc:
                r.fail(m["base"], where, str(exc))
            base, n_real = spec.name, spec.n_features
    else:
        plain = {key: m[key] for key in DATA_FILE_KEYS if key in m}
        base_file, data = parse_data_file(r, Located(plain, node.line), path, base_dir)
        n_real, feature_names = data.n_features, data.feature_names

    probes: tuple[tuple[str, Any], ...] = ()
    n_probes = 0
    if "probes" in m:
        probes, n_probes = _parse_probes(r, m["probes"], join_key(path, "probes"), synthetic.PROBE_KINDS)
    relevant = None
    if "relevant" in m and "relevant_file" in m:
        r.fail(m["relevant_file"], relevant_where["relevant_file"], "give 'relevant' or 'relevant_file', not both.")
    if "relevant" in m:
        where = relevant_where["relevant"]
        items = [_plain_value(r, v, join_key(where, i)) for i, v in enumerate(r.sequence(m["relevant"], where))]
        relevant = _resolve_relevant(r, m["relevant"], where, name, items, n_real, feature_names)
    elif "relevant_file" in m:
        where = relevant_where["relevant_file"]
        file = (base_dir / r.string(m["relevant_file"], where)).resolve()
        items = _read_relevant_file(r, m["relevant_file"], where, file)
        relevant = _resolve_relevant(r, m["relevant_file"], where, name, items, n_real, feature_names)
    if not generate and not probes and relevant is None:
        r.fail(node, path, f"dataset {name!r} has a base but neither 'probes' nor 'relevant'; add one, or list "
                           "the dataset by its name.")
    code = module_digest("fsbench.datasets.synthetic") if generate or probes else ""
    config = KnownDataConfig(name=name, generate=generate, base=base, base_file=base_file, probes=probes,
                             relevant=relevant, generator_code=code)
    return config, n_real + n_probes


def _refuse_registered_name(r: Reader, node: Located, path: str, name: str) -> None:
    from fsbench.datasets import resolve

    try:
        resolve(name)
    except ConfigError:
        return
    r.fail(node, path, f"{name!r} is a registered dataset; give this dataset another name.")


def _sentence(exc: Exception) -> str:
    text = str(exc).strip()
    return text if text.endswith(".") else text + "."


def _parse_probes(r: Reader, node: Located, path: str, kinds: tuple[str, ...]
                  ) -> tuple[tuple[tuple[str, Any], ...], int]:
    m = r.mapping(node, path, PROBE_KEYS)
    if "n" not in m:
        r.fail(node, path, "needs 'n', the number of probe columns (for example {n: 1000, kind: permuted}).")
    n = r.integer(m["n"], join_key(path, "n"), minimum=1)
    kind = r.string(m["kind"], join_key(path, "kind"), kinds) if "kind" in m else "permuted"
    seed = r.integer(m["seed"], join_key(path, "seed"), minimum=0) if "seed" in m else 0
    return (("kind", kind), ("n", n), ("seed", seed)), n


def _read_relevant_file(r: Reader, node: Located, path: str, file: Path) -> list[Any]:
    """A file of feature indices or column names, separated by lines, commas or whitespace (``#``
    starts a comment); integers are indices."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        r.fail(node, path, f"cannot read {str(file)!r} ({reason}); give a text file of feature indices or names.")
    items: list[Any] = []
    for line in text.splitlines():
        for token in re.split(r"[,\s]+", line.split("#", 1)[0].strip()):
            if token:
                items.append(int(token) if re.fullmatch(r"[+-]?\d+", token) else token)
    if not items:
        r.fail(node, path, f"{str(file)!r} lists no feature; give one index or name per line.")
    return items


def _resolve_relevant(r: Reader, node: Located, path: str, name: str, items: list[Any], n_real: int,
                      feature_names: tuple[str, ...] | None) -> tuple[int, ...]:
    """Declared relevant features as sorted indices of the real features: integers are indices
    (from 0), strings the names of a data file's columns."""
    indices = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | str):
            r.fail(node, path, f"lists {describe_value(item)}; give feature indices (from 0) or column names.")
        if isinstance(item, str):
            if feature_names is None:
                r.fail(node, path, f"names feature {item!r}, but dataset {name!r} has no column names; give "
                                   "feature indices (from 0).")
            if item not in feature_names:
                import difflib

                close = difflib.get_close_matches(item, feature_names, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                r.fail(node, path, f"names feature {item!r}, which dataset {name!r} does not have.{hint}")
            item = feature_names.index(item)
        elif not 0 <= item < n_real:
            r.fail(node, path, f"lists feature {item}, which does not exist: dataset {name!r} has {n_real} "
                               f"features, numbered 0 to {n_real - 1}.")
        indices.append(item)
    if not indices:
        r.fail(node, path, "is empty; list at least one relevant feature.")
    if len(set(indices)) != len(indices):
        twice = next(i for i in indices if indices.count(i) > 1)
        r.fail(node, path, f"lists feature {twice} twice; list each feature once.")
    return tuple(sorted(indices))
