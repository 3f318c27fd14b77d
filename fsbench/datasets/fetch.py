"""Downloading datasets from their registered source into the per-user cache.

Files are downloaded with pooch into a private staging folder inside the cache, their sha256
checked where one is registered, the whole dataset read and checked against the registry, and
only then moved into place; a failed or corrupt download leaves nothing in the cache.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

from fsbench.datasets import paths as _paths
from fsbench.datasets.loaders import check, read_files
from fsbench.datasets.registry import DataFile, DatasetSpec, resolve
from fsbench.errors import DataError

__all__ = ["fetch"]


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


def _is_cached(spec: DatasetSpec, target: Path) -> list[Path] | None:
    """The cached files of ``spec`` when all are present and intact, else None."""
    found = [target / f.name for f in spec.files]
    if not all(p.is_file() for p in found):
        return None
    for f, path in zip(spec.files, found, strict=True):
        if f.sha256 is not None and _paths.sha256_of(path) != f.sha256.lower():
            return None
    if any(f.sha256 is None for f in spec.files):
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
    known, the host cannot be reached, a checksum differs or the content is not the dataset.
    A dataset built into fsbench (no files) needs no download and gives an empty list.
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
    cached = _is_cached(spec, target)
    if cached is not None:
        return cached

    try:
        target.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=target))
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
            final.append(dest)
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)
