// Unstructured finite volumes on triangles: the kernel bodies shared by the one- and two-layer
// systems (one_layer.cu, two_layer.cu). The per-edge physics is `Flux<E, NL, SCHEME>::apply` of
// ../../kernels/riemann.cuh, the device twin of riemann.py (E: the compute type; T: the storage
// type of the state).
//
// State W is structure-of-arrays: W[k*M + cell], k < NV = 3 NL. Per-edge tables (edges sorted by
// their lower-numbered cell): L, R (-1 = wall), posL/posR = slot*M + cell, nx, ny, len.
//
// Three assemblies of the update W_i -= dt/|V_i| sum_edges |E| D:
//   slots   edge kernel writes each side's contribution into its own accumulator slot
//           acc[k*3M + slot*M + cell] (no races, no atomics; docs/MODELS.md [P4]), then cell_dt and
//           cell_update sum the three slots
//   atomic  edge kernel atomicAdds into acc[k*M + cell] (zeroed every step)
//   cell    one thread per cell computes the fluxes of its three edges (each interior edge twice)
//           and writes the sum and its local step at once
// The step dt = min_i 2 cfl |V_i| / sum_j |E_ij| s_ij comes from a block reduction and one
// atomicMin on the bits of a positive float (NaN and inf lose), the same-step form.
//
// The carbuncle cure (one layer, riemann.py): sensor_body writes each cell's shock sensor S (the
// largest compression over its three edges) before the flux kernels, which give every edge
// nu = sw_nu(S_L, S_R); S == nullptr (two layers, or shock_fix off): nu = 0.
#pragma once

#include "riemann.cuh"

template <typename T> __device__ __forceinline__ T inf_val();
template <> __device__ __forceinline__ float inf_val<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double inf_val<double>() {
    return __longlong_as_double(0x7ff0000000000000LL);
}

template <typename T> struct Bits;
template <> struct Bits<float> { typedef unsigned int type; };
template <> struct Bits<double> { typedef unsigned long long type; };

__device__ __forceinline__ void atomic_min_pos(float* p, float v) {
    atomicMin(reinterpret_cast<unsigned int*>(p), __float_as_uint(v));
}
__device__ __forceinline__ void atomic_min_pos(double* p, double v) {
    atomicMin(reinterpret_cast<unsigned long long*>(p),
              static_cast<unsigned long long>(__double_as_longlong(v)));
}

// Block-wide minimum of positive values (NaN treated as +inf), one atomicMin per block.
template <typename T>
__device__ __forceinline__ void block_min_to(T v, T* out) {
    __shared__ T warp_min[32];
    if (!(v == v)) v = inf_val<T>();
    for (int o = 16; o > 0; o >>= 1) v = fmin(v, __shfl_down_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) warp_min[wid] = v;
    __syncthreads();
    if (wid == 0) {
        int nw = (blockDim.x + 31) >> 5;
        v = lane < nw ? warp_min[lane] : inf_val<T>();
        for (int o = 16; o > 0; o >>= 1) v = fmin(v, __shfl_down_sync(0xffffffffu, v, o));
        if (lane == 0 && v < inf_val<T>()) atomic_min_pos(out, v);
    }
}

// ---- edge kernels ------------------------------------------------------------------------
template <typename T, typename E, int NL, int SCH, bool ATOMIC>
__device__ __forceinline__ void edge_body(
    const T* __restrict__ W, const T* __restrict__ H, const int* __restrict__ L,
    const int* __restrict__ R, const int* __restrict__ posL, const int* __restrict__ posR,
    const T* __restrict__ nx, const T* __restrict__ ny, const T* __restrict__ len,
    T* __restrict__ acc, T* __restrict__ sacc, const T* __restrict__ S, int M, int NE, E g,
    E r) {
    constexpr int NV = 3 * NL;
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= NE) return;
    int l = L[e], rr = R[e];
    bool wall = rr < 0;
    int rc = wall ? l : rr;
    E wl[NV], wr[NV], dl[NV], dr[NV], s;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        wl[k] = E(W[k * M + l]);
        wr[k] = E(W[k * M + rc]);
    }
    const E nu = S ? sw_nu(E(S[l]), E(S[rc])) : E(0);
    Flux<E, NL, SCH>::apply(wl, wr, E(H[l]), E(H[rc]), E(nx[e]), E(ny[e]), wall, g, r, dl, dr,
                            s, nu);
    T le = len[e];
    if (ATOMIC) {
#pragma unroll
        for (int k = 0; k < NV; ++k) atomicAdd(acc + k * M + l, T(dl[k]) * le);
        atomicAdd(sacc + l, T(s) * le);
        if (!wall) {
#pragma unroll
            for (int k = 0; k < NV; ++k) atomicAdd(acc + k * M + rr, T(dr[k]) * le);
            atomicAdd(sacc + rr, T(s) * le);
        }
    } else {
        int pl = posL[e];
        size_t M3 = size_t(3) * M;
#pragma unroll
        for (int k = 0; k < NV; ++k) acc[k * M3 + pl] = T(dl[k]) * le;
        sacc[pl] = T(s) * le;
        if (!wall) {
            int pr = posR[e];
#pragma unroll
            for (int k = 0; k < NV; ++k) acc[k * M3 + pr] = T(dr[k]) * le;
            sacc[pr] = T(s) * le;
        }
    }
}

