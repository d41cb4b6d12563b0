// ks-1d ([P3] Appendix C; docs/MODELS.md §4): u_t = -(u u_x + u_xx + u_xxxx), periodic,
// 5-point central differences, midpoint RK2 as two tiers (predictor par = 1, final par = 0).
// Classic and swept kernels (swept.cuh). Per node and tier: 5 loads (4 from cache), 1 store,
// ~16 flops.
#include "swept.cuh"

template <typename T>
struct KSOp {
    static constexpr int R = 2, NV = 1;
    T dt, c1, c2, c4;  // Δt, 1/(4Δx), 1/Δx², 1/Δx⁴
    // Periodic: in global memory (wrap = n) step over the end; a shared window is contiguous.
    __device__ __forceinline__ T fetch(const T* p, int stride, int c, int r, int g, int n,
                                       int wrap) const
    {
        const int j = g + r;
        if (j < 0) r += wrap;
        else if (j >= n) r -= wrap;
        return p[c * stride + r];
    }
    template <class A>
    __device__ __forceinline__ T rhs(const A& a) const
    {
        const T um2 = a(0, -2), um = a(0, -1), u0 = a(0, 0), up = a(0, 1), up2 = a(0, 2);
        return -((up * up - um * um) * c1
                 + (up - T(2) * u0 + um) * c2
                 + (up2 - T(4) * up + T(6) * u0 - T(4) * um + um2) * c4);
    }
    template <class A>
    __device__ __forceinline__ void tier(int par, const A& a, const T* b, T* out) const
    {
        if (par) out[0] = a(0, 0) + (dt / T(2)) * rhs(a);
        else     out[0] = b[0] + dt * rhs(a);
    }
};

#define KS_ARGS T dt, T c1, T c2, T c4
#define KS_OP KSOp<T>{dt, c1, c2, c4}

SWEPT_KERNELS(ks, KS_ARGS, KS_OP)
