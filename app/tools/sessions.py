"""Sessions (issue 17): File > Save session… / Open session…. A session file (.pdes) is a zip of
`checkpoint.npz` (the simulation: `sim.save`, so it continues bit for bit) and `session.json`
(format version, model, scenario, backend, dtype, the view: field, view mode, colour map, range
mode and limits, camera, steps per frame). Opening loads the checkpoint in the solver thread,
then restores the view. A file that is not a session, or a damaged one, is refused with the
reason and nothing changes."""
from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from pdestudio import solvers
from pdestudio.solvers import ParameterError

from ..views.colors import check_cmap, check_range_mode

VERSION = 1


def view_state(window) -> dict:
    cam = None
    vb = getattr(window.view, "vb", None)
    if vb is not None and hasattr(vb.camera, "get_state"):
        cam = {k: _plain(v) for k, v in vb.camera.get_state().items()}
    s = window.scale
    return {"field": window.field, "mode": window.mode_box.currentText(), "cmap": s.cmap,
            "range_mode": s.mode, "lo": s.lo, "hi": s.hi, "camera": cam,
            "steps_per_frame": window.spf.value()}


def _plain(v):
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def save_in_worker(worker, path: str, view: dict) -> None:
    """Runs in the solver thread: the checkpoint and the settings into one zip, atomically."""
    sim = worker.sim
    with tempfile.TemporaryDirectory() as tmp:
        ck = Path(tmp) / "checkpoint.npz"
        sim.save(ck)
        meta = {"format": "pdestudio-session", "version": VERSION, "model": sim.model,
                "scenario": sim.scenario_name, "backend": sim.backend, "dtype": sim.dtype,
                "t": sim.t, "steps": sim.steps, "view": view}
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            z.write(ck, "checkpoint.npz")
            z.writestr("session.json", json.dumps(meta, indent=1))
    with solvers.atomic_write(path) as f:
        f.write(buf.getvalue())
    worker.message.emit(f"saved session {path} (t = {sim.t:.6g}, step {sim.steps})", False)


def read_session(path) -> tuple[dict, bytes]:
    """(settings, checkpoint bytes) of a session file; ValueError naming the problem."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as z:
            meta = json.loads(z.read("session.json"))
            ck = z.read("checkpoint.npz")
    except FileNotFoundError:
        raise ValueError(f"session '{path}' does not exist") from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise ValueError(f"'{path}' is not a pdestudio session ({type(e).__name__}: {e}); "
                         "sessions are written by File > Save session…") from None
    if meta.get("format") != "pdestudio-session" or not isinstance(meta.get("view"), dict):
        raise ValueError(f"'{path}' is not a pdestudio session (no session settings)")
    if int(meta.get("version", 0)) > VERSION:
        raise ValueError(f"session '{path}' has format version {meta['version']}; this "
                         f"pdestudio reads up to {VERSION}")
    view = meta["view"]
    try:  # names a view cannot draw with are refused before anything changes
        for key, check in (("cmap", check_cmap), ("range_mode", check_range_mode)):
            if view.get(key) is not None:
                check(view[key])
    except ParameterError as e:
        raise ValueError(f"session '{path}': {e}") from None
    return meta, ck


def save_session(window, path) -> None:
    if window.info is None:
        window.show_message("no simulation to save", True)
        return
    window.worker.submit("call", save_in_worker, str(path), view_state(window))


def open_session(window, path) -> bool:
    try:
        meta, ck = read_session(path)
    except ValueError as e:
        window.show_message(str(e), True)
        return False
    tmp = Path(tempfile.mkdtemp(prefix="pdestudio-session-")) / "checkpoint.npz"
    tmp.write_bytes(ck)
    window._session_view = meta["view"]
    window.open_checkpoint(tmp, note=f", session {Path(path).name}")
    return True


def apply_view(window, info) -> None:
    """After the session's simulation arrived: its field, view mode, colours and camera."""
    v = getattr(window, "_session_view", None)
    if v is None:
        return
    window._session_view = None
    if v.get("mode") and window.mode_box.findText(v["mode"]) >= 0 and \
            window.mode_box.currentText() != v["mode"]:
        window.mode_box.setCurrentText(v["mode"])
        window._rebuild_view()
    if v.get("field") in info.fields:
        window.set_field(v["field"])
    window.set_scale(cmap=v.get("cmap"), mode=v.get("range_mode"))
    if v.get("lo") is not None and v.get("hi") is not None and v["hi"] > v["lo"]:
        window.set_scale(lo=v["lo"], hi=v["hi"])
    window.spf.setValue(int(v.get("steps_per_frame") or 0))
    vb = getattr(window.view, "vb", None)
    if v.get("camera") and vb is not None and hasattr(vb.camera, "set_state"):
        try:
            vb.camera.set_state(v["camera"])
        except (TypeError, ValueError, KeyError):
            pass  # a camera of another kind: keep the default


def install(window) -> None:
    window._session_view = None
    window.worker.created.connect(lambda info: apply_view(window, info))
    menu = window.menus["File"]
    act = QAction("Save session…", window)
    act.setShortcut("Ctrl+S")

    def choose_save():
        path, _ = QFileDialog.getSaveFileName(window, "Save session", "",
                                              "pdestudio session (*.pdes)")
        if path:
            save_session(window, path if path.endswith(".pdes") else path + ".pdes")
    act.triggered.connect(choose_save)
    menu.addAction(act)
    act = QAction("Open session…", window)
    act.setShortcut("Ctrl+O")

    def choose_open():
        path, _ = QFileDialog.getOpenFileName(window, "Open session", "",
                                              "pdestudio session (*.pdes);;All files (*)")
        if path:
            open_session(window, path)
    act.triggered.connect(choose_open)
    menu.addAction(act)
