// The rungs of the paper's optimisation ladder (Fig. 11) for chemotaxis on triangulated surfaces
// ([P1] eq. (1), docs/MODELS.md §2) that production does not launch, one thread per vertex (or face),
// templated on the real type T; the ladder benchmark (benchmarks/surface_rd/ladder.py) loads
// this file with solvers/surface_rd/kernels on the include path. The `vec` rung (the one
// production launches) is in solvers/surface_rd/kernels/chemotaxis.cu.
//
// Rungs (see benchmarks/surface_rd/rungs.py for the tables each one reads):
//   naive_*   the paper's baseline: Laplacian, face gradients, vertex gradients (one species per
//             launch) and the update: 7 launches a step, CSR tables, intermediates in global memory
//   fused1_*  the same four kernels for both species at once: 4 launches (paper's Fusion 1)
//   rd_step_csr     one launch a step: the vertex gradient is a linear one-ring stencil
//                   (G = W F), so Laplacian and gradient coefficients are precomputed per
//                   (vertex, neighbour) and no face data or synchronisation is needed (this is
//                   what the paper's Fusion 2-3 with METIS patches and halos achieve); CSR rows
//   rd_step_padded  the same with column-major padded tables ("device arrays"): entry k of all
//                   vertices is contiguous, so a warp's loads coalesce
//   rd_step_geom    padded vertex-face table; cotangent weights, mixed areas, angles and face
//                   gradients recomputed from float64 coordinates every step (reads ~half the
//                   bytes of the precomputed coefficients)
//   rd_step_ring    the same from the 1-ring in fan order: one index and one gather per
//                   neighbour instead of two per face
#include "chemotaxis.cuh"

// ---------------------------------------------------------------- naive (paper's baseline)
// out_i = sum_k w_k (f_nbr - f_i) over the CSR row of i (Laplace-Beltrami, eq. (2))
template <typename T>
__global__ void naive_lap(const T* __restrict__ f, T* __restrict__ out,
                          const int* __restrict__ indptr, const int* __restrict__ nbr,
                          const T* __restrict__ w, const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T fi = f[i];
    T acc = 0;
    for (int k = indptr[i]; k < indptr[i + 1]; ++k) acc += w[k] * (f[nbr[k]] - fi);
    out[i] = acc;
}

// face gradient (eq. (3)) as grad f(T) = sum_corners f_v g[T, v]; g is (M, 3 corners, 3)
template <typename T>
__global__ void naive_face_grad(const T* __restrict__ f, T* __restrict__ gf,
                                const int* __restrict__ cells, const T* __restrict__ g,
                                const int m)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    const T f0 = f[cells[3 * t]], f1 = f[cells[3 * t + 1]], f2 = f[cells[3 * t + 2]];
    const T* q = g + 9 * t;
    for (int d = 0; d < 3; ++d) gf[d * m + t] = f0 * q[d] + f1 * q[3 + d] + f2 * q[6 + d];
}

// vertex gradient (eq. (4)): angle-weighted mean of the incident face gradients (CSR)
template <typename T>
__global__ void naive_vertex_grad(const T* __restrict__ gf, T* __restrict__ gv,
                                  const int* __restrict__ indptr, const int* __restrict__ face,
                                  const T* __restrict__ w, const int n, const int m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T x = 0, y = 0, z = 0;
    for (int k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int t = face[k];
        x += w[k] * gf[t];
        y += w[k] * gf[m + t];
        z += w[k] * gf[2 * m + t];
    }
    gv[i] = x;
    gv[n + i] = y;
    gv[2 * n + i] = z;
}

template <typename T>
__global__ void rd_update(const T* __restrict__ nn, const T* __restrict__ cc,
                          const T* __restrict__ lap_n, const T* __restrict__ lap_c,
                          const T* __restrict__ gn, const T* __restrict__ gc,
                          T* __restrict__ n_out, T* __restrict__ c_out, const int n,
                          const T D, const T alpha, const T sr, const T Ncap, const T s,
                          const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T dot = gn[i] * gc[i] + gn[n + i] * gc[n + i] + gn[2 * n + i] * gc[2 * n + i];
    T dn, dc;
    rd_rates(nn[i], cc[i], lap_n[i], lap_c[i], dot, D, alpha, sr, Ncap, s, dn, dc);
    n_out[i] = nn[i] + dt * dn;
    c_out[i] = cc[i] + dt * dc;
}

// ---------------------------------------------------------------- Fusion 1: both species
template <typename T>
__global__ void fused1_lap(const T* __restrict__ fn, const T* __restrict__ fc,
                           T* __restrict__ out_n, T* __restrict__ out_c,
                           const int* __restrict__ indptr, const int* __restrict__ nbr,
                           const T* __restrict__ w, const int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T ni = fn[i], ci = fc[i];
    T an = 0, ac = 0;
    for (int k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int j = nbr[k];
        an += w[k] * (fn[j] - ni);
        ac += w[k] * (fc[j] - ci);
    }
    out_n[i] = an;
    out_c[i] = ac;
}

