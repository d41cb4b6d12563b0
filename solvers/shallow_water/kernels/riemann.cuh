// The edge fluxes of the one- and two-layer shallow-water systems on the device: the CUDA twin of
// riemann.py, included by the kernels of both geometries (grid/kernels/grid.cu,
// triangles/kernels/*.cu; the schemes pass this folder to load_kernels as an include dir).
//
// Every flux has ONE signature, Flux<E, NL, SCH>::apply(wl, wr, HL, HR, nx, ny, wall, g, r, dl, dr,
// smax): the conserved variables of the left and right cell in Cartesian components (wl, wr: NL
// layers of h, qx, qy), the bottom depths, the unit normal from left to right, a wall edge (the
// mirror state qn -> -qn), gravity and the density ratio; out: D^- (dl, to the left cell) and D^+
// (dr, to the right one) in Cartesian components and the largest |lambda|. E is the compute type.
// SCH: 0 roe, 1 ir-roe, 2 pvm-ifcp. The one-layer Roe solver itself, roe1, works in the
// edge-normal frame; the structured grid calls it directly on its axis frames (normal (1, 0):
// (qn, qt) = (qx, qy); normal (0, 1): (qy, qx), the reflection, which gives the same
// fluctuations as the rotation (qy, -qx) up to the sign of the tangential component).
// Everything is __forceinline__: these are the inner loops of the fused kernels.
//
// The carbuncle cure (riemann.py's module docstring): the one-layer fluxes take nu, the shock
// sensor's shear viscosity max(S_L, S_R) / SW_SHOCK_TAU of the edge (0: none; the geometries
// compute the cell sensors S with sw_compression; grid.cu's sens_comp is the same with the
// subtraction explicitly rounded), and give the shear wave the viscosity
// max(|un|, min(nu, c)): shear_extra below, zero on a lake at rest (q = 0).
#pragma once

#define SW_SHOCK_TAU 0.05  // riemann.SHOCK_TAU

// max(0, un_L - un_R) from the normal velocities of the two sides: the sensor's compression.
template <typename T>
__device__ __forceinline__ T sw_compression(T unL, T unR) { return fmax(unL - unR, T(0)); }

// nu of an edge from the sensors of its two cells.
template <typename T>
__device__ __forceinline__ T sw_nu(T SL, T SR) { return fmax(SL, SR) * T(1.0 / SW_SHOCK_TAU); }

// (min(nu, c) - |un|)^+ / 2: the shear wave's extra viscosity (halved).
template <typename T>
__device__ __forceinline__ T shear_extra(T nu, T c, T un) {
    return T(0.5) * fmax(fmin(nu, c) - fabs(un), T(0));
}

// ---- shared pieces --------------------------------------------------------------------------
// 1/sqrt(x) and 1/x: the hardware approximations in float32 (MUFU, ~2 ulp; deterministic),
// correctly rounded or 1-ulp library functions in float64.
__device__ __forceinline__ float rsqrt_(float x) { return rsqrtf(x); }
__device__ __forceinline__ double rsqrt_(double x) { return rsqrt(x); }
__device__ __forceinline__ float rcp_(float x) { return __fdividef(1.0f, x); }
__device__ __forceinline__ double rcp_(double x) { return __drcp_rn(x); }

template <typename E>
__device__ __forceinline__ E sgn1(E x) { return x < E(0) ? E(-1) : E(1); }

// Harten-Hyman's delta = max(0, lam - lam_l, lam_r - lam): nonzero (and > |lam|) only in a
// transonic rarefaction. Harten's smoothed |lam|_d = (lam^2 + d^2) / (2 d) where |lam| < d.
template <typename E>
__device__ __forceinline__ E hh_abs(E lam, E lam_l, E lam_r) {
    E d = fmax(fmax(lam - lam_l, lam_r - lam), E(0));
    return fabs(lam) < d ? (lam * lam + d * d) / (E(2) * d) : fabs(lam);
}

