// Third order on the structured grid: one SSP-RK3 stage a launch (grid.cu includes it; read
// grid/reference.py for the maths). Needs grid.cu's helpers (load_cell, load_S, step_size,
// block_max_to, edge_speed, cell_z) and grid_ops.cuh.
#pragma once

// sw_stage3's modes. STAGE: out = a u0 + b (u + Δt L(u)). float32 only (the step's first stage
// and its Δt pass folded into two launches): RATES, L(u) of the step's state u into out and the
// maximum of z_i(u) into slot (slot_clr, the next step's slot, is cleared); FORMED, the stage-2
// input u + Δt L(u) formed from u and those rates where it is staged (Δt from slot), then a STAGE.
#define SW3_STAGE 0
#define SW3_RATES 1
#define SW3_FORMED 2

// Third order, one SSP-RK3 stage: out = a u0 + b (u + Δt L(u)) (a = 0: out = u + Δt L(u)).
// A block of 32 x TY threads owns a 32 x TY tile. It stages the state of the tile and two ghost
// rings in shared memory, reconstructs every cell of the tile and one ring around it ONCE (CWENO3
// of eta, qx, qy, H: the coefficients go to shared memory), then each thread solves the west and
// south edges of its cell (two Gauss points each; D^+ is its own, D^- goes through shared memory
// to the neighbour), warps 0 and 1 the east edges of the last column and the north edges of the
// last row, so that every edge is solved once; then each thread adds its volume term and updates.
template <typename T> struct Tile3 { enum { TX = 32, TY = sizeof(T) == 4 ? 8 : 4 }; };

