"""The growth rate of one Turing mode of chemotaxis with both schemes against the linearisation
(issue 16): on the regular rectangle the cotangent Laplacian is the 5-point one and cos(kx),
k = mπ/32, is its Neumann eigenmode with eigenvalue λ_h = (4/dx²) sin²(k dx/2). Seeded with
amplitude 1e-6 (perturbation = 0), n's amplitude is measured at t = 5 and 15; the rate is compared
with the largest eigenvalue of J(λ_h) (reference.chemotaxis_jacobian). NumPy float64; prints a
Markdown table.

    python -m benchmarks.surface_rd.growth [--vertices 1200 5000] [--mode 17]

Beyond the public API it imports the chemotaxis Jacobian (surface_rd.reference) for the linear growth rates it compares with.
"""
from __future__ import annotations

import argparse

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.surface_rd.reference import chemotaxis_jacobian


def rate(vertices: int, scheme: str, mode: int) -> tuple[float, float, float]:
    """(measured rate, σ(λ_h), dx) for `mode` on the default rectangle."""
    sim = solvers.create("chemotaxis", backend="numpy", vertices=vertices, scheme=scheme,
                         perturbation=0.0)
    x = sim.mesh.points[:, 0]
    xs = np.unique(x)
    dx, k = xs[1] - xs[0], mode * np.pi / xs[-1]
    phi, a = np.cos(k * x), sim.mesh.mixed_areas
    sim.set_field("cells", 1 + 1e-6 * phi)

    def amplitude():
        return (a * (sim.fields()["cells"] - 1) * phi).sum() / (a * phi * phi).sum()
    sim.advance(5.0)
    a5 = amplitude()
    sim.advance(15.0)
    lam_h = 4 / dx**2 * np.sin(k * dx / 2) ** 2
    sigma = np.linalg.eigvals(chemotaxis_jacobian(sim.params, np.array([lam_h]))).real.max()
    return float(np.log(amplitude() / a5) / 10.0), float(sigma), float(dx)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vertices", type=int, nargs="*", default=[1200, 5000])
    ap.add_argument("--mode", type=int, default=17)
    a = ap.parse_args(argv)
    print("| vertices | dx | positive | paper | σ(λ_h) | error (positive) | positive/paper − 1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for v in a.vertices:
        pos, sigma, dx = rate(v, "positive", a.mode)
        pap, _, _ = rate(v, "paper", a.mode)
        print(f"| {v:,} | {dx:.3f} | {pos:.7f} | {pap:.7f} | {sigma:.7f} | "
              f"{100 * (pos / sigma - 1):+.3f} % | {pos / pap - 1:.1e} |", flush=True)


if __name__ == "__main__":
    main()
