// The IMEX step of a model file on a lattice mesh whose explicit part is pointwise (every term
// with an operator is an implicit c·lap(s)): solvers/equations/lattice_imex.py, docs/EQUATIONS.md
// "IMEX". Included after the model's generated
//
//     template <typename T> __device__ void lat_point(const T* P, T x, T y, T z, const T* s, T* k)
//
// (the reaction k_s = E_s(s) of every species at one node). Between two solves one launch of
// lat_stage finishes the stage just solved and packs the next one:
//
//     Y_s   = the inverse transform at the node          (or U_s: mode LAT_START)
//     I_s   = (Y_s − rhs_s)·inv_gdt                       the implicit rate c·L Y of the stage
//     E_s   = lat_point(Y)                                the explicit rate
//     rhs'_s = U_s + cE·E_s + cI·I_s + Σ_t c_t·T_{s,t}    the next stage's right-hand side
//
// written to rhs' and to the next extension (its even extension along the transform's axis).
// LAT_LAST: the new state U_s = Y_s + cE·E_s + Σ_t c_t·T_{s,t} (the explicit weights b̂ − Â_last
// of a scheme whose explicit part is not stiffly accurate; none for ARS(4,4,3)); with a next
// extension (the step is followed by another of the same dt) the next step's first stage is
// packed at once: E_0 = lat_point(U), rhs'_s = U_s + c0·E_0 (c0 = cI here). LAT_START packs the
// first stage from U the same way. So a step is, per implicit stage, a forward cuFFT, lat_rec
// (solvers/mesh/kernels/lattice_solve.cu), an inverse cuFFT and lat_stage: four launches.
//
// A block of 32 × 8 threads owns a tile of 32 × 32 nodes and every species there: the extension
// (y fastest for the transform along y, x fastest along x) is read and written through shared
// memory a warp's 32 neighbouring words at a time, and the node's work (vertex arrays, x
// fastest) is done from the same tile.

#define LAT_MAXS 4
#define LAT_MAXT 8
#define LAT_START 0
#define LAT_MID 1
#define LAT_LAST 2

#include "lattice_tile.cuh"

template <typename T>
__global__ void __launch_bounds__(256)
lat_stage(const long long* __restrict__ order, int nx, int ny, int S, int axis_y, int mode,
          const T* __restrict__ ext_in, T* __restrict__ ext_out,
          T* const* __restrict__ U, T* const* __restrict__ rhs,
          T* const* __restrict__ Eout, T* const* __restrict__ Iout,
          const T* const* __restrict__ terms, int nterms, T c0, T c1, T c2, T c3, T c4, T c5,
          T c6, T c7, T cE, T cI, T inv_gdt, const T* __restrict__ P,
          const T* __restrict__ X, const T* __restrict__ Yc, const T* __restrict__ Z) {
    __shared__ T tile[LAT_MAXS][LAT_TILE][LAT_TILE + 1];
    const int i0 = blockIdx.x * LAT_TILE, j0 = blockIdx.y * LAT_TILE;
    const bool ay = axis_y != 0;
    if (mode != LAT_START)
        lat_tile_io<T>(false, const_cast<T*>(ext_in), nx, ny, S, ay, i0, j0, tile);
    __syncthreads();
    const T c[LAT_MAXT] = {c0, c1, c2, c3, c4, c5, c6, c7};
    const int tx = threadIdx.x;
    for (int r = threadIdx.y; r < LAT_TILE; r += blockDim.y) {
        const int i = i0 + tx, j = j0 + r;
        if (i >= nx || j >= ny) continue;
        const long long v = order[(long long)j * nx + i];
        const T x = X[v], y = Yc[v], z = Z[v];
        T Y[LAT_MAXS], E[LAT_MAXS];
        for (int s = 0; s < S; ++s) Y[s] = (mode == LAT_START) ? U[s][v] : tile[s][r][tx];
        if (mode == LAT_LAST) {
            if (cE != T(0) || nterms > 0) {  // the explicit weights b̂ − Â_last
                lat_point<T>(P, x, y, z, Y, E);
                for (int s = 0; s < S; ++s) {
                    T u = Y[s] + cE * E[s];
#pragma unroll
                    for (int t = 0; t < LAT_MAXT; ++t)
                        if (t < nterms) u += c[t] * terms[s * LAT_MAXT + t][v];
                    Y[s] = u;
                }
            }
            for (int s = 0; s < S; ++s) U[s][v] = Y[s];
            if (ext_out == nullptr) continue;
        }
        lat_point<T>(P, x, y, z, Y, E);
        for (int s = 0; s < S; ++s) {
            T val;
            if (mode == LAT_MID) {
                const T I = (Y[s] - rhs[s][v]) * inv_gdt;
                if (Iout != nullptr) Iout[s][v] = I;
                val = U[s][v] + cE * E[s] + cI * I;
#pragma unroll
                for (int t = 0; t < LAT_MAXT; ++t)
                    if (t < nterms) val += c[t] * terms[s * LAT_MAXT + t][v];
            } else {  // the next step's first stage: U + c0·E_0 (c0 passed as cI)
                val = Y[s] + cI * E[s];
            }
            if (Eout != nullptr) Eout[s][v] = E[s];
            rhs[s][v] = val;  // (read above by this thread only: one buffer serves)
            tile[s][r][tx] = val;
        }
    }
    if (ext_out == nullptr) return;
    __syncthreads();
    lat_tile_io<T>(true, ext_out, nx, ny, S, ay, i0, j0, tile);
}
