// The device clock for schemes whose Δt is reduced into a slot by their own kernels (the triangle
// finite volumes, docs/MODELS.md shallow-water): one thread between the reduction and the update
// takes the step with the protocol of clock.cuh and leaves the step to apply in the slot (the
// update kernel applies min(*slot, its limit)). Compiled without FMA contraction.
#include "clock.cuh"

template <typename T>
__global__ void clock_slot(T* __restrict__ slot, const double* __restrict__ clk_in,
                           double* __restrict__ clk_out, double* __restrict__ hist)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const T dtc = *slot;
    const double d = clock_take((double)dtc, clk_in, clk_out, hist, true);
    *slot = (T)d;  // exact: d is dtc or the remaining time t_end − t, rounded as the host does
}
