// Curvature flows of graphs ([P0]; docs/MODELS.md §1): fused Runge–Kutta–Merson stage kernels.
//
// One kernel per right-hand-side evaluation (stage s = 1..5 of Algorithm 4.1). Each warp walks a
// column strip up a segment of rows with a register sliding window (the lean walkers below: no
// shared memory), forming the stage input  u + Σ a_sm k_m  as it loads each row, w = Q H one row
// ahead of the Willmore flux (edge Q's are recomputed, never stored: each edge's once), and
// writes k_s = τ f(t + c_s τ, ·). Stage 5 also forms u_new = u + (k1 + 4k4 + k5)/6 in the other
// state buffer and the error max|0.2k1 − 0.9k3 + 0.8k4 − 0.1k5| (one atomicMax per block); the
// last block to finish decides acceptance, the next τ and the time on the device (the control
// block below), so a whole run of attempts can be launched (or replayed as a CUDA graph) without
// the host.
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

// The last block of stage 5: accept or reject, the next τ (docs/MODELS.md §1.3), the time, and the Neumann
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


// ---- lean walkers ---------------------------------------------------------------------------
// One warp owns a column strip of 32 lanes (one node column each) and walks up a segment of
// LEAN_L rows with a register sliding window: the row entering the window is loaded (prefetched
// two rows ahead), x-neighbours come from __shfl_*_sync, and every corner mean, edge gradient and
// edge Q is formed once (the E edge and the corner to the right by its lane, the N edge by its
// lane; W from the lane to the left, S carried from the previous row). Halo lanes compute but do
// not write: lanes 1..30 write for mean curvature (30 columns per strip), 2..29 for Willmore (28).
// No shared memory and no __syncthreads (except the stage-5 block reduction). Work items
// (strip, segment) are dealt to the warps of whatever grid is launched (grid-stride), so any grid
// is correct; the lean grid — one warp per item — is ((n1 + CW − 1) / CW, ceil(G / 8)) blocks of
// (32, 8), G = (n2 + L) / L segments of L = lean_rows(n1, n2, CW) rows.

#define LEAN_L 32       // rows per warp walk on large grids
#define LEAN_LMIN 4      // ... shortened (halving) down to this
#define LEAN_ITEMS 8192  // until there are this many work items (warps) to deal out
#ifndef LEAN_PD3
#define LEAN_PD3 2       // rows loaded ahead by stages 3–5 (3–4 arrays a row); 2 for the others
#endif

// Rows per walk: LEAN_L, halved while fewer than LEAN_ITEMS (strip, segment) items (small grids
// need more, shorter walks). fused.py (lean_rows, lean_grid) computes the same for the lean grid.
__device__ __forceinline__ int lean_rows(const int n1, const int n2, const int cw)
{
    const int strips = (n1 + cw - 1) / cw;
    int L = LEAN_L;
    while (L > LEAN_LMIN && strips * ((n2 + L) / L) < LEAN_ITEMS) L >>= 1;
    return L;
}

template <typename T>
struct LeanCtx {
    const T* tx;
    const T* ty;
    const T* coef;
    int n1, n2, nx1, ny1;
    T ih1, ih2, F, cz, zt;
    bool neumann, exact;
};

// The raw arrays of the stage input at one node (stage ST; 0 = single rhs on u).
template <typename T>
struct Raw {
    T a, b, c, d;
};

template <typename T, int ST>
__device__ __forceinline__ Raw<T> raw_load(const T* u, const T* k1, const T* k2, const T* k3,
                                           const T* k4, const int g)
{
    Raw<T> r;
    r.a = __ldg(u + g);
    r.b = ST >= 2 ? __ldg(k1 + g) : T(0);
    r.c = ST == 3 ? __ldg(k2 + g) : (ST >= 4 ? __ldg(k3 + g) : T(0));
    r.d = ST == 5 ? __ldg(k4 + g) : T(0);
    return r;
}

// u + Σ a_sm k_m exactly as stage_input (and RungeKuttaMerson) forms it.
template <typename T, int ST>
__device__ __forceinline__ T combine(const Raw<T>& r)
{
    if (ST <= 1) return r.a;
    if (ST == 2) return r.a + r.b / T(3);
    if (ST == 3) return r.a + (r.b + r.c) / T(6);
    if (ST == 4) return r.a + r.b / T(8) + T(0.375) * r.c;
    return r.a + T(0.5) * r.b - T(1.5) * r.c + T(2) * r.d;
}

