"""File > Open sweep folder… shows a `pdestudio sweep` folder as a gallery of its members'
thumbnails, labelled by their parameters (diverged members marked, their reason in the tooltip);
a click opens that member at its final state (its checkpoint) in the window, ready to continue.
File > Open checkpoint… continues from any checkpoint file (`--save`, a sweep member, the Data
export's .npz)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QIcon, QPixmap
from PySide6.QtWidgets import (QDialog, QFileDialog, QLabel, QListWidget, QListWidgetItem,
                               QVBoxLayout)

from ..sweep.results import read_sweep


class SweepGallery(QDialog):
    def __init__(self, window, folder, spec, rows):
        super().__init__(window)
        self.window, self.folder, self.rows = window, Path(folder), rows
        self.setWindowTitle(f"Sweep: {spec['model']} — {self.folder.name}")
        lay = QVBoxLayout(self)
        diverged = sum(bool(r.get("diverged")) for r in rows)
        lay.addWidget(QLabel(f"{spec['model']} / {spec.get('scenario') or ''}: {len(rows)} "
                             f"members, {diverged} diverged. Click a member to open it at its "
                             "final state and continue."))
        self.list = QListWidget()
        self.list.setViewMode(QListWidget.ViewMode.IconMode)
        self.list.setIconSize(QSize(128, 128))
        self.list.setGridSize(QSize(150, 178))
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setWordWrap(True)
        self.list.setMovement(QListWidget.Movement.Static)
        for r in rows:
            text = f"#{r['member']} {r['_label']}" + ("\nDIVERGED" if r.get("diverged") else "")
            item = QListWidgetItem(text)
            thumb = self.folder / (r.get("thumbnail") or "")
            if r.get("thumbnail") and thumb.is_file():
                item.setIcon(QIcon(QPixmap(str(thumb))))
            tip = [f"t = {r.get('t')}, {r.get('steps')} steps, {r.get('wall_s', 0):.3g} s"]
            tip += [f"{k[2:]} = {v:.6g}" for k, v in r.items()
                    if k.startswith("q:") and isinstance(v, float)]
            if r.get("reason"):
                tip.append(r["reason"])
            item.setToolTip("\n".join(tip))
            item.setData(Qt.ItemDataRole.UserRole, r["member"])
            self.list.addItem(item)
        self.list.itemClicked.connect(self._open)
        lay.addWidget(self.list, 1)
        self.resize(720, 560)

    def row(self, member: int) -> dict:
        return next(r for r in self.rows if r["member"] == member)

    def open_member(self, member: int) -> None:
        r = self.row(member)
        if not r.get("checkpoint"):
            self.window.show_message(f"sweep member {member} has no final state "
                                     f"({r.get('reason') or 'it did not start'})", True)
            return
        self.window.open_checkpoint(self.folder / r["checkpoint"],
                                    note=f", sweep member {member} ({r['_label']}) at "
                                         f"t = {r.get('t'):.6g}")

    def _open(self, item):
        self.open_member(int(item.data(Qt.ItemDataRole.UserRole)))


def open_sweep(window, folder) -> SweepGallery | None:
    try:
        spec, rows = read_sweep(folder)
    except ValueError as e:
        window.show_message(str(e), True)
        return None
    window.sweep_gallery = SweepGallery(window, folder, spec, rows)
    window.sweep_gallery.show()
    window.show_message(f"sweep {folder}: {len(rows)} members")
    return window.sweep_gallery


def install(window) -> None:
    window.sweep_gallery = None
    menu = window.menus["File"]
    act = QAction("Open checkpoint…", window)
    act.setToolTip("Continue from a checkpoint (.npz): --save, a sweep member, a Data export")

    def choose_checkpoint():
        path, _ = QFileDialog.getOpenFileName(window, "Open checkpoint", "",
                                              "Checkpoints (*.npz);;All files (*)")
        if path:
            window.open_checkpoint(path)
    act.triggered.connect(choose_checkpoint)
    menu.addAction(act)
    act = QAction("Open sweep folder…", window)

    def choose_folder():
        path = QFileDialog.getExistingDirectory(window, "Open sweep folder")
        if path:
            open_sweep(window, path)
    act.triggered.connect(choose_folder)
    menu.addAction(act)
