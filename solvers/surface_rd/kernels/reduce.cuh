// Helpers of the chemotaxis kernels (positive.cu, chemotaxis_imex.cu): products rounded on their
// own (no FMA contraction), expm1, and the maximum of a non-negative loss rate over a block,
// then over the grid by one atomicMax on the bit pattern (λ ≥ +0, so the bits order like the
// values).
#pragma once

template <typename T> struct Fx;
template <> struct Fx<float> {
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float expm1(float a) { return expm1f(a); }
    static __device__ __forceinline__ void atomic_max(float* slot, float v)
    {
        atomicMax(reinterpret_cast<int*>(slot), __float_as_int(v));
    }
};
template <> struct Fx<double> {
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ __forceinline__ double expm1(double a) { return ::expm1(a); }
    static __device__ __forceinline__ void atomic_max(double* slot, double v)
    {
        atomicMax(reinterpret_cast<long long*>(slot), __double_as_longlong(v));
    }
};

// block maximum: warp shuffles, then the warps' maxima through shared memory, then one atomic
template <typename T>
__device__ __forceinline__ void block_max_into(T lam, T* __restrict__ lam_slot)
{
    for (int w = 16; w > 0; w >>= 1) lam = fmax(lam, __shfl_down_sync(0xffffffffu, lam, w));
    __shared__ T wmax[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) wmax[warp] = lam;
    __syncthreads();
    if (warp == 0) {
        lam = lane < (blockDim.x + 31) / 32 ? wmax[lane] : T(0);
        for (int w = 16; w > 0; w >>= 1) lam = fmax(lam, __shfl_down_sync(0xffffffffu, lam, w));
        if (lane == 0) Fx<T>::atomic_max(lam_slot, lam);
    }
}