template <typename T>
__device__ __forceinline__ T shup(const T v) { return __shfl_up_sync(0xffffffffu, v, 1); }
template <typename T>
__device__ __forceinline__ T shdn(const T v) { return __shfl_down_sync(0xffffffffu, v, 1); }

// The value f at node g of a writing lane: the rhs output, or k = τ f for stages 1–4, or for
// stage 5 u_new and the running error maximum (bit pattern of a non-negative double).
template <typename T, int ST>
__device__ __forceinline__ void emit(const T fval, const int g, T* out, T* un, const T* u,
                                     const T* k1, const T* k3, const T* k4, const T tau,
                                     unsigned long long& eb)
{
    if (ST == 0) {
        out[g] = fval;
        return;
    }
    const T k = tau * fval;
    if (ST < 5) {
        out[g] = k;
        return;
    }
    const T a1 = __ldg(k1 + g), a3 = __ldg(k3 + g), a4 = __ldg(k4 + g);
    const T e = T(0.2) * a1 - T(0.9) * a3 + T(0.8) * a4 - T(0.1) * k;
    const unsigned long long b = (unsigned long long)__double_as_longlong((double)fabs(e));
    eb = b > eb ? b : eb;
    un[g] = __ldg(u + g) + (a1 + T(4) * a4 + k) / T(6);
}

// The φ part of one window step, shared by both flows: row r enters (pn), the corner (i+½, r−½),
// the E edge of row r−1 and the N edge (i, r−½) are formed once; node r−1 gets Q and the bracket H.
template <typename T>
struct PhiWin {
    T pc, pcr, sc;  // φ(r−1) own and right, their sum
    T cdn;          // corner (i+½, r−3/2)
    T fyS, qS;      // N edge of the previous step = S edge of node r−1
    // edge data of the last step (Willmore needs them one row later)
    T gxE, gyE, iqE, gxN, gyN, iqN;
    __device__ __forceinline__ void init(const T p)
    {
        pc = p;
        pcr = shdn(p);
        sc = pc + pcr;
        cdn = fyS = qS = T(0);
        gxE = gyE = iqE = gxN = gyN = iqN = T(0);
    }
    // returns Q and H of node r−1 and shifts the window
    __device__ __forceinline__ void step(const T pn, const T ih1, const T ih2, T& Q, T& H)
    {
        const T pnr = shdn(pn);
        const T sn = pn + pnr;
        const T cup = T(0.25) * (sc + sn);  // corner (i+½, r−½)
        const T cl = shup(cup);             // corner (i−½, r−½)
        // E edge (i+½, r−1)
        gxE = (pcr - pc) * ih1;
        gyE = (cup - cdn) * ih2;
        const T aE = T(1) + gxE * gxE + gyE * gyE;
        iqE = rsqrt_t(aE);
        const T qE = aE * iqE, fxE = gxE * iqE;
        // N edge (i, r−½)
        gxN = (cup - cl) * ih1;
        gyN = (pn - pc) * ih2;
        const T aN = T(1) + gxN * gxN + gyN * gyN;
        iqN = rsqrt_t(aN);
        const T qN = aN * iqN, fyN = gyN * iqN;
        const T fxW = shup(fxE), qW = shup(qE);
        H = (fxE - fxW) * ih1 + (fyN - fyS) * ih2;
        Q = T(0.25) * ((qE + qW) + (qN + qS));
        pc = pn;
        pcr = pnr;
        sc = sn;
        cdn = cup;
        fyS = fyN;
        qS = qN;
    }
};

