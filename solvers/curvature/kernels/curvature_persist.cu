// Curvature flows of graphs ([P0]; docs/MODELS.md §1): a whole run of Runge–Kutta–Merson attempts in ONE
// cooperative kernel launch.
//
// Why: on small grids (Willmore 256² has 66,049 nodes) a stage kernel is a few µs of latency, and
// the stability-bound run needs ~1.8 million accepted steps, so launching five stage kernels per
// attempt (curvature.cu, even replayed as CUDA graphs) costs ≈ 45 µs a step. Here every block owns
// tiles of 32 × TY interior nodes for the whole run; the five stages of an attempt are separated by
// grid-wide barriers (the launch is cooperative, so all blocks are co-resident), the error maximum
// is reduced with one atomicMax per block into a slot of this attempt, and after the fifth barrier
// EVERY block runs the same controller (rkm_control.cuh) on the same numbers, so all blocks agree
// on acceptance, τ and t without another barrier. Block 0 writes the control block back at the end.
//
// Stage values are stored unscaled (f_s = f(t_s, input_s); k_s = τ f_s is formed where it is used,
// the same product RungeKuttaMerson forms), so an attempt that follows a rejection skips stage 1:
// f(t, u) has not changed, only τ.
//
// Willmore tiles compute each edge's φ-gradient, 1/Q and Q once (not once per adjacent node) and
// each edge flux once, in shared memory; mean curvature uses the per-node operator of
// curvature_ops.cuh. Boundary nodes are not in the tiles: Dirichlet nodes follow dg/dt in a
// grid-stride loop, Neumann nodes are never read (loads read the mirror) and get their copies
// u_new[b] = u_new[m] + (u[b] − u[m]) after each accepted attempt, as in curvature.cu.
//
// Data written by other blocks during the launch (u, f_s, the error slots) is read with __ldcg
// (L2; L1 is not coherent across SMs).
#include "rkm_persist.cuh"

// Optional phase timing (diagnostics only: FusedRKM(profile=True) compiles with -DPERSIST_PROFILE and
// reads g_prof with persist_prof below; benchmarks/curvature/phases.py): %globaltimer stamps of
// thread 0 of blocks 0, gridDim/2 and gridDim−1.
#ifdef PERSIST_PROFILE
#define PROF_ATTEMPTS 64
#define PROF_EVENTS 48
__device__ unsigned long long g_prof[3 * PROF_ATTEMPTS * PROF_EVENTS];
__device__ int g_prof_attempt;
static __device__ __forceinline__ void prof_mark(const int a, const int ev)
{
    if (threadIdx.x != 0 || threadIdx.y != 0 || a >= PROF_ATTEMPTS || ev >= PROF_EVENTS) return;
    const int b = blockIdx.x == 0 ? 0 : (blockIdx.x == gridDim.x / 2 ? 1 : (blockIdx.x == gridDim.x - 1 ? 2 : -1));
    if (b < 0) return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    g_prof[(b * PROF_ATTEMPTS + a) * PROF_EVENTS + ev] = t;
}
#define PROF(a, ev) prof_mark(a, ev)
// g_prof into out[0..n)
template <typename T>
__global__ void persist_prof(unsigned long long* out, const int n)
{
    for (int q = threadIdx.x; q < n && q < 3 * PROF_ATTEMPTS * PROF_EVENTS; q += blockDim.x)
        out[q] = g_prof[q];
}
#else
#define PROF(a, ev)
#endif

