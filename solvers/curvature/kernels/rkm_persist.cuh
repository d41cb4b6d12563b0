// What the two cooperative RKM kernels share (curvature_persist.cu: a grid barrier between the
// stages; curvature_blocked.cu: one barrier an attempt): flags, the grid-wide barrier, the stage
// combination, the boundary enumeration and the stage-5 finish. docs/MODELS.md §1.3.
#pragma once
#include "curvature_ops.cuh"
#include "rkm_control.cuh"
// the shared formulas below are rounded as written (add_rn, mul_rn), so both kernels give the
// same bits
#include "rounded.cuh"

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

// The grid of an n1 × n2-cell launch with `flags`, tiles `tile_x` nodes wide.
static __device__ __forceinline__ Grid make_grid(const int n1, const int n2, const int flags,
                                                 const int tile_x)
{
    Grid G;
    G.n1 = n1; G.n2 = n2; G.nx1 = n1 + 1; G.ny1 = n2 + 1;
    G.ntx = (n1 - 1 + tile_x - 1) / tile_x;
    G.neumann = flags & FLAG_NEUMANN;
    G.exact = flags & FLAG_EXACT;
    return G;
}

// The static shared memory both cooperative kernels keep (declared in their kernel body): the
// control block's doubles and ints, the stage times' scratch, the attempt's verdict and the
// error reduction's warp partials (NT threads a block).
#define RKM_PERSIST_SHARED(T, NT)               \
    __shared__ double sctl[8];                  \
    __shared__ int scti[16];                    \
    __shared__ T scz[5], szt[5];                \
    __shared__ int s_acc;                       \
    __shared__ unsigned long long red[(NT) / 32]

// An attempt's numbers from the control block (in shared memory): its time, its step, and the
// state buffers it reads (u) and writes (un).
template <typename T>
struct Attempt {
    double t, tau_d;
    T tau;
    const T* u;
    T* un;
};
template <typename T>
__device__ __forceinline__ Attempt<T> attempt_of(const double* sctl, const int* scti, T* u0, T* u1)
{
    const int cur = scti[I_CUR];
    return {sctl[C_T], sctl[C_TRY], T(sctl[C_TRY]), cur ? u1 : u0, cur ? u0 : u1};
}

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

// The start of attempt a in every block: ζ's time factors at the five stage times (exact
// forcing: threads 0–4 fill scz, szt) and the clearing of the error slot of attempt a + 1 (block
// 0; three slots rotate, so no barrier clears them).
template <typename T>
__device__ __forceinline__ void attempt_start(const int a, const int tid, const double t,
                                              const double tau_d, const bool exact, T* scz,
                                              T* szt, unsigned long long* sync)
{
    if (tid < 5 && exact) {
        const double c = tid == 0 ? 0.0 : (tid == 3 ? tau_d / 2.0 : (tid == 4 ? tau_d : tau_d / 3.0));
        const double ts = t + c;
        scz[tid] = T(cospi(ts));
        szt[tid] = T(-3.14159265358979323846 * sinpi(ts));
    }
    if (blockIdx.x == 0 && tid == 0) sync[(a + 1) % 3] = 0ull;
}

// The block's maximum of the error bit patterns eb (non-negative doubles order as integers) into
// the slot (atomicMax); red: one word a warp of the block's NT threads (blocks of 32 × NT/32).
template <int NT>
__device__ __forceinline__ void block_error_to(unsigned long long eb, unsigned long long* red,
                                               unsigned long long* slot, const int tid)
{
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, eb, o);
        eb = other > eb ? other : eb;
    }
    if (threadIdx.x == 0) red[threadIdx.y] = eb;
    __syncthreads();
    if (tid == 0) {
        for (int q = 1; q < NT / 32; ++q) eb = red[q] > eb ? red[q] : eb;
        atomicMax(slot, eb);
    }
}

// After the attempt's last grid barrier, in every block: the same decision from the same numbers
// (thread 0 runs the controller on the reduced maximum; the state buffer flips on acceptance).
// Returns whether the attempt was accepted.
__device__ __forceinline__ bool attempt_decide(double* sctl, int* scti, const unsigned long long* slot,
                                               int* s_acc, const int tid)
{
    if (tid == 0) {
        const double e = __longlong_as_double((long long)__ldcg(slot)) / 3.0;
        *s_acc = rkm_decide(sctl, scti, e) ? 1 : 0;
        if (*s_acc) scti[I_CUR] ^= 1;
    }
    __syncthreads();
    return *s_acc != 0;
}
