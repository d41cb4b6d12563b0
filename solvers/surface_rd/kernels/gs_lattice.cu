// Gray–Scott by explicit Euler on a lattice mesh (docs/MODELS.md §2.5, "Gray–Scott on lattice
// meshes"): the cotangent Laplacian of a planar right-triangle lattice is the 5-point Laplacian
// with mirrored ends (mesh/lattice.py), so a member's state can live in shared memory and many
// steps run in one launch.
//
// One member = one thread-block cluster of C blocks (blockIdx.x / C = member, the block's rank
// in the cluster = its strip). Block r owns lattice rows [r·R, min(ny, (r+1)·R)) and keeps them,
// with one halo row above and one below, in two buffers (a step reads one and writes the other).
// A step: each thread walks a column through a band of the strip's rows with the rows above and
// below in registers; the first band starts at the strip's first row and the last band walks up
// from its last row, so the two edge rows are updated first and sent into the neighbouring
// blocks' halo rows of the next buffer through the cluster's distributed shared memory; then
// barrier.cluster.arrive (release), the rest of the walk, __syncthreads, barrier.cluster.wait
// (acquire): the cluster barrier's latency hides behind the inner rows. At the physical ends the
// row beyond is read as the mirrored row (row 1 above row 0, row ny − 2 below row ny − 1), and
// the mirrored column likewise, by index.
//
// Every vertex value is computed by gsl_vertex with rounded operations only (no contraction left
// to the compiler), so the result does not depend on C, the block size or the number of steps
// a launch takes: an ensemble member is bit for bit its solo run.
//
// State in global memory is the mesh's internal vertex order; `node[j·nx + i]` is the internal
// index of lattice node (i, j). A launch gathers the state into shared memory, runs `steps`
// steps, and scatters it into the output arrays (the double buffer of the caller). A member
// whose dts[m] is 0 is copied unchanged. Parameters par[4m..4m+3] = (Du, Dv, F, k).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ float rmul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float radd(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double radd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float rsub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double rsub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float rfma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double rfma(double a, double b, double c) { return __fma_rn(a, b, c); }

// (u, v) at a vertex from its four lattice neighbours (left, right, down, up):
//   Lu = ax·((uL − u) + (uR − u)) + ay·((uD − u) + (uU − u)),  ax = 1/hx², ay = 1/hy²
//   u' = u + dt·(Du·Lu − u v² + F(1 − u)),   v' = v + dt·(Dv·Lv + u v² − (F + k) v)
template <typename T>
__device__ __forceinline__ void gsl_vertex(T u, T v, T uL, T uR, T uD, T uU, T vL, T vR, T vD,
                                           T vU, T ax, T ay, T Du, T Dv, T F, T Fk, T dt,
                                           T& un, T& vn)
{
    const T lu = rfma(ax, radd(rsub(uL, u), rsub(uR, u)),
                      rmul(ay, radd(rsub(uD, u), rsub(uU, u))));
    const T lv = rfma(ax, radd(rsub(vL, v), rsub(vR, v)),
                      rmul(ay, radd(rsub(vD, v), rsub(vU, v))));
    const T uvv = rmul(rmul(u, v), v);
    const T fu = rfma(F, rsub(T(1), u), rsub(rmul(Du, lu), uvv));
    const T fv = rsub(rfma(Dv, lv, uvv), rmul(Fk, v));
    un = rfma(dt, fu, u);
    vn = rfma(dt, fv, v);
}

__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

