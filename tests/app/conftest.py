"""Shared fixtures of the app tests: the stand-in models of tests/app/fakes.py, registered for
one test at a time; the records VisPy logs during a test."""
import logging

import pytest


@pytest.fixture
def vispy_records():
    """The log records of VisPy's logger during the test (a handler of its own: VisPy's logger
    does not propagate to pytest's caplog)."""
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    log = logging.getLogger("vispy")
    log.addHandler(handler)
    yield records
    log.removeHandler(handler)


@pytest.fixture
def fake_models(monkeypatch):
    from pdestudio import solvers
    from pdestudio.solvers.core import registry

    from .fakes import FAKES
    solvers.available_models()  # discover the real ones first
    for cls in FAKES:
        monkeypatch.setitem(registry._MODELS, cls.model, cls)
    return [c.model for c in FAKES]


@pytest.fixture(autouse=True)
def raster_at_once(monkeypatch):
    """Meshes' cell rasters made when first asked for rather than on the worker thread, so a
    picture does not depend on when the thread finished (tests/app/test_views_mesh_lod.py
    tests the thread itself)."""
    try:
        from pdestudio.app.views import meshvisual
    except Exception:  # noqa: BLE001  (no VisPy: no views to draw)
        return
    monkeypatch.setattr(meshvisual, "RASTER_WAIT", True)
