// The implicit diffusion solves on a lattice mesh between two cuFFT transforms (solvers/mesh/
// lattice.py, LatticeTransform): per cosine mode of the transformed axis, the tridiagonal system
// along the other axis. Used by the model files' IMEX (solvers/equations/kernels/lattice_imex.cu,
// lattice_stage.cu) and the built-in chemotaxis IMEX (solvers/surface_rd/kernels/
// chemotaxis_imex.cu). Layout: the spectrum's rows s·ny + j (species s, row j of the other
// axis), modes 0 … nx − 1 (for the transform along y: nx ← ny, ny ← nx).
#pragma once

template <typename real>
__device__ __forceinline__ real lat_pick(int s, real a, real b, real c, real d) {
    return s == 0 ? a : (s == 1 ? b : (s == 2 ? c : d));
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

