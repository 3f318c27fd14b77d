"""One-off migration of the papers' committed results: RFS's stopping rule pinned in their configs.

RFS's default stopping rule became the certified duality gap (``stop: gap``); the papers' configs
now pin the rule their committed RFS rows were computed with (``stop: decrease, tol: 1e-6,
max_iter: 1000``), which computes those rows exactly. Pinning changes two things a results folder
records, and nothing else: the configuration's fingerprint (config.yaml, the ``fingerprint``
column of runs.csv.gz, the gzip header of rankings.csv.gz) and the ``params`` JSON of the RFS
rows (runs.csv.gz, and the RFS traces of objective.csv). This rewrites exactly those, so that the
pinned configs resume, check and report the committed folders as before; every other byte of
the tables stays as it was (the rows are rewritten field by field, never reparsed as numbers).
The rows' ``code`` still names the code that computed them: the RFS rows are stale until the
next recomputation, as any row of edited selector code is.

Each file is rewritten atomically, config.yaml last, under the folder's lock; a file that already
carries the pinned fingerprint is left alone, so an interrupted migration is finished by running
it again, and a migrated folder is not changed, nor one recomputed since (its rows then carry
digests). A folder of any other configuration, or a damaged one, is refused in one sentence,
nothing written.

It ran once (commit 1819313). It is kept, with its tests, because the committed folders' new
fingerprints were written by it, not by a run: tests/test_migrate_rfs_stop.py replays it on the
folders of the commit before and checks that it changes only what it says and gives exactly the
folders that commit holds. Usage::

    python -m fsbench.papers.migrate_rfs_stop [--configs configs/papers] [--results results/papers]
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
import tempfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click
import yaml

from fsbench.configuration.experiment import Experiment, SelectorConfig
from fsbench.configuration.parse import load_experiment
from fsbench.engine.traces import experiment_from_results
from fsbench.errors import FsbenchError
from fsbench.papers.layout import Layout
from fsbench.storage.atomic import atomic_write_bytes, atomic_write_text
from fsbench.storage.digests import DIGEST_COLUMN
from fsbench.storage.folder import CONFIG_FILE, TRACES_FILE
from fsbench.storage.lock import describe_os_error, locked
from fsbench.storage.rankings import RANKINGS_FILE, load_rankings, rankings_fingerprint
from fsbench.storage.runs import RUNS_FILE

#: The params the papers' configs pin: the stopping rule of their committed RFS rows.
PINNED = {"stop": "decrease", "tol": 1e-6, "max_iter": 1000}


@dataclass(frozen=True)
class Migration:
    """What one results folder goes from and to."""

    folder: Path
    config: Path
    before: Experiment  # the config without the pinned params: what computed the committed rows
    after: Experiment  # the config as it is now

    def params_before(self, sel: SelectorConfig, chosen: dict[str, Any]) -> str:
        return _params_json(self.before, sel, chosen)

    def params_after(self, sel: SelectorConfig, chosen: dict[str, Any]) -> str:
        return _params_json(self.after, sel, chosen)


def _params_json(experiment: Experiment, sel: SelectorConfig, chosen: dict[str, Any]) -> str:
    """A row's ``params`` as fsbench.engine.runner writes it: the fixed params, then the chosen grid point."""
    (mine,) = [s for s in experiment.selectors if s.label == sel.label]
    return json.dumps({**mine.params_dict, **chosen}, sort_keys=True)


def unpinned(experiment: Experiment) -> Experiment:
    """The experiment as configured before the pin: every RFS selector without :data:`PINNED`."""
    selectors = tuple(
        replace(s, params=tuple((k, v) for k, v in s.params if k not in PINNED)) if s.name == "rfs" else s
        for s in experiment.selectors)
    return replace(experiment, selectors=selectors)


def pinned_rfs(experiment: Experiment) -> list[SelectorConfig]:
    """The experiment's RFS selectors that pin :data:`PINNED` (none: nothing to migrate)."""
    return [s for s in experiment.selectors
            if s.name == "rfs" and all(s.params_dict.get(k) == v for k, v in PINNED.items())]


def migrations(layout: Layout) -> list[Migration]:
    """Every paper and variant config that pins RFS's rule, with its results folder (if it exists)."""
    out = []
    for config in sorted(layout.configs.glob("*.yaml")) + sorted((layout.configs / "variants").glob("*.yaml")):
        experiment = load_experiment(config)
        if not pinned_rfs(experiment):
            continue
        folder = (layout.results_dir(config.stem) if config.parent == layout.configs
                  else layout.variant_dir(config))
        out.append(Migration(folder, config, unpinned(experiment), experiment))
    return out


# ----------------------------------------------------------------------------- CSV, field by field
def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FsbenchError(f"{str(path)!r} is not UTF-8 text; restore it from version control.") from None


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _csv_rows(text: str, path: Path) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or _csv_text(rows) != text:
        # written otherwise than pandas writes (quoting, line ends): rewriting would change other bytes
        raise FsbenchError(f"{str(path)!r} is not a table as fsbench writes it, so it cannot be rewritten field "
                           "by field; restore it from version control.")
    return rows


