"""The window's tools beyond the basic controls (issue 17/19): each module has an
`install(window)` that adds its actions to `window.menus` ("File", "View", "Tools", "Help"), its
docks and its toolbar entries, and reaches the Simulation only through worker commands
(`window.worker.submit("call", fn, *args)` runs `fn(worker, *args)` in the solver thread).
"""
from __future__ import annotations

INSTALLERS: list = ["gallery:install", "model_editor:install", "sweep_gallery:install",
                    "sessions:install", "timeline:install", "plots:install", "compare:install",
                    "brush:install"]  # "module:function", installed in this order


def install_all(window) -> None:
    import importlib
    for entry in INSTALLERS:
        mod, fn = entry.split(":")
        getattr(importlib.import_module(f"{__name__}.{mod}"), fn)(window)


def add_dock(window, title: str, widget, area: str = "right", shown: bool = True):
    """A closable dock of `widget` with a checkable entry in the View menu that shows/hides it."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget
    dock = QDockWidget(title, window)
    dock.setWidget(widget)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable)
    where = {"right": Qt.DockWidgetArea.RightDockWidgetArea,
             "left": Qt.DockWidgetArea.LeftDockWidgetArea,
             "bottom": Qt.DockWidgetArea.BottomDockWidgetArea}[area]
    window.addDockWidget(where, dock)
    dock.setVisible(shown)
    act = QAction(title, window, checkable=True, checked=shown)
    act.toggled.connect(dock.setVisible)
    dock.visibilityChanged.connect(act.setChecked)
    window.menus["View"].addAction(act)
    return dock, act
