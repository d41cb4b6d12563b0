// Curvature flows of graphs ([P0]; docs/MODELS.md §1.2): the complementary finite-volume operators at
// one node of a shared-memory tile (edge gradients with corner means, edge Q, node Q, the
// mean-curvature bracket H, the Willmore divergence) and the exact forcing of `eoc-exact` — the
// device twins of reference.py and exact.py, included by curvature.cu and curvature_persist.cu.
#pragma once
#include "exact_ops.cuh"

static __device__ __forceinline__ int mirror(int g, int n, bool neumann)
{
    g = g < 0 ? 0 : (g > n ? n : g);
    if (neumann) g = (g == 0) ? 1 : ((g == n) ? n - 1 : g);
    return g;
}

__device__ __forceinline__ float rsqrt_t(float a) { return rsqrtf(a); }
__device__ __forceinline__ double rsqrt_t(double a) { return rsqrt(a); }

// Edge gradients (40)–(47) of the node at c (pointer into a tile with row stride sw) on its four
// edges E, W, N, S: gx[e], gy[e]. ih1 = 1/h1, ih2 = 1/h2.
template <typename T>
__device__ __forceinline__ void edge_gradients(const T* c, const int sw, const T ih1, const T ih2,
                                               T gx[4], T gy[4])
{
    const T p = c[0], pe = c[1], pw = c[-1], pn = c[sw], ps = c[-sw];
    const T cne = T(0.25) * ((p + pe) + (pn + c[sw + 1]));
    const T cnw = T(0.25) * ((pw + p) + (c[sw - 1] + pn));
    const T cse = T(0.25) * ((ps + c[-sw + 1]) + (p + pe));
    const T csw = T(0.25) * ((c[-sw - 1] + ps) + (pw + p));
    gx[0] = (pe - p) * ih1;    gy[0] = (cne - cse) * ih2;  // E (i+½, j)
    gx[1] = (p - pw) * ih1;    gy[1] = (cnw - csw) * ih2;  // W (i−½, j)
    gx[2] = (cne - cnw) * ih1; gy[2] = (pn - p) * ih2;     // N (i, j+½)
    gx[3] = (cse - csw) * ih1; gy[3] = (p - ps) * ih2;     // S (i, j−½)
}

// Edge Q (36)–(39) as Q and 1/Q, node Q (49) and the bracket H (48) of the node at c.
template <typename T>
__device__ __forceinline__ void node_curvature(const T* c, const int sw, const T ih1, const T ih2,
                                               T& Q, T& H)
{
    T gx[4], gy[4], iq[4], q[4];
    edge_gradients(c, sw, ih1, ih2, gx, gy);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const T a = T(1) + gx[e] * gx[e] + gy[e] * gy[e];
        iq[e] = rsqrt_t(a);
        q[e] = a * iq[e];
    }
    H = (gx[0] * iq[0] - gx[1] * iq[1]) * ih1 + (gy[2] * iq[2] - gy[3] * iq[3]) * ih2;
    Q = T(0.25) * ((q[0] + q[1]) + (q[2] + q[3]));
}

// −Q ∇·((1/Q) P ∇w − ½ (w²/Q³) ∇φ), scheme (21) with the sign of docs/MODELS.md §1.1, at the node at c
// (φ tile, stride sw) whose w is at cw (w tile, stride ww). E_mn = (1/Q)(δ_mn − ∂mφ ∂nφ/Q²) (53).
template <typename T>
__device__ __forceinline__ T willmore_node(const T* c, const int sw, const T* cw, const int ww,
                                           const T ih1, const T ih2)
{
    T gx[4], gy[4], wx[4], wy[4];
    edge_gradients(c, sw, ih1, ih2, gx, gy);
    edge_gradients(cw, ww, ih1, ih2, wx, wy);
    const T w0 = cw[0];
    const T we[4] = {T(0.5) * (cw[1] + w0), T(0.5) * (w0 + cw[-1]), T(0.5) * (cw[ww] + w0),
                     T(0.5) * (w0 + cw[-ww])};
    T flux[4], qsum = T(0);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const T a = T(1) + gx[e] * gx[e] + gy[e] * gy[e];
        const T iq = rsqrt_t(a);
        const T iq3 = iq * iq * iq;
        qsum += a * iq;
        const T g = e < 2 ? gx[e] : gy[e];  // the edge's normal direction
        const T cross = -gx[e] * gy[e] * iq3;
        flux[e] = (e < 2 ? (iq - gx[e] * gx[e] * iq3) * wx[e] + cross * wy[e]
                         : cross * wx[e] + (iq - gy[e] * gy[e] * iq3) * wy[e])
                  - T(0.5) * we[e] * we[e] * iq3 * g;
    }
    const T Q = T(0.25) * qsum;
    return -Q * ((flux[0] - flux[1]) * ih1 + (flux[2] - flux[3]) * ih2);
}

// The derivatives p_ab = c X^(a)(x_i) Y^(b)(y_j) of the exact solution from the 1D tables.
#define P(a, b) (cz * (tx[(a) * nx1 + i] * ty[(b) * ny1 + j]))

// w(ζ) = (b1 + b3 c²) c / (1 + c² B) from the coefficient fields (rows B = 1, b1 = 7, b3 = 8)
template <typename T>
__device__ __forceinline__ T exact_w(const T* coef, const int nn, const int g, const T cz)
{
    const T c2 = cz * cz;
    return (coef[7 * nn + g] + coef[8 * nn + g] * c2) * cz / (T(1) + c2 * coef[nn + g]);
}

// F = ζ_t − L[ζ]. Mean curvature: L from the derivatives (1D tables). Willmore: L[ζ] =
// (a1 + a3 c² + ... + a9 c⁸) c / (1 + c² B)⁴ from the coefficient fields (rows G = 0, B = 1,
// a1..a9 = 2..6; derive_forcing.py), far fewer operations than the expanded operator.
template <typename T, bool WILLMORE>
__device__ __forceinline__ T exact_forcing(const T* tx, const T* ty, const T* coef, int nx1,
                                           int ny1, int i, int j, const T cz, const T zt)
{
    if (WILLMORE) {
        const int nn = nx1 * ny1, g = j * nx1 + i;
        const T c2 = cz * cz;
        const T d = T(1) + c2 * coef[nn + g];
        const T d2 = d * d;
        const T num = ((((coef[6 * nn + g] * c2 + coef[5 * nn + g]) * c2 + coef[4 * nn + g]) * c2
                        + coef[3 * nn + g]) * c2 + coef[2 * nn + g]) * cz;
        return zt * coef[g] - num / (d2 * d2);
    }
    const T d00 = tx[i] * ty[j];
    return zt * d00 - mean_curvature_op<T>(P(1, 0), P(0, 1), P(2, 0), P(1, 1), P(0, 2));
}
#undef P

// 1/a for the lean kernels' exact forcing: float through the fast reciprocal (MUFU, ~1 ulp; the
// float32 tolerance is 1e-5), double exactly rounded.
__device__ __forceinline__ float rcp_t(float a) { return __fdividef(1.0f, a); }
__device__ __forceinline__ double rcp_t(double a) { return 1.0 / a; }

// mean_curvature_op (exact_ops.cuh) with rcp_t for its one division.
template <typename T>
__device__ __forceinline__ T mean_curvature_op_lean(const T p10, const T p01, const T p20,
                                                    const T p11, const T p02)
{
    const T c0 = rcp_t((p01 * p01) + (p10 * p10) + T(1));
    return -c0 * p01 * (p01 * p02 + p10 * p11) - c0 * p10 * (p01 * p11 + p10 * p20) + p02 + p20;
}
