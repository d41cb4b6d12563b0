"""The fused CUDA scheme of the curvature flows: RKM attempts decided on the device.

Two ways to run them, the same arithmetic:

* `persistent` (default for small grids where cooperative launches work): one cooperative kernel
  per run of steps. Its blocks own tiles of the grid and all take the same accept/reject decision,
  so a run of up to `CHECK_INTERVAL_PERSISTENT` accepted steps is one launch and one read-back.
  Two kernels:
  kernels/curvature_persist.cu separates the five stages of an attempt by grid-wide barriers (the
  TILES variants; Willmore, and mean curvature where the next one does not fit); for mean
  curvature kernels/curvature_blocked.cu keeps each block's tile with a halo of five nodes in
  shared memory, computes all five stages there and meets the other blocks once an attempt (the
  BLOCKED variants; one tile a block, all co-resident).
* `graph` (default for large grids; kernels/curvature.cu): an attempt is five stage kernels (one
  right-hand-side evaluation each, the stage combination fused into the load); the fifth also
  forms u_new and the error maximum, and its last block accepts or rejects, updates τ and t and
  flips the state buffer in a small control block in device memory. The host arms the control
  block, launches attempts (captured once as a CUDA graph of `GRAPH_ATTEMPTS` attempts and
  replayed; plain launches where capture is unavailable, or with path="launches") and reads the
  control block back once per batch: no per-step synchronisation. Attempts after the run's target
  (step count or end time) exit at once.

The host keeps time with core/clock.py (arming a run), the device with core's clock.cuh
(kernels/rkm_control.cuh). `FusedRKM`'s constructor options have the production defaults; tests
and benchmarks pass others through `sim.scheme = FusedRKM(sim, ...)`: the path, the persistent
kernel's tile (`variant`, a key of TILES), the launch grids (`grid` of the stage kernels,
`blocks` of the cooperative kernel), extra compile options (`options`, e.g. -D defines of the
benchmark variants of curvature.cu), and `profile` (the PERSIST_PROFILE phase stamps).
"""
from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from ..core import checks, clock
from ..core.backend import blocks_per_sm, device_props, load_kernels, on_stream
from ..core.errors import NonFiniteStep
from ..core.scheme import SchemeBase
from .reference import neumann_fill

KERNELS = Path(__file__).with_name("kernels")
CU_FILE = KERNELS / "curvature.cu"
PERSIST_FILE = KERNELS / "curvature_persist.cu"
BLOCKED_FILE = KERNELS / "curvature_blocked.cu"
# the tiles of the cooperative kernel per flow (willmore?): name -> (tile height TY of 32 × TY
# nodes, threads per block, resident blocks per SM asked of the register allocation), compiled
# as -DPERSIST_TY / -DPERSIST_THREADS / -DPERSIST_MINB. Measured on the H100 (µs per attempt,
# `python -m benchmarks.curvature.timing --parts attempts`): mean curvature 256² f64: 8 → 19.2,
# 16 → 19.5 (4 → 21.7, 16×2 threads → 21.4); 1024² f32: 8 → 80.0, 16 → 85.2 (4 → 93.0, 16×2 →
# 130.0); Willmore 128² f64: 8×2 → 21.8 (8 → 24.8, 16 → 30.0); 256² f64: 8×2 → 28.1, 8 → 28.9,
# 16 → 30.9 (4 → 32.0, 16×2 → 31.0)
TILES = {
    False: {"8": (8, 256, 2), "16": (16, 512, 1)},
    True: {"8": (8, 256, 2), "8x2": (8, 512, 2), "16": (16, 512, 1)},
}
# mean curvature's one-barrier kernel: name -> (tile side BT of BT × BT nodes, threads per block,
# resident blocks per SM), compiled as -DBLOCKED_T / -DBLOCKED_THREADS / -DBLOCKED_MINB
BLOCKED = {"b16": (16, 256, 2), "b16x2": (16, 512, 2), "b24": (24, 512, 1), "b32": (32, 512, 1)}
# mean curvature's default: the first of these whose tiles (one block each) all fit on the device
# at once, up to BLOCKED_MAX_NODES; else the five-barrier kernel's DEFAULT_VARIANT (up to
# PERSISTENT_MAX_NODES) or the graph path. µs per attempt on the H200 (eoc-exact, `python -m
# benchmarks.curvature.timing --parts attempts`): docs/BENCHMARKS.md, "Mean curvature: one grid
# barrier an attempt".
BLOCKED_FIRST = ("b16x2", "b32")
BLOCKED_MAX_NODES = 300_000
DEFAULT_VARIANT = {False: "8", True: "8x2"}  # the five-barrier kernel's tile
FALLBACK_VARIANT = DEFAULT_VARIANT[False]


