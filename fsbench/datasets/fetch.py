"""Downloading datasets from their registered source into the per-user cache.

Each fetch downloads with pooch into a private staging folder inside the cache
(``.fetch-<host>-<pid>-<random>``); checks every file against its registered sha256 or, for
files identified by a git blob id (LUNG, CLL-SUB-111, Carcinomas), against that id; reads the
whole dataset and checks it against the registry; and only then moves the files into place,
writing ``<file>.sha256`` beside each file verified by git blob id (the sha256 of the verified
bytes, which later loads check, see :mod:`fsbench.datasets.integrity`). A failed or corrupt
download leaves nothing in the cache.

A process killed during a fetch leaves its staging folder (and any partial download in it)
behind. Every fetch first removes the staging folders of dead fetches: those whose process, on
this host, no longer runs, and any that nothing has written to for :data:`STALE_AFTER` seconds
(staging folders of other hosts sharing the cache, of a reused process id, or from older
versions of fsbench). A concurrent fetch's staging folder is never removed while it is
downloading.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from fsbench.datasets import paths as _paths
from fsbench.datasets.integrity import file_digests, read_record, verify_file, write_record
from fsbench.datasets.loaders import check, read_files
from fsbench.datasets.registry import DataFile, DatasetSpec, all_datasets, resolve
from fsbench.errors import DataError, FsbenchError

__all__ = ["STALE_AFTER", "FetchResult", "clean_stale_staging", "fetch", "fetch_many"]

STAGING_PREFIX = ".fetch-"
STALE_AFTER = 3600.0  # seconds without a write after which any staging folder is abandoned
_RECORD_TMP = re.compile(r"^\..+\.sha256-[a-z0-9_]+\.tmp$")  # integrity.write_record's
_STAGING_NAME = re.compile(r"^\.fetch-(?P<host>[A-Za-z0-9._]+)-(?P<pid>\d+)-[a-z0-9_]+$")


@contextmanager
def _quiet_pooch() -> Iterator[None]:
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "localhost"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (True when that cannot be told)."""
    if os.name != "posix":  # os.kill(pid, 0) would signal the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it runs, as another user
        return True
    return True


def _last_write(folder: Path) -> float:
    """The latest modification time of ``folder`` and everything in it."""
    latest = folder.stat().st_mtime
    for path in folder.rglob("*"):
        try:
            latest = max(latest, path.stat().st_mtime)
        except OSError:  # removed meanwhile
            continue
    return latest


def clean_stale_staging(target: str | Path, *, stale_after: float = STALE_AFTER) -> list[Path]:
    """Remove what dead fetches left in ``target``; return the paths removed.

    A staging folder is stale when the process named in it ran on this host and no longer runs,
    or when nothing in it was written for ``stale_after`` seconds (a download in progress keeps
    writing; a stalled one times out long before). A temporary sha256 record
    (``.<file>.sha256-*.tmp``) is stale after ``stale_after`` seconds.
    """
    target = Path(target)
    host, now, removed = _host(), time.time(), []
    try:
        entries = list(target.iterdir())
    except OSError:
        return []
    for path in entries:
        if _RECORD_TMP.match(path.name):
            try:
                if now - path.stat().st_mtime > stale_after:
                    path.unlink()
                    removed.append(path)
            except OSError:
                pass
    candidates = [p for p in entries if p.name.startswith(STAGING_PREFIX) and p.is_dir()]
    for folder in candidates:
        match = _STAGING_NAME.match(folder.name)
        try:
            dead = (match is not None and match["host"] == host
                    and int(match["pid"]) != os.getpid() and not _alive(int(match["pid"])))
            if not dead and now - _last_write(folder) <= stale_after:
                continue
        except OSError:  # removed by another fetch meanwhile
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed


def _is_cached(spec: DatasetSpec, target: Path) -> list[Path] | None:
    """The cached files of ``spec`` when all are present and intact, else None.

    A cached file verified by git blob id but without its sha256 record (fetched by an older
    fsbench, or a fetch killed between moving the file and writing the record) gets one.
    """
    found = [target / f.name for f in spec.files]
    if not all(p.is_file() for p in found):
        return None
    for f, path in zip(spec.files, found, strict=True):
        try:
            sha256 = verify_file(spec, f, path, "fetch it again")
        except DataError:
            return None
        if f.git_blob is not None and sha256 is not None and read_record(path) is None:
            try:
                write_record(path, sha256)
            except OSError:
                pass  # the record is a convenience; the blob id was checked
    if any(f.sha256 is None and f.git_blob is None for f in spec.files):
        try:
            X, labels = read_files(spec, found)
            check(spec, X, labels, str(target))
        except DataError:
            return None
    return found


def _network_reason(exc: OSError, url: str, timeout: float) -> str:
    """A short human reason for a failed download."""
    import requests

    host = urlparse(url).netloc
    text = str(exc)
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"the server answered HTTP {exc.response.status_code}"
    if isinstance(exc, requests.Timeout):
        return f"no answer from {host} within {timeout:g} s"
    if isinstance(exc, requests.ConnectionError):
        if "NameResolution" in text or "resolve" in text or "not known" in text:
            return f"the host name {host} cannot be resolved"
        if "refused" in text.lower():
            return f"the connection to {host} was refused"
        return f"cannot connect to {host}"
    return f"{type(exc).__name__}: {text.splitlines()[0][:120]}" if text else type(exc).__name__


