"""Gray–Scott on lattice meshes on the GPU, many steps a launch (kernels/gs_lattice.cu;
docs/MODELS.md §2.5): on a planar right-triangle lattice (mesh/lattice.py `find_lattice`, e.g.
the default rectangle) the cotangent Laplacian is the 5-point one with mirrored ends, so a member
needs no neighbour tables, its state fits a thread-block cluster's shared memory, and a launch
runs any number of steps with no round trip through global memory (the strips' edge rows go to
the neighbouring blocks by asynchronous stores counted on mbarriers: no cluster barrier a step).

A member is a cluster of C blocks (1, 2, 3, 4, 6 or 8: compile-time cluster sizes), each block a
strip of rows; `plan` picks C for E members from how many clusters of each size the device runs
at once: on an H200 (66 clusters of 2, 39 of 3, 30 of 4, 15 of 8), 64 members of 201 × 100 take
C = 2 (128 blocks of 50 rows), 32 members C = 3, 30 members C = 4, one member C = 8.
The per-vertex arithmetic does not depend on C or on the steps a launch takes, so a solo run and
every ensemble member agree bit for bit, whatever the batch.

The solo scheme (fused.FusedGrayScott) and the ensemble launcher (`BatchedLattice`) use it where
`why_not` is None; elsewhere they keep the one-ring kernels. PDESTUDIO_GS_LATTICE=0 turns it off
(benchmarks compare the two).
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np

from ..core.backend import load_kernels
from .fused import BatchedEuler

CU = Path(__file__).parent / "kernels" / "gs_lattice.cu"
CLUSTERS = (1, 2, 3, 4, 6, 8)  # compiled cluster sizes (8: the portable maximum)
THREADS = 1024
SMEM_MAX = 227 * 1024 - 16  # shared memory a block may have (9.0), less the kernel's mbarriers
# A step takes about (rows a block updates + FIXED_ROWS) × (the time of a row) for each wave of
# clusters: on an H200, 201 columns, float32, one wave, one launch of 8,192 steps, 1.69 µs for
# strips of 50 rows, 1.30 for 34, 1.09 for 25, 0.81 for 17 and 0.72 for 13 (docs/BENCHMARKS.md,
# "The second version"): a least-squares line gives 0.026 µs a row and 0.39 µs, 15 rows' time,
# that does not shrink with the strip (the block barrier, the walks' first updates)
FIXED_ROWS = 15


def shape(nx: int, ny: int, C: int, itemsize: int) -> tuple[int, int] | None:
    """(rows a block, shared bytes a block) for a cluster of C blocks, or None where the strips
    do not fit a block's shared memory, a strip has fewer than 4 rows or a row has more nodes
    than half a block's threads (a thread walks one column, a block walks at least two bands
    of rows, each of at least 2)."""
    R = -(-ny // C)
    if R < 4 or ny - (C - 1) * R < 4 or nx > THREADS // 2 or nx < 3:
        return None
    # 2 buffers of R + 2 rows (with the halo rows) of (u, v) pairs, and a zero pair at each end
    smem = (2 * (R + 2) * nx + 2) * 2 * itemsize
    return (R, smem) if smem <= SMEM_MAX else None


def plan(nx: int, ny: int, members: int, itemsize: int,
         limits: dict[int, int]) -> tuple[int, int, int] | None:
    """(C, R, smem) for `members` members, `limits[C]` being how many clusters of C blocks the
    device runs at once (not simply SMs / C: a cluster lives in one GPC, and an H200's 132 SMs
    hold 66 clusters of 2 but 30 of 4 and 15 of 8): the cluster size with the least
    waves × (R + FIXED_ROWS); ties go to the smaller C."""
    best = None
    for C in CLUSTERS:
        s = shape(nx, ny, C, itemsize)
        if s is None or limits.get(C, 0) < 1:
            continue
        cost = -(-members // limits[C]) * (s[0] + FIXED_ROWS)
        if best is None or cost < best[0]:
            best = (cost, C, *s)
    return None if best is None else best[1:]


class _LaunchConfig(ctypes.Structure):  # CUlaunchConfig (cuda.h)
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


def cluster_limit(kernel, C: int, smem: int, sms: int) -> int:
    """How many clusters of `kernel` (C blocks of THREADS threads, smem bytes each) the device
    runs at once: the driver's cuOccupancyMaxActiveClusters, or where it cannot be asked an
    estimate below what an H200 measured (SMs / C for C <= 2, 90 % of it above)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        cfg = _LaunchConfig(C * sms, 1, 1, THREADS, 1, 1, smem, None, None, 0)
        rc = lib.cuOccupancyMaxActiveClusters(ctypes.byref(n),
                                              ctypes.c_void_p(kernel.kernel.ptr),
                                              ctypes.byref(cfg))
        if rc == 0 and n.value > 0:
            return int(n.value)
    except (OSError, AttributeError, TypeError):
        pass
    return sms // C if C <= 2 else int(0.9 * sms / C)


