// heat-1d, classic kernel (seed 003; SPEC §4): one launch per time step, global memory.
//   T_i' = Fo (T_{i+1} + T_{i-1}) + (1 - 2 Fo) T_i,  insulated ends T_{-1} = T_1, T_n = T_{n-2}.
// One thread per node; each thread reads its node and two neighbours (cached in L1/L2), writes one.

template <typename T>
__global__ void heat_step(const T* __restrict__ u, T* __restrict__ v, const int n, const T fo)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int l = (i > 0) ? i - 1 : 1;          // mirror at the insulated left end
    const int r = (i < n - 1) ? i + 1 : n - 2;  // mirror at the insulated right end
    v[i] = fo * (u[l] + u[r]) + (T(1) - T(2) * fo) * u[i];
}
