// The time-landing rule on the device: the twin of solvers/core/clock.py, included by every fused
// clock (the triangle finite-volume batches, the Runge–Kutta–Merson controller, ...). Host and
// device must agree bit for bit, so the kernels that include it are compiled without FMA
// contraction where they do the time arithmetic in double.
//   limit  = t_end − t;   dt = min(dt_scheme, limit)
//   t_new  = t_end if dt ≥ limit·(1 − PDE_SNAP_RTOL) else t + dt
//   landed ⇔ t_end − t ≤ PDE_LAND_RTOL·max(1, |t_end|)
#pragma once

#define PDE_LAND_RTOL 1e-13
#define PDE_SNAP_RTOL 1e-12

__device__ __forceinline__ bool clock_landed(double t, double t_end, bool has_end)
{
    return has_end && t_end - t <= PDE_LAND_RTOL * fmax(1.0, fabs(t_end));
}

// The step actually taken from t: the scheme's dt clamped to the remaining time.
__device__ __forceinline__ double clock_clamp(double dt, double t, double t_end, bool has_end)
{
    return has_end ? fmin(dt, t_end - t) : dt;
}

// The time after a step of dt (already clamped) taken from t.
__device__ __forceinline__ double clock_after_step(double t, double dt, double t_end, bool has_end)
{
    return (has_end && dt >= (t_end - t) * (1.0 - PDE_SNAP_RTOL)) ? t_end : t + dt;
}
