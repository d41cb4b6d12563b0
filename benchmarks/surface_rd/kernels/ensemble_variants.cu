// Kernels tried for the batched Gray-Scott step of an ensemble (issue 29's sweep; measured by
// benchmarks/surface_rd/ensemble_variants.py, figures in docs/DISTRIBUTED.md). Production's
// kernel, solvers/surface_rd/kernels/chemotaxis.cu gs_step_batch, is included and measured as it
// is. Every variant computes each vertex's update with the same operations in the same order, so
// all give the same bits. State (E, n) per species, members' (Du, Dv, F, k) in par, step sizes
// in dts.
//   gs_step_batch  production: one thread a (vertex, member)
//   v1n     the neighbour loop unrolled to 8 slots, every load issued before the sums
//   v5_G    G members a thread: the ring's indices and weights read once for G members
//   p8      persistent: one member per cluster of 8 blocks, `steps` steps a launch, the state in
//           global memory (L2 loads), a cluster barrier between steps
//   d8_512  persistent: the member's state in the cluster's distributed shared memory
#include <cooperative_groups.h>
#include "chemotaxis.cu"  // production's kernels (solvers/surface_rd/kernels): gs_step_batch
namespace cg = cooperative_groups;

template <typename T>
__device__ __forceinline__ void gs_rates(T ui, T vi, T lu, T lv, T Du, T Dv, T F, T kk, T dt,
                                         T& uo, T& vo)
{
    const T uvv = ui * vi * vi;
    uo = ui + dt * (Du * lu - uvv + F * (T(1) - ui));
    vo = vi + dt * (Dv * lv + uvv - (F + kk) * vi);
}

// The neighbour sums unrolled to KMAX slots with a guard (the same order of sums), the
// state read through L2 (__ldcg: the persistent kernel's blocks write it between steps)
template <typename T, int KMAX>
__device__ __forceinline__ void lap2(const T* fu, const T* fv, const int* __restrict__ nbr,
                                     const T* __restrict__ lap, int i, int P, int d, T ui, T vi,
                                     T& lu, T& lv)
{
    int j[KMAX]; T w[KMAX];
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
        if (k < d) { j[k] = nbr[(size_t)k * P + i]; w[k] = lap[(size_t)k * P + i]; }
    }
    T a[KMAX], b[KMAX];
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
        if (k < d) { a[k] = __ldcg(fu + j[k]); b[k] = __ldcg(fv + j[k]); }
    }
    lu = 0; lv = 0;
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
        if (k < d) { lu += w[k] * (a[k] - ui); lv += w[k] * (b[k] - vi); }
    }
}

// V3: persistent, one cluster of CL blocks per member, S steps per launch, cluster barrier
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r;
}

template <typename T, int CL>
__device__ __forceinline__ void persist_body(T* ua, T* va, T* ub, T* vb,
        const int* __restrict__ deg, const int* __restrict__ nbr, const T* __restrict__ lap,
        const int n, const int P, const T* __restrict__ par, const T* __restrict__ dts,
        const int steps)
{
    const int m = blockIdx.x / CL;
    const int r = cluster_rank();
    const size_t off = (size_t)m * n;
    const T dt = dts[m];
    const T* p = par + 4 * m;
    const T Du = p[0], Dv = p[1], F = p[2], kk = p[3];
    T* u0 = ua + off; T* v0_ = va + off; T* u1 = ub + off; T* v1_ = vb + off;
    const int stride = CL * blockDim.x;
    for (int s = 0; s < steps; ++s) {
        const T* fu = (s & 1) ? u1 : u0;
        const T* fv = (s & 1) ? v1_ : v0_;
        T* uo = (s & 1) ? u0 : u1;
        T* vo = (s & 1) ? v0_ : v1_;
        for (int i = r * blockDim.x + threadIdx.x; i < n; i += stride) {
            const T ui = __ldcg(fu + i), vi = __ldcg(fv + i);
            if (dt == T(0)) { uo[i] = ui; vo[i] = vi; continue; }
            T lu, lv;
            lap2<T, 8>(fu, fv, nbr, lap, i, P, deg[i], ui, vi, lu, lv);
            T a, b;
            gs_rates(ui, vi, lu, lv, Du, Dv, F, kk, dt, a, b);
            __stcg(uo + i, a); __stcg(vo + i, b);
        }
        cluster_sync();
    }
}