// Asynchronous copy of one T global → shared (no register holds the value while it is in flight);
// L1-allocating, which is coherent here: every grid barrier ends with an acquire that invalidates
// the SM's L1, and no array is read in the stage that writes it.
template <typename T>
static __device__ __forceinline__ void cp_async1(T* smem, const T* gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    if constexpr (sizeof(T) == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(s), "l"(gmem) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(gmem) : "memory");
}
static __device__ __forceinline__ void cp_async_wait_all()
{
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// for (q = tid; q < N; q += NT) fully unrolled and predicated (N, NT compile-time constants)
#define FOR_ITEMS(N, q)                                                                            \
    _Pragma("unroll") for (int r_ = 0; r_ < ((N) + NT - 1) / NT; ++r_)                            \
        if (const int q = tid + r_ * NT; q < (N))

template <bool C, class A, class B> struct pick { using type = A; };  // (NVRTC has no <type_traits>)
template <class A, class B> struct pick<false, A, B> { using type = B; };

// Shared memory of one tile (dynamic; the host asks persist_smem for the sizes).
template <typename T, int TY>
struct McSmem {
    T S[(TY + 2) * (TX + 2)];
    T own[4][TY * TX];  // stage 5: u, f1, f3, f4 at the tile's own nodes (from the tile load)
    T pre[7][TY * TX];  // the exact-forcing data of the own nodes (cp.async before the tile load)
};

template <typename T, int TY>
struct WmSmem {
    // tile coordinates (x, y) of φ: node (i0 − 2 + x, j0 − 2 + y); own nodes x ∈ [2, 33], y ∈ [2, TY+1]
    static constexpr int SW = TX + 4, SH = TY + 4;  // φ: x ∈ [0, 35], y ∈ [0, TY + 3]
    static constexpr int CPW = 35, CPH = TY + 3;    // φ corners (x+½, y+½): x ∈ [0, 34], y ∈ [0, TY+2]
    static constexpr int EW = 35, EH = TY + 2;      // E edges (x+½, y): x ∈ [0, 34], y ∈ [1, TY + 2]
    static constexpr int NW = 34, NH = TY + 3;      // N edges (x, y+½): x ∈ [1, 34], y ∈ [0, TY + 2]
    static constexpr int WW = 34, WH = TY + 2;      // w: x ∈ [1, 34], y ∈ [1, TY + 2]
    static constexpr int CWW = 33, CWH = TY + 1;    // w corners (x+½, y+½): x ∈ [1, 33], y ∈ [1, TY+1]
    static constexpr int FEW = 33, FNH = TY + 1;    // fluxes: E x ∈ [1, 33], y ∈ [2, TY+1]; N x ∈ [2, 33], y ∈ [1, TY+1]
    T S[SH * SW], CP[CPH * CPW];
    T egx[EH * EW], egy[EH * EW], eiq[EH * EW], eq[EH * EW];
    T ngx[NH * NW], ngy[NH * NW], niq[NH * NW], nq[NH * NW];
    T W[WH * WW], CWc[CWH * CWW], Qn[TY * TX], FE[TY * FEW], FN[FNH * TX];
    T own[4][TY * TX];  // stage 5: u, f1, f3, f4 at the tile's own nodes (from the tile load)
    T pre[7][TY * TX];  // the exact-forcing data of the own nodes (cp.async before the tile load)
};

// The stage input on the tile plus a halo of R (boundary loads read their Neumann mirrors; nodes
// beyond the grid read clamped indices — they only feed outputs that are not written).
template <typename T, int TY, int R, int NT>
__device__ __forceinline__ void load_tile(T* S, T (*own)[TY * TX], const int stage, const int i0,
                                          const int j0, const Grid& G, const T* u, const T* f1,
                                          const T* f2, const T* f3, const T* f4, const T tau)
{
    constexpr int SW = TX + 2 * R, SH = TY + 2 * R;
    const int tid = threadIdx.y * TX + threadIdx.x;
    FOR_ITEMS(SH * SW, q) {
        const int y = q / SW, x = q - y * SW;
        const int g = mirror(j0 - R + y, G.n2, G.neumann) * G.nx1 + mirror(i0 - R + x, G.n1, G.neumann);
        if (stage < 5) {
            S[q] = stage_in(stage, u, f1, f2, f3, f4, tau, g);
        } else {  // the stage-5 input, keeping the raw values at the tile's own nodes
            const T uu = __ldcg(u + g), a1 = __ldcg(f1 + g), a3 = __ldcg(f3 + g), a4 = __ldcg(f4 + g);
            S[q] = stage_combine(5, uu, a1, T(0), a3, a4, tau);
            const int ox = x - R, oy = y - R;
            if (ox >= 0 && ox < TX && oy >= 0 && oy < TY) {
                const int o = oy * TX + ox;
                own[0][o] = uu; own[1][o] = a1; own[2][o] = a3; own[3][o] = a4;
            }
        }
    }
}

// f at this thread's tile node (interior or not: the caller masks), mean curvature.
template <typename T, int TY, int NT, class Mid>
__device__ __forceinline__ T mc_tile(McSmem<T, TY>& sm, const int stage, const int i0,
                                     const int j0, const Grid& G, const T* u, const T* f1,
                                     const T* f2, const T* f3, const T* f4, const T tau,
                                     const T ih1, const T ih2, Mid mid, T* ownv)
{
    constexpr int SW = TX + 2;
    load_tile<T, TY, 1, NT>(sm.S, sm.own, stage, i0, j0, G, u, f1, f2, f3, f4, tau);
    __syncthreads();
    mid();  // arithmetic on data loaded before the tile (its latency is over by now)
    T Q = T(0), H = T(0);
    if (threadIdx.y < TY) {
        node_curvature(sm.S + (threadIdx.y + 1) * SW + threadIdx.x + 1, SW, ih1, ih2, Q, H);
        if (stage == 5) {
            const int tid = threadIdx.y * TX + threadIdx.x;
            for (int k = 0; k < 4; ++k) ownv[k] = sm.own[k][tid];
        }
    }
    __syncthreads();  // S is reloaded by the next tile
    return mul_rn(Q, H);
}

// f at this thread's tile node, Willmore: −Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ), every edge quantity
// once (layout: WmSmem).
template <typename T, int TY, int NT, class Mid>
__device__ __forceinline__ T wm_tile(WmSmem<T, TY>& sm, const int stage, const int i0,
                                     const int j0, const Grid& G, const T* u, const T* f1,
                                     const T* f2, const T* f3, const T* f4, const T tau,
                                     const T ih1, const T ih2, const T* coef, const T cz, Mid mid,
                                     T* ownv)
{
    using L = WmSmem<T, TY>;
    constexpr int SW = L::SW, CPW = L::CPW, CPH = L::CPH, EW = L::EW, EH = L::EH, NW = L::NW,
                  NH = L::NH, WW = L::WW, WH = L::WH, CWW = L::CWW, CWH = L::CWH, FEW = L::FEW,
                  FNH = L::FNH;
    const int tid = threadIdx.y * TX + threadIdx.x;
    T* S = sm.S;

#ifdef PERSIST_PROFILE
    const int pa = g_prof_attempt, pe = 8 * (stage - 1);
#endif
    load_tile<T, TY, 2, NT>(S, sm.own, stage, i0, j0, G, u, f1, f2, f3, f4, tau);
    __syncthreads();
    PROF(pa, pe + 1);
    mid();  // arithmetic on data loaded before the tile (its latency is over by now)
    FOR_ITEMS(CPH * CPW, q) {  // corner means of φ
        const int y = q / CPW, x = q - y * CPW;
        const T* c = S + y * SW + x;
        sm.CP[q] = T(0.25) * ((c[0] + c[1]) + (c[SW] + c[SW + 1]));
    }
    __syncthreads();
    FOR_ITEMS(EH * EW, q) {  // E edges: gradient, 1/Q, Q
        const int y = 1 + q / EW, x = q - (y - 1) * EW;
        const T gx = (S[y * SW + x + 1] - S[y * SW + x]) * ih1;
        const T gy = (sm.CP[y * CPW + x] - sm.CP[(y - 1) * CPW + x]) * ih2;
        const T a = T(1) + gx * gx + gy * gy;
        const T iq = rsqrt_t(a);
        sm.egx[q] = gx; sm.egy[q] = gy; sm.eiq[q] = iq; sm.eq[q] = a * iq;
    }
    FOR_ITEMS(NH * NW, q) {  // N edges
        const int y = q / NW, x = 1 + q - y * NW;
        const T gx = (sm.CP[y * CPW + x] - sm.CP[y * CPW + x - 1]) * ih1;
        const T gy = (S[(y + 1) * SW + x] - S[y * SW + x]) * ih2;
        const T a = T(1) + gx * gx + gy * gy;
        const T iq = rsqrt_t(a);
        sm.ngx[q] = gx; sm.ngy[q] = gy; sm.niq[q] = iq; sm.nq[q] = a * iq;
    }
    __syncthreads();
    PROF(pa, pe + 2);
    FOR_ITEMS(WH * WW, q) {  // w = Q H (boundary: Neumann mirror, Dirichlet data)
        const int y = 1 + q / WW, x = 1 + q - (y - 1) * WW;
        const int gi = i0 - 2 + x, gj = j0 - 2 + y;
        T w = T(0);
        if (gi >= 0 && gi <= G.n1 && gj >= 0 && gj <= G.n2) {
            const bool bnd = gi == 0 || gi == G.n1 || gj == 0 || gj == G.n2;
            if (!bnd || G.neumann) {
                const int xm = x + (gi == 0) - (gi == G.n1), ym = y + (gj == 0) - (gj == G.n2);
                const int e = (ym - 1) * EW + xm, n = ym * NW + xm - 1;
                const T H = (sm.egx[e] * sm.eiq[e] - sm.egx[e - 1] * sm.eiq[e - 1]) * ih1
                            + (sm.ngy[n] * sm.niq[n] - sm.ngy[n - NW] * sm.niq[n - NW]) * ih2;
                const T Q = T(0.25) * ((sm.eq[e] + sm.eq[e - 1]) + (sm.nq[n] + sm.nq[n - NW]));
                w = Q * H;
                if (x >= 2 && x <= TX + 1 && y >= 2 && y <= TY + 1) sm.Qn[(y - 2) * TX + x - 2] = Q;
            } else if (G.exact) {
                w = exact_w(coef, G.nx1 * G.ny1, gj * G.nx1 + gi, cz);
            }
        }
        sm.W[q] = w;
    }
    __syncthreads();
    PROF(pa, pe + 3);
    FOR_ITEMS(CWH * CWW, q) {  // corner means of w
        const int y = q / CWW, x = q - y * CWW;  // corner (x+1+½, y+1+½)
        const T* c = sm.W + y * WW + x;
        sm.CWc[q] = T(0.25) * ((c[0] + c[1]) + (c[WW] + c[WW + 1]));
    }
    __syncthreads();
    FOR_ITEMS(TY * FEW, q) {  // E fluxes (x+½, y), x ∈ [1, 33], y ∈ [2, TY+1]
        const int r = q / FEW, x = 1 + q - r * FEW, y = 2 + r;
        const int e = (y - 1) * EW + x;
        const T gx = sm.egx[e], gy = sm.egy[e], iq = sm.eiq[e];
        const T w0 = sm.W[(y - 1) * WW + x - 1], w1 = sm.W[(y - 1) * WW + x];
        const T wx = (w1 - w0) * ih1;
        const T wy = (sm.CWc[(y - 1) * CWW + x - 1] - sm.CWc[(y - 2) * CWW + x - 1]) * ih2;
        const T we = T(0.5) * (w1 + w0);
        const T iq3 = iq * iq * iq;
        const T cross = -gx * gy * iq3;
        sm.FE[q] = (iq - gx * gx * iq3) * wx + cross * wy - T(0.5) * we * we * iq3 * gx;
    }
    FOR_ITEMS(FNH * TX, q) {  // N fluxes (x, y+½), x ∈ [2, 33], y ∈ [1, TY+1]
        const int r = q / TX, x = 2 + q - r * TX, y = 1 + r;
        const int n = y * NW + x - 1;
        const T gx = sm.ngx[n], gy = sm.ngy[n], iq = sm.niq[n];
        const T w0 = sm.W[(y - 1) * WW + x - 1], w1 = sm.W[y * WW + x - 1];
        const T wx = (sm.CWc[(y - 1) * CWW + x - 1] - sm.CWc[(y - 1) * CWW + x - 2]) * ih1;
        const T wy = (w1 - w0) * ih2;
        const T we = T(0.5) * (w1 + w0);
        const T iq3 = iq * iq * iq;
        const T cross = -gx * gy * iq3;
        sm.FN[q] = cross * wx + (iq - gy * gy * iq3) * wy - T(0.5) * we * we * iq3 * gy;
    }
    __syncthreads();
    PROF(pa, pe + 4);
    const int x = threadIdx.x, y = threadIdx.y;  // node (x + 2, y + 2)
    T f = T(0);
    if (y < TY) {
        const T fe = sm.FE[y * FEW + x + 1], fw = sm.FE[y * FEW + x];
        const T fn = sm.FN[(y + 1) * TX + x], fs = sm.FN[y * TX + x];
        f = -sm.Qn[tid] * ((fe - fw) * ih1 + (fn - fs) * ih2);
        if (stage == 5)
            for (int k = 0; k < 4; ++k) ownv[k] = sm.own[k][tid];
    }
    __syncthreads();  // shared arrays are refilled by the next tile
    return f;
}

// The data of the exact forcing at node (i, j), loaded into registers (Willmore: the 7
// coefficient fields; mean curvature: the 1D derivative tables X^(0..2)(x_i), Y^(0..2)(y_j)) ...
template <typename T, bool WILLMORE, int TY>
__device__ __forceinline__ void forcing_data(T (*pre)[TY * TX], const int o, const T* tx,
                                             const T* ty, const T* coef, const Grid& G,
                                             const int i, const int j)
{
    if (WILLMORE) {
        const int nn = G.nx1 * G.ny1, g = j * G.nx1 + i;
#pragma unroll
        for (int k = 0; k < 7; ++k) cp_async1(&pre[k][o], coef + k * nn + g);
    } else {
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            cp_async1(&pre[k][o], tx + k * G.nx1 + i);
            cp_async1(&pre[3 + k][o], ty + k * G.ny1 + j);
        }
    }
}

