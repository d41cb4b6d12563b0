// The fused kernels of model files (docs/EQUATIONS.md). solvers/equations/codegen.py writes the
// model's part (eq_stage, eq_rates and the boundary values) from its expression trees in place
// of the marker at the end; fused.py compiles the result once per (tree, dtype) through
// core/backend.py's load_kernels. The helpers here are the same for every model:
//   ipow<N>(a)   a^N by repeated products (N = 1..8), as the reference's u**2 is u*u
//   sgn(a)       the sign function
//   sg_edge      one edge of the positive (Scharfetter-Gummel) flux of div(D grad n - alpha n
//                grad v) on the cotangent dual, as ops.MeshOps.positive and chemotaxis'
//                positive scheme (solvers/surface_rd/kernels/positive.cu): the gain of vertex i
//                from the edge ij and i's loss coefficient
//   lam_max      the block's maximum of lambda >= 0 into *slot (warp shuffles, then one
//                atomicMax on the bit pattern: non-negative reals order like their bits)
//   EQ_SHARED    the dynamic shared memory of eq_tile (the CPU builds define it as a buffer of
//                their own, as they define __syncthreads away: a "block" is one thread there)
#include "real.cuh"

#ifndef EQ_SHARED
#define EQ_SHARED(name) extern __shared__ __align__(16) unsigned char name[]
#endif

template <int N, typename T> __device__ __forceinline__ T ipow(const T a)
{
    T r = a;
    for (int k = 1; k < N; ++k) r *= a;
    return r;
}

template <typename T> __device__ __forceinline__ T sgn(const T a)
{
    return (a > T(0)) ? T(1) : ((a < T(0)) ? T(-1) : T(0));
}

template <typename T>
__device__ __forceinline__ void sg_edge(const T h, const T ni, const T nj, const T dv, const T D,
                                        const T alpha, T& flux, T& loss)
{
    T b, bq, hD;
    if (D > T(0)) {
        const T q = fabs(dv) * (fabs(alpha) / D);
        b = (q > T(0)) ? q / expm1(q) : T(1);
        bq = b + q;
        hD = h * D;
    } else {  // the limit D -> 0: the upwind flux
        b = T(0);
        bq = fabs(dv) * fabs(alpha);
        hD = h;
    }
    const bool up = (alpha >= T(0)) ? (dv >= T(0)) : (dv <= T(0));
    const T kj = up ? b : bq, ki = up ? bq : b;
    T f = hD * (kj * nj - ki * ni);
    const T mu = fabs(hD) * bq;
    if (h < T(0)) {
        f = fmin(fmax(f, -mu * ni), mu * nj);
        loss += mu;
    } else {
        loss += hD * ki;
    }
    flux += f;
}

__device__ __forceinline__ void atomic_max_bits(float* slot, float v)
{
    atomicMax(reinterpret_cast<int*>(slot), __float_as_int(v));
}
__device__ __forceinline__ void atomic_max_bits(double* slot, double v)
{
    atomicMax(reinterpret_cast<long long*>(slot), __double_as_longlong(v));
}

template <typename T> __device__ __forceinline__ void lam_max(T* slot, T v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) atomic_max_bits(slot, v);
}

// @GENERATED@
