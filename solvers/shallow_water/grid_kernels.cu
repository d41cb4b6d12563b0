// One-layer shallow water on a structured grid: fused kernels (seed 002 §4, §6; SPEC §3.3).
// The same discrete operator as grid_scheme.py (read its docstring for the maths): the
// path-conservative Roe scheme with the closed-form eigenstructure, Harten–Hyman entropy fix and
// upwinded bottom source; order 3 adds the CWENO3 reconstruction of (eta, qx, qy, H), two Gauss
// points per edge, the 2x2 Gauss volume term of eq. (26) and one SSP-RK3 stage per launch.
//
// One thread per cell computes all four edges of its cell and the update (no intermediate
// arrays). Walls: ghost cells are mirror images with the normal momentum reversed. The time step
// of the same-step CFL condition is one device reduction (sw_cfl: block minimum, then one
// atomicMin on the bit pattern of a positive float) into a slot that the step kernels read, so
// that the host never has to hand Δt back to the device.
// The per-cell functions are __host__ __device__ so that they can be checked on a CPU too.

#define SWHD __host__ __device__ __forceinline__

// Wall ghosts mirror the cells next to the wall; indices further out (halo lanes of the strip
// kernel beyond the grid, whose results are never used) are clamped into the grid.
SWHD int mirror(int i, int n)
{
    i = i < 0 ? -1 - i : (i >= n ? 2 * n - 1 - i : i);
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// The state (h, qx, qy, H) of cell (i, j), which may be a wall ghost (mirror image, q.n reversed).
template <typename T>
SWHD void load_cell(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                    const T* __restrict__ H, int i, int j, int nx, int ny,
                    T& hv, T& qxv, T& qyv, T& Hv)
{
    const int im = mirror(i, nx), jm = mirror(j, ny);
    const long k = (long)jm * nx + im;
    hv = h[k];
    qxv = (i < 0 || i >= nx) ? -qx[k] : qx[k];
    qyv = (j < 0 || j >= ny) ? -qy[k] : qy[k];
    Hv = H[k];
}

// Correctly rounded arithmetic (no contraction, no fast-math approximations) for the time step,
// so that the folded reduction in sw_strip1 and the separate pass sw_cfl give the same bits.
SWHD float add_rn(float a, float b) { return __fadd_rn(a, b); }
SWHD float mul_rn(float a, float b) { return __fmul_rn(a, b); }
SWHD float div_rn(float a, float b) { return __fdiv_rn(a, b); }
SWHD float sqrt_rn(float a) { return __fsqrt_rn(a); }
SWHD double add_rn(double a, double b) { return __dadd_rn(a, b); }
SWHD double mul_rn(double a, double b) { return __dmul_rn(a, b); }
SWHD double div_rn(double a, double b) { return __ddiv_rn(a, b); }
SWHD double sqrt_rn(double a) { return __dsqrt_rn(a); }

// max_k |lambda_k| = |u~| + c~ of the Roe matrix at an edge (normal momentum qn).
template <typename T>
SWHD T roe_speed(T hL, T qnL, T hR, T qnR, T g)
{
    const T sL = sqrt_rn(hL), sR = sqrt_rn(hR);
    const T u = div_rn(add_rn(div_rn(qnL, sL), div_rn(qnR, sR)), add_rn(sL, sR));
    return add_rn(fabs(u), sqrt_rn(mul_rn(mul_rn(T(0.5), g), add_rn(hL, hR))));
}

// Δt_i = 2 δ |V_i| / Σ_j |E_ij| max_k |λ_ij,k| from the speeds sx = sW + sE and sS, sN.
template <typename T>
SWHD T dt_of(T sx, T sS, T sN, T dx, T dy, T cfl)
{
    const T sy = add_rn(sS, sN);
    return div_rn(mul_rn(mul_rn(mul_rn(T(2), cfl), dx), dy), add_rn(mul_rn(dy, sx), mul_rn(dx, sy)));
}

// Harten–Hyman split of the eigenvalue lam: returns mu^-; mu^+ = lam - mu^-.
template <typename T>
SWHD T hh_minus(T lam, T lamL, T lamR)
{
    if (lamL < T(0) && lamR > T(0)) return lamL * (lamR - lam) / (lamR - lamL);
    return fmin(lam, T(0));
}

// Path-conservative Roe fluctuations at an edge with normal from L to R, components (h, qn, qt):
// m = D^- (sent to the left cell) and p = D^+ (sent to the right cell); the edge speed |u~| + c~.
template <typename T>
SWHD void roe_both(T hL, T qnL, T qtL, T HL, T hR, T qnR, T qtR, T HR, T g, T rg,
                   T m[3], T p[3], T& speed)
{
    const T sL = sqrt(hL), sR = sqrt(hR);
    const T uL = qnL / hL, uR = qnR / hR;
    const T w = T(1) / (sL + sR);
    const T u = (qnL / sL + qnR / sR) * w;
    const T v = (qtL / sL + qtR / sR) * w;
    const T c = sqrt(T(0.5) * g * (hL + hR));
    const T dh = hR - hL, dqn = qnR - qnL, dqt = qtR - qtL, dH = HR - HL;
    const T inv2c = T(0.5) / c;
    const T l1 = u - c, l3 = u + c;
    const T a1 = ((u + c) * dh - dqn) * inv2c;
    const T a3 = (dqn - (u - c) * dh) * inv2c;
    const T a2 = dqt - v * dh;
    const T s3 = T(0.5) * c * dH;
    const T cL = rg * sL, cR = rg * sR;
    const T m1 = hh_minus(l1, uL - cL, uR - cR);
    const T m3 = hh_minus(l3, uL + cL, uR + cR);
    const T chi1 = (l1 < T(0)) ? T(1) : T(0);
    const T chi3 = (l3 < T(0)) ? T(1) : T(0);
    T w1 = m1 * a1 + chi1 * s3, w3 = m3 * a3 - chi3 * s3;
    m[0] = w1 + w3;
    m[1] = w1 * l1 + w3 * l3;
    m[2] = (w1 + w3) * v + fmin(u, T(0)) * a2;
    w1 = (l1 - m1) * a1 + (T(1) - chi1) * s3;
    w3 = (l3 - m3) * a3 - (T(1) - chi3) * s3;
    p[0] = w1 + w3;
    p[1] = w1 * l1 + w3 * l3;
    p[2] = (w1 + w3) * v + fmax(u, T(0)) * a2;
    speed = fabs(u) + c;
}

// Only D^- (RIGHT = false) or D^+ (RIGHT = true); the compiler drops the other half.
template <typename T, bool RIGHT>
SWHD void roe_fluct(T hL, T qnL, T qtL, T HL, T hR, T qnR, T qtR, T HR, T g, T rg,
                    T& dh_out, T& dqn_out, T& dqt_out)
{
    T m[3], p[3], s;
    roe_both(hL, qnL, qtL, HL, hR, qnR, qtR, HR, g, rg, m, p, s);
    const T* d = RIGHT ? p : m;
    dh_out = d[0]; dqn_out = d[1]; dqt_out = d[2];
}

// ---- first order --------------------------------------------------------------------------
// dW/dt of cell (i, j) (eq. (15)) and, through the edge speeds, its local Δt_i bound.
template <typename T>
SWHD void rate1(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                const T* __restrict__ H, int i, int j, int nx, int ny, T rdx, T rdy, T g,
                T& rh, T& rqx, T& rqy)
{
    const T rg = sqrt(g);
    T h0, qx0, qy0, H0, hn, qxn, qyn, Hn, a, b, c;
    load_cell(h, qx, qy, H, i, j, nx, ny, h0, qx0, qy0, H0);
    // west edge: this cell is on the right
    load_cell(h, qx, qy, H, i - 1, j, nx, ny, hn, qxn, qyn, Hn);
    roe_fluct<T, true>(hn, qxn, qyn, Hn, h0, qx0, qy0, H0, g, rg, a, b, c);
    T sh = a, sqx = b, sqy = c;
    load_cell(h, qx, qy, H, i + 1, j, nx, ny, hn, qxn, qyn, Hn);
    roe_fluct<T, false>(h0, qx0, qy0, H0, hn, qxn, qyn, Hn, g, rg, a, b, c);
    sh += a; sqx += b; sqy += c;
    T th, tqx, tqy;
    load_cell(h, qx, qy, H, i, j - 1, nx, ny, hn, qxn, qyn, Hn);
    roe_fluct<T, true>(hn, qyn, qxn, Hn, h0, qy0, qx0, H0, g, rg, a, b, c);
    th = a; tqy = b; tqx = c;
    load_cell(h, qx, qy, H, i, j + 1, nx, ny, hn, qxn, qyn, Hn);
    roe_fluct<T, false>(h0, qy0, qx0, H0, hn, qyn, qxn, Hn, g, rg, a, b, c);
    th += a; tqy += b; tqx += c;
    rh = -sh * rdx - th * rdy;
    rqx = -sqx * rdx - tqx * rdy;
    rqy = -sqy * rdx - tqy * rdy;
}

// Δt_i of cell (i, j) from the cell averages.
template <typename T>
SWHD T cell_dt(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
               int i, int j, int nx, int ny, T dx, T dy, T g, T cfl)
{
    T h0, qx0, qy0, H0, hn, qxn, qyn, Hn;
    load_cell(h, qx, qy, h, i, j, nx, ny, h0, qx0, qy0, H0);
    load_cell(h, qx, qy, h, i - 1, j, nx, ny, hn, qxn, qyn, Hn);
    const T sW = roe_speed(hn, qxn, h0, qx0, g);
    load_cell(h, qx, qy, h, i + 1, j, nx, ny, hn, qxn, qyn, Hn);
    const T sE = roe_speed(h0, qx0, hn, qxn, g);
    load_cell(h, qx, qy, h, i, j - 1, nx, ny, hn, qxn, qyn, Hn);
    const T sS = roe_speed(hn, qyn, h0, qy0, g);
    load_cell(h, qx, qy, h, i, j + 1, nx, ny, hn, qxn, qyn, Hn);
    const T sN = roe_speed(h0, qy0, hn, qyn, g);
    return dt_of(add_rn(sW, sE), sS, sN, dx, dy, cfl);
}

// ---- third order: CWENO3 -------------------------------------------------------------------
// P(xi, eta) = a0 + ax xi + ay eta + axx (xi^2 - 1/12) + ayy (eta^2 - 1/12) + axy xi eta
template <typename T> struct Poly { T a0, ax, ay, axx, ayy, axy; };

// CWENO3 of one variable from its 3x3 stencil u[row][col] (row = y).
template <typename T>
SWHD Poly<T> cweno3(const T u[3][3], T eps)
{
    const T c = u[1][1];
    const T dE = u[1][2] - c, dW = c - u[1][0], dN = u[2][1] - c, dS = c - u[0][1];
    const T cxy = T(0.25) * ((u[2][2] - u[0][2]) - (u[2][0] - u[0][0]));
    const T cx = T(0.5) * (dE + dW), cy = T(0.5) * (dN + dS);
    const T cxx = T(0.5) * (dE - dW), cyy = T(0.5) * (dN - dS);
    const T is0 = cx * cx + cy * cy + T(52.0 / 3.0) * (cxx * cxx + cyy * cyy)
                + T(14.0 / 3.0) * cxy * cxy;
    const T eE = dE * dE, eW = dW * dW, eN = dN * dN, eS = dS * dS;
    T q;
    q = eps + is0;           const T a0 = T(0.5) / (q * q);
    q = eps + eE + eN;       const T aNE = T(0.125) / (q * q);
    q = eps + eW + eN;       const T aNW = T(0.125) / (q * q);
    q = eps + eE + eS;       const T aSE = T(0.125) / (q * q);
    q = eps + eW + eS;       const T aSW = T(0.125) / (q * q);
    const T r = T(1) / (a0 + aNE + aNW + aSE + aSW);
    const T w0 = a0 * r;
    Poly<T> p;
    p.a0 = c;
    p.ax = w0 * cx + ((aNE + aSE) * dE + (aNW + aSW) * dW) * r;
    p.ay = w0 * cy + ((aNE + aNW) * dN + (aSE + aSW) * dS) * r;
    const T k = T(2) * w0;
    p.axx = k * cxx;
    p.ayy = k * cyy;
    p.axy = k * cxy;
    return p;
}

// Reconstructions of (eta, qx, qy, H) in cell (i, j) (a ghost cell too).
template <typename T>
SWHD void recon_cell(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                     const T* __restrict__ H, int i, int j, int nx, int ny, T eps, Poly<T> P[4])
{
    T se[3][3], sx[3][3], sy[3][3], sH[3][3];
    for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
            T hv, qxv, qyv, Hv;
            load_cell(h, qx, qy, H, i + a - 1, j + b - 1, nx, ny, hv, qxv, qyv, Hv);
            se[b][a] = hv - Hv; sx[b][a] = qxv; sy[b][a] = qyv; sH[b][a] = Hv;
        }
    P[0] = cweno3(se, eps);
    P[1] = cweno3(sx, eps);
    P[2] = cweno3(sy, eps);
    P[3] = cweno3(sH, eps);
}