// One thread per cell: the three edge fluxes seen from the cell (outward normals), summed.
template <typename T, typename E, int NL, int SCH>
__device__ __forceinline__ void cell_body(
    const T* __restrict__ W, const T* __restrict__ H, const int* __restrict__ nbr,
    const T* __restrict__ cnx, const T* __restrict__ cny, const T* __restrict__ clen,
    const T* __restrict__ area, T* __restrict__ acc, T* __restrict__ dtmin, T cfl2,
    const T* __restrict__ S, int M, E g, E r) {
    constexpr int NV = 3 * NL;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    T dt = inf_val<T>();
    if (c < M) {
        E w[NV], wr[NV], dl[NV], dr[NV], s;
        T sum[NV];
#pragma unroll
        for (int k = 0; k < NV; ++k) { w[k] = E(W[k * M + c]); sum[k] = T(0); }
        T ssum = T(0);
        E Hc = E(H[c]);
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            int nb = nbr[j * M + c];
            bool wall = nb < 0;
            int rc = wall ? c : nb;
#pragma unroll
            for (int k = 0; k < NV; ++k) wr[k] = E(W[k * M + rc]);
            const E nu = S ? sw_nu(E(S[c]), E(S[rc])) : E(0);
            Flux<E, NL, SCH>::apply(w, wr, Hc, E(H[rc]), E(cnx[j * M + c]), E(cny[j * M + c]),
                                    wall, g, r, dl, dr, s, nu);
            T le = clen[j * M + c];
#pragma unroll
            for (int k = 0; k < NV; ++k) sum[k] += T(dl[k]) * le;
            ssum += T(s) * le;
        }
#pragma unroll
        for (int k = 0; k < NV; ++k) acc[k * M + c] = sum[k];
        dt = cfl2 * area[c] / ssum;
    }
    block_min_to(dt, dtmin);
}

// One layer's shock sensor (riemann.py; triangles/reference.py sensor_nu): S_c = the largest
// compression max(0, un_c - un_nb) over the three edges of cell c (outward normals; walls: the
// mirror state un_nb = -un_c), in the storage type.
template <typename T>
__device__ __forceinline__ void sensor_body(const T* __restrict__ W, const int* __restrict__ nbr,
                                            const T* __restrict__ cnx,
                                            const T* __restrict__ cny, T* __restrict__ S,
                                            int M) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= M) return;
    const T h = W[c], qx = W[M + c], qy = W[2 * M + c];
    T s = T(0);
#pragma unroll
    for (int j = 0; j < 3; ++j) {
        const int nb = nbr[j * M + c];
        const T nx = cnx[j * M + c], ny = cny[j * M + c];
        const T un = (qx * nx + qy * ny) / h;
        const T unb = nb < 0 ? -un : (W[M + nb] * nx + W[2 * M + nb] * ny) / W[nb];
        s = fmax(s, sw_compression(un, unb));
    }
    S[c] = s;
}

// ---- cell kernels ------------------------------------------------------------------------
// Local steps from the NS accumulated wave-speed slots, and their minimum. With `zero` the
// slots are cleared after reading (the atomic assembly accumulates into them).
template <typename T>
__device__ __forceinline__ void cell_dt_body(T* __restrict__ sacc, int NS,
                                             const T* __restrict__ area, T cfl2, int M,
                                             T* __restrict__ dtmin, int zero) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    T dt = inf_val<T>();
    if (c < M) {
        T s = sacc[c];
        for (int j = 1; j < NS; ++j) s += sacc[j * M + c];
        if (zero) sacc[c] = T(0);
        dt = cfl2 * area[c] / s;
    }
    block_min_to(dt, dtmin);
}