// FAST: the walk's loads stay within rows 1..N2−1 (no mirror) and it emits no boundary row.
template <typename T, int ST, bool WM, bool FAST>
__device__ __forceinline__ void lean_walk(const LeanCtx<T>& c, const int s, const int j0, const int j1,
                                          const T* u, const T* k1, const T* k2, const T* k3,
                                          const T* k4, T* out, T* un, const T tau,
                                          unsigned long long& eb)
{
    constexpr int H = WM ? 2 : 1, CW = 32 - 2 * H;
    const int lane = threadIdx.x;
    const int i = s * CW + lane - (H - 1);
    const bool wcol = (lane >= H && lane < 32 - H && i <= c.n1) || i == 0;
    const bool bcol = i == 0 || i == c.n1;
    const int ci = mirror(i, c.n1, c.neumann);
    const int ic = i < 0 ? 0 : (i > c.n1 ? c.n1 : i);  // clamped column (tables, boundary data)
    const int nn = c.nx1 * c.ny1;
    // per-lane forcing constants of mean curvature: tx rows 0..2 at this column
    T tx0 = T(0), ctx0 = T(0), ctx1 = T(0), ctx2 = T(0);
    if (c.exact) {
        tx0 = __ldg(c.tx + ic);
        if (!WM) {
            ctx0 = c.cz * tx0;
            ctx1 = c.cz * __ldg(c.tx + c.nx1 + ic);
            ctx2 = c.cz * __ldg(c.tx + 2 * c.nx1 + ic);
        }
    }
    constexpr int LAG = WM ? 2 : 1;  // step r emits row r − LAG
    const int r0 = j0 - LAG + 1;     // first step
    PhiWin<T> P;
#define ROWG(r) ((FAST ? (r) : mirror((r), c.n2, c.neumann)) * c.nx1 + ci)
    constexpr int PD = ST >= 3 ? LEAN_PD3 : 2;  // prefetch distance (rows)
    Raw<T> ra = raw_load<T, ST>(u, k1, k2, k3, k4, ROWG(r0 - 1));
    Raw<T> rb = raw_load<T, ST>(u, k1, k2, k3, k4, ROWG(r0));
    Raw<T> rc;
    if (PD == 2) rc = raw_load<T, ST>(u, k1, k2, k3, k4, ROWG(r0 + 1));
    P.init(combine<T, ST>(ra));
    // Willmore window: w(r−2) own/right/sum, w corner (i+½, r−5/2), S flux, Q(r−2), edge data of
    // the previous step (E edge of row r−2, N edge (i, r−3/2))
    T wc = T(0), wcr = T(0), wsc = T(0), wcdn = T(0), fS = T(0), Qp = T(0);
    T pgxE = T(0), pgyE = T(0), piqE = T(0), pgxN = T(0), pgyN = T(0), piqN = T(0);
    const bool edge_strip = c.neumann && (i <= 1 || i >= c.n1 - 1 || s == 0);
    const bool any_edge = __any_sync(0xffffffffu, edge_strip);
    const int rend = j1 - 1 + LAG;
#pragma unroll 2
    for (int r = r0; r <= rend; ++r) {
        const T pn = combine<T, ST>(rb);
        if (PD == 2) {
            rb = rc;
            rc = raw_load<T, ST>(u, k1, k2, k3, k4, ROWG(r + 2));
        } else {
            rb = raw_load<T, ST>(u, k1, k2, k3, k4, ROWG(r + 1));
        }
        const int jo = r - LAG;
        const bool emit_row = jo >= j0;
        // the exact forcing's data of the emitted row, loaded before the arithmetic
        T e0 = T(0), e1 = T(0), e2 = T(0), e3 = T(0), e4 = T(0), e5 = T(0), e6 = T(0);
        if (c.exact) {
            const int jl = FAST ? jo : (jo < 0 ? 0 : (jo > c.n2 ? c.n2 : jo));
            if (WM) {
                const T* q = c.coef + jl * c.nx1 + ic;
                e0 = __ldg(q);
                e1 = __ldg(q + nn);
                e2 = __ldg(q + 2 * nn);
                e3 = __ldg(q + 3 * nn);
                e4 = __ldg(q + 4 * nn);
                e5 = __ldg(q + 5 * nn);
                e6 = __ldg(q + 6 * nn);
            } else {
                e0 = __ldg(c.ty + jl);
                e1 = __ldg(c.ty + c.ny1 + jl);
                e2 = __ldg(c.ty + 2 * c.ny1 + jl);
            }
        }
        T Q, Hb;
        P.step(pn, c.ih1, c.ih2, Q, Hb);  // node r−1
        T fval = T(0);
        if (!WM) {
            fval = Q * Hb;
        } else {
            // w(r−1) with its boundary values
            const int jw = r - 1;
            T wn = Q * Hb;
            if (c.neumann) {
                if (any_edge) {
                    const T wd = shdn(wn), wu = shup(wn);
                    wn = i == 0 ? wd : (i == c.n1 ? wu : wn);
                }
                if (!FAST && jw == c.n2) wn = wc;  // w(N2) = w(N2−1)
            } else if (bcol || (!FAST && (jw == 0 || jw == c.n2))) {
                wn = (c.exact && i >= 0 && i <= c.n1 && jw >= 0 && jw <= c.n2)
                         ? exact_w(c.coef, nn, jw * c.nx1 + i, c.cz) : T(0);
            }
            const T wnr = shdn(wn);
            const T wsn = wn + wnr;
            if (!FAST && c.neumann && jw == 1) {  // w(0) = w(1): replace the row below before it is used
                wc = wn;
                wcr = wnr;
                wsc = wsn;
            }
            const T wcup = T(0.25) * (wsc + wsn);  // w corner (i+½, r−3/2)
            const T wcl = shup(wcup);
            // flux through the E edge of row r−2 (φ edge data of the previous step)
            T fE;
            {
                const T wx = (wcr - wc) * c.ih1, wy = (wcup - wcdn) * c.ih2;
                const T we = T(0.5) * (wcr + wc);
                const T iq3 = piqE * piqE * piqE;
                const T cross = -pgxE * pgyE * iq3;
                fE = (piqE - pgxE * pgxE * iq3) * wx + cross * wy - T(0.5) * we * we * iq3 * pgxE;
            }
            // flux through the N edge (i, r−3/2)
            T fN;
            {
                const T wx = (wcup - wcl) * c.ih1, wy = (wn - wc) * c.ih2;
                const T we = T(0.5) * (wn + wc);
                const T iq3 = piqN * piqN * piqN;
                const T cross = -pgxN * pgyN * iq3;
                fN = cross * wx + (piqN - pgyN * pgyN * iq3) * wy - T(0.5) * we * we * iq3 * pgyN;
            }
            const T fW = shup(fE);
            fval = -Qp * ((fE - fW) * c.ih1 + (fN - fS) * c.ih2);  // node r−2
            wc = wn;
            wcr = wnr;
            wsc = wsn;
            wcdn = wcup;
            fS = fN;
            Qp = Q;
            pgxE = P.gxE; pgyE = P.gyE; piqE = P.iqE;
            pgxN = P.gxN; pgyN = P.gyN; piqN = P.iqN;
        }
        if (emit_row && wcol) {
            const bool bnd = bcol || (!FAST && (jo == 0 || jo == c.n2));
            if (!(bnd && c.neumann)) {
                const int g = jo * c.nx1 + i;
                if (bnd) {
                    fval = c.exact ? c.zt * (tx0 * (WM ? __ldg(c.ty + jo) : e0)) : T(0);  // Dirichlet: dg/dt
                } else {
                    if (c.exact) {
                        if (WM) {  // exact_forcing<T, true> on the preloaded coefficients
                            const T cz = c.cz, c2 = cz * cz;
                            const T d = T(1) + c2 * e1;
                            const T d2 = d * d;
                            const T num = ((((e6 * c2 + e5) * c2 + e4) * c2 + e3) * c2 + e2) * cz;
                            fval = fval + (c.zt * e0 - num / (d2 * d2));
                        } else {
                            const T ty0 = e0, ty1 = e1, ty2 = e2;
                            fval = fval + (c.zt * (tx0 * ty0)
                                           - mean_curvature_op_lean<T>(ctx1 * ty0, ctx0 * ty1, ctx2 * ty0,
                                                                       ctx1 * ty1, ctx0 * ty2));
                        }
                    }
                    if (c.F != T(0)) fval = fval + c.F;
                }
                emit<T, ST>(fval, g, out, un, u, k1, k3, k4, tau, eb);
            }
        }
    }
#undef ROWG
}

