"""The window's solver thread: a QThread running `SolverLoop` (app/solver_loop.py: the loop, its
commands and the newest-frame mailbox, Qt-free and shared with the notebook's live view), with Qt
signals as the loop's outlets, so the GUI thread receives them in its own event loop."""
from __future__ import annotations

from PySide6.QtCore import QThread, Signal

from .solver_loop import SolverLoop


class SolverWorker(QThread, SolverLoop):
    created = Signal(object)      # SimInfo of a new setup
    frame_ready = Signal()        # a frame waits in the mailbox
    message = Signal(str, object)  # text, is_error
    running_changed = Signal(object)
    stats = Signal(dict)
    speedup = Signal(dict)
    param_refused = Signal(str, object)  # name, the value the simulation keeps

    def __init__(self, parent=None):
        QThread.__init__(self, parent)
        SolverLoop.__init__(self)

    def run(self) -> None:
        self.loop()

    def stop(self, timeout_ms: int = 5000) -> None:
        self.submit("quit")
        self.wait(timeout_ms)
