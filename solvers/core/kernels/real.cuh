// Constants of the real types for kernels compiled by NVRTC (which has no <math.h>, so no
// INFINITY or HUGE_VAL): bit patterns, exact in float and double.
#pragma once

template <typename T> __device__ __forceinline__ T real_inf();
template <> __device__ __forceinline__ float real_inf<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double real_inf<double>()
{
    return __longlong_as_double(0x7ff0000000000000LL);
}
