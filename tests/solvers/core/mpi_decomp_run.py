"""Run under mpirun by test_decomp_mpi.py (not a test module): shallow water on grids decomposed
over the MPI world, every case of CASES; rank 0 writes the gathered results to OUT/<case>.npz.

Each case: create decomposed, perturb the momenta (the same random field on every rank, set whole
through set_field), advance to T1, save a checkpoint (collective, written by rank 0), advance to
T2 and gather (-> 'run/...'); then load that checkpoint decomposed over the same world, advance to
T2 and gather (-> 'loaded/...').

    mpirun -n 4 python tests/solvers/core/mpi_decomp_run.py OUT [BACKEND]

BACKEND: numpy (default) or cupy (one GPU per rank; the array path, halos through NCCL unless
PDESTUDIO_HALOS=mpi).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

from pdestudio import solvers

SIZE = {"nx": 37, "ny": 29}   # odd sizes: strips of unequal rows (29 = 8 + 7 + 7 + 7)
T1, T2 = 0.25, 0.75
CASES = [(order, dtype) for order in (1, 3) for dtype in ("float64", "float32")]


def perturbed(sim_or_none, shape, seed):
    rng = np.random.default_rng(seed)
    return 0.2 * rng.standard_normal(shape), 0.2 * rng.standard_normal(shape)


def make(comm, order, dtype, backend):
    sim = solvers.create("shallow-water", backend=backend, dtype=dtype, comm=comm, order=order,
                         **SIZE)
    hu, hv = perturbed(sim, (SIZE["ny"], SIZE["nx"]), 7)
    sim.set_field("hu", hu)
    sim.set_field("hv", hv)
    return sim


def main(out: Path, backend: str = "numpy") -> None:
    comm = MPI.COMM_WORLD
    for order, dtype in CASES:
        name = f"o{order}-{dtype}"
        ck = out / f"{name}-T1.npz"
        sim = make(comm, order, dtype, backend)
        sim.advance(T1)
        sim.save(ck)
        sim.advance(T2)
        run = sim.gather_fields(["h", "hu", "hv"])
        info = sim.domain.describe()
        again = solvers.load(ck, backend=backend, comm=comm)
        again.advance(T2)
        loaded = again.gather_fields(["h", "hu", "hv"])
        if comm.rank == 0:
            arrays = {f"run/{k}": v for k, v in run.items()}
            arrays.update({f"loaded/{k}": v for k, v in loaded.items()})
            np.savez(out / f"{name}.npz", t=[sim.t, again.t], steps=[sim.steps, again.steps],
                     rows=info["rows"], halo=info["halo"], ranks=info["ranks"],
                     halo_s=info["halo_s"], **arrays)


def rarefaction(comm=None):
    """Still water split by flows of ±10 m/s moving apart along y (test_guards.py's dry core,
    turned): the cell that runs dry (row 19) is found by rank 1 of 4, by rank 0 of 2."""
    sim = solvers.create("shallow-water", backend="numpy", nx=4, ny=40, scenario="lake-at-rest",
                         comm=comm)
    n = (40, 4)
    y = np.broadcast_to(sim.mesh.y[:, None], n)
    for name, v in (("H", 1.0), ("h", 1.0), ("hu", 0.0)):
        sim.set_field(name, np.full(n, v))
    sim.set_field("hv", np.where(y < 0.0, -10.0, 10.0))
    return sim


def dry(comm, out: Path) -> None:
    """Every rank reports the same DryCell (where, step, t) and keeps the state before it."""
    sim = rarefaction(comm)
    with np.errstate(all="ignore"):
        try:
            sim.advance(2.0)
            found = None
        except solvers.SimulationDiverged as e:
            found = (type(e).__name__, *e.where, sim.steps, sim.t)
    every = comm.gather(found)
    h = sim.gather_fields(["h"])
    if comm.rank == 0:
        np.savez(out / "dry.npz", found=np.array(every, dtype=object).astype(str), h=h["h"])


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
    if sys.argv[2:3] in ([], ["numpy"]):
        dry(MPI.COMM_WORLD, Path(sys.argv[1]))