// The polynomial at the Gauss points of an edge: side 0 = E, 1 = W, 2 = N, 3 = S.
// Returns the values at the points -G and +G along the edge (G = 1/(2 sqrt 3), G^2 = 1/12).
template <typename T>
SWHD void edge_pts(const Poly<T>& p, int side, T& lo, T& hi)
{
    const T G = T(0.28867513459481288225);
    T m, t;
    if (side == 0)      { m = p.a0 + T(0.5) * p.ax + p.axx / T(6); t = p.ay + T(0.5) * p.axy; }
    else if (side == 1) { m = p.a0 - T(0.5) * p.ax + p.axx / T(6); t = p.ay - T(0.5) * p.axy; }
    else if (side == 2) { m = p.a0 + T(0.5) * p.ay + p.ayy / T(6); t = p.ax + T(0.5) * p.axy; }
    else                { m = p.a0 - T(0.5) * p.ay + p.ayy / T(6); t = p.ax - T(0.5) * p.axy; }
    lo = m - G * t;
    hi = m + G * t;
}

// Half the sum over the two Gauss points of the fluctuation that cell `own` receives from its
// edge `side` shared with the neighbour polynomials `nb`. Components (h, qx, qy).
template <typename T>
SWHD void edge_contrib(const Poly<T> own[4], const Poly<T> nb[4], int side, T g, T rg,
                       T& fh, T& fqx, T& fqy)
{
    const int nside = side ^ 1;  // E<->W, N<->S
    T oe[2], ox[2], oy[2], oH[2], ne[2], nxq[2], nyq[2], nH[2];
    edge_pts(own[0], side, oe[0], oe[1]);  edge_pts(nb[0], nside, ne[0], ne[1]);
    edge_pts(own[1], side, ox[0], ox[1]);  edge_pts(nb[1], nside, nxq[0], nxq[1]);
    edge_pts(own[2], side, oy[0], oy[1]);  edge_pts(nb[2], nside, nyq[0], nyq[1]);
    edge_pts(own[3], side, oH[0], oH[1]);  edge_pts(nb[3], nside, nH[0], nH[1]);
    fh = fqx = fqy = T(0);
    for (int q = 0; q < 2; ++q) {
        const T ho = oe[q] + oH[q], hn = ne[q] + nH[q];
        T a, b, c;
        if (side == 0)       // own cell is the left one, normal +x
            roe_fluct<T, false>(ho, ox[q], oy[q], oH[q], hn, nxq[q], nyq[q], nH[q], g, rg, a, b, c);
        else if (side == 1)  // own cell is the right one
            roe_fluct<T, true>(hn, nxq[q], nyq[q], nH[q], ho, ox[q], oy[q], oH[q], g, rg, a, b, c);
        else if (side == 2)  // normal +y: qn = qy, qt = qx
            roe_fluct<T, false>(ho, oy[q], ox[q], oH[q], hn, nyq[q], nxq[q], nH[q], g, rg, a, b, c);
        else
            roe_fluct<T, true>(hn, nyq[q], nxq[q], nH[q], ho, oy[q], ox[q], oH[q], g, rg, a, b, c);
        if (side < 2) { fh += a; fqx += b; fqy += c; }
        else          { fh += a; fqy += b; fqx += c; }
    }
    fh *= T(0.5); fqx *= T(0.5); fqy *= T(0.5);
}