#define PERSIST(CL) \
template <typename T> __global__ void __cluster_dims__(CL, 1, 1) p##CL(T* ua, T* va, T* ub, T* vb, \
    const int* __restrict__ deg, const int* __restrict__ nbr, const T* __restrict__ lap, \
    const int n, const int P, const T* __restrict__ par, const T* __restrict__ dts, \
    const int steps) \
{ persist_body<T, CL>(ua, va, ub, vb, deg, nbr, lap, n, P, par, dts, steps); }
PERSIST(8)

// V4: one member per cluster of CL blocks, the member's state in the cluster's shared memory
// (block r owns vertices [r*chunk, (r+1)*chunk)), S steps per launch, cluster barrier per step.
template <typename T, int CL, int B>
__device__ __forceinline__ void dsm_body(const T* __restrict__ u_in, const T* __restrict__ v_in,
        T* __restrict__ u_out, T* __restrict__ v_out,
        const int* __restrict__ deg, const int* __restrict__ nbr, const T* __restrict__ lap,
        const int n, const int P, const T* __restrict__ par, const T* __restrict__ dts,
        const int steps, const int chunk)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* s = reinterpret_cast<T*>(smem_raw);
    cg::cluster_group cl = cg::this_cluster();
    const int r = (int)cl.block_rank();
    const int m = blockIdx.x / CL;
    const size_t off = (size_t)m * n;
    const T dt = dts[m];
    const int lo = r * chunk, hi = min(n, lo + chunk);
    const int tid = threadIdx.x;
    if (dt == T(0)) {
        for (int i = lo + tid; i < hi; i += B) {
            u_out[off + i] = u_in[off + i];
            v_out[off + i] = v_in[off + i];
        }
        return;
    }
    const T* p = par + 4 * m;
    const T Du = p[0], Dv = p[1], F = p[2], kk = p[3];
    for (int i = lo + tid; i < hi; i += B) {
        s[i - lo] = u_in[off + i];
        s[chunk + i - lo] = v_in[off + i];
    }
    cl.sync();
    for (int st = 0; st < steps; ++st) {
        T* su = s + (st & 1) * 2 * chunk;
        T* sd = s + (1 - (st & 1)) * 2 * chunk;
        for (int i = lo + tid; i < hi; i += B) {
            const T ui = su[i - lo], vi = su[chunk + i - lo];
            const int d = deg[i];
            T lu = 0, lv = 0;
#pragma unroll 6
            for (int k = 0; k < d; ++k) {
                const size_t o = (size_t)k * P + i;
                const int j = nbr[o];
                const T w = lap[o];
                const int q = j / chunk;
                const T* ru = cl.map_shared_rank(su, q);
                const int jj = j - q * chunk;
                lu += w * (ru[jj] - ui);
                lv += w * (ru[chunk + jj] - vi);
            }
            const T uvv = ui * vi * vi;
            sd[i - lo] = ui + dt * (Du * lu - uvv + F * (T(1) - ui));
            sd[chunk + i - lo] = vi + dt * (Dv * lv + uvv - (F + kk) * vi);
        }
        cl.sync();
    }
    const T* sf = s + (steps & 1) * 2 * chunk;
    for (int i = lo + tid; i < hi; i += B) {
        u_out[off + i] = sf[i - lo];
        v_out[off + i] = sf[chunk + i - lo];
    }
}

