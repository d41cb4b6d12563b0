// Mean-curvature flow of graphs ([P0]; docs/MODELS.md §1): a whole run of Runge–Kutta–Merson attempts
// in ONE cooperative launch with ONE grid-wide barrier an attempt (curvature_persist.cu has five).
//
// Why: on small grids an attempt of curvature_persist.cu is bound by its five grid barriers and
// the five L2 round trips of its tile loads, not by arithmetic. Here each block owns one square
// tile of BT × BT interior nodes for the whole launch and keeps in shared memory u on the tile plus
// a halo of 5 nodes (one a stage: the operator reads the 3 × 3 neighbourhood), then computes the
// five stages on regions that shrink by one node a stage: R_s = the tile grown by 5 − s. The
// halo's nodes are computed again by the neighbouring blocks with the same operations on the
// same values, so the state is bit for bit that of curvature_persist.cu. Only u_new and the
// block's error maximum leave the block; after the one barrier every block runs the same
// controller on the same maximum (rkm_control.cuh). A rejected attempt keeps u and f1 in shared
// memory and starts again from stage 2; an accepted one reloads the tile and its halo.
//
// Boundaries, as the loads of curvature_persist.cu: a position outside the interior takes the
// stage input of its mirror (Neumann: the inner neighbour; Dirichlet: the clamped boundary node,
// whose f is dg/dt, ζ_t or 0). Such a position computes its mirror's f itself (the mirror's
// neighbourhood lies in the region of the previous stage), so its u and every f_s equal the
// mirror's and so does its stage input, with no second pass. Dirichlet boundary nodes' error and u_new are formed by all blocks
// in a grid-stride loop (their f never depends on u); a Neumann boundary node's copy is made by
// the block that owns its inner neighbour (so no block reads what another block writes between
// two barriers).
#include "rkm_persist.cuh"

#if !defined(BLOCKED_T) || !defined(BLOCKED_THREADS) || !defined(BLOCKED_MINB)
#error "compile with -DBLOCKED_T=.. -DBLOCKED_THREADS=.. -DBLOCKED_MINB=.. (fused.py: BLOCKED)"
#endif
#define HALO 5
#define BT BLOCKED_T
#define NT BLOCKED_THREADS
#define W (BT + 2 * HALO)  // the tile and its halo, a side

// for (q = tid; q < N; q += NT) (N, NT compile-time constants); unrolled by BLOCKED_UNROLL (a
// full unroll of the stage passes makes the compiler hoist every item's loads: spills)
#ifndef BLOCKED_UNROLL
#define BLOCKED_UNROLL 1
#endif
#define PRAGMA_(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_(x)
#define FOR_ITEMS(N, q)                                                                            \
    PRAGMA(unroll BLOCKED_UNROLL) for (int r_ = 0; r_ < ((N) + NT - 1) / NT; ++r_)                \
        if (const int q = tid + r_ * NT; q < (N))
// the same fully unrolled: the reload issues all its loads before the first one is waited for
#define FOR_ALL(N, q)                                                                              \
    _Pragma("unroll") for (int r_ = 0; r_ < ((N) + NT - 1) / NT; ++r_)                            \
        if (const int q = tid + r_ * NT; q < (N))

template <typename T>
struct BlkSmem {
    T U[W * W];     // u on R_0 (loaded through the mirror); the stage-1 input
    T S[2][W * W];  // the inputs of stages 2–5 (stage s in S[s & 1]); S[0] holds u_new after stage 5
    T F[4][W * W];  // f_1..f_4 on R_1..R_4
    T cx[3][W], cy[3][W];  // exact forcing: X^(0..2)(x_i) by column, Y^(0..2)(y_j) by row
};

// Where tile position (x, y) is: global node (gi, gj), its mirror's position (mx, my) (itself
// for an interior node or a Dirichlet boundary node), and whether the mirror is interior.
struct Pos {
    int gi, gj, mx, my;
    bool interior, minterior;
};

static __device__ __forceinline__ Pos locate(const int x, const int y, const int gi0, const int gj0,
                                             const Grid& G)
{
    Pos p;
    p.gi = gi0 + x;
    p.gj = gj0 + y;
    const int mi = mirror(p.gi, G.n1, G.neumann), mj = mirror(p.gj, G.n2, G.neumann);
    p.mx = x + mi - p.gi;
    p.my = y + mj - p.gj;
    p.interior = p.gi >= 1 && p.gi < G.n1 && p.gj >= 1 && p.gj < G.n2;
    p.minterior = mi >= 1 && mi < G.n1 && mj >= 1 && mj < G.n2;
    return p;
}