// The volume term 1/|V| ∫_V (A1 ∂x P + A2 ∂y P) by the 2x2 Gauss rule; P_h = P_eta + P_H.
template <typename T>
SWHD void volume_term(const Poly<T> P[4], T rdx, T rdy, T g, T& vh, T& vx, T& vy)
{
    const T G = T(0.28867513459481288225);
    vh = P[1].ax * rdx + P[2].ay * rdy;
    vx = vy = T(0);
    for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
            const T sx = a ? G : -G, sy = b ? G : -G;
            T val[4], ddx[4], ddy[4];
            for (int k = 0; k < 4; ++k) {
                const Poly<T>& p = P[k];
                val[k] = p.a0 + p.ax * sx + p.ay * sy + p.axy * (sx * sy);
                ddx[k] = (p.ax + T(2) * p.axx * sx + p.axy * sy) * rdx;
                ddy[k] = (p.ay + T(2) * p.ayy * sy + p.axy * sx) * rdy;
            }
            const T hh = val[0] + val[3];
            const T u = val[1] / hh, v = val[2] / hh;
            const T hx = ddx[0] + ddx[3], hy = ddy[0] + ddy[3];
            const T gh = g * hh;
            vx += gh * ddx[0] - u * u * hx + T(2) * u * ddx[1] - u * v * hy + v * ddy[1] + u * ddy[2];
            vy += -u * v * hx + v * ddx[1] + u * ddx[2] + gh * ddy[0] - v * v * hy + T(2) * v * ddy[2];
        }
    vx *= T(0.25);
    vy *= T(0.25);
}