template <typename T>
__global__ void fused1_face_grad(const T* __restrict__ fn, const T* __restrict__ fc,
                                 T* __restrict__ gfn, T* __restrict__ gfc,
                                 const int* __restrict__ cells, const T* __restrict__ g,
                                 const int m)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    const int v0 = cells[3 * t], v1 = cells[3 * t + 1], v2 = cells[3 * t + 2];
    const T n0 = fn[v0], n1 = fn[v1], n2 = fn[v2];
    const T c0 = fc[v0], c1 = fc[v1], c2 = fc[v2];
    const T* q = g + 9 * t;
    for (int d = 0; d < 3; ++d) {
        gfn[d * m + t] = n0 * q[d] + n1 * q[3 + d] + n2 * q[6 + d];
        gfc[d * m + t] = c0 * q[d] + c1 * q[3 + d] + c2 * q[6 + d];
    }
}

template <typename T>
__global__ void fused1_vertex_grad(const T* __restrict__ gfn, const T* __restrict__ gfc,
                                   T* __restrict__ gvn, T* __restrict__ gvc,
                                   const int* __restrict__ indptr, const int* __restrict__ face,
                                   const T* __restrict__ w, const int n, const int m)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T xn = 0, yn = 0, zn = 0, xc = 0, yc = 0, zc = 0;
    for (int k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int t = face[k];
        const T wk = w[k];
        xn += wk * gfn[t]; yn += wk * gfn[m + t]; zn += wk * gfn[2 * m + t];
        xc += wk * gfc[t]; yc += wk * gfc[m + t]; zc += wk * gfc[2 * m + t];
    }
    gvn[i] = xn; gvn[n + i] = yn; gvn[2 * n + i] = zn;
    gvc[i] = xc; gvc[n + i] = yc; gvc[2 * n + i] = zc;
}