// f at position (x, y) from the stage input Sin: Q H (+ the exact forcing, + F) inside, dg/dt on
// a Dirichlet boundary node (the operations of curvature_persist.cu's tiles and boundary).
template <typename T>
__device__ __forceinline__ T f_at(const BlkSmem<T>& sm, const T* Sin, const int x, const int y,
                                  const bool interior, const Grid& G, const T ih1, const T ih2,
                                  const T F, const T cz, const T zt)
{
    if (!interior) return G.exact ? zt * (sm.cx[0][x] * sm.cy[0][y]) : T(0);
    T Q, H;
    node_curvature(Sin + y * W + x, W, ih1, ih2, Q, H);
    T f = mul_rn(Q, H);
    if (G.exact) {
#define PX(a, b) (cz * (sm.cx[a][x] * sm.cy[b][y]))
        const T fx = zt * (sm.cx[0][x] * sm.cy[0][y])
                     - mean_curvature_op<T>(PX(1, 0), PX(0, 1), PX(2, 0), PX(1, 1), PX(0, 2));
#undef PX
        f = add_rn(f, fx);
    }
    if (F != T(0)) f = add_rn(f, F);
    return f;
}

// Stage S (1–4): f_S on R_S, then the stage-(S+1) input there; stage 5: f_5 on the tile, u_new
// and the error. Returns the thread's error maximum so far.
template <typename T, int S>
__device__ __forceinline__ unsigned long long stage(BlkSmem<T>& sm, const int gi0, const int gj0,
                                                    const Grid& G, const T ih1,
                                                    const T ih2, const T F, const T cz,
                                                    const T zt, const T tau, T* un,
                                                    unsigned long long eb, const int tid)
{
    constexpr int n = W - 2 * S;
    const T* Sin = S == 1 ? sm.U : sm.S[S & 1];
    T* Sout = sm.S[(S + 1) & 1];
    FOR_ITEMS(n * n, q) {
        const int y = S + q / n, x = S + q % n, o = y * W + x;
        const Pos p = locate(x, y, gi0, gj0, G);
        if (S < 5) {  // every position: f at its mirror (itself unless outside the interior)
            const T f = f_at(sm, Sin, p.mx, p.my, p.minterior, G, ih1, ih2, F, cz, zt);
            sm.F[S - 1][o] = f;
            const T a1 = S == 1 ? f : sm.F[0][o];
            const T a2 = S == 2 ? f : T(0);
            const T a3 = S == 3 ? f : (S == 4 ? sm.F[2][o] : T(0));
            const T a4 = S == 4 ? f : T(0);
            Sout[o] = stage_combine(S + 1, sm.U[o], a1, a2, a3, a4, tau);
        } else if (p.interior) {
            const T k1 = tau * sm.F[0][o], k3 = tau * sm.F[2][o], k4 = tau * sm.F[3][o];
            const T k5 = tau * f_at(sm, Sin, x, y, true, G, ih1, ih2, F, cz, zt);
            const unsigned long long b = rkm_error_bits(k1, k3, k4, k5);
            eb = b > eb ? b : eb;
            const T v = rkm_new(sm.U[o], k1, k4, k5);
            un[p.gj * G.nx1 + p.gi] = v;
            sm.S[0][o] = v;
        }
    }
    __syncthreads();
    return eb;
}

