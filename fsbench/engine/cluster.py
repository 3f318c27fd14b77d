"""Running an experiment's tasks on a Dask cluster: the workers compute, the client writes.

``--scheduler tcp://HOST:8786`` connects to a running scheduler; ``--scheduler local`` (or
``local:N``) starts a ``LocalCluster`` of N single-threaded worker processes on this machine.
Each dataset's arrays are sent to every worker once (``Client.scatter``, broadcast: a dataset
held by one worker only would be lost with it, and every task needing it fail) and every task is one
Dask future that returns its outcome (rows and ranking, or the failure) to the client, which
alone writes the results folder, as the local path does: a worker never needs the results or
the data folder. A worker that dies mid-task loses nothing: the scheduler reruns its tasks on
another worker (Dask's ``allowed_failures``), and a task's outcome depends only on the task
(seeds from its identity, one BLAS thread), so the rows are those of an uninterrupted run.

What the cluster cannot do is one sentence (a FsbenchError, exit status 2), the finished tasks
kept for the rerun: a task that kills every worker it runs on, a scheduler lost mid-run.
Distributed's own error logs in this process are held back while fsbench uses the cluster,
since fsbench says what failed itself; Ctrl-C or SIGTERM while a local cluster starts waits for
the start to finish, then stops it cleanly (a half-started cluster prints tracebacks at exit).

Dask is an optional dependency (``pip install 'fsbench[dask]'``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from typing import Any

from fsbench.engine.workers import describe_exception
from fsbench.errors import FsbenchError

INSTALL_HINT = "pip install 'fsbench[dask]'"
_LOCAL = re.compile(r"local(?::(\d+))?")


def parse_scheduler(spec: str) -> tuple[str, int | None]:
    """("local", N or None) for ``local`` / ``local:N``, else ("address", None) for a scheduler
    address such as ``tcp://host:8786``."""
    spec = spec.strip()
    match = _LOCAL.fullmatch(spec)
    if match:
        n = int(match.group(1)) if match.group(1) else None
        if n is not None and n < 1:
            raise FsbenchError(f"--scheduler {spec}: a local cluster needs at least one worker, e.g. local:2.")
        return "local", n
    if not spec:
        raise FsbenchError("--scheduler is empty; give 'local', 'local:N' or a scheduler address such as "
                           "tcp://host:8786.")
    return "address", None


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise FsbenchError(f"--scheduler needs Dask's distributed scheduler, which is not installed; install it "
                           f"with: {INSTALL_HINT}") from None
    return distributed