template <typename T>
__global__ void __launch_bounds__(sizeof(T) == 4 ? 256 : 128, sizeof(T) == 4 ? SW_STAGE_MINB : 1) sw_stage3(
    const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
    const T* __restrict__ H, const T* __restrict__ S, const T* __restrict__ h0,
    const T* __restrict__ qx0,
    const T* __restrict__ qy0, T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
    const int nx, const int ny, const T rdx, const T rdy, const T g, const T eps, const T a,
    const T b, const T k_dt, typename Bits<T>::type* slot,
    const double dt_limit, SW_CLOCK_ARGS, const int mode, const T* __restrict__ rh_in,
    const T* __restrict__ rqx_in, const T* __restrict__ rqy_in,
    typename Bits<T>::type* slot_clr, const T dx, const T dy)
{
    constexpr int TX = Tile3<T>::TX, TY = Tile3<T>::TY;
    constexpr int SX = TX + 4, SY = TY + 4;   // state: the tile and two ghost rings
    constexpr int PX = TX + 2, PY = TY + 2;   // reconstructions: the tile and one ring
    __shared__ T st[4][SY][SX];
    __shared__ T pc[4][5][PY][PX];
    // float32 with S == nullptr: the shock sensors of the tile and one ring, from the staged state
    // (h in sh) instead of a sensor pass (float64: over the 48 KB of static shared memory)
    constexpr bool kFold = sizeof(T) == 4;
    __shared__ T sh[kFold ? SY : 1][kFold ? SX : 1], sS[kFold ? PY : 1][kFold ? PX : 1];
    const int tid = threadIdx.y * TX + threadIdx.x;
    const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY;
    const bool formed = kFold && mode == SW3_FORMED;
    if (mode == SW3_RATES && blockIdx.x == 0 && blockIdx.y == 0 && tid == 0) *slot_clr = 0;
    // every thread takes the same Δt (SW3_RATES: none); the third stage's launch passes clk_out
    // (the clock after the step), the others nullptr
    const T dt = mode == SW3_RATES ? T(0) : step_size<T>(slot, k_dt, dt_limit, clk_in, clk_out,
                                                          hist, clk_out != nullptr && SW_BLOCK0_THREAD0);
    for (int idx = tid; idx < SX * SY; idx += TX * TY) {
        const int sa = idx % SX, sb = idx / SX;
        T hv, qxv, qyv, Hv;
        load_cell(h, qx, qy, H, i0 - 2 + sa, j0 - 2 + sb, nx, ny, hv, qxv, qyv, Hv);
        if (formed && dt != T(0)) {  // the first stage's output, as its STAGE launch writes it
            T rh, rqx, rqy, unused;
            load_cell(rh_in, rqx_in, rqy_in, rh_in, i0 - 2 + sa, j0 - 2 + sb, nx, ny, rh, rqx, rqy, unused);
            hv = fma_rn(dt, rh, hv); qxv = fma_rn(dt, rqx, qxv); qyv = fma_rn(dt, rqy, qyv);
        }
        st[0][sb][sa] = hv - Hv; st[1][sb][sa] = qxv; st[2][sb][sa] = qyv; st[3][sb][sa] = Hv;
        if constexpr (kFold) sh[sb][sa] = hv;
    }
    __syncthreads();
    const T eps_ = eps;
    for (int idx = tid; idx < PX * PY; idx += TX * TY) {
        const int pa = idx % PX, pb = idx / PX;
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            T u[3][3];
#pragma unroll
            for (int bb = 0; bb < 3; ++bb)
#pragma unroll
                for (int aa = 0; aa < 3; ++aa) u[bb][aa] = st[v][pb + bb][pa + aa];
            const Poly<T> p = cweno3(u, eps_);
            pc[v][0][pb][pa] = p.ax; pc[v][1][pb][pa] = p.ay; pc[v][2][pb][pa] = p.axx;
            pc[v][3][pb][pa] = p.ayy; pc[v][4][pb][pa] = p.axy;
        }
        if constexpr (kFold) if (S == nullptr) sS[pb][pa] = tile_sensor(sh, st[1], st[2], pa + 1, pb + 1);
    }
    __syncthreads();
    // D^- of the x-edge west of cell (c, r) of the tile (c = TX: east of the last column) and
    // of the y-edge south of it (r = TY: north of the last row); components (h, qn, qt)
    __shared__ T dmx[3][TY][TX + 1];
    __shared__ T dmy[3][TY + 1][TX];
    const T rg = sqrt(g);
    // the polynomials of reconstructed cell (pa, pb): cell (i0 - 1 + pa, j0 - 1 + pb)
    auto polys = [&](int pa, int pb, Poly<T> P[4]) {
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            P[v].a0 = st[v][pb + 1][pa + 1];
            P[v].ax = pc[v][0][pb][pa]; P[v].ay = pc[v][1][pb][pa]; P[v].axx = pc[v][2][pb][pa];
            P[v].ayy = pc[v][3][pb][pa]; P[v].axy = pc[v][4][pb][pa];
        }
    };
    // the shock sensor of reconstructed cell (pa, pb) (read where needed: L1 serves it)
    auto Sat = [&](int pa, int pb) {
        if constexpr (kFold) if (S == nullptr) return sS[pb][pa];
        return load_S(S, i0 - 1 + pa, j0 - 1 + pb, nx, ny);
    };
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int pa = tx + 1, pb = ty + 1;
    Poly<T> own[4], nb[4];
    T m[3], p[3];
    const T Sown = Sat(pa, pb);
    polys(pa, pb, own);
    polys(pa - 1, pb, nb);
    edge_both<T, false>(nb, own, g, rg, m, p, sw_nu(Sat(pa - 1, pb), Sown));   // west edge
    T xh = p[0], xqx = p[1], xqy = p[2];
#pragma unroll
    for (int k = 0; k < 3; ++k) dmx[k][ty][tx] = m[k];
    polys(pa, pb - 1, nb);
    edge_both<T, true>(nb, own, g, rg, m, p, sw_nu(Sat(pa, pb - 1), Sown));    // south edge
    T yh = p[0], yqy = p[1], yqx = p[2];