template <typename T>
__device__ void blocked(T* u0, T* u1, const T* __restrict__ tx, const T* __restrict__ ty,
                        double* ctl, int* cti, unsigned long long* sync, const int n1, const int n2,
                        const T ih1, const T ih2, const T F, const int flags)
{
    RKM_PERSIST_SHARED(T, NT);
    extern __shared__ __align__(16) unsigned char dsm[];
    BlkSmem<T>& sm = *reinterpret_cast<BlkSmem<T>*>(dsm);
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const Grid G = make_grid(n1, n2, flags, BT);
    const int tyi = blockIdx.x / G.ntx, txi = blockIdx.x - tyi * G.ntx;  // one tile a block
    const int gi0 = 1 + BT * txi - HALO, gj0 = 1 + BT * tyi - HALO;      // node of position (0, 0)
    const int nb = 2 * (n1 + 1) + 2 * (n2 - 1);
    if (tid < 8) sctl[tid] = ctl[tid];
    if (tid < 16) scti[tid] = cti[tid];
    if (G.exact) {
        FOR_ITEMS(3 * W, q) {
            const int k = q / W, x = q - k * W;
            sm.cx[k][x] = tx[k * G.nx1 + min(max(gi0 + x, 0), n1)];
            sm.cy[k][x] = ty[k * G.ny1 + min(max(gj0 + x, 0), n2)];
        }
    }
    __syncthreads();
    unsigned long long target = 0;
    unsigned long long* bar = sync + SYNC_BAR;
    bool reload = true;  // u changed (first attempt, or the last one was accepted)
    for (int a = 0; scti[I_ACTIVE]; ++a) {
        const Attempt<T> at = attempt_of(sctl, scti, u0, u1);
        const T tau = at.tau;
        const T* u = at.u;
        T* un = at.un;
        attempt_start(a, tid, at.t, at.tau_d, G.exact, scz, szt, sync);
        // this thread's first Dirichlet boundary node: its u is loaded now, used after stage 5
        const int qb = blockIdx.x + gridDim.x * tid;
        int bi = 0, bj = 0;
        T bu = T(0);
        if (!G.neumann && qb < nb) {
            boundary_node(qb, G, bi, bj);
            bu = __ldcg(u + bj * G.nx1 + bi);
        }
        if (reload) {
            FOR_ALL(W * W, q) {
                const int y = q / W, x = q - y * W;
                sm.U[q] = __ldcg(u + mirror(gj0 + y, n2, G.neumann) * G.nx1 + mirror(gi0 + x, n1, G.neumann));
            }
        }
        __syncthreads();
        unsigned long long eb = 0ull;
#define ZS(s) (G.exact ? scz[s - 1] : T(0)), (G.exact ? szt[s - 1] : T(0))
        if (reload) {
            eb = stage<T, 1>(sm, gi0, gj0, G, ih1, ih2, F, ZS(1), tau, un, eb, tid);
        } else {  // rejected: f1 = f(t, u) is kept; the stage-2 input with the new τ
            constexpr int n = W - 2;
            FOR_ITEMS(n * n, q) {
                const int o = (1 + q / n) * W + 1 + q % n;
                sm.S[0][o] = stage_combine(2, sm.U[o], sm.F[0][o], T(0), T(0), T(0), tau);
            }
            __syncthreads();
        }
        eb = stage<T, 2>(sm, gi0, gj0, G, ih1, ih2, F, ZS(2), tau, un, eb, tid);
        eb = stage<T, 3>(sm, gi0, gj0, G, ih1, ih2, F, ZS(3), tau, un, eb, tid);
        eb = stage<T, 4>(sm, gi0, gj0, G, ih1, ih2, F, ZS(4), tau, un, eb, tid);
        eb = stage<T, 5>(sm, gi0, gj0, G, ih1, ih2, F, ZS(5), tau, un, eb, tid);
#undef ZS
        if (!G.neumann) {  // Dirichlet boundary nodes: f = dg/dt (ζ_t, or 0) at the five stage times
            for (int q = qb; q < nb; q += gridDim.x * NT) {
                int i = bi, j = bj;
                T uu = bu;
                if (q != qb) {
                    boundary_node(q, G, i, j);
                    uu = __ldcg(u + j * G.nx1 + i);
                }
                T k1 = T(0), k3 = T(0), k4 = T(0), k5 = T(0);
                if (G.exact) {
                    const T b = tx[i] * ty[j];
                    k1 = tau * (szt[0] * b); k3 = tau * (szt[2] * b);
                    k4 = tau * (szt[3] * b); k5 = tau * (szt[4] * b);
                }
                eb = rkm_finish(un, j * G.nx1 + i, uu, k1, k3, k4, k5, eb);
            }
        }
        block_error_to<NT>(eb, red, sync + a % 3, tid);  // into this attempt's slot
        grid_barrier(bar, target);
        reload = attempt_decide(sctl, scti, sync + a % 3, &s_acc, tid);
        if (reload && G.neumann) {  // u_new[b] = u_new[m] + (u[b] − u[m]) where this block owns m
            constexpr int n = BT + 2;
            FOR_ITEMS(n * n, q) {
                const int y = HALO - 1 + q / n, x = HALO - 1 + q % n;
                const Pos p = locate(x, y, gi0, gj0, G);
                const bool bnd = p.gi >= 0 && p.gi <= n1 && p.gj >= 0 && p.gj <= n2 && !p.interior;
                const bool owned = p.mx >= HALO && p.mx < HALO + BT && p.my >= HALO && p.my < HALO + BT;
                if (bnd && owned) {
                    const int b = p.gj * G.nx1 + p.gi, m = p.my * W + p.mx;
                    un[b] = sm.S[0][m] + (__ldcg(u + b) - sm.U[m]);
                }
            }
        }
    }
    if (blockIdx.x == 0 && tid == 0) {
        for (int q = 0; q < 8; ++q) ctl[q] = sctl[q];
        for (int q = 0; q < 16; ++q) cti[q] = scti[q];
    }
}

// The arguments of curvature_persist.cu's kernels (f1..f4 and coef unused: the stages stay in
// shared memory; mean curvature's exact forcing reads the 1D tables tx, ty).
template <typename T>
__global__ void __launch_bounds__(NT, BLOCKED_MINB)
mc_blocked(T* u0, T* u1, T* f1, T* f2, T* f3, T* f4, const T* __restrict__ tx,
           const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti,
           unsigned long long* sync, const int n1, const int n2, const T ih1, const T ih2,
           const T F, const int flags)
{
    blocked<T>(u0, u1, tx, ty, ctl, cti, sync, n1, n2, ih1, ih2, F, flags);
}

// The dynamic shared memory (bytes) of mc_blocked.
template <typename T>
__global__ void blocked_smem(int* out)
{
    out[0] = sizeof(BlkSmem<T>);
}
