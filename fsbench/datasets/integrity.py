"""Checking that a dataset file holds the registered bytes.

A registry file is identified in one of two ways (:class:`~fsbench.datasets.registry.DataFile`):

- ``sha256``: the sha256 of a copy the project hashed;
- ``git_blob``: the git blob id recorded for the file in a pinned commit of its source
  repository (LUNG, CLL-SUB-111 and Carcinomas, whose bytes the project never had). A git blob
  id is the SHA-1 of ``b"blob <size>\\0"`` followed by the file's bytes, so it can be checked
  without git.

When :func:`fsbench.datasets.fetch` downloads a file verified by git blob id, it writes the
sha256 of the verified bytes beside it as ``<file>.sha256`` (one line in ``sha256sum`` format,
``<hex>  <file name>``, so ``sha256sum -c lung.mat.sha256`` checks it too). Every verified load
of such a file compares it with that record first (a mismatch means the file changed after it
was downloaded), then with the git blob id (a mismatch means it is not the pinned copy).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from fsbench.datasets.registry import DataFile, DatasetSpec
from fsbench.errors import DataError

__all__ = ["file_digests", "git_blob_id", "read_record", "record_path", "verify_file",
           "write_record"]

_BLOCK = 1 << 20
_SHA256_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")


def file_digests(path: str | Path) -> tuple[str, str]:
    """(sha256, git blob id) of a file, both hex, from one read in 1 MiB blocks."""
    path = Path(path)
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(usedforsecurity=False)
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        blob.update(b"blob %d\0" % size)
        n_read = 0
        for block in iter(lambda: fh.read(_BLOCK), b""):
            sha256.update(block)
            blob.update(block)
            n_read += len(block)
    if n_read != size:  # the file changed while it was read: the blob header would be wrong
        raise DataError(f"{path} changed size while it was being hashed; try again once nothing "
                        "is writing to it.")
    return sha256.hexdigest(), blob.hexdigest()


def git_blob_id(path: str | Path) -> str:
    """The git blob id of a file (what ``git hash-object FILE`` prints)."""
    return file_digests(path)[1]


def record_path(path: str | Path) -> Path:
    """Where the sha256 recorded for a downloaded file lives: ``<file>.sha256`` beside it."""
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def read_record(path: str | Path) -> str | None:
    """The sha256 recorded for ``path`` at download, or None when there is no readable record."""
    try:
        first = record_path(path).read_text(encoding="utf-8").splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    match = _SHA256_LINE.match(first.strip())
    return match.group(1).lower() if match else None


def write_record(path: str | Path, sha256: str, folder: str | Path | None = None) -> Path:
    """Record the sha256 of ``path`` beside it, atomically; return the record's path.

    The record is written in ``folder`` (default: beside ``path``) under a temporary name and
    then renamed into place, so a reader never sees half a line.
    """
    path = Path(path)
    dest = record_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}-", suffix=".tmp",
                               dir=folder if folder is not None else dest.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{sha256.lower()}  {path.name}\n")
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def verify_file(spec: DatasetSpec, f: DataFile, path: Path, fix: str) -> str | None:
    """Check ``path`` (file ``f`` of ``spec``) against its registered identity; return its sha256.

    Returns None, without reading the file, when ``f`` registers neither a sha256 nor a git blob
    id. ``fix`` ends each message (what the user should do). Raises DataError on a mismatch.
    """
    if f.sha256 is None and f.git_blob is None:
        return None
    sha256, blob = file_digests(path)
    if f.sha256 is not None:
        if sha256 != f.sha256.lower():
            raise DataError(
                f"{path} differs from the registered copy of dataset {spec.name!r} (its sha256 "
                f"checksum is {sha256[:12]}... instead of {f.sha256[:12]}...); {fix}."
            )
        return sha256
    assert f.git_blob is not None
    recorded = read_record(path)
    if recorded is not None and recorded != sha256:
        raise DataError(
            f"{path} of dataset {spec.name!r} changed after it was downloaded and verified (its "
            f"sha256 is {sha256[:12]}... instead of the {recorded[:12]}... recorded in "
            f"{record_path(path).name}); {fix}."
        )
    if blob != f.git_blob.lower():
        raise DataError(
            f"{path} is not the copy of dataset {spec.name!r} pinned in the registry (its git blob "
            f"id is {blob}, expected {f.git_blob.lower()}); {fix}."
        )
    return sha256
