// One-layer shallow water on triangles: the kernels of assembly.cuh with the one-layer fluxes of
// riemann.cuh (Flux<E, 1, SCH>). W = (h, qx, qy).
#include "assembly.cuh"

TRI_KERNELS(roe1, 1, 0)
TRI_KERNELS(irroe1, 1, 1)
TRI_KERNELS(pvm1, 1, 2)

// The shock sensor S of every cell (the carbuncle cure), before the flux kernels.
template <typename T>
__global__ void sensor1(const T* __restrict__ W, const int* __restrict__ nbr,
                        const T* __restrict__ cnx, const T* __restrict__ cny, T* __restrict__ S,
                        int M) {
    sensor_body<T>(W, nbr, cnx, cny, S, M);
}

template <typename T>
__global__ void update1(T* __restrict__ W, T* __restrict__ acc, int NS,
                        const T* __restrict__ area, T dt_limit, int M, const T* dt_cur,
                        T* dt_next, int zero) {
    cell_update_body<T, 3>(W, acc, NS, area, dt_limit, M, dt_cur, dt_next, zero);
}
