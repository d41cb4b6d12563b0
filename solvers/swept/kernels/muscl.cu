// euler-1d, scheme=muscl-hllc (the default; gas.py states it): MUSCL on the primitive variables
// (rho, u, P) with face values from four cells (gas.face_value: unlimited third order where the
// data are smooth, superbee at jumps, LimO3 elsewhere), the HLLC flux with Einfeldt's wave speeds
// at the Roe average,
// SSP-RK2 (Heun) as two tiers: par = 1, Q1 = Q - lam dF(Q);
// par = 0, Q' = (Q + (Q1 - lam dF(Q1))) / 2.
// Stencil radius R = 2 (the flux at i+1/2 reads cells i-1 .. i+2), Dirichlet ghost cells or
// periodic ends, so the swept machinery (swept.cuh) runs it as it runs the paper's scheme
// (euler.cu). Written operation for operation as gas.py: a g++ build without contraction equals
// NumPy bit for bit (tests/solvers/swept/test_cu_on_cpu.py).
// State [comp][cell], comp = rho, rho u, E. Per cell and tier: 15 loads, 3 stores, 5 primitive
// conversions, 4 face values per variable (one division each), 2 HLLC fluxes (each 5 sqrt, ~8
// divisions).
#include "swept.cuh"

template <typename T>
struct MusclOp {
    static constexpr int R = 2, NV = 3;
    T lam, gamma;     // Δt/Δx, γ
    int periodic;     // 1: periodic ends, 0: Dirichlet
    T gl[3], gr[3];   // ghost states beyond the left and right ends (Dirichlet)