// dW/dt of cell (i, j) of the third-order scheme (eq. (26)).
template <typename T>
SWHD void rate3(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                const T* __restrict__ H, int i, int j, int nx, int ny, T rdx, T rdy, T g, T eps,
                T& rh, T& rqx, T& rqy)
{
    const T rg = sqrt(g);
    Poly<T> own[4], nb[4];
    recon_cell(h, qx, qy, H, i, j, nx, ny, eps, own);
    T vh, vx, vy;
    volume_term(own, rdx, rdy, g, vh, vx, vy);
    T xh = 0, xqx = 0, xqy = 0, yh = 0, yqx = 0, yqy = 0, fh, fqx, fqy;
#pragma unroll
    for (int side = 0; side < 4; ++side) {
        const int di = side == 0 ? 1 : (side == 1 ? -1 : 0);
        const int dj = side == 2 ? 1 : (side == 3 ? -1 : 0);
        recon_cell(h, qx, qy, H, i + di, j + dj, nx, ny, eps, nb);
        edge_contrib(own, nb, side, g, rg, fh, fqx, fqy);
        if (side < 2) { xh += fh; xqx += fqx; xqy += fqy; }
        else          { yh += fh; yqx += fqx; yqy += fqy; }
    }
    rh = -xh * rdx - yh * rdy - vh;
    rqx = -xqx * rdx - yqx * rdy - vx;
    rqy = -xqy * rdx - yqy * rdy - vy;
}