// The two-layer Roe schemes' left fraction (1 - sgn_d(lam)) / 2 of a wave of Z,
// sgn_d = lam / |lam|_d (bounded in [0, 1]).
template <typename E>
__device__ __forceinline__ E hh_fraction(E lam, E lam_l, E lam_r) {
    E d = fmax(fmax(lam - lam_l, lam_r - lam), E(0));
    E s = fabs(lam) < d ? E(2) * d * lam / (lam * lam + d * d) : sgn1(lam);
    return E(0.5) * (E(1) - s);
}

template <typename E>
__device__ __forceinline__ E roe_avg(E sl, E sr, E hl, E hr, E al, E ar) {
    return (sl * al / hl + sr * ar / hr) / (sl + sr);
}

// The parabola through (x1, f1), (x2, f2), (x3, |x3|) (PVM-IFCP).
template <typename E>
__device__ __forceinline__ void parabola(E x1, E x2, E x3, E f1, E f2, E& a0, E& a1, E& a2) {
    E f3 = fabs(x3);
    E d12 = (f2 - f1) / (x2 - x1);
    E d13 = (f3 - f1) / (x3 - x1);
    a2 = (d13 - d12) / (x3 - x2);
    a1 = d12 - a2 * (x1 + x2);
    a0 = f1 - a1 * x1 - a2 * x1 * x1;
}

template <typename E, int NL, int SCH> struct Flux;

// ---- one layer ------------------------------------------------------------------------------
// The Harten–Hyman entropy fix, the split of the eigenvalue lam (lamL, lamR: the eigenvalue at
// the left and right state): returns mu^-; mu^+ = lam - mu^-. A transonic rarefaction sends
// lamL (lamR - lam) / (lamR - lamL) to the left, otherwise mu^- = min(lam, 0).
template <typename T>
__device__ __forceinline__ T hh_split(T lam, T lamL, T lamR)
{
    if (lamL < T(0) && lamR > T(0)) return lamL * (lamR - lam) / (lamR - lamL);
    return fmin(lam, T(0));
}

// The one-layer path-conservative Roe solver (riemann.roe1) in the edge-normal frame, from L to R,
// components (h, qn, qt): m = D^- (sent to the left cell) and p = D^+ (sent to the right cell);
// returns the largest |lambda| = |u~| + c~. rL, rR = 1/sqrt(h) (a caller that solves several edges
// of one cell computes them once), rg = sqrt(g), deta = the free-surface jump (hR - HR) - (hL - HL)
// (the overload below takes dh - dH). The square roots and divisions go through ONE reciprocal
// square root per cell state, one reciprocal per edge (1/(sL + sR)) and one reciprocal square
// root per edge (c, 1/(2c)). Well-balanced exactly in any precision (issue 28): the wave
// strengths b1, b3 are those of (deta, dqn), and the bottom's part of each wave is the closed form
// (chi u^2 + e (u +- c)) dH / (2c), e = mu^- - min(lam, 0) the entropy fix's correction, so a lake
// at rest (deta = 0, q = 0: u = 0, e = 0) gives m = p = 0 exactly. nu: the shock cure's shear
// viscosity (0: none).
template <typename T>
__device__ __forceinline__ T roe1(T hL, T qnL, T qtL, T HL, T rL, T hR, T qnR, T qtR, T HR, T rR,
                                  T deta, T g, T rg, T m[3], T p[3], T nu = T(0))
{
    const T sL = hL * rL, sR = hR * rR;          // sqrt(h)
    const T aL = qnL * rL, aR = qnR * rR;        // sqrt(h) u
    const T w = rcp_(sL + sR);
    const T u = (aL + aR) * w;
    const T v = (qtL * rL + qtR * rR) * w;
    const T c2 = T(0.5) * g * (hL + hR);
    const T rc = rsqrt_(c2);
    const T c = c2 * rc, inv2c = T(0.5) * rc;
    const T uL = aL * rL, uR = aR * rR;
    const T dh = hR - hL, dqn = qnR - qnL, dqt = qtR - qtL, dH = HR - HL;
    const T l1 = u - c, l3 = u + c;
    const T b1 = (l3 * deta - dqn) * inv2c;
    const T b3 = (dqn - l1 * deta) * inv2c;
    const T a2 = dqt - v * dh;
    const T cL = rg * sL, cR = rg * sR;
    const T m1 = hh_split(l1, uL - cL, uR - cR);
    const T m3 = hh_split(l3, uL + cL, uR + cR);
    const T e1 = m1 - fmin(l1, T(0)), e3 = m3 - fmin(l3, T(0));  // 0 unless transonic
    const T u2 = u * u, k = dH * inv2c;
    const bool neg1 = l1 < T(0), neg3 = l3 < T(0);
    const T w1m = m1 * b1 + ((neg1 ? u2 : T(0)) + e1 * l3) * k;
    const T w3m = m3 * b3 - ((neg3 ? u2 : T(0)) + e3 * l1) * k;
    const T w1p = (l1 - m1) * b1 + ((neg1 ? T(0) : u2) - e1 * l3) * k;
    const T w3p = (l3 - m3) * b3 - ((neg3 ? T(0) : u2) - e3 * l1) * k;
    const T d = shear_extra(nu, c, u);
    m[0] = w1m + w3m;
    m[1] = w1m * l1 + w3m * l3;
    m[2] = m[0] * v + (fmin(u, T(0)) - d) * a2;
    p[0] = w1p + w3p;
    p[1] = w1p * l1 + w3p * l3;
    p[2] = p[0] * v + (fmax(u, T(0)) + d) * a2;
    return fabs(u) + c;
}

