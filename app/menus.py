"""The window's File and Help menus (issue 27): File > Export (image, video, data) and Quit;
Help > About (version, backend, GPU, Qt, VisPy, OpenGL), Keyboard shortcuts (read from the
window's own actions, so the list never goes stale) and the documentation."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMessageBox

import pdestudio
from pdestudio import solvers

ROOT = Path(__file__).resolve().parent.parent
DOCS = (("README (getting started, the command line)", ROOT / "README.md"),
        ("Model reference (equations, parameters, scenarios)", ROOT / "docs" / "MODELS.md"))
ONLINE = "https://pypi.org/project/pdestudio/"


def add_export_menu(window) -> None:
    """File > Export ▸ Image (PNG)…, Video (MP4/GIF)…, Data (.npz .vti .vtu .pvd)…"""
    menu = window.menus["File"].addMenu("Export")
    menu.addAction("Image (PNG)…", lambda: window._save_dialog(
        "PNG image (*.png)", window.export_png)).setShortcut(QKeySequence("Ctrl+E"))
    menu.addAction(window.record_action)
    menu.addAction("Data (.npz .vti .vtu .pvd)…", window.choose_data_export)


def add_quit(window) -> None:
    """File > Quit (Ctrl+Q), the File menu's last entry (the tools add theirs before it)."""
    menu = window.menus["File"]
    menu.addSeparator()
    act = QAction("Quit", window)
    act.setShortcut(QKeySequence(QKeySequence.StandardKey.Quit))
    act.setMenuRole(QAction.MenuRole.QuitRole)
    act.triggered.connect(window.close)
    menu.addAction(act)
    window.quit_action = act


def add_help_menu(window) -> None:
    menu = window.menus["Help"]
    menu.addAction("About pdestudio…", lambda: QMessageBox.about(window, "About pdestudio",
                                                                about_text(window)))
    menu.addAction("Keyboard shortcuts…", lambda: QMessageBox.information(
        window, "Keyboard shortcuts", shortcuts_text(window)))
    menu.addSeparator()
    for title, path in DOCS:
        act = menu.addAction(title, lambda p=path: open_doc(window, p))
        act.setEnabled(path.is_file())
        act.setToolTip(str(path))
    menu.addAction("pdestudio online", lambda: QDesktopServices.openUrl(QUrl(ONLINE)))


def open_doc(window, path: Path) -> None:
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        window.show_message(f"no program opens {path} here; read it in a text editor", True)


def about_text(window) -> str:
    import PySide6
    import vispy
    info = window.info
    running = (f"{info.model} / {info.scenario} on {info.backend} {info.dtype}"
               if info is not None else "no simulation open")
    ok, why = solvers.gpu_status()
    gpu = why if ok else f"none usable ({why})"
    gl = getattr(window, "gl_renderer", None) or "unknown until the first frame is drawn"
    return (f"<b>pdestudio {pdestudio.__version__}</b><br>Live PDE solvers on grids and "
            f"surfaces.<br><br><b>Running:</b> {running}<br><b>GPU (CuPy):</b> {gpu}<br>"
            f"<b>OpenGL:</b> {gl}<br><b>Qt:</b> PySide6 {PySide6.__version__}, "
            f"<b>VisPy</b> {vispy.__version__}<br><br>Models: "
            + ", ".join(solvers.available_models()))


def shortcuts_text(window) -> str:
    rows = []
    for act in window.findChildren(QAction):
        keys = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        name = act.text().replace("&", "").strip()
        if keys and name and (keys, name) not in rows:
            rows.append((keys, name))
    rows.sort(key=lambda r: r[1].lower())
    return "\n".join(f"{k:>12}   {n}" for k, n in rows)