template <typename T, int ST, bool WM>
__device__ __forceinline__ void lean_all(const LeanCtx<T>& c, const T* u, const T* k1,
                                         const T* k2, const T* k3, const T* k4, T* out, T* un,
                                         const T tau, unsigned long long& eb)
{
    constexpr int CW = WM ? 28 : 30, LAG = WM ? 2 : 1;
    const int L = lean_rows(c.n1, c.n2, CW);
    const int S = (c.n1 + CW - 1) / CW, G = (c.n2 + L) / L;
    const int items = S * G;
    const int nw = gridDim.x * gridDim.y * blockDim.y;
    for (int it = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.y + threadIdx.y; it < items;
         it += nw) {
        const int seg = it / S, s = it - seg * S;
        const int j0 = seg * L, j1 = min(j0 + L, c.n2 + 1);  // output rows [j0, j1)
        if (j0 - LAG >= 1 && j1 + LAG + 1 <= c.n2 - 1)
            lean_walk<T, ST, WM, true>(c, s, j0, j1, u, k1, k2, k3, k4, out, un, tau, eb);
        else
            lean_walk<T, ST, WM, false>(c, s, j0, j1, u, k1, k2, k3, k4, out, un, tau, eb);
    }
}

template <typename T, bool WILLMORE>
__device__ void rkm_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4,
                          const T* __restrict__ tx, const T* __restrict__ ty,
                          const T* __restrict__ coef, double* ctl,
                          int* cti, unsigned long long* err, unsigned int* count, const int n1,
                          const int n2, const T ih1, const T ih2, const T F, const int flags)
{
    __shared__ unsigned long long red[BX * BY / 32];
    __shared__ int last;
    if (!cti[I_ACTIVE]) return;  // uniform: the run is over (or failed)
    const bool neumann = flags & FLAG_NEUMANN, exact = flags & FLAG_EXACT;
    const int cur = cti[I_CUR];
    const T* u = cur ? u1 : u0;
    T* un = cur ? u0 : u1;
    const double tau = ctl[C_TRY];
    const double cstage = stage == 1 ? 0.0 : (stage == 4 ? tau / 2.0 : (stage == 5 ? tau : tau / 3.0));
    const double ts = ctl[C_T] + cstage;
    const double PI = 3.14159265358979323846;
    LeanCtx<T> c;
    c.tx = tx; c.ty = ty; c.coef = coef;
    c.n1 = n1; c.n2 = n2; c.nx1 = n1 + 1; c.ny1 = n2 + 1;
    c.ih1 = ih1; c.ih2 = ih2; c.F = F;
    c.cz = exact ? T(cospi(ts)) : T(0);
    c.zt = exact ? T(-PI * sinpi(ts)) : T(0);
    c.neumann = neumann; c.exact = exact;
    const T tt = T(tau);
    unsigned long long eb = 0ull;
    switch (stage) {
    case 1: lean_all<T, 1, WILLMORE>(c, u, k1, k2, k3, k4, k1, un, tt, eb); return;
    case 2: lean_all<T, 2, WILLMORE>(c, u, k1, k2, k3, k4, k2, un, tt, eb); return;
    case 3: lean_all<T, 3, WILLMORE>(c, u, k1, k2, k3, k4, k3, un, tt, eb); return;
    case 4: lean_all<T, 4, WILLMORE>(c, u, k1, k2, k3, k4, k4, un, tt, eb); return;
    default: lean_all<T, 5, WILLMORE>(c, u, k1, k2, k3, k4, k4, un, tt, eb); break;
    }
    // stage 5: block max of the error bit patterns (non-negative doubles order as integers; NaN
    // stays on top), one atomicMax per block; the last block decides
    __threadfence();
    const int tid = threadIdx.y * BX + threadIdx.x;
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, eb, o);
        eb = other > eb ? other : eb;
    }
    if ((tid & 31) == 0) red[tid >> 5] = eb;
    __syncthreads();
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

