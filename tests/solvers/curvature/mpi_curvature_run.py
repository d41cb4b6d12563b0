"""Run under mpirun by test_decomposed.py (not a test module): the curvature flows (RKM)
decomposed over the MPI world, every case of CASES; rank 0 writes the gathered results to
OUT/<case>.npz.

Each case: create decomposed, set φ (the same smooth random field added on every rank, set whole
through set_field), advance to T1, save a checkpoint (collective, written by rank 0), advance to
T2 and gather φ and the mean curvature (-> 'run/...'), the quantities, the surface area and the
Willmore energy; then load the checkpoint decomposed over the same world, advance to T2 and
gather (-> 'loaded/...').

    mpirun -n 4 python tests/solvers/curvature/mpi_curvature_run.py OUT [BACKEND]

BACKEND: numpy (default) or cupy (one GPU per rank, the array path).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from pdestudio import solvers

SIZE = {"nx": 36, "ny": 28}   # 29 node rows: strips of unequal rows (8 + 7 + 7 + 7)
# (model, scenario, boundary, dtype, T1, T2): tens of adaptive steps, rejections included
CASES = [("mean-curvature", "sine-rings", "neumann", dt, 4e-3, 1e-2)
         for dt in ("float64", "float32")]
CASES += [("mean-curvature", "eoc-exact", "dirichlet", dt, 0.04, 0.1)
          for dt in ("float64", "float32")]
CASES += [("willmore", "sine-rings", "neumann", "float64", 1e-5, 2.5e-5),
          ("willmore", "eoc-exact", "dirichlet", "float64", 4e-4, 1e-3)]


def name(case) -> str:
    return "-".join(case[:4])


def params(case) -> dict:
    model, scenario, boundary, dtype = case[:4]
    return dict(dtype=dtype, scenario=scenario, boundary=boundary, F=0.3, **SIZE)


def bump(shape, seed=5):
    """A smooth random field (amplitude ≈ 0.3) that breaks the scenarios' symmetries."""
    rng = np.random.default_rng(seed)
    y, x = np.meshgrid(np.linspace(0, 1, shape[0]), np.linspace(0, 1, shape[1]), indexing="ij")
    f = np.zeros(shape)
    for _ in range(5):
        kx, ky = rng.integers(1, 4, 2)
        f += rng.normal(0, 0.15) * np.cos(np.pi * kx * x + rng.uniform(0, 6)) \
            * np.cos(np.pi * ky * y + rng.uniform(0, 6))
    return f


def initial(case):
    """The case's initial φ, whole: the scenario's plus the bump (the same on every rank)."""
    phi = solvers.create(case[0], backend="numpy", **params(case)).fields()["phi"]
    return phi + bump(phi.shape)


def main(out: Path, backend: str = "numpy") -> None:
    comm = MPI.COMM_WORLD
    for case in CASES:
        model, t1, t2 = case[0], case[4], case[5]
        ck = out / f"{name(case)}-T1.npz"
        sim = solvers.create(model, backend=backend, comm=comm, **params(case))
        sim.set_field("phi", initial(case))
        sim.advance(t1)
        sim.save(ck)
        sim.advance(t2)
        run = sim.gather_fields(["phi", "mean_curvature"])
        q = sim.quantities()
        area, energy = sim.surface_area(), sim.willmore_energy()
        info = sim.domain.describe()
        again = solvers.load(ck, backend=backend, comm=comm)
        again.advance(t2)
        loaded = again.gather_fields(["phi"])
        if comm.rank == 0:
            arrays = {f"run/{k}": v for k, v in run.items()}
            arrays.update({f"loaded/{k}": v for k, v in loaded.items()})
            np.savez(out / f"{name(case)}.npz", t=[sim.t, again.t],
                     steps=[sim.steps, again.steps], tau=[sim.tau, again.tau],
                     rows=info["rows"], halo=info["halo"], area=area, energy=energy,
                     quantities=[q[k] for k in sorted(q)], **arrays)


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
