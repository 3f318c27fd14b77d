"""Jobs in worker processes that fsbench controls: a job whose process dies fails alone.

A selector is code fsbench does not control (a user's plugin, a compiled library): it may call
``sys.exit`` or ``os._exit``, or crash the interpreter (a segfault). The runner therefore runs
every task in a worker process, at any ``n_jobs`` (one worker at ``-j 1``), one task in flight per
worker over a pipe. The parent knows which job each worker holds, so a worker that dies fails
that job only (:class:`Ended` names its exit status or signal) and is replaced by a new one.

Workers compute and send their result back; they do not write the results folder: the parent
holds the folder's lock and writes. A worker dies with its parent: on Linux the kernel kills it
at once (``PR_SET_PDEATHSIG``), and everywhere a watchdog thread ends it within
:data:`WATCH_SECONDS` of seeing its parent gone, so a killed run leaves no process behind.

Where the OS allows it (Linux) workers are forked: the datasets and the plan are already in
the child's memory, shared copy-on-write, so only a job's index and its result cross the pipe
and a worker (or its replacement) starts in milliseconds. Elsewhere they are spawned, and each
worker receives ``work`` pickled once, when it starts, not once per job.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

#: how often a worker's watchdog checks that its parent lives (the fallback to PR_SET_PDEATHSIG)
WATCH_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True)
class Ended:
    """A job that returned no result, ``reason`` saying what became of it after "the process
    running the job": "ended: signal 11 (SIGSEGV)", "ended: exit status 3", "ended: called
    sys.exit(3)", "raised Stop: why" (an exception that is not an ``Exception``, which code
    raises, not a signal: a worker ignores Ctrl-C) or "could not return its result (...)" (a
    result or exception that does not pickle, or does not unpickle here)."""

    reason: str
    seconds: float = 0.0  # from the job's start to the parent's noticing its end


def run_jobs(work: Callable[[int], Any], jobs: Sequence[int], n_workers: int, *, tick: float = 1.0,
             on_tick: Callable[[list[tuple[int, float]]], None] | None = None) -> Iterator[tuple[int, Any]]:
    """Run ``work(job)`` for every job in ``n_workers`` worker processes; yield ``(job, result)``
    as each finishes (any order), the result an :class:`Ended` when the job's process died,
    called ``sys.exit``, raised what is not an ``Exception`` or could not return its result. An
    ``Exception`` ``work`` raises stops the run: it is raised here.

    ``on_tick(running)``, at most every ``tick`` seconds while jobs run, receives each running
    job with the seconds since it started, longest first. Leaving the iterator (finished,
    interrupted, or closed early) stops every worker.
    """
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pending = deque(jobs)
    workers: list[_Worker] = []
    clean = False
    try:
        workers = [_Worker(context, work) for _ in range(max(1, min(n_workers, len(pending))))]
        last_tick = time.monotonic()
        while True:
            for index, worker in enumerate(workers):
                if worker.job is None and pending:
                    if not worker.process.is_alive():  # died between two jobs (killed from outside)
                        worker.stop()
                        workers[index] = worker = _Worker(context, work)
                    worker.give(pending.popleft())
            busy = [w for w in workers if w.job is not None]
            if not busy:
                break
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=tick))
            for index, worker in enumerate(workers):
                if worker.job is None or not ({worker.conn, worker.process.sentinel} & ready):
                    continue
                job, result, alive = worker.collect()
                if not alive:
                    worker.stop()
                    workers[index] = _Worker(context, work) if pending else worker
                yield job, result
            now = time.monotonic()
            if on_tick is not None and now - last_tick >= tick:
                last_tick = now
                running = sorted(((w.job, now - w.started) for w in workers if w.job is not None),
                                 key=lambda item: -item[1])
                if running:
                    on_tick(running)
        clean = True
    finally:
        for worker in workers:
            worker.stop(gracefully=clean)


class _Worker:
    """One worker process, its end of the pipe, and the job it holds (None: idle)."""

    def __init__(self, context: Any, work: Callable[[int], Any]):
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=_serve, args=(child, work, os.getpid()), name="fsbench-worker")
        self.process.start()
        child.close()
        self.job: int | None = None
        self.started = 0.0

    def give(self, job: int) -> None:
        self.job, self.started = job, time.monotonic()
        with contextlib.suppress(OSError):  # a worker that died meanwhile: collect() says how
            self.conn.send(job)

    def collect(self) -> tuple[int, Any, bool]:
        """(job, result, whether the worker lives on) once the pipe or the process has news."""
        job, self.job = self.job, None
        assert job is not None
        seconds = time.monotonic() - self.started
        try:
            kind, value = self.conn.recv() if self.conn.poll() else ("died", None)
        except (EOFError, OSError):  # the process died, perhaps in the middle of sending
            kind, value = "died", None
        except Exception as exc:  # read whole, but it does not unpickle (a class whose __init__ needs args)
            kind, value = "ended", f"could not return its result ({describe_exception(exc)})"
        if kind == "ok":
            return job, value, True
        if kind == "ended":
            return job, Ended(value, seconds), True
        if kind == "raise":
            raise value
        self.process.join(5.0)
        return job, Ended(f"ended: {describe_exit(self.process.exitcode)}", seconds), False

    def stop(self, gracefully: bool = False) -> None:
        """End the process: an idle worker is asked to exit, a busy (or stuck) one is killed."""
        if gracefully and self.job is None and self.process.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(1.0)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5.0)
        self.conn.close()


def describe_exit(exitcode: int | None) -> str:
    """How a process ended, from its ``exitcode`` (negative: the signal that killed it)."""
    if exitcode is None:
        return "no exit status (still running)"
    if exitcode < 0:
        try:
            return f"signal {-exitcode} ({signal.Signals(-exitcode).name})"
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


def describe_exception(exc: BaseException) -> str:
    """``Type: first line of its message`` (``Type`` alone without one), for a one-line record;
    an exception whose ``str`` itself raises (a user's class) is named by its type."""
    try:
        text = str(exc).strip()
    except Exception:
        text = ""
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _serve(conn: Any, work: Callable[[int], Any], parent: int) -> None:
    """A worker's life: run each job the parent sends, send back its result, until told to stop."""
    # First of all: Ctrl-C reaches the whole process group, and the parent stops the workers; they
    # do not stop themselves half-way (nor print a KeyboardInterrupt traceback while starting).
    # SIGTERM keeps its default (the parent's handler was inherited).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent(parent)
    # The objects inherited from a forked parent are left out of garbage collection: collecting
    # them would write to every one of them and so copy the parent's memory, page by page.
    gc.freeze()
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            break
        if job is None:
            break
        try:
            message: tuple[str, Any] = ("ok", work(job))
        except SystemExit as exc:
            message = ("ended", f"ended: called sys.exit({'' if exc.code is None else repr(exc.code)})")
        except Exception as exc:  # the parent re-raises it: the run stops
            message = ("raise", exc)
        except BaseException as exc:  # noqa: BLE001 - raised by the job's code (SIGINT is ignored): it fails alone
            message = ("ended", f"raised {describe_exception(exc)}")
        try:
            conn.send(message)  # pickled whole before a byte is written: a failure leaves the pipe clean
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send(("ended", f"could not return its result ({describe_exception(exc)})"))
    conn.close()
    os._exit(0)  # neither the parent's atexit handlers nor its buffered output belong to a worker


def _die_with_parent(parent: int) -> None:
    """End this process when its parent dies: at once on Linux (the kernel sends SIGKILL), and,
    everywhere, within WATCH_SECONDS from a watchdog thread that sees the parent gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="fsbench-parent-watchdog", daemon=True).start()
