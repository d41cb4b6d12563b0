"""The simulation's methods, called from any thread, run in its solver thread.

While a live view runs, its solver thread steps the Simulation; a notebook cell that calls
`sim.snapshot()` or `sim.set_param(...)` meanwhile would otherwise read or write the state in
the middle of a step. `Router.install(sim)` wraps the methods that touch the state (ROUTED) on
that one object: called from the solver thread (its own stepping, the brush) they run directly;
called from any other thread they are queued to the solver thread, as the window's tools reach
the Simulation (`submit("call", fn)`, handled between two calls into the solver, so within one
chunk of steps, ~0.1 s), and the caller waits for the result or the exception. Reading
attributes (`sim.t`, `sim.steps`, `sim.params`) needs no routing. `uninstall` restores the
object's own methods."""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading

ROUTED = ("step", "advance", "set_param", "set_field", "fields", "device_fields", "quantities",
          "snapshot", "restore", "paint", "save")
MUTATING = {"step", "advance", "set_param", "set_field", "restore", "paint"}


_MAIN_LOOP: list = [None]


def main_loop():
    """The event loop of the kernel's main thread (asyncio's loop there; remembered, so that
    another thread asks for it too), or None before any call from the main thread."""
    if threading.current_thread() is threading.main_thread():
        try:
            _MAIN_LOOP[0] = asyncio.get_event_loop()
        except RuntimeError:
            pass
    return _MAIN_LOOP[0]


def in_main(loop, fn, *args) -> None:
    """fn(*args) in the main thread: queued to its running event loop `loop` when called from
    another thread (ipykernel's subshell threads handle some of the page's messages), else run
    here (the main thread, or no loop running: a script or a test)."""
    if loop is not None and loop.is_running() and \
            threading.current_thread() is not threading.main_thread():
        loop.call_soon_threadsafe(fn, *args)
    else:
        fn(*args)


class Router:
    """`submit(fn)` queues fn() to the solver thread; `thread()` is that thread (or None)."""

    def __init__(self, submit, thread, after=None):
        self._submit, self._thread = submit, thread
        self.after = after  # after(name) in the solver thread, after a mutating call routed
        self.obj = None

    def in_solver_thread(self) -> bool:
        return threading.current_thread() is self._thread()

    def alive(self) -> bool:
        t = self._thread()
        return t is not None and t.is_alive()

    def call(self, fn, *args, **kw):
        """fn(*args, **kw) in the solver thread (here when this is it or it has stopped)."""
        if self.in_solver_thread() or not self.alive():
            return fn(*args, **kw)
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def run():
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args, **kw))
                except BaseException as e:  # noqa: BLE001  (raised again in the caller)
                    fut.set_exception(e)
        self._submit(run)
        while True:
            try:
                return fut.result(timeout=0.5)
            except concurrent.futures.TimeoutError:
                if not self.alive() and fut.cancel():  # stopped before it ran: run it here
                    return fn(*args, **kw)

    def install(self, obj, names=ROUTED) -> None:
        self.obj = obj
        for name in names:
            method = getattr(type(obj), name, None)
            if method is None:
                continue
            bound = method.__get__(obj)
            setattr(obj, name, functools.update_wrapper(self._wrap(name, bound), bound))

    def _wrap(self, name, bound):
        def routed(*args, **kw):
            if self.in_solver_thread() or not self.alive():
                return bound(*args, **kw)

            def run():
                out = bound(*args, **kw)
                if name in MUTATING and self.after is not None:
                    self.after(name)
                return out
            return self.call(run)
        return routed

    def uninstall(self) -> None:
        obj, self.obj = self.obj, None
        if obj is not None:
            for name in ROUTED:
                obj.__dict__.pop(name, None)
