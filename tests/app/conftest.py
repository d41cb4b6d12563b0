"""Shared fixtures of the app tests: the stand-in models of tests/app/fakes.py, registered for
one test at a time."""
import pytest


@pytest.fixture
def fake_models(monkeypatch):
    from pdestudio import solvers
    from pdestudio.solvers.core import registry

    from .fakes import FAKES
    solvers.available_models()  # discover the real ones first
    for cls in FAKES:
        monkeypatch.setitem(registry._MODELS, cls.model, cls)
    return [c.model for c in FAKES]
