"""Where the time of a persistent-kernel attempt goes (needs a CUDA device):

    python -m benchmarks.curvature.phases [willmore|mean-curvature] [N] [variant] [dtype]

Runs 80 accepted steps on `eoc-exact` with the fused scheme `FusedRKM(sim, path="persistent",
variant=..., profile=True)`: curvature_persist.cu compiled with -DPERSIST_PROFILE, where thread 0
of blocks 0, grid/2 and grid−1 stamp %globaltimer at each phase of the first 64 attempts of a
launch. Prints, per block, the median over attempts of each phase of each stage in ns: tile load,
φ edges, w, fluxes (Willmore), node and forcing, boundary and reduction, grid barrier; and the
attempt and the decision.

Beyond the public API it imports FusedRKM's variants and profiling stamps (curvature.fused).
"""
from __future__ import annotations

import sys

import numpy as np

from pdestudio import solvers
from pdestudio.solvers.curvature.fused import DEFAULT_VARIANT, FusedRKM

PHASES = {0: "start", 1: "loaded", 2: "edges", 3: "w", 4: "flux", 5: "tile", 6: "bnd/red",
          7: "barrier"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    model = argv[0] if argv else "willmore"
    nx = int(argv[1]) if len(argv) > 1 else 256
    dtype = argv[3] if len(argv) > 3 else "float64"
    sim = solvers.create(model, backend="cupy", dtype=dtype, kernel="fused", scenario="eoc-exact",
                         nx=nx)
    variant = argv[2] if len(argv) > 2 else DEFAULT_VARIANT[sim.willmore]
    sch = sim.scheme = FusedRKM(sim, path="persistent", variant=variant, profile=True)
    if sch.path != "persistent":
        raise SystemExit(f"no persistent kernel: {sch.persist_error}")
    sim.step(3)  # compile, warm up
    sch.run(80, sim.t, None)  # one launch: its first 64 attempts are stamped
    P = sch.phase_stamps().astype(np.int64)
    print(f"{model} {nx}² {dtype}, variant {variant}, {sch.persist[2]} blocks; attempts "
          f"{sch.attempts}, rejected {sim.rejected}")
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
