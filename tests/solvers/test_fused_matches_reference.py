"""Every GPU scheme computes the same discrete operator as the NumPy float64 reference
(docs/MODELS.md §6), checked once for the whole registry (py-pde's `check_implementation` is the
model): for each model, each entry and option set of its scheme table (core/scheme.py: `SchemeTable.cases()`), each real type
and GPU path (fused kernels, CuPy array code), the same random, non-trivial state is set on a GPU
simulation and on the float64 NumPy one, both take the same few steps, and every field and the
clock must agree to the type's round-off. The sizes come from the model (`check_params`), the
variants from its table: a new model or scheme is covered without a line here.

The check itself is tested: a deliberately wrong scheme (Gray–Scott with its feed rate off by one
part in 10⁶, a change no "it runs" test would see) must fail it, on the CPU (so CI proves the check
can fail) and as a fused CUDA scheme on the GPU."""
import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core.registry import model_class

STEPS = 3
# relative tolerance per real type; the adaptive RKM step comes from an error estimate that
# cancels digits, so τ (and with it t and φ) agrees to ~1e-9 in float64 and, on this rough random
# state, to ~1e-4 in float32, not to round-off
TOL = {"float64": 1e-12, "float32": 2e-5}
TOL_MODEL = {"mean-curvature": {"float64": 1e-9, "float32": 1e-3},
             "willmore": {"float64": 1e-9}}
SKIP = {("willmore", "float32"): "the paper got no usable Willmore result in single precision"}


def _cases():
    for model in solvers.available_models():
        table = model_class(model).schemes
        if table is None or not table.has_fused:
            continue
        for label, params in table.cases():
            for dtype in ("float64", "float32"):
                for kernel in ("fused", "array"):
                    marks = [pytest.mark.gpu]
                    why = SKIP.get((model, dtype)) or SKIP.get((model, table.name(params), dtype))
                    if why:
                        marks.append(pytest.mark.skip(reason=why))
                    yield pytest.param(model, params, dtype, kernel, marks=marks,
                                       id=f"{model}[{label}]-{dtype}-{kernel}")


def _make(model, params, **kw):
    params = {**model_class(model).check_params, **params}
    scenario = params.pop("scenario", None)
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


def check_against_reference(model, params, sim, tol):
    """`sim` (any backend, dtype, scheme) and the float64 NumPy reference take STEPS steps from the
    same random state: the clocks and every field must agree to `tol` (AssertionError if not)."""
    ref = _make(model, params, backend="numpy", dtype="float64")
    state = _random_state(ref, np.random.default_rng(1234))
    for name, values in state.items():
        ref.set_field(name, values)
        sim.set_field(name, values)
    ref.step(STEPS)
    sim.step(STEPS)
    assert sim.steps == ref.steps == STEPS
    assert sim.t == pytest.approx(ref.t, rel=tol), "the clocks differ"
    want = ref.fields()
    for name, values in sim.fields().items():
        assert np.isfinite(values).all(), name
        assert _rel(values, want[name]) < tol, (name, _rel(values, want[name]))


@pytest.mark.parametrize("model,params,dtype,kernel", list(_cases()))
def test_gpu_equals_float64_reference(model, params, dtype, kernel):
    gpu = _make(model, params, backend="cupy", dtype=dtype, kernel=kernel)
    if kernel == "fused":  # the table's fused class is what runs
        entry = gpu.schemes.entry(gpu.params)
        fused = entry.fused
        if not isinstance(fused, type):  # a factory (surface_rd/imex.by_integrator): the
            fused = fused.imex if gpu.params.get("integrator") == "imex" else fused.explicit
        assert isinstance(gpu.scheme, fused), type(gpu.scheme)
    tol = TOL_MODEL.get(model, {}).get(dtype, TOL[dtype])
    check_against_reference(model, params, gpu, tol)


WRONG = 1 + 1e-6  # the planted error: Gray–Scott's feed rate F off by one part in 10⁶


def _wrong_reference():
    from pdestudio.solvers.surface_rd.reference import GrayScottEuler

    class WrongGrayScott(GrayScottEuler):
        def step(self, t, dt_limit):
            real = self.sim.params
            self.sim.params = {**real, "F": real["F"] * WRONG}
            try:
                return super().step(t, dt_limit)
            finally:
                self.sim.params = real
    return WrongGrayScott


def test_the_check_catches_a_planted_wrong_scheme_on_the_cpu():
    """The same check with a float64 NumPy scheme that is wrong by 1e-6 in one coefficient: it
    must fail, while the right scheme passes (the check is not vacuous)."""
    right = _make("gray-scott", {}, backend="numpy", dtype="float64")
    check_against_reference("gray-scott", {}, right, TOL["float64"])
    sim = _make("gray-scott", {}, backend="numpy", dtype="float64")
    sim.scheme = _wrong_reference()(sim)
    with pytest.raises(AssertionError):
        check_against_reference("gray-scott", {}, sim, TOL["float64"])


@pytest.mark.gpu
def test_the_check_catches_a_planted_wrong_fused_scheme(gpu_backend):
    from pdestudio.solvers.surface_rd.fused import FusedGrayScott

    class WrongFused(FusedGrayScott):
        def model_args(self):
            Du, Dv, F, k = super().model_args()
            return Du, Dv, self.real(F * WRONG), k

    sim = _make("gray-scott", {}, backend="cupy", dtype="float64", kernel="fused")
    check_against_reference("gray-scott", {}, sim, TOL["float64"])  # the right one passes
    sim = _make("gray-scott", {}, backend="cupy", dtype="float64", kernel="fused")
    sim.scheme = WrongFused(sim)
    with pytest.raises(AssertionError):
        check_against_reference("gray-scott", {}, sim, TOL["float64"])