// The same with deta = dh - dH (cell averages: a lake at rest has hR - hL == HR - HL exactly
// wherever PVM-IFCP's V = dh - dH is 0).
template <typename T>
__device__ __forceinline__ T roe1(T hL, T qnL, T qtL, T HL, T rL, T hR, T qnR, T qtR, T HR, T rR,
                                  T g, T rg, T m[3], T p[3], T nu = T(0))
{
    return roe1(hL, qnL, qtL, HL, rL, hR, qnR, qtR, HR, rR, (hR - hL) - (HR - HL), g, rg, m, p,
                nu);
}

// One layer. SCH 0 (roe) and 1 (ir-roe) are both the Roe solver roe1; 2 is PVM-IFCP. nu: the
// shock cure's shear viscosity of the edge (0: none).
template <typename E, int SCH> struct Flux<E, 1, SCH> {
    static __device__ __forceinline__ void apply(const E* wl, const E* wr, E HL, E HR, E nx,
                                                 E ny, bool wall, E g, E /*r*/, E* dl, E* dr,
                                                 E& smax, E nu = E(0)) {
        E hL = wl[0];
        E qnL = wl[1] * nx + wl[2] * ny, qtL = -wl[1] * ny + wl[2] * nx;
        E hR, qnR, qtR;
        if (wall) {
            hR = hL; qnR = -qnL; qtR = qtL; HR = HL;
        } else {
            hR = wr[0];
            qnR = wr[1] * nx + wr[2] * ny;
            qtR = -wr[1] * ny + wr[2] * nx;
        }
        if (SCH == 0 || SCH == 1) {
            E m[3], p[3];
            smax = roe1(hL, qnL, qtL, HL, rsqrt_(hL), hR, qnR, qtR, HR, rsqrt_(hR), g, sqrt(g), m,
                        p, nu);
            dl[0] = m[0]; dl[1] = m[1] * nx - m[2] * ny; dl[2] = m[1] * ny + m[2] * nx;
            dr[0] = p[0]; dr[1] = p[1] * nx - p[2] * ny; dr[2] = p[1] * ny + p[2] * nx;
            return;
        }
        E hb = E(0.5) * (hL + hR);
        E sL = sqrt(hL), sR = sqrt(hR);
        E un = roe_avg(sL, sR, hL, hR, qnL, qnR);
        E ut = roe_avg(sL, sR, hL, hR, qtL, qtR);
        E c = sqrt(g * hb);
        E dh = hR - hL, dH = HR - HL;
        E z0 = qnR - qnL;
        E z1 = qnR * qnR / hR - qnL * qnL / hL + g * hb * (dh - dH);
        E z2 = qnR * qtR / hR - qnL * qtL / hL;
        E l1 = un - c, l3 = un + c;
        smax = fmax(fabs(l1), fabs(l3));
        E d0, dx, dy;
        E cL = sqrt(g * hL), cR = sqrt(g * hR);
        E uL = qnL / hL, uR = qnR / hR;
        E s_ext = (l1 + l3 < E(0)) ? E(-1) : E(1);
        E chi = s_ext * fabs(un);
        E al0, al1, al2;
        parabola(l1, l3, chi, hh_abs(l1, uL - cL, uR - cR), hh_abs(l3, uL + cL, uR + cR), al0,
                 al1, al2);
        E v0 = dh - dH, v1 = qnR - qnL, v2 = qtR - qtL;
        E c2 = c * c;
        E av0 = v1, av1 = (c2 - un * un) * v0 + E(2) * un * v1,
          av2 = -un * ut * v0 + ut * v1 + un * v2;
        E aav0 = av1, aav1 = (c2 - un * un) * av0 + E(2) * un * av1,
          aav2 = -un * ut * av0 + ut * av1 + un * av2;
        d0 = E(0.5) * (z0 - (al0 * v0 + al1 * av0 + al2 * aav0));
        E dn = E(0.5) * (z1 - (al0 * v1 + al1 * av1 + al2 * aav1));
        E dt = E(0.5) * (z2 - (al0 * v2 + al1 * av2 + al2 * aav2))
               - shear_extra(nu, c, un) * (v2 - ut * dh);
        dx = dn * nx - dt * ny;
        dy = dn * ny + dt * nx;
        E zx = z1 * nx - z2 * ny, zy = z1 * ny + z2 * nx;
        dl[0] = d0; dl[1] = dx; dl[2] = dy;
        dr[0] = z0 - d0; dr[1] = zx - dx; dr[2] = zy - dy;
    }
};