// ... and F = ζ_t − L[ζ] from them: the operations of exact_forcing (curvature_ops.cuh).
template <typename T, bool WILLMORE, int TY>
__device__ __forceinline__ T forcing_eval(const T (*c)[TY * TX], const int o, const T cz, const T zt)
{
    if (WILLMORE) {
        const T c2 = cz * cz;
        const T d = T(1) + c2 * c[1][o];
        const T d2 = d * d;
        const T num = ((((c[6][o] * c2 + c[5][o]) * c2 + c[4][o]) * c2 + c[3][o]) * c2 + c[2][o]) * cz;
        return zt * c[0][o] - num / (d2 * d2);
    }
#define PX(a, b) (cz * (c[a][o] * c[3 + (b)][o]))
    return zt * (c[0][o] * c[3][o]) - mean_curvature_op<T>(PX(1, 0), PX(0, 1), PX(2, 0), PX(1, 1), PX(0, 2));
#undef PX
}

template <typename T, bool WILLMORE, int TY, int NT>
__device__ void persist(T* u0, T* u1, T* f1, T* f2, T* f3, T* f4, const T* __restrict__ tx,
                        const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti,
                        unsigned long long* sync, const int n1, const int n2, const T ih1,
                        const T ih2, const T F, const int flags)
{
    RKM_PERSIST_SHARED(T, NT);
    extern __shared__ __align__(16) unsigned char dsm[];
    using SmemT = typename pick<WILLMORE, WmSmem<T, TY>, McSmem<T, TY>>::type;
    const int tid = threadIdx.y * TX + threadIdx.x;
    Grid G;
    G.n1 = n1; G.n2 = n2; G.nx1 = n1 + 1; G.ny1 = n2 + 1;
    G.ntx = (n1 - 1 + TX - 1) / TX;
    G.neumann = flags & FLAG_NEUMANN;
    G.exact = flags & FLAG_EXACT;
    const int ntiles = G.ntx * ((n2 - 1 + TY - 1) / TY);
    const int nb = 2 * (n1 + 1) + 2 * (n2 - 1);
    if (tid < 8) sctl[tid] = ctl[tid];
    if (tid < 16) scti[tid] = cti[tid];
    __syncthreads();
    unsigned long long target = 0;
    unsigned long long* bar = sync + SYNC_BAR;
    int first = 1;  // the first stage of the attempt (2 after a rejection: f(t, u) is unchanged)
    const bool resident = ntiles <= (int)gridDim.x;  // one tile per block for the whole launch
    bool pre_resident = false;  // its forcing data is already in shared memory
    // this thread's Dirichlet boundary node: boundary nodes are spread over all blocks (block b,
    // thread t: node b + grid × t) so that no block carries the boundary alone
    const int qb = blockIdx.x + gridDim.x * tid;
    const bool hb = !G.neumann && tid < 32 && qb < nb;
    __shared__ T sbnd[6][32];
    int bi = 0, bj = 0;
    if (hb) boundary_node(qb, G, bi, bj);
    const int gb = bj * G.nx1 + bi;
    T bx = T(0), by = T(0), bu = T(0), b1 = T(0), b3 = T(0), b4 = T(0);  // its values
    for (int a = 0; scti[I_ACTIVE]; ++a) {
        const Attempt<T> at = attempt_of(sctl, scti, u0, u1);
        const T tau = at.tau;
        const T* u = at.u;
        T* un = at.un;
        attempt_start(a, tid, at.t, at.tau_d, G.exact, scz, szt, sync);
#ifdef PERSIST_PROFILE
        if (tid == 0) g_prof_attempt = a;  // read by the tile functions (same value in every block)
        PROF(a, 40);
#endif
        __syncthreads();
        for (int s = first; s <= 5; ++s) {
            const T cz = G.exact ? scz[s - 1] : T(0), zt = G.exact ? szt[s - 1] : T(0);
            T* out = s == 1 ? f1 : (s == 2 ? f2 : (s == 3 ? f3 : f4));
            unsigned long long eb = 0ull;
            PROF(a, 8 * (s - 1));
            for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
                const int tyi = tile / G.ntx, txi = tile - tyi * G.ntx;
                const int i0 = 1 + TX * txi, j0 = 1 + TY * tyi;
                const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
                const bool inside = threadIdx.y < TY && i <= n1 - 1 && j <= n2 - 1;
                // issued before the tile's arithmetic so that their latency overlaps the loads:
                // the exact forcing (clamped indices outside the grid) and this node's k values
                const int ic = min(i, n1), jc = min(j, n2), g = jc * G.nx1 + ic;
                // every global load of this stage is issued before any of them is used (the
                // tile's loads follow in wm_tile/mc_tile): the exact-forcing data, this node's
                // k values (stage 5) and this thread's Dirichlet boundary node
                auto& smem = *reinterpret_cast<SmemT*>(dsm);
                const bool own_node = threadIdx.y < TY;
                // the forcing data never changes: where every block owns one tile for the whole
                // run, it stays in shared memory after the first stage (otherwise per tile)
                if (G.exact && own_node && !pre_resident)
                    forcing_data<T, WILLMORE, TY>(smem.pre, tid, tx, ty, coef, G, ic, jc);
                T ownv[4] = {T(0), T(0), T(0), T(0)};  // stage 5: u, f1, f3, f4 at this node
                const bool stash = tile == blockIdx.x && hb;
                if (stash) {  // this thread's boundary node, into shared memory
                    if (G.exact) { cp_async1(&sbnd[0][tid], tx + bi); cp_async1(&sbnd[1][tid], ty + bj); }
                    if (s == 5) {
                        cp_async1(&sbnd[2][tid], u + gb);
                        cp_async1(&sbnd[3][tid], f1 + gb);
                        cp_async1(&sbnd[4][tid], f3 + gb);
                        cp_async1(&sbnd[5][tid], f4 + gb);
                    }
                }
                T fx = T(0);
                auto mid = [&]() {  // after the tile's load barrier: consume what was prefetched
                    cp_async_wait_all();
                    if (G.exact && own_node) fx = forcing_eval<T, WILLMORE, TY>(smem.pre, tid, cz, zt);
                };
                T f;
                if constexpr (WILLMORE)
                    f = wm_tile<T, TY, NT>(smem, s, i0, j0, G, u, f1,
                                           f2, f3, f4, tau, ih1, ih2, coef, cz, mid, ownv);
                else
                    f = mc_tile<T, TY, NT>(smem, s, i0, j0, G, u, f1,
                                           f2, f3, f4, tau, ih1, ih2, mid, ownv);
                PROF(a, 8 * (s - 1) + 5);
                if (inside) {
                    if (G.exact) f = add_rn(f, fx);
                    if (F != T(0)) f = add_rn(f, F);
                    if (s < 5) {
                        out[g] = f;
                    } else {
                        eb = rkm_finish(un, g, ownv[0], tau * ownv[1], tau * ownv[2], tau * ownv[3],
                                        tau * f, eb);
                    }
                }
            }
            if (hb) {  // this thread's Dirichlet boundary node (dg/dt: ζ_t, or 0)
                if (ntiles <= (int)blockIdx.x) {  // no tile in this block: nothing was prefetched
                    if (G.exact) { bx = tx[bi]; by = ty[bj]; }
                    if (s == 5) {
                        bu = __ldcg(u + gb); b1 = __ldcg(f1 + gb); b3 = __ldcg(f3 + gb); b4 = __ldcg(f4 + gb);
                    }
                } else {
                    bx = sbnd[0][tid]; by = sbnd[1][tid]; bu = sbnd[2][tid];
                    b1 = sbnd[3][tid]; b3 = sbnd[4][tid]; b4 = sbnd[5][tid];
                }
                const T f = G.exact ? zt * (bx * by) : T(0);
                if (s < 5) out[gb] = f;
                else eb = rkm_finish(un, gb, bu, tau * b1, tau * b3, tau * b4, tau * f, eb);
            }
            if (!G.neumann) {  // the rest of the Dirichlet boundary (only where nb > grid × threads)
                for (int q = blockIdx.x + gridDim.x * (tid < 32 ? tid + NT : tid); q < nb;
                     q += gridDim.x * NT) {
                    int i, j;
                    boundary_node(q, G, i, j);
                    const int g = j * G.nx1 + i;
                    const T f = G.exact ? zt * (tx[i] * ty[j]) : T(0);
                    if (s < 5) out[g] = f;
                    else eb = rkm_finish(un, g, __ldcg(u + g), tau * __ldcg(f1 + g), tau * __ldcg(f3 + g),
                                         tau * __ldcg(f4 + g), tau * f, eb);
                }
            }
            pre_resident = resident;
            if (s == 5) block_error_to<NT>(eb, red, sync + a % 3, tid);
            PROF(a, 8 * (s - 1) + 6);
            grid_barrier(bar, target);
            PROF(a, 8 * (s - 1) + 7);
        }
        const bool accepted = attempt_decide(sctl, scti, sync + a % 3, &s_acc, tid);
        PROF(a, 41);
        first = accepted ? 1 : 2;
        if (accepted && G.neumann) {  // u_new[b] = u_new[m] + (u[b] − u[m]), (19)–(20)
            for (int q = qb; q < nb; q += gridDim.x * NT) {
                int i, j;
                boundary_node(q, G, i, j);
                const int b = j * G.nx1 + i;
                const int m = mirror(j, n2, true) * G.nx1 + mirror(i, n1, true);
                un[b] = __ldcg(un + m) + (__ldcg(u + b) - __ldcg(u + m));
            }
        }
    }
    if (blockIdx.x == 0 && tid == 0) {
        for (int q = 0; q < 8; ++q) ctl[q] = sctl[q];
        for (int q = 0; q < 16; ++q) cti[q] = scti[q];
    }
}

