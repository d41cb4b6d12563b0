"""Sizes a machine cannot hold are refused before anything is allocated (core/memory.py): the
estimate bounds what a run really takes (measured here with tracemalloc) without being absurdly
above it, and an oversized request gets a ParameterError with the estimate in under a second."""
import subprocess
import sys
import time
import tracemalloc

import pytest

from pdestudio import solvers
from pdestudio.solvers.core import memory
from pdestudio.solvers.core.registry import model_class

# Moderate sizes, large enough that the per-cell cost dominates.
SIZES = [("heat-1d", None, {"nx": 2**19}), ("ks-1d", None, {"nx": 2**18}),
         ("euler-1d", None, {"nx": 2**17}), ("mean-curvature", None, {"nx": 256}),
         ("willmore", None, {"nx": 128}), ("chemotaxis", None, {"vertices": 20000}),
         ("gray-scott", None, {"vertices": 20000}), ("shallow-water", None, {"nx": 256}),
         ("shallow-water", "bump-dambreak", {"geometry": "triangles", "cells": 8000}),
         ("two-layer", None, {"cells": 8000})]


@pytest.mark.parametrize("model,scenario,params", SIZES)
def test_estimate_bounds_the_measured_peak(model, scenario, params, monkeypatch):
    # what a simulation allocates when it builds everything itself (not a mesh set-up kept
    # from an earlier test in this process: solvers/surface_rd/meshes.py)
    monkeypatch.setenv("PDESTUDIO_MESH_CACHE", "0")
    cls = model_class(model)
    p = solvers.validate(model, scenario, **params)
    per_cell_part = cls.memory_estimate(p)[0] - memory.BASE
    tracemalloc.start()
    try:
        sim = solvers.create(model, backend="numpy", scenario=scenario, **params)
        sim.step(2)
        sim.fields()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak <= per_cell_part, f"{model}: measured {peak} > estimate {per_cell_part}"
    assert per_cell_part <= 3 * peak, f"{model}: estimate {per_cell_part} > 3 × measured {peak}"


@pytest.mark.parametrize("model,params", [
    ("shallow-water", {"nx": 32768}), ("chemotaxis", {"vertices": 2**26}),
    ("heat-1d", {"nx": 2**28}), ("willmore", {"nx": 16384}), ("two-layer", {"cells": 2**24}),
])
def test_oversized_requests_are_refused_fast(model, params):
    need = model_class(model).memory_estimate(solvers.validate(model, **params))[0]
    have = memory.available()
    if have is None or need <= have:
        pytest.skip(f"{model} {params} fits here ({need} of {have} bytes)")
    t0 = time.perf_counter()
    with pytest.raises(solvers.ParameterError, match=r"needs about [\d.]+ [KMGT]B of host memory "
                       r"\(estimate\); [\d.]+ [KMGT]B is available; allowed: .* on this machine"):
        solvers.create(model, backend="numpy", **params)
    assert time.perf_counter() - t0 < 1.0


def test_the_refusal_names_a_size_that_fits(monkeypatch):
    monkeypatch.setattr(memory, "available", lambda: 1 << 30)  # a 1 GB machine
    with pytest.raises(solvers.ParameterError, match=r"heat-1d: a run with nx = 268435456 needs "
                       r"about 17.4 GB .* 1.07 GB is available; allowed: nx <= 12,582,912"):
        solvers.create("heat-1d", backend="numpy", nx=2**28)
    with pytest.raises(solvers.ParameterError, match=r"nx = 8192, ny = 8192 needs .* allowed: "
                       r"nx × ny <= 1,398,101 \(e.g. nx = ny = 1182\)"):
        solvers.create("shallow-water", backend="numpy", nx=8192)
    solvers.create("heat-1d", backend="numpy", nx=1024)  # what fits still runs


def test_an_address_space_limit_counts_as_less_memory():
    """Under RLIMIT_AS (a container, ulimit -v) a size the limit cannot hold is a ParameterError,
    not a MemoryError half-way through the set-up."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
            "from pdestudio import solvers\n"
            "try:\n    solvers.create('shallow-water', backend='numpy', nx=4096)\n"
            "except solvers.ParameterError as e:\n    print('refused:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "refused: shallow-water: a run with nx = 4096" in r.stdout, \
        r.stdout + r.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("model,scenario,params", SIZES)
def test_device_estimate_bounds_the_device_memory_used(model, scenario, params, monkeypatch):
    import gc

    import cupy

    from pdestudio.solvers.surface_rd import meshes
    monkeypatch.setenv("PDESTUDIO_MESH_CACHE", "0")  # (as above; and none kept from before)
    meshes.clear()
    gc.collect()  # arrays of earlier tests that are garbage but not yet collected
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    sim = solvers.create(model, backend="cupy", scenario=scenario, **params)
    sim.step(2)
    sim.fields()
    used = pool.total_bytes()  # the pool keeps what was freed: its size is the peak held
    need = model_class(model).memory_estimate(
        {**sim.params, "_dtype": sim.dtype, "_gpu": True})[1] - memory.BASE_DEVICE
    assert used <= need, f"{model}: device pool {used} > estimate {need}"
