// The positive chemotaxis scheme (scheme=positive; solvers/surface_rd/reference.py holds the
// float64 reference and the derivation): two launches per explicit Euler step, one thread per
// vertex, on the padded one-ring tables of the production kernel (column-major, padded to a
// warp).
//
//   cx_rates   per vertex i, over its one-ring: the Scharfetter-Gummel cell flux across the dual
//              edge of ij, F = h D (B(P) n_j - B(-P) n_i), P = alpha (c_j - c_i)/D,
//              B(x) = x/(e^x - 1) (capped at mu n_donor, mu = |h| D B(-|P|), where h < 0), the
//              Laplacian of c, and the
//              loss rate lambda_i; writes the rates dn/dt, dc/dt and reduces max_i lambda_i into
//              *lam_slot (block maximum, then one atomicMax on the bit pattern: lambda >= +0, so
//              the bits order like the values; a NaN lambda counts as +inf).
//              Vertex j computes the same edge with (i, j) swapped; every operation is written so
//              that its flux is bit for bit the negated one of vertex i (exact sign symmetry of
//              subtraction and products, the coefficient pair taken from |P| alone, products
//              rounded on their own with __*mul_rn so that no FMA contraction breaks the symmetry),
//              so sum_i A_i dn_i/dt is the logistic term alone up to the rounding of the sums.
//   cx_update  dt = min(dt_user, theta / max lambda) (NaN lambda -> dt = 0, reported by the host
//              as a non-finite step), clamped to `limit`, then taken with the device-clock
//              protocol of core's clock.cuh (clamped to t_end, 0 once landed); every thread
//              computes the same dt from the same inputs; thread 0 writes the clock and the step
//              and clears the other lambda slot for the next step. Then n += dt dn/dt,
//              c += dt dc/dt in place (purely per vertex).
#include "clock.cuh"
#include "real.cuh"
#include "reduce.cuh"

// The per-vertex part of cx_rates: the rates of vertex i and its loss rate lambda_i (0 for i >= n).
template <typename T>
__device__ __forceinline__ T cx_vertex(const T* __restrict__ fn, const T* __restrict__ fc,
                                       T* __restrict__ rate_n, T* __restrict__ rate_c,
                                       const int* __restrict__ deg, const int* __restrict__ nbr,
                                       const T* __restrict__ hw, const T* __restrict__ area,
                                       const int i, const int n, const int P, const T D,
                                       const T alpha, const T sr, const T Ncap, const T s)
{
    T lam = T(0);
    if (i < n) {
        const T ni = fn[i], ci = fc[i];
        const T aD = alpha / D;
        const int d = deg[i];
        T flux = 0, lapc = 0, loss = 0;
        for (int k = 0; k < d; ++k) {
            const size_t o = (size_t)k * P + i;
            const int j = nbr[o];
            const T h = hw[o], nj = fn[j], cj = fc[j];
            const T dc = cj - ci;
            const T q = Fx<T>::mul(fabs(dc), aD);
            const T b = q > T(0) ? q / Fx<T>::expm1(q) : T(1);  // B(|P|)
            const T bq = b + q;                                  // B(-|P|)
            const bool up = dc >= T(0);
            const T kj = up ? b : bq, ki = up ? bq : b;          // B(P), B(-P)
            const T hD = Fx<T>::mul(h, D);
            T f = Fx<T>::mul(hD, Fx<T>::mul(kj, nj) - Fx<T>::mul(ki, ni));
            T l = Fx<T>::mul(hD, ki);
            if (h < T(0)) {
                const T mu = Fx<T>::mul(fabs(hD), bq);
                f = fmin(fmax(f, -Fx<T>::mul(mu, ni)), Fx<T>::mul(mu, nj));
                l = mu;
            }
            flux += f;
            lapc += Fx<T>::mul(h, dc);
            loss += l;
        }
        const T a = area[i];
        rate_n[i] = flux / a + sr * ni * (Ncap - ni);
        rate_c[i] = lapc / a + s * (ni / (T(1) + ni) - ci);
        lam = loss / a + sr * fmax(ni - Ncap, T(0)) + T(0);  // + 0: never -0
        if (!(lam == lam)) lam = real_inf<T>();
    }
    return lam;
}

