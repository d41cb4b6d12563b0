"""The timeline (issue 17): while a simulation runs, the solver thread keeps a ring of snapshots
(`sim.snapshot()`: the whole state, on the device on the GPU) every few frames, within a memory
budget (the oldest are dropped). A scrub bar at the bottom goes back: moving it pauses the run and
restores that snapshot; running on from there continues bit for bit as the first time did and
starts a new branch (the snapshots after the restored one are dropped when the next is taken).
"Fork here" continues from the shown moment with the panel's parameters: live ones are applied
to the running simulation, others make a new simulation into which the snapshot's state is
restored (its shape must fit)."""
from __future__ import annotations

import threading
from collections import deque

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QSlider, QSpinBox,
                               QWidget)

from pdestudio import solvers

EVERY = 5            # frames between two snapshots while running
BUDGET_MB = 1024     # default memory budget of the ring


class Ring:
    """Snapshots in time order within `budget` bytes (worker thread only, except `summary`)."""

    def __init__(self, budget: int):
        self.budget = budget
        self.items: deque = deque()
        self.used = 0
        self.cursor = None     # index restored last (a new snapshot drops those after it)
        self.generation = None
        self.frames = 0
        self.lock = threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.used, self.cursor, self.frames = 0, None, 0

    def add(self, snap) -> None:
        with self.lock:
            if self.cursor is not None:
                while len(self.items) > self.cursor + 1:
                    self.used -= self.items.pop().nbytes
                self.cursor = None
            if self.items and self.items[-1].steps == snap.steps and self.items[-1].t == snap.t:
                return
            self.items.append(snap)
            self.used += snap.nbytes
            while self.used > self.budget and len(self.items) > 1:
                self.used -= self.items.popleft().nbytes

    def summary(self) -> dict:
        with self.lock:
            return {"times": [(s.t, s.steps) for s in self.items], "used": self.used,
                    "budget": self.budget, "cursor": self.cursor}


class Timeline(QObject):
    changed = Signal(dict)   # emitted from the worker thread; delivered queued to the GUI

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.ring = Ring(BUDGET_MB << 20)
        window.worker.after_frame.append(self._after_frame)

    # ---- worker thread ------------------------------------------------------------------
    def _after_frame(self, worker) -> None:
        ring = self.ring
        if ring.generation != worker.generation:
            ring.clear()
            ring.generation = worker.generation
        ring.frames += 1
        if ring.items and ring.frames % EVERY and ring.cursor is None:
            return
        ring.add(worker.sim.snapshot())
        self.changed.emit(ring.summary())

    def restore(self, worker, index: int) -> None:
        ring = self.ring
        with ring.lock:
            if not 0 <= index < len(ring.items):
                return
            snap = ring.items[index]
            ring.cursor = index
        worker.sim.restore(snap)
        worker.publish_now()
        worker.message.emit(f"back at t = {snap.t:.6g} (step {snap.steps}); Run continues from "
                            "here, Fork here continues with the panel's parameters", False)
        self.changed.emit(ring.summary())

    def fork(self, worker, index, params: dict, backend: str, dtype: str) -> None:
        sim, ring = worker.sim, self.ring
        with ring.lock:
            snap = ring.items[index] if index is not None and 0 <= index < len(ring.items) \
                else None
        snap = snap or sim.snapshot()
        schema = {p["name"]: p for p in solvers.describe(sim.model)["parameters"]}
        changed = {k: v for k, v in params.items() if k in schema and k != "kernel"
                   and solvers.check_param(sim.model, k, v, sim.scenario_name)
                   != snap.params.get(k)}  # against the parameters at the snapshot
        rebuild = [k for k in changed if not schema[k]["live"]]
        if not rebuild and backend in ("auto", sim.backend) and dtype == sim.dtype:
            sim.restore(snap)
            for k in changed:
                sim.set_param(k, params[k])
            worker.publish_now()
            worker.message.emit(f"forked at t = {snap.t:.6g}: "
                                + (", ".join(f"{k} = {sim.params[k]!r}" for k in changed)
                                   or "same parameters"), False)
            return
        new = solvers.create(sim.model, backend=backend, dtype=dtype,
                             scenario=sim.scenario_name, **params)
        new.restore(snap, keep_params=True)  # ParameterError (shape) leaves everything as it was
        worker.adopt(new, f", forked at t = {snap.t:.6g} with "
                          + ", ".join(f"{k} = {new.params[k]!r}" for k in changed), backend)


class TimelineBar(QWidget):
    def __init__(self, window, timeline: Timeline):
        super().__init__()
        self.window, self.timeline = window, timeline
        self.times: list = []
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setToolTip("Drag back in time: pauses and restores that snapshot")
        self.slider.valueChanged.connect(self._moved)
        self.label = QLabel("no snapshots yet")
        self.label.setMinimumWidth(330)
        self.fork_button = QPushButton("Fork here")
        self.fork_button.setToolTip("Continue from the shown moment with the panel's "
                                    "parameters (a new simulation where they are not live)")
        self.fork_button.clicked.connect(self.fork)
        self.budget = QSpinBox()
        self.budget.setRange(16, 1 << 20)
        self.budget.setSuffix(" MB")
        self.budget.setValue(BUDGET_MB)
        self.budget.setToolTip("Memory the snapshots may take (the oldest are dropped)")
        self.budget.valueChanged.connect(lambda mb: setattr(timeline.ring, "budget", mb << 20))
        lay.addWidget(QLabel("timeline"))
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.label)
        lay.addWidget(self.fork_button)
        lay.addWidget(self.budget)
        self._quiet = False
        timeline.changed.connect(self.show_summary)

    def show_summary(self, s: dict) -> None:
        self.times = s["times"]
        n = len(self.times)
        self._quiet = True
        self.slider.setRange(0, max(n - 1, 0))
        self.slider.setValue(s["cursor"] if s["cursor"] is not None else max(n - 1, 0))
        self._quiet = False
        self._label(s)

    def _label(self, s: dict) -> None:
        n = len(self.times)
        i = self.slider.value()
        here = (f"t = {self.times[i][0]:.6g}, step {self.times[i][1]}   " if n else "")
        self.label.setText(f"{here}{n} snapshots, {s['used'] / 2**20:.0f} MB of "
                           f"{s['budget'] / 2**20:.0f} MB")

    def _moved(self, index: int) -> None:
        if self._quiet or not self.times:
            return
        self.window.run_action.setChecked(False)
        self.window.worker.submit("call", self.timeline.restore, int(index))

    def fork(self) -> None:
        w = self.window
        if w.info is None:
            return
        index = self.slider.value() if self.times else None
        w.worker.submit("call", self.timeline.fork, index, w.panel.values(),
                        w.backend_box.currentText(), w.dtype_box.currentText())


def install(window) -> None:
    window.timeline = Timeline(window)
    window.timeline_bar = bar = TimelineBar(window, window.timeline)
    from . import add_dock
    add_dock(window, "Timeline", bar, "bottom")