// W -= dt/|V| (sum of the NS accumulator slots) with dt = min(*dt_cur, dt_limit) read on the
// device (no host round trip between the kernels of a step); clears the slots if `zero`
// (atomic assembly) and arms the other slot of the double-buffered step minimum for the next
// step (dt_cur itself is only read here: no race).
template <typename T, int NV>
__device__ __forceinline__ void cell_update_body(T* __restrict__ W, T* __restrict__ acc,
                                                 int NS, const T* __restrict__ area,
                                                 T dt_limit, int M, const T* dt_cur,
                                                 T* dt_next, int zero) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c == 0) *dt_next = inf_val<T>();
    if (c >= M) return;
    T dt = fmin(*dt_cur, dt_limit);
    T f = dt / area[c];
    size_t MS = size_t(NS) * M;
#pragma unroll
    for (int k = 0; k < NV; ++k) {
        T* a = acc + k * MS + c;
        T tot = a[0];
        for (int j = 1; j < NS; ++j) tot += a[j * M];
        if (zero) a[0] = T(0);
        W[k * M + c] -= f * tot;
    }
}

#define TRI_EDGE_ARGS                                                                         \
    const T *__restrict__ W, const T *__restrict__ H, const int *__restrict__ L,             \
        const int *__restrict__ R, const int *__restrict__ posL, const int *__restrict__ posR, \
        const T *__restrict__ nx, const T *__restrict__ ny, const T *__restrict__ len,        \
        T *__restrict__ acc, T *__restrict__ sacc, const T *__restrict__ S, int M, int NE,    \
        double g, double r
#define TRI_EDGE_PASS W, H, L, R, posL, posR, nx, ny, len, acc, sacc, S, M, NE
#define TRI_CELL_ARGS                                                                         \
    const T *__restrict__ W, const T *__restrict__ H, const int *__restrict__ nbr,           \
        const T *__restrict__ cnx, const T *__restrict__ cny, const T *__restrict__ clen,     \
        const T *__restrict__ area, T *__restrict__ acc, T *__restrict__ dtmin, T cfl2,       \
        const T *__restrict__ S, int M, double g, double r
#define TRI_CELL_PASS W, H, nbr, cnx, cny, clen, area, acc, dtmin, cfl2, S, M

// Kernels of one (layers, scheme): edge slots, edge atomics, cell-fused; `_mixed` computes the
// fluxes in double on float storage (docs/MODELS.md [P2]'s mixed precision).
#define TRI_KERNELS(NAME, NL, SCH)                                                            \
    template <typename T> __global__ void edges_##NAME(TRI_EDGE_ARGS) {                       \
        edge_body<T, T, NL, SCH, false>(TRI_EDGE_PASS, T(g), T(r)); }                          \
    template <typename T> __global__ void atomic_##NAME(TRI_EDGE_ARGS) {                      \
        edge_body<T, T, NL, SCH, true>(TRI_EDGE_PASS, T(g), T(r)); }                           \
    template <typename T> __global__ void cells_##NAME(TRI_CELL_ARGS) {                       \
        cell_body<T, T, NL, SCH>(TRI_CELL_PASS, T(g), T(r)); }                                 \
    template <typename T> __global__ void edges_##NAME##_mixed(TRI_EDGE_ARGS) {               \
        edge_body<T, double, NL, SCH, false>(TRI_EDGE_PASS, g, r); }                           \
    template <typename T> __global__ void atomic_##NAME##_mixed(TRI_EDGE_ARGS) {              \
        edge_body<T, double, NL, SCH, true>(TRI_EDGE_PASS, g, r); }                            \
    template <typename T> __global__ void cells_##NAME##_mixed(TRI_CELL_ARGS) {               \
        cell_body<T, double, NL, SCH>(TRI_CELL_PASS, g, r); }

template <typename T>
__global__ void cell_dt(T* __restrict__ sacc, int NS, const T* __restrict__ area, T cfl2, int M,
                        T* __restrict__ dtmin, int zero) {
    cell_dt_body<T>(sacc, NS, area, cfl2, M, dtmin, zero);
}