def why_not(sim, lat) -> str | None:
    """None where the lattice kernel applies to `sim`, else the reason."""
    if sim.xp is np:
        return "the CPU backend"
    if os.environ.get("PDESTUDIO_GS_LATTICE", "1") == "0":
        return "PDESTUDIO_GS_LATTICE=0"
    if lat is None:
        return "the mesh is not a lattice"
    import cupy as cp
    cc = cp.cuda.Device().compute_capability
    if int(cc) < 90:
        return f"thread-block clusters need compute capability 9.0 or newer (this GPU: {cc})"
    if lat.nx > THREADS // 2:
        return (f"rows of {lat.nx} nodes (the lattice kernel walks at least two bands a block: "
                f"rows of at most {THREADS // 2} nodes)")
    if plan(lat.nx, lat.ny, 1, np.dtype(sim.real).itemsize, {c: 1 for c in CLUSTERS}) is None:
        return (f"the lattice {lat.nx} × {lat.ny} does not fit the shared memory of a cluster of "
                f"{CLUSTERS[-1]} blocks")
    return None


def tables(sim) -> dict:
    """The lattice, why_not and, where it applies, the kernels, the node table (lattice node
    → internal vertex) and the device's cluster limits, made once per mesh set-up (kept with its
    operators, meshes.py: every simulation and ensemble on that mesh shares them), real type and
    device."""
    dev = -1 if sim.xp is np else sim.xp.cuda.Device().id
    cache = sim.ops.__dict__.setdefault("_fused_tables", {})
    key = ("gs_lattice", np.dtype(sim.real).str, dev,
           os.environ.get("PDESTUDIO_GS_LATTICE", "1"))
    if key not in cache:
        lat = sim.ops.lattice
        t = {"why": why_not(sim, lat)}
        if t["why"] is None:
            import cupy as cp
            t.update(lat=lat, node=cp.asarray(lat.order, dtype=cp.int32),
                     k=load_kernels(CU, sim.dtype, [f"gsl_{c}" for c in CLUSTERS]),
                     sms=cp.cuda.Device().attributes["MultiProcessorCount"],
                     ax=sim.real(1.0 / lat.hx**2), ay=sim.real(1.0 / lat.hy**2), plans={},
                     limits=None)
        cache[key] = t
    return cache[key]


def launch(t: dict, u, v, uo, vo, members: int, par, dts, steps: int,
           cluster: int | None = None) -> None:
    """`steps` steps of `members` members ((E, n) state u, v → uo, vo; par (E, 4) and dts (E,)
    device arrays in the real type; a member with dts 0 is copied). `cluster`: a cluster size
    instead of plan's (tests)."""
    lat, item = t["lat"], u.dtype.itemsize
    if t["limits"] is None:  # each kernel allowed its shared memory, then asked its limit
        t["limits"] = {}
        for c in CLUSTERS:
            s = shape(lat.nx, lat.ny, c, item)
            if s is not None:
                t["k"][f"gsl_{c}"].max_dynamic_shared_size_bytes = max(
                    s[1], t["k"][f"gsl_{c}"].max_dynamic_shared_size_bytes)
                t["limits"][c] = cluster_limit(t["k"][f"gsl_{c}"], c, s[1], t["sms"])
    if cluster is not None:
        C, (R, smem) = cluster, shape(lat.nx, lat.ny, cluster, item)
    else:
        p = t["plans"].get(members)
        if p is None:
            p = t["plans"][members] = plan(lat.nx, lat.ny, members, item, t["limits"])
        C, R, smem = p
    k = t["k"][f"gsl_{C}"]
    if k.max_dynamic_shared_size_bytes < smem:  # (the kernels are shared by every lattice)
        k.max_dynamic_shared_size_bytes = smem
    n = u.shape[-1]
    k((members * C,), (THREADS,),
      (u, v, uo, vo, t["node"], np.int32(n), np.int32(lat.nx), np.int32(lat.ny), np.int32(R),
       np.int32(steps), par, dts, t["ax"], t["ay"]), shared_mem=smem)


class BatchedLattice(BatchedEuler):
    """An ensemble's launcher (ensemble.py) on a lattice: BatchedEuler's buffers and step-size
    rows, the members' steps of a block in one launch instead of graphs of one-step launches."""

    # steps between two finiteness checks: each is a host wait and a launch (gather, scatter)
    # that cost ~0.2-0.4 ms (H200, 20k vertices, 200,000 steps, µs a step with blocks of 4,096
    # against 16,384: float64 32 members 2.43 / 2.36, 64 members 4.78 / 4.69; float32 1.35 /
    # 1.31 and 1.76 / 1.72; a block is then 20-80 ms); a member that diverges goes back to the
    # start of its block
    check_every = 16384

    def launch_many(self, state, row: np.ndarray, count: int) -> None:
        self.launch(state, self._device_row(np.asarray(row)), count)

    def kernel(self, u, v, uo, vo, dts, steps: int) -> None:
        launch(self.s.lattice, u, v, uo, vo, self.E, self.par, dts, steps)
