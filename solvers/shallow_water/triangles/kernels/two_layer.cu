// Two-layer shallow water on triangles: the kernels of assembly.cuh with the two-layer fluxes of
// riemann.cuh (Flux<E, 2, SCH>). W = (h1, q1x, q1y, h2, q2x, q2y).
#include "assembly.cuh"

TRI_KERNELS(roe2, 2, 0)
TRI_KERNELS(irroe2, 2, 1)
TRI_KERNELS(pvm2, 2, 2)

template <typename T>
__global__ void update2(T* __restrict__ W, T* __restrict__ acc, int NS,
                        const T* __restrict__ area, T dt_limit, int M, const T* dt_cur,
                        T* dt_next, int zero) {
    cell_update_body<T, 6>(W, acc, NS, area, dt_limit, M, dt_cur, dt_next, zero);
}
