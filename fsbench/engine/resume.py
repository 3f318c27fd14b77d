"""Resuming a run: every row a results folder holds is checked before it is reused.

Rows come from task files, or from runs.csv.gz for tasks without one (a folder kept as
runs.csv.gz alone still resumes). Each must carry the configuration's fingerprint, its task's
seeds and every (classifier, k); a row of another configuration stops the run and nothing is
changed. Rows of other selector code are stale (the run stops naming them, or recomputes them);
rows from before code was recorded are kept with a note; rows evaluated by another version of the
protocol are kept with a note. A task's ranking travels with its rows: restored from
rankings.csv.gz with rows restored from runs.csv.gz, only when rankings.csv.gz was written by this
configuration (its fingerprint) and only for tasks whose rows pass those checks. Also:
deliberately discarding one selector's results.

Before any of that, every row is checked against its digest (:mod:`fsbench.storage.digests`): a task
file, or a task's rows in runs.csv.gz, whose values were changed after they were written is
named in a note and recomputed, never reused. A task file without a digest is checked against the
digest runs.csv.gz records for its task, if it records one; rows that nothing can verify (written
before fsbench recorded digests) are reused unverified, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fsbench.configuration.experiment import Experiment, SelectorConfig
from fsbench.engine.fitting import selector_identity
from fsbench.engine.tasks import Task, selection_seed
from fsbench.errors import FsbenchError
from fsbench.evaluation import protocol_code
from fsbench.evaluation.protocol import Split
from fsbench.storage.digests import DIGEST_COLUMN, recorded_digest, rows_digest
from fsbench.storage.folder import planned_datasets, planned_selectors, read_fingerprint
from fsbench.storage.lock import locked
from fsbench.storage.rankings import (
    RANKINGS_FILE,
    load_rankings,
    rankings_by_task,
    rankings_fingerprint,
    write_rankings,
)
from fsbench.storage.runs import RUNS_FILE, load_runs, write_runs
from fsbench.storage.task_files import (
    DamagedTaskFile,
    DigestMismatch,
    TaskFile,
    finished_tasks,
    read_task_file,
    read_task_files,
    task_path,
    write_task,
)


def check_folder_configuration(out_dir: Path, fingerprint: str) -> None:
    """Refuse a folder that holds results of another configuration (nothing is changed)."""
    previous = read_fingerprint(out_dir)
    has_results = bool(finished_tasks(out_dir)) or (out_dir / RUNS_FILE).is_file()
    if previous is not None and previous != fingerprint and has_results:
        raise FsbenchError(
            f"{str(out_dir)!r} holds results of a different configuration; pass --force to replace "
            "them or --out to write elsewhere."
        )
    if previous is None and finished_tasks(out_dir):
        raise FsbenchError(f"{str(out_dir)!r} holds task files without a config.yaml; pass --force to replace them.")


@dataclass
class Found:
    """The rows a results folder holds for the planned tasks, read but not yet trusted."""

    rows: dict[str, list[dict[str, Any]]]  # planned task id -> its rows (from its file or runs.csv.gz)
    from_runs: set[str]  # ids whose rows come from runs.csv.gz (no task file yet)
    damaged: list[str]  # planned ids whose task file is damaged
    # task id -> its ranking (from its file, or from rankings.csv.gz of this configuration for ids
    # of from_runs); attached to rows only once the audit has trusted them
    rankings: dict[str, list[int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # ids (in rows) whose rows do not match their digest: checked like any row for their
    # configuration (another one stops the run), then recomputed, never reused
    changed: set[str] = field(default_factory=set)


def existing_rows(out_dir: Path, tasks: list[Task], fingerprint: str) -> Found:
    """Every row the folder holds, read but not yet trusted: the planned tasks' files, and the rows
    of runs.csv.gz whose tasks have no file (all of which must carry this configuration's
    fingerprint: the folder's config.yaml may be missing or describe another run)."""
    planned = {t.id for t in tasks}
    rows: dict[str, list[dict[str, Any]]] = {}
    damaged = []
    files = finished_tasks(out_dir)
    rankings: dict[str, list[int]] = {}
    notes: list[str] = []
    changed: set[str] = set()
    unchecked: list[str] = []  # task files without a digest: checked against runs.csv.gz's, if it records one
    for task_id in sorted(files & planned):
        try:
            file = read_task_file(out_dir, task_id)
        except DigestMismatch as exc:
            rows[task_id] = exc.file.rows
            changed.add(task_id)
            notes.append(f"task {task_id}: the task file {str(task_path(out_dir, task_id))!r} is recomputed: {exc}")
            continue
        except DamagedTaskFile:
            damaged.append(task_id)
            continue
        rows[task_id] = file.rows
        if file.digest is None:
            unchecked.append(task_id)
        if file.ranking is not None:
            rankings[task_id] = file.ranking
    from_runs: set[str] = set()
    legacy: list[str] = []
    if (out_dir / RUNS_FILE).is_file():
        runs = load_runs(out_dir)
        recorded = set(runs["fingerprint"].astype(str)) if "fingerprint" in runs else {"none"}
        if recorded - {fingerprint}:
            raise FsbenchError(
                f"{str(out_dir)!r} holds results of a different configuration (runs.csv.gz rows with "
                f"fingerprint {', '.join(sorted(recorded - {fingerprint}))}, this config's is {fingerprint}); "
                "pass --force to replace them or --out to write elsewhere.")
        in_runs = _rows_by_task(runs)
        edited, legacy = check_rows_digests(in_runs, skip=files)
        for task_id in edited:
            what = "is recomputed" if task_id in planned else "is dropped (its dataset is not run this time)"
            notes.append(f"task {task_id}: its rows in {str(out_dir / RUNS_FILE)!r} do not match their digest "
                         f"(they were changed after they were written, or their digest was removed); it {what}")
        for task_id in unchecked:
            # runs.csv.gz's digest of a task is the digest of its task file's rows (written from them)
            written = recorded_digest(in_runs[task_id]) if task_id in in_runs else None
            if written is not None and written != rows_digest(rows[task_id]):
                changed.add(task_id)
                notes.append(f"task {task_id}: the task file {str(task_path(out_dir, task_id))!r} records no "
                             f"digest and its rows do not match the digest {RUNS_FILE} records for them (changed "
                             "after they were written); it is recomputed")
            elif written is None:
                legacy.append(task_id)
        for task_id, records in in_runs.items():
            if task_id not in files:
                rows[task_id] = records
                from_runs.add(task_id)
        changed.update(edited)
        if from_runs:
            saved, note = saved_rankings(out_dir, fingerprint)
            rankings.update({t: r for t, r in saved.items() if t in from_runs - changed})
            notes += [note] if note else []
    else:
        legacy = unchecked
    if legacy:
        notes.append(f"{len(legacy)} tasks hold rows written before fsbench recorded digests (their values cannot "
                     "be verified); they are kept")
    return Found(rows, from_runs, damaged, rankings, notes, changed)


def check_rows_digests(by_task: dict[str, list[dict[str, Any]]], skip: set[str] | frozenset[str] = frozenset()
                       ) -> tuple[list[str], list[str]]:
    """The tasks of runs.csv.gz (its rows by task id, :func:`_rows_by_task`; those of ``skip`` left
    unchecked) whose rows do not match the digest they record, and those that record none (written
    before fsbench recorded digests).

    One writer writes runs.csv.gz whole, every task with its digest or none: when any task records
    one, a task that records none lost it after it was written, and is among the changed.
    """
    recorded = {task_id: recorded_digest(records) for task_id, records in by_task.items()}
    with_digests = any(digest is not None for digest in recorded.values())
    changed, legacy = [], []
    for task_id in sorted(set(by_task) - set(skip)):
        if recorded[task_id] is None:
            (changed if with_digests else legacy).append(task_id)
        elif recorded[task_id] != rows_digest(by_task[task_id]):
            changed.append(task_id)
    return changed, legacy


def saved_rankings(out_dir: Path, fingerprint: str | None) -> tuple[dict[str, list[int]], str | None]:
    """The rankings of a folder's rankings.csv.gz by task id, if that file was written by the
    configuration of ``fingerprint`` (else none, and a note saying why); a damaged file stops with a
    FsbenchError naming it."""
    path = out_dir / RANKINGS_FILE
    if not path.is_file():
        return {}, None
    table = load_rankings(out_dir)  # a damaged file stops here, before anything is changed
    written_by = rankings_fingerprint(out_dir)
    if fingerprint is None or written_by != fingerprint:
        written = written_by or "not recorded"
        return {}, (f"{RANKINGS_FILE} holds rankings of another configuration (fingerprint {written}, this "
                    f"config's is {fingerprint}); they are not used")
    return {_task_id(*key): ranking for key, ranking in rankings_by_task(table).items()}, None


@dataclass
class Audit:
    """What :func:`audit` decided about the found rows: kept, restored, recomputed, or noted."""

    kept: set[str]  # planned ids with trusted rows (files, or rows to restore)
    to_restore: list[str]  # ids whose rows come from runs.csv.gz and are trusted
    damaged: list[str]
    stale: dict[str, int]  # selector label -> tasks computed by other code
    stale_ids: list[str]  # to recompute
    legacy: dict[str, int]  # selector label -> tasks whose rows record no code
    other_protocol: dict[str, int]  # selector label -> tasks evaluated by another protocol version


def audit(experiment: Experiment, tasks: list[Task], found: Found, out_dir: Path,
           recompute_stale: bool = False, sparse: frozenset[str] | set[str] = frozenset()) -> Audit:
    """Check every found row against what this configuration and code would write.

    ``sparse`` names the datasets held sparse (read from the loaded data,
    :func:`fsbench.engine.data.sparse_datasets`): their tasks' rows are expected to carry the code
    identities of the sparse route (the selector's ``sparse_code`` where it fits sparse data, and
    ``protocol_code(sparse=True)``), every other task's those of the dense route."""
    fingerprint = experiment.fingerprint()
    labels = [c.label for c in experiment.classifiers] or [""]
    expected_rows = sorted((label, k) for label in labels for k in experiment.n_features)
    routes = (False, True) if sparse else (False,)
    codes = {(sel.name, route): selector_identity(sel, route) for sel in experiment.selectors for route in routes}
    protocols = {route: protocol_code(sparse=route) for route in routes}
    audit = Audit(set(), [], list(found.damaged), {}, [], {}, {})
    for task in tasks:
        rows = found.rows.get(task.id)
        if rows is None:
            continue
        expected = {"dataset": task.dataset, "repeat": task.split.repeat, "fold": task.split.fold,
                    "selector": task.selector.label, "method": task.selector.name, "fingerprint": fingerprint,
                    "seed": selection_seed(experiment, task), "split_seed": task.split.seed}
        where = "runs.csv.gz" if task.id in found.from_runs else f"the task file {task.id}.json"
        for row in rows:
            for key, value in expected.items():
                if str(row.get(key)) != str(value):
                    raise FsbenchError(
                        f"{str(out_dir)!r} holds rows of another configuration ({where}: {key} = "
                        f"{row.get(key)!r} where this config gives {value!r}); pass --force to replace them "
                        "or --out to write elsewhere.")
        found_rows = sorted((str(r.get("classifier", "")), int(r.get("k", -1))) for r in rows)
        if found_rows != expected_rows:
            def shown(pairs: list[tuple[str, int]]) -> str:
                return str([k for _, k in pairs]) if labels == [""] else str(pairs)

            what = "k" if labels == [""] else "(classifier, k)"
            raise FsbenchError(f"{str(out_dir)!r} holds rows of another configuration ({where}: {what} = "
                               f"{shown(found_rows)} where this config gives {shown(expected_rows)}); pass --force "
                               "to replace them or --out to write elsewhere.")
        if task.id in found.changed:  # edited after it was written: recomputed (its file deleted first)
            if task.id not in found.from_runs:
                audit.damaged.append(task.id)
            continue
        recorded = {r.get("code") for r in rows}
        label = task.selector.label
        route = task.dataset in sparse
        protocol = protocols[route]
        if recorded <= {None} or all(isinstance(c, float) and np.isnan(c) for c in recorded):
            audit.legacy[label] = audit.legacy.get(label, 0) + 1
        elif recorded != {codes[task.selector.name, route]}:
            audit.stale[label] = audit.stale.get(label, 0) + 1
            audit.stale_ids.append(task.id)
            continue
        elif {str(r.get("protocol_code")) for r in rows} != {protocol}:
            audit.other_protocol[label] = audit.other_protocol.get(label, 0) + 1
            if recompute_stale:
                audit.stale_ids.append(task.id)
                continue
        ranking = found.rankings.get(task.id)
        if ranking is not None and len(ranking) != max(experiment.n_features):
            if task.id in found.from_runs:
                raise FsbenchError(f"{str(out_dir / RANKINGS_FILE)!r} is damaged (task {task.id} ranks "
                                   f"{len(ranking)} features where this config keeps {max(experiment.n_features)}); "
                                   "restore it (for example from version control) or delete it and regenerate it "
                                   f"with 'fsbench rankings regenerate {out_dir}'.")
            audit.damaged.append(task.id)  # a task file whose ranking was cut: recomputed
            continue
        audit.kept.add(task.id)
        if task.id in found.from_runs:
            audit.to_restore.append(task.id)
    # rows of tasks not planned now (a dataset skipped this time) are kept as they are
    planned = {t.id for t in tasks}
    audit.to_restore += sorted(found.from_runs - planned - found.changed)
    return audit


def sum_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}