// ---- first order, strip kernel with the time-step reduction folded in --------------------------
// A warp owns STRIP = 29 columns and M rows. Lane k holds column i = 29 b - 2 + k: lanes 2..30 are
// the owned columns, lanes 0, 1 and 31 a halo. Marching north row by row, each lane computes the
// Roe fluctuations of its cell's east edge (the west one comes from lane k - 1 by a shuffle) and
// north edge (kept in registers: it is the south edge of the next row), so every edge is solved
// once (plus the halo), and the update. The new state of lanes 1..31 and of the rows just outside
// the band then gives the edge speeds of W^{n+1} around every owned cell, hence Δt_i of the NEXT
// step (the same-step CFL condition of that step) without another pass over memory.
#define STRIP 29
#define FULL_MASK 0xffffffffu

// Returns this lane's minimum of the next step's Δt_i over its owned cells (inf if none).
template <typename T>
SWHD T strip1_body(const T* __restrict__ h, const T* __restrict__ qx, const T* __restrict__ qy,
                   const T* __restrict__ H, T* __restrict__ ho, T* __restrict__ qxo,
                   T* __restrict__ qyo, int nx, int ny, int M, T rdx, T rdy, T dx, T dy, T g,
                   T cfl, T dt, int lane, int strip, int seg, T inf)
{
    const T rg = sqrt(g);
    const int i = strip * STRIP - 2 + lane;
    const int j0 = seg * M;
    const bool own_col = lane >= 2 && lane <= 30 && i < nx;
    const int jbeg = j0 > 0 ? j0 - 1 : 0;
    const int jend = (j0 + M < ny - 1) ? j0 + M : ny - 1;
    // mirror source of a ghost column (its new state is the mirror image of that column's)
    const int src = mirror(i, nx);
    int src_lane = lane + (src - i);
    src_lane = src_lane < 0 ? 0 : (src_lane > 31 ? 31 : src_lane);
    // registers: row j (c), row j + 1 (n) and the prefetched row j + 2 (f); lane 31 also loads
    // the state east of the warp one row ahead (ef)
    T hc, qxc, qyc, Hc, hn, qxn, qyn, Hn, hf, qxf, qyf, Hf, m[3], p[3], spd;
    T hef = 0, qxef = 0, qyef = 0, Hef = 0;
    load_cell(h, qx, qy, H, i, jbeg - 1, nx, ny, hn, qxn, qyn, Hn);
    load_cell(h, qx, qy, H, i, jbeg, nx, ny, hc, qxc, qyc, Hc);
    T fs[3];  // D^+ of the south edge of the current row: components (h, qy, qx)
    roe_both(hn, qyn, qxn, Hn, hc, qyc, qxc, Hc, g, rg, m, fs, spd);
    load_cell(h, qx, qy, H, i, jbeg + 1, nx, ny, hn, qxn, qyn, Hn);
    if (lane == 31) load_cell(h, qx, qy, H, i + 1, jbeg, nx, ny, hef, qxef, qyef, Hef);
    T pnh = 0, pny = 0, psx = 0, psS = 0;  // previous row: new h, qy; its sW + sE and sS
    T dtmin = inf;
    for (int j = jbeg; j <= jend; ++j) {
        load_cell(h, qx, qy, H, i, j + 2, nx, ny, hf, qxf, qyf, Hf);
        T hE = __shfl_down_sync(FULL_MASK, hc, 1), qxE = __shfl_down_sync(FULL_MASK, qxc, 1);
        T qyE = __shfl_down_sync(FULL_MASK, qyc, 1), HE = __shfl_down_sync(FULL_MASK, Hc, 1);
        if (lane == 31) {
            hE = hef; qxE = qxef; qyE = qyef; HE = Hef;
            load_cell(h, qx, qy, H, i + 1, j + 1, nx, ny, hef, qxef, qyef, Hef);
        }
        T mN[3], pN[3];
        roe_both(hc, qyc, qxc, Hc, hn, qyn, qxn, Hn, g, rg, mN, pN, spd);
        T mE[3], pE[3];
        roe_both(hc, qxc, qyc, Hc, hE, qxE, qyE, HE, g, rg, mE, pE, spd);
        const T pW0 = __shfl_up_sync(FULL_MASK, pE[0], 1);
        const T pW1 = __shfl_up_sync(FULL_MASK, pE[1], 1);
        const T pW2 = __shfl_up_sync(FULL_MASK, pE[2], 1);
        const T rh = -(pW0 + mE[0]) * rdx - (fs[0] + mN[0]) * rdy;
        const T rqx = -(pW1 + mE[1]) * rdx - (fs[2] + mN[2]) * rdy;
        const T rqy = -(pW2 + mE[2]) * rdx - (fs[1] + mN[1]) * rdy;
        T nh = hc + dt * rh, nqx = qxc + dt * rqx, nqy = qyc + dt * rqy;
        const bool own_row = j >= j0 && j < j0 + M;
        if (own_row && own_col) {
            const long k = (long)j * nx + i;
            ho[k] = nh; qxo[k] = nqx; qyo[k] = nqy;
        }
        // the new state of ghost columns: mirror images
        const T gh = __shfl_sync(FULL_MASK, nh, src_lane);
        const T gqx = __shfl_sync(FULL_MASK, nqx, src_lane);
        const T gqy = __shfl_sync(FULL_MASK, nqy, src_lane);
        if (src != i) { nh = gh; nqx = -gqx; nqy = gqy; }
        // edge speeds of W^{n+1}: east (from lane + 1), west (lane - 1's east), south
        const T sE = roe_speed(nh, nqx, __shfl_down_sync(FULL_MASK, nh, 1),
                               __shfl_down_sync(FULL_MASK, nqx, 1), g);
        const T sx = add_rn(__shfl_up_sync(FULL_MASK, sE, 1), sE);
        const T sS = (j == 0) ? roe_speed(nh, -nqy, nh, nqy, g) : roe_speed(pnh, pny, nh, nqy, g);
        // the previous row is complete now: its north speed is this row's south speed
        if (j > jbeg && j - 1 >= j0 && own_col) dtmin = fmin(dtmin, dt_of(psx, psS, sS, dx, dy, cfl));
        if (j == ny - 1 && own_row && own_col)  // the top row's north edge is the wall
            dtmin = fmin(dtmin, dt_of(sx, sS, roe_speed(nh, nqy, nh, -nqy, g), dx, dy, cfl));
        pnh = nh; pny = nqy; psx = sx; psS = sS;
        hc = hn; qxc = qxn; qyc = qyn; Hc = Hn;
        hn = hf; qxn = qxf; qyn = qyf; Hn = Hf;
        fs[0] = pN[0]; fs[1] = pN[1]; fs[2] = pN[2];
    }
    return dtmin;
}