def variants(willmore: bool) -> dict:
    """The persistent kernel's variants of a flow: TILES, and BLOCKED for mean curvature."""
    return dict(TILES[willmore]) if willmore else {**TILES[False], **BLOCKED}


def blocked_tiles(variant: str, n1: int, n2: int) -> int:
    """Blocks (= tiles) of a BLOCKED variant on an n1 × n2-cell grid."""
    bt = BLOCKED[variant][0]
    return -(-(n1 - 1) // bt) * -(-(n2 - 1) // bt)
# the persistent path wins on small grids (latency-bound: no launches, no host round trips) and
# the lean stage kernels of the graph path on large ones (bandwidth-bound). Crossover measured on
# the H100 (µs per attempt, persistent vs graph): mean curvature 256² f64 21 vs 35, 512² f32 49 vs
# 37, 1024² f32 160 vs 82; Willmore 256² 27.5 vs 57, 512² 71 vs 107.
PERSISTENT_MAX_NODES = {False: 100_000, True: 300_000}
PATHS = ("persistent", "graph", "launches")
BX, BY = 32, 8
BLOCK = (BX, BY)
GRAPH_ATTEMPTS = 32
CHECK_INTERVAL = 512  # accepted steps between two finiteness checks of the state (base class)
# the persistent path: a launch of CHECK_INTERVAL steps takes a few ms on a small grid and the
# GPU idles while the host checks and arms the next one (H200, 256² float32: 2048 steps a launch
# +9 %; docs/BENCHMARKS.md, "Longer batches on small grids")
CHECK_INTERVAL_PERSISTENT = 2048
PROF_SHAPE = (3, 64, 48)  # PERSIST_PROFILE stamps: blocks, PROF_ATTEMPTS, PROF_EVENTS
# indices into the control arrays (kernels/rkm_control.cuh)
C_T, C_TAU, C_TRY, C_TEND, C_EPS, C_LASTDT = range(6)
I_ACTIVE, I_STEPS, I_TARGET, I_CUR, I_FAILED, I_REJ, I_REJROW, I_HASEND, I_ATTEMPTS = range(9)
FLAG_NEUMANN, FLAG_EXACT = 1, 2


def lean_rows(willmore: bool, n1: int, n2: int) -> int:
    """Rows per warp walk of the lean stage kernels (lean_rows of curvature.cu): 32, halved down
    to 4 while there are fewer than 8192 (strip, segment) work items."""
    strips = -(-n1 // (28 if willmore else 30))
    rows = 32
    while rows > 4 and strips * ((n2 + rows) // rows) < 8192:
        rows //= 2
    return rows


def lean_grid(willmore: bool, n1: int, n2: int) -> tuple[int, int]:
    """The grid the lean stage kernels want with blocks of (32, 8): one warp per work item, a strip
    of 30 (mean curvature) / 28 (Willmore) columns walking a segment of lean_rows rows. Any other
    grid is correct (the warps deal out the items)."""
    strips = -(-n1 // (28 if willmore else 30))
    rows = lean_rows(willmore, n1, n2)
    return strips, -(-((n2 + rows) // rows) // BY)


def stage_kernels(dtype: str, options: tuple[str, ...] = ()) -> dict:
    """The stage and single right-hand-side kernels of curvature.cu."""
    return load_kernels(CU_FILE, dtype, ["mc_stage", "wm_stage", "mc_rhs", "wm_rhs",
                                         "rkm_arm_ahead"], options=tuple(options))


def persistent_kernel(dtype: str, willmore: bool, variant: str, options: tuple[str, ...] = (),
                      profile: bool = False):
    """(RawKernel, dynamic shared-memory bytes, stamp reader or None) of the cooperative kernel
    with the tile `variant`; the shared-memory size comes from the kernel file (persist_smem)."""
    import cupy as cp
    return _persistent_kernel(dtype, willmore, variant, tuple(options), profile,
                              cp.cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _persistent_kernel(dtype, willmore, variant, options, profile, device):
    import cupy as cp
    if variant in BLOCKED and not willmore:
        if profile:
            raise ValueError("profile=True: the phase stamps are in curvature_persist.cu only")
        side, threads, minb = BLOCKED[variant]
        opts = (f"-DBLOCKED_T={side}", f"-DBLOCKED_THREADS={threads}", f"-DBLOCKED_MINB={minb}",
                *options)
        ks = load_kernels(BLOCKED_FILE, dtype, ["mc_blocked", "blocked_smem"], options=opts,
                          cooperative=True)
        sizes = cp.zeros(1, dtype=cp.int32)
        ks["blocked_smem"]((1,), (1,), (sizes,))
        nbytes = int(sizes.get()[0])
        kern = ks["mc_blocked"]
        if nbytes > 48 * 1024:
            kern.max_dynamic_shared_size_bytes = nbytes
        return kern, nbytes, None
    ty, threads, minb = TILES[willmore][variant]
    name = "wm_persist" if willmore else "mc_persist"
    opts = (f"-DPERSIST_TY={ty}", f"-DPERSIST_THREADS={threads}", f"-DPERSIST_MINB={minb}",
            *options, *(("-DPERSIST_PROFILE",) if profile else ()))
    names = [name, "persist_smem"] + (["persist_prof"] if profile else [])
    ks = load_kernels(PERSIST_FILE, dtype, names, options=opts, cooperative=True)
    sizes = cp.zeros(2, dtype=cp.int32)
    ks["persist_smem"]((1,), (1,), (sizes,))
    nbytes = int(sizes.get()[1 if willmore else 0])
    kern = ks[name]
    if nbytes > 48 * 1024:
        kern.max_dynamic_shared_size_bytes = nbytes
    return kern, nbytes, ks.get("persist_prof")


class FusedRKM(SchemeBase):
    """Buffers, control block and launches of the fused path of one simulation.

    Run-ahead (the graph path; `Simulation.step(n, ahead=m)`): a run with no end time may start
    the next run of m steps before its host wait, on a spare set of state buffers and control
    block (a LANE) armed on the device from the state and controller the run ends with, so the
    GPU is not idle while the host hands a frame over and calls again. The next run of m steps
    from that time adopts it (the lanes swap); any other call, or a change of the state or of a
    parameter (`settle`, which the Simulation calls first), leaves it unused. The main lane is
    never written by a run ahead, so the state the caller reads between calls is the run's own.

    path     None (by size: persistent where a BLOCKED variant fits up to BLOCKED_MAX_NODES or
             up to PERSISTENT_MAX_NODES, else graph), "persistent"
             (the graph path where cooperative launches fail: `persist_error` says why), "graph",
             or "launches" (the stage kernels launched one by one, no CUDA graph)
    variant  the persistent kernel's variant, a key of variants(willmore) (default: for mean
             curvature the first of BLOCKED_FIRST that fits, else DEFAULT_VARIANT)
    grid     the stage kernels' launch grid (default lean_grid)
    blocks   the cooperative kernel's number of blocks (default: all tiles, at most the resident
             blocks of the device; a BLOCKED variant always runs one block a tile)
    options  extra compile options of the kernels (benchmark variants)
    profile  compile the cooperative kernel with its phase stamps (phase_stamps())
    """

    def __init__(self, sim, path: str | None = None, variant: str | None = None,
                 grid: tuple[int, int] | None = None, blocks: int | None = None,
                 options: tuple[str, ...] = (), profile: bool = False):
        import cupy as cp
        super().__init__(sim)
        self.cp = cp
        w = sim.willmore
        if path is not None and path not in PATHS:
            raise ValueError(f"path {path!r}; allowed: {', '.join(PATHS)}")
        if variant is not None and variant not in variants(w):
            raise ValueError(f"variant {variant!r}; allowed: {', '.join(variants(w))}")
        self.variant = variant or DEFAULT_VARIANT[w]
        self.options = tuple(options)
        self.k = stage_kernels(sim.dtype, self.options)
        self.stage = self.k["wm_stage" if w else "mc_stage"]
        self.rhs_kernel = self.k["wm_rhs" if w else "mc_rhs"]
        phi = sim.state["phi"]
        self.u = [phi, cp.empty_like(phi)]
        self.u[1][...] = phi
        self.ks = [cp.zeros_like(phi) for _ in range(4)]
        self.ctl = cp.zeros(8, dtype=cp.float64)
        self.cti = cp.zeros(16, dtype=cp.int32)
        self.err = cp.zeros(1, dtype=cp.uint64)
        self.count = cp.zeros(1, dtype=cp.uint32)
        self.cur = 0
        self.attempts = 0  # in the last run (sim.controller.rejected: rejected ones)
        self.last_dt = 0.0
        if sim.exact is not None:
            self.tx, self.ty = sim.exact.tables(sim.dtype)
            self.coef = sim.exact.coef
        else:
            self.tx = self.ty = self.coef = cp.zeros(1, dtype=sim.dtype)
        n2p1, n1p1 = phi.shape
        self.n1, self.n2 = n1p1 - 1, n2p1 - 1
        flags = (FLAG_NEUMANN if sim.neumann else 0) | (FLAG_EXACT if sim.exact is not None else 0)
        real = sim.real
        self.scalars = (np.int32(self.n1), np.int32(self.n2), real(1.0 / sim.h1),
                        real(1.0 / sim.h2), real(sim.params["F"]), np.int32(flags))
        self.grid = tuple(grid) if grid is not None else lean_grid(w, self.n1, self.n2)
        # the stage kernels' arguments (fixed pointers: what the CUDA graph captures)
        self.stage_args = [(np.int32(s), self.u[0], self.u[1], *self.ks, self.tx, self.ty,
                            self.coef, self.ctl, self.cti, self.err, self.count, *self.scalars)
                           for s in range(1, 6)]
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.graph = False if path == "launches" else None
        self.ahead = 0         # steps to run ahead after the next run (set by Simulation._run)
        self._spare = None     # the other lane's buffers, control block, arguments and graph
        self._pending = None   # the run queued ahead: {"count", "t"}
        self._inflight = False  # work queued ahead that no host wait has seen finish
        self.adopted = 0  # runs that were queued ahead and taken up (tests)
        self.graph_error = None
        self.sync = cp.zeros(4, dtype=cp.uint64)  # persistent path: 3 error slots, barrier count
        self.persist = None  # (kernel, threads, blocks) once set up
        self.persist_error = None
        self._prof = None  # the stamp reader of a profile=True cooperative kernel
        nodes = (self.n1 + 1) * (self.n2 + 1)
        if variant is not None:
            choices = [variant]
        else:  # by size: the one-barrier kernel where it fits, then the five-barrier one
            blocked = [] if w or profile or nodes > BLOCKED_MAX_NODES else list(BLOCKED_FIRST)
            five = path == "persistent" or nodes <= PERSISTENT_MAX_NODES[w]
            choices = blocked + ([DEFAULT_VARIANT[w]] if five else [])
        want = path or ("persistent" if choices else "graph")
        persistent = want == "persistent" and self._setup_persistent(choices, blocks, profile)
        self.path = "persistent" if persistent else "graph"
        sim.check_interval = (CHECK_INTERVAL_PERSISTENT if self.path == "persistent"
                              else CHECK_INTERVAL)

    def _setup_persistent(self, choices: list[str], blocks: int | None, profile: bool) -> bool:
        """Compile the cooperative kernel of the first variant in `choices` that fits and size its
        grid; False (graph path, `persist_error` says why) where none fits or the device or the
        driver cannot launch cooperatively."""
        cp = self.cp
        try:
            dev = cp.cuda.Device()
            if not dev.attributes.get("CooperativeLaunch", 1):
                raise RuntimeError("the device does not support cooperative launches")
            props = device_props(dev.id)
            self._nsm = nsm = props["multiProcessorCount"]
            why = "no persistent variant for this grid"
            for v in choices:
                kern, smem, self._prof = persistent_kernel(self.sim.dtype, self.sim.willmore, v,
                                                           self.options, profile)
                if v in BLOCKED and not self.sim.willmore:  # one block a tile, all resident
                    threads = BLOCKED[v][1]
                    tiles = blocked_tiles(v, self.n1, self.n2)
                    if tiles > nsm * blocks_per_sm(kern, threads, props, smem):
                        why = (f"variant {v}: {tiles} tiles, one block each, do not fit on the "
                               "device at once")
                        continue
                    if blocks not in (None, tiles):
                        why = f"variant {v} runs one block a tile ({tiles}), not blocks={blocks}"
                        continue
                    grid = tiles
                else:
                    ty, threads, _ = TILES[self.sim.willmore][v]
                    bps = blocks_per_sm(kern, threads, props, smem)
                    if bps < 1:
                        why = f"variant {v}: the persistent kernel does not fit on one SM"
                        continue
                    tiles = -(-(self.n1 - 1) // 32) * -(-(self.n2 - 1) // ty)
                    grid = blocks or max(1, min(tiles, nsm * bps))
                self.variant, self.persist, self._smem = v, (kern, threads, grid), smem
                self._choices = choices[choices.index(v) + 1:]
                return True
            raise RuntimeError(why)
        except Exception as e:  # noqa: BLE001 - any failure means: use the graph path
            self.persist = None
            self.persist_error = f"{type(e).__name__}: {e}"
            return False

    # ---- one attempt, as launches ----------------------------------------------------------
    def _launch_attempt(self):
        for args in self.stage_args:
            self.stage(self.grid, BLOCK, args)

    def _capture(self):
        """A CUDA graph of GRAPH_ATTEMPTS attempts (kernel arguments are fixed pointers)."""
        cp = self.cp
        try:
            with on_stream(self.stream):
                self.stream.begin_capture()
                try:
                    for _ in range(GRAPH_ATTEMPTS):
                        self._launch_attempt()
                finally:
                    graph = self.stream.end_capture()
            self.graph = graph
            try:
                graph.upload(self.stream)  # instantiate now rather than on the first launch
            except Exception:
                pass
        except Exception as e:  # no graph support: plain launches, same device-side control
            self.graph = False
            self.graph_error = f"{type(e).__name__}: {e}"
            cp.cuda.runtime.deviceSynchronize()

    def _launch_batch(self, n_batches: int):
        with on_stream(self.stream):
            for _ in range(n_batches):
                if self.graph:
                    self.graph.launch(self.stream)
                else:
                    for _ in range(GRAPH_ATTEMPTS):
                        self._launch_attempt()

    def _launch_persistent(self) -> bool:
        """The whole armed run in one cooperative launch (False where the launch was refused and
        the graph path takes over)."""
        cp = self.cp
        while True:
            kern, threads, grid = self.persist
            try:
                with on_stream(self.stream):
                    self.sync.fill(0)
                    kern((grid,), (32, threads // 32),
                         (self.u[0], self.u[1], *self.ks, self.tx, self.ty, self.coef, self.ctl,
                          self.cti, self.sync, *self.scalars), shared_mem=self._smem)
                break
            except cp.cuda.driver.CUDADriverError as e:
                # more blocks than the device holds at once (our occupancy estimate was high):
                # one block fewer per SM; any other refusal: the graph path from now on
                if "TOO_LARGE" in str(e) and self.variant in BLOCKED and self._choices:
                    # one tile a block needs them all resident: the next variant
                    if self._setup_persistent(self._choices, None, False):
                        continue
                elif "TOO_LARGE" in str(e) and grid > self._nsm and self.variant not in BLOCKED:
                    self.persist = (kern, threads, grid - self._nsm)
                    continue
                self.persist_error = f"{type(e).__name__}: {e}"
                self.path = "graph"
                self.sim.check_interval = CHECK_INTERVAL
                self._capture()
                return False  # run() goes on with graph batches (the control block is armed)
        return True

    # ---- the scheme protocol ---------------------------------------------------------------
    def arm(self, count: int, t: float, t_end: float | None) -> None:
        """Write the control block of a run of up to `count` accepted steps from t towards t_end
        (None: no end), on the scheme's stream after the work queued on the current one
        (set_field, a restore)."""
        cp = self.cp
        limit = clock.limit(t, t_end)
        ctl = np.zeros(8)
        ctl[C_T] = t
        tau = self.sim.controller.tau
        ctl[C_TAU] = tau
        ctl[C_TRY] = tau if limit is None else min(tau, limit)
        ctl[C_TEND] = 0.0 if t_end is None else t_end
        ctl[C_EPS] = self.sim.controller.tolerance  # the parameter or its round-off floor
        cti = np.zeros(16, dtype=np.int32)
        cti[I_ACTIVE] = 1
        cti[I_TARGET] = count
        cti[I_CUR] = self.cur
        cti[I_HASEND] = t_end is not None
        self.stream.wait_event(cp.cuda.get_current_stream().record())
        with on_stream(self.stream):
            self.ctl.set(ctl, stream=self.stream)
            self.cti.set(cti, stream=self.stream)

    def run(self, count: int, t: float, t_end: float | None) -> tuple[int, float]:
        """Up to `count` accepted steps from t without passing t_end: (steps taken, new t).
        NonFiniteStep where an error estimate is not finite or 200 attempts in a row are
        rejected (the state stays at the last accepted step). With `ahead` set (class
        docstring), the next run is queued before the wait."""
        ahead, self.ahead = self.ahead, 0
        if count <= 0 or clock.landed(t, t_end):
            return 0, t
        if self.path == "graph" and self.graph is None:
            self._capture()
        ahead = ahead if t_end is None and self.path == "graph" else 0
        if ahead and self._spare is None:
            self._make_spare()
        adopted = self._adopt(count, t, t_end)
        if not adopted:  # a run queued ahead and not adopted runs first on this stream,
            self.arm(count, t, t_end)  # in the spare lane: it changes nothing here
        done = 0
        out = None
        if self.path == "persistent" and self._launch_persistent():
            self._checks_ahead(count)
            out, ctl = self._read_back()
            done = int(out[I_STEPS])
        rkm = self.sim.controller
        attempts_per_step = self._attempts_per_step()
        first = True
        while self.path == "graph":
            need = (count - done) * attempts_per_step
            if not (first and adopted):  # an adopted run's first batch is queued already
                self._launch_batch(max(1, math.ceil(need / GRAPH_ATTEMPTS)))
            if first:
                self._checks_ahead(count)
            else:
                checks.stale()
            then = (lambda: self._queue_ahead(ahead)) if first and ahead else None
            first = False
            out, ctl = self._read_back(then)  # the one wait of the batch
            done = int(out[I_STEPS])
            if self._pending is not None:
                self._pending["t"] = float(ctl[C_T])
            if not out[I_ACTIVE]:
                break
            self._pending = None  # queued ahead from a run that needed another batch
        rkm.rejected = int(out[I_REJ])
        self.attempts = int(out[I_ATTEMPTS])
        self.cur = int(out[I_CUR])
        rkm.tau = float(ctl[C_TAU])
        self.last_dt = float(ctl[C_LASTDT])
        self.sim.state["phi"] = self.u[self.cur]
        if out[I_FAILED]:
            self._pending = None
            raise NonFiniteStep("RKM: non-finite error estimate or 200 rejections in a row")
        return done, float(ctl[C_T])

    # ---- run-ahead (class docstring) --------------------------------------------------------
    @property
    def runs_ahead(self) -> bool:
        """The graph path runs ahead; the persistent one ignores `ahead`."""
        return self.path == "graph"

    LANE = ("u", "ctl", "cti", "err", "count", "stage_args", "graph")

    def _make_spare(self) -> None:
        cp = self.cp
        u = [cp.empty_like(self.u[0]), cp.empty_like(self.u[0])]
        ctl, cti = cp.zeros_like(self.ctl), cp.zeros_like(self.cti)
        err, count = cp.zeros_like(self.err), cp.zeros_like(self.count)
        args = [(a[0], u[0], u[1], *a[3:10], ctl, cti, err, count, *a[14:])
                for a in self.stage_args]
        self._spare = {"u": u, "ctl": ctl, "cti": cti, "err": err, "count": count,
                       "stage_args": args, "graph": False if self.graph is False else None}
        if self.graph is not False:
            self._swap()
            try:
                self._capture()
            finally:
                self._swap()

    def _swap(self) -> None:
        for name in self.LANE:
            mine = getattr(self, name)
            setattr(self, name, self._spare[name])
            self._spare[name] = mine

    def _adopt(self, count: int, t: float, t_end: float | None) -> bool:
        """Take the run queued ahead as this one where it is: `count` steps from t, no end."""
        p, self._pending = self._pending, None
        if p is None or t_end is not None or p["count"] != count or p["t"] != t:
            return False
        self._swap()
        self.cur = 0
        self.adopted += 1
        return True

    def _queue_ahead(self, count: int) -> None:
        """Queue, after this run, the next run of `count` steps in the spare lane."""
        v = self._spare
        n = self.u[0].size
        with on_stream(self.stream):
            self.k["rkm_arm_ahead"]((min(-(-n // 256), 4096),), (256,),
                                    (self.u[0], self.u[1], self.ctl, self.cti, v["u"][0],
                                     v["u"][1], v["ctl"], v["cti"], np.int64(n),
                                     np.int32(count)))
        self._swap()
        try:
            self._launch_batch(max(1, math.ceil(count * self._attempts_per_step()
                                                / GRAPH_ATTEMPTS)))
        finally:
            self._swap()
        self._pending = {"count": count, "t": None}
        self._inflight = True

    def settle(self) -> None:
        """Wait for a run queued ahead (it is not adopted after this): before the state or a
        parameter changes, or this scheme is dropped."""
        self._pending = None
        if self._inflight:
            self.stream.synchronize()
            self._inflight = False

    _host = None

    def _read_back(self, then=None) -> tuple[np.ndarray, np.ndarray]:
        """The control ints and floats of the run so far, with one host wait (both copied to
        pinned memory on the scheme's stream, then the stream waited for). `then`: queues more
        work after the copies (a run ahead) that the wait does not wait for."""
        if self._host is None:
            import cupyx
            self._host = (cupyx.empty_pinned(self.cti.shape, np.int32),
                          cupyx.empty_pinned(self.ctl.shape, np.float64))
        hi, hc = self._host
        self.cti.get(stream=self.stream, out=hi, blocking=False)
        self.ctl.get(stream=self.stream, out=hc, blocking=False)
        if then is None:
            self.stream.synchronize()
            self._inflight = False
        else:
            copied = self.stream.record()
            then()
            copied.synchronize()
        return hi.copy(), hc.copy()

    def _checks_ahead(self, count: int) -> None:
        """The chunk's checks (core/checks.py) queued before the run's read-back, on the buffer
        the run ends in when it takes all its `count` steps (each accepted step flips the
        buffer on the device); where it ends in the other buffer (a run that lands on t_end) or
        took a second batch of attempts, they are made again after the wait. They run on the
        current stream between two event waits: queued on the scheme's own stream instead, the
        run alone lost 1-2 % of its steps/s (H100, 1024², against 1 % gained this way; docs/
        BENCHMARKS.md, "One host wait a frame")."""
        self.sim.state["phi"] = self.u[self.cur ^ (count & 1)]
        current = self.cp.cuda.get_current_stream()
        current.wait_event(self.stream.record())
        checks.before_wait()
        self.stream.wait_event(current.record())

    def _attempts_per_step(self) -> float:
        """Attempts an accepted step took in the last run (1 before any): the graph path sizes
        a run's first batch of attempts by it, so that a second batch (one more host round trip,
        the GPU idle meanwhile) is the exception."""
        accepted = self.attempts - self.sim.controller.rejected
        return self.attempts / accepted if self.attempts > 0 and accepted > 0 else 1.0

    def step(self, t: float, dt_limit: float | None) -> float:
        """One accepted step (for callers that step one at a time): the step τ taken."""
        self.run(1, t, None if dt_limit is None else t + dt_limit)
        return self.last_dt

    # ---- single right-hand-side evaluation (tests, benchmarks) -----------------------------
    def rhs_args(self, t: float, u, f) -> tuple:
        """The rhs kernel's arguments: f(t, u) into f."""
        return (u, f, self.tx, self.ty, self.coef, np.float64(t), *self.scalars)

    def rhs(self, t: float, u, out=None):
        """f(t, u) on all nodes by the rhs kernel (one launch on this scheme's grid) into `out`
        (default: a new array); Neumann boundary nodes copy their inner neighbours."""
        cp = self.cp
        u = cp.ascontiguousarray(u, dtype=self.sim.dtype)
        f = cp.empty_like(u) if out is None else out
        self.rhs_kernel(self.grid, BLOCK, self.rhs_args(t, u, f))
        if self.sim.neumann:
            neumann_fill(f)
        return f

    def phase_stamps(self) -> np.ndarray:
        """%globaltimer stamps (ns) of the last cooperative launch (profile=True), shape
        PROF_SHAPE: [block 0 | middle block | last block, attempt, event] (curvature_persist.cu)."""
        cp = self.cp
        out = cp.zeros(int(np.prod(PROF_SHAPE)), dtype=cp.uint64)
        self._prof((1,), (256,), (out, np.int32(out.size)))
        return out.get().reshape(PROF_SHAPE)