    __device__ __forceinline__ T fetch(const T* p, int stride, int c, int r, int g, int n,
                                       int wrap) const
    {
        const int j = g + r;
        if (j < 0) {
            if (!periodic) return gl[c];
            r += wrap;
        } else if (j >= n) {
            if (!periodic) return gr[c];
            r -= wrap;
        }
        return p[c * stride + r];
    }
    // The value at the face between cells 0 and p reconstructed in cell 0 from cells m, 0, p, pp
    // (gas.face_value): unlimited third order where smooth, superbee at a jump, else LimO3.
    __device__ __forceinline__ static T face_value(T wm, T w0, T wp, T wpp, T scale, bool positive)
    {
        const T a = w0 - wm, b = wp - w0;
        const T d0 = b - a, d1 = (wpp - wp) - b;
        const T th = a / (b == T(0) ? T(1) : b);
        const T phi3 = (T(2) + th) / T(3);
        const T lo3 = fmax(T(0), fmin(phi3, fmax(T(-0.5) * th,
                                                 fmin(fmin(T(2) * th, phi3), T(1.6)))));
        const T sb = fmax(T(0), fmax(fmin(T(2) * th, T(1)), fmin(th, T(2))));
        const bool jump = fmax(fabs(a), fabs(b)) > T(0.03) * scale;
        bool smooth = d0 * d1 > T(0) && fabs(d1) <= T(4) * fabs(d0) &&
                      fabs(d0) <= T(4) * fabs(d1) && !jump;
        const T v = w0 + (a + T(2) * b) / T(6);
        if (positive) smooth = smooth && v > T(0.5) * fmin(fmin(wm, w0), wp);
        return smooth ? v : w0 + T(0.5) * (jump ? sb : lo3) * b;
    }
    // (rho, u, P) at the face between cells 0 and p on cell 0's side (gas.reconstruct)
    __device__ __forceinline__ static void reconstruct(const T* wm, const T* w0, const T* wp,
                                                       const T* wpp, T c0, T* out)
    {
        const T rs = fmin(fmin(wm[0], w0[0]), wp[0]);
        const T ps = fmin(fmin(wm[2], w0[2]), wp[2]);
        out[0] = face_value(wm[0], w0[0], wp[0], wpp[0], rs, true);
        out[1] = face_value(wm[1], w0[1], wp[1], wpp[1], c0, false);
        out[2] = face_value(wm[2], w0[2], wp[2], wpp[2], ps, true);
    }
    // F_K + S_K (U*_K - U_K) for the side K with wave speed S, m = rho_K (S_K - u_K)
    __device__ __forceinline__ static void star_flux(const T* f, T S, T Sm, T m, T r, T u, T p,
                                                     T E, T* out)
    {
        const T d = m / (S - Sm);
        out[0] = f[0] + S * (d - r);
        out[1] = f[1] + S * (d * Sm - r * u);
        out[2] = f[2] + S * (d * (E / r + (Sm - u) * (Sm + p / m)) - E);
    }
    // HLLC between the primitive states wl, wr = (rho, u, P) (Toro §10.4.2)
    __device__ __forceinline__ void hllc(const T* wl, const T* wr, T* f) const
    {
        const T rL = wl[0], uL = wl[1], pL = wl[2];
        const T rR = wr[0], uR = wr[1], pR = wr[2];
        const T gm = gamma - T(1);
        const T EL = pL / gm + T(0.5) * rL * uL * uL;
        const T ER = pR / gm + T(0.5) * rR * uR * uR;
        const T cL = sqrt(gamma * pL / rL);
        const T cR = sqrt(gamma * pR / rR);
        const T sL = sqrt(rL), sR = sqrt(rR);
        const T w = T(1) / (sL + sR);
        const T ut = (sL * uL + sR * uR) * w;
        const T Ht = (sL * ((EL + pL) / rL) + sR * ((ER + pR) / rR)) * w;
        const T ct = sqrt(gm * (Ht - T(0.5) * ut * ut));
        const T SL = fmin(uL - cL, ut - ct);
        const T SR = fmax(uR + cR, ut + ct);
        const T FL[3] = {rL * uL, rL * uL * uL + pL, uL * (EL + pL)};
        const T FR[3] = {rR * uR, rR * uR * uR + pR, uR * (ER + pR)};
        if (SL >= T(0)) {
#pragma unroll
            for (int c = 0; c < 3; ++c) f[c] = FL[c];
        } else if (SR <= T(0)) {
#pragma unroll
            for (int c = 0; c < 3; ++c) f[c] = FR[c];
        } else {
            const T mL = rL * (SL - uL);
            const T mR = rR * (SR - uR);
            const T Sm = (pR - pL + mL * uL - mR * uR) / (mL - mR);
            if (Sm >= T(0)) star_flux(FL, SL, Sm, mL, rL, uL, pL, EL, f);
            else            star_flux(FR, SR, Sm, mR, rR, uR, pR, ER, f);
        }
    }
    template <class A>
    __device__ __forceinline__ void tier(int par, const A& a, const T* b, T* out) const
    {
        T q[5][3], W[5][3];
#pragma unroll
        for (int k = 0; k < 5; ++k) {
#pragma unroll
            for (int c = 0; c < 3; ++c) q[k][c] = a(c, k - 2);
            W[k][0] = q[k][0];
            W[k][1] = q[k][1] / q[k][0];
            W[k][2] = (gamma - T(1)) * (q[k][2] - T(0.5) * q[k][1] * q[k][1] / q[k][0]);
        }
        T cs[5];  // sound speeds of cells i-1, i, i+1 (the scale of u)
#pragma unroll
        for (int k = 1; k < 4; ++k) cs[k] = sqrt(gamma * W[k][2] / W[k][0]);
        T wl[3], wr[3], fm[3], fp[3];
        reconstruct(W[0], W[1], W[2], W[3], cs[1], wl);  // interface i - 1/2
        reconstruct(W[3], W[2], W[1], W[0], cs[2], wr);
        hllc(wl, wr, fm);
        reconstruct(W[1], W[2], W[3], W[4], cs[2], wl);  // interface i + 1/2
        reconstruct(W[4], W[3], W[2], W[1], cs[3], wr);
        hllc(wl, wr, fp);
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            const T q1 = q[2][c] - lam * (fp[c] - fm[c]);
            out[c] = par ? q1 : T(0.5) * (b[c] + q1);
        }
    }
};

#define MUSCL_ARGS T lam, T gamma, int periodic, T gl0, T gl1, T gl2, T gr0, T gr1, T gr2
#define MUSCL_OP MusclOp<T>{lam, gamma, periodic, {gl0, gl1, gl2}, {gr0, gr1, gr2}}

SWEPT_KERNELS(muscl, MUSCL_ARGS, MUSCL_OP)
