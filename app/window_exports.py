"""The main window's exports (a part of MainWindow, app/window.py): PNG of the canvas, the
recording of what the canvas shows (MP4/GIF, every k-th frame, no frame dropped), and the
simulation's data in the formats of `pdestudio run --export-data` (.npz, .vti for grids, .vtu,
.pvd)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from pdestudio.solvers import ParameterError


class ExportsMixin:
    # ---- exports --------------------------------------------------------------------------
    def _save_dialog(self, filt: str, action):
        path, _ = QFileDialog.getSaveFileName(self, "Export", "", filt)
        if path:
            action(path)

    def export_png(self, path: str):
        from .export import write_png
        write_png(path, self.canvas.render(alpha=False))
        self.show_message(f"wrote {path}")

    def data_formats(self) -> list[tuple[str, str]]:
        """(suffix, description) of the data files the current simulation can be written to:
        the command line's formats (.vti only for a uniform grid, as `run --export-data`)."""
        grid = self.info is not None and self.info.kind in ("grid1d", "grid2d")
        out = [(".npz", "checkpoint with the fields (solvers.load reads it)")]
        if grid:
            out.append((".vti", "VTK ImageData (ParaView)"))
        return out + [(".vtu", "VTK UnstructuredGrid (ParaView)"),
                      (".pvd", "ParaView time series of this state (a .pvd and its folder)")]

    def choose_data_export(self):
        formats = self.data_formats()
        filters = [f"{d} (*{s})" for s, d in formats]
        path, chosen = QFileDialog.getSaveFileName(self, "Export data", "", ";;".join(filters))
        if path:
            if not Path(path).suffix and chosen in filters:  # the chosen type's suffix
                path += formats[filters.index(chosen)][0]
            self.export_data(path)

    def export_data(self, path: str):
        allowed = [s for s, _ in self.data_formats()]
        if Path(path).suffix.lower() not in allowed:
            self.show_message(f"'{path}': allowed data formats: {', '.join(allowed)}", True)
            return
        self.worker.submit("export_data", path)

    def start_recording(self, path: str, every: int | None = None):
        from .export import VideoRecorder
        try:
            self.recorder = VideoRecorder(path, fps=25)
        except (ParameterError, OSError) as e:
            self.show_message(str(e), True)
            return False
        self.record_every = every or self.every_box.value()
        self._recorded = 0
        if self.spf.value() == 0:  # auto depends on timing: fix it so the frames are repeatable
            self.spf.setValue(max(1, int(self.profiler.values.get("steps_per_frame", 1) or 1)))
        self.worker.submit("lockstep", True)
        self.record_action.blockSignals(True)
        self.record_action.setChecked(True)
        self.record_action.setText("Stop recording")
        self.record_action.blockSignals(False)
        self.show_message(f"recording every {self.record_every}. frame ({self.spf.value()} steps "
                          f"per frame, no frame dropped) to {path}")
        return True

    def stop_recording(self):
        self.worker.submit("lockstep", False)
        rec, self.recorder = self.recorder, None
        self.record_action.blockSignals(True)
        self.record_action.setChecked(False)
        self.record_action.setText("Record…")
        self.record_action.blockSignals(False)
        if rec is not None:
            rec.close()
            self.show_message(f"wrote {rec.path} ({rec.frames} frames)")

    def _record_toggled(self, on: bool):
        if on:
            path, _ = QFileDialog.getSaveFileName(self, "Record", "", "Video (*.mp4 *.gif)")
            if not path or not self.start_recording(path):
                self.record_action.blockSignals(True)
                self.record_action.setChecked(False)
                self.record_action.blockSignals(False)
        else:
            self.stop_recording()

