"""File > New model… / Open model… (issue 26, docs/EQUATIONS.md): a dock that edits a model file
as TOML text (species' equations, parameters, initial conditions, domain and boundaries), shows
the system typeset (`solvers.model_latex`, drawn with matplotlib's mathtext) and every problem
of the text in place (`solvers.check_model`: the line is marked, the column underlined, the
message listed beside the text; a click on it moves the cursor there). Apply defines the model
(`solvers.define`) and opens it in the window, whose panel, sliders, brush, timeline, compare and
plots follow from its schema as for a built-in model; text with a problem is never applied, so
the running simulation stays. Save writes the TOML file."""
from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import (QAction, QColor, QFont, QFontDatabase, QImage, QPainter, QPalette,
                           QPixmap,
                           QTextCharFormat, QTextCursor, QTextFormat)
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QPlainTextEdit, QPushButton, QScrollArea, QSplitter, QTextEdit,
                               QVBoxLayout, QWidget)

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from ..gallery import MODELS

TEMPLATE = '''# A new model: d(species)/dt = right-hand side (docs/EQUATIONS.md)
[model]
name = "my-model"
description = "Brusselator: Turing spots"

[equations]
u = "Du*lap(u) + a - (b + 1)*u + u^2*v"
v = "Dv*lap(v) + b*u - u^2*v"

[parameters]
a = { value = 3.0, min = 0.1, max = 6.0 }
b = { value = 5.0, min = 0.0, max = 15.0 }
Du = 1.0
Dv = 10.0

[initial]
u = "a + 0.05*noise"
v = "b/a + 0.05*noise"

[domain]
kind = "rectangle"
nx = 64
Lx = 32.0
boundary = "periodic"
'''
ERROR_LINE = QColor(120, 30, 30)
TOML_POS = re.compile(r"at line (\d+), column (\d+)")


def render_latex(lines: list[str], color: str = "black", dpi: int = 110) -> QPixmap:
    """The mathtext formulas `lines` (without $), one under the other, as a pixmap."""
    from matplotlib import mathtext
    images = []
    for s in lines:
        buf = io.BytesIO()
        mathtext.math_to_image(f"${s}$", buf, dpi=dpi, format="png", color=color)
        img = QImage()
        img.loadFromData(buf.getvalue(), "PNG")
        images.append(img)
    gap = 6
    w = max((i.width() for i in images), default=1)
    h = sum(i.height() for i in images) + gap * max(len(images) - 1, 0)
    pix = QPixmap(max(w, 1), max(h, 1))
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    y = 0
    for img in images:
        p.drawImage(0, y, img)
        y += img.height() + gap
    p.end()
    return pix


def system_lines(tex: dict, species, algebraic=()) -> list[str]:
    """∂_t s = … for the species, w = … for the algebraic ones."""
    out = [rf"\partial_t {_sym(s)} = {tex[s]}" for s in species if s in tex]
    out += [rf"{_sym(a)} = {tex[a]}" for a in algebraic if a in tex]
    return out


def _sym(name: str) -> str:
    return name if len(name) == 1 else rf"\mathrm{{{name}}}"


def locate(text: str, section: str, key: str, column: int | None) -> tuple[int, int] | None:
    """(line, column) 0-based in `text` of a problem reported at `section`/`key`/`column` (the
    column counts inside the key's expression string); None when the text has no such key."""
    lines = text.splitlines()
    cur, head = None, None
    for i, line in enumerate(lines):
        m = re.match(r"\s*\[\s*([A-Za-z_]+)\s*\]", line)
        if m:
            cur = m.group(1)
            if cur == section:
                head = i
            continue
        if cur == section and key and re.match(rf"\s*{re.escape(key)}\s*=", line):
            q = min((p for p in (line.find('"', line.index("=")), line.find("'", line.index("=")))
                     if p >= 0), default=-1)
            if column and q >= 0:
                return i, q + column
            return i, len(line) - len(line.lstrip())
    return (head, 0) if head is not None else None