@contextlib.contextmanager
def connect(spec: str, *, timeout: float = 10.0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``spec`` (see :func:`parse_scheduler`), closed on exit; a
    local cluster is started and stopped with it. An unreachable scheduler is a FsbenchError."""
    kind, n_workers = parse_scheduler(spec)
    distributed = _import_distributed()
    with _quiet_errors():
        if kind == "local":
            with _interrupts_deferred() as received:
                # its logs are fsbench's internals (a run's failures are reported as sentences): none
                # printed, from this process or the workers'; its HTTP server on a free local port
                # (the default, 8787, may be another cluster's: a warning)
                cluster = distributed.LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                                                   processes=True, dashboard_address="127.0.0.1:0",
                                                   silence_logs=logging.CRITICAL)
                try:
                    client = distributed.Client(cluster)
                except BaseException:
                    _close(cluster)
                    raise
            try:
                if received:  # Ctrl-C or SIGTERM while the cluster started: now it can stop cleanly
                    raise KeyboardInterrupt
                yield client
            finally:
                _close(client)
                _close(cluster)
            return
        try:
            client = distributed.Client(spec, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise FsbenchError(f"Cannot reach the Dask scheduler at {spec} ({type(exc).__name__}); start one with "
                               "'dask scheduler' (and workers with 'dask worker ADDRESS') or check the "
                               "address.") from None
        try:
            yield client
        finally:
            _close(client)


def _close(resource: Any) -> None:
    """Close a client or cluster; one whose scheduler is gone raises, which must not hide why the
    run stopped (the error the run raised, or its sentence)."""
    with contextlib.suppress(Exception):
        resource.close()


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[list[int]]:
    """SIGINT and SIGTERM received in the block are recorded (in the list yielded), not raised:
    a KeyboardInterrupt inside LocalCluster's start leaves a half-built cluster that distributed
    fails to close at exit, with a traceback. Only the main thread can set handlers: elsewhere
    nothing is deferred."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def record(signum: int, frame: Any) -> None:
        received.append(signum)

    previous = {signum: signal.signal(signum, record) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _DropErrors(logging.Filter):
    """distributed's records at ERROR and above, and any of its records carrying a traceback (its
    comms log a closed connection at INFO with the exception attached)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("distributed"):
            return True
        return record.levelno < logging.ERROR and not record.exc_info


@contextlib.contextmanager
def _quiet_errors() -> Iterator[None]:
    """Hold back distributed's ERROR records and its records with a traceback (a lost connection,
    "lost scattered data" when a run is stopped) from this process's handlers: every failure that matters
    reaches the run as an exception, which fsbench reports as one sentence. Warnings pass."""
    drop = _DropErrors()
    loggers = [logging.getLogger(name) for name in list(logging.Logger.manager.loggerDict)
               if name.startswith("distributed")] + [logging.getLogger()]
    handlers = {id(h): h for logger in loggers for h in logger.handlers}.values()
    for handler in handlers:
        handler.addFilter(drop)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(drop)


def n_workers(client: Any) -> int:
    """Workers the scheduler knows now (at least 1, for the runlog; 1 when it cannot say)."""
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # a scheduler lost already: run_tasks says so
        return 1


#: how often a task the cluster failed on (not the task's own failure: compute returns those) runs again
_RETRIES = 2


def run_tasks(client: Any, compute: Callable[..., Any], tasks: Iterable[Any], arrays: dict[str, tuple[Any, Any]],
              dataset_of: Callable[[Any], str], key_of: Callable[[Any], str], *args: Any) -> Iterator[Any]:
    """Submit ``compute(task, (X, y), *args)`` for every task, each dataset's (X, y) scattered
    to every worker once, and yield the results as they finish (any order). On an interruption (Ctrl-C, SIGTERM
    as KeyboardInterrupt) the pending futures are cancelled before the exception propagates. A
    task the cluster cannot finish (its workers keep dying: Dask's KilledWorker after
    ``allowed_failures``; another error of the cluster after :data:`_RETRIES` more runs; the scheduler
    lost) is a FsbenchError naming it; the outcomes already yielded are the caller's to keep."""
    distributed = _import_distributed()
    tasks = list(tasks)
    needed = sorted({dataset_of(t) for t in tasks})
    futures: list[Any] = []
    task_of: dict[str, Any] = {}
    attempts: dict[str, int] = {}
    try:
        try:
            scattered = {name: client.scatter(arrays[name], broadcast=True, hash=False) for name in needed}
            for task in tasks:
                futures.append(client.submit(compute, task, scattered[dataset_of(task)], *args,
                                             key=f"fsbench-{key_of(task)}", pure=False))
                task_of[futures[-1].key] = task
            completed = distributed.as_completed(futures)
        except Exception as exc:
            raise _lost(client, exc) from None
        while True:
            try:
                future = next(completed)
            except StopIteration:
                break
            except Exception as exc:
                raise _lost(client, exc) from None
            try:
                result = future.result()
            except Exception as exc:  # compute() itself returns a task's failure: this is the cluster's
                # a future that did not err (cancelled, or its result not gathered: distributed's
                # CommClosedError is an OSError) lost the connection, even before the client's status
                # says so; an erred one raises the task's own error (KilledWorker, an OSError of its own)
                if future.status != "error" and (isinstance(exc, CancelledError | OSError)
                                                 or client.status not in ("running", "connecting")):
                    raise _lost(client, exc) from None
                # an error of the cluster itself (distributed's own RuntimeError after a worker died, for
                # one) is transient: the task runs again, as a new future, up to _RETRIES times; a task's
                # result does not depend on where or how often it runs. KilledWorker has been retried already.
                task = task_of.get(future.key)
                tries = attempts.get(future.key, 0)
                if task is not None and tries < _RETRIES and type(exc).__name__ != "KilledWorker":
                    retry = client.submit(compute, task, scattered[dataset_of(task)], *args,
                                          key=f"fsbench-{key_of(task)}-retry{tries + 1}", pure=False)
                    task_of[retry.key], attempts[retry.key] = task, tries + 1
                    futures.append(retry)
                    completed.add(retry)
                    continue
                name = f"fsbench-{key_of(task)}" if task is not None else future.key
                raise FsbenchError(f"The Dask cluster could not run task {name} ({describe_exception(exc)}); "
                                   "every finished task is kept: check the workers (memory, a crashing library) "
                                   "and run the same command again to resume.") from None
            yield result
    except BaseException:
        with contextlib.suppress(Exception):  # a lost scheduler cannot cancel: the error above says why
            client.cancel(futures, force=True)
        raise


def _lost(client: Any, exc: BaseException) -> FsbenchError:
    """The sentence for a scheduler this client lost (killed, its machine gone, the network)."""
    address = "the Dask scheduler"
    with contextlib.suppress(Exception):
        address = f"the Dask scheduler at {client.scheduler.address}"
    return FsbenchError(f"Lost the connection to {address} ({describe_exception(exc)}); every finished task is kept: "
                        "restart the scheduler and its workers (or check the network) and run the same command "
                        "again to resume.")