// ---- kernels ---------------------------------------------------------------------------------
#ifndef SW_HOST_ONLY
template <typename T> struct Bits;
template <> struct Bits<float> {
    typedef unsigned int type;
    static __device__ __forceinline__ type of(float x) { return __float_as_uint(x); }
    static __device__ __forceinline__ float val(type b) { return __uint_as_float(b); }
    static constexpr type inf = 0x7f800000u;
};
template <> struct Bits<double> {
    typedef unsigned long long type;
    static __device__ __forceinline__ type of(double x) { return (type)__double_as_longlong(x); }
    static __device__ __forceinline__ double val(type b) { return __longlong_as_double((long long)b); }
    static constexpr type inf = 0x7ff0000000000000ull;
};


// Block minimum of v, then one atomicMin per block on the bits of the (positive) result.
template <typename T>
__device__ void block_min_to(T v, typename Bits<T>::type* slot)
{
    __shared__ T part[32];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int o = 16; o > 0; o >>= 1) v = fmin(v, __shfl_down_sync(0xffffffffu, v, o));
    if ((tid & 31) == 0) part[tid >> 5] = v;
    __syncthreads();
    const int nw = (blockDim.x * blockDim.y + 31) >> 5;
    if (tid < 32) {
        v = (tid < nw) ? part[tid] : Bits<T>::val(Bits<T>::inf);
        for (int o = 16; o > 0; o >>= 1) v = fmin(v, __shfl_down_sync(0xffffffffu, v, o));
        // compare bit patterns: the slot starts as all ones (a NaN, which no float compares below)
        const typename Bits<T>::type b = Bits<T>::of(v);
        if (tid == 0 && b < *(volatile typename Bits<T>::type*)slot) atomicMin(slot, b);
    }
}