def per_selector(counts: dict[str, int]) -> str:
    return ", ".join(f"{label}: {n}" for label, n in sorted(counts.items()))


def stale_message(out_dir: Path, stale: dict[str, int]) -> str:
    return (f"{str(out_dir)!r} holds rows computed by other code of fsbench ({per_selector(stale)} tasks; the "
            "selector or the evaluation protocol changed since); rerun with --recompute-stale to recompute "
            "them, or 'fsbench discard' them.")


def unplanned_tasks(out_dir: Path, tasks: list[Task], fingerprint: str) -> list[TaskFile]:
    """Finished tasks of this configuration that this invocation did not plan (datasets left out
    by --skip-missing this time): kept in runs.csv.gz and rankings.csv.gz, never dropped."""
    kept: list[TaskFile] = []
    for task_id in sorted(finished_tasks(out_dir) - {t.id for t in tasks}):
        try:
            file = read_task_file(out_dir, task_id)
        except DamagedTaskFile:
            continue
        if all(str(r.get("fingerprint")) == fingerprint for r in file.rows):
            kept.append(file)
    return kept


def _task_id(dataset: str, repeat: int, fold: int, label: str) -> str:
    """The id of the task (dataset, repeat, fold, selector label) (fsbench.engine.tasks.Task.id)."""
    return Task(dataset, Split(int(repeat), int(fold), np.empty(0), np.empty(0), 0), SelectorConfig(label, label)).id


