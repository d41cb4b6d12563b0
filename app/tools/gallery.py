"""File > Gallery… (issue 17): every scenario of every model, and presets beyond the papers, as
cards with a generated thumbnail, a one-line description, the paper it comes from and what to
look for (app/gallery.py); a filter box; one click opens the preset in the window."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QIcon, QPixmap
from PySide6.QtWidgets import (QDialog, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                               QVBoxLayout)

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from ..gallery import PRESETS, by_id


class Gallery(QDialog):
    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.setWindowTitle("pdestudio — gallery")
        lay = QVBoxLayout(self)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter: a model, a word (e.g. gray-scott, dam, chaos)")
        self.filter.textChanged.connect(self._filter)
        lay.addWidget(self.filter)
        self.list = QListWidget()
        self.list.setViewMode(QListWidget.ViewMode.IconMode)
        self.list.setIconSize(QSize(128, 128))
        self.list.setGridSize(QSize(176, 196))
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setMovement(QListWidget.Movement.Static)
        self.list.setWordWrap(True)
        self.list.setMouseTracking(True)
        for p in PRESETS:
            item = QListWidgetItem(f"{p.title}\n{p.model}")
            if p.thumbnail.is_file():
                item.setIcon(QIcon(QPixmap(str(p.thumbnail))))
            item.setToolTip(f"<b>{p.title}</b> ({p.model} / {p.scenario})<br>{p.summary}"
                            f"<br><br><b>Look for:</b> {p.look_for}<br><br><i>{p.citation}</i>")
            item.setData(Qt.ItemDataRole.UserRole, p.id)
            self.list.addItem(item)
        self.list.itemClicked.connect(lambda it: self.open(it.data(Qt.ItemDataRole.UserRole)))
        self.list.currentItemChanged.connect(self._details)
        self.list.itemEntered.connect(self._details)
        lay.addWidget(self.list, 1)
        self.details = QLabel("Click a card to open it. Hover for the paper and what to look for.")
        self.details.setWordWrap(True)
        self.details.setMinimumHeight(70)
        lay.addWidget(self.details)
        self.resize(960, 720)

    def _filter(self, text: str) -> None:
        words = text.lower().split()
        for i in range(self.list.count()):
            p = by_id(self.list.item(i).data(Qt.ItemDataRole.UserRole))
            hay = " ".join((p.id, p.title, p.model, p.scenario, p.summary, p.look_for)).lower()
            self.list.item(i).setHidden(not all(w in hay for w in words))

    def _details(self, item, *_):
        if item is None:
            return
        p = by_id(item.data(Qt.ItemDataRole.UserRole))
        self.details.setText(f"<b>{p.title}</b> — {p.summary} <b>Look for:</b> {p.look_for}"
                             f"<br><i>{p.citation}</i>")

    def open(self, pid: str) -> None:
        p = by_id(pid)
        w = self.window
        if p.compare is not None:
            def then(info, w=w, p=p):
                if info.model == p.model:
                    w.worker.created.disconnect(then)
                    from .compare import open_compare
                    open_compare(w, dict(p.compare))
            w.worker.created.connect(then)
        if p.file is not None:  # a model file: defined, opened, and its text in the model editor
            editor = getattr(w, "model_editor", None)
            if editor is not None and editor.load(p.file):
                if editor.apply() is None:
                    return
            else:
                try:
                    solvers.define(p.file)
                except (ParameterError, ValueError) as e:
                    w.show_message(f"gallery: {p.file.name}: {e}", True)
                    return
                w.open_model(p.model, p.scenario, dict(p.params))
        else:
            w.open_model(p.model, p.scenario, dict(p.params))
        for field, source in p.init:
            w.apply_initial(field, source)
        w.show_hint("gallery", f"<b>{p.title}</b> ({p.model} / {p.scenario})<br>"
                    f"<b>Look for:</b> {p.look_for}", p.model)
        w.show_message(f"gallery: {p.title} ({p.model} / {p.scenario}). Look for: {p.look_for}")


def install(window) -> None:
    window.gallery = None

    def show():
        if window.gallery is None:
            window.gallery = Gallery(window)
        window.gallery.show()
        window.gallery.raise_()
    act = QAction("Gallery…", window)
    act.setShortcut("Ctrl+G")
    act.setToolTip("Every scenario and preset as a card: one click opens it")
    act.triggered.connect(show)
    window.menus["File"].insertAction(window.menus["File"].actions()[0]
                                      if window.menus["File"].actions() else None, act)
    window.show_gallery = show