def _csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerows(rows)
    return buffer.getvalue()


def _rewrite_params(rows: list[list[str]], migration: Migration, path: Path, *, fingerprints: bool) -> int:
    """Set the RFS rows' params (and, with ``fingerprints``, every row's fingerprint) to the pinned
    config's, in place; returns the number of RFS rows. A row that is not the folder's configuration
    before the pin stops it, naming the row."""
    header = rows[0]
    col = {name: i for i, name in enumerate(header)}
    missing = [c for c in ("selector", "method", "params", *(["fingerprint"] if fingerprints else []))
               if c not in col]
    if missing:
        raise FsbenchError(f"{str(path)!r} lacks the columns {missing}; it is not an fsbench results table.")
    by_label = {s.label: s for s in migration.after.selectors}
    old_fp, new_fp = migration.before.fingerprint(), migration.after.fingerprint()
    n_rfs = 0
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise FsbenchError(f"{str(path)!r} line {line} has {len(row)} fields, not the header's {len(header)}; "
                               "restore it from version control.")
        if fingerprints:
            if row[col["fingerprint"]] != old_fp:
                raise FsbenchError(f"{str(path)!r} line {line} has fingerprint {row[col['fingerprint']]!r}, not "
                                   f"{old_fp} (the config before RFS's rule was pinned); it is not this folder's "
                                   "committed run: restore it from version control.")
            row[col["fingerprint"]] = new_fp
        sel = by_label.get(row[col["selector"]])
        if sel is None or sel.name != "rfs" or row[col["method"]] != "rfs":
            continue
        params = _json_object(row[col["params"]])
        chosen = None if params is None else {k: v for k, v in params.items() if k in dict(sel.grid)}
        if chosen is None or row[col["params"]] != migration.params_before(sel, chosen):
            raise FsbenchError(f"{str(path)!r} line {line} has RFS params {row[col['params']]}, not those of the "
                               "config before RFS's rule was pinned; restore it from version control.")
        row[col["params"]] = migration.params_after(sel, chosen)
        n_rfs += 1
    return n_rfs


# ----------------------------------------------------------------------------- one file each
def _runs(migration: Migration) -> tuple[bytes, int] | None:
    """runs.csv.gz rewritten (None: already migrated), and its number of RFS rows."""
    path = migration.folder / RUNS_FILE
    data = path.read_bytes()
    try:
        text = gzip.decompress(data).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise FsbenchError(f"{str(path)!r} is damaged ({exc}); restore it from version control.") from None
    rows = _csv_rows(text, path)
    col = rows[0].index("fingerprint") if "fingerprint" in rows[0] else None
    if col is not None and rows[1:] and {r[col] if len(r) > col else None for r in rows[1:]} == {
            migration.after.fingerprint()}:
        return None  # migrated (and maybe recomputed since, with row digests)
    if DIGEST_COLUMN in rows[0]:
        # the committed rows this migration was written for record no digest; rewriting params would
        # break the digests of rows that do, and the next run would recompute them
        raise FsbenchError(f"{str(path)!r} records row digests ({DIGEST_COLUMN}), which this migration would "
                           "invalidate; it is for the committed results written before digests: recompute this "
                           "folder with the pinned config instead.")
    n_rfs = _rewrite_params(rows, migration, path, fingerprints=True)
    return gzip.compress(_csv_text(rows).encode("utf-8"), mtime=0), n_rfs


#: rankings.csv.gz's header as fsbench.storage writes it: gzip, deflate, FCOMMENT, no mtime, XFL 2, OS 255
_RANKINGS_HEADER = b"\x1f\x8b\x08\x10" + bytes(4) + b"\x02\xff"


def _rankings(migration: Migration) -> bytes | None:
    """rankings.csv.gz with the pinned fingerprint in its gzip header (its compressed rankings
    untouched, byte for byte); None when absent or already migrated."""
    path = migration.folder / RANKINGS_FILE
    if not path.is_file():
        return None
    recorded = rankings_fingerprint(path)
    if recorded == migration.after.fingerprint():
        return None
    old = _RANKINGS_HEADER + json.dumps({"fingerprint": migration.before.fingerprint()}).encode("latin-1") + b"\x00"
    data = path.read_bytes()
    if not data.startswith(old):
        raise FsbenchError(f"{str(path)!r} was written by fingerprint {recorded or 'not recorded'}, not "
                           f"{migration.before.fingerprint()} (the config before RFS's rule was pinned); restore it "
                           "from version control.")
    new = _RANKINGS_HEADER + json.dumps({"fingerprint": migration.after.fingerprint()}).encode("latin-1") + b"\x00"
    return new + data[len(old):]


