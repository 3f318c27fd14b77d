"""The one-off migration of the committed results to the configs that pin RFS's stopping rule
(fsbench.papers.migrate_rfs_stop).

The migration has run; these tests keep it reproducible from version control, independent of what
the working tree's results and configs become later (the migrated RFS rows are stale until the
next recomputation): the folders before it are read from the commit before it, the configs and
the folders it wrote from the commit that committed them. Oracles: the tables parsed here as plain
strings (pandas, every field text), the pinned configs' params and fingerprints, and the committed
folders after the migration."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from conftest import papers_data

from fsbench.cli import main as fsbench_main
from fsbench.configuration.parse import load_experiment
from fsbench.errors import FsbenchError
from fsbench.papers import migrate_rfs_stop as migrate
from fsbench.papers.layout import Layout
from fsbench.storage.digests import DIGEST_COLUMN
from fsbench.storage.rankings import rankings_fingerprint

ROOT = Path(__file__).resolve().parents[1]
#: the last commit before the migration: its results folders are the committed rows, unpinned
BEFORE = "17cbb70fe228b187b48d62e4478e84031a931d4d"
#: the commit that committed the migrated folders, with the pinned configs they were migrated to
MIGRATED = "1819313c7514eb7d011aeffa5eef42debebc687c"
FILES = ("config.yaml", "runs.csv.gz", "rankings.csv.gz", "objective.csv")
FOLDERS = ["rfs", "dso-fs", "variants/dso-fs-isolet", "variants/rfs-gamma-tuned", "variants/rfs-intercept",
           "variants/rfs-select-all", "variants/rfs-standardize-train"]
SMALLEST = "variants/dso-fs-isolet"  # 300 rows, 30 tasks


def git_bytes(path: str, commit: str = BEFORE) -> bytes | None:
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True)
    return done.stdout if done.returncode == 0 else None


def folder_at(commit: str, folder: str, out: Path) -> Path:
    """A results folder's files as committed at ``commit``, in ``out``."""
    if git_bytes("README.md", commit) is None:
        pytest.skip(f"no git history with {commit}")
    out.mkdir(parents=True)
    for name in FILES:
        data = git_bytes(f"results/papers/{folder}/{name}", commit)
        if data is not None:
            (out / name).write_bytes(data)
    return out


def folder_before(folder: str, tmp_path: Path) -> Path:
    """The results folder as committed before the migration, in tmp_path/results/papers/<folder>."""
    return folder_at(BEFORE, folder, tmp_path / "results" / "papers" / folder)


