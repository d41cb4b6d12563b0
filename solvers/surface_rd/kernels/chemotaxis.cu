// Chemotaxis and Gray-Scott on triangulated surfaces ([P1] eq. (1), docs/MODELS.md §2): the kernels
// the fused scheme launches (solvers/surface_rd/fused.py), one thread per vertex, one launch per
// explicit Euler step, templated on the real type T. The other rungs of the paper's optimisation
// ladder (Fig. 11) are in benchmarks/surface_rd/kernels/ladder.cu.
//
//   rd_step_vec     chemotaxis: the vertex gradient is a linear one-ring stencil (G = W F), so
//                   Laplacian and gradient coefficients are precomputed per (vertex, neighbour)
//                   in column-major tables padded to a warp (entry k of all vertices is
//                   contiguous, so a warp's loads coalesce), the four coefficients of a slot as
//                   one vector load (float4 or 2 x double2; the paper's "vector types")
//   gs_step_padded  Gray-Scott: the same padded tables, Laplacian coefficients only
//   *_batch         the same updates for an ensemble of members on one mesh, one launch
#include "chemotaxis.cuh"

template <typename T> struct Vec4;
template <> struct Vec4<float> {
    static __device__ __forceinline__ void load(const float* p, size_t o, float& a, float& b,
                                                float& c, float& d)
    {
        const float4 q = __ldg(reinterpret_cast<const float4*>(p) + o);
        a = q.x; b = q.y; c = q.z; d = q.w;
    }
};
template <> struct Vec4<double> {
    static __device__ __forceinline__ void load(const double* p, size_t o, double& a, double& b,
                                                double& c, double& d)
    {
        const double2 q0 = __ldg(reinterpret_cast<const double2*>(p) + 2 * o);
        const double2 q1 = __ldg(reinterpret_cast<const double2*>(p) + 2 * o + 1);
        a = q0.x; b = q0.y; c = q1.x; d = q1.y;
    }
};

// column-major padded with interleaved coefficients: coef[4*(k*P + i) + q]
template <typename T>
__device__ __forceinline__ void rd_vertex(const T* __restrict__ fn, const T* __restrict__ fc,
                                          T* __restrict__ n_out, T* __restrict__ c_out,
                                          const int* __restrict__ deg,
                                          const int* __restrict__ nbr, const T* __restrict__ coef,
                                          const int i, const int P, const T D, const T alpha,
                                          const T sr, const T Ncap, const T s, const T dt)
{
    const T ni = fn[i], ci = fc[i];
    const int d = deg[i];
    Ring<T> r;
    for (int k = 0; k < d; ++k) {
        const size_t o = (size_t)k * P + i;
        const int j = nbr[o];
        T l, gx, gy, gz;
        Vec4<T>::load(coef, o, l, gx, gy, gz);
        r.add(fn[j] - ni, fc[j] - ci, l, gx, gy, gz);
    }
    rd_finish(r, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}

template <typename T>
__global__ void rd_step_vec(const T* __restrict__ fn, const T* __restrict__ fc,
                            T* __restrict__ n_out, T* __restrict__ c_out,
                            const int* __restrict__ deg, const int* __restrict__ nbr,
                            const T* __restrict__ coef, const int n, const int P,
                            const T D, const T alpha, const T sr, const T Ncap, const T s,
                            const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    rd_vertex(fn, fc, n_out, c_out, deg, nbr, coef, i, P, D, alpha, sr, Ncap, s, dt);
}

// An ensemble of E members on one mesh (solvers/surface_rd/ensemble.py): member m = blockIdx.y
// owns rows m of the (E, n) state arrays, its parameters par[5m..5m+4] = (D, alpha, s r, N, s)
// and its step dts[m] (0: the member has landed or stopped, its row is copied unchanged). The
// vertex update is the solo kernel's own device function, so each member is bit for bit its
// solo run.
template <typename T>
__global__ void rd_step_batch(const T* __restrict__ fn, const T* __restrict__ fc,
                              T* __restrict__ n_out, T* __restrict__ c_out,
                              const int* __restrict__ deg, const int* __restrict__ nbr,
                              const T* __restrict__ coef, const int n, const int P,
                              const T* __restrict__ par, const T* __restrict__ dts)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int m = blockIdx.y;
    const size_t off = (size_t)m * n;
    const T dt = dts[m];
    if (dt == T(0)) {
        n_out[off + i] = fn[off + i];
        c_out[off + i] = fc[off + i];
        return;
    }
    const T* p = par + 5 * m;
    rd_vertex(fn + off, fc + off, n_out + off, c_out + off, deg, nbr, coef, i, P, p[0], p[1],
              p[2], p[3], p[4], dt);
}

// ---------------------------------------------------------------- Gray-Scott (Laplacian only)
//   du/dt = Du Lap u - u v^2 + F (1 - u),   dv/dt = Dv Lap v + u v^2 - (F + k) v
template <typename T>
__device__ __forceinline__ void gs_vertex(const T* __restrict__ fu, const T* __restrict__ fv,
                                          T* __restrict__ u_out, T* __restrict__ v_out,
                                          const int* __restrict__ deg,
                                          const int* __restrict__ nbr, const T* __restrict__ lap,
                                          const int i, const int P, const T Du, const T Dv,
                                          const T F, const T kk, const T dt)
{
    const T ui = fu[i], vi = fv[i];
    const int d = deg[i];
    T lu = 0, lv = 0;
    for (int k = 0; k < d; ++k) {
        const size_t o = (size_t)k * P + i;
        const int j = nbr[o];
        const T w = lap[o];
        lu += w * (fu[j] - ui);
        lv += w * (fv[j] - vi);
    }
    const T uvv = ui * vi * vi;
    u_out[i] = ui + dt * (Du * lu - uvv + F * (T(1) - ui));
    v_out[i] = vi + dt * (Dv * lv + uvv - (F + kk) * vi);
}

template <typename T>
__global__ void gs_step_padded(const T* __restrict__ fu, const T* __restrict__ fv,
                               T* __restrict__ u_out, T* __restrict__ v_out,
                               const int* __restrict__ deg, const int* __restrict__ nbr,
                               const T* __restrict__ lap, const int n, const int P,
                               const T Du, const T Dv, const T F, const T kk, const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    gs_vertex(fu, fv, u_out, v_out, deg, nbr, lap, i, P, Du, Dv, F, kk, dt);
}

// The ensemble form (see rd_step_batch): par[4m..4m+3] = (Du, Dv, F, k) of member m.
template <typename T>
__global__ void gs_step_batch(const T* __restrict__ fu, const T* __restrict__ fv,
                              T* __restrict__ u_out, T* __restrict__ v_out,
                              const int* __restrict__ deg, const int* __restrict__ nbr,
                              const T* __restrict__ lap, const int n, const int P,
                              const T* __restrict__ par, const T* __restrict__ dts)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int m = blockIdx.y;
    const size_t off = (size_t)m * n;
    const T dt = dts[m];
    if (dt == T(0)) {
        u_out[off + i] = fu[off + i];
        v_out[off + i] = fv[off + i];
        return;
    }
    const T* p = par + 4 * m;
    gs_vertex(fu + off, fv + off, u_out + off, v_out + off, deg, nbr, lap, i, P, p[0], p[1],
              p[2], p[3], dt);
}