#define DSM(CL, B) \
template <typename T> __global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(B) d##CL##_##B( \
    const T* __restrict__ ui, const T* __restrict__ vi, T* __restrict__ uo, T* __restrict__ vo, \
    const int* __restrict__ deg, const int* __restrict__ nbr, const T* __restrict__ lap, \
    const int n, const int P, const T* __restrict__ par, const T* __restrict__ dts, \
    const int steps, \
    const int chunk) \
{ dsm_body<T, CL, B>(ui, vi, uo, vo, deg, nbr, lap, n, P, par, dts, steps, chunk); }
DSM(8, 512)

// V1n: unrolled neighbour loop, ordinary (L1) loads
template <typename T>
__global__ void v1n(const T* __restrict__ fu, const T* __restrict__ fv, T* __restrict__ u_out,
                   T* __restrict__ v_out, const int* __restrict__ deg, const int* __restrict__ nbr,
                   const T* __restrict__ lap, const int n, const int P, const T* __restrict__ par,
                   const T* __restrict__ dts)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int m = blockIdx.y;
    const size_t off = (size_t)m * n;
    const T dt = dts[m];
    fu += off; fv += off; u_out += off; v_out += off;
    const T* p = par + 4 * m;
    const T ui = fu[i], vi = fv[i];
    const int d = deg[i];
    int j[8]; T w[8];
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (k < d) { j[k] = nbr[(size_t)k * P + i]; w[k] = lap[(size_t)k * P + i]; }
    T a[8], b[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) if (k < d) { a[k] = fu[j[k]]; b[k] = fv[j[k]]; }
    T lu = 0, lv = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) if (k < d) { lu += w[k] * (a[k] - ui); lv += w[k] * (b[k] - vi); }
    gs_rates(ui, vi, lu, lv, p[0], p[1], p[2], p[3], dt, u_out[i], v_out[i]);
}

// V5: G members per thread (members blockIdx.y*G .. +G-1), the ring read once
template <typename T, int G, int KM>
__device__ __forceinline__ void v5_body(const T* __restrict__ fu, const T* __restrict__ fv,
        T* __restrict__ u_out, T* __restrict__ v_out, const int* __restrict__ deg,
        const int* __restrict__ nbr, const T* __restrict__ lap, const int n, const int P,
        const int E, const T* __restrict__ par, const T* __restrict__ dts)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int m0 = blockIdx.y * G;
    const int d = deg[i];
    int j[KM]; T w[KM];
#pragma unroll
    for (int k = 0; k < KM; ++k)
        if (k < d) { j[k] = nbr[(size_t)k * P + i]; w[k] = lap[(size_t)k * P + i]; }
#pragma unroll
    for (int g = 0; g < G; ++g) {
        const int m = m0 + g;
        if (m >= E) break;
        const size_t off = (size_t)m * n;
        const T* u = fu + off; const T* v = fv + off;
        const T ui = u[i], vi = v[i];
        T a[KM], b[KM];
#pragma unroll
        for (int k = 0; k < KM; ++k) if (k < d) { a[k] = u[j[k]]; b[k] = v[j[k]]; }
        T lu = 0, lv = 0;
#pragma unroll
        for (int k = 0; k < KM; ++k)
            if (k < d) { lu += w[k] * (a[k] - ui); lv += w[k] * (b[k] - vi); }
        const T dt = dts[m];
        const T* p = par + 4 * m;
        if (dt == T(0)) { u_out[off + i] = ui; v_out[off + i] = vi; continue; }
        gs_rates(ui, vi, lu, lv, p[0], p[1], p[2], p[3], dt, u_out[off + i], v_out[off + i]);
    }
}
#define V5(G) \
template <typename T> __global__ void v5_##G(const T* __restrict__ fu, const T* __restrict__ fv, \
    T* __restrict__ uo, T* __restrict__ vo, const int* __restrict__ deg, \
    const int* __restrict__ nbr, \
    const T* __restrict__ lap, const int n, const int P, const int E, const T* __restrict__ par, \
    const T* __restrict__ dts) \
{ v5_body<T, G, 8>(fu, fv, uo, vo, deg, nbr, lap, n, P, E, par, dts); }
V5(4) V5(8)
