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

#define HEAT_ARGS T fo
#define HEAT_OP HeatOp<T>{fo}
SWEPT_KERNELS(heat, HEAT_ARGS, HEAT_OP)