class ModelEditor(QWidget):
    def __init__(self, window):
        super().__init__()
        self.window, self.path, self.problems = window, None, []
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.buttons = {}
        for label, fn, tip in (("New", self.new, "A new model from a template"),
                               ("Open…", self.open_dialog, "Open a model file (.toml)"),
                               ("Save", self.save, "Write the text to its file"),
                               ("Save as…", self.save_as, "Write the text to another file"),
                               ("Apply", self.apply, "Define the model and run it in the window "
                                                     "(Ctrl+Return)")):
            b = QPushButton(label)
            b.setToolTip(tip)
            b.clicked.connect(fn)
            row.addWidget(b)
            self.buttons[label] = b
        lay.addLayout(row)
        self.file_label = QLabel("(unsaved)")
        lay.addWidget(self.file_label)
        split = QSplitter(Qt.Orientation.Vertical)
        self.text = QPlainTextEdit()
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.textChanged.connect(lambda: self._timer.start())
        split.addWidget(self.text)
        self.errors = QListWidget()
        self.errors.setWordWrap(True)
        self.errors.itemClicked.connect(self._goto)
        split.addWidget(self.errors)
        self.preview = QLabel()
        self.preview.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        scroll = QScrollArea()
        scroll.setWidget(self.preview)
        scroll.setWidgetResizable(True)
        split.addWidget(scroll)
        self.text.setMinimumHeight(200)
        self.errors.setMinimumHeight(50)
        scroll.setMinimumHeight(70)
        split.setSizes([440, 70, 110])
        lay.addWidget(split, 1)
        self._timer = QTimer(self, singleShot=True, interval=400)
        self._timer.timeout.connect(self.check)
        act = QAction(self, shortcut="Ctrl+Return")
        act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        act.triggered.connect(self.apply)
        self.addAction(act)
        self.setMinimumWidth(420)

    # ---- text and files ----------------------------------------------------------------
    def set_text(self, text: str, path: Path | None = None) -> None:
        self.path = Path(path) if path else None
        self.file_label.setText(str(self.path) if self.path else "(unsaved)")
        self.text.setPlainText(text)
        self.check()

    def new(self) -> None:
        self.set_text(TEMPLATE)

    def open_dialog(self) -> None:
        start = str(self.path.parent if self.path else MODELS)
        path, _ = QFileDialog.getOpenFileName(self, "Open model", start,
                                              "Model files (*.toml);;All files (*)")
        if path:
            self.load(path)

    def load(self, path) -> bool:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            self.window.show_message(f"cannot read model file '{path}': {e}", True)
            return False
        self.set_text(text, path)
        return True

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.write(self.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, "Save model", str(self.path or MODELS),
                                              "Model files (*.toml)")
        return bool(path) and self.write(path)

    def write(self, path) -> bool:
        path = Path(path)
        if path.suffix.lower() != ".toml":
            path = path.with_suffix(".toml")
        try:
            path.write_text(self.text.toPlainText(), encoding="utf-8")
        except OSError as e:
            self.window.show_message(f"cannot write '{path}': {e.strerror or e}", True)
            return False
        self.path = path
        self.file_label.setText(str(path))
        self.window.show_message(f"wrote {path}")
        return True

    # ---- checking, preview and apply ---------------------------------------------------
    def source(self):
        """(dict, problems): the text as the dict `define` takes (a relative `mesh` resolved
        against the file's folder) and its problems [{message, line, column}] (0-based)."""
        text = self.text.toPlainText()
        try:
            d = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            m = TOML_POS.search(str(e))
            line, col = (int(m.group(1)) - 1, int(m.group(2)) - 1) if m else (None, None)
            return None, [{"message": f"not valid TOML: {e}", "line": line, "column": col}]
        dom = d.get("domain")
        if self.path is not None and isinstance(dom, dict) and isinstance(dom.get("mesh"), str) \
                and not Path(dom["mesh"]).is_absolute():
            dom["mesh"] = str((self.path.parent / dom["mesh"]).resolve())
        problems = []
        for p in solvers.check_model(d):
            pos = locate(text, p.get("section") or "", p.get("key") or "", p.get("column"))
            problems.append({"message": p["message"], "line": pos[0] if pos else None,
                             "column": pos[1] if pos else None})
        return d, problems

    def check(self) -> list[dict]:
        """Check the text now: mark the problems and redraw the preview; returns them."""
        self._timer.stop()
        d, self.problems = self.source()
        self.errors.clear()
        for p in self.problems:
            where = f"line {p['line'] + 1}, column {p['column'] + 1}: " \
                if p["line"] is not None else ""
            item = QListWidgetItem(where + p["message"])
            item.setForeground(QColor("#ff8080"))
            item.setData(Qt.ItemDataRole.UserRole, (p["line"], p["column"]))
            self.errors.addItem(item)
        if not self.problems:
            self.errors.addItem(QListWidgetItem("no problems: Apply (Ctrl+Return) runs it"))
        self._mark()
        self._preview(d if not self.problems else None)
        return self.problems

    def _mark(self) -> None:
        doc, sels = self.text.document(), []
        for p in self.problems:
            if p["line"] is None:
                continue
            block = doc.findBlockByNumber(p["line"])
            if not block.isValid():
                continue
            line = QTextEdit.ExtraSelection()
            line.format.setBackground(ERROR_LINE)
            line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            line.cursor = QTextCursor(block)
            sels.append(line)
            col = QTextEdit.ExtraSelection()
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QColor("#ff5050"))
            fmt.setBackground(QColor(200, 60, 60))
            col.format = fmt
            c = QTextCursor(block)
            c.movePosition(QTextCursor.MoveOperation.Right, n=min(p["column"] or 0,
                                                                   max(block.length() - 2, 0)))
            c.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor)
            col.cursor = c
            sels.append(col)
        self.text.setExtraSelections(sels)

    def _goto(self, item) -> None:
        line, col = item.data(Qt.ItemDataRole.UserRole) or (None, None)
        if line is None:
            return
        c = QTextCursor(self.text.document().findBlockByNumber(line))
        c.movePosition(QTextCursor.MoveOperation.Right, n=col or 0)
        self.text.setTextCursor(c)
        self.text.setFocus()

    def _preview(self, d) -> None:
        if d is None:
            return  # the last good preview stays while the text has a problem
        try:
            tex = solvers.model_latex(d)
            pix = render_latex(system_lines(tex, list(d.get("equations", {})),
                                            list(d.get("algebraic", {}))),
                               color=self.palette().color(QPalette.ColorRole.Text).name())
        except (ParameterError, ValueError, ImportError) as e:
            self.preview.setText(f"(no preview: {e})")
            return
        self.preview.setPixmap(pix)
        self.preview_lines = len(tex)

    def apply(self) -> str | None:
        """Define the text's model and open it in the window; None (and the problems shown,
        the running simulation kept) if the text has a problem."""
        if self.check():
            first = self.problems[0]
            self.window.show_message(f"model not applied: {first['message']}", True)
            if first["line"] is not None:
                self._goto(self.errors.item(0))
            return None
        d, _ = self.source()
        try:
            mid = solvers.define(d)
        except (ParameterError, ValueError) as e:
            self.window.show_message(f"model not applied: {e}", True)
            return None
        self.window.open_model(mid)
        self.window.show_message(f"model '{mid}' defined and opened")
        return mid


def install(window) -> None:
    from . import add_dock
    editor = ModelEditor(window)
    window.model_editor = editor
    window.model_editor_dock, _ = add_dock(window, "Model editor", editor, "right", shown=False)

    def show(load=None):
        window.model_editor_dock.show()
        window.model_editor_dock.raise_()
        if load == "new":
            editor.new()
        elif load == "open":
            editor.open_dialog()
    new = QAction("New model…", window)
    new.setToolTip("Write your own reaction–diffusion system (a model file)")
    new.triggered.connect(lambda: show("new"))
    opn = QAction("Open model…", window)
    opn.setToolTip("Open a model file (.toml) in the model editor")
    opn.triggered.connect(lambda: show("open"))
    menu = window.menus["File"]
    first = menu.actions()[1] if len(menu.actions()) > 1 else None  # after Gallery…
    menu.insertAction(first, new)
    menu.insertAction(first, opn)
    window.show_model_editor = show