// Same-step CFL time step: the minimum of Δt_i over all cells into *slot (preset to all ones).
template <typename T>
__global__ void sw_cfl(const T* __restrict__ h, const T* __restrict__ qx,
                       const T* __restrict__ qy, const int nx, const int ny, const T dx,
                       const T dy, const T g, const T cfl, typename Bits<T>::type* slot)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    T dt = Bits<T>::val(Bits<T>::inf);
    if (i < nx && j < ny) dt = cell_dt(h, qx, qy, i, j, nx, ny, dx, dy, g, cfl);
    block_min_to(dt, slot);
}

template <typename T>
__device__ __forceinline__ T step_size(const typename Bits<T>::type* slot, double dt_limit)
{
    return T(fmin((double)Bits<T>::val(*slot), dt_limit));
}

// First order: W^{n+1} = W^n + Δt L(W^n), Δt = min(*slot, dt_limit).
template <typename T>
__global__ void sw_step1(const T* __restrict__ h, const T* __restrict__ qx,
                         const T* __restrict__ qy, const T* __restrict__ H,
                         T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
                         const int nx, const int ny, const T rdx, const T rdy, const T g,
                         const typename Bits<T>::type* __restrict__ slot, const double dt_limit)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const T dt = step_size<T>(slot, dt_limit);
    T rh, rqx, rqy;
    rate1(h, qx, qy, H, i, j, nx, ny, rdx, rdy, g, rh, rqx, rqy);
    const long k = (long)j * nx + i;
    ho[k] = h[k] + dt * rh;
    qxo[k] = qx[k] + dt * rqx;
    qyo[k] = qy[k] + dt * rqy;
}