// Resident blocks of 256 threads per SM the register allocation must allow (occupancy: the walk
// hides its load latency with other warps): 6 (≤ 40 registers) float / 4 (≤ 64) double for mean
// curvature, 2 (≤ 128) for Willmore.
#ifndef LEAN_MC_MINB_F
#define LEAN_MC_MINB_F 6
#endif
#ifndef LEAN_MC_MINB_D
#define LEAN_MC_MINB_D 4
#endif
#ifndef LEAN_WM_MINB
#define LEAN_WM_MINB 2
#endif
#define MC_MINB (sizeof(T) == 4 ? LEAN_MC_MINB_F : LEAN_MC_MINB_D)
#define WM_MINB LEAN_WM_MINB

template <typename T>
__global__ void __launch_bounds__(BX * BY, MC_MINB)
mc_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4, const T* __restrict__ tx,
         const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti, unsigned long long* err,
         unsigned int* count, const int n1, const int n2, const T ih1, const T ih2, const T F,
         const int flags)
{
    rkm_stage<T, false>(stage, u0, u1, k1, k2, k3, k4, tx, ty, coef, ctl, cti, err, count, n1, n2, ih1,
                        ih2, F, flags);
}

template <typename T>
__global__ void __launch_bounds__(BX * BY, WM_MINB)
wm_stage(const int stage, T* u0, T* u1, T* k1, T* k2, T* k3, T* k4, const T* __restrict__ tx,
         const T* __restrict__ ty, const T* __restrict__ coef, double* ctl, int* cti, unsigned long long* err,
         unsigned int* count, const int n1, const int n2, const T ih1, const T ih2, const T F,
         const int flags)
{
    rkm_stage<T, true>(stage, u0, u1, k1, k2, k3, k4, tx, ty, coef, ctl, cti, err, count, n1, n2, ih1,
                       ih2, F, flags);
}

