// A frame of the live view in one pass a field (core/frame.py): dst = float32(src) and the finite
// (min, max) of dst into range[0..1] (inf, -inf where no value is finite), as the app's colour
// range reads it. Blocks reduce their own extremes and fold them into enc[0..1] with atomicMin /
// atomicMax on an ordered integer image of the float; the last block to finish (counted in
// enc[2]) writes the two floats and resets enc to (ENC_MAX, ENC_MIN, 0) for the next frame, so
// a frame costs one launch a field and no memset.
#include "real.cuh"  // (NVRTC has no <climits> and no INFINITY)

#define ENC_MAX 0x7fffffff
#define ENC_MIN (-0x7fffffff - 1)

static __device__ __forceinline__ int ordered(const float f)
{
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;  // negative floats: larger magnitude, smaller integer
}

static __device__ __forceinline__ float unordered(const int k)
{
    return __int_as_float(k >= 0 ? k : k ^ 0x7fffffff);
}

template <typename T>
__global__ void __launch_bounds__(256) frame_snapshot(const T* __restrict__ src,
                                                      float* __restrict__ dst, const long n,
                                                      int* __restrict__ enc,
                                                      float* __restrict__ range)
{
    float lo = real_inf<float>(), hi = -real_inf<float>();
    const long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = (float)src[i];
        dst[i] = v;
        if (isfinite(v)) {
            lo = fminf(lo, v);
            hi = fmaxf(hi, v);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        lo = fminf(lo, __shfl_down_sync(0xffffffffu, lo, o));
        hi = fmaxf(hi, __shfl_down_sync(0xffffffffu, hi, o));
    }
    __shared__ float plo[8], phi[8];
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {
        plo[warp] = lo;
        phi[warp] = hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x + 31) / 32; ++w) {
            lo = fminf(lo, plo[w]);
            hi = fmaxf(hi, phi[w]);
        }
        atomicMin(enc, ordered(lo));
        atomicMax(enc + 1, ordered(hi));
        __threadfence();
        if (atomicAdd(enc + 2, 1) == (int)gridDim.x - 1) {  // the last block
            range[0] = unordered(atomicExch(enc, ENC_MAX));
            range[1] = unordered(atomicExch(enc + 1, ENC_MIN));
            enc[2] = 0;
        }
    }
}
