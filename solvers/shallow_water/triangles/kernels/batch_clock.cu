// Device-side time keeping for batched steps on triangles (triangles/fused.py, TriFused.run):
// between the Δt reduction and the cell update of step i, one thread clamps Δt to the end time and
// advances the clock with the landing rule of core's clock.cuh, exactly as the host does
// (core/clock.py), so that a batch of steps needs no host round trip and gives bit for bit the
// per-step results:
//   Δt_used = min(Δt, T(t_end − t)) (what the update kernel applies, in the storage type T);
//   Δt_host = clock_clamp(double(Δt), t, t_end); t = clock_after_step(t, Δt_host, t_end);
//   landed once clock_landed(t, t_end); after landing a step applies Δt = 0.
// clock = {t, landed}; hist[i] = Δt_host of step i (0 after landing). Compiled without FMA
// contraction so the double arithmetic matches Python's.
#include "clock.cuh"

template <typename T>
__global__ void batch_clock(T* __restrict__ dt_cur, double* __restrict__ clock,
                            double* __restrict__ hist, int i, double t_end, int has_end)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    double t = clock[0];
    const T dtc = *dt_cur;
    double d = 0.0;
    T used = T(0);
    if (clock[1] == 0.0) {
        const bool end = has_end != 0;
        if (end) {
            const double limit = t_end - t;
            used = fmin(dtc, T(limit));
        } else {
            used = dtc;
        }
        d = clock_clamp((double)dtc, t, t_end, end);
        t = clock_after_step(t, d, t_end, end);
        if (clock_landed(t, t_end, end)) clock[1] = 1.0;
    }
    *dt_cur = used;  // the update kernel applies min(*dt_cur, inf) = used
    hist[i] = d;
    clock[0] = t;
}
