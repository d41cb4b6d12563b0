"""Messages, progress and signals of the command line.

Human messages go through `logging` (logger "pdestudio") to stderr: INFO by default, DEBUG with
-v, warnings and errors only with -q. Progress is a rich bar when stderr is a terminal, a line
every few seconds with -v otherwise, and nothing at all in other cases (no bar garbage in CI
logs). SIGTERM is turned into `Terminated` (a KeyboardInterrupt) in the main thread, so a
terminated run unwinds like an interrupted one: the outputs are written atomically, nothing
half-done remains.
"""
from __future__ import annotations

import contextlib
import logging
import signal
import sys
import time

log = logging.getLogger("pdestudio")


class Terminated(KeyboardInterrupt):
    """SIGTERM received (raised in the main thread by the handler)."""


def setup(verbosity: int) -> logging.Handler:
    """Log to stderr at the level of `verbosity` (-1 quiet, 0 normal, >= 1 verbose). Returns the
    handler (remove it with `teardown`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.WARNING if verbosity < 0 else
                 logging.DEBUG if verbosity > 0 else logging.INFO)
    return handler


def teardown(handler: logging.Handler | None) -> None:
    if handler is not None and handler in log.handlers:
        log.removeHandler(handler)
        with contextlib.suppress(Exception):
            handler.flush()


def one_line(text: str) -> str:
    """A message as one line (messages from deeper layers may span several)."""
    return " ".join(str(text).split())


@contextlib.contextmanager
def signals():
    """SIGTERM raises Terminated in the main thread while the block runs (then restored)."""
    def on_term(signum, frame):
        raise Terminated()
    try:
        old = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (an embedding program): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class Progress:
    """Progress of a run towards `total` (steps or simulated time). mode: 'bar' (rich, on a
    terminal), 'lines' (a log line every few seconds), or 'off'."""

    FIRST_S = 0.5      # nothing before the run has lasted this long
    LINE_EVERY_S = 5.0

    def __init__(self, total: float, what: str, mode: str, clock=None):
        self.total, self.what, self.mode = total, what, mode
        self.clock = clock or (lambda: time.perf_counter())
        self.t0 = self.last = self.clock()
        self.bar = self.task = None
        self.shown = False

    @staticmethod
    def mode_for(verbosity: int) -> str:
        if verbosity < 0:
            return "off"
        if sys.stderr.isatty():
            return "bar"
        return "lines" if verbosity > 0 else "off"

    def update(self, done: float, steps: int, t: float) -> None:
        if self.mode == "off":
            return
        now = self.clock()
        if now - self.t0 < self.FIRST_S:
            return
        frac = min(1.0, done / self.total) if self.total else 1.0
        rate = steps / (now - self.t0) if now > self.t0 else 0.0
        info = f"step {steps}, t = {t:.6g}, {rate:.4g} steps/s"
        if self.mode == "bar" and self._bar_started():
            self.bar.update(self.task, completed=frac, info=info)
            return
        if self.shown and now - self.last < self.LINE_EVERY_S:
            return
        self.last, self.shown = now, True
        eta = (now - self.t0) * (1 - frac) / frac if frac > 0 else float("inf")
        log.info("%5.1f%% %s: %s, ETA %.0f s", 100 * frac, self.what, info, eta)

    def _bar_started(self) -> bool:
        if self.bar is not None:
            return True
        try:
            from rich.console import Console
            from rich.progress import (BarColumn, Progress as Bar, TaskProgressColumn,
                                       TextColumn, TimeRemainingColumn)
        except ImportError:  # rich missing: log lines instead
            self.mode = "lines"
            return False
        self.bar = Bar(TextColumn(self.what), BarColumn(), TaskProgressColumn(),
                       TextColumn("{task.fields[info]}"), TimeRemainingColumn(),
                       console=Console(file=sys.stderr), transient=True)
        self.task = self.bar.add_task(self.what, total=1.0, info="")
        self.bar.start()
        return True

    def close(self) -> None:
        if self.bar is not None:
            bar, self.bar = self.bar, None
            with contextlib.suppress(Exception):
                bar.stop()
