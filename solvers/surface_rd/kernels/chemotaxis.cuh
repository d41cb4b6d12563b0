// Device functions shared by the chemotaxis kernels on triangulated surfaces (docs/MODELS.md [P1] eq. (1),
// docs/MODELS.md §2): the production kernel (chemotaxis.cu) and the rungs of the optimisation ladder
// (benchmarks/surface_rd/kernels/ladder.cu), templated on the real type T.
//
//   dn/dt = D Lap n - alpha n Lap c - alpha grad n . grad c + s r n (N - n)
//   dc/dt = Lap c + s (n/(1+n) - c),      explicit Euler with step dt.
#pragma once

template <typename T>
__device__ __forceinline__ void rd_rates(T n, T c, T lap_n, T lap_c, T dot, T D, T alpha, T sr,
                                         T Ncap, T s, T& dn, T& dc)
{
    dn = D * lap_n - alpha * n * lap_c - alpha * dot + sr * n * (Ncap - n);
    dc = lap_c + s * (n / (T(1) + n) - c);
}

// Accumulate one one-ring slot: f_j - f_i weighted by the Laplacian and gradient coefficients.
template <typename T>
struct Ring {
    T lap_n = 0, lap_c = 0, gnx = 0, gny = 0, gnz = 0, gcx = 0, gcy = 0, gcz = 0;
    __device__ __forceinline__ void add(T dn, T dc, T l, T gx, T gy, T gz)
    {
        lap_n += l * dn; lap_c += l * dc;
        gnx += gx * dn; gny += gy * dn; gnz += gz * dn;
        gcx += gx * dc; gcy += gy * dc; gcz += gz * dc;
    }
    __device__ __forceinline__ T dot() const { return gnx * gcx + gny * gcy + gnz * gcz; }
};

template <typename T>
__device__ __forceinline__ void rd_finish(const Ring<T>& r, T ni, T ci, int i,
                                          T* __restrict__ n_out, T* __restrict__ c_out,
                                          T D, T alpha, T sr, T Ncap, T s, T dt)
{
    T dn, dc;
    rd_rates(ni, ci, r.lap_n, r.lap_c, r.dot(), D, alpha, sr, Ncap, s, dn, dc);
    n_out[i] = ni + dt * dn;
    c_out[i] = ci + dt * dc;
}