def _task_ids(runs: pd.DataFrame) -> list[str]:
    """The id of the task each row of a runs table belongs to (computed once per task)."""
    ids: dict[tuple[Any, ...], str] = {}
    return [ids.get(key) or ids.setdefault(key, _task_id(*key))
            for key in zip(runs["dataset"], runs["repeat"], runs["fold"], runs["selector"], strict=True)]


def _rows_by_task(runs: pd.DataFrame, task_ids: set[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows of a runs table as task files hold them, by task id (all tasks, or ``task_ids``), each
    task's rows in the table's order."""
    ids = _task_ids(runs)
    if task_ids is not None:
        keep = [i in task_ids for i in ids]
        runs, ids = runs[keep], [i for i, k in zip(ids, keep, strict=True) if k]
    out: dict[str, list[dict[str, Any]]] = {}
    # a column another selector's rows filled (diagnostics) or that older rows lack (code) is
    # absent, not NaN, in this task's rows
    optional = {c for c in runs.columns if c.startswith("diag_") or c in ("code", "protocol_code", DIGEST_COLUMN)}
    for task_id, row in zip(ids, runs.to_dict("records"), strict=True):
        out.setdefault(task_id, []).append({k: v for k, v in row.items()
                                            if not (k in optional and isinstance(v, float) and np.isnan(v))})
    return out


def _write_tasks_from_rows(out_dir: Path, runs: pd.DataFrame, task_ids: set[str],
                           rankings: dict[str, list[int]]) -> int:
    """Task files recreated from the rows of ``runs`` (and their ``rankings``) for the given task ids;
    returns how many."""
    by_task = _rows_by_task(runs, task_ids)
    for task_id, records in by_task.items():
        write_task(out_dir, task_id, records, rankings.get(task_id))
    return len(by_task)


def discard_tasks(out_dir: Path, selectors: list[str], datasets: list[str] | None = None
                  ) -> tuple[int, int]:
    """Remove the finished tasks of the selector labels ``selectors`` (on ``datasets``, default
    all) from a results folder: their task files, their rows of runs.csv.gz and their rankings of
    rankings.csv.gz. Running the config again then recomputes them and only them; returns (tasks,
    rows) removed.

    For results to recompute deliberately: a run restores missing task files from runs.csv.gz,
    so deleting task files alone would bring the old rows back. Interrupted, it leaves
    runs.csv.gz intact, and the next run restores what was deleted (run the discard again). It
    holds the folder's lock, so it refuses a folder a run is writing to.
    """
    if read_fingerprint(out_dir) is None:
        raise FsbenchError(f"{str(out_dir)!r} holds no results (no config.yaml); nothing to discard.")
    with locked(out_dir):
        return _discard_tasks(out_dir, selectors, datasets)


def _discard_tasks(out_dir: Path, selectors: list[str], datasets: list[str] | None) -> tuple[int, int]:
    runs = load_runs(out_dir) if (out_dir / RUNS_FILE).is_file() else None
    files = {task_id: read_task_files(out_dir, [task_id])[0].rows for task_id in finished_tasks(out_dir)}
    owner = {task_id: (rows[0]["dataset"], rows[0]["selector"]) for task_id, rows in files.items() if rows}
    row_ids = _task_ids(runs) if runs is not None else []
    if runs is not None:
        owner.update(zip(row_ids, zip(runs["dataset"], runs["selector"], strict=True), strict=True))
    known_selectors = sorted({sel for _, sel in owner.values()} | set(planned_selectors(out_dir)))
    known_datasets = sorted({ds for ds, _ in owner.values()}.union(*planned_datasets(out_dir)))
    for given, known, what in ((selectors, known_selectors, "selector"),
                               (datasets or [], known_datasets, "dataset")):
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise FsbenchError(f"No results of {what} {', '.join(map(repr, unknown))} in {str(out_dir)!r}; "
                               f"it holds {', '.join(known) or 'none'}.")
    doomed = {task_id for task_id, (ds, sel) in owner.items()
              if sel in selectors and (not datasets or ds in datasets)}
    if not doomed:
        return 0, 0
    fingerprint = read_fingerprint(out_dir)
    saved, _ = saved_rankings(out_dir, fingerprint)  # a damaged rankings.csv.gz stops here, unchanged
    in_runs = set(row_ids)
    n_rows = sum(len(files[t]) for t in doomed - in_runs) + int(np.isin(row_ids, list(doomed)).sum())
    if runs is not None:
        # every kept task as a file first (with its ranking), so that runs.csv.gz and
        # rankings.csv.gz can be rewritten from the files
        _write_tasks_from_rows(out_dir, runs, in_runs - doomed - set(files), saved)
    for task_id in doomed:
        task_path(out_dir, task_id).unlink(missing_ok=True)
    if runs is not None:
        # the kept rows in their order, then tasks finished since runs.csv.gz was written
        order = [t for t in dict.fromkeys(row_ids) if t not in doomed]
        order += sorted(set(files) - in_runs - doomed)
        if order:
            kept = read_task_files(out_dir, order)
            write_runs(out_dir, [row for file in kept for row in file.rows])
            write_rankings(out_dir, kept, fingerprint)
        else:
            (out_dir / RUNS_FILE).unlink()
            (out_dir / RANKINGS_FILE).unlink(missing_ok=True)
    elif (out_dir / RANKINGS_FILE).is_file():
        write_rankings(out_dir, read_task_files(out_dir, sorted(set(files) - doomed)), fingerprint)
    return len(doomed), n_rows
