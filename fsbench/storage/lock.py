"""The one-writer rule of a results folder: its OS lock (:func:`locked`), the check that a
folder can be written before anything is (:func:`check_writable_folder`), and the wording of an
OS error met while writing (:func:`describe_os_error`).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from fsbench.errors import FsbenchError

#: the lock file of a results folder
LOCK_FILE = ".fsbench.lock"


@contextlib.contextmanager
def locked(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s exclusive lock (creating the folder); another holder makes it fail at once.

    The lock is an OS file lock (filelock: fcntl on POSIX), released when the process exits or
    is killed, so a crashed run never leaves the folder locked.
    """
    from filelock import FileLock, Timeout

    out_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(out_dir / LOCK_FILE, timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise FsbenchError(f"Another fsbench process is writing to {str(out_dir)!r}; wait for it to finish "
                           "or write elsewhere with --out.") from None
    try:
        yield
    finally:
        lock.release()


def check_writable_folder(out_dir: Path) -> None:
    """Raise a FsbenchError when ``out_dir`` cannot be a results folder (before anything is written)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise FsbenchError(f"{str(out_dir)!r} is a file, not a folder; choose another --out.")
    existing = out_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise FsbenchError(f"Cannot create {str(out_dir)!r}: {str(existing)!r} is a file; choose another --out.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FsbenchError(f"Cannot write to {str(existing)!r} (permission denied); choose another --out.")


def describe_os_error(exc: OSError, what: str) -> str:
    """One sentence for an OSError met while writing results (a full disk, a read-only folder)."""
    reason = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exceeded",
              errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
              errno.EPERM: "permission denied"}.get(exc.errno or 0, exc.strerror or str(exc))
    where = f" ({exc.filename})" if exc.filename else ""
    return f"Cannot write {what}: {reason}{where}"
