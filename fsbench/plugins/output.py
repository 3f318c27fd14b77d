"""Where a user's selector prints: :func:`output_to_stderr`, the context in which fsbench fits
and probes a plugin.

fsbench's own results (the accuracy table, ``fsbench selectors``) go to standard output, its
progress and messages to standard error, so ``fsbench run CONFIG > table.md`` keeps a clean
table. A plugin's ``print`` would land in that table; inside :func:`output_to_stderr` it goes
to standard error instead, at two levels:

- Python's ``sys.stdout`` writes to ``sys.stderr`` (``print``, ``sys.stdout.write``), through a
  stand-in whose ``close()`` only flushes: a plugin closing its standard output must not close
  fsbench's standard error;
- file descriptor 1 is a duplicate of descriptor 2 (``os.dup2``), for compiled code that writes
  to the descriptor or through C's ``stdout`` (``printf`` in a C extension, LIBSVM's or
  LIBLINEAR's verbose output), whose buffer is flushed before the descriptor is restored.

Both are process-wide, so nested or concurrent uses (threads of one worker process) share one
redirection, counted, and the last to leave restores the original stream and descriptor.
Whatever else the process writes to standard output meanwhile goes to standard error as well:
fsbench itself writes nothing there while a selector is being fitted.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["output_to_stderr"]

_lock = threading.Lock()
_depth = 0
_saved_stream: Any = None
_saved_fd: int | None = None


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers (``fflush(NULL)``): what compiled code printed leaves its buffer
    for the descriptor it was written under. A no-op where libc cannot be reached."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)


def _flush(stream: Any) -> None:
    with contextlib.suppress(Exception):
        stream.flush()


class _StdoutToStderr:
    """``sys.stdout`` inside the block: whatever is asked of it is asked of the current
    ``sys.stderr``, but for ``close()``, which only flushes."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stderr, name)

    def close(self) -> None:
        _flush(sys.stderr)


def _enter() -> None:
    global _depth, _saved_stream, _saved_fd
    with _lock:
        if _depth == 0:
            _flush(sys.stdout)
            _flush_c_stdio()
            _saved_stream = sys.stdout
            sys.stdout = _StdoutToStderr()
            try:
                saved = os.dup(1)
            except OSError:  # no descriptor 1 (a daemon): nothing compiled can print there either
                _saved_fd = None
            else:
                try:
                    os.dup2(2, 1)
                except OSError:  # no descriptor 2: leave descriptor 1 alone
                    os.close(saved)
                    _saved_fd = None
                else:
                    _saved_fd = saved
        _depth += 1


def _leave() -> None:
    global _depth, _saved_stream, _saved_fd
    with _lock:
        _depth -= 1
        if _depth:
            return
        _flush(sys.stdout)
        _flush(sys.stderr)
        _flush_c_stdio()
        if _saved_fd is not None:
            os.dup2(_saved_fd, 1)
            os.close(_saved_fd)
            _saved_fd = None
        sys.stdout = _saved_stream
        _saved_stream = None


@contextlib.contextmanager
def output_to_stderr() -> Iterator[None]:
    """Send standard output to standard error in the block, Python's and descriptor 1 (see the
    module docstring). Restored on any exit, ``SystemExit`` and ``KeyboardInterrupt`` included
    (which propagate)."""
    _enter()
    try:
        yield
    finally:
        _leave()
