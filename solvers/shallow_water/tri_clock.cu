// Device-side time keeping for batched steps on triangles (tri_gpu.FusedFV.run): between the
// Δt reduction and the cell update of step i, one thread clamps Δt to the end time and advances
// the clock exactly as Simulation._steps_unchecked does on the host, so that a batch of steps
// needs no host round trip and gives bit for bit the per-step results:
//   limit = t_end − t;  Δt_used = min(Δt, T(limit));  Δt_host = min(double(Δt), limit);
//   t = t_end if Δt_host >= limit·(1 − 1e−12) else t + Δt_host;
//   landed once t_end − t <= 1e−13·max(1, |t_end|); after landing a step applies Δt = 0.
// clock = {t, landed}; hist[i] = Δt_host of step i (0 after landing). Compiled without FMA
// contraction so the double arithmetic matches Python's.
template <typename T>
__global__ void tri_clock(T* __restrict__ dt_cur, double* __restrict__ clock,
                          double* __restrict__ hist, int i, double t_end, int has_end)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    double t = clock[0];
    const T dtc = *dt_cur;
    double d = 0.0;
    T used = T(0);
    if (clock[1] == 0.0) {
        if (has_end) {
            const double limit = t_end - t;
            used = fmin(dtc, T(limit));
            d = fmin((double)dtc, limit);
            t = (d >= limit * (1.0 - 1e-12)) ? t_end : t + d;
            if (t_end - t <= 1e-13 * fmax(1.0, fabs(t_end))) clock[1] = 1.0;
        } else {
            used = dtc;
            d = (double)dtc;
            t = t + d;
        }
    }
    *dt_cur = used;  // the update kernel applies min(*dt_cur, inf) = used
    hist[i] = d;
    clock[0] = t;
}
