"""Models defined by a test are removed from the registry after it (no test sees another's)."""
import pytest

from pdestudio.solvers.core import registry


@pytest.fixture(autouse=True)
def _forget_defined_models():
    registry.discover()
    before = set(registry._MODELS)
    yield
    for m in set(registry._MODELS) - before:
        registry.unregister(m)


GRAY_SCOTT = {
    "model": {"name": "gs-file"},
    "equations": {"u": "Du*lap(u) - u*v^2 + F*(1 - u)", "v": "Dv*lap(v) + u*v^2 - (F + k)*v"},
    "parameters": {"Du": 0.02, "Dv": 0.01, "F": 0.037, "k": 0.06},
    "initial": {"u": "1", "v": "0.25*heaviside(1 - r)"},
    "domain": {"kind": "mesh", "surface": "rectangle", "vertices": 800, "boundary": "natural"},
}

CHEMOTAXIS = {
    "model": {"name": "cx-file"},
    "equations": {
        "cells": "D*lap(cells) - div(alpha*cells*grad(chemo)) + s*r*cells*(N - cells)",
        "chemo": "lap(chemo) + s*(cells/(1 + cells) - chemo)"},
    "parameters": {"D": 0.25, "r": 1.522, "alpha": 13.0, "s": 1.0, "N": 1.0},
    "initial": {"cells": "N*(1 + 0.01*noise)", "chemo": "N/(1 + N)"},
    "domain": {"kind": "mesh", "surface": "rectangle", "vertices": 800, "boundary": "natural"},
}
