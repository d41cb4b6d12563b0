"""The time-landing rule, once on the host (its device twin is kernels/clock.cuh).

A run towards an end time t_end takes steps of the scheme's own size until the remaining time is
shorter; that last step is shortened to the remainder and lands *exactly* on t_end:

    limit  = t_end − t                                   (the most a step may take)
    dt     = min(dt_scheme, limit)
    t_new  = t_end   if dt ≥ limit·(1 − SNAP_RTOL)       (snap: no sliver left behind)
             t + dt  otherwise
    landed ⇔ t_end − t ≤ LAND_RTOL·max(1, |t_end|)

Every path that keeps time (the base class stepping one step at a time, a scheme that batches
steps on the host, a fused clock on the device) uses these functions or their device twins, so
batched and step-by-step runs give the same times bit for bit.
"""
from __future__ import annotations

import math

from .errors import NonFiniteStep, ParameterError

LAND_RTOL = 1e-13
SNAP_RTOL = 1e-12


def landed(t: float, t_end: float | None) -> bool:
    """Whether a run towards t_end (None: no end time) has arrived."""
    return t_end is not None and t_end - t <= LAND_RTOL * max(1.0, abs(t_end))


def limit(t: float, t_end: float | None) -> float | None:
    """The longest step allowed from t (None: unlimited)."""
    return None if t_end is None else t_end - t


def after_step(t: float, dt: float, t_end: float | None) -> float:
    """The time after a step of dt (already clamped to limit(t, t_end)) taken from t."""
    if t_end is not None and dt >= (t_end - t) * (1 - SNAP_RTOL):
        return t_end
    return t + float(dt)


def moves(t: float, dt: float) -> bool:
    """Whether a step of dt taken from t changes the clock (t + dt != t in double precision)."""
    return t + float(dt) != t


def stuck(model: str, t: float, dt: float | None) -> ParameterError:
    """The refusal of a run whose steps cannot advance the clock (issue 28: a checkpoint at
    t = 1e300 continued to 2e300 stepped for ever with t + Δt == t)."""
    ulp = math.ulp(t) if math.isfinite(t) else math.inf
    size = f"Δt = {dt:.6g}" if dt is not None else "its steps"
    return ParameterError(
        f"{model}: the clock cannot advance at t = {t:.6g} with {size}: t + Δt == t in double "
        f"precision (the clock resolves steps of at least {ulp / 2:.3g} there); allowed: a "
        f"run whose steps are above that, e.g. from a smaller t (a new simulation or a reset)")


def full_steps(t: float, dt: float, count: int, t_end: float | None) -> int:
    """How many of the next `count` steps of constant size dt are taken whole (neither shortened
    to land on t_end nor after landing), walking the clock exactly as after_step does."""
    if t_end is None:
        return count
    q = 0
    while q < count and not landed(t, t_end):
        if dt >= (t_end - t) * (1 - SNAP_RTOL):
            break
        t += dt
        q += 1
    return q


def replay(t: float, t_end: float | None, steps) -> tuple[int, float]:
    """Walk the clock through the step sizes a device clock recorded for a batch (it applied
    Δt = 0 once it had landed): (steps taken, t), exactly as after_step one step at a time.
    A non-finite or non-positive step raises NonFiniteStep (the base class then reports the
    divergence with the state from before the batch)."""
    k = 0
    for d in steps:
        if landed(t, t_end):
            break
        d = float(d)
        if not math.isfinite(d) or d <= 0:
            raise NonFiniteStep(f"step {k} of the batch has Δt = {d}")
        t = after_step(t, d, t_end)
        k += 1
    return k, t


__all__ = ["LAND_RTOL", "SNAP_RTOL", "landed", "limit", "after_step", "moves", "stuck",
           "full_steps", "replay"]