// ---- two layers -----------------------------------------------------------------------------
#define NEWTON_IT 16
#define HYPERBOLIC_EPS 1e-8

// External/internal wave-speed approximations of a two-layer state.
template <typename E>
__device__ __forceinline__ void approx_speeds(E h1, E h2, E u1, E u2, E g, E r, E* lam) {
    E hs = h1 + h2;
    E um = (h1 * u1 + h2 * u2) / hs;
    E uw = (h1 * u2 + h2 * u1) / hs;
    E ce = sqrt(g * hs);
    E ci = sqrt((E(1) - r) * g * h1 * h2 / hs);
    lam[0] = um - ce; lam[1] = uw - ci; lam[2] = uw + ci; lam[3] = um + ce;
}

// Roots of ((m - d1)^2 - c1^2)((m - d2)^2 - c2^2) = r c1^2 c2^2: outer by Newton, inner deflated.
template <typename E>
__device__ __forceinline__ void quartic_roots(E d1, E d2, E c1, E c2, E r, E* m, E& disc2) {
    E b1 = E(-2) * d1, e1 = d1 * d1 - c1 * c1;
    E b2 = E(-2) * d2, e2 = d2 * d2 - c2 * c2;
    E a3 = b1 + b2;
    E a2 = e1 + e2 + b1 * b2;
    E a1 = b1 * e2 + b2 * e1;
    E a0 = e1 * e2 - r * c1 * c1 * c2 * c2;
    E x4 = fmax(d1, d2) + c1 + c2;
    E x1 = fmin(d1, d2) - c1 - c2;
#pragma unroll 4
    for (int it = 0; it < NEWTON_IT; ++it) {
        E p4 = (((x4 + a3) * x4 + a2) * x4 + a1) * x4 + a0;
        E q4 = ((E(4) * x4 + E(3) * a3) * x4 + E(2) * a2) * x4 + a1;
        E p1 = (((x1 + a3) * x1 + a2) * x1 + a1) * x1 + a0;
        E q1 = ((E(4) * x1 + E(3) * a3) * x1 + E(2) * a2) * x1 + a1;
        x4 = x4 - p4 / q4;
        x1 = x1 - p1 / q1;
    }
    E s = x1 + x4, mm = x1 * x4;
    E P = a3 + s;
    E Q = a2 + s * P - mm;
    disc2 = P * P - E(4) * Q;
    E disc = sqrt(fmax(disc2, E(0)));
    m[0] = x1; m[1] = E(0.5) * (-P - disc); m[2] = E(0.5) * (-P + disc); m[3] = x4;
}

