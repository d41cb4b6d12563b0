// What the two cooperative RKM kernels share (curvature_persist.cu: a grid barrier between the
// stages; curvature_blocked.cu: one barrier an attempt): flags, the grid-wide barrier, the stage
// combination, the boundary enumeration and the stage-5 finish. docs/MODELS.md §1.3.
#pragma once
#include "curvature_ops.cuh"
#include "rkm_control.cuh"

#define FLAG_NEUMANN 1
#define FLAG_EXACT 2
#define TX 32          // tile width: one warp
#define SYNC_BAR 3     // sync[0..2]: error slots of attempts a % 3; sync[3]: the barrier counter

static __device__ __forceinline__ unsigned long long ld_acquire(const unsigned long long* p)
{
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// Grid-wide barrier on a counter that only grows within a launch (reset by the host before it):
// the block's writes are released by thread 0's red.release (cumulative over the CTA after
// bar.sync), and acquired by its ld.acquire polling. Measured on the H100: 1.13 µs with 128 blocks
// (atomicAdd + __threadfence: 1.47 µs; cooperative_groups grid.sync: 1.24 µs).
static __device__ __forceinline__ void grid_barrier(unsigned long long* bar, unsigned long long& target)
{
    __syncthreads();
    target += gridDim.x;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        asm volatile("red.release.gpu.global.add.u64 [%0], 1;" ::"l"(bar) : "memory");
        while ((long long)(ld_acquire(bar) - target) < 0) {
        }
    }
    __syncthreads();
}

// Products and sums rounded as written: the compiler may not contract them into FMAs, whose
// choice of operands can differ between the kernels that share these formulas (their states
// are compared bit for bit).
__device__ __forceinline__ float mul_rn(const float a, const float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(const double a, const double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(const float a, const float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(const double a, const double b) { return __dadd_rn(a, b); }

// The stage input u + Σ a_sm k_m with k_m = τ f_m (the operations of RungeKuttaMerson.step) from
// the values at one node: u, f1, f2 (stage 3 only), f3 and f4 (stages 4–5).
template <typename T>
__device__ __forceinline__ T stage_combine(const int stage, const T uu, const T a1, const T a2,
                                           const T a3, const T a4, const T tau)
{
    const T k1 = mul_rn(tau, a1);
    switch (stage) {
    case 1: return uu;
    case 2: return add_rn(uu, k1 / T(3));
    case 3: return add_rn(uu, add_rn(k1, mul_rn(tau, a2)) / T(6));
    case 4: return add_rn(add_rn(uu, k1 / T(8)), mul_rn(T(0.375), mul_rn(tau, a3)));
    default:
        return add_rn(add_rn(add_rn(uu, mul_rn(T(0.5), k1)), mul_rn(T(-1.5), mul_rn(tau, a3))),
                      mul_rn(T(2), mul_rn(tau, a4)));
    }
}

// The same from global memory at node g (L2 loads: other blocks wrote f during the launch).
template <typename T>
__device__ __forceinline__ T stage_in(const int stage, const T* u, const T* f1, const T* f2,
                                      const T* f3, const T* f4, const T tau, const int g)
{
    const T uu = __ldcg(u + g);
    const T a1 = stage >= 2 ? __ldcg(f1 + g) : T(0), a2 = stage == 3 ? __ldcg(f2 + g) : T(0);
    const T a3 = stage >= 4 ? __ldcg(f3 + g) : T(0), a4 = stage == 5 ? __ldcg(f4 + g) : T(0);
    return stage_combine(stage, uu, a1, a2, a3, a4, tau);
}

struct Grid {
    int n1, n2, nx1, ny1, ntx;
    bool neumann, exact;
};

// Boundary node q of 2(n1+1) + 2(n2−1): the rows j = 0 and j = n2, then the columns i = 0, n1.
static __device__ __forceinline__ void boundary_node(const int q, const Grid& G, int& i, int& j)
{
    if (q < G.nx1) { i = q; j = 0; }
    else if (q < 2 * G.nx1) { i = q - G.nx1; j = G.n2; }
    else { const int r = q - 2 * G.nx1; j = 1 + (r >> 1); i = (r & 1) ? G.n1 : 0; }
}

// Stage 5: the error estimate's bit pattern (non-negative doubles order as integers) ...
template <typename T>
__device__ __forceinline__ unsigned long long rkm_error_bits(const T k1, const T k3, const T k4,
                                                             const T k5)
{
    const T e = add_rn(add_rn(add_rn(mul_rn(T(0.2), k1), mul_rn(T(-0.9), k3)), mul_rn(T(0.8), k4)),
                       mul_rn(T(-0.1), k5));
    return (unsigned long long)__double_as_longlong((double)fabs(e));
}

// ... and u_new = u + (k1 + 4k4 + k5)/6.
template <typename T>
__device__ __forceinline__ T rkm_new(const T uu, const T k1, const T k4, const T k5)
{
    return add_rn(uu, add_rn(add_rn(k1, mul_rn(T(4), k4)), k5) / T(6));
}

// Stage 5 at node g: error estimate into the block max eb, u_new into un[g].
template <typename T>
__device__ __forceinline__ unsigned long long rkm_finish(T* un, const int g, const T uu, const T k1,
                                                         const T k3, const T k4, const T k5,
                                                         const unsigned long long eb)
{
    const unsigned long long b = rkm_error_bits(k1, k3, k4, k5);
    un[g] = rkm_new(uu, k1, k4, k5);
    return b > eb ? b : eb;
}