// First order, one pass: W^{n+1} = W^n + Δt L(W^n) with Δt = min(*slot_in, dt_limit), and the
// same-step Δt of the next step (from W^{n+1}) reduced into *slot_out (preset to all ones).
// Block (32, 4): blockIdx.x = strip of 29 columns, warp (blockIdx.y, threadIdx.y) = band of M rows.
template <typename T>
__global__ void sw_strip1(const T* __restrict__ h, const T* __restrict__ qx,
                          const T* __restrict__ qy, const T* __restrict__ H,
                          T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
                          const int nx, const int ny, const int M, const T rdx, const T rdy,
                          const T dx, const T dy, const T g, const T cfl,
                          const typename Bits<T>::type* __restrict__ slot_in,
                          typename Bits<T>::type* slot_out, const double dt_limit)
{
    const T inf = Bits<T>::val(Bits<T>::inf);
    const int seg = blockIdx.y * blockDim.y + threadIdx.y;
    T dtmin = inf;
    if (seg * M < ny)  // uniform over the warp
        dtmin = strip1_body(h, qx, qy, H, ho, qxo, qyo, nx, ny, M, rdx, rdy, dx, dy, g, cfl,
                            step_size<T>(slot_in, dt_limit), (int)threadIdx.x, (int)blockIdx.x,
                            seg, inf);
    block_min_to(dtmin, slot_out);
}

// Third order, one SSP-RK3 stage: out = a u0 + b (u + Δt L(u)) (a = 0: out = u + Δt L(u)).
template <typename T>
__global__ void sw_stage3(const T* __restrict__ h, const T* __restrict__ qx,
                          const T* __restrict__ qy, const T* __restrict__ H,
                          const T* __restrict__ h0, const T* __restrict__ qx0,
                          const T* __restrict__ qy0,
                          T* __restrict__ ho, T* __restrict__ qxo, T* __restrict__ qyo,
                          const int nx, const int ny, const T rdx, const T rdy, const T g,
                          const T eps, const T a, const T b,
                          const typename Bits<T>::type* __restrict__ slot, const double dt_limit)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= nx || j >= ny) return;
    const T dt = step_size<T>(slot, dt_limit);
    T rh, rqx, rqy;
    rate3(h, qx, qy, H, i, j, nx, ny, rdx, rdy, g, eps, rh, rqx, rqy);
    const long k = (long)j * nx + i;
    const T nh = h[k] + dt * rh, nqx = qx[k] + dt * rqx, nqy = qy[k] + dt * rqy;
    if (a == T(0)) {
        ho[k] = nh; qxo[k] = nqx; qyo[k] = nqy;
    } else {
        ho[k] = a * h0[k] + b * nh;
        qxo[k] = a * qx0[k] + b * nqx;
        qyo[k] = a * qy0[k] + b * nqy;
    }
}
#endif
