// The batched device clock: the time-landing rule on the device (the twin of
// solvers/core/clock.py) and the per-step protocol every fused path follows (host side:
// solvers/core/device_clock.py). Host and device must agree bit for bit, so the kernels that
// include it are compiled without FMA contraction where they do the time arithmetic in double.
//   limit  = t_end − t;   dt = min(dt_scheme, limit)
//   t_new  = t_end if dt ≥ limit·(1 − PDE_SNAP_RTOL) else t + dt
//   landed ⇔ t_end − t ≤ PDE_LAND_RTOL·max(1, |t_end|)
//
// The protocol. A clock record is 5 doubles {t, landed, i, t_end, has_end} in device memory,
// double-buffered by the step's parity (DeviceClock.args(i) gives clk_in, clk_out, hist): step i
// of a batch reads clk_in, takes
//     d = clock_take(dt_scheme, clk_in, clk_out, hist, writer)
// (dt_scheme already reduced on the device from the state, and clamped to a per-step limit if
// the scheme has one), applies d (0 once the run has landed: the rest of the batch is a no-op),
// and exactly one thread of the step (`writer`) stores the clock after the step in clk_out and d
// in hist[i]. The host replays hist with core/clock.py (clock.replay), so a batch of steps gives
// the same times and states bit for bit as stepping one at a time. Everything a step reads is in
// device memory, so CUDA graphs of steps replay from any clock. Ensembles keep one record pair
// per member (CLOCK_RECORD(base, m, parity)) and one history row per member.
#pragma once

#define PDE_LAND_RTOL 1e-13
#define PDE_SNAP_RTOL 1e-12
#define CLOCK_WORDS 5
#define CLOCK_RECORD(base, m, parity) ((base) + (size_t)(m) * (2 * CLOCK_WORDS) + (parity) * CLOCK_WORDS)

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

// One step of the protocol (see above): the step to apply (0 once landed), the clock after it
// written by `writer` into clk_out, the step into hist[i]. A non-finite or non-positive dt is
// recorded as it is (the host's replay reports it as a divergence).
__device__ __forceinline__ double clock_take(double dt, const double* __restrict__ clk_in,
                                             double* __restrict__ clk_out,
                                             double* __restrict__ hist, bool writer)
{
    const double t = clk_in[0], t_end = clk_in[3];
    const bool end = clk_in[4] != 0.0;
    bool landed = clk_in[1] != 0.0;
    double d = 0.0, tn = t;
    if (!landed) {
        d = clock_clamp(dt, t, t_end, end);
        tn = clock_after_step(t, d, t_end, end);
        landed = clock_landed(tn, t_end, end);
    }
    if (writer) {
        clk_out[0] = tn;
        clk_out[1] = landed ? 1.0 : 0.0;
        clk_out[2] = clk_in[2] + 1.0;
        clk_out[3] = t_end;
        clk_out[4] = clk_in[4];
        hist[(int)clk_in[2]] = d;
    }
    return d;
}
