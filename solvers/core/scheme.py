"""The scheme protocol: what advances a simulation's state.

A model (`Simulation` subclass) holds parameters, scenarios, the mesh and the state; a *scheme*
holds the discretisation and advances that state. Every family has a `reference` scheme written
once with `xp` array code (the float64 reference, the CPU backend and the GPU "array" path) and,
where it has CUDA kernels, a `fused` scheme. `Simulation` picks the fused scheme on the GPU unless
the `kernel` parameter says "array" (that parameter exists only where a family has both).

    scheme = SchemeClass(sim)          built after sim._setup(): reads sim.params, sim.state,
                                       sim.mesh, sim.xp, sim.dtype (and may keep references)
    dt = scheme.step(t, dt_limit)      ONE accepted step from time t of at most dt_limit
                                       (None: no limit); updates sim.state in place or by
                                       rebinding its entries; returns the step taken (> 0);
                                       never changes sim.t or sim.steps
    k, t = scheme.run(count, t, t_end) optional, batched: up to `count` accepted steps from t
                                       without passing t_end (None: no end), keeping time with
                                       core.clock (or kernels/clock.cuh on the device) exactly as
                                       step-by-step stepping would; returns (steps taken, new t).
                                       Deterministic: the divergence replay re-runs a chunk.
    scheme.invalidate()                the state or a live parameter changed outside stepping:
                                       drop what was derived from them (cached Δt, graphs, ...)

`Simulation.scheme` is public for tests and benchmarks: replacing it between steps with another
scheme of the same family (a kernel variant, or a wrapper injecting a fault) is supported; a
scheme without `run` is stepped one step at a time by the base class.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Scheme(Protocol):
    def step(self, t: float, dt_limit: float | None) -> float: ...

    def invalidate(self) -> None: ...


class SchemeBase:
    """Convenience base: keeps the simulation and has nothing to invalidate."""

    def __init__(self, sim: Any):
        self.sim = sim

    def step(self, t: float, dt_limit: float | None) -> float:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.step")

    def invalidate(self) -> None:
        pass


__all__ = ["Scheme", "SchemeBase"]
