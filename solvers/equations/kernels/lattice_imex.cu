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

#define LAT_REC_THREADS 256
#define LAT_REC_WARPS (LAT_REC_THREADS / 32)

// (mul, tail) ∘: the recurrence over a chunk after another: tail = tail + mul·tail_before
template <typename real>
__device__ void lat_rec_pass(real* y0, real* y1, int nm, int N, real r0, real r1, real lr0,
                             real lr1, real wr0, real wr1, bool backward, real* wagg) {
    const int t = threadIdx.x, lane = t & 31, w = t >> 5;
    const int c = (N + LAT_REC_THREADS - 1) / LAT_REC_THREADS;
    const int lo = min(N, t * c), hi = min(N, lo + c);
    real a0 = 0, a1 = 0, m0 = 1, m1 = 1;
    for (int k = lo; k < hi; ++k) {  // the chunk's own recurrences from 0 (both modes)
        const int at = backward ? N - 1 - k : k;
        a0 = y0[at] + r0 * a0;
        y0[at] = a0;
        m0 *= r0;
        if (nm > 1) { a1 = y1[at] + r1 * a1; y1[at] = a1; m1 *= r1; }
    }
    real t0 = a0, t1 = a1;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {  // inclusive scan over the warp's chunks
        const real pm0 = __shfl_up_sync(0xffffffffu, m0, d), pt0 = __shfl_up_sync(0xffffffffu, t0, d);
        const real pm1 = __shfl_up_sync(0xffffffffu, m1, d), pt1 = __shfl_up_sync(0xffffffffu, t1, d);
        if (lane >= d) { t0 += m0 * pt0; m0 *= pm0; t1 += m1 * pt1; m1 *= pm1; }
    }
    if (lane == 31) {
        wagg[4 * w] = m0; wagg[4 * w + 1] = t0; wagg[4 * w + 2] = m1; wagg[4 * w + 3] = t1;
    }
    // exclusive within the warp
    real em0 = __shfl_up_sync(0xffffffffu, m0, 1), et0 = __shfl_up_sync(0xffffffffu, t0, 1);
    real em1 = __shfl_up_sync(0xffffffffu, m1, 1), et1 = __shfl_up_sync(0xffffffffu, t1, 1);
    if (lane == 0) { em0 = 1; et0 = 0; em1 = 1; et1 = 0; }
    __syncthreads();
    // the warps before: their composed tail P; the carry into the chunk: et + em·P
    real P0 = 0, P1 = 0, T0 = 0, T1 = 0;
    for (int v = 0; v < LAT_REC_WARPS; ++v) {
        if (v == w) { P0 = T0; P1 = T1; }
        T0 = wagg[4 * v + 1] + wagg[4 * v] * T0;
        T1 = wagg[4 * v + 3] + wagg[4 * v + 2] * T1;
    }
    const real c0 = et0 + em0 * P0, c1 = et1 + em1 * P1;
    const real w0 = T0 * wr0, w1 = T1 * wr1;  // y_{N−1} of the periodic recurrence
    real pc0 = r0, pc1 = r1, pw0 = exp(lr0 * (real)(lo + 1)), pw1 = exp(lr1 * (real)(lo + 1));
    for (int k = lo; k < hi; ++k) {
        const int at = backward ? N - 1 - k : k;
        y0[at] += pc0 * c0 + pw0 * w0;
        pc0 *= r0; pw0 *= r0;
        if (nm > 1) { y1[at] += pc1 * c1 + pw1 * w1; pc1 *= r1; pw1 *= r1; }
    }
    __syncthreads();
}

