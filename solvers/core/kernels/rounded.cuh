// Arithmetic rounded as written: the compiler may not contract these products and sums into FMAs
// (nor split an explicit FMA), whose choice of operands can differ between kernels that must
// give the same bits (a fused pass and the pass it replaces, a kernel and its one-barrier twin).
// Included by the families' kernels (core's kernels/ is on every kernel's include path).
#pragma once

__device__ __forceinline__ float add_rn(const float a, const float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(const double a, const double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul_rn(const float a, const float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(const double a, const double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float div_rn(const float a, const float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(const double a, const double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float fma_rn(const float a, const float b, const float c)
{
    return __fmaf_rn(a, b, c);
}
__device__ __forceinline__ double fma_rn(const double a, const double b, const double c)
{
    return __fma_rn(a, b, c);
}
