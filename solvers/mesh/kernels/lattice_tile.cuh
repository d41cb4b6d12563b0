// A tile of 32 × 32 lattice nodes and the even extension of the cosine transform (lattice_stage.cu,
// and the chemotaxis IMEX of solvers/surface_rd/kernels/chemotaxis_imex.cu): lat_tile_io moves
// S species' values between tile[s][j][i] (node (i0 + i, j0 + j)) and the extension's rows, a
// warp's 32 neighbouring words at a time (y fastest for the transform along y, x fastest along
// x), writing each value also at its mirror Nt − a. Blocks of 32 × blockDim.y threads.
#pragma once

#ifndef LAT_TILE
#define LAT_TILE 32
#endif

template <typename T>
__device__ __forceinline__ void lat_tile_io(bool write, T* __restrict__ ext, int nx, int ny,
                                            int S, bool axis_y, int i0, int j0,
                                            T (*tile)[LAT_TILE][LAT_TILE + 1]) {
    const int tx = threadIdx.x;
    const int Nt = axis_y ? 2 * ny - 2 : 2 * nx - 2;
    const int nt = axis_y ? ny : nx;
    for (int s = 0; s < S; ++s) {
        for (int r = threadIdx.y; r < LAT_TILE; r += blockDim.y) {
            // the transform's index along the row: tx (coalesced); the row's: r
            const int il = axis_y ? r : tx, jl = axis_y ? tx : r;
            const int i = i0 + il, j = j0 + jl;
            if (i >= nx || j >= ny) continue;
            const int a = axis_y ? j : i;
            T* row = ext + ((long long)s * (axis_y ? nx : ny) + (axis_y ? i : j)) * Nt;
            if (write) {
                const T val = tile[s][jl][il];
                row[a] = val;
                if (a > 0 && a < nt - 1) row[Nt - a] = val;
            } else {
                tile[s][jl][il] = row[a];
            }
        }
    }
}

