"""The positive scheme's CUDA kernels (solvers/surface_rd/kernels/positive.cu) compiled for the
CPU with g++ (CUDA keywords defined away, blocks of one thread so the warp shuffles are the
identity, atomicMax as a plain maximum of the bit patterns), launched in the order of
fused.FusedPositiveChemotaxis on the tables it builds (fused.ring_half_weights, padded), against the
NumPy float64 reference: the fields, the adaptive steps and the device clock's landing. This checks
the kernels' formulas, tables and clock on machines without a GPU; the `gpu` tests check them on
the device."""
import shutil
import subprocess

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.mesh import padded
from pdestudio.solvers.surface_rd.fused import POSITIVE_CU, ring_half_weights
from pdestudio.solvers.surface_rd.reference import THETA

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

SHIM = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
using std::fmin; using std::fmax; using std::fabs; using std::expm1;
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__
#define __restrict__
struct Dim { int x; int y; };
static Dim blockIdx, blockDim, threadIdx;
#define __syncthreads()
template <class V> V __shfl_down_sync(unsigned, V v, int) { return v; }  // one-thread blocks
static float __fmul_rn(float a, float b) { return a * b; }
static double __dmul_rn(double a, double b) { return a * b; }
static int __float_as_int(float v) { int i; std::memcpy(&i, &v, 4); return i; }
static long long __double_as_longlong(double v) { long long i; std::memcpy(&i, &v, 8); return i; }
static float __int_as_float(int i) { float v; std::memcpy(&v, &i, 4); return v; }
static double __longlong_as_double(long long i) { double v; std::memcpy(&v, &i, 8); return v; }
static int atomicMax(int* p, int v) { int o = *p; if (v > o) *p = v; return o; }
static long long atomicMax(long long* p, long long v) { long long o = *p; if (v > o) *p = v; return o; }
"""

MAIN = r"""
#include "positive.cu"
template <class V> std::vector<V> take(FILE* f, size_t k) {
    std::vector<V> v(k);
    if (fread(v.data(), sizeof(V), k, f) != k) exit(2);
    return v;
}
int main(int argc, char** argv) {
    FILE* f = fopen(argv[1], "rb");
    const auto hdr = take<int>(f, 5);  // n, P, K, steps, has_end
    const int n = hdr[0], P = hdr[1], K = hdr[2], steps = hdr[3], has_end = hdr[4];
    const auto p = take<double>(f, 9);  // D alpha sr N s dt_user theta t0 t_end
    auto fn = take<double>(f, n), fc = take<double>(f, n), area = take<double>(f, n);
    const auto deg = take<int>(f, n), nbr = take<int>(f, (size_t)K * P);
    const auto hw = take<double>(f, (size_t)K * P);
    fclose(f);
    std::vector<T> N(fn.begin(), fn.end()), C(fc.begin(), fc.end()), A(area.begin(), area.end());
    std::vector<T> H(hw.begin(), hw.end()), rn(n), rc(n), lam(2, T(0));
    // the device clock's records (core/kernels/clock.cuh): {t, landed, i, t_end, has_end} x 2
    std::vector<double> clk{p[7], 0.0, 0.0, p[8], (double)has_end, 0, 0, 0, 0, 0}, hist(steps);
    int cur = 0;
    blockDim.x = 1;
    for (int k = 0; k < steps; ++k) {
        for (int b = 0; b < n; ++b) {
            blockIdx.x = b; threadIdx.x = 0;
            cx_rates<T>(N.data(), C.data(), rn.data(), rc.data(), deg.data(), nbr.data(), H.data(),
                        A.data(), n, P, T(p[0]), T(p[1]), T(p[2]), T(p[3]), T(p[4]), &lam[cur]);
        }
        for (int b = 0; b < n; ++b) {
            blockIdx.x = b; threadIdx.x = 0;
            cx_update<T>(N.data(), C.data(), rn.data(), rc.data(), n, &lam[cur], &lam[1 - cur],
                         &clk[5 * cur], &clk[5 * (1 - cur)], hist.data(), p[5], p[6],
                         INFINITY);
        }
        cur = 1 - cur;
    }
    f = fopen(argv[2], "wb");
    for (int i = 0; i < n; ++i) { double v = N[i]; fwrite(&v, 8, 1, f); }
    for (int i = 0; i < n; ++i) { double v = C[i]; fwrite(&v, 8, 1, f); }
    for (int i = 0; i < n; ++i) { double v = rn[i]; fwrite(&v, 8, 1, f); }
    fwrite(hist.data(), 8, steps, f);
    fwrite(&clk[5 * cur], 8, 2, f);
    fclose(f);
    return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    out, exes = tmp_path_factory.mktemp("cu"), {}
    for real in ("double", "float"):
        src = out / f"positive_{real}.cpp"
        src.write_text(SHIM + f"typedef {real} T;\n" + MAIN)
        exe = out / f"positive_{real}"
        subprocess.run([GXX, "-std=c++17", "-O1", "-ffp-contract=off",
                        f"-I{POSITIVE_CU.parent}",
                        f"-I{POSITIVE_CU.parents[2] / 'core' / 'kernels'}", "-o", str(exe),
                        str(src)], check=True)
        exes[real] = exe
    return exes


def run_kernels(exe, sim, steps, t_end, tmp_path):
    """The kernels' launch sequence on sim's renumbered mesh and state (internal numbering)."""
    mesh = sim.imesh
    indptr, nbr, half = ring_half_weights(mesh)
    nbr_t = padded(indptr, nbr, fill=0, dtype=np.int32)
    hw = padded(indptr, half, fill=0.0)
    K, P = nbr_t.shape
    p = sim.params
    n = mesh.n_vertices
    hdr = np.array([n, P, K, steps, t_end is not None], dtype=np.int32)
    par = np.array([p["D"], p["alpha"], p["s"] * p["r"], p["N"], p["s"], sim.dt, THETA, sim.t,
                    0.0 if t_end is None else t_end])
    blob = b"".join(np.ascontiguousarray(a).tobytes() for a in (
        hdr, par, sim.state["cells"], sim.state["chemo"], mesh.mixed_areas,
        np.diff(indptr).astype(np.int32), nbr_t, hw))
    (tmp_path / "in.bin").write_bytes(blob)
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    out = np.fromfile(tmp_path / "out.bin")
    return out[:n], out[n:2 * n], out[2 * n:3 * n], out[3 * n:3 * n + steps], out[-2:]


def rough(sim, seed):
    rng = np.random.default_rng(seed)
    nv = sim.mesh.n_vertices
    n = rng.uniform(0, 2, nv)
    n[rng.random(nv) < 0.2] = 0.0
    sim.set_field("cells", n)
    sim.set_field("chemo", rng.uniform(0, 1, nv))


@pytest.mark.parametrize("real,tol", [("double", 1e-13), ("float", 2e-5)])
def test_positive_kernels_on_cpu_match_the_reference(real, tol, harness, tmp_path):
    """Tube (edges of negative weight), rough data (the positivity bound sets the steps):
    12 kernel steps equal 12 reference steps, with the same adaptive δt's; n ≥ 0; the rates
    conserve the cells (Σ A (∂n/∂t − logistic) = 0 to round-off)."""
    sim = solvers.create("chemotaxis", backend="numpy", scenario="tube", vertices=1200)
    rough(sim, 5)
    n0 = sim.state["cells"].copy()
    got_n, got_c, _, hist, _ = run_kernels(harness[real], sim, 12, None, tmp_path)
    dts = []
    for _ in range(12):
        t0 = sim.t
        sim.step(1)
        dts.append(sim.t - t0)
    np.testing.assert_allclose(hist, dts, rtol=tol)
    assert hist[0] < 0.5 * sim.dt  # the bound, not δt, set the first steps
    for got, want in ((got_n, sim.state["cells"]), (got_c, sim.state["chemo"])):
        assert np.abs(got - want).max() < tol * np.abs(want).max()
    assert got_n.min() >= 0
    # one step's rates: transport conserves Σ A n
    _, _, rn, _, _ = run_kernels(harness[real], sim, 1, None, tmp_path)
    a, p, n = sim.imesh.mixed_areas, sim.params, sim.state["cells"]
    tr = a * (rn - p["s"] * p["r"] * n * (p["N"] - n))
    assert abs(tr.sum()) < (1e-14 if real == "double" else 1e-6) * abs(tr).sum()
    assert not np.array_equal(n0, n)


def test_device_clock_lands_like_the_host(harness, tmp_path):
    """A batch crossing t_end: the steps before are whole, the one that lands is shortened
    to t_end exactly (core.clock's rule), the steps after apply 0 and leave the state alone."""
    from pdestudio.solvers.core import clock
    sim = solvers.create("chemotaxis", backend="numpy", scenario="tube", vertices=1200)
    t_end = 7.5 * sim.dt
    got_n, _, _, hist, clk = run_kernels(harness["double"], sim, 12, t_end, tmp_path)
    sim.advance(t_end)
    assert sim.steps == 8 and (hist[8:] == 0).all() and (hist[:7] == sim.dt).all()
    t = 0.0
    for d in hist[:8]:
        t = clock.after_step(t, d, t_end)
    assert t == clk[0] == t_end == sim.t and clk[1] == 1.0
    np.testing.assert_allclose(got_n, sim.state["cells"], rtol=1e-13)
