// Third order on the structured grid: the CWENO3 reconstruction, the Gauss points of an edge, the
// edge fluctuations at two Gauss points and the volume term of eq. (26); included by grid.cu (read
// grid/reference.py for the maths). Needs grid.cu's SWD and riemann.cuh's roe1, rsqrt_, rcp_.
#pragma once

// ---- third order: CWENO3 -------------------------------------------------------------------
// P(xi, eta) = a0 + ax xi + ay eta + axx (xi^2 - 1/12) + ayy (eta^2 - 1/12) + axy xi eta
template <typename T> struct Poly { T a0, ax, ay, axx, ayy, axy; };

// CWENO3 of one variable from its 3x3 stencil u[row][col] (row = y).
template <typename T>
SWD Poly<T> cweno3(const T u[3][3], T eps)
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

// The polynomial at the Gauss points of an edge: side 0 = E, 1 = W, 2 = N, 3 = S.
// Returns the values at the points -G and +G along the edge (G = 1/(2 sqrt 3), G^2 = 1/12).
template <typename T>
SWD void edge_pts(const Poly<T>& p, int side, T& lo, T& hi)
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

// Both fluctuations of an edge between the cells with polynomials L (left/south) and R
// (right/north), each half the sum over the two Gauss points: m = D^- (to L), p = D^+ (to R),
// components (h, qn, qt) with qn = qx across x-edges (YDIR false), qn = qy across y-edges; nu:
// the shock cure's shear viscosity of the edge (from the cell averages' sensors).
template <typename T, bool YDIR>
SWD void edge_both(const Poly<T> L[4], const Poly<T> R[4], T g, T rg, T m[3], T p[3], T nu)
{
    const int ls = YDIR ? 2 : 0, rs = YDIR ? 3 : 1;  // L's E/N side faces R's W/S side
    T le[2], lx[2], ly[2], lH[2], re[2], rx[2], ry[2], rH[2];
    edge_pts(L[0], ls, le[0], le[1]);  edge_pts(R[0], rs, re[0], re[1]);
    edge_pts(L[1], ls, lx[0], lx[1]);  edge_pts(R[1], rs, rx[0], rx[1]);
    edge_pts(L[2], ls, ly[0], ly[1]);  edge_pts(R[2], rs, ry[0], ry[1]);
    edge_pts(L[3], ls, lH[0], lH[1]);  edge_pts(R[3], rs, rH[0], rH[1]);
    m[0] = m[1] = m[2] = p[0] = p[1] = p[2] = T(0);
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        const T hL = le[q] + lH[q], hR = re[q] + rH[q];
        T mm[3], pp[3];
        roe1(hL, YDIR ? ly[q] : lx[q], YDIR ? lx[q] : ly[q], lH[q], rsqrt_(hL),
             hR, YDIR ? ry[q] : rx[q], YDIR ? rx[q] : ry[q], rH[q], rsqrt_(hR),
             re[q] - le[q], g, rg, mm, pp, nu);  // deta from P_eta: exact (edge_fluxes)
#pragma unroll
        for (int k = 0; k < 3; ++k) { m[k] += mm[k]; p[k] += pp[k]; }
    }
#pragma unroll
    for (int k = 0; k < 3; ++k) { m[k] *= T(0.5); p[k] *= T(0.5); }
}

// The volume term 1/|V| ∫_V (A1 ∂x P + A2 ∂y P) by the 2x2 Gauss rule; P_h = P_eta + P_H.
template <typename T>
SWD void volume_term(const Poly<T> P[4], T rdx, T rdy, T g, T& vh, T& vx, T& vy)
{
    const T G = T(0.28867513459481288225);
    vh = P[1].ax * rdx + P[2].ay * rdy;
    vx = vy = T(0);
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
        for (int a = 0; a < 2; ++a) {
            const T sx = a ? G : -G, sy = b ? G : -G;
            T val[4], ddx[4], ddy[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const Poly<T>& p = P[k];
                val[k] = p.a0 + p.ax * sx + p.ay * sy + p.axy * (sx * sy);
                ddx[k] = (p.ax + T(2) * p.axx * sx + p.axy * sy) * rdx;
                ddy[k] = (p.ay + T(2) * p.ayy * sy + p.axy * sx) * rdy;
            }
            const T hh = val[0] + val[3];
            const T ih = rcp_(hh);
            const T u = val[1] * ih, v = val[2] * ih;
            const T hx = ddx[0] + ddx[3], hy = ddy[0] + ddy[3];
            const T gh = g * hh;
            vx += gh * ddx[0] - u * u * hx + T(2) * u * ddx[1] - u * v * hy + v * ddy[1] + u * ddy[2];
            vy += -u * v * hx + v * ddx[1] + u * ddx[2] + gh * ddy[0] - v * v * hy + T(2) * v * ddy[2];
        }
    vx *= T(0.25);
    vy *= T(0.25);
}