// One right-hand-side evaluation f(t, u) on all nodes (no τ, no stage combination): the kernel
// the GPU tests compare with the NumPy float64 reference, and the one
// benchmarks/curvature/timing.py measures.
// Neumann boundary nodes are not written (the launcher copies the inner neighbours).
template <typename T, bool WILLMORE>
__device__ void rhs_eval(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
                         const T* __restrict__ ty, const T* __restrict__ coef, const double t,
                         const int n1, const int n2, const T ih1, const T ih2, const T F,
                         const int flags)
{
    const bool exact = flags & FLAG_EXACT;
    const double PI = 3.14159265358979323846;
    LeanCtx<T> c;
    c.tx = tx; c.ty = ty; c.coef = coef;
    c.n1 = n1; c.n2 = n2; c.nx1 = n1 + 1; c.ny1 = n2 + 1;
    c.ih1 = ih1; c.ih2 = ih2; c.F = F;
    c.cz = exact ? T(cospi(t)) : T(0);
    c.zt = exact ? T(-PI * sinpi(t)) : T(0);
    c.neumann = flags & FLAG_NEUMANN; c.exact = exact;
    unsigned long long eb = 0ull;
    lean_all<T, 0, WILLMORE>(c, u, u, u, u, u, f, f, T(0), eb);
}

template <typename T>
__global__ void __launch_bounds__(BX * BY, MC_MINB)
mc_rhs(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
       const T* __restrict__ ty, const T* __restrict__ coef, const double t, const int n1, const int n2, const T ih1,
       const T ih2, const T F, const int flags)
{
    rhs_eval<T, false>(u, f, tx, ty, coef, t, n1, n2, ih1, ih2, F, flags);
}

template <typename T>
__global__ void __launch_bounds__(BX * BY, WM_MINB)
wm_rhs(const T* __restrict__ u, T* __restrict__ f, const T* __restrict__ tx,
       const T* __restrict__ ty, const T* __restrict__ coef, const double t, const int n1, const int n2, const T ih1,
       const T ih2, const T F, const int flags)
{
    rhs_eval<T, true>(u, f, tx, ty, coef, t, n1, n2, ih1, ih2, F, flags);
}

// Run-ahead (fused.py, FusedRKM.run with `ahead`): arm the spare buffers for the next run of
// `count` accepted steps on the device, from the state and the controller the current run ends
// with, as the host's arm() would after reading them back (open-ended: no end time): u[cur] into
// both spare buffers (as the constructor fills both), the spare control block zero but for t, the
// proposal τ (also the first try), the tolerance, active, the target and cur = 0.
template <typename T>
__global__ void rkm_arm_ahead(const T* __restrict__ u0, const T* __restrict__ u1,
                              const double* __restrict__ ctl_from, const int* __restrict__ cti_from,
                              T* __restrict__ v0, T* __restrict__ v1, double* ctl, int* cti,
                              const long long n, const int count)
{
    const T* src = cti_from[I_CUR] ? u1 : u0;
    for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < n;
         g += (long long)gridDim.x * blockDim.x)
        v1[g] = v0[g] = src[g];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int q = 0; q < 8; ++q) ctl[q] = 0.0;
        for (int q = 0; q < 16; ++q) cti[q] = 0;
        ctl[C_T] = ctl_from[C_T];
        ctl[C_TAU] = ctl_from[C_TAU];
        ctl[C_TRY] = ctl_from[C_TAU];
        ctl[C_EPS] = ctl_from[C_EPS];
        cti[I_ACTIVE] = 1;
        cti[I_TARGET] = count;
    }
}