template <typename T, int C>
__device__ __forceinline__ void gsl_body(const T* __restrict__ u_in, const T* __restrict__ v_in,
                                         T* __restrict__ u_out, T* __restrict__ v_out,
                                         const int* __restrict__ node, const int n, const int nx,
                                         const int ny, const int R, const int steps,
                                         const T* __restrict__ par, const T* __restrict__ dts,
                                         const T ax, const T ay)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* sm = reinterpret_cast<T*>(smem_raw);
    cg::cluster_group cl = cg::this_cluster();
    const int r = (int)cl.block_rank();
    const int m = blockIdx.x / C;
    const int tid = threadIdx.x, nt = blockDim.x;
    const int j0 = r * R, rows = min(ny, j0 + R) - j0;  // rows >= 2 (the host checks)
    const size_t off = (size_t)m * n;
    const int plane = (R + 2) * nx;  // one species of one buffer: halo, R rows, halo
    // buffer p, species s (0 = u, 1 = v), slot (0 = halo above, 1..rows own, rows + 1 = below)
    auto at = [&](int p, int s, int slot) { return sm + (2 * p + s) * plane + slot * nx; };
    const T dt = dts[m];
    if (dt == T(0)) {  // an inactive member: its rows copied (the caller's double buffer)
        for (int q = tid; q < rows * nx; q += nt) {
            const int g = node[j0 * nx + q];
            u_out[off + g] = u_in[off + g];
            v_out[off + g] = v_in[off + g];
        }
        return;  // (every block of this cluster returns here: no barrier is left waiting)
    }
    const T Du = par[4 * m], Dv = par[4 * m + 1], F = par[4 * m + 2];
    const T Fk = radd(F, par[4 * m + 3]);
    // gather: own rows and both halo rows (mirrored at the physical ends) into buffer 0
    for (int q = tid; q < (rows + 2) * nx; q += nt) {
        const int slot = q / nx, c = q - slot * nx;
        int j = j0 + slot - 1;
        j = j < 0 ? 1 : (j >= ny ? ny - 2 : j);
        const int g = node[j * nx + c];
        at(0, 0, slot)[c] = u_in[off + g];
        at(0, 1, slot)[c] = v_in[off + g];
    }
    cl.sync();  // every block of the cluster runs and has its buffer before any remote write
    T* up_u = nullptr; T* up_v = nullptr; T* dn_u = nullptr; T* dn_v = nullptr;
    const int bottom_slot = R + 1;  // the halo below of a block that is not the last (rows == R)
    // G groups of nx threads (a thread a column), group g a band of own slots; group 0 starts at
    // slot 1 and the last group at slot `rows` walking up, so both edge rows come first
    const int G = max(1, min(nt / nx, rows));
    const bool has = tid < G * nx;
    const int g = has ? tid / nx : 0, c = has ? tid - g * nx : 0;
    const int lo = 1 + (g * rows) / G, hi = 1 + ((g + 1) * rows) / G;
    const bool up = G > 1 && g == G - 1;
    const int first = up ? hi - 1 : lo, d = up ? -1 : 1, cnt = has ? hi - lo : 0;
    const int cl_ = c == 0 ? 1 : c - 1, cr = c == nx - 1 ? nx - 2 : c + 1;
    // the physical ends read the mirrored rows instead of a halo: row 1 above row 0 (slot 0 of
    // the first block reads slot 2), row ny - 2 below row ny - 1 (slot rows + 1 of the last
    // block reads slot rows - 1)
    auto fix = [&](int sl) {
        return (r == 0 && sl == 0) ? 2 : ((r == C - 1 && sl == rows + 1) ? rows - 1 : sl);
    };
    for (int s = 0; s < steps; ++s) {
        const int p = s & 1, q = p ^ 1;
        const T* su = at(p, 0, 0);
        const T* sv = at(p, 1, 0);
        T* du = at(q, 0, 0);
        T* dv = at(q, 1, 0);
        if (r > 0) {  // the block above's halo below, in the buffer this step writes
            up_u = cl.map_shared_rank(du, r - 1) + bottom_slot * nx;
            up_v = cl.map_shared_rank(dv, r - 1) + bottom_slot * nx;
        }
        if (r < C - 1) {  // the block below's halo above
            dn_u = cl.map_shared_rank(du, r + 1);
            dn_v = cl.map_shared_rank(dv, r + 1);
        }
        int slot = first;
        T ua = T(0), va = T(0), uc = T(0), vc = T(0);  // the slot behind the walk, the slot
        if (cnt > 0) {
            ua = su[fix(slot - d) * nx + c]; va = sv[fix(slot - d) * nx + c];
            uc = su[slot * nx + c]; vc = sv[slot * nx + c];
        }
        // the vertex (slot, c), then the walk moves on by d. `edge`: where the slot may be an
        // edge row (sent to a neighbour) or the row ahead a physical end; the walk's other
        // updates have no such branches (with them in the loop a step took 40 % longer)
        auto update = [&](const bool edge) {
            const int o = slot * nx;
            const int nb = (edge ? fix(slot + d) : slot + d) * nx;
            const T ub = su[nb + c], vb = sv[nb + c];
            T un, vn;  // (ua, ub) are the rows below and above in either order: their sum is
            gsl_vertex(uc, vc, su[o + cl_], su[o + cr], ua, ub, sv[o + cl_], sv[o + cr], va,
                       vb, ax, ay, Du, Dv, F, Fk, dt, un, vn);  // the same either way
            du[o + c] = un;
            dv[o + c] = vn;
            if (edge) {
                if (slot == 1 && r > 0) { up_u[c] = un; up_v[c] = vn; }
                if (slot == rows && r < C - 1) { dn_u[c] = un; dn_v[c] = vn; }
            }
            ua = uc; va = vc; uc = ub; vc = vb;
            slot += d;
        };
        if (cnt > 0) update(true);  // the edge rows (G > 1): sent, then the barrier's arrival
        if (G > 1) {
            cluster_arrive();
            for (int it = 1; it < cnt; ++it) update(false);
        } else {  // one band: the last edge row comes last
            for (int it = 1; it < cnt - 1; ++it) update(false);
            if (cnt > 1) update(true);
            cluster_arrive();
        }
        __syncthreads();  // the writes after the arrival before the next step reads them
        cluster_wait();
    }
    // scatter the own rows of the last buffer written
    const T* fu = at(steps & 1, 0, 1);
    const T* fv = at(steps & 1, 1, 1);
    for (int q = tid; q < rows * nx; q += nt) {
        const int g = node[j0 * nx + q];
        u_out[off + g] = fu[q];
        v_out[off + g] = fv[q];
    }
}

#define GSL_KERNEL(CL)                                                                           \
    template <typename T>                                                                        \
    __global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(1024, 1)                        \
        gsl_##CL(const T* __restrict__ u_in, const T* __restrict__ v_in, T* __restrict__ u_out,  \
                 T* __restrict__ v_out, const int* __restrict__ node, const int n, const int nx, \
                 const int ny, const int R, const int steps, const T* __restrict__ par,          \
                 const T* __restrict__ dts, const T ax, const T ay)                              \
    {                                                                                            \
        gsl_body<T, CL>(u_in, v_in, u_out, v_out, node, n, nx, ny, R, steps, par, dts, ax, ay);  \
    }

GSL_KERNEL(1)
GSL_KERNEL(2)
GSL_KERNEL(3)
GSL_KERNEL(4)
GSL_KERNEL(6)
GSL_KERNEL(8)
