// integrator=imex of chemotaxis (scheme=positive) on a lattice mesh, on the GPU
// (solvers/surface_rd/lattice_imex.py; the float64 reference is solvers/surface_rd/imex.py's
// ChemotaxisImex): one semi-implicit Euler step is
//
//   cxi_rates   per vertex, over its one-ring (the padded tables of positive.cu, half cotangent
//               weights h): the upwind (D → 0) cell flux −∇·(α n ∇c) and the logistic term
//               (imex.upwind_rates), the loss rate λ_i, and max λ reduced into *lam_cur
//   cxi_pack    δt = min(dt_user, THETA/max λ) clamped by the device clock (core's clock.cuh;
//               0 once landed), stored in *step for lat_rec_clk; the right-hand sides
//               n + δt·dn/dt and c + δt·s(n/(1 + n) − c) written to the even extension of the
//               cosine transform (lattice_tile.cuh); clears the other λ slot
//   cuFFT, lat_rec_clk (δ = δt·D for n, δt for c), inverse cuFFT   (solvers/mesh/kernels)
//   cxi_finish  the solves' values written over n and c (left alone where δt = 0: a landed
//               run's extra steps change nothing)
//
// so six launches a step, nothing on the host between them: CUDA graphs of whole steps replay
// from any clock. Lattice node k = j·nx + i is vertex order[k].
#include "clock.cuh"
#include "real.cuh"
#include "reduce.cuh"
#include "lattice_solve.cu"
#include "lattice_tile.cuh"

template <typename T>
__global__ void cxi_rates(const T* __restrict__ fn, const T* __restrict__ fc,
                          T* __restrict__ rate_n, const int* __restrict__ deg,
                          const int* __restrict__ nbr, const T* __restrict__ hw,
                          const T* __restrict__ area, const int n, const int P, const T alpha,
                          const T sr, const T Ncap, T* __restrict__ lam_slot)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    T lam = T(0);
    if (i < n) {
        const T ni = fn[i], ci = fc[i];
        const int d = deg[i];
        T flux = 0, loss = 0;
        for (int k = 0; k < d; ++k) {
            const size_t o = (size_t)k * P + i;
            const int j = nbr[o];
            const T h = hw[o], nj = fn[j];
            const T dc = fc[j] - ci;
            const T bq = fabs(dc) * alpha;
            const bool up = dc >= T(0);  // the chemotactic velocity points from i to j
            const T kj = up ? T(0) : bq, ki = up ? bq : T(0);
            T f = h * (kj * nj - ki * ni);
            T l = h * ki;
            if (h < T(0)) {
                const T mu = fabs(h) * bq;
                f = fmin(fmax(f, -mu * ni), mu * nj);
                l = mu;
            }
            flux += f;
            loss += l;
        }
        const T a = area[i];
        rate_n[i] = flux / a + sr * ni * (Ncap - ni);
        lam = loss / a + sr * fmax(ni - Ncap, T(0)) + T(0);  // + 0: never -0
        if (!(lam == lam)) lam = real_inf<T>();
    }
    block_max_into(lam, lam_slot);
}

// blocks of 32 × 8 threads, a tile of 32 × 32 nodes each
template <typename T>
__global__ void __launch_bounds__(256)
cxi_pack(const long long* __restrict__ order, const int nx, const int ny, const int axis_y,
         const T* __restrict__ fn, const T* __restrict__ fc, const T* __restrict__ rate_n,
         const T s, T* __restrict__ ext, const T* __restrict__ lam_cur, T* __restrict__ lam_next,
         const double* __restrict__ clk_in, double* __restrict__ clk_out,
         double* __restrict__ hist, double* __restrict__ step, const double dt_user,
         const double theta, const double limit)
{
    __shared__ T tile[2][LAT_TILE][LAT_TILE + 1];
    const bool writer = blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0;
    const double lam = (double)*lam_cur;
    const double dt = lam > 0.0 ? fmin(dt_user, theta / lam) : (lam == 0.0 ? dt_user : 0.0);
    const double d = clock_take(fmin(dt, limit), clk_in, clk_out, hist, writer);
    if (writer) {
        *lam_next = T(0);
        *step = d;
    }
    const T dT = (T)d;
    const int i0 = blockIdx.x * LAT_TILE, j0 = blockIdx.y * LAT_TILE, tx = threadIdx.x;
    for (int r = threadIdx.y; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + tx, j = j0 + r;
        if (i >= nx || j >= ny) continue;
        const long long v = order[(long long)j * nx + i];
        const T nv = fn[v], cv = fc[v];
        tile[0][r][tx] = nv + dT * rate_n[v];
        tile[1][r][tx] = cv + dT * (s * (nv / (T(1) + nv) - cv));
    }
    __syncthreads();
    lat_tile_io<T>(true, ext, nx, ny, 2, axis_y != 0, i0, j0, tile);
}

template <typename T>
__global__ void __launch_bounds__(256)
cxi_finish(const long long* __restrict__ order, const int nx, const int ny, const int axis_y,
           const T* __restrict__ ext, T* __restrict__ fn, T* __restrict__ fc,
           const double* __restrict__ step)
{
    __shared__ T tile[2][LAT_TILE][LAT_TILE + 1];
    if (!(*step > 0.0)) return;  // (the whole grid alike: no barrier is skipped by a part)
    const int i0 = blockIdx.x * LAT_TILE, j0 = blockIdx.y * LAT_TILE, tx = threadIdx.x;
    lat_tile_io<T>(false, const_cast<T*>(ext), nx, ny, 2, axis_y != 0, i0, j0, tile);
    __syncthreads();
    for (int r = threadIdx.y; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + tx, j = j0 + r;
        if (i >= nx || j >= ny) continue;
        const long long v = order[(long long)j * nx + i];
        fn[v] = tile[0][r][tx];
        fc[v] = tile[1][r][tx];
    }
}