// per cosine modes m0 = 2·blockIdx.x, m0 + 1 and species s = blockIdx.y: the real parts of the
// spectrum's columns solved by α x_j − β (x_{j−1} + x_{j+1}) = d_j, mirrored ends
// (x_{−1} = x_1, x_n = x_{n−2}), α = 1 + δ_s λ_m + 2β, β = δ_s/h² (j along the other axis, of
// spacing h); written back as (scale·x, 0). Here nx counts the modes and ny the rows (for the
// transform along y: nx ← ny, ny ← nx). The mirrored system is the periodic one on the even
// extension e of length N = 2n − 2, and α − β(S + S⁻¹) = (β/r)(1 − rS)(1 − rS⁻¹) with
// r + 1/r = α/β, r < 1 (S the shift), so x = (r/β)·(1 − rS⁻¹)⁻¹(1 − rS)⁻¹ e: two first-order
// periodic recurrences, y_j = e_j + r·y_{j−1} and z_j = y_j + r·z_{j+1}. A block of 256 threads
// holds both modes' extensions in shared memory (2N reals); each thread runs the recurrences
// along its chunk of ⌈N/256⌉ positions, the chunks' carries are scanned by shuffles and across
// the warps, and each thread adds its carry r^{k−lo+1}·C and the periodic wrap
// r^{k+1}·y_{N−1}/(1 − r^N): O(N) work, no divisions per row, a serial chain of ⌈N/256⌉
// (the kernel is bound by latency: more threads a system, shorter chains, more warps to hide
// them; 128 threads took 23.8 µs at 633 × 316 × 2 species, H100).
template <typename real>
__device__ __forceinline__ void lat_rec_modes(real* __restrict__ spec, int nx, int ny,
                                              const real* __restrict__ lam, real inv_h2,
                                              real delta, real scale) {
    extern __shared__ unsigned char lat_smem[];
    real* sm = reinterpret_cast<real*>(lat_smem);
    __shared__ real wagg[4 * LAT_REC_WARPS];
    const int t = threadIdx.x, s = blockIdx.y, m0 = 2 * blockIdx.x;
    const int N = 2 * ny - 2;
    const int nm = (m0 + 1 < nx) ? 2 : 1;
    const real beta = delta * inv_h2;
    const long long row0 = (long long)s * ny;
    real* y0 = sm;
    real* y1 = sm + N;
    for (int j = t; j < ny; j += LAT_REC_THREADS) {
        const real* at = spec + ((row0 + j) * nx + m0) * 2;
        const real v0 = at[0], v1 = (nm > 1) ? at[2] : real(0);
        y0[j] = v0; y1[j] = v1;
        if (j > 0 && j < ny - 1) { y0[N - j] = v0; y1[N - j] = v1; }
    }
    __syncthreads();
    const real al0 = real(1) + delta * lam[m0] + real(2) * beta;
    const real al1 = real(1) + delta * lam[nm > 1 ? m0 + 1 : m0] + real(2) * beta;
    real f0, f1;
    if (beta > 0) {
        const real r0 = real(2) * beta / (al0 + sqrt(al0 * al0 - real(4) * beta * beta));
        const real r1 = real(2) * beta / (al1 + sqrt(al1 * al1 - real(4) * beta * beta));
        const real lr0 = log(r0), lr1 = log(r1);
        const real wr0 = real(1) / (real(1) - exp(lr0 * (real)N));  // 1/(1 − r^N)
        const real wr1 = real(1) / (real(1) - exp(lr1 * (real)N));
        lat_rec_pass(y0, y1, nm, N, r0, r1, lr0, lr1, wr0, wr1, false, wagg);
        lat_rec_pass(y0, y1, nm, N, r0, r1, lr0, lr1, wr0, wr1, true, wagg);
        f0 = r0 / beta * scale;
        f1 = r1 / beta * scale;
    } else {
        f0 = scale / al0;
        f1 = scale / al1;
    }
    for (int j = t; j < ny; j += LAT_REC_THREADS) {
        real* at = spec + ((row0 + j) * nx + m0) * 2;
        at[0] = y0[j] * f0;
        at[1] = real(0);
        if (nm > 1) { at[2] = y1[j] * f1; at[3] = real(0); }
    }
}

template <typename real>
__global__ void __launch_bounds__(LAT_REC_THREADS)
lat_rec(real* __restrict__ spec, int nx, int ny, int nspecies, const real* __restrict__ lam,
        real inv_h2, real d0, real d1, real d2, real d3, real scale) {
    lat_rec_modes(spec, nx, ny, lam, inv_h2, lat_pick<real>(blockIdx.y, d0, d1, d2, d3), scale);
}

// lat_rec with δ_s = (*step)·c_s: the step a clocked kernel before it stored on the device (the
// chemotaxis IMEX, solvers/surface_rd/lattice_imex.py), so that its launch does not depend on it
template <typename real>
__global__ void __launch_bounds__(LAT_REC_THREADS)
lat_rec_clk(real* __restrict__ spec, int nx, int ny, int nspecies, const real* __restrict__ lam,
            real inv_h2, const double* __restrict__ step, double c0, double c1, double c2,
            double c3, real scale) {
    const double c = blockIdx.y == 0 ? c0 : (blockIdx.y == 1 ? c1 : (blockIdx.y == 2 ? c2 : c3));
    lat_rec_modes(spec, nx, ny, lam, inv_h2, (real)(*step * c), scale);
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
