"""euler-1d against PyClaw's sharpness (issue 28, item 3): a Gaussian entropy wave and Sod's tube.

    python -m benchmarks.swept.euler_sharp [--schemes muscl-hllc,paper] [--backend numpy]
                                           [--cfl 0.4] [--pyclaw]

1. Gaussian entropy wave: ρ = 1 + 0.5 exp(−((x − x0)/0.05)²), x0 = 0.5, u = 1, P = 1, on [0, 1)
   periodic, to t = 0.2; the L1 error of the cell averages of ρ against the exact cell averages
   (the Gaussian's integral through erf) and its EOC, at 100, 200, 400 and 800 cells.
2. Sod's tube at t = 0.2, 400 cells: L1(ρ) = mean |ρ_i − ρ̄_exact,i| against the cell averages of
   the exact Riemann solution (solvers/swept/exact.py, 64 samples a cell).
With --pyclaw, the same two rows from PyClaw's classic solver (Roe solver, MC limiter, CFL 0.9),
when clawpack is installed.

Beyond the public API it imports the exact Riemann solution (swept.exact), the reference its errors are measured against.
"""
from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.special import erf

from pdestudio import solvers
from pdestudio.solvers.swept.exact import riemann_exact

SIZES = (100, 200, 400, 800)
X0, WIDTH, AMP, T_WAVE = 0.5, 0.05, 0.5, 0.2
SOD = ((1.0, 0.0, 1.0), (0.125, 0.0, 0.1))
GAMMA = 1.4


def gaussian_average(nx: int, t: float) -> np.ndarray:
    """Exact cell averages of ρ(x − t) on nx cells of [0, 1) (the Gaussian is 1e-43 at the ends,
    so the periodic images do not matter)."""
    e = np.linspace(0.0, 1.0, nx + 1) - X0 - t
    integral = WIDTH * math.sqrt(math.pi) / 2 * np.diff(erf(e / WIDTH))
    return 1.0 + AMP * integral * nx


def wave_l1(nx: int, scheme: str, backend: str = "numpy", cfl: float = 0.4,
            dtype: str = "float64", method: str = "classic") -> float:
    """L1 error of ρ of the Gaussian entropy wave at t = 0.2 on nx cells."""
    sim = solvers.create("euler-1d", scenario="entropy-wave", backend=backend, dtype=dtype,
                         nx=nx, scheme=scheme, cfl=cfl, method=method,
                         block=min(256, nx) if method == "swept" else 256)
    rho = gaussian_average(nx, 0.0)
    sim.set_field("rho", rho)
    sim.set_field("rhou", rho * 1.0)
    sim.set_field("E", 1.0 / (GAMMA - 1) + 0.5 * rho)
    sim.advance(T_WAVE)
    got = np.asarray(sim.fields()["rho"], dtype=np.float64)
    if hasattr(got, "get"):
        got = got.get()
    return float(np.abs(got - gaussian_average(nx, T_WAVE)).mean())


def sod_average(nx: int, sub: int = 64) -> np.ndarray:
    """Cell averages of the exact density of Sod's tube at t = 0.2 on nx cells of [0, 1] (the
    mean of `sub` point values a cell: exact where the solution is constant, the jumps' cells
    to 1/sub of a jump)."""
    xf = (np.arange(nx * sub) + 0.5) / (nx * sub)
    return riemann_exact(xf, 0.2, *SOD)[0].reshape(nx, sub).mean(axis=1)


def sod_l1(nx: int, scheme: str, backend: str = "numpy", cfl: float = 0.4, method="classic",
           dtype="float64") -> float:
    """L1 error of ρ of Sod's tube at t = 0.2 against the exact cell averages."""
    sim = solvers.create("euler-1d", backend=backend, nx=nx, scheme=scheme, cfl=cfl,
                         method=method, dtype=dtype,
                         block=min(256, nx) if method == "swept" else 256)
    sim.advance(0.2)
    rho = sim.fields()["rho"]
    rho = np.asarray(rho.get() if hasattr(rho, "get") else rho, dtype=np.float64)
    return float(np.abs(rho - sod_average(nx)).mean())


def pyclaw_rows():
    """(wave L1 per size, Sod L1 at 400) from PyClaw's classic Roe + MC scheme, or None."""
    try:
        from clawpack import pyclaw, riemann
    except ImportError:
        return None

    def run(nx, rho0, mom0, en0, bc, t):
        solver = pyclaw.ClawSolver1D(riemann.euler_with_efix_1D)
        solver.limiters = pyclaw.limiters.tvd.MC
        solver.kernel_language = "Fortran"
        solver.bc_lower[0] = solver.bc_upper[0] = bc
        solver.cfl_desired, solver.cfl_max = 0.9, 1.0
        domain = pyclaw.Domain([pyclaw.Dimension(0.0, 1.0, nx, name="x")])
        state = pyclaw.State(domain, 3)
        state.problem_data["gamma"] = GAMMA
        state.problem_data["gamma1"] = GAMMA - 1
        state.problem_data["efix"] = False
        state.q[0], state.q[1], state.q[2] = rho0, mom0, en0
        claw = pyclaw.Controller()
        claw.tfinal, claw.num_output_times, claw.verbosity = t, 1, 0
        claw.solution = pyclaw.Solution(state, domain)
        claw.solver, claw.keep_copy, claw.output_format = solver, True, None
        claw.run()
        return claw.frames[-1].q[0], domain.grid.x.centers

    wave = []
    for nx in SIZES:
        rho = gaussian_average(nx, 0.0)
        got, _ = run(nx, rho, rho, 1 / (GAMMA - 1) + 0.5 * rho, pyclaw.BC.periodic, T_WAVE)
        wave.append(float(np.abs(got - gaussian_average(nx, T_WAVE)).mean()))
    x = (np.arange(400) + 0.5) / 400
    rho = np.where(x < 0.5, 1.0, 0.125)
    en = np.where(x < 0.5, 1.0, 0.1) / (GAMMA - 1)
    got, x = run(400, rho, 0 * rho, en, pyclaw.BC.extrap, 0.2)
    sod = float(np.abs(got - sod_average(400)).mean())
    return wave, sod


def eoc(e):
    return [""] + [f"{math.log2(a / b):.2f}" for a, b in zip(e[:-1], e[1:])]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schemes", default="muscl-hllc")
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--cfl", type=float, default=0.4)
    ap.add_argument("--pyclaw", action="store_true")
    a = ap.parse_args(argv)
    print("| scheme | " + " | ".join(f"L1(ρ) {n}" for n in SIZES)
          + " | EOC 100→800 | Sod L1(ρ) 400 |")
    print("|---|" + "---|" * (len(SIZES) + 2))
    rows = {s: ([wave_l1(n, s, a.backend, a.cfl) for n in SIZES], sod_l1(400, s, a.backend,
                                                                           a.cfl))
            for s in a.schemes.split(",")}
    if a.pyclaw:
        pc = pyclaw_rows()
        if pc is None:
            print("(clawpack is not installed: no PyClaw row)")
        else:
            rows["PyClaw classic, Roe + MC, CFL 0.9"] = pc
    for name, (wave, sod) in rows.items():
        print(f"| {name} | " + " | ".join(f"{e:.3e}" for e in wave)
              + f" | {', '.join(eoc(wave)[1:])} | {sod:.3e} |")


if __name__ == "__main__":
    main()