template <typename E>
__device__ __forceinline__ void a6(const E* v, E u1, E t1, E c1s, E u2, E t2, E c2s, E r, E* o) {
    o[0] = v[1];
    o[1] = (c1s - u1 * u1) * v[0] + E(2) * u1 * v[1] + c1s * v[3];
    o[2] = -u1 * t1 * v[0] + t1 * v[1] + u1 * v[2];
    o[3] = v[4];
    o[4] = r * c2s * v[0] + (c2s - u2 * u2) * v[3] + E(2) * u2 * v[4];
    o[5] = -u2 * t2 * v[3] + t2 * v[4] + u2 * v[5];
}

// In-place inverse of a 6x6 matrix by Gauss-Jordan with partial pivoting (as riemann.py).
// Every index is a compile-time constant after unrolling, so A stays in registers.
template <typename E>
__device__ __forceinline__ void gj_inverse6(E (&K)[6][6], E (&Ki)[6][6]) {
    E A[6][12];
#pragma unroll
    for (int i = 0; i < 6; ++i) {
#pragma unroll
        for (int j = 0; j < 6; ++j) { A[i][j] = K[i][j]; A[i][j + 6] = (i == j) ? E(1) : E(0); }
    }
#pragma unroll
    for (int col = 0; col < 6; ++col) {
        int piv = col;
        E best = fabs(A[col][col]);
#pragma unroll
        for (int i = col + 1; i < 6; ++i) {
            E a = fabs(A[i][col]);
            if (a > best) { best = a; piv = i; }
        }
#pragma unroll
        for (int i = col + 1; i < 6; ++i) {
            if (i == piv) {
#pragma unroll
                for (int j = 0; j < 12; ++j) { E t = A[i][j]; A[i][j] = A[col][j]; A[col][j] = t; }
            }
        }
        E p = A[col][col];
#pragma unroll
        for (int j = 0; j < 12; ++j) A[col][j] = A[col][j] / p;
#pragma unroll
        for (int i = 0; i < 6; ++i) {
            if (i != col) {
                E f = A[i][col];
#pragma unroll
                for (int j = 0; j < 12; ++j) A[i][j] -= f * A[col][j];
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 6; ++i) {
#pragma unroll
        for (int j = 0; j < 6; ++j) Ki[i][j] = A[i][j + 6];
    }
}

// SCH: 0 classical roe (6x6 Cartesian, numerical inverse), 1 ir-roe (normal frame), 2 pvm-ifcp.
// (The shock cure is one layer's: nu is ignored here.)
template <typename E, int SCH> struct Flux<E, 2, SCH> {
    static __device__ __forceinline__ void apply(const E* wl, const E* wr, E HL, E HR, E nx,
                                                 E ny, bool wall, E g, E r, E* dl, E* dr,
                                                 E& smax, E /*nu*/ = E(0)) {
        E h1L = wl[0], h2L = wl[3];
        E n1L = wl[1] * nx + wl[2] * ny, t1L = -wl[1] * ny + wl[2] * nx;
        E n2L = wl[4] * nx + wl[5] * ny, t2L = -wl[4] * ny + wl[5] * nx;
        E h1R, h2R, n1R, t1R, n2R, t2R;
        if (wall) {
            h1R = h1L; h2R = h2L; n1R = -n1L; n2R = -n2L; t1R = t1L; t2R = t2L; HR = HL;
        } else {
            h1R = wr[0]; h2R = wr[3];
            n1R = wr[1] * nx + wr[2] * ny; t1R = -wr[1] * ny + wr[2] * nx;
            n2R = wr[4] * nx + wr[5] * ny; t2R = -wr[4] * ny + wr[5] * nx;
        }
        E hb1 = E(0.5) * (h1L + h1R), hb2 = E(0.5) * (h2L + h2R);
        E s1L = sqrt(h1L), s1R = sqrt(h1R), s2L = sqrt(h2L), s2R = sqrt(h2R);
        E u1 = roe_avg(s1L, s1R, h1L, h1R, n1L, n1R);
        E v1 = roe_avg(s1L, s1R, h1L, h1R, t1L, t1R);
        E u2 = roe_avg(s2L, s2R, h2L, h2R, n2L, n2R);
        E v2 = roe_avg(s2L, s2R, h2L, h2R, t2L, t2R);
        E c1s = g * hb1, c2s = g * hb2;
        E dh1 = h1R - h1L, dh2 = h2R - h2L, dH = HR - HL;
        E z[6];
        z[0] = n1R - n1L;
        z[1] = n1R * n1R / h1R - n1L * n1L / h1L + c1s * (dh1 + dh2 - dH);
        z[2] = n1R * t1R / h1R - n1L * t1L / h1L;
        z[3] = n2R - n2L;
        z[4] = n2R * n2R / h2R - n2L * n2L / h2L + c2s * (r * dh1 + dh2 - dH);
        z[5] = n2R * t2R / h2R - n2L * t2L / h2L;
        E zc[6];
        zc[0] = z[0]; zc[1] = z[1] * nx - z[2] * ny; zc[2] = z[1] * ny + z[2] * nx;
        zc[3] = z[3]; zc[4] = z[4] * nx - z[5] * ny; zc[5] = z[4] * ny + z[5] * nx;
        E sl[4], sr[4];
        approx_speeds(h1L, h2L, n1L / h1L, n2L / h2L, g, r, sl);
        approx_speeds(h1R, h2R, n1R / h1R, n2R / h2R, g, r, sr);
        E dm[6];
        bool use_pvm = (SCH == 2);
        E lam[4];
        if (SCH != 2) {
            E um = E(0.5) * (u1 + u2);
            E m[4], disc2;
            quartic_roots(u1 - um, u2 - um, sqrt(c1s), sqrt(c2s), r, m, disc2);
#pragma unroll
            for (int k = 0; k < 4; ++k) lam[k] = m[k] + um;
            smax = fmax(fabs(lam[0]), fabs(lam[3]));
            // complex (or nearly double) internal eigenvalues: IFCP viscosity on this edge
            use_pvm = !(disc2 > E(HYPERBOLIC_EPS) * (c1s + c2s));
        }
        if (use_pvm) {
            E ap[4];
            approx_speeds(hb1, hb2, u1, u2, g, r, ap);
            E s_ext = (ap[0] + ap[3] < E(0)) ? E(-1) : E(1);
            E chi = s_ext * fmax(fabs(ap[1]), fabs(ap[2]));
            E al0, al1, al2;
            parabola(ap[0], ap[3], chi, hh_abs(ap[0], sl[0], sr[0]), hh_abs(ap[3], sl[3], sr[3]),
                     al0, al1, al2);
            E v[6] = {dh1, z[0], t1R - t1L, dh2 - dH, z[3], t2R - t2L};
            E av[6], aav[6];
            a6(v, u1, v1, c1s, u2, v2, c2s, r, av);
            a6(av, u1, v1, c1s, u2, v2, c2s, r, aav);
#pragma unroll
            for (int k = 0; k < 6; ++k)
                dm[k] = E(0.5) * (z[k] - (al0 * v[k] + al1 * av[k] + al2 * aav[k]));
            if (SCH == 2) smax = fmax(fabs(ap[0]), fabs(ap[3]));
        } else {
            E th[6];
#pragma unroll
            for (int k = 0; k < 4; ++k) th[k] = hh_fraction(lam[k], sl[k], sr[k]);
            th[4] = E(0.5) * (E(1) - sgn1(u1));
            th[5] = E(0.5) * (E(1) - sgn1(u2));
            if (SCH == 1) {
#pragma unroll
                for (int k = 0; k < 6; ++k) dm[k] = E(0);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    E lk = lam[k];
                    E a = c1s, b = (lk - u1) * (lk - u1) - c1s;
                    E x[6] = {a, lk * a, v1 * a, b, lk * b, v2 * b};
                    E l0 = (lk - E(2) * u1) * r * c2s, l1 = r * c2s, l2 = (lk - E(2) * u2) * b,
                      l3 = b;
                    E norm = l0 * x[0] + l1 * x[1] + l2 * x[3] + l3 * x[4];
                    E alpha = (l0 * z[0] + l1 * z[1] + l2 * z[3] + l3 * z[4]) / norm;
                    E w = th[k] * alpha;
#pragma unroll
                    for (int i = 0; i < 6; ++i) dm[i] = dm[i] + w * x[i];
                }
                dm[2] = dm[2] + th[4] * (z[2] - v1 * z[0]);
                dm[5] = dm[5] + th[5] * (z[5] - v2 * z[3]);
            } else {
                E K[6][6], Ki[6][6];
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    E lk = lam[k];
                    E a = c1s, b = (lk - u1) * (lk - u1) - c1s;
                    E x1 = lk * a, x2 = v1 * a, x4 = lk * b, x5 = v2 * b;
                    K[0][k] = a;
                    K[1][k] = x1 * nx - x2 * ny;
                    K[2][k] = x1 * ny + x2 * nx;
                    K[3][k] = b;
                    K[4][k] = x4 * nx - x5 * ny;
                    K[5][k] = x4 * ny + x5 * nx;
                }
#pragma unroll
                for (int i = 0; i < 6; ++i) { K[i][4] = E(0); K[i][5] = E(0); }
                K[1][4] = -ny; K[2][4] = nx;
                K[4][5] = -ny; K[5][5] = nx;
                gj_inverse6(K, Ki);
                E w[6];
#pragma unroll
                for (int i = 0; i < 6; ++i) {
                    E a = E(0);
#pragma unroll
                    for (int j = 0; j < 6; ++j) a += Ki[i][j] * zc[j];
                    w[i] = th[i] * a;
                }
#pragma unroll
                for (int i = 0; i < 6; ++i) {
                    E a = E(0);
#pragma unroll
                    for (int j = 0; j < 6; ++j) a += K[i][j] * w[j];
                    dl[i] = a;
                    dr[i] = zc[i] - a;
                }
                return;
            }
        }
        dl[0] = dm[0];
        dl[1] = dm[1] * nx - dm[2] * ny;
        dl[2] = dm[1] * ny + dm[2] * nx;
        dl[3] = dm[3];
        dl[4] = dm[4] * nx - dm[5] * ny;
        dl[5] = dm[4] * ny + dm[5] * nx;
#pragma unroll
        for (int k = 0; k < 6; ++k) dr[k] = zc[k] - dl[k];
    }
};
