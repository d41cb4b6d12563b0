// Curvature flows of graphs (seed 000; SPEC §1): fused Runge–Kutta–Merson stage kernels.
//
// One kernel per right-hand-side evaluation (stage s = 1..5 of Algorithm 4.1). Each block loads
// its tile of the stage input  u + Σ a_sm k_m  (the stage combination is fused into the load) into
// shared memory with a halo of R = 1 (mean curvature) or 2 (Willmore), computes w = Q H on the
// tile plus a halo of 1 (Willmore; edge Q's are recomputed, never stored), and writes
// k_s = τ f(t + c_s τ, ·). Stage 5 also forms u_new = u + (k1 + 4k4 + k5)/6 in the other state
// buffer and the error max|0.2k1 − 0.9k3 + 0.8k4 − 0.1k5| (one atomicMax per block); the last block
// to finish decides acceptance, the next τ and the time on the device (the control block below),
// so a whole run of attempts can be launched (or replayed as a CUDA graph) without the host.
//
// Layout: node (i, j), i = 0..n1 (x), j = 0..n2 (y), at j*(n1+1) + i. Boundary: Dirichlet nodes
// follow dg/dt (ζ_t for the exact solution, else 0); Neumann nodes copy their inner neighbours,
// (19)–(20), (24)–(25): every load of a boundary node reads its mirror, and the accepted u_new gets
// its boundary copies from the last block.
#include "curvature_ops.cuh"
#include "rkm_control.cuh"

#define BX 32
#define BY 8
#define FLAG_NEUMANN 1
#define FLAG_EXACT 2


// The stage input u + Σ a_sm k_m of Algorithm 4.1 (the same operations as RungeKuttaMerson).
template <typename T>
__device__ __forceinline__ T stage_input(const int stage, const T* u, const T* k1, const T* k2,
                                         const T* k3, const T* k4, const int g)
{
    switch (stage) {
    case 1: return u[g];
    case 2: return u[g] + k1[g] / T(3);
    case 3: return u[g] + (k1[g] + k2[g]) / T(6);
    case 4: return u[g] + k1[g] / T(8) + T(0.375) * k3[g];
    default: return u[g] + T(0.5) * k1[g] - T(1.5) * k3[g] + T(2) * k4[g];
    }
}

// The last block of stage 5: accept or reject, the next τ (SPEC §1.3), the time, and the Neumann
// copies of the accepted state's boundary.
template <typename T>
__device__ void decide(double* ctl, int* cti, unsigned long long* err, unsigned int* count,
                       const T* u, T* un, const int n1, const int n2, const bool neumann)
{
    __shared__ int accepted;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    if (tid == 0) {
        const double e = __longlong_as_double((long long)atomicAdd(err, 0ull)) / 3.0;
        *err = 0ull;
        *count = 0u;
        accepted = rkm_decide(ctl, cti, e) ? 1 : 0;
    }
    __syncthreads();
    if (accepted && neumann) {
        // u_new[b] = u_new[m] + (u[b] − u[m]): the copy of (19)–(20) (a NaN in u[b] is kept)
        const int nx1 = n1 + 1, nb = 2 * (n1 + 1) + 2 * (n2 - 1);
        for (int q = tid; q < nb; q += blockDim.x * blockDim.y) {
            int i, j;
            if (q < nx1) { i = q; j = 0; }
            else if (q < 2 * nx1) { i = q - nx1; j = n2; }
            else { const int r = q - 2 * nx1; j = 1 + (r >> 1); i = (r & 1) ? n1 : 0; }
            const int b = j * nx1 + i;
            const int m = mirror(j, n2, true) * nx1 + mirror(i, n1, true);
            un[b] = __ldcg(un + m) + (u[b] - u[m]);
        }
    }
    if (tid == 0 && accepted) cti[I_CUR] ^= 1;
}