#pragma unroll
    for (int k = 0; k < 3; ++k) dmy[k][ty][tx] = m[k];
    if (ty == 0 && tx < TY) {  // east edges of the last column
        Poly<T> L[4], R[4];
        polys(TX, tx + 1, L);
        polys(TX + 1, tx + 1, R);
        edge_both<T, false>(L, R, g, rg, m, p, sw_nu(Sat(TX, tx + 1), Sat(TX + 1, tx + 1)));
#pragma unroll
        for (int k = 0; k < 3; ++k) dmx[k][tx][TX] = m[k];
    }
    if (ty == 1) {             // north edges of the last row
        Poly<T> L[4], R[4];
        polys(tx + 1, TY, L);
        polys(tx + 1, TY + 1, R);
        edge_both<T, true>(L, R, g, rg, m, p, sw_nu(Sat(tx + 1, TY), Sat(tx + 1, TY + 1)));
#pragma unroll
        for (int k = 0; k < 3; ++k) dmy[k][TY][tx] = m[k];
    }
    T vh, vx, vy;
    volume_term(own, rdx, rdy, g, vh, vx, vy);
    __syncthreads();
    xh += dmx[0][ty][tx + 1]; xqx += dmx[1][ty][tx + 1]; xqy += dmx[2][ty][tx + 1];
    yh += dmy[0][ty + 1][tx]; yqy += dmy[1][ty + 1][tx]; yqx += dmy[2][ty + 1][tx];
    const int i = i0 + tx, j = j0 + ty;
    if constexpr (kFold) {
        if (mode == SW3_RATES) {  // z_i of the staged state (sw_cfl's operations) into the slot
            const T hg = T(0.5) * g;
            const int x = tx + 2, y = ty + 2;
            const T h_ = sh[y][x], qx_ = st[1][y][x], qy_ = st[2][y][x], r_ = rsqrt_(h_);
            auto speed = [&](const int xn, const int yn, const int v, const bool after) {
                const T hn = sh[yn][xn], qn = st[v][yn][xn], rn = rsqrt_(hn), q_ = v == 1 ? qx_ : qy_;
                return after ? edge_speed(h_, q_, r_, hn, qn, rn, hg) : edge_speed(hn, qn, rn, h_, q_, r_, hg);
            };
            const T z = (i < nx && j < ny) ? cell_z(add_rn(speed(x - 1, y, 1, false), speed(x + 1, y, 1, true)),
                                                    speed(x, y - 1, 2, false), speed(x, y + 1, 2, true), dx, dy)
                                           : T(0);
            block_max_to(z, slot);
        }
    }
    if (i >= nx || j >= ny) return;
    const T rh = -xh * rdx - yh * rdy - vh;
    const T rqx = -xqx * rdx - yqx * rdy - vx;
    const T rqy = -xqy * rdx - yqy * rdy - vy;
    const long k = (long)j * nx + i;
    if (mode == SW3_RATES) {
        ho[k] = rh; qxo[k] = rqx; qyo[k] = rqy;
        return;
    }
    if (dt == T(0)) {  // a batch's step after landing: the state stays as it is, bit for bit
        ho[k] = h0[k]; qxo[k] = qx0[k]; qyo[k] = qy0[k];  // (3/4 u + 1/4 u need not be u)
        return;
    }
    // the stage input at this cell (formed: from shared memory, where it was formed)
    T hk, qxk, qyk;
    if constexpr (kFold) {
        if (formed) { hk = sh[ty + 2][tx + 2]; qxk = st[1][ty + 2][tx + 2]; qyk = st[2][ty + 2][tx + 2]; }
        else { hk = h[k]; qxk = qx[k]; qyk = qy[k]; }
    } else {
        hk = h[k]; qxk = qx[k]; qyk = qy[k];
    }
    const T nh = fma_rn(dt, rh, hk), nqx = fma_rn(dt, rqx, qxk), nqy = fma_rn(dt, rqy, qyk);
    if (a == T(0)) {
        ho[k] = nh; qxo[k] = nqx; qyo[k] = nqy;
    } else {
        // a u0 + b v as u0 + b (v - u0) (a = 1 - b): an unchanged state stays bit for bit (a
        // lake at rest in float32; grid/reference.ssp_stage)
        ho[k] = h0[k] + b * (nh - h0[k]);
        qxo[k] = qx0[k] + b * (nqx - qx0[k]);
        qyo[k] = qy0[k] + b * (nqy - qy0[k]);
    }
}
