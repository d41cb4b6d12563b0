// One-layer shallow water on a structured grid: fused kernels ([P2] §4, §6; docs/MODELS.md §3.3).
// The same discrete operator as grid/reference.py (read its docstring for the maths): the
// path-conservative Roe solver roe1 of ../../kernels/riemann.cuh (closed-form eigenstructure,
// Harten–Hyman entropy fix, upwinded bottom source), called on the grid's axis frames; order 3
// adds the CWENO3 reconstruction of (eta, qx, qy, H), two Gauss points per edge, the 2x2 Gauss
// volume term of eq. (26) and one SSP-RK3 stage per launch.
//
// Walls: ghost cells are mirror images with the normal momentum reversed.
//
// The carbuncle cure (riemann.py, grid/reference.py): every edge passes nu = sw_nu(S_L, S_R) to
// roe1, S the shock sensor of a cell (the largest compression over its four edges; ghosts: their
// mirror cell's S), from sw_sensor before an update or a stage, or folded: sw_strip1 computes the
// next step's, float32 sw_stage3 its own. shock_fix off: S = 0.
//
// Cost per cell (what the kernels are bound by is instruction issue, not memory, so the
// arithmetic is kept lean): the square roots and divisions of the Roe solver go through ONE
// reciprocal square root r = 1/sqrt(h) per cell state (sqrt(h) = h r, u = q r r, q/sqrt(h) = q r),
// one reciprocal per edge (1/(sL + sR)) and one reciprocal square root per edge (c, 1/(2c)).
//
// Time step (same-step CFL): Δt = 2 δ dx dy / max_i z_i with z_i = dy (sW + sE) + dx (sS + sN)
// the edge speeds |u~| + c~ of cell i, so the reduction is a maximum of z (no division per cell;
// one atomicMax per block on the bits of the positive float) and the one division happens where
// Δt is used. The speeds use explicitly rounded operations (no contraction) and the same
// approximate reciprocal square roots wherever they are evaluated, so that the folded reduction
// of sw_strip1 and the separate pass sw_cfl give the same bits.

#define SWD __device__ __forceinline__

#include "riemann.cuh"  // the Roe solver (roe1, hh_split) and rsqrt_/rcp_
#include "clock.cuh"    // the time-landing rule (batched runs keep the clock on the device)

// Tuning knobs of sw_strip1 (grid/fused.py passes -D options): the minimum number of resident
// blocks per SM asked of the register allocator for float32 (0: none), and the unrolling of the
// row loop.
#ifndef SW_STRIP_MINB
#define SW_STRIP_MINB 8
#endif
#ifndef SW_STRIP_UNROLL
#define SW_STRIP_UNROLL 1
#endif
constexpr int kStripUnroll = SW_STRIP_UNROLL;
// sw_stage3 (float32): minimum resident blocks of 256 threads per SM.
#ifndef SW_STAGE_MINB
#define SW_STAGE_MINB 4
#endif

