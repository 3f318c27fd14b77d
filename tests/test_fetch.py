"""Provenance of downloads: git blob ids (LUNG, CLL-SUB-111, Carcinomas), the sha256 recorded
at download and checked on load, `fsbench datasets fetch` (help, built-in datasets, going on after
a failure), and staging folders left by killed fetches.

Everything is served by a local HTTP server on 127.0.0.1; nothing leaves the machine. Blob ids
are computed here from their definition (SHA-1 of b"blob <size>\\0" + content), independently of
fsbench.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.io
from click.testing import CliRunner

from fsbench.cli import main
from fsbench.datasets import DataFile, DatasetSpec, cache_dir, fetch, load, locate, resolve
from fsbench.datasets import registry as registry_module
from fsbench.errors import DataError

SKF = "https://raw.githubusercontent.com/jundongl/scikit-feature/48cffad4e88ff4b9d2f1c7baffb314d1b3303792"
LUNG_SIZES = (139, 17, 21, 20, 6)


def blob_of(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def integrity():
    return importlib.import_module("fsbench.datasets.integrity")


def fetch_module():
    return importlib.import_module("fsbench.datasets.fetch")  # the package exports fetch()


def lung_like(path: Path, seed: int) -> bytes:
    """A file of LUNG's shape and class sizes (uint8 values keep it small); returns its bytes."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 255, size=(203, 3312), dtype=np.uint8)
    y = np.repeat(np.arange(1, 6), LUNG_SIZES).reshape(-1, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    scipy.io.savemat(path, {"X": X, "Y": y})
    return path.read_bytes()


def toy_spec(name: str, url: str, sha256: str | None = None) -> DatasetSpec:
    return DatasetSpec(
        name=name, title=name.upper(), aliases=(), n_samples=12, n_features=5, n_classes=3,
        papers=(), files=(DataFile(f"{name}.mat", sha256, url),), format="mat",
        source="a file the test writes",
    )


def save_toy(path: Path, seed: int = 0) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    X = np.random.default_rng(seed).normal(size=(12, 5))
    scipy.io.savemat(path, {"X": X, "Y": np.array([1, 2, 3] * 4).reshape(-1, 1)})
    return path.read_bytes()


def pin(monkeypatch, name: str, *, url: str | None = None, blob: str) -> DatasetSpec:
    """Point registry entry ``name`` at ``url`` (if given) and git blob id ``blob``."""
    spec = resolve(name)
    f = spec.files[0]
    changed = dataclasses.replace(f, url=url or f.url, git_blob=blob)
    new = dataclasses.replace(spec, files=(changed,))
    monkeypatch.setitem(registry_module._REGISTRY, spec.name, new)
    return new


def cache_contents() -> list[Path]:
    root = cache_dir()
    return sorted(root.rglob("*")) if root.exists() else []


def one_sentence(message: str, *fragments: str) -> None:
    assert "\n" not in message and message.endswith("."), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FSBENCH_CACHE", str(tmp_path / "user-cache"))
    monkeypatch.delenv("FSBENCH_DATA", raising=False)


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A local HTTP server on 127.0.0.1 (ephemeral port) serving tmp_path/served.

    ``/stall/...`` answers with a 10 MB Content-Length, sends 256 KiB and then hangs until the
    test ends: a download in progress, for the killed-fetch test.
    """
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    root = tmp_path / "served"
    root.mkdir()
    hits: list[str] = []
    release = threading.Event()

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            hits.append(self.path)
            if self.path.startswith("/stall/"):
                self.send_response(200)
                self.send_header("Content-Length", str(10 << 20))
                self.end_headers()
                self.wfile.write(b"\0" * (256 << 10))
                self.wfile.flush()
                release.wait(timeout=60)
                return
            super().do_GET()

        def log_message(self, format, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(root=root, url=f"http://127.0.0.1:{httpd.server_port}", hits=hits)
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


# ----------------------------------------------------------------------------- blob ids
def test_git_blob_id_of_known_contents(tmp_path):
    # `git hash-object` of these contents
    (tmp_path / "hello").write_bytes(b"hello\n")
    (tmp_path / "empty").write_bytes(b"")
    assert integrity().git_blob_id(tmp_path / "hello") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert integrity().git_blob_id(tmp_path / "empty") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    big = np.random.default_rng(0).integers(0, 256, size=(5 << 19) + 7, dtype=np.uint8).tobytes()
    (tmp_path / "big").write_bytes(big)  # 2.5 MiB + 7 bytes: several read blocks
    assert integrity().file_digests(tmp_path / "big") == (sha256_hex(big), blob_of(big))


def test_the_three_unhashed_datasets_are_pinned_to_scikit_feature():
    expected = {
        "lung": ("lung.mat", "lung.mat", "becb82c675f788b040d5ced741955e19b94ce9b8"),
        "cll-sub-111": ("CLL_SUB_111.mat", "CLL-SUB-111.mat",
                        "6f14fa8d02fbe7fca3e73f4c97da3f1e7003a648"),
        "carcinomas": ("Carcinom.mat", "Carcinom.mat", "ed23efd165241be723f0796d8660c67ca8448bcc"),
    }
    for name, (local, remote, blob) in expected.items():
        (f,) = resolve(name).files
        assert (f.name, f.url, f.git_blob, f.sha256) == (local, f"{SKF}/skfeature/data/{remote}",
                                                         blob, None)
    # every other downloadable file keeps its sha256
    for spec in registry_module.all_datasets():
        if spec.name not in expected:
            for f in spec.files:
                assert f.git_blob is None and (f.url is None or f.sha256 is not None), f


def test_cll_is_found_under_the_old_and_the_repository_name(tmp_path):
    for i, file_name in enumerate(("CLL_SUB_111.mat", "CLL-SUB-111.mat")):
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / file_name).write_bytes(b"x")
        assert locate("cll-sub-111", folder) == [folder / file_name]


# ----------------------------------------------------------------------------- fetch
def test_the_pinned_copy_is_accepted_and_its_sha256_recorded(server, monkeypatch, tmp_path):
    good = lung_like(server.root / "lung.mat", seed=0)
    pin(monkeypatch, "lung", url=f"{server.url}/lung.mat", blob=blob_of(good))
    paths = fetch("lung", timeout=10)
    cached = cache_dir() / "lung.mat"
    record = cache_dir() / "lung.mat.sha256"
    assert paths == [cached] and cached.read_bytes() == good
    assert record.read_text() == f"{sha256_hex(good)}  lung.mat\n"  # sha256sum format
    assert cache_contents() == [cached, record]  # no staging leftovers
    data = load("lung", tmp_path / "empty")
    assert np.bincount(data.y).tolist() == list(LUNG_SIZES)
    assert fetch("lung", timeout=10) == paths and len(server.hits) == 1  # cached: no new download


def test_a_fabricated_file_is_rejected_and_nothing_kept(server, monkeypatch, tmp_path):
    good = lung_like(tmp_path / "elsewhere" / "lung.mat", seed=0)
    fake = lung_like(server.root / "lung.mat", seed=1)  # right shape and classes, other bytes
    url = f"{server.url}/lung.mat"
    pin(monkeypatch, "lung", url=url, blob=blob_of(good))
    with pytest.raises(DataError) as info:
        fetch("lung", timeout=10)
    one_sentence(str(info.value), "lung.mat", "'lung'", url, blob_of(good), blob_of(fake),
                 "nothing was kept", str(cache_dir()))
    assert len(server.hits) == 1 and cache_contents() == []


def test_a_cached_file_changed_after_the_download_is_detected(server, monkeypatch, tmp_path):
    good = lung_like(server.root / "lung.mat", seed=0)
    pin(monkeypatch, "lung", url=f"{server.url}/lung.mat", blob=blob_of(good))
    (cached,) = fetch("lung", timeout=10)
    changed = lung_like(cached, seed=2)
    with pytest.raises(DataError) as info:
        load("lung", tmp_path / "empty")
    one_sentence(str(info.value), str(cached), "changed after it was downloaded",
                 sha256_hex(changed)[:12], sha256_hex(good)[:12], "fsbench datasets fetch lung")
    # without its record, the same file is still not the pinned copy
    (cache_dir() / "lung.mat.sha256").unlink()
    with pytest.raises(DataError) as info:
        load("lung", tmp_path / "empty")
    one_sentence(str(info.value), str(cached), "not the copy", blob_of(changed), blob_of(good))
    # fetch replaces it and records it again
    assert fetch("lung", timeout=10) == [cached] and cached.read_bytes() == good
    assert len(server.hits) == 2 and integrity().read_record(cached) == sha256_hex(good)
    assert load("lung", tmp_path / "empty").X.shape == (203, 3312)


def test_a_verified_cached_file_without_record_gets_one(server, monkeypatch):
    good = lung_like(cache_dir() / "lung.mat", seed=0)  # as an older fsbench left it
    pin(monkeypatch, "lung", url=f"{server.url}/lung.mat", blob=blob_of(good))
    assert fetch("lung", timeout=10) == [cache_dir() / "lung.mat"] and server.hits == []
    assert (cache_dir() / "lung.mat.sha256").read_text() == f"{sha256_hex(good)}  lung.mat\n"


# ----------------------------------------------------------------------------- load
def test_a_fabricated_file_in_a_data_folder_is_rejected_on_load(tmp_path):
    folder = tmp_path / "data"
    fake = lung_like(folder / "lung.mat", seed=1)
    with pytest.raises(DataError) as info:
        load("lung", folder)
    one_sentence(str(info.value), str(folder / "lung.mat"), "not the copy",
                 "becb82c675f788b040d5ced741955e19b94ce9b8", blob_of(fake),
                 "FSBENCH_DATA / --data-dir away from this copy")
    assert load("lung", folder, verify=False).X.shape == (203, 3312)


def test_the_pinned_copy_in_a_data_folder_loads_under_either_name(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    rng = np.random.default_rng(3)
    path = folder / "CLL-SUB-111.mat"  # the repository's name; the registry's is CLL_SUB_111.mat
    scipy.io.savemat(path, {"X": rng.integers(0, 9, size=(111, 11340), dtype=np.uint8),
                            "Y": np.repeat([1, 2, 3], 37).reshape(-1, 1)})
    pin(monkeypatch, "cll-sub-111", blob=blob_of(path.read_bytes()))
    data = load("CLL_SUB_111", folder)
    assert data.X.shape == (111, 11340) and np.bincount(data.y).tolist() == [37, 37, 37]


# ----------------------------------------------------------------------------- command line
def _names_after(label: str, text: str) -> set[str]:
    """The dataset names listed after ``label`` in the help, up to the next label."""
    section = re.search(rf"{label}:(.*?)(?:\n\s*\n|\n\s+[a-z ]+:\s)", text, re.S)
    assert section, text
    return set(re.findall(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b", section.group(1)))


def test_fetch_help_says_how_each_dataset_is_verified():
    text = CliRunner().invoke(main, ["datasets", "fetch", "--help"]).output
    specs = registry_module.all_datasets()
    by_sha = {s.name for s in specs if s.files and all(f.sha256 for f in s.files)}
    by_blob = {s.name for s in specs if s.files and all(f.git_blob for f in s.files)}
    assert by_sha and by_blob == {"lung", "cll-sub-111", "carcinomas"}
    assert _names_after("by sha256", text) == by_sha
    assert by_blob <= _names_after("by git blob id", text)
    assert "prostate-ms" in _names_after("no download", text)
    assert "checksum verified" not in text


def test_fetching_a_builtin_dataset_says_it_needs_no_file():
    result = CliRunner().invoke(main, ["datasets", "fetch", "digits"])
    assert result.exit_code == 0 and result.output == "digits: built in (no file needed)\n"


def test_fetch_all_goes_on_after_a_failure_and_lists_it(server, monkeypatch):
    save_toy(server.root / "aaa.mat", 0)
    save_toy(server.root / "ccc.mat", 1)
    specs = [toy_spec("aaa", f"{server.url}/aaa.mat"), toy_spec("bbb", f"{server.url}/gone.mat"),
             toy_spec("ccc", f"{server.url}/ccc.mat")]
    monkeypatch.setattr(registry_module, "_REGISTRY", {s.name: s for s in specs})
    for args in (["--all"], ["aaa", "bbb", "ccc"]):
        result = CliRunner().invoke(main, ["datasets", "fetch", *args])
        assert result.exit_code == 2, result.output
        assert result.stdout == (f"aaa: {cache_dir() / 'aaa.mat'}\n"
                                 f"ccc: {cache_dir() / 'ccc.mat'}\n")
        lines = result.stderr.splitlines()
        assert lines[0] == "Error: 1 of 3 datasets could not be fetched:" and len(lines) == 2
        assert lines[1].startswith("  bbb: Could not download bbb.mat") and "HTTP 404" in lines[1]
    assert cache_contents() == [cache_dir() / "aaa.mat", cache_dir() / "ccc.mat"]
    # one dataset that fails: one sentence, as every error
    result = CliRunner().invoke(main, ["datasets", "fetch", "bbb"])
    assert result.exit_code == 2 and result.stderr.startswith("Error: Could not download")
    assert len(result.stderr.splitlines()) == 1


# ----------------------------------------------------------------------------- staging
def test_a_killed_fetch_is_cleaned_up_by_the_next(server, tmp_path):
    cache = cache_dir()
    script = textwrap.dedent(f"""
        from fsbench.datasets import DataFile, DatasetSpec, fetch
        spec = DatasetSpec(name="big", title="BIG", aliases=(), n_samples=12, n_features=5,
                           n_classes=3, papers=(), format="mat", source="test",
                           files=(DataFile("big.mat", None, {server.url + '/stall/big.mat'!r}),))
        fetch(spec, {str(cache)!r}, timeout=60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        partial: list[Path] = []
        while not partial and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            partial = [p for p in cache.glob(".fetch-*/*") if p.is_file() and p.stat().st_size]
        assert partial, "the download never started"
    finally:
        proc.kill()  # SIGKILL: no finally block runs in the fetch
        proc.wait()
    assert partial[0].is_file()  # the killed fetch left its partial download behind
    # the next fetch, even of a dataset already in the cache, removes it
    toy = save_toy(cache / "toy.mat")
    spec = toy_spec("toy", f"{server.url}/toy.mat", sha256=sha256_hex(toy))
    assert fetch(spec, timeout=10) == [cache / "toy.mat"]
    assert cache_contents() == [cache / "toy.mat"]
    assert server.hits == ["/stall/big.mat"]


def test_only_stale_staging_folders_are_removed(tmp_path):
    module = fetch_module()
    host = module._host()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        old = time.time() - 2 * module.STALE_AFTER
        folders = {
            "dead": f".fetch-{host}-{ended.pid}-abc_12",  # its process has ended
            "live": f".fetch-{host}-{running.pid}-def_34",  # a concurrent fetch
            "mine": f".fetch-{host}-{os.getpid()}-ghi_56",  # this process, another thread
            "other-host-new": f".fetch-otherhost-{ended.pid}-jkl_78",
            "other-host-old": f".fetch-otherhost-{running.pid}-mno_90",
            "legacy-new": ".fetch-pqr_1234",  # an older fsbench's tempfile name
            "legacy-old": ".fetch-stu_5678",
        }
        for key, name in folders.items():
            (tmp_path / name).mkdir()
            (tmp_path / name / "part").write_bytes(b"x")
            if key.endswith("-old"):  # nothing written for twice STALE_AFTER
                for path in (tmp_path / name / "part", tmp_path / name):
                    os.utime(path, (old, old))
        (tmp_path / "lung.mat").write_bytes(b"kept")
        for name, when in ((".lung.mat.sha256-vw_12.tmp", old), (".Carcinom.mat.sha256-x_3.tmp", None)):
            (tmp_path / name).write_text("half a reco")  # a record being written, or left
            if when is not None:
                os.utime(tmp_path / name, (when, when))
        removed = module.clean_stale_staging(tmp_path)
    finally:
        running.kill()
        running.wait()
    gone = {"dead", "other-host-old", "legacy-old"}
    assert sorted(removed) == sorted([*(tmp_path / folders[k] for k in gone),
                                      tmp_path / ".lung.mat.sha256-vw_12.tmp"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [folders[k] for k in folders if k not in gone] + ["lung.mat", ".Carcinom.mat.sha256-x_3.tmp"])
