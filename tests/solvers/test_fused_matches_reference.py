"""Every GPU scheme computes the same discrete operator as the NumPy float64 reference (docs/MODELS.md §6),
checked once for the whole registry (py-pde's `check_implementation` is the model): for each
model × real type × GPU path (fused kernels, CuPy array code), the same random, non-trivial state
is set on a GPU simulation and on the float64 NumPy one, both take the same few steps, and every
field and the clock must agree to the type's round-off. New models are covered without a line
here; a model whose defaults are too small or too large for this gets an entry in CASES."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core.registry import model_class

pytestmark = pytest.mark.gpu

STEPS = 3
# non-trivial sizes: not multiples of the kernels' block and tile sizes, small enough to be quick
CASES = {
    "heat-1d": {"nx": 1000}, "ks-1d": {"nx": 1000}, "euler-1d": {"nx": 1000},
    "mean-curvature": {"nx": 37, "ny": 29}, "willmore": {"nx": 37, "ny": 29},
    "mean-curvature/eoc-exact": {"nx": 37, "ny": 29},
    "willmore/eoc-exact": {"nx": 37, "ny": 29},
    "chemotaxis": {"vertices": 1500}, "gray-scott": {"vertices": 1500},
    "shallow-water": {"nx": 37, "ny": 29},
    "shallow-water/bump-dambreak": {"cells": 3000},
    "shallow-water/order3": {"nx": 37, "ny": 29, "order": 3},
    "two-layer": {"cells": 3000},
}
# relative tolerance per real type; the adaptive RKM step comes from an error estimate that
# cancels digits, so τ (and with it t and φ) agrees to ~1e-9 in float64 and, on this rough random
# state, to ~1e-4 in float32, not to round-off
TOL = {"float64": 1e-12, "float32": 2e-5}
TOL_MODEL = {"mean-curvature": {"float64": 1e-9, "float32": 1e-3},
             "willmore": {"float64": 1e-9}}
SKIP = {("willmore", "float32"): "the paper got no usable Willmore result in single precision",
        ("willmore/eoc-exact", "float32"): "the paper got no usable Willmore result in single "
                                           "precision"}


def _cases():
    for key in CASES:
        model, _, variant = key.partition("/")
        if model not in solvers.available_models():
            continue
        cls = model_class(model)
        if cls.fused_scheme is None:
            continue
        for dtype in ("float64", "float32"):
            for kernel in ("fused", "array"):
                marks = [pytest.mark.skip(reason=SKIP[key, dtype])] if (key, dtype) in SKIP else []
                yield pytest.param(key, dtype, kernel, marks=marks, id=f"{key}-{dtype}-{kernel}")


def _make(key, **kw):
    model, _, variant = key.partition("/")
    params = dict(CASES[key])
    scenario = variant if variant in [s["name"] for s in solvers.describe(model)["scenarios"]] \
        else None
    return solvers.create(model, scenario=scenario, **params, **kw)


def _random_state(sim, rng):
    """The scenario's state plus 2 % noise of each settable field's scale (positive fields stay
    positive, non-negative ones non-negative): random and non-trivial, yet physical."""
    out = {}
    fields = sim.fields()
    for name in sim.settable_fields():
        base = fields[name]
        scale = float(np.abs(base).max()) or 1.0
        noise = 0.02 * scale * rng.standard_normal(base.shape)
        new = base + noise
        if np.all(base > 0):
            new = np.maximum(new, 0.5 * base)
        elif np.all(base >= 0):      # e.g. a concentration that is zero in places
            new = base + np.abs(noise)
        out[name] = new
    return out


def _rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.mark.parametrize("key,dtype,kernel", list(_cases()))
def test_gpu_equals_float64_reference(key, dtype, kernel):
    ref = _make(key, backend="numpy", dtype="float64")
    gpu = _make(key, backend="cupy", dtype=dtype, kernel=kernel)
    state = _random_state(ref, np.random.default_rng(1234))
    for name, values in state.items():
        ref.set_field(name, values)
        gpu.set_field(name, values)
    ref.step(STEPS)
    gpu.step(STEPS)
    model = key.partition("/")[0]
    tol = TOL_MODEL.get(model, {}).get(dtype, TOL[dtype])
    assert gpu.steps == ref.steps == STEPS
    assert gpu.t == pytest.approx(ref.t, rel=tol), "the clocks differ"
    want = ref.fields()
    for name, values in gpu.fields().items():
        assert np.isfinite(values).all(), name
        assert _rel(values, want[name]) < tol, (name, _rel(values, want[name]))