// Wall ghosts mirror the cells next to the wall; indices further out (halo lanes beyond the
// grid, whose results are never used) are clamped into the grid.
SWD int mirror(int i, int n)
{
    i = i < 0 ? -1 - i : (i >= n ? 2 * n - 1 - i : i);
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// Decomposed runs (grid/fused_halo.py, docs/DISTRIBUTED.md): a rank's strip of rows whose south
// (SW_HALO_S) or north (SW_HALO_N) edge is not a wall but a neighbour's rows. The arrays then hold
// SW_HALO_ROWS rows of the neighbour's state beyond that edge (rows -3..-1, ny..ny + 2), read as
// they are: no mirror, no reversal. A one-process run compiles both as 0 (walls everywhere).
#ifndef SW_HALO_S
#define SW_HALO_S 0
#endif
#ifndef SW_HALO_N
#define SW_HALO_N 0
#endif
// the row index of row j in memory, and whether row j is a wall ghost (q.n reversed)
SWD int row_of(int j, int ny)
{
    if ((SW_HALO_S && j < 0) || (SW_HALO_N && j >= ny)) return j;
    return mirror(j, ny);
}
SWD bool wall_ghost_row(int j, int ny)
{
    return (!SW_HALO_S && j < 0) || (!SW_HALO_N && j >= ny);
}

// The state (h, qx, qy, H) of cell (i, j), which may be a wall ghost (mirror image, q.n reversed).
template <typename T>
SWD void load_cell(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                   const T* __restrict__ H, int i, int j, int nx, int ny,
                   T& hv, T& qxv, T& qyv, T& Hv)
{
    const int im = mirror(i, nx), jm = row_of(j, ny);
    const long k = (long)jm * nx + im;
    hv = h[k];
    qxv = (i < 0 || i >= nx) ? -qx[k] : qx[k];
    qyv = wall_ghost_row(j, ny) ? -qy[k] : qy[k];
    Hv = H[k];
}

// The shock sensor of cell (i, j), which may be a wall ghost (its mirror cell's).
template <typename T>
SWD T load_S(const T* __restrict__ S, int i, int j, int nx, int ny)
{
    return S[(long)row_of(j, ny) * nx + mirror(i, nx)];
}

#include "grid_ops.cuh"  // rounded arithmetic, the shock sensor (the same bits everywhere)

// |u~| + c~ of the Roe matrix at an edge (normal momentum qn; r = 1/sqrt(h) of each side;
// hg = g/2). Explicitly rounded: the same bits wherever it is evaluated.
template <typename T>
SWD T edge_speed(T hL, T qL, T rL, T hR, T qR, T rR, T hg)
{
    const T s = add_rn(mul_rn(hL, rL), mul_rn(hR, rR));
    const T u = mul_rn(add_rn(mul_rn(qL, rL), mul_rn(qR, rR)), rcp_(s));
    const T c2 = mul_rn(hg, add_rn(hL, hR));
    return add_rn(fabs(u), mul_rn(c2, rsqrt_(c2)));
}

// z_i = dy (sW + sE) + dx (sS + sN) from sx = sW + sE; Δt_i = 2 δ dx dy / z_i.
template <typename T>
SWD T cell_z(T sx, T sS, T sN, T dx, T dy)
{
    return add_rn(mul_rn(dy, sx), mul_rn(dx, add_rn(sS, sN)));
}

// ---- first order, Δt pass ------------------------------------------------------------------
// z_i of cell (i, j) from the cell averages (r = 1/sqrt(h) recomputed per neighbour).
template <typename T>
SWD T cell_z_of(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                int i, int j, int nx, int ny, T dx, T dy, T hg)
{
    T h0, qx0, qy0, H0, hn, qxn, qyn, Hn;
    load_cell(h, qx, qy, h, i, j, nx, ny, h0, qx0, qy0, H0);
    const T r0 = rsqrt_(h0);
    load_cell(h, qx, qy, h, i - 1, j, nx, ny, hn, qxn, qyn, Hn);
    const T sW = edge_speed(hn, qxn, rsqrt_(hn), h0, qx0, r0, hg);
    load_cell(h, qx, qy, h, i + 1, j, nx, ny, hn, qxn, qyn, Hn);
    const T sE = edge_speed(h0, qx0, r0, hn, qxn, rsqrt_(hn), hg);
    load_cell(h, qx, qy, h, i, j - 1, nx, ny, hn, qxn, qyn, Hn);
    const T sS = edge_speed(hn, qyn, rsqrt_(hn), h0, qy0, r0, hg);
    load_cell(h, qx, qy, h, i, j + 1, nx, ny, hn, qxn, qyn, Hn);
    const T sN = edge_speed(h0, qy0, r0, hn, qyn, rsqrt_(hn), hg);
    return cell_z(add_rn(sW, sE), sS, sN, dx, dy);
}

// ---- first order, one thread per cell (the "cell" rung) ---------------------------------------
// dW/dt of cell (i, j) (eq. (15)): all four edges recomputed by this thread.
template <typename T>
SWD void rate1(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
               const T* __restrict__ H, const T* __restrict__ S, int i, int j, int nx, int ny,
               T rdx, T rdy, T g, T& rh, T& rqx, T& rqy)
{
    const T rg = sqrt(g);
    T h0, qx0, qy0, H0, hn, qxn, qyn, Hn, m[3], p[3];
    load_cell(h, qx, qy, H, i, j, nx, ny, h0, qx0, qy0, H0);
    const T r0 = rsqrt_(h0), S0 = load_S(S, i, j, nx, ny);
    load_cell(h, qx, qy, H, i - 1, j, nx, ny, hn, qxn, qyn, Hn);
    roe1(hn, qxn, qyn, Hn, rsqrt_(hn), h0, qx0, qy0, H0, r0, g, rg, m, p,
         sw_nu(load_S(S, i - 1, j, nx, ny), S0));
    T sh = p[0], sqx = p[1], sqy = p[2];
    load_cell(h, qx, qy, H, i + 1, j, nx, ny, hn, qxn, qyn, Hn);
    roe1(h0, qx0, qy0, H0, r0, hn, qxn, qyn, Hn, rsqrt_(hn), g, rg, m, p,
         sw_nu(S0, load_S(S, i + 1, j, nx, ny)));
    sh += m[0]; sqx += m[1]; sqy += m[2];
    load_cell(h, qx, qy, H, i, j - 1, nx, ny, hn, qxn, qyn, Hn);
    roe1(hn, qyn, qxn, Hn, rsqrt_(hn), h0, qy0, qx0, H0, r0, g, rg, m, p,
         sw_nu(load_S(S, i, j - 1, nx, ny), S0));
    T th = p[0], tqy = p[1], tqx = p[2];
    load_cell(h, qx, qy, H, i, j + 1, nx, ny, hn, qxn, qyn, Hn);
    roe1(h0, qy0, qx0, H0, r0, hn, qyn, qxn, Hn, rsqrt_(hn), g, rg, m, p,
         sw_nu(S0, load_S(S, i, j + 1, nx, ny)));
    th += m[0]; tqy += m[1]; tqx += m[2];
    rh = -sh * rdx - th * rdy;
    rqx = -sqx * rdx - tqx * rdy;
    rqy = -sqy * rdx - tqy * rdy;
}

#include "cweno3.cuh"  // third order: CWENO3, Gauss-point edges, the volume term

// ---- first order, strip kernel with the time-step reduction folded in --------------------------
// A warp owns STRIP = 29 columns and M rows. Lane k holds column i = 29 b - 2 + k: lanes 2..30 are
// the owned columns, lanes 0, 1 and 31 a halo. Marching north row by row, each lane computes the
// Roe fluctuations of its cell's east edge (the west one comes from lane k - 1 by a shuffle) and
// north edge (kept in registers: it is the south edge of the next row), so every edge is solved
// once (plus the halo), and the update. Each cell state carries r = 1/sqrt(h), computed once and
// shared by the edges that use it. The new state of lanes 1..31 and of the rows just outside the
// band then gives the edge speeds of W^{n+1} around every owned cell, hence z_i of the NEXT step
// (the same-step CFL condition of that step) without another pass over memory. With the carbuncle
// cure, the same new states give the NEXT step's shock sensors (the compressions of W^{n+1} at the
// four edges of every owned cell, as sw_sensor computes them) into So, so that a step needs no
// sensor pass (So null: none; a decomposed run gets its halo rows' sensors with the exchange).
#define STRIP 29
#define FULL_MASK 0xffffffffu

// Returns this lane's maximum of the next step's z_i over its owned cells (0 if none).
template <typename T>
SWD T strip1_body(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                  const T* __restrict__ H, const T* __restrict__ S, T* __restrict__ ho,
                  T* __restrict__ qxo,
                  T* __restrict__ qyo, T* __restrict__ So, int nx, int ny, int M, T rdx, T rdy,
                  T dx, T dy, T g, T dt, int lane, int strip, int seg)
{
    const T rg = sqrt(g), hg = T(0.5) * g;
    const int i = strip * STRIP - 2 + lane;
    const int j0 = seg * M;
    const bool own_col = lane >= 2 && lane <= 30 && i < nx;
    // does this warp hold wall ghost columns? (uniform over the warp)
    const bool ghosts = strip * STRIP - 2 < 0 || strip * STRIP + 29 >= nx;
    // rows swept: the band and one row on each side (its new state gives the band's edge
    // speeds of the next step), not beyond a wall
    const int jbeg = (j0 > 0 || SW_HALO_S) ? j0 - 1 : 0;
    const int jtop = SW_HALO_N ? ny : ny - 1;
    const int jend = (j0 + M < jtop) ? j0 + M : jtop;
    // mirror source of a ghost column (its new state is the mirror image of that column's)
    const int src = mirror(i, nx);
    int src_lane = lane + (src - i);
    src_lane = src_lane < 0 ? 0 : (src_lane > 31 ? 31 : src_lane);
    // registers: row j (c), row j + 1 (n) and the prefetched row j + 2 (f); lane 31 also loads
    // the state east of the warp one row ahead (ef); S.. the cells' shock sensors
    T hc, qxc, qyc, Hc, rc, hn, qxn, qyn, Hn, rn, hf, qxf, qyf, Hf, Sc, Sn, Sf;
    T hef = 0, qxef = 0, qyef = 0, Hef = 0, Sef = 0;
    // the loop starts a row early (jbeg - 1): that row's pass solves its north edge, the south
    // edge of row jbeg, with the loop's own code (its update and speeds are not used), so that
    // row jbeg's new state has the bits its owner computes and the folded z_max and sensors of
    // row jbeg + 1 are exact (float32 under --use_fast_math: a second inlined copy of the solver
    // before the loop was contracted differently). Measured on an H200 against a branch that
    // skips the rest of that pass: the same at 1024² and 2048², 9 % faster at 4096² (fewer
    // spills).
    load_cell(h, qx, qy, H, i, jbeg - 1, nx, ny, hc, qxc, qyc, Hc);
    rc = rsqrt_(hc);
    Sc = load_S(S, i, jbeg - 1, nx, ny);
    load_cell(h, qx, qy, H, i, jbeg, nx, ny, hn, qxn, qyn, Hn);
    rn = rsqrt_(hn);
    Sn = load_S(S, i, jbeg, nx, ny);
    T fs[3] = {0, 0, 0};  // D^+ of the south edge of the current row: components (h, qy, qx)
    if (lane == 31) {
        load_cell(h, qx, qy, H, i + 1, jbeg - 1, nx, ny, hef, qxef, qyef, Hef);
        Sef = load_S(S, i + 1, jbeg - 1, nx, ny);
    }
    // rows loaded in the loop lie in [0, ny + 1] ([-1, ny + 2] with halos): only the north edge
    // can be crossed, and the columns (this lane's, and lane 31's east one) are fixed
    const int im = mirror(i, nx), ie = mirror(i + 1, nx);
    const bool fx = i < 0 || i >= nx, fxe = i + 1 >= nx;
    auto load_row = [&](int col, bool flipx, int jj, T& hv, T& qxv, T& qyv, T& Hv, T& Sv) {
        const long k = (long)((jj < ny || SW_HALO_N) ? jj : 2 * ny - 1 - jj) * nx + col;
        hv = h[k];
        const T a = qx[k], c = qy[k];
        qxv = flipx ? -a : a;
        qyv = (jj >= ny && !SW_HALO_N) ? -c : c;
        Hv = H[k];
        Sv = S[k];
    };
    T pnh = 0, pny = 0, pnr = 0, psx = 0, psS = 0;  // previous row: new h, qy, r; sW + sE; sS
    T pnv = 0, pcx = 0, pcS = 0;  // previous row: new v; compressions max(W, E) and S
    T zmax = T(0);
#pragma unroll kStripUnroll
    for (int j = jbeg - 1; j <= jend; ++j) {
        load_row(im, fx, j + 2, hf, qxf, qyf, Hf, Sf);
        T hE = __shfl_down_sync(FULL_MASK, hc, 1), qxE = __shfl_down_sync(FULL_MASK, qxc, 1);
        T qyE = __shfl_down_sync(FULL_MASK, qyc, 1), HE = __shfl_down_sync(FULL_MASK, Hc, 1);
        T rE = __shfl_down_sync(FULL_MASK, rc, 1), SE = __shfl_down_sync(FULL_MASK, Sc, 1);
        if (lane == 31) {
            hE = hef; qxE = qxef; qyE = qyef; HE = Hef; rE = rsqrt_(hef); SE = Sef;
            load_row(ie, fxe, j + 1, hef, qxef, qyef, Hef, Sef);
        }
        T mN[3], pN[3];
        roe1(hc, qyc, qxc, Hc, rc, hn, qyn, qxn, Hn, rn, g, rg, mN, pN, sw_nu(Sc, Sn));
        T mE[3], pE[3];
        roe1(hc, qxc, qyc, Hc, rc, hE, qxE, qyE, HE, rE, g, rg, mE, pE, sw_nu(Sc, SE));
        const T pW0 = __shfl_up_sync(FULL_MASK, pE[0], 1);
        const T pW1 = __shfl_up_sync(FULL_MASK, pE[1], 1);
        const T pW2 = __shfl_up_sync(FULL_MASK, pE[2], 1);
        const T rh = -(pW0 + mE[0]) * rdx - (fs[0] + mN[0]) * rdy;
        const T rqx = -(pW1 + mE[1]) * rdx - (fs[2] + mN[2]) * rdy;
        const T rqy = -(pW2 + mE[2]) * rdx - (fs[1] + mN[1]) * rdy;
        T nh = hc + dt * rh, nqx = qxc + dt * rqx, nqy = qyc + dt * rqy;
        const bool own_row = j >= j0 && j < j0 + M && j < ny;
        if (own_row && own_col) {
            const long k = (long)j * nx + i;
            ho[k] = nh; qxo[k] = nqx; qyo[k] = nqy;
        }
        if (ghosts) {  // the new state of ghost columns: mirror images
            const T gh = __shfl_sync(FULL_MASK, nh, src_lane);
            const T gqx = __shfl_sync(FULL_MASK, nqx, src_lane);
            const T gqy = __shfl_sync(FULL_MASK, nqy, src_lane);
            if (src != i) { nh = gh; nqx = -gqx; nqy = gqy; }
        }
        // edge speeds of W^{n+1}: east (from lane + 1), west (lane - 1's east), south
        const T nr = rsqrt_(nh);
        const T sE = edge_speed(nh, nqx, nr, __shfl_down_sync(FULL_MASK, nh, 1),
                                __shfl_down_sync(FULL_MASK, nqx, 1),
                                __shfl_down_sync(FULL_MASK, nr, 1), hg);
        const T sx = add_rn(__shfl_up_sync(FULL_MASK, sE, 1), sE);
        const T sS = (j == 0 && !SW_HALO_S) ? edge_speed(nh, -nqy, nr, nh, nqy, nr, hg)
                              : edge_speed(pnh, pny, pnr, nh, nqy, nr, hg);
        // the previous row is complete now: its north speed is this row's south speed
        if (j > jbeg && j - 1 >= j0 && own_col) zmax = fmax(zmax, cell_z(psx, psS, sS, dx, dy));
        if (!SW_HALO_N && j == ny - 1 && own_row && own_col)  // the top row's north edge: wall
            zmax = fmax(zmax, cell_z(sx, sS, edge_speed(nh, nqy, nr, nh, -nqy, nr, hg), dx, dy));
        if (So != nullptr) {  // (uniform) the sensors of W^{n+1}, completed a row behind as z
            const T nu = sens_div(nqx, nh), nv = sens_div(nqy, nh);
            const T cE = sens_comp(nu, __shfl_down_sync(FULL_MASK, nu, 1));
            const T cx = fmax(__shfl_up_sync(FULL_MASK, cE, 1), cE);
            const T cS = (j == 0 && !SW_HALO_S) ? sens_comp(-nv, nv)
                                                : sens_comp(pnv, nv);
            if (j > jbeg && j - 1 >= j0 && own_col)
                So[(long)(j - 1) * nx + i] = fmax(fmax(pcx, pcS), cS);
            if (!SW_HALO_N && j == ny - 1 && own_row && own_col)  // the top row: wall north
                So[(long)j * nx + i] = fmax(fmax(cx, cS), sens_comp(nv, -nv));
            pnv = nv; pcx = cx; pcS = cS;
        }
        pnh = nh; pny = nqy; pnr = nr; psx = sx; psS = sS;
        hc = hn; qxc = qxn; qyc = qyn; Hc = Hn; rc = rn; Sc = Sn;
        hn = hf; qxn = qxf; qyn = qyf; Hn = Hf; rn = rsqrt_(hf); Sn = Sf;
        fs[0] = pN[0]; fs[1] = pN[1]; fs[2] = pN[2];
    }
    return zmax;
}

// ---- kernels ---------------------------------------------------------------------------------
template <typename T> struct Bits;
template <> struct Bits<float> {
    typedef unsigned int type;
    static __device__ __forceinline__ type of(float x) { return __float_as_uint(x); }
    static __device__ __forceinline__ float val(type b) { return __uint_as_float(b); }
};
template <> struct Bits<double> {
    typedef unsigned long long type;
    static __device__ __forceinline__ type of(double x) { return (type)__double_as_longlong(x); }
    static __device__ __forceinline__ double val(type b) { return __longlong_as_double((long long)b); }
};

// Block maximum of v (>= 0; NaN ignored), then one atomicMax per block on the bits of the
// result (non-negative floats order like their bit patterns; the slot starts at 0).
template <typename T>
__device__ void block_max_to(T v, typename Bits<T>::type* slot)
{
    __shared__ T part[32];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    if ((tid & 31) == 0) part[tid >> 5] = v;
    __syncthreads();
    const int nw = (blockDim.x * blockDim.y + 31) >> 5;
    if (tid < 32) {
        v = (tid < nw) ? part[tid] : T(0);
        for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
        const typename Bits<T>::type b = Bits<T>::of(v);
        if (tid == 0 && b > *(volatile typename Bits<T>::type*)slot) atomicMax(slot, b);
    }
}

// Same-step CFL: the maximum of z_i over all cells into *slot (preset to 0).
template <typename T>
__global__ void sw_cfl(const T* __restrict__ h, const T* __restrict__ qx,
                       const T* __restrict__ qy, const int nx, const int ny, const T dx,
                       const T dy, const T g, typename Bits<T>::type* slot)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    T z = T(0);
    if (i < nx && j < ny) z = cell_z_of(h, qx, qy, i, j, nx, ny, dx, dy, T(0.5) * g);
    block_max_to(z, slot);
}

