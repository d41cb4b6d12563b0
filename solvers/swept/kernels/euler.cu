// euler-1d ([P3] Appendix D; docs/MODELS.md §4): Sod's tube, second-order finite volumes with the
// pressure-ratio limiter, Rusanov flux at the Roe average, midpoint RK2 as two tiers (predictor
// par = 1, final par = 0), Dirichlet ghost cells or periodic ends. Classic and swept kernels
// (swept.cuh). This is scheme=paper; scheme=muscl-hllc (the default) is muscl.cu.
// State [comp][cell], comp = rho, rho u, E. Per cell and tier: 15 loads (12 from cache), 3 stores,
// 5 pressures, 2 interface fluxes (each ~60 flops, 3 sqrt, 8 divisions): compute-bound in float64.
#include "swept.cuh"

template <typename T>
struct EulerOp {
    static constexpr int R = 2, NV = 3;
    T lam, gamma;     // Δt/Δx, γ
    int periodic;     // 1: periodic ends, 0: Dirichlet
    T gl[3], gr[3];   // ghost states beyond the left and right ends (Dirichlet)

    // Periodic as in ks.cu (in global memory, wrap = n, step over the end; a shared window is
    // contiguous, wrap = 0); Dirichlet: the ghost state.
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
    __device__ __forceinline__ T pressure(const T* q) const
    {
        return (gamma - T(1)) * (q[2] - T(0.5) * q[1] * q[1] / q[0]);
    }
    // min(r, 1) for r = num/den when 0 < r < inf, else 0 (eqs. (16)-(17))
    __device__ __forceinline__ static T limited(T num, T den)
    {
        const T r = num / den;
        return (isfinite(r) && r > T(0)) ? fmin(r, T(1)) : T(0);
    }
    // ½ (F(QR) + F(QL) + r_sp (QL - QR)), r_sp at the Roe average (eqs. (18)-(20))
    __device__ __forceinline__ void rusanov_roe(const T* QL, const T* QR, T* f) const
    {
        const T rL = QL[0], rR = QR[0];
        const T uL = QL[1] / rL, uR = QR[1] / rR;
        const T PL = pressure(QL), PR = pressure(QR);
        const T sL = sqrt(rL), sR = sqrt(rR);
        const T w = T(1) / (sL + sR);
        const T rho_sp = sL * sR;
        const T u_sp = (sL * uL + sR * uR) * w;
        const T e_sp = (sL * (QL[2] / rL) + sR * (QR[2] / rR)) * w;
        const T P_sp = (gamma - T(1)) * (rho_sp * e_sp - T(0.5) * rho_sp * u_sp * u_sp);
        const T r_sp = sqrt(gamma * P_sp / rho_sp) + fabs(u_sp);
        const T FL[3] = {QL[1], QL[1] * uL + PL, uL * (QL[2] + PL)};
        const T FR[3] = {QR[1], QR[1] * uR + PR, uR * (QR[2] + PR)};
#pragma unroll
        for (int c = 0; c < 3; ++c) f[c] = T(0.5) * (FR[c] + FL[c] + r_sp * (QL[c] - QR[c]));
    }
    // flux at the interface between q0 and qp, from cells i-1 .. i+2 (eq. (15))
    __device__ __forceinline__ void interface_flux(const T* qm, const T* q0, const T* qp,
                                                   const T* qpp, T Pm, T P0, T Pp, T Ppp,
                                                   T* f) const
    {
        const T phl = limited(Pp - P0, P0 - Pm);   // P_r,i
        const T phr = limited(Pp - P0, Ppp - Pp);  // 1 / P_r,i+1
        T QL[3], QR[3];
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            QL[c] = q0[c] + T(0.5) * phl * (qp[c] - q0[c]);
            QR[c] = qp[c] + T(0.5) * phr * (q0[c] - qp[c]);
        }
        rusanov_roe(QL, QR, f);
    }
    template <class A>
    __device__ __forceinline__ void tier(int par, const A& a, const T* b, T* out) const
    {
        T q[5][3], P[5];
#pragma unroll
        for (int k = 0; k < 5; ++k) {
#pragma unroll
            for (int c = 0; c < 3; ++c) q[k][c] = a(c, k - 2);
            P[k] = pressure(q[k]);
        }
        T fm[3], fp[3];
        interface_flux(q[0], q[1], q[2], q[3], P[0], P[1], P[2], P[3], fm);  // i - 1/2
        interface_flux(q[1], q[2], q[3], q[4], P[1], P[2], P[3], P[4], fp);  // i + 1/2
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            const T dF = fp[c] - fm[c];
            out[c] = par ? q[2][c] - (lam / T(2)) * dF : b[c] - lam * dF;
        }
    }
};

#define EULER_ARGS T lam, T gamma, int periodic, T gl0, T gl1, T gl2, T gr0, T gr1, T gr2
#define EULER_OP EulerOp<T>{lam, gamma, periodic, {gl0, gl1, gl2}, {gr0, gr1, gr2}}

SWEPT_KERNELS(euler, EULER_ARGS, EULER_OP)
