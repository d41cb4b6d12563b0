"""kernels/riemann.cuh is the twin of riemann.py: every flux (one and two layers, Roe, IR-Roe,
PVM-IFCP) compiled for the host (a C++ compiler, the CUDA intrinsics replaced by exact functions)
gives the fluxes of riemann.py to round-off, walls and supercritical edges included. Runs on any
machine with g++; the GPU tests check the device build."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pdestudio.solvers.shallow_water import riemann

KERNELS = Path(riemann.__file__).resolve().parent / "kernels"
HOST = r"""
#define __device__
#define __forceinline__ inline
#include <cmath>
#include <cstdio>
using std::sqrt; using std::fabs; using std::fmax; using std::fmin;
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline float __fdividef(float a, float b) { return a / b; }
#include "riemann.cuh"
template <int NL, int SCH> void run(int n) {  // per edge: wl, wr, HL, HR, nx, ny, wall, g, r, nu
    const int NV = 3 * NL;
    double in[2 * NV + 8], dl[NV], dr[NV], s;
    for (int e = 0; e < n; ++e) {
        if (fread(in, 8, 2 * NV + 8, stdin) != size_t(2 * NV + 8)) return;
        const double* p = in + 2 * NV;
        Flux<double, NL, SCH>::apply(in, in + NV, p[0], p[1], p[2], p[3], p[4] != 0, p[5], p[6],
                                     dl, dr, s, p[7]);
        fwrite(dl, 8, NV, stdout); fwrite(dr, 8, NV, stdout); fwrite(&s, 8, 1, stdout);
    }
}
int main() {
    int h[3];
    if (fread(h, 4, 3, stdin) != 3) return 1;
    void (*f[2][3])(int) = {{run<1, 0>, run<1, 1>, run<1, 2>}, {run<2, 0>, run<2, 1>, run<2, 2>}};
    f[h[1] - 1][h[2]](h[0]);
}
"""


@pytest.fixture(scope="module")
def host_build(tmp_path_factory):
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler to build riemann.cuh for the host")
    d = tmp_path_factory.mktemp("riemann")
    (d / "host.cpp").write_text(HOST)
    subprocess.run([cxx, "-O1", "-std=c++17", f"-I{KERNELS}", str(d / "host.cpp"), "-o",
                    str(d / "host")], check=True, capture_output=True)
    return d / "host"


def _edges(layers, n, rng):
    if layers == 1:  # |u| up to 18 over c ≈ 2..5.4: sub- and supercritical, transonic edges
        w = [rng.uniform(0.5, 3, n), rng.uniform(-9, 9, n), rng.uniform(-9, 9, n)]
        return w, [rng.uniform(0.5, 3, n), rng.uniform(-9, 9, n), rng.uniform(-9, 9, n)]
    side = lambda: [rng.uniform(0.5, 3, n) if k % 3 == 0 else rng.uniform(-0.5, 0.5, n)  # noqa
                    for k in range(6)]
    return side(), side()


@pytest.mark.parametrize("scheme", riemann.SCHEMES)
@pytest.mark.parametrize("layers", [1, 2])
def test_device_fluxes_are_the_python_fluxes(host_build, layers, scheme):
    rng = np.random.default_rng(3)
    n = 2000
    WL, WR = _edges(layers, n, rng)
    HL, HR = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    ang = rng.uniform(0, 2 * np.pi, n)
    nx, ny = np.cos(ang), np.sin(ang)
    wall = rng.uniform(size=n) < 0.2
    g, r = 9.81, 0.9
    # the shock cure's shear viscosity (one layer): none, below and above c̄ and |un|
    nu = np.where(rng.uniform(size=n) < 0.25, 0.0, rng.uniform(0, 12, n))
    kw = {"nu": nu} if layers == 1 else {}
    DL, DR, s = riemann.FLUXES[layers, scheme](np, WL, WR, HL, HR, nx, ny, wall, g, r, **kw)
    if layers == 1:  # the cure did act on these edges
        DL0 = riemann.FLUXES[layers, scheme](np, WL, WR, HL, HR, nx, ny, wall, g, r)[0]
        assert np.abs(DL0[1] - DL[1]).max() > 1
    inp = np.column_stack(WL + WR + [HL, HR, nx, ny, wall.astype(float), np.full(n, g),
                                     np.full(n, r), nu])
    head = np.array([n, layers, riemann.SCHEMES.index(scheme)], np.int32).tobytes()
    out = subprocess.run([str(host_build)], input=head + inp.tobytes(), capture_output=True,
                         check=True).stdout
    dev = np.frombuffer(out, dtype=np.float64).reshape(n, -1)
    want = np.column_stack(list(DL) + list(DR) + [s])
    scale = np.abs(want).max(axis=0)
    assert np.all(np.abs(dev - want).max(axis=0) <= 1e-14 * scale)
