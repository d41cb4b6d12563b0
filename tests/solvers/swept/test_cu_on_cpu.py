"""The .cu kernels themselves, compiled for the CPU with g++ (CUDA keywords defined away, a block's
threads run as OpenMP threads, __syncthreads() as an OpenMP barrier), against the NumPy float64
reference: the classic kernels and the swept kernels (up-triangle, diamonds, down-triangle, with
the same launch sequence as solvers/swept/fused.py) reproduce NumPy's classic order bit for bit
when floating-point contraction is off. This checks the kernels' index arithmetic and boundary
handling on machines without a GPU; the `gpu` tests check them on the device."""
import shutil
import subprocess

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.swept import reference

from .test_swept import random_state

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

SHIM = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <omp.h>
using std::sqrt; using std::fmin; using std::fmax; using std::fabs; using std::isfinite;
#define __device__
#define __global__
#define __forceinline__ inline
#define __align__(x)
#define __shared__
#define __restrict__
struct Dim { int x; };
static Dim blockIdx, blockDim;
static thread_local Dim threadIdx;
#define __syncthreads() _Pragma("omp barrier")
alignas(16) unsigned char swept_smem[1 << 17];
"""

MAIN = r"""
typedef double T;
static std::vector<T> a;  // kernel scalars after (..., n)
template <class F> void launch(int blocks, int W, bool parallel, F f) {
    blockDim.x = W;
    for (int b = 0; b < blocks; ++b) {
        blockIdx.x = b;
        if (parallel) {
#pragma omp parallel num_threads(W)
            { threadIdx.x = omp_get_thread_num(); f(); }
        } else {
            for (int t = 0; t < W; ++t) { threadIdx.x = t; f(); }
        }
    }
}
int main(int argc, char** argv) {
    omp_set_dynamic(0);
    const int NV = atoi(argv[1]), n = atoi(argv[2]), W = atoi(argv[3]), tiers = atoi(argv[4]);
    const int steps = atoi(argv[5]), cycles = atoi(argv[6]), nargs = atoi(argv[7]);
    FILE* f = fopen(argv[8], "rb");
    a.resize(nargs);
    std::vector<T> U(NV * n), V(NV * n), E0(2 * NV * n), E1(2 * NV * n);
    if (fread(a.data(), sizeof(T), nargs, f) != (size_t)nargs) return 2;
    if (fread(U.data(), sizeof(T), NV * n, f) != (size_t)(NV * n)) return 2;
    fclose(f);
    T *u = U.data(), *v = V.data();
    const int cb = (n + W - 1) / W;
    for (int s = 0; s < steps; ++s) {  // classic, as fused.SweptFused.classic
        if (tiers == 1) {
            launch(cb, W, false, [&] { PREFIX_classic<T>(u, u, v, n, 0 ARGS); });
            std::swap(u, v);
        } else {
            launch(cb, W, false, [&] { PREFIX_classic<T>(u, u, v, n, 1 ARGS); });
            launch(cb, W, false, [&] { PREFIX_classic<T>(v, u, u, n, 0 ARGS); });
        }
    }
    if (cycles > 0) {  // swept, as fused.SweptFused._swept
        T *src = E0.data(), *dst = E1.data();
        launch(n / W, W, true, [&] { PREFIX_up<T>(u, src, n ARGS); });
        for (int st = 1; st < cycles; ++st) {
            const int shift = (st % 2) * (W / 2);
            launch(n / W, W, true, [&] { PREFIX_diamond<T>(src, dst, n, shift ARGS); });
            std::swap(src, dst);
        }
        const int shift = (cycles % 2) * (W / 2);
        launch(n / W, W, true, [&] { PREFIX_down<T>(src, u, n, shift ARGS); });
    }
    f = fopen(argv[9], "wb");
    fwrite(u, sizeof(T), NV * n, f);
    fclose(f);
    return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """model -> path of its compiled CPU harness (compiled once per module)."""
    out, cache = tmp_path_factory.mktemp("cu"), {}
    probe = out / "omp.cpp"
    probe.write_text("#include <omp.h>\nint main() { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
    if subprocess.run([GXX, "-fopenmp", "-o", str(out / "omp"), str(probe)],
                      capture_output=True).returncode:
        pytest.skip("g++ cannot build OpenMP programs here")

    def get(model, **params):
        sim = solvers.create(model, backend="numpy", nx=64, **params)
        fused = sim.schemes.entry(sim.params).fused
        cu, prefix, _ = fused.kernel_source(sim.params)
        key = prefix  # one build per kernel file (periodic or not is a kernel argument)
        if key not in cache:
            nargs = len(sim.scheme.kernel_args(sim.dt))
            args = "".join(f", a[{i}]" for i in range(nargs))
            src = out / f"{prefix}.cpp"
            src.write_text(SHIM + f'#include "{cu}"\n'
                           + MAIN.replace("PREFIX", prefix).replace(" ARGS", args))
            exe = out / prefix
            subprocess.run([GXX, "-std=c++17", "-O1", "-fopenmp", "-ffp-contract=off",
                            f"-I{cu.parent}", "-o", str(exe), str(src)], check=True)
            cache[key] = (exe, nargs)
        return cache[key]
    return get


def run_harness(exe, sim, steps, cycles, tmp_path):
    U = np.ascontiguousarray(sim.U, dtype=np.float64)
    args = np.array(sim.scheme.kernel_args(sim.dt), dtype=np.float64)
    (tmp_path / "in.bin").write_bytes(args.tobytes() + U.tobytes())
    NV, n = U.shape
    subprocess.run([str(exe), str(NV), str(n), str(sim.params["block"]),
                    str(sim.scheme.tiers_per_step), str(steps), str(cycles), str(len(args)),
                    str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True,
                   env={"OMP_WAIT_POLICY": "passive"})
    return np.fromfile(tmp_path / "out.bin").reshape(NV, n)


CASES = [("heat-1d", {}), ("ks-1d", {"L": 16.0}),  # KS: nx ≥ L (the resolution guard)
         ("euler-1d", {"scheme": "muscl-hllc"}),
         ("euler-1d", {"scheme": "paper"}),
         ("euler-1d", {"scheme": "muscl-hllc", "boundary": "periodic"}),
         ("euler-1d", {"scheme": "paper", "boundary": "periodic"})]


@pytest.mark.parametrize("model,params", CASES,
                         ids=["-".join([m, *map(str, p.values())]) for m, p in CASES])
def test_cuda_kernels_on_cpu_equal_numpy_bit_for_bit(model, params, harness, tmp_path):
    exe, _ = harness(model, **params)
    W, nb = 32, 3
    sim = solvers.create(model, backend="numpy", nx=W * nb, block=W, **params)
    random_state(sim)
    sc = sim.scheme  # the reference scheme: its tiers, stencil shape and boundary rule
    P = sim.cycle_steps
    cycles, steps = 3, 5
    U0 = sim.U.copy()
    classic = run_harness(exe, sim, steps, 0, tmp_path)          # classic kernels only
    swept = run_harness(exe, sim, 0, cycles, tmp_path)           # swept kernels only
    ref = reference.classic_steps(sc.tier(sim.dt), sc.tiers_per_step, U0, sc.R, sc.bc,
                                  sc.ghosts(), np, steps=steps)
    np.testing.assert_array_equal(classic, ref)
    ref = reference.classic_steps(sc.tier(sim.dt), sc.tiers_per_step, U0, sc.R, sc.bc,
                                  sc.ghosts(), np, steps=cycles * P)
    np.testing.assert_array_equal(swept, ref)