def _download(spec: DatasetSpec, f: DataFile, url: str, dest: Path, target: Path,
              timeout: float, progressbar: bool) -> None:
    import pooch

    downloader = pooch.HTTPDownloader(progressbar=progressbar, timeout=timeout)
    try:
        with _quiet_pooch():
            pooch.retrieve(url, known_hash=f.sha256, fname=dest.name, path=dest.parent,
                           downloader=downloader)
    except ValueError as exc:  # pooch: the sha256 of the download differs from the known hash
        raise DataError(
            f"The file downloaded for dataset {spec.name!r} from {url} does not match its "
            "registered sha256 checksum (a corrupt download or a changed source), so it was "
            f"discarded and nothing was kept in {target}; try again, or download {f.name} by hand "
            f"and compare it with 'fsbench datasets info {spec.name}'."
        ) from exc
    except OSError as exc:  # requests' errors (refused, unreachable, HTTP 404, timeout)
        reason = _network_reason(exc, url, timeout)
        raise DataError(
            f"Could not download {f.name} of dataset {spec.name!r} from {url} ({reason}); check "
            "the network connection, or download the file by hand and set FSBENCH_DATA / "
            "--data-dir to the folder holding it."
        ) from exc
    if f.git_blob is not None:
        blob = file_digests(dest)[1]
        if blob != f.git_blob.lower():
            raise DataError(
                f"The file downloaded as {f.name} for dataset {spec.name!r} from {url} has git "
                f"blob id {blob} instead of the pinned copy's {f.git_blob.lower()} (a changed "
                f"source or a corrupt download), so it was discarded and nothing was kept in "
                f"{target}; try again, or get the file of the pinned commit by hand and set "
                "FSBENCH_DATA / --data-dir to the folder holding it."
            )


def fetch(
    name: str | DatasetSpec,
    cache_dir: str | Path | None = None,
    *,
    base_url: str | None = None,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> list[Path]:
    """Download a dataset from its registered source into the per-user cache; return its files.

    ``cache_dir`` defaults to :func:`fsbench.datasets.cache_dir`. ``base_url`` replaces the
    registered URLs by ``base_url + '/' + file name`` (a mirror, or a local server in tests).
    Files already cached and intact are not downloaded again. Raises DataError when no URL is
    known, the host cannot be reached, a sha256 or git blob id differs or the content is not the
    dataset. A dataset built into fsbench (no files) needs no download and gives an empty list.
    Staging folders left in the cache by killed fetches are removed first
    (:func:`clean_stale_staging`).
    """
    spec = name if isinstance(name, DatasetSpec) else resolve(name)
    if not spec.files:
        return []
    target = Path(cache_dir).expanduser() if cache_dir is not None else _paths.cache_dir()
    urls = [f"{base_url.rstrip('/')}/{f.name}" if base_url else f.url for f in spec.files]
    for f, url in zip(spec.files, urls, strict=True):
        if url is None:
            raise DataError(
                f"No download URL is registered for {f.name} of dataset {spec.name!r}; get it from "
                f"{spec.source} and set FSBENCH_DATA / --data-dir to the folder holding it."
            )
    if target.is_dir():
        clean_stale_staging(target)
    cached = _is_cached(spec, target)
    if cached is not None:
        return cached

    try:
        target.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{_host()}-{os.getpid()}-",
                                        dir=target))
    except OSError as exc:
        raise DataError(f"Cannot write to the dataset cache {target} ({exc.strerror or exc}); set "
                        f"FSBENCH_CACHE to a writable folder.") from exc
    try:
        staged = []
        for f, url in zip(spec.files, urls, strict=True):
            dest = staging / f.name
            _download(spec, f, str(url), dest, target, timeout, progressbar)
            staged.append(dest)
        try:
            X, labels = read_files(spec, staged)
            check(spec, X, labels, "the download")
        except DataError as exc:
            raise DataError(
                f"The download of dataset {spec.name!r} from {urls[0]} is not the expected data "
                f"({getattr(exc, 'problem', 'unreadable')}), so it was discarded and nothing was "
                f"kept in {target}; check the source, or get the file by hand."
            ) from exc
        final = []
        for f, path in zip(spec.files, staged, strict=True):
            dest = target / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
            if f.git_blob is not None:  # the file first: a record never describes other bytes
                write_record(dest, file_digests(dest)[0], folder=staging)
            final.append(dest)
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class FetchResult:
    """What fetching one dataset gave: its files, or the one-sentence reason it failed."""

    name: str
    paths: tuple[Path, ...] = ()
    error: str | None = None
    builtin: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def lines(self) -> list[str]:
        """One line per file fetched (``name: path``), or what a built-in dataset needs."""
        if self.error is not None:
            return [f"{self.name}: {self.error}"]
        if self.builtin:
            return [f"{self.name}: built in (no file needed)"]
        return [f"{self.name}: {path}" for path in self.paths]


def fetch_many(
    names: Sequence[str] | None,
    cache_dir: str | Path | None = None,
    *,
    timeout: float = 60.0,
    progressbar: bool = False,
) -> Iterator[FetchResult]:
    """Fetch each of ``names`` (None: every dataset with download URLs), one result each.

    Unknown names raise ConfigError before anything is downloaded. A dataset that cannot be
    fetched (a DataError or other user-facing error) gives a result with its reason and the
    others are still fetched, in order.
    """
    if names is None:
        specs = [spec for spec in all_datasets() if spec.downloadable]
    else:
        specs = list(dict.fromkeys(resolve(name) for name in names))  # in order, once each

    def run() -> Iterator[FetchResult]:
        for spec in specs:
            if not spec.files:
                yield FetchResult(spec.name, builtin=True)
                continue
            try:
                paths = fetch(spec, cache_dir, timeout=timeout, progressbar=progressbar)
            except FsbenchError as exc:
                yield FetchResult(spec.name, error=str(exc))
            else:
                yield FetchResult(spec.name, tuple(paths))

    return run()