template <typename T>
__global__ void cx_rates(const T* __restrict__ fn, const T* __restrict__ fc,
                         T* __restrict__ rate_n, T* __restrict__ rate_c,
                         const int* __restrict__ deg, const int* __restrict__ nbr,
                         const T* __restrict__ hw, const T* __restrict__ area, const int n,
                         const int P, const T D, const T alpha, const T sr, const T Ncap,
                         const T s, T* __restrict__ lam_slot)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T lam = cx_vertex(fn, fc, rate_n, rate_c, deg, nbr, hw, area, i, n, P, D, alpha, sr,
                            Ncap, s);
    block_max_into(lam, lam_slot);
}

// Ensembles (solvers/surface_rd/ensemble.py): member m = blockIdx.y owns rows m of the (E, n)
// arrays, its parameters par[5m..5m+4] = (D, alpha, s r, N, s) and its lambda slots lam[2m..2m+1].
template <typename T>
__global__ void cx_rates_batch(const T* __restrict__ fn, const T* __restrict__ fc,
                               T* __restrict__ rate_n, T* __restrict__ rate_c,
                               const int* __restrict__ deg, const int* __restrict__ nbr,
                               const T* __restrict__ hw, const T* __restrict__ area, const int n,
                               const int P, const T* __restrict__ par, T* __restrict__ lam,
                               const int cur, const unsigned char* __restrict__ active)
{
    const int m = blockIdx.y;
    if (!active[m]) return;  // the whole block: no thread reaches the barrier
    const size_t off = (size_t)m * n;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const T* p = par + 5 * m;
    const T l = cx_vertex(fn + off, fc + off, rate_n + off, rate_c + off, deg, nbr, hw, area, i,
                          n, P, p[0], p[1], p[2], p[3], p[4]);
    block_max_into(l, lam + 2 * m + cur);
}

template <typename T>
__device__ __forceinline__ void cx_step(T* __restrict__ fn, T* __restrict__ fc,
                                        const T* __restrict__ rate_n,
                                        const T* __restrict__ rate_c, const int n, const int i,
                                        const T* __restrict__ lam_cur, T* __restrict__ lam_next,
                                        const double* __restrict__ clk_in,
                                        double* __restrict__ clk_out, double* __restrict__ hist,
                                        const double dt_user, const double theta,
                                        const double limit, const bool first)
{
    const double lam = (double)*lam_cur;
    double dt = lam > 0.0 ? fmin(dt_user, theta / lam) : (lam == 0.0 ? dt_user : 0.0);
    const double d = clock_take(fmin(dt, limit), clk_in, clk_out, hist, first);
    if (first) *lam_next = T(0);
    if (i < n && d > 0.0) {
        const T dtT = (T)d;
        fn[i] = fn[i] + dtT * rate_n[i];
        fc[i] = fc[i] + dtT * rate_c[i];
    }
}

// One step of a solo run: clk_in, clk_out, hist of core's DeviceClock.args(k).
template <typename T>
__global__ void cx_update(T* __restrict__ fn, T* __restrict__ fc, const T* __restrict__ rate_n,
                          const T* __restrict__ rate_c, const int n,
                          const T* __restrict__ lam_cur, T* __restrict__ lam_next,
                          const double* __restrict__ clk_in, double* __restrict__ clk_out,
                          double* __restrict__ hist, const double dt_user,
                          const double theta, const double limit)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    cx_step(fn, fc, rate_n, rate_c, n, i, lam_cur, lam_next, clk_in, clk_out, hist, dt_user,
            theta, limit, i == 0);
}

// Ensembles: member m's clock records CLOCK_RECORD(clk, m, parity) (core's DeviceClock with
// members), its steps in hist[m * stride ...], its own dt_user[m]; inactive members (diverged)
// are left alone.
template <typename T>
__global__ void cx_update_batch(T* __restrict__ fn, T* __restrict__ fc,
                                const T* __restrict__ rate_n, const T* __restrict__ rate_c,
                                const int n, T* __restrict__ lam, const int cur,
                                double* __restrict__ clk, double* __restrict__ hist,
                                const int stride, const int parity,
                                const double* __restrict__ dt_user, const double theta,
                                const double limit, const unsigned char* __restrict__ active)
{
    const int m = blockIdx.y;
    if (!active[m]) return;
    const size_t off = (size_t)m * n;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    cx_step(fn + off, fc + off, rate_n + off, rate_c + off, n, i, lam + 2 * m + cur,
            lam + 2 * m + (1 - cur), CLOCK_RECORD(clk, m, parity),
            CLOCK_RECORD(clk, m, 1 - parity), hist + (size_t)m * stride, dt_user[m], theta,
            limit, i == 0);
}
