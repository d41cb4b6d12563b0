// The IMEX step of a model file on a lattice mesh (solvers/equations/lattice_imex.py,
// docs/EQUATIONS.md "IMEX"): the implicit solves (I − δ·L) x = b with L the 5-point Laplacian
// with mirrored ends, by a type-I cosine transform along one axis (the real FFT of the even
// extension, cuFFT between these kernels) and a tridiagonal solve along the other per cosine
// mode (two first-order recurrences, a block of 256 threads per two modes and a species).
//
// Layouts: vertex arrays in the mesh's order, lattice node k = j·nx + i at vertex order[k].
// Transform along x (lat_pack, lat_finish): the extension of species s is row s·ny + j,
// columns 0 … 2nx − 3 (contiguous rows, one batched cuFFT plan for every species and row), its
// spectrum row s·ny + j, modes 0 … nx − 1. Along y (lat_pack_t, lat_finish_t: the lattice
// transposed through shared memory tiles): row s·nx + i, columns 0 … 2ny − 3, spectrum row
// s·nx + i, modes 0 … ny − 1. lat_rec takes either (modes, rows) as (nx, ny).

#include "lattice_solve.cu"  // lat_pick, lat_rec (solvers/mesh/kernels)

#define LAT_MAXT 8  // terms of a stage's right-hand side

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

// The transform along y: the same as lat_pack and lat_finish with the lattice transposed through
// a shared tile of 32 × 32 nodes (blocks of 32 × 32 threads; grid (⌈nx/32⌉, ⌈ny/32⌉, S)), so that
// the vertex arrays (x fastest) and the extension's rows (y fastest) are both read and written
// a warp's 32 neighbouring words at a time.
#ifndef LAT_TILE
#define LAT_TILE 32
#endif
template <typename real>
__global__ void lat_pack_t(const long long* __restrict__ order, int nx, int ny, int nspecies,
                           const real* const* __restrict__ U, const real* const* __restrict__ T,
                           int nterms, real c0, real c1, real c2, real c3, real c4, real c5,
                           real c6, real c7, real* const* __restrict__ rhs,
                           real* __restrict__ ext) {
    __shared__ real tile[LAT_TILE][LAT_TILE + 1];
    const int s = blockIdx.z, tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.x * LAT_TILE, j0 = blockIdx.y * LAT_TILE;
    const real c[LAT_MAXT] = {c0, c1, c2, c3, c4, c5, c6, c7};
    const real* const* Ts = T + s * LAT_MAXT;
    for (int r = ty; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + tx, j = j0 + r;
        if (i < nx && j < ny) {
            const long long v = order[(long long)j * nx + i];
            real val = U[s][v];
#pragma unroll
            for (int t = 0; t < LAT_MAXT; ++t)
                if (t < nterms) val += c[t] * Ts[t][v];
            rhs[s][v] = val;
            tile[r][tx] = val;
        }
    }
    __syncthreads();
    const int Ny = 2 * ny - 2;
    for (int r = ty; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + r, j = j0 + tx;
        if (i < nx && j < ny) {
            const real val = tile[tx][r];
            real* row = ext + ((long long)s * nx + i) * Ny;
            row[j] = val;
            if (j > 0 && j < ny - 1) row[Ny - j] = val;
        }
    }
}

template <typename real>
__global__ void lat_finish_t(const long long* __restrict__ order, int nx, int ny, int nspecies,
                             const real* __restrict__ out, const real* const* __restrict__ rhs,
                             real* const* __restrict__ Y, real* const* __restrict__ I,
                             real inv_gdt) {
    __shared__ real tile[LAT_TILE][LAT_TILE + 1];
    const int s = blockIdx.z, tx = threadIdx.x, ty = threadIdx.y;
    const int i0 = blockIdx.x * LAT_TILE, j0 = blockIdx.y * LAT_TILE;
    const int Ny = 2 * ny - 2;
    for (int r = ty; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + r, j = j0 + tx;
        if (i < nx && j < ny) tile[tx][r] = out[((long long)s * nx + i) * Ny + j];
    }
    __syncthreads();
    for (int r = ty; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + tx, j = j0 + r;
        if (i < nx && j < ny) {
            const long long v = order[(long long)j * nx + i];
            const real y = tile[r][tx];
            const real rr = rhs[s][v];
            Y[s][v] = y;
            I[s][v] = (y - rr) * inv_gdt;
        }
    }
}