template <typename T, bool WILLMORE>
__device__ void rkm_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4,
                          const T* __restrict__ tx, const T* __restrict__ ty,
                          const T* __restrict__ coef, double* ctl,
                          int* cti, unsigned long long* err, unsigned int* count, const int n1,
                          const int n2, const T ih1, const T ih2, const T F, const int flags)
{
    constexpr int R = WILLMORE ? 2 : 1;
    constexpr int SW = BX + 2 * R, SH = BY + 2 * R;  // φ tile
    constexpr int WW = BX + 2, WH = BY + 2;          // w tile (Willmore)
    __shared__ T s[SH * SW];
    __shared__ T sw[WILLMORE ? WH * WW : 1];
    __shared__ unsigned long long red[BX * BY / 32];

    if (!cti[I_ACTIVE]) return;  // uniform: the run is over (or failed)
    const bool neumann = flags & FLAG_NEUMANN, exact = flags & FLAG_EXACT;
    const int cur = cti[I_CUR];
    const T* u = cur ? u1 : u0;
    T* un = cur ? u0 : u1;
    const double tau = ctl[C_TRY];
    const double cstage = stage == 1 ? 0.0 : (stage == 4 ? tau / 2.0 : (stage == 5 ? tau : tau / 3.0));
    const double ts = ctl[C_T] + cstage;
    const double PI = 3.14159265358979323846;
    const T cz = exact ? T(cospi(ts)) : T(0), zt = exact ? T(-PI * sinpi(ts)) : T(0);
    const int nx1 = n1 + 1, ny1 = n2 + 1;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY;
    const int tid = threadIdx.y * BX + threadIdx.x;

    // the stage input on the tile and its halo (boundary loads read their Neumann mirrors)
    for (int q = tid; q < SH * SW; q += BX * BY) {
        const int ly = q / SW, lx = q - ly * SW;
        const int g = mirror(j0 + ly - R, n2, neumann) * nx1 + mirror(i0 + lx - R, n1, neumann);
        s[q] = stage_input(stage, u, k1, k2, k3, k4, g);
    }
    __syncthreads();
    if (WILLMORE) {
        // w = Q H on the tile plus a halo of 1; boundary: Neumann copy, Dirichlet 0 or w(ζ)
        for (int q = tid; q < WH * WW; q += BX * BY) {
            const int ly = q / WW, lx = q - ly * WW;
            const int gi = i0 + lx - 1, gj = j0 + ly - 1;
            T w = T(0);
            if (gi >= 0 && gi <= n1 && gj >= 0 && gj <= n2) {
                const bool bnd = gi == 0 || gi == n1 || gj == 0 || gj == n2;
                if (!bnd || neumann) {
                    const int ci = lx + 1 + (gi == 0) - (gi == n1);  // mirror centre in the φ tile
                    const int cj = ly + 1 + (gj == 0) - (gj == n2);
                    if (ci >= 1 && ci <= SW - 2 && cj >= 1 && cj <= SH - 2) {
                        T Q, H;
                        node_curvature(s + cj * SW + ci, SW, ih1, ih2, Q, H);
                        w = Q * H;
                    }
                } else if (exact) {
                    w = exact_w(coef, nx1 * ny1, gj * nx1 + gi, cz);
                }
            }
            sw[q] = w;
        }
        __syncthreads();
    }

    const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
    const bool inside = i <= n1 && j <= n2;
    const bool bnd = i == 0 || i == n1 || j == 0 || j == n2;
    const int g = j * nx1 + i;
    bool write = inside && !(bnd && neumann);
    T f = T(0);
    if (write) {
        if (bnd) {
            f = exact ? zt * (tx[i] * ty[j]) : T(0);  // Dirichlet: dg/dt
        } else {
            const T* c = s + (threadIdx.y + R) * SW + threadIdx.x + R;
            if (WILLMORE) {
                f = willmore_node(c, SW, sw + (threadIdx.y + 1) * WW + threadIdx.x + 1, WW, ih1, ih2);
            } else {
                T Q, H;
                node_curvature(c, SW, ih1, ih2, Q, H);
                f = Q * H;
            }
            if (exact) f = f + exact_forcing<T, WILLMORE>(tx, ty, coef, nx1, ny1, i, j, cz, zt);
            if (F != T(0)) f = f + F;
        }
    }
    const T k = T(tau) * f;
    if (stage < 5) {
        if (write) {
            T* out = stage == 1 ? k1 : (stage == 2 ? k2 : (stage == 3 ? k3 : k4));
            out[g] = k;
        }
        return;
    }
    // stage 5: error estimate and the candidate u_new
    unsigned long long eb = 0ull;
    if (write) {
        const T a1 = k1[g], a3 = k3[g], a4 = k4[g];
        const T e = T(0.2) * a1 - T(0.9) * a3 + T(0.8) * a4 - T(0.1) * k;
        eb = (unsigned long long)__double_as_longlong((double)fabs(e));
        un[g] = u[g] + (a1 + T(4) * a4 + k) / T(6);
        __threadfence();
    }
    // block max of the bit patterns (non-negative doubles order as integers; NaN stays on top)
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, eb, o);
        eb = other > eb ? other : eb;
    }
    if ((tid & 31) == 0) red[tid >> 5] = eb;
    __syncthreads();
    __shared__ int last;
    if (tid == 0) {
        for (int q = 1; q < BX * BY / 32; ++q) eb = red[q] > eb ? red[q] : eb;
        atomicMax(err, eb);
        __threadfence();
        last = atomicAdd(count, 1u) == gridDim.x * gridDim.y - 1;
    }
    __syncthreads();
    if (last) {
        __threadfence();
        decide(ctl, cti, err, count, u, un, n1, n2, neumann);
    }
}

template <typename T>
__global__ void __launch_bounds__(BX * BY)
mc_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4, const T* __restrict__ tx,
         const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti, unsigned long long* err,
         unsigned int* count, const int n1, const int n2, const T ih1, const T ih2, const T F,
         const int flags)
{
    rkm_stage<T, false>(stage, u0, u1, k1, k2, k3, k4, tx, ty, coef, ctl, cti, err, count, n1, n2, ih1,
                        ih2, F, flags);
}

