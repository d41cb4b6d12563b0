"""The generated CUDA kernels of model files (solvers/equations/codegen.py into
kernels/equations.cu) compiled for the CPU with g++ (CUDA keywords defined away, blocks of one
thread), run on the tables fused.py builds, against the NumPy float64 reference: one stage of
every kind (Euler's, an RK4 stage with the accumulator) and the rates with the positive flux's
loss rate. This checks the generator, the ghost values and the mesh tables on machines without a
GPU; the `gpu` tests run the same kernels on the device."""
import shutil
import subprocess

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.equations.fused import TEMPLATE, kernel_source, mesh_tables
from pdestudio.solvers.equations.reference import Rates

from .conftest import CHEMOTAXIS

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

SHIM = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__
struct Dim { int x; int y; };
static Dim blockIdx, blockDim, threadIdx;
template <class V> V __shfl_down_sync(unsigned, V v, int) { return v; }
static int __float_as_int(float v) { int i; std::memcpy(&i, &v, 4); return i; }
static long long __double_as_longlong(double v) { long long i; std::memcpy(&i, &v, 8); return i; }
static float __int_as_float(int i) { float v; std::memcpy(&v, &i, 4); return v; }
static double __longlong_as_double(long long i) { double v; std::memcpy(&v, &i, 8); return v; }
static int atomicMax(int* p, int v) { int o = *p; if (v > o) *p = v; return o; }
static long long atomicMax(long long* p, long long v) { long long o = *p; if (v > o) *p = v; return o; }
template <class V> std::vector<V> take(FILE* f, size_t k) {
    std::vector<V> v(k);
    if (k && fread(v.data(), sizeof(V), k, f) != k) exit(2);
    return v;
}
"""


def _main(sim, nparams):
    sp = sim.species
    mesh = sim.params["kind"] == "mesh"
    lines = ["int main(int argc, char** argv) {", 'FILE* f = fopen(argv[1], "rb");',
             "const auto hdr = take<int>(f, 3);  // n, nnz, acc_init",
             "const int n = hdr[0], nnz = hdr[1];",
             "const auto sc = take<double>(f, 9);  // t t_out a0 a1 a2dt a3 bdt hx hy"]
    for s in sp:
        lines += [f"auto Y_{s} = take<double>(f, n); auto U_{s} = take<double>(f, n);",
                  f"auto A_{s} = take<double>(f, n); std::vector<double> O_{s}(n), R_{s}(n);"]
    lines.append(f"auto P = take<double>(f, {nparams});")
    if mesh:
        lines += ["auto indptr = take<int>(f, n + 1); auto nbr = take<int>(f, nnz);",
                  "auto lw = take<double>(f, nnz); auto hw = take<double>(f, nnz);",
                  "auto area = take<double>(f, n); auto X = take<double>(f, n);",
                  "auto Yc = take<double>(f, n); auto Z = take<double>(f, n);",
                  "auto pinned = take<unsigned char>(f, n);"]
        geo = ("n, indptr.data(), nbr.data(), lw.data(), hw.data(), area.data(), X.data(), "
               "Yc.data(), Z.data(), pinned.data()")
    else:
        lines.append("auto dims = take<int>(f, 2);")
        geo = "dims[0], dims[1], sc[7], sc[8]"
    lines += ["fclose(f);", "std::vector<double> lam(1, 0.0);", "blockDim.x = 1;"]
    st = ", ".join(f"Y_{s}.data(), U_{s}.data(), O_{s}.data(), A_{s}.data()" for s in sp)
    rt = ", ".join(f"Y_{s}.data(), R_{s}.data()" for s in sp)
    lines += ["for (int b = 0; b < n; ++b) { blockIdx.x = b; threadIdx.x = 0;",
              f"  eq_stage<double>({st}, P.data(), sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], "
              f"sc[6], hdr[2], {geo}); }}",
              "for (int b = 0; b < n; ++b) { blockIdx.x = b; threadIdx.x = 0;",
              f"  eq_rates<double>({rt}, P.data(), sc[0], sc[0], lam.data(), {geo}); }}",
              'FILE* g = fopen(argv[2], "wb");']
    for s in sp:
        lines += [f"fwrite(O_{s}.data(), 8, n, g); fwrite(A_{s}.data(), 8, n, g);",
                  f"fwrite(R_{s}.data(), 8, n, g);"]
    lines += ["fwrite(lam.data(), 8, 1, g);", "fclose(g);", "return 0;", "}"]
    return "\n".join(lines)


def _run(sim, tmp_path, Y, U, A, scal, acc_init):
    from pdestudio.solvers.core.backend import CORE_KERNELS
    n = int(np.prod(sim.shape))
    src = tmp_path / "k.cpp"
    src.write_text(SHIM + kernel_source(sim) + _main(sim, max(1, len(sim.user_params))))
    exe = tmp_path / "k"
    r = subprocess.run([GXX, "-O1", "-std=c++17", f"-I{CORE_KERNELS}", f"-I{TEMPLATE.parent}",
                        "-o", str(exe), str(src)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    mesh = sim.params["kind"] == "mesh"
    tabs = mesh_tables(sim.mesh) if mesh else None
    with open(tmp_path / "in.bin", "wb") as f:
        f.write(np.array([n, len(tabs[1]) if mesh else 0, acc_init], np.int32).tobytes())
        h = list(sim.spacing) + [1.0] * (2 - len(sim.spacing)) if not mesh else [0.0, 0.0]
        f.write(np.array(list(scal) + h, np.float64).tobytes())
        for s in sim.species:
            for a in (Y[s], U[s], A[s]):
                f.write(np.ascontiguousarray(a, np.float64).ravel().tobytes())
        f.write(np.array([sim.user_params[p] for p in sim.definition.parameters] or [0.0],
                         np.float64).tobytes())
        if mesh:
            pinned = np.zeros(n, np.uint8)
            if any(sim.sides[s]["all"].kind == "dirichlet" for s in sim.species):
                pinned[np.asarray(sim.mesh.boundary_vertices)] = 1
            f.write(tabs[0].tobytes() + tabs[1].tobytes() + tabs[2].tobytes()
                    + tabs[3].tobytes() + np.asarray(sim.mesh.mixed_areas, np.float64).tobytes())
            for c in ("x", "y", "z"):
                f.write(np.asarray(sim.coords[c], np.float64).tobytes())
            f.write(pinned.tobytes())
        else:
            shape = sim.shape
            f.write(np.array([shape[-1], shape[0] if len(shape) == 2 else 1], np.int32).tobytes())
    r = subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    raw = np.fromfile(tmp_path / "out.bin", np.float64)
    out, k = {}, 0
    for s in sim.species:
        out[s] = [raw[k + j * n:k + (j + 1) * n].reshape(sim.shape) for j in range(3)]
        k += 3 * n
    return out, raw[-1]


GRID_MODEL = {
    "model": {"name": "cu-grid"},
    "equations": {"u": "Du*lap(u) - div(chi*u*grad(v)) + a - u + u^2*v + 0.1*sin(t)*x",
                  "v": "div((1 + 0.5*w)*grad(v)) + 0.1*lap(w) + b - u^2*v"},
    "algebraic": {"w": "u*v/(1 + u)"},
    "parameters": {"a": 0.1, "b": 0.9, "Du": 1.0, "chi": 0.3},
    "initial": {"u": "1 + 0.3*noise", "v": "0.9 + 0.2*noise"},
}


@pytest.mark.parametrize("domain", [
    {"kind": "rectangle", "nx": 9, "ny": 7, "Lx": 4.0, "Ly": 3.0, "boundary": "periodic"},
    {"kind": "rectangle", "nx": 8, "ny": 6, "Lx": 4.0, "Ly": 3.0,
     "boundary": "left=dirichlet: 1 + y*t; right=neumann: 0.2; bottom=robin: -0.5*v; top=neumann"},
    {"kind": "rectangle", "nx": 8, "ny": 6, "Lx": 4.0, "grid": "vertex",
     "boundary": "left=dirichlet: 1 + y; right=neumann: 0.2; bottom=robin: -0.5*v; top=neumann"},
    {"kind": "interval", "nx": 11, "L": 5.0, "boundary": "left=dirichlet: 2; right=neumann"},
    {"kind": "mesh", "surface": "torus", "vertices": 300, "boundary": "natural"},
    {"kind": "mesh", "surface": "rectangle", "vertices": 120, "boundary": "dirichlet: 1 + z"},
], ids=["periodic", "cell-mixed", "vertex-mixed", "interval", "torus", "mesh-dirichlet"])
def test_generated_stage_and_rates_match_the_reference(domain, tmp_path):
    src = {**GRID_MODEL, "domain": domain, "numerics": {"dt": 1e-3}}
    if "robin" in domain.get("boundary", ""):  # u's own Robin condition; v as the domain says
        src["boundary"] = {"u": domain["boundary"].replace("-0.5*v", "-0.5*u")}
    sim = solvers.create(solvers.define(src), backend="numpy", kernel="array")
    rng = np.random.default_rng(1)
    U = {s: sim.state[s] * (1 + 0.2 * rng.uniform(-1, 1, sim.shape)) for s in sim.species}
    Y = {s: U[s] + 0.05 * rng.uniform(-1, 1, sim.shape) for s in sim.species}
    A = {s: rng.uniform(-1, 1, sim.shape) for s in sim.species}
    rates = Rates(sim, sim.scheme.ops, np, np.float64)
    t, dt = 0.3, 1e-3
    # an RK4 middle stage: out = U + dt/2 k, acc += dt/3 k
    got, lam = _run(sim, tmp_path, Y, U, A, (t, t + dt, 1.0, 0.0, dt / 2, 0.0, dt / 3), 0)
    k, _ = rates(Y, t)
    for s in sim.species:
        want = U[s] + dt / 2 * k[s]
        scale = np.abs(k[s]).max()
        free = np.ones(sim.shape, bool)
        for idx, _ in sim.scheme.ops.pinned(s):
            free[idx] = False
        np.testing.assert_allclose(got[s][2], k[s], rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(got[s][0][free], want[free], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(got[s][1], A[s] + dt / 3 * k[s], rtol=1e-13, atol=1e-14)
    pinned = {s: sim.scheme.ops.pinned(s) for s in sim.species}
    if any(pinned.values()):
        outs = {s: got[s][0].copy() for s in sim.species}
        sim.scheme.pin(outs, t + dt)
        for s in sim.species:
            np.testing.assert_allclose(got[s][0], outs[s], rtol=1e-13)


def test_generated_positive_flux_matches_the_reference(tmp_path):
    sim = solvers.create(solvers.define({**CHEMOTAXIS, "domain": {
        "kind": "mesh", "surface": "rectangle", "vertices": 200, "boundary": "natural"}}),
        backend="numpy", kernel="array", dt=0.01)
    rng = np.random.default_rng(2)
    Y = {"cells": 1 + 0.5 * rng.uniform(-1, 1, sim.shape),
         "chemo": 0.5 + 0.4 * rng.uniform(-1, 1, sim.shape)}
    A = {s: np.zeros(sim.shape) for s in sim.species}
    got, lam = _run(sim, tmp_path, Y, Y, A, (0.0, 0.01, 1.0, 0.0, 0.01, 0.0, 0.0), 1)
    k, lam_ref = Rates(sim, sim.scheme.ops, np, np.float64)(Y, 0.0)
    for s in sim.species:
        np.testing.assert_allclose(got[s][2], k[s], rtol=1e-11, atol=1e-12)
    assert lam == pytest.approx(lam_ref, rel=1e-12)