// Δt = min(k / z_max, dt_limit) with k = 2 δ dx dy (the host divides the same two numbers).
//
// Batched runs (GridFused.run) keep the clock on the device with the protocol of core's
// clock.cuh (clk_in, clk_out, hist of DeviceClock.args(i)): every thread takes the same step
// T(clock_take(min(k / z_max, dt_limit), ...)) (0 once landed), the step's writer (thread 0 of
// block 0 of its last launch, `writer`) records it. clk_in == nullptr: the per-step path (the
// host keeps time).
template <typename T>
__device__ __forceinline__ T step_size(const typename Bits<T>::type* slot, T k, double dt_limit,
                                       const double* clk_in = nullptr, double* clk_out = nullptr,
                                       double* hist = nullptr, bool writer = false)
{
    const T dtc = div_rn(k, Bits<T>::val(*slot));
    const double dt = fmin((double)dtc, dt_limit);
    if (clk_in == nullptr) return T(dt);
    return T(clock_take(dt, clk_in, clk_out, hist, writer));
}

#define SW_CLOCK_ARGS const double* __restrict__ clk_in, double* clk_out, double* hist
#define SW_BLOCK0_THREAD0 (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && \
                           threadIdx.y == 0)

// The shock sensor S of every cell (grid/reference.cell_sensor): the largest compression
// max(0, un_L - un_R) over its four edges (walls: the mirror state). With halos, also of the two
// halo rows beyond each inner edge (the launch covers ny + 2 SW_HALO_S + 2 SW_HALO_N rows).
template <typename T>
__global__ void sw_sensor(const T* __restrict__ h, const T* __restrict__ qx,
                          const T* __restrict__ qy, T* __restrict__ S, const int nx, const int ny)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = (int)(blockIdx.y * blockDim.y + threadIdx.y) - (SW_HALO_S ? 2 : 0);
    if (i >= nx || j >= ny + (SW_HALO_N ? 2 : 0)) return;
    T h0, u0, v0, H0, hn, qxn, qyn, Hn;
    load_cell(h, qx, qy, h, i, j, nx, ny, h0, u0, v0, H0);
    u0 = sens_div(u0, h0);
    v0 = sens_div(v0, h0);
    load_cell(h, qx, qy, h, i - 1, j, nx, ny, hn, qxn, qyn, Hn);
    T s = sens_comp(sens_div(qxn, hn), u0);
    load_cell(h, qx, qy, h, i + 1, j, nx, ny, hn, qxn, qyn, Hn);
    s = fmax(s, sens_comp(u0, sens_div(qxn, hn)));
    load_cell(h, qx, qy, h, i, j - 1, nx, ny, hn, qxn, qyn, Hn);
    s = fmax(s, sens_comp(sens_div(qyn, hn), v0));
    load_cell(h, qx, qy, h, i, j + 1, nx, ny, hn, qxn, qyn, Hn);
    S[(long)j * nx + i] = fmax(s, sens_comp(v0, sens_div(qyn, hn)));
}