@pytest.fixture(scope="module")
def configs(tmp_path_factory) -> Path:
    """configs/papers as the migration read them (with variants/ beneath)."""
    if git_bytes("README.md", MIGRATED) is None:
        pytest.skip(f"no git history with {MIGRATED}")
    out = tmp_path_factory.mktemp("configs")
    archive = subprocess.run(["git", "archive", MIGRATED, "configs/papers"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    # linear_svm's backend was LIBSVM by default when these configs were written; a config that names
    # none now gets backend: auto, so the pin they relied on is written out (as configs/ now does)
    for config in (out / "configs" / "papers").rglob("*.yaml"):
        text = config.read_text()
        if "classifier:\n  name: linear_svm\n" in text and "backend:" not in text:
            config.write_text(text.replace("classifier:\n  name: linear_svm\n",
                                           "classifier:\n  name: linear_svm\n  backend: libsvm\n"))
    return out / "configs" / "papers"


def migration_of(folder: str, out: Path, configs: Path) -> migrate.Migration:
    (m,) = [m for m in migrate.migrations(Layout(configs=configs)) if m.config == configs / f"{folder}.yaml"]
    return migrate.Migration(out, m.config, m.before, m.after)


def text_table(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder but the lock's (an empty file the folder keeps once locked)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != ".fsbench.lock"}


def test_every_config_that_runs_rfs_pins_the_rule_and_says_so():
    configs = sorted((ROOT / "configs" / "papers").glob("*.yaml")) + sorted(
        (ROOT / "configs" / "papers" / "variants").glob("*.yaml"))
    with_rfs = [c for c in configs if any(s.name == "rfs" for s in load_experiment(c).selectors)]
    assert [str(c.relative_to(ROOT / "configs" / "papers"))[:-5] for c in with_rfs] == sorted(FOLDERS)
    for config in with_rfs:
        for sel in (s for s in load_experiment(config).selectors if s.name == "rfs"):
            assert {k: sel.params_dict.get(k) for k in ("stop", "tol", "max_iter")} == migrate.PINNED
        header = "".join(line for line in config.read_text().splitlines(keepends=True) if line.startswith("#"))
        flat = " ".join(header.replace("#", " ").split())
        assert "stop: decrease, tol: 1e-6, max_iter: 1000" in flat
        assert "20, 30 or 50 iterations" in flat and "stop: gap" in flat


@pytest.mark.parametrize("folder", FOLDERS)
def test_migration_changes_only_the_fingerprint_and_the_rfs_params(folder, tmp_path, configs):
    out = folder_before(folder, tmp_path)
    before = {name: (out / name).read_bytes() for name in FILES if (out / name).is_file()}
    migration = migration_of(folder, out, configs)
    config = load_experiment(migration.config)
    old_fp = yaml.safe_load(before["config.yaml"])["fingerprint"]
    new_fp = config.fingerprint()
    assert old_fp != new_fp
    (rfs,) = [s for s in config.selectors if s.name == "rfs"]

    written = migrate.migrate_folder(migration)
    assert written[-1] == "config.yaml" and len(written) == len(before)

    # runs.csv.gz: every field of every other column byte-identical, in the same order
    old, new = text_table(gzip.decompress(before["runs.csv.gz"])), text_table(gzip.decompress(
        (out / "runs.csv.gz").read_bytes()))
    assert list(old.columns) == list(new.columns) and len(old) == len(new)
    others = [c for c in old.columns if c not in ("fingerprint", "params")]
    pd.testing.assert_frame_equal(old[others], new[others])
    assert set(old["fingerprint"]) == {old_fp} and set(new["fingerprint"]) == {new_fp}
    is_rfs = (old["method"] == "rfs").to_numpy()
    assert is_rfs.sum() > 0
    assert (old.loc[~is_rfs, "params"] == new.loc[~is_rfs, "params"]).all()
    expected = [json.dumps({**rfs.params_dict, **{k: v for k, v in json.loads(p).items() if k in dict(rfs.grid)}},
                           sort_keys=True) for p in old.loc[is_rfs, "params"]]
    assert new.loc[is_rfs, "params"].tolist() == expected
    assert all(json.loads(p) == {**json.loads(q), **migrate.PINNED}
               for p, q in zip(new.loc[is_rfs, "params"], old.loc[is_rfs, "params"], strict=True))

    # rankings.csv.gz: the same rankings, the pinned fingerprint in the gzip header
    assert gzip.decompress((out / "rankings.csv.gz").read_bytes()) == gzip.decompress(before["rankings.csv.gz"])
    assert rankings_fingerprint(out) == new_fp

    # config.yaml: the fingerprint and the rfs params, nothing else
    old_doc, new_doc = yaml.safe_load(before["config.yaml"]), yaml.safe_load((out / "config.yaml").read_text())
    assert new_doc.pop("fingerprint") == new_fp and old_doc.pop("fingerprint") == old_fp
    for old_sel, new_sel in zip(old_doc.pop("selectors"), new_doc.pop("selectors"), strict=True):
        if old_sel["name"] == "rfs":
            assert new_sel.pop("params") == {**old_sel.pop("params"), **migrate.PINNED}
        assert old_sel == new_sel
    assert old_doc == new_doc

    # objective.csv: the rfs traces' params, nothing else
    if "objective.csv" in before:
        old_t, new_t = text_table(before["objective.csv"]), text_table((out / "objective.csv").read_bytes())
        trace = (old_t["method"] == "rfs").to_numpy()
        keep = [c for c in old_t.columns if c != "params"]
        pd.testing.assert_frame_equal(old_t[keep], new_t[keep])
        assert (old_t.loc[~trace, "params"] == new_t.loc[~trace, "params"]).all()
        assert all(json.loads(p) == {**json.loads(q), **migrate.PINNED}
                   for p, q in zip(new_t.loc[trace, "params"], old_t.loc[trace, "params"], strict=True))

    # the committed folder is exactly this migration's output; a second run changes nothing
    for name in before:
        assert (out / name).read_bytes() == git_bytes(f"results/papers/{folder}/{name}", MIGRATED), name
    after = snapshot(out)
    assert migrate.migrate_folder(migration) == []
    assert snapshot(out) == after


def test_a_folder_of_another_configuration_is_refused_unchanged(tmp_path, configs):
    out = folder_before("variants/rfs-intercept", tmp_path)
    doc = (out / "config.yaml").read_text()
    (out / "config.yaml").write_text(doc.replace("fit_intercept: true", "fit_intercept: false"))
    before = snapshot(out)
    with pytest.raises(FsbenchError, match="does not rebuild to its fingerprint"):
        migrate.migrate_folder(migration_of("variants/rfs-intercept", out, configs))
    assert snapshot(out) == before


def test_rfs_rows_of_other_params_are_refused_before_anything_is_written(tmp_path, configs):
    out = folder_before("variants/rfs-intercept", tmp_path)
    text = gzip.decompress((out / "runs.csv.gz").read_bytes()).decode()
    lines = text.split("\n")
    lines[5] = lines[5].replace('""gamma"": 1.0}', '""gamma"": 2.0}')
    assert lines[5] != text.split("\n")[5]
    (out / "runs.csv.gz").write_bytes(gzip.compress("\n".join(lines).encode(), mtime=0))
    before = snapshot(out)
    with pytest.raises(FsbenchError, match="line 6 has RFS params"):
        migrate.migrate_folder(migration_of("variants/rfs-intercept", out, configs))
    assert snapshot(out) == before


def test_an_interrupted_migration_is_finished_by_running_it_again(tmp_path, monkeypatch, configs):
    # A full disk at the second file: the first is rewritten whole, the rest untouched; the command
    # says so in one sentence (exit 2), and running it again ends where an uninterrupted run does.
    out = folder_before(SMALLEST, tmp_path)
    reference = tmp_path / "reference"
    shutil.copytree(out, reference)
    migrate.migrate_folder(migration_of(SMALLEST, reference, configs))
    calls = []
    real = migrate.atomic_write_bytes

    def full_disk(path, data):
        calls.append(path.name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(migrate, "atomic_write_bytes", full_disk)
    args = ["--configs", str(configs), "--results", str(tmp_path / "results" / "papers")]
    others = [f for f in FOLDERS if f != SMALLEST]
    for folder in others:  # only the smallest folder is present
        assert not (tmp_path / "results" / "papers" / folder).exists()
    result = CliRunner().invoke(migrate.main, args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and "the disk is full" in error[0] and "run the migration again" in error[0]
    assert calls == ["runs.csv.gz", "rankings.csv.gz"]
    unpinned = migration_of(SMALLEST, out, configs).before.fingerprint()
    assert yaml.safe_load((out / "config.yaml").read_text())["fingerprint"] == unpinned
    monkeypatch.setattr(migrate, "atomic_write_bytes", real)
    result = CliRunner().invoke(migrate.main, args)
    assert result.exit_code == 0, result.output
    assert "rankings.csv.gz" in result.output and "runs.csv.gz" not in result.output.split("->")[-1]
    assert snapshot(out) == snapshot(reference)


@pytest.mark.parametrize("args, message", [
    (["--configs", "nowhere"], "No configs folder at 'nowhere'"),
])
def test_bad_input_is_one_sentence_and_exit_2(args, message, tmp_path):
    result = CliRunner().invoke(migrate.main, args)
    assert result.exit_code == 2 and result.output.strip().startswith(f"Error: {message}")
    assert len(result.output.strip().splitlines()) == 1


def _runs_lines(out: Path, edit) -> None:
    lines = gzip.decompress((out / "runs.csv.gz").read_bytes()).decode().split("\n")
    (out / "runs.csv.gz").write_bytes(gzip.compress("\n".join(edit(lines)).encode(), mtime=0))


def _rfs_params_not_json(lines: list[str]) -> list[str]:
    i = next(i for i, line in enumerate(lines) if ",rfs,rfs," in line)
    return [*lines[:i], lines[i].replace('"{', '"[', 1), *lines[i + 1:]]


FAULTS = {  # a folder the migration does not recognize: name -> (how it is made, what the error says)
    "empty folder": (lambda out: [p.unlink() for p in out.iterdir()], "holds no committed run"),
    "config.yaml not text": (lambda out: (out / "config.yaml").write_bytes(b"\xff\xfe\x00name"), "not UTF-8 text"),
    "runs.csv.gz truncated": (lambda out: (out / "runs.csv.gz").write_bytes((out / "runs.csv.gz").read_bytes()[:200]),
                              "is damaged"),
    "runs.csv.gz empty": (lambda out: (out / "runs.csv.gz").write_bytes(gzip.compress(b"", mtime=0)),
                          "is not a table as fsbench writes it"),
    "a row short of a field": (lambda out: _runs_lines(out, lambda ls: [*ls[:2], ls[2].rsplit(",", 1)[0], *ls[3:]]),
                               "line 3 has"),
    "RFS params not JSON": (lambda out: _runs_lines(out, _rfs_params_not_json), "has RFS params ["),
    "objective.csv empty": (lambda out: (out / "objective.csv").write_text(""), "is not a table as fsbench writes it"),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_folder_it_does_not_recognize_is_one_sentence_and_exit_2_unchanged(fault, tmp_path, configs):
    make, message = FAULTS[fault]
    out = folder_before(SMALLEST, tmp_path)
    make(out)
    before = snapshot(out)
    args = ["--configs", str(configs), "--results", str(tmp_path / "results" / "papers")]
    result = CliRunner().invoke(migrate.main, args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and message in error[0] and "restore it from version control" in error[0], error
    assert snapshot(out) == before


def test_a_folder_another_process_holds_is_refused(tmp_path, configs):
    from fsbench.storage.lock import locked

    out = folder_before(SMALLEST, tmp_path)
    before = snapshot(out)
    script = ("import sys, time; from pathlib import Path; from fsbench.storage.lock import locked\n"
              "with locked(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([shutil.which("python") or "python", "-c", script, str(out)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FsbenchError, match="Another fsbench process is writing"):
            migrate.migrate_folder(migration_of(SMALLEST, out, configs))
    finally:
        holder.kill()
        holder.wait()
    assert snapshot(out) == before
    with locked(out):  # released by the killed holder
        pass


def _expected_audit(runs: pd.DataFrame, config: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Tasks per selector label whose rows other selector code computed (a run stops on them), and
    those another protocol evaluated (kept; --recompute-stale recomputes both). Rows that record no
    code (written before fsbench recorded it) are neither."""
    from fsbench.engine.fitting import selector_identity
    from fsbench.evaluation import protocol_code

    experiment = load_experiment(config)
    codes = {s.label: selector_identity(s) for s in experiment.selectors}
    tasks = runs.drop_duplicates(["dataset", "repeat", "fold", "selector"])
    recorded = tasks["code"].notna()
    by_code = recorded & (tasks["code"].astype(str) != tasks["selector"].map(codes))
    by_protocol = recorded & ~by_code & (tasks["protocol_code"].astype(str) != protocol_code())
    return (tasks[by_code]["selector"].value_counts().to_dict(),
            tasks[by_protocol]["selector"].value_counts().to_dict())


def _runs(folder: Path) -> pd.DataFrame:
    return pd.read_csv(folder / "runs.csv.gz", dtype={"params": str, "code": str, "protocol_code": str})


def _runlog(folder: Path) -> dict:
    return json.loads((folder / "runlog.jsonl").read_text().splitlines()[-1])


KEY = ["dataset", "repeat", "fold", "selector", "k"]


def test_the_pinned_config_resumes_the_smallest_migrated_folder_recomputing_nothing(tmp_path, configs):
    # DSO-FS's ISOLET variant: its RFS rows were written before fsbench recorded code, so nothing
    # in it is stale: all 30 tasks resume, none is recomputed, and the rows stay as migrated.
    data_dir = papers_data()
    out = folder_before(SMALLEST, tmp_path)
    migrate.migrate_folder(migration_of(SMALLEST, out, configs))
    config = configs / f"{SMALLEST}.yaml"
    migrated = _runs(out)
    stale, _ = _expected_audit(migrated, config)
    if stale:
        pytest.skip(f"selector code changed since these rows ({stale}): the run stops on them by design")
    result = CliRunner().invoke(fsbench_main, ["run", str(config), "--out", str(out), "--data-dir", str(data_dir),
                                               "-j", "2"])
    assert result.exit_code == 0, result.output
    assert "different configuration" not in result.output
    assert not (out / "runlog.jsonl").exists()  # a run logs itself only when it computed a task
    assert "30 tasks (30 resumed)" in result.output
    pd.testing.assert_frame_equal(migrated.sort_values(KEY).reset_index(drop=True),
                                  _runs(out)[migrated.columns].sort_values(KEY).reset_index(drop=True))
    assert gzip.decompress((out / "rankings.csv.gz").read_bytes()) == gzip.decompress(
        git_bytes(f"results/papers/{SMALLEST}/rankings.csv.gz", MIGRATED))


def test_the_pinned_config_recomputes_the_stale_rfs_tasks_as_committed(tmp_path, configs):
    # The rfs-intercept variant as migrated (RFS only, about 40 s of compute): its RFS rows name the
    # code before the change, so a run stops naming them; --recompute-stale recomputes exactly the
    # stale tasks, and the pinned rule gives the committed RFS rows and rankings again. The
    # migration then leaves the recomputed folder (rows with digests) alone.
    data_dir = papers_data()
    migrated = folder_at(MIGRATED, "variants/rfs-intercept", tmp_path / "migrated")
    out = tmp_path / "rfs-intercept"
    shutil.copytree(migrated, out)
    config = configs / "variants" / "rfs-intercept.yaml"
    committed = _runs(out)
    stale, other_protocol = _expected_audit(committed, config)
    assert stale == {"rfs": 150}  # the code change
    before = snapshot(out)
    args = ["run", str(config), "--out", str(out), "--data-dir", str(data_dir), "-j", "2", "--skip-missing"]
    result = CliRunner().invoke(fsbench_main, args)
    assert result.exit_code == 2, result.output
    assert "different configuration" not in result.output and "another configuration" not in result.output
    named = ", ".join(f"{label}: {n}" for label, n in sorted(stale.items())) + " tasks"
    assert named in " ".join(result.output.split())
    assert snapshot(out) == before

    result = CliRunner().invoke(fsbench_main, [*args, "--recompute-stale"])
    assert result.exit_code == 0, result.output
    assert _runlog(out)["n_run"] == sum(stale.values()) + sum(other_protocol.values())
    rerun = _runs(out)
    a = committed.sort_values(KEY).reset_index(drop=True)
    b = rerun[committed.columns].sort_values(KEY).reset_index(drop=True)
    assert (a[KEY] == b[KEY]).all().all()
    recomputed = a["selector"].isin(set(stale) | set(other_protocol)).to_numpy()
    pd.testing.assert_frame_equal(a[~recomputed], b[~recomputed])  # restored as they were
    rfs = (a["selector"] == "rfs").to_numpy()
    same = [c for c in a.columns if c not in ("fit_seconds", "task_seconds", "code", "protocol_code")]
    pd.testing.assert_frame_equal(a.loc[rfs, same], b.loc[rfs, same])  # the committed RFS rows, computed again
    assert set(b.loc[rfs, "code"]) != set(a.loc[rfs, "code"])
    keep = ["dataset", "repeat", "fold", "selector", "position", "feature"]
    old_r, new_r = (pd.read_csv(p / "rankings.csv.gz")
                    for p in (migrated, out))
    pd.testing.assert_frame_equal(old_r[old_r.selector == "rfs"][keep].reset_index(drop=True),
                                  new_r[new_r.selector == "rfs"][keep].reset_index(drop=True))

    assert DIGEST_COLUMN in rerun.columns
    recomputed_files = snapshot(out)
    assert migrate.migrate_folder(migration_of("variants/rfs-intercept", out, configs)) == []
    assert snapshot(out) == recomputed_files