// NAME: tiles of 32 × TYV nodes, THREADS threads per block (32 × TYV, or twice that: every
// halo phase then takes one pass instead of two, and the SM has twice the warps to hide latency).
#define PERSIST_KERNEL(NAME, WILLMORE, TYV, THREADS, MINB)                                          \
    template <typename T>                                                                          \
    __global__ void __launch_bounds__(THREADS, MINB)                                               \
    NAME(T* u0, T* u1, T* f1, T* f2, T* f3, T* f4, const T* __restrict__ tx,                        \
         const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti,              \
         unsigned long long* sync, const int n1, const int n2, const T ih1, const T ih2,           \
         const T F, const int flags)                                                               \
    {                                                                                              \
        persist<T, WILLMORE, TYV, THREADS>(u0, u1, f1, f2, f3, f4, tx, ty, coef, ctl, cti, sync,   \
                                           n1, n2, ih1, ih2, F, flags);                            \
    }

// The tile is chosen at compile time (fused.py's TILES, passed as -D options): tile height
// PERSIST_TY, PERSIST_THREADS threads per block, at least PERSIST_MINB resident blocks per SM.
#if !defined(PERSIST_TY) || !defined(PERSIST_THREADS) || !defined(PERSIST_MINB)
#error "compile with -DPERSIST_TY=.. -DPERSIST_THREADS=.. -DPERSIST_MINB=.. (fused.py: TILES)"
#endif
PERSIST_KERNEL(mc_persist, false, PERSIST_TY, PERSIST_THREADS, PERSIST_MINB)
PERSIST_KERNEL(wm_persist, true, PERSIST_TY, PERSIST_THREADS, PERSIST_MINB)

// The dynamic shared memory (bytes) the kernels above need: out[0] mean curvature, out[1] Willmore.
template <typename T>
__global__ void persist_smem(int* out)
{
    out[0] = sizeof(McSmem<T, PERSIST_TY>);
    out[1] = sizeof(WmSmem<T, PERSIST_TY>);
}
