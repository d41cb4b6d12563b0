// heat-1d ([P3] Appendix B; docs/MODELS.md §4): T_i' = Fo (T_{i+1} + T_{i-1}) + (1 - 2 Fo) T_i,
// insulated ends T_{-1} = T_1, T_n = T_{n-2}. Classic and swept kernels (swept.cuh).
// Per node and step: 3 loads (2 from cache), 1 store, 3 flops.
#include "swept.cuh"

template <typename T>
struct HeatOp {
    static constexpr int R = 1, NV = 1;
    T fo;
    // Mirror at the insulated ends: node j < 0 reads node -j, node j > n-1 reads 2(n-1) - j.
    __device__ __forceinline__ T fetch(const T* p, int stride, int c, int r, int g, int n,
                                       int wrap) const
    {
        const int j = g + r;
        if (j < 0) r = -2 * g - r;
        else if (j >= n) r = 2 * (n - 1 - g) - r;
        return p[c * stride + r];
    }
    template <class A>
    __device__ __forceinline__ void tier(int, const A& a, const T*, T* out) const
    {
        out[0] = fo * (a(0, -1) + a(0, 1)) + (T(1) - T(2) * fo) * a(0, 0);
    }
};

template <typename T>
__global__ void heat_classic(const T* __restrict__ A, const T* B, T* out, int n, int par, T fo)
{
    classic_tier(HeatOp<T>{fo}, A, B, out, n, par);
}

template <typename T>
__global__ void heat_up(const T* __restrict__ u, T* __restrict__ E, int n, T fo)
{
    swept_up(HeatOp<T>{fo}, u, E, n);
}

template <typename T>
__global__ void heat_diamond(const T* __restrict__ Ein, T* __restrict__ Eout, int n, int shift,
                             T fo)
{
    swept_diamond(HeatOp<T>{fo}, Ein, Eout, n, shift);
}

template <typename T>
__global__ void heat_down(const T* __restrict__ Ein, T* __restrict__ u, int n, int shift, T fo)
{
    swept_down(HeatOp<T>{fo}, Ein, u, n, shift);
}