// First order, one thread per cell: W^{n+1} = W^n + Δt L(W^n).
template <typename T>
__global__ void sw_step1(const T* __restrict__ h, const T* __restrict__ qx,
                         const T* __restrict__ qy, const T* __restrict__ H,
                         const T* __restrict__ S, T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
                         const int nx, const int ny, const T rdx, const T rdy, const T g,
                         const T k_dt, const typename Bits<T>::type* __restrict__ slot,
                         const double dt_limit, SW_CLOCK_ARGS)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const T dt = step_size<T>(slot, k_dt, dt_limit, clk_in, clk_out, hist,
                              SW_BLOCK0_THREAD0);
    T rh, rqx, rqy;
    rate1(h, qx, qy, H, S, i, j, nx, ny, rdx, rdy, g, rh, rqx, rqy);
    const long k = (long)j * nx + i;
    ho[k] = h[k] + dt * rh;
    qxo[k] = qx[k] + dt * rqx;
    qyo[k] = qy[k] + dt * rqy;
}

// First order, one pass: W^{n+1} = W^n + Δt L(W^n) with Δt from *slot_in, and z_max of the next
// step (from W^{n+1}) into *slot_out (preset to 0); *slot_clear (the slot of the step after
// next, no longer read by anyone) is zeroed here so that the host needs no memset per step.
// Block (32, 4): blockIdx.x = strip of 29 columns, warp (y0 + blockIdx.y, threadIdx.y) = band of M
// rows. y0: the first block row of this launch (a decomposed strip launches its edge rows first and
// its interior while the edges go to the neighbours, grid/fused_halo.py); the launch holding block
// row 0 clears slot_clear and writes the clock. S: this step's shock sensors; So: the next step's,
// from W^{n+1} (null: not computed here).
template <typename T>
__global__ void
#if SW_STRIP_MINB > 0
__launch_bounds__(128, sizeof(T) == 4 ? SW_STRIP_MINB : 1)
#else
__launch_bounds__(128)
#endif
sw_strip1(
    const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
    const T* __restrict__ H, const T* __restrict__ S, T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
    T* __restrict__ So,
    const int nx, const int ny, const int M, const T rdx, const T rdy, const T dx, const T dy,
    const T g, const T k_dt, const typename Bits<T>::type* __restrict__ slot_in,
    typename Bits<T>::type* slot_out, typename Bits<T>::type* slot_clear, const double dt_limit,
    SW_CLOCK_ARGS, const int y0)
{
    const int seg = (y0 + blockIdx.y) * blockDim.y + threadIdx.y;
    const bool writer = y0 == 0 && SW_BLOCK0_THREAD0;
    if (writer)
        *slot_clear = 0;
    // every thread (the writer's warp too: seg 0 always has rows) reads the same Δt
    const T dt = step_size<T>(slot_in, k_dt, dt_limit, clk_in, clk_out, hist, writer);
    T zmax = T(0);
    if (seg * M < ny)  // uniform over the warp
        zmax = strip1_body(h, qx, qy, H, S, ho, qxo, qyo, So, nx, ny, M, rdx, rdy, dx, dy, g,
                           dt, (int)threadIdx.x, (int)blockIdx.x, seg);
    block_max_to(zmax, slot_out);
}

#include "stage3.cuh"  // third order: one SSP-RK3 stage a launch (sw_stage3)
