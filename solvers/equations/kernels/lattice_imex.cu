// The IMEX step of a model file on a lattice mesh (solvers/equations/lattice_imex.py,
// docs/EQUATIONS.md "IMEX"): the implicit solves (I − δ·L) x = b with L the 5-point Laplacian
// with mirrored ends, by a type-I cosine transform in x (the real FFT of the even extension,
// cuFFT between these kernels) and a tridiagonal solve in y per cosine mode (parallel cyclic
// reduction in shared memory, one block per two modes and a species).
//
// Layouts: vertex arrays in the mesh's order, lattice node k = j·nx + i at vertex order[k];
// the extension of species s: row s·ny + j, columns 0 … 2nx − 3 (contiguous rows, one batched
// cuFFT plan for every species and row); its spectrum row s·ny + j, modes 0 … nx − 1.

#define LAT_MAXT 8  // terms of a stage's right-hand side

template <typename real>
__device__ __forceinline__ real lat_pick(int s, real a, real b, real c, real d) {
    return s == 0 ? a : (s == 1 ? b : (s == 2 ? c : d));
}

// rhs_s = U_s + Σ_t c_t·T_{s,t} (t < nterms) at each vertex; written to rhs_s and to the even
// extension in x (columns i and 2nx − 2 − i). The terms' loop is unrolled (the pointers and
// values of every term in flight at once).
template <typename real>
__global__ void lat_pack(const long long* __restrict__ order, int nx, int ny, int nspecies,
                         const real* const* __restrict__ U, const real* const* __restrict__ T,
                         int nterms, real c0, real c1, real c2, real c3, real c4, real c5,
                         real c6, real c7, real* const* __restrict__ rhs,
                         real* __restrict__ ext) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    if (k >= nx * ny) return;
    const int i = k % nx, j = k / nx;
    const long long v = order[k];
    const real c[LAT_MAXT] = {c0, c1, c2, c3, c4, c5, c6, c7};
    const real* const* Ts = T + s * LAT_MAXT;
    real val = U[s][v];
#pragma unroll
    for (int t = 0; t < LAT_MAXT; ++t)
        if (t < nterms) val += c[t] * Ts[t][v];
    rhs[s][v] = val;
    const int Nx = 2 * nx - 2;
    real* row = ext + ((long long)s * ny + j) * Nx;
    row[i] = val;
    if (i > 0 && i < nx - 1) row[Nx - i] = val;
}

// per cosine modes m = 2·blockIdx.x, m + 1 and species s = blockIdx.y: the real parts of the
// spectrum's column m solved by (1 + δ_s λx_m) x − δ_s (x_{j−1} − 2x_j + x_{j+1})/hy² = d
// (mirrored ends) by parallel cyclic reduction, two systems a thread; written back as
// (scale·x, 0). blockDim.x ≥ ny, ny ≤ 1024.
template <typename real>
__global__ void lat_pcr(real* __restrict__ spec, int nx, int ny, int nspecies,
                        const real* __restrict__ lam_x, real inv_hy2, real d0, real d1,
                        real d2, real d3, real scale) {
    extern __shared__ unsigned char lat_smem[];
    real* sm = reinterpret_cast<real*>(lat_smem);
    const int j = threadIdx.x, s = blockIdx.y, m0 = 2 * blockIdx.x;
    const int nm = (m0 + 1 < nx) ? 2 : 1;
    const real delta = lat_pick<real>(s, d0, d1, d2, d3);
    const real off = -delta * inv_hy2;
    const bool on = j < ny;
    const long long at = (((long long)s * ny + j) * nx + m0) * 2;
    // per system q: a, b, c, d at sm[(4q + 0 … 3)·ny + j]
    real aj = 0, cj = 0;
    if (on) {
        aj = (j == 0) ? real(0) : (j == ny - 1 ? real(2) * off : off);
        cj = (j == ny - 1) ? real(0) : (j == 0 ? real(2) * off : off);
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        if (on && q < nm) {
            real* A = sm + 4 * q * ny;
            A[j] = aj;
            A[ny + j] = real(1) + delta * lam_x[m0 + q] - real(2) * off;
            A[2 * ny + j] = cj;
            A[3 * ny + j] = spec[at + 2 * q];
        }
    }
    __syncthreads();
    for (int st = 1; st < ny; st <<= 1) {
        real na[2], nb[2], nc[2], nd[2];
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            na[q] = 0; nb[q] = 1; nc[q] = 0; nd[q] = 0;
            if (on && q < nm) {
                const real* a = sm + 4 * q * ny;
                const real* b = a + ny;
                const real* c = b + ny;
                const real* d = c + ny;
                real bi = b[j], di = d[j];
                const real ai = a[j], ci = c[j];
                const int im = j - st, ip = j + st;
                if (im >= 0) {
                    const real k1 = ai / b[im];
                    na[q] = -a[im] * k1; bi -= c[im] * k1; di -= d[im] * k1;
                }
                if (ip < ny) {
                    const real k2 = ci / b[ip];
                    nc[q] = -c[ip] * k2; bi -= a[ip] * k2; di -= d[ip] * k2;
                }
                nb[q] = bi; nd[q] = di;
            }
        }
        __syncthreads();
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            if (on && q < nm) {
                real* A = sm + 4 * q * ny;
                A[j] = na[q]; A[ny + j] = nb[q]; A[2 * ny + j] = nc[q]; A[3 * ny + j] = nd[q];
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        if (on && q < nm) {
            const real* A = sm + 4 * q * ny;
            spec[at + 2 * q] = A[3 * ny + j] / A[ny + j] * scale;
            spec[at + 2 * q + 1] = real(0);
        }
    }
}

// Y_s = the inverse transform at each vertex; I_s = (Y_s − rhs_s)·inv_gdt (the implicit rate
// c·L Y of the stage, as the solve made it)
template <typename real>
__global__ void lat_finish(const long long* __restrict__ order, int nx, int ny, int nspecies,
                           const real* __restrict__ out, const real* const* __restrict__ rhs,
                           real* const* __restrict__ Y, real* const* __restrict__ I,
                           real inv_gdt) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    if (k >= nx * ny) return;
    const int i = k % nx, j = k / nx;
    const long long v = order[k];
    const real y = out[((long long)s * ny + j) * (2 * nx - 2) + i];
    const real r = rhs[s][v];
    Y[s][v] = y;
    I[s][v] = (y - r) * inv_gdt;
}

// I_s = c_s·L U_s, L the 5-point Laplacian with mirrored ends (the implicit rate at the step's
// first stage)
template <typename real>
__global__ void lat_lap(const long long* __restrict__ order, int nx, int ny,
                        const real* const* __restrict__ U, real* const* __restrict__ I,
                        real ihx2, real ihy2, real c0, real c1, real c2, real c3) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    if (k >= nx * ny) return;
    const int i = k % nx, j = k / nx;
    const int iw = i > 0 ? i - 1 : 1, ie = i < nx - 1 ? i + 1 : nx - 2;
    const int js = j > 0 ? j - 1 : 1, jn = j < ny - 1 ? j + 1 : ny - 2;
    const real* u = U[s];
    const real uc = u[order[k]];
    const real lx = (u[order[j * nx + iw]] - real(2) * uc + u[order[j * nx + ie]]) * ihx2;
    const real ly = (u[order[js * nx + i]] - real(2) * uc + u[order[jn * nx + i]]) * ihy2;
    I[s][order[k]] = lat_pick<real>(s, c0, c1, c2, c3) * (lx + ly);
}
