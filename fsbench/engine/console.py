"""What the command line shows while a run works, and how it stops: progress, notes, signals."""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

import click

INTERRUPTED = "Interrupted: finished tasks are saved; run the same command again to resume."
#: off a terminal, the longest a run stays silent: a line every so many seconds, naming the
#: running tasks when none finished meanwhile
PROGRESS_EVERY = 60.0
#: on a terminal, a task running this long is named beside the bar
SLOW_TASK = 10.0


class Progress:
    """Counts finished tasks: a bar on a terminal, else a line "name: n/N tasks" at every tenth
    of the run and at least every ``every`` seconds (logs and CI show no bar).

    :meth:`running` keeps a run whose tasks finish slowly (or hang: a user's selector without a
    ``timeout``) visibly alive and names the task that is stuck: off a terminal a line
    "name: n/N tasks; running 95 s: glioma r0 f4 myplugin" when nothing was printed for
    ``every`` seconds; on a terminal, the longest-running task beside the bar once it has run
    :data:`SLOW_TASK` seconds."""

    def __init__(self, name: str, out: Any, *, quiet: bool = False, stream: TextIO | None = None,
                 every: float | None = None):
        self.name, self.out, self.quiet = name, out, quiet
        self.every = PROGRESS_EVERY if every is None else every
        self.stream = stream or sys.stderr
        self._bar: Any = None
        self._running = ""
        self._total = self._done = 0
        self._last_line = 0.0
        self._last_tenth = 0
        self._started = time.monotonic()

    def start(self, n_pending: int, n_total: int) -> None:
        if self.quiet:
            return
        resumed = n_total - n_pending
        suffix = f" ({resumed} already done)" if resumed else ""
        click.echo(f"{self.name}: {n_total} tasks{suffix} -> {self.out}", err=True)
        self._total, self._started = n_pending, time.monotonic()
        self._last_line = self._started
        if n_pending and self.stream.isatty():
            self._bar = click.progressbar(length=n_pending, label="tasks", file=self.stream, show_eta=True,
                                          show_pos=True, item_show_func=lambda _: self._running or None)
            self._bar.__enter__()

    def done(self, task_id: str) -> None:
        if self.quiet:
            return
        self._done += 1
        if self._bar is not None:
            self._running = ""  # the next tick names what still runs
            self._bar.update(1)
            return
        now = time.monotonic()
        tenth = 10 * self._done // max(self._total, 1)
        if tenth > self._last_tenth or now - self._last_line >= self.every or self._done == self._total:
            self._last_tenth, self._last_line = tenth, now
            click.echo(f"{self.name}: {self._done}/{self._total} tasks ({now - self._started:.0f} s)",
                       file=self.stream)

    def running(self, tasks: list[tuple[str, float]]) -> None:
        """The tasks running now, each with the seconds it has run, longest first (called about
        every second by the runner)."""
        if self.quiet or not tasks:
            return
        if self._bar is not None:
            slow = [(name, seconds) for name, seconds in tasks if seconds >= SLOW_TASK]
            text = f"running {slow[0][1]:.0f} s: {slow[0][0]}"[:60] if slow else ""
            if text != self._running:
                self._running = text
                self._bar.render_progress()
            return
        now = time.monotonic()
        if now - self._last_line >= self.every:
            self._last_line = now
            which = ", ".join(f"{seconds:.0f} s: {name}" for name, seconds in tasks)
            click.echo(f"{self.name}: {self._done}/{self._total} tasks; running {which}", file=self.stream)

    def note(self, text: str) -> None:
        self.close()
        click.echo(f"Note: {text}.", err=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a job scheduler, ``kill``) stops the run as Ctrl-C does: workers are stopped,
    finished tasks kept."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_workers() -> None:
    """Terminate joblib's reusable worker processes at once (they would idle on for minutes):
    those of the commands that still run joblib (fsbench.engine.regenerate_rankings); a run's own workers
    (fsbench.engine.workers) stop with it."""
    with contextlib.suppress(Exception):
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=False, kill_workers=True)