def _traces(migration: Migration) -> str | None:
    """objective.csv with the RFS traces' params pinned; None when absent or already migrated."""
    path = migration.folder / TRACES_FILE
    if not path.is_file():
        return None
    text = _read_text(path)
    rows = _csv_rows(text, path)
    col = {name: i for i, name in enumerate(rows[0])}
    if "params" in col and "method" in col:
        rfs = [_json_object(r[col["params"]]) for r in rows[1:] if len(r) == len(rows[0]) and r[col["method"]] == "rfs"]
        if rfs and all(p is not None and all(p.get(k) == v for k, v in PINNED.items()) for p in rfs):
            return None
    _rewrite_params(rows, migration, path, fingerprints=False)
    return _csv_text(rows)


def _config(migration: Migration) -> str | None:
    """config.yaml with the pinned fingerprint and params (every other entry as it was); None when
    already migrated."""
    path = migration.folder / CONFIG_FILE
    text = _read_text(path)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    old_fp, new_fp = migration.before.fingerprint(), migration.after.fingerprint()
    if not isinstance(doc, dict) or doc.get("fingerprint") not in (old_fp, new_fp):
        recorded = doc.get("fingerprint") if isinstance(doc, dict) else None
        raise FsbenchError(f"{str(path)!r} describes fingerprint {recorded or 'none'}, not {old_fp} (the config "
                           f"{migration.config} before RFS's rule was pinned); it is not that config's results "
                           "folder: restore it from version control.")
    if doc["fingerprint"] == new_fp:
        return None
    if yaml.safe_dump(doc, sort_keys=False) != text:
        raise FsbenchError(f"{str(path)!r} is not a config.yaml as fsbench writes it; restore it from version "
                           "control.")
    experiment_from_results(migration.folder)  # it rebuilds to its fingerprint
    doc["fingerprint"] = new_fp
    by_label = {s.label: s for s in migration.after.selectors}
    for entry in doc["selectors"]:
        sel = by_label.get(entry["label"])
        if sel is not None and sel.name == "rfs":
            entry["params"] = sel.params_dict
    new = yaml.safe_dump(doc, sort_keys=False)
    with tempfile.TemporaryDirectory() as tmp:  # the new file must rebuild to the pinned fingerprint
        (Path(tmp) / CONFIG_FILE).write_text(new, encoding="utf-8")
        if experiment_from_results(tmp).fingerprint() != new_fp:
            raise FsbenchError(f"{str(path)!r} does not rebuild to {new_fp} with RFS's rule pinned; the config "
                               f"{migration.config} differs from the committed run in more than RFS's rule.")
    return new


def migrate_folder(migration: Migration) -> list[str]:
    """Migrate one results folder (see the module docstring); returns the files rewritten."""
    folder = migration.folder
    if not (folder / CONFIG_FILE).is_file() or not (folder / RUNS_FILE).is_file():
        raise FsbenchError(f"{str(folder)!r} holds no committed run (config.yaml and runs.csv.gz); restore it from "
                           f"version control or run {migration.config} into it.")
    with locked(folder):
        # everything computed and checked before the first write: a refused folder is left as it was
        config = _config(migration)
        runs = _runs(migration)
        rankings = _rankings(migration)
        traces = _traces(migration)
        written = []
        if runs is not None:
            atomic_write_bytes(folder / RUNS_FILE, runs[0])
            written.append(f"{RUNS_FILE} ({runs[1]} RFS rows)")
        if rankings is not None:
            atomic_write_bytes(folder / RANKINGS_FILE, rankings)
            load_rankings(folder)  # still readable, as written
            written.append(RANKINGS_FILE)
        if traces is not None:
            atomic_write_text(folder / TRACES_FILE, traces)
            written.append(TRACES_FILE)
        if config is not None:  # last: until it is written, a rerun knows the folder is unfinished
            atomic_write_text(folder / CONFIG_FILE, config)
            written.append(CONFIG_FILE)
    return written


@click.command()
@click.option("--configs", "configs", type=click.Path(path_type=Path), default=Layout().configs,
              show_default=True, help="The papers' configs (variants/ beneath).")
@click.option("--results", "results", type=click.Path(path_type=Path), default=Layout().results,
              show_default=True, help="The papers' results (variants/ beneath).")
def main(configs: Path, results: Path) -> None:
    """Rewrite the committed results of every paper config that pins RFS's stopping rule."""
    try:
        if not configs.is_dir():
            raise FsbenchError(f"No configs folder at {str(configs)!r}; run from the project root or pass --configs.")
        found = migrations(Layout(configs=configs, results=results))
        if not found:
            raise FsbenchError(f"No config under {str(configs)!r} pins RFS's stopping rule "
                               f"({', '.join(f'{k}: {v}' for k, v in PINNED.items())}); nothing to migrate.")
        for migration in found:
            if not migration.folder.is_dir():
                click.echo(f"{migration.folder}: no results; nothing to migrate.")
                continue
            written = migrate_folder(migration)
            what = ", ".join(written) if written else "already migrated, unchanged"
            click.echo(f"{migration.folder}: {migration.before.fingerprint()} -> "
                       f"{migration.after.fingerprint()}: {what}")
    except FsbenchError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:  # an unreadable or unwritable file: the atomic writes left each file whole
        click.echo(f"Error: {describe_os_error(exc, 'the migrated results')}; fix that and run the migration "
                   "again (it finishes what it started).", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