template <typename T>
__global__ void __launch_bounds__(BX * BY)
wm_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4, const T* __restrict__ tx,
         const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti, unsigned long long* err,
         unsigned int* count, const int n1, const int n2, const T ih1, const T ih2, const T F,
         const int flags)
{
    rkm_stage<T, true>(stage, u0, u1, k1, k2, k3, k4, tx, ty, coef, ctl, cti, err, count, n1, n2, ih1,
                       ih2, F, flags);
}

// One right-hand-side evaluation f(t, u) on all nodes (no τ, no stage combination): the kernel
// the GPU tests compare with the NumPy float64 reference, and the one the timing script measures.
template <typename T, bool WILLMORE>
__device__ void rhs_eval(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
                         const T* __restrict__ ty, const T* __restrict__ coef, const double t, const int n1, const int n2,
                         const T ih1, const T ih2, const T F, const int flags)
{
    constexpr int R = WILLMORE ? 2 : 1;
    constexpr int SW = BX + 2 * R, SH = BY + 2 * R;
    constexpr int WW = BX + 2, WH = BY + 2;
    __shared__ T s[SH * SW];
    __shared__ T sw[WILLMORE ? WH * WW : 1];
    const bool neumann = flags & FLAG_NEUMANN, exact = flags & FLAG_EXACT;
    const double PI = 3.14159265358979323846;
    const T cz = exact ? T(cospi(t)) : T(0), zt = exact ? T(-PI * sinpi(t)) : T(0);
    const int nx1 = n1 + 1, ny1 = n2 + 1;
    const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY;
    const int tid = threadIdx.y * BX + threadIdx.x;
    for (int q = tid; q < SH * SW; q += BX * BY) {
        const int ly = q / SW, lx = q - ly * SW;
        s[q] = u[mirror(j0 + ly - R, n2, neumann) * nx1 + mirror(i0 + lx - R, n1, neumann)];
    }
    __syncthreads();
    if (WILLMORE) {
        for (int q = tid; q < WH * WW; q += BX * BY) {
            const int ly = q / WW, lx = q - ly * WW;
            const int gi = i0 + lx - 1, gj = j0 + ly - 1;
            T w = T(0);
            if (gi >= 0 && gi <= n1 && gj >= 0 && gj <= n2) {
                const bool bnd = gi == 0 || gi == n1 || gj == 0 || gj == n2;
                if (!bnd || neumann) {
                    const int ci = lx + 1 + (gi == 0) - (gi == n1);
                    const int cj = ly + 1 + (gj == 0) - (gj == n2);
                    if (ci >= 1 && ci <= SW - 2 && cj >= 1 && cj <= SH - 2) {
                        T Q, H;
                        node_curvature(s + cj * SW + ci, SW, ih1, ih2, Q, H);
                        w = Q * H;
                    }
                } else if (exact) {
                    w = exact_w(coef, nx1 * ny1, gj * nx1 + gi, cz);
                }
            }
            sw[q] = w;
        }
        __syncthreads();
    }
    const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
    if (i > n1 || j > n2) return;
    const bool bnd = i == 0 || i == n1 || j == 0 || j == n2;
    T out;
    if (bnd) {
        if (neumann) return;  // the launcher copies the inner neighbours (neumann_fill)
        out = exact ? zt * (tx[i] * ty[j]) : T(0);
    } else {
        const T* c = s + (threadIdx.y + R) * SW + threadIdx.x + R;
        if (WILLMORE) {
            out = willmore_node(c, SW, sw + (threadIdx.y + 1) * WW + threadIdx.x + 1, WW, ih1, ih2);
        } else {
            T Q, H;
            node_curvature(c, SW, ih1, ih2, Q, H);
            out = Q * H;
        }
        if (exact) out = out + exact_forcing<T, WILLMORE>(tx, ty, coef, nx1, ny1, i, j, cz, zt);
        if (F != T(0)) out = out + F;
    }
    f[j * nx1 + i] = out;
}

template <typename T>
__global__ void __launch_bounds__(BX * BY)
mc_rhs(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
       const T* __restrict__ ty, const T* __restrict__ coef, const double t, const int n1, const int n2, const T ih1,
       const T ih2, const T F, const int flags)
{
    rhs_eval<T, false>(u, f, tx, ty, coef, t, n1, n2, ih1, ih2, F, flags);
}

template <typename T>
__global__ void __launch_bounds__(BX * BY)
wm_rhs(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
       const T* __restrict__ ty, const T* __restrict__ coef, const double t, const int n1, const int n2, const T ih1,
       const T ih2, const T F, const int flags)
{
    rhs_eval<T, true>(u, f, tx, ty, coef, t, n1, n2, ih1, ih2, F, flags);
}