// ---------------------------------------------------------------- one launch a step
// CSR rows: coef is (nnz, 4) = (lap, gx, gy, gz) per slot
template <typename T>
__global__ void rd_step_csr(const T* __restrict__ fn, const T* __restrict__ fc,
                            T* __restrict__ n_out, T* __restrict__ c_out,
                            const int* __restrict__ indptr, const int* __restrict__ nbr,
                            const T* __restrict__ coef, const int n,
                            const T D, const T alpha, const T sr, const T Ncap, const T s,
                            const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T ni = fn[i], ci = fc[i];
    Ring<T> r;
    for (int k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int j = nbr[k];
        const T* q = coef + 4 * k;
        r.add(fn[j] - ni, fc[j] - ci, q[0], q[1], q[2], q[3]);
    }
    rd_finish(r, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}

// column-major padded: nbr[k*P + i]; coef planes coef[(q*K + k)*P + i], q = lap, gx, gy, gz
template <typename T>
__global__ void rd_step_padded(const T* __restrict__ fn, const T* __restrict__ fc,
                               T* __restrict__ n_out, T* __restrict__ c_out,
                               const int* __restrict__ deg, const int* __restrict__ nbr,
                               const T* __restrict__ coef, const int n, const int P, const int K,
                               const T D, const T alpha, const T sr, const T Ncap, const T s,
                               const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T ni = fn[i], ci = fc[i];
    const int d = deg[i];
    const size_t plane = (size_t)K * P;
    Ring<T> r;
    for (int k = 0; k < d; ++k) {
        const size_t o = (size_t)k * P + i;
        const int j = nbr[o];
        r.add(fn[j] - ni, fc[j] - ci, coef[o], coef[plane + o], coef[2 * plane + o],
              coef[3 * plane + o]);
    }
    rd_finish(r, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}

// One incident face (i, a, b) of vertex i, geometry recomputed: e_a = x_a - x_i, e_b = x_b - x_i
// (differences taken in float64 by the caller, then rounded to T). Adds the face's cotangent
// terms to the Laplacians, Meyer's mixed-area part to `area`, the incident angle
// theta = atan2(|cross|, e_a.e_b) to `theta_sum`, and theta times the face gradient
// grad f(T) = cross x ((f_b - f_i) e_a - (f_a - f_i) e_b) / |cross|^2 (eq. (3) rearranged).
template <typename T>
__device__ __forceinline__ void face_terms(T ax, T ay, T az, T bx, T by, T bz, T dna, T dnb,
                                           T dca, T dcb, T& area, T& theta_sum, Ring<T>& r)
{
    const T cx = ay * bz - az * by, cy = az * bx - ax * bz, cz = ax * by - ay * bx;
    const T cr2 = cx * cx + cy * cy + cz * cz;
    const T dbl = sqrt(cr2);  // 2 A_T
    const T ab = ax * bx + ay * by + az * bz;
    const T aa = ax * ax + ay * ay + az * az, bb = bx * bx + by * by + bz * bz;
    const T inv = T(1) / dbl;
    const T cot_i = ab * inv, cot_a = (aa - ab) * inv, cot_b = (bb - ab) * inv;
    if (cot_i < 0) area += T(0.25) * dbl;
    else if (cot_a < 0 || cot_b < 0) area += T(0.125) * dbl;
    else area += T(0.125) * (aa * cot_b + bb * cot_a);
    r.lap_n += cot_b * dna + cot_a * dnb;
    r.lap_c += cot_b * dca + cot_a * dcb;
    const T th = atan2(dbl, ab);
    theta_sum += th;
    const T w = th / cr2;
    T vx = dnb * ax - dna * bx, vy = dnb * ay - dna * by, vz = dnb * az - dna * bz;
    r.gnx += w * (cy * vz - cz * vy); r.gny += w * (cz * vx - cx * vz);
    r.gnz += w * (cx * vy - cy * vx);
    vx = dcb * ax - dca * bx; vy = dcb * ay - dca * by; vz = dcb * az - dca * bz;
    r.gcx += w * (cy * vz - cz * vy); r.gcy += w * (cz * vx - cx * vz);
    r.gcz += w * (cx * vy - cy * vx);
}

template <typename T>
__device__ __forceinline__ void geom_finish(Ring<T>& r, T area, T theta_sum, T ni, T ci, int i,
                                            T* __restrict__ n_out, T* __restrict__ c_out,
                                            T D, T alpha, T sr, T Ncap, T s, T dt)
{
    const T il = T(0.5) / area, ig = T(1) / theta_sum;
    r.lap_n *= il; r.lap_c *= il;
    r.gnx *= ig; r.gny *= ig; r.gnz *= ig; r.gcx *= ig; r.gcy *= ig; r.gcz *= ig;
    rd_finish(r, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}

// geometry recomputed, face slots: slot k of vertex i is the triangle (i, fa, fb); xyz are
// float64 coordinate planes (x[0..n), y[n..2n), z[2n..3n)).
template <typename T>
__global__ void rd_step_geom(const T* __restrict__ fn, const T* __restrict__ fc,
                             T* __restrict__ n_out, T* __restrict__ c_out,
                             const int* __restrict__ deg, const int* __restrict__ fa,
                             const int* __restrict__ fb, const double* __restrict__ xyz,
                             const int n, const int P,
                             const T D, const T alpha, const T sr, const T Ncap, const T s,
                             const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double xi = xyz[i], yi = xyz[n + i], zi = xyz[2 * n + i];
    const T ni = fn[i], ci = fc[i];
    const int d = deg[i];
    T area = 0, theta_sum = 0;
    Ring<T> r;
    for (int k = 0; k < d; ++k) {
        const size_t o = (size_t)k * P + i;
        const int a = fa[o], b = fb[o];
        face_terms(T(xyz[a] - xi), T(xyz[n + a] - yi), T(xyz[2 * n + a] - zi),
                   T(xyz[b] - xi), T(xyz[n + b] - yi), T(xyz[2 * n + b] - zi),
                   fn[a] - ni, fn[b] - ni, fc[a] - ci, fc[b] - ci, area, theta_sum, r);
    }
    geom_finish(r, area, theta_sum, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}

// geometry recomputed, fan order: ring[k*P + i], k = 0..d, lists the 1-ring so that entries k
// and k+1 span an incident face (closed fans repeat the first entry); each neighbour's
// coordinates (float64, records x, y, z, pad of 32 bytes) and values are read once per vertex
// and reused by the next face.
template <typename T>
__global__ void rd_step_ring(const T* __restrict__ fn, const T* __restrict__ fc,
                             T* __restrict__ n_out, T* __restrict__ c_out,
                             const int* __restrict__ deg, const int* __restrict__ ring,
                             const double* __restrict__ xyz4, const int n, const int P,
                             const T D, const T alpha, const T sr, const T Ncap, const T s,
                             const T dt)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double2 pi = __ldg(reinterpret_cast<const double2*>(xyz4) + 2 * i);
    const double zi = __ldg(xyz4 + 4 * i + 2);
    const T ni = fn[i], ci = fc[i];
    const int d = deg[i];
    T area = 0, theta_sum = 0;
    Ring<T> r;
    int j = ring[i];
    double2 q = __ldg(reinterpret_cast<const double2*>(xyz4) + 2 * j);
    T ax = T(q.x - pi.x), ay = T(q.y - pi.y), az = T(__ldg(xyz4 + 4 * j + 2) - zi);
    T dna = fn[j] - ni, dca = fc[j] - ci;
    for (int k = 1; k <= d; ++k) {
        j = ring[(size_t)k * P + i];
        q = __ldg(reinterpret_cast<const double2*>(xyz4) + 2 * j);
        const T bx = T(q.x - pi.x), by = T(q.y - pi.y), bz = T(__ldg(xyz4 + 4 * j + 2) - zi);
        const T dnb = fn[j] - ni, dcb = fc[j] - ci;
        face_terms(ax, ay, az, bx, by, bz, dna, dnb, dca, dcb, area, theta_sum, r);
        ax = bx; ay = by; az = bz; dna = dnb; dca = dcb;
    }
    geom_finish(r, area, theta_sum, ni, ci, i, n_out, c_out, D, alpha, sr, Ncap, s, dt);
}
