"""Where the time of a persistent-kernel attempt goes (needs a CUDA device):

    python -m pdestudio.solvers.curvature.phases [willmore|mean-curvature] [N] [variant] [dtype]

Compiles curvature_persist.cu with -DPERSIST_PROFILE (thread 0 of blocks 0, grid/2 and grid−1
stamp %globaltimer at each phase of the first 64 attempts of a launch), runs 80 accepted steps on
`eoc-exact` and prints, per block, the median over attempts of each phase of each stage in ns:
tile load, φ edges, w, fluxes (Willmore), node and forcing, boundary and reduction, grid barrier;
and the attempt and the decision.
"""
from __future__ import annotations

import sys

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.core import backend

from . import fused as fz

PHASES = {0: "start", 1: "loaded", 2: "edges", 3: "w", 4: "flux", 5: "tile", 6: "bnd/red",
          7: "barrier"}


def main(argv=None):
    import cupy as cp
    argv = sys.argv[1:] if argv is None else argv
    model = argv[0] if argv else "willmore"
    nx = int(argv[1]) if len(argv) > 1 else 256
    dtype = argv[3] if len(argv) > 3 else "float64"
    sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", scenario="eoc-exact",
                         nx=nx)
    f = sim._fused
    variant = argv[2] if len(argv) > 2 else fz.DEFAULT_VARIANT[sim.willmore]
    if not f._setup_persistent(variant):
        raise SystemExit(f"no persistent kernel: {f.persist_error}")
    f.path = "persistent"
    sim.step(3)
    name = f"{'wm' if sim.willmore else 'mc'}_persist{variant}<{backend.CTYPES[dtype]}>"
    mod = backend._module(str(fz.PERSIST_FILE.resolve()), dtype, (name,),
                          ("-I" + str(fz.CU_FILE.parent), "-DPERSIST_PROFILE"),
                          cp.cuda.Device().id, True)
    kern = mod.get_function(name)
    if f._smem > 48 * 1024:
        kern.max_dynamic_shared_size_bytes = f._smem
    f.persist = (kern, variant, f.persist[2])
    f.run(80, None)
    cp.cuda.runtime.deviceSynchronize()
    stamps = cp.ndarray((3, 64, 48), dtype=cp.uint64, memptr=mod.get_global("g_prof"))
    P = stamps.get().astype(np.int64)
    print(f"{model} {nx}² {dtype}, variant {variant}, {f.persist[2]} blocks; attempts "
          f"{f.attempts}, rejected {f.rejected}")
    for b, label in enumerate(("block 0", "middle block", "last block")):
        R = np.array([ev for ev in P[b, 4:60] if ev[40] and ev[41] and ev[0]])
        if not len(R):
            continue
        print(f"{label}: attempt {np.median(R[:, 41] - R[:, 40]):.0f} ns, decision "
              f"{np.median(R[:, 41] - R[:, 39]):.0f} ns")
        for s in range(5):
            prev, row = None, {}
            for k in range(8):
                col = 8 * s + k
                if (R[:, col] > 0).all():
                    if prev is not None:
                        row[PHASES[k]] = int(np.median(R[:, col] - R[:, prev]))
                    prev = col
            print(f"  stage {s + 1}: {row}")


if __name__ == "__main__":
    main()
