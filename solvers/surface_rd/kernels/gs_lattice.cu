// Gray–Scott by explicit Euler on a lattice mesh (docs/MODELS.md §2.5, "Gray–Scott on lattice
// meshes"): the cotangent Laplacian of a planar right-triangle lattice is the 5-point Laplacian
// with mirrored ends (mesh/lattice.py), so a member's state can live in shared memory and many
// steps run in one launch.
//
// One member = one thread-block cluster of C blocks (blockIdx.x / C = member, the block's rank
// in the cluster = its strip). Block r owns lattice rows [r·R, min(ny, (r+1)·R)) and keeps them,
// with one halo row above and one below, in two buffers (a step reads one and writes the other)
// of (u, v) pairs, with one zero pair before the first buffer and one after the second.
// A step: each thread walks a column through a band of the strip's rows (G ≥ 2 bands a block)
// with the rows behind and at the walk in registers. The first band starts at the strip's first
// row and the last band walks up from its last row, so the two edge rows are the walks' first
// updates: each is also sent into the neighbouring block's halo row of the next buffer by an
// asynchronous store to the cluster's distributed shared memory (st.async) that counts its bytes
// on the neighbour's mbarrier for that buffer; the threads that read a halo row next step (the
// same first and last bands) wait on their own block's mbarrier for its bytes, the rest of the
// block goes on, and a __syncthreads ends the step. No cluster barrier a step: a neighbour cannot
// overwrite a halo row before it has been read, because it first waits for the edge row that
// each reading thread sends after its read. The walks' second updates store
// the physical ends' mirrors: row 1 into the halo above row 0 and row ny − 2 into the halo below
// row ny − 1 (their own block's). Columns are mirrored by the coefficients: the first column
// weighs its right neighbour twice and its left not at all, the last likewise; the pair read
// beyond a row's end (the row before's last node, the row after's first, or a zero pair) is
// then multiplied by 0 (it is finite unless the member has diverged).
//
// The step is written with the member's coefficients folded (dt·Du·ax,
// 1 − dt·(2Du(ax+ay) + F), ...), so a vertex costs 14 floating-point instructions, three paired
// shared-memory loads and one paired store. Every value uses rounded operations only (no
// contraction left to the compiler), so the result does not depend on C, the block size or the
// number of steps a launch takes: an ensemble member is bit for bit its solo run.
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


// distributed shared memory: 32-bit shared-window addresses, a neighbour's address, an
// asynchronous paired store that counts its bytes on the neighbour's mbarrier, and the mbarrier
__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ unsigned mapa_u32(unsigned a, int rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}
__device__ __forceinline__ void st_async(unsigned ra, float2 v, unsigned rm)
{
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
        ::"r"(ra), "f"(v.x), "f"(v.y), "r"(rm) : "memory");
}
__device__ __forceinline__ void st_async(unsigned ra, double2 v, unsigned rm)
{
    asm volatile(
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 [%0], {%1, %2}, [%3];"
        ::"r"(ra), "d"(v.x), "d"(v.y), "r"(rm) : "memory");
}
__device__ __forceinline__ void mbar_init(unsigned a, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned a, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity)
{
    unsigned done = 0;
    do {
        asm volatile(
            "{\n .reg .pred P;\n"
            " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%1], %2;\n"
            " selp.u32 %0, 1, 0, P;\n}"
            : "=r"(done) : "r"(a), "r"(parity) : "memory");
    } while (!done);
}

template <typename T> struct Pair;
template <> struct Pair<float> { typedef float2 type; };
template <> struct Pair<double> { typedef double2 type; };

// A member's step at one vertex, its coefficients folded (K: see gsl_body):
//   u' = Au·u + dtF + By·(uD + uU) + BxL·uL + BxR·uR − dt·u v²
//   v' = Av·v       + Cy·(vD + vU) + CxL·vL + CxR·vR + dt·u v²
// (a, b): the rows behind and ahead of the walk (their sum is the same in either order), c the
// vertex, (L, R) its left and right neighbours.
template <typename T>
struct Coef {
    T Au, dtF, By, BxL, BxR, Av, Cy, CxL, CxR, dt, ndt;
};

template <typename T, typename T2>
__device__ __forceinline__ T2 gsl_vertex(const Coef<T>& K, const T2 a, const T2 c, const T2 b,
                                         const T2 L, const T2 R)
{
    const T uv = rmul(c.x, c.y);
    const T uvv = rmul(uv, c.y);
    T au = rfma(K.Au, c.x, K.dtF);
    au = rfma(K.By, radd(a.x, b.x), au);
    au = rfma(K.BxL, L.x, au);
    au = rfma(K.BxR, R.x, au);
    T av = rmul(K.Av, c.y);
    av = rfma(K.Cy, radd(a.y, b.y), av);
    av = rfma(K.CxL, L.y, av);
    av = rfma(K.CxR, R.y, av);
    T2 n;
    n.x = rfma(K.ndt, uvv, au);
    n.y = rfma(K.dt, uvv, av);
    return n;
}

template <typename T, int C>
__device__ __forceinline__ void gsl_body(const T* __restrict__ u_in, const T* __restrict__ v_in,
                                         T* __restrict__ u_out, T* __restrict__ v_out,
                                         const int* __restrict__ node, const int n, const int nx,
                                         const int ny, const int R, const int steps,
                                         const T* __restrict__ par, const T* __restrict__ dts,
                                         const T ax, const T ay)
{
    typedef typename Pair<T>::type T2;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T2* sm = reinterpret_cast<T2*>(smem_raw);
    cg::cluster_group cl = cg::this_cluster();
    const int r = (int)cl.block_rank();
    const int m = blockIdx.x / C;
    const int tid = threadIdx.x, nt = blockDim.x;
    const int j0 = r * R, rows = min(ny, j0 + R) - j0;  // rows >= 4 (the host checks)
    const size_t off = (size_t)m * n;
    const int W = nx;              // a slot: nx nodes
    const int BUF = (R + 2) * W;   // a buffer: halo, R rows, halo
    // buffer p, slot (0 = halo above, 1..rows own, rows + 1 = halo below), column c
    auto at = [&](int p, int slot, int c) { return sm + 1 + p * BUF + slot * W + c; };
    const T dt = dts[m];
    if (dt == T(0)) {  // an inactive member: its rows copied (the caller's double buffer)
        for (int q = tid; q < rows * nx; q += nt) {
            const int g = node[j0 * nx + q];
            u_out[off + g] = u_in[off + g];
            v_out[off + g] = v_in[off + g];
        }
        return;  // (every block of this cluster returns here: no barrier is left waiting)
    }
    // gather: own rows and both halo rows (mirrored at the physical ends) into buffer 0, and
    // the zero pairs before and after the buffers
    for (int q = tid; q < (rows + 2) * nx; q += nt) {
        const int slot = q / nx, c = q - slot * nx;
        int j = j0 + slot - 1;
        j = j < 0 ? 1 : (j >= ny ? ny - 2 : j);
        const int g = node[j * nx + c];
        T2 x;
        x.x = u_in[off + g];
        x.y = v_in[off + g];
        *at(0, slot, c) = x;
    }
    if (tid < 2) {
        T2 z;
        z.x = T(0);
        z.y = T(0);
        sm[tid == 0 ? 0 : 2 * BUF + 1] = z;
    }
    // the member's coefficients; the first and last columns weigh their inner neighbour twice
    const T Du = par[4 * m], Dv = par[4 * m + 1], F = par[4 * m + 2];
    const T Fk = radd(F, par[4 * m + 3]);
    const T dDu = rmul(dt, Du), dDv = rmul(dt, Dv);
    // G bands of nx threads (a thread a column), each band >= 2 slots; band 0 starts at slot 1
    // walking down, the last band at slot `rows` walking up
    const int G = min(nt / nx, rows / 2);
    const bool has = tid < G * nx;
    const int g = has ? tid / nx : 0, c = has ? tid - g * nx : 0;
    const int lo = 1 + (g * rows) / G, hi = 1 + ((g + 1) * rows) / G;
    const bool up = g == G - 1;
    const int first = up ? hi - 1 : lo, cnt = has ? hi - lo : 0;
    const int ds = up ? -W : W;  // the walk's step in pairs
    const T wL = c == 0 ? T(0) : (c == nx - 1 ? T(2) : T(1));
    const T wR = c == nx - 1 ? T(0) : (c == 0 ? T(2) : T(1));
    Coef<T> K;
    K.Au = rsub(T(1), rmul(dt, rfma(rmul(T(2), Du), radd(ax, ay), F)));
    K.dtF = rmul(dt, F);
    K.By = rmul(dDu, ay);
    K.BxL = rmul(wL, rmul(dDu, ax));
    K.BxR = rmul(wR, rmul(dDu, ax));
    K.Av = rsub(T(1), rmul(dt, rfma(rmul(T(2), Dv), radd(ax, ay), Fk)));
    K.Cy = rmul(dDv, ay);
    K.CxL = rmul(wL, rmul(dDv, ax));
    K.CxR = rmul(wR, rmul(dDv, ax));
    K.dt = dt;
    K.ndt = -dt;
    // where the walk's second update also goes, for each buffer written (q = 0, 1): the mirrors
    // of the physical ends into the own halo rows; elsewhere its own place again (the same value
    // stored twice)
    const bool send_up = g == 0 && r > 0, send_dn = up && r < C - 1;
    T2 *x2_0, *x2_1;
    {
        T2* own = at(0, first, c);
        x2_0 = (g == 0 && r == 0) ? at(0, 0, c)
                                  : ((up && r == C - 1) ? at(0, rows + 1, c) : own + ds);
        own = at(1, first, c);
        x2_1 = (g == 0 && r == 0) ? at(1, 0, c)
                                  : ((up && r == C - 1) ? at(1, rows + 1, c) : own + ds);
    }
    // the first update of a thread in the first band (r > 0) or the last (r < C - 1) is an edge
    // row: sent into the neighbour's halo row of the buffer written, its bytes counted on the
    // neighbour's mbarrier for that buffer (mbar[q] completes once each two steps)
    __shared__ __align__(8) unsigned long long mbar[2];
    const bool sender = send_up || send_dn;
    const int nb = send_up ? r - 1 : r + 1;
    unsigned ra0 = 0, ra1 = 0, rm0 = 0, rm1 = 0;
    if (sender) {
        ra0 = mapa_u32(smem_u32(send_up ? at(0, R + 1, c) : at(0, 0, c)), nb);
        ra1 = mapa_u32(smem_u32(send_up ? at(1, R + 1, c) : at(1, 0, c)), nb);
        rm0 = mapa_u32(smem_u32(&mbar[0]), nb);
        rm1 = mapa_u32(smem_u32(&mbar[1]), nb);
    }
    const unsigned lm0 = smem_u32(&mbar[0]), lm1 = smem_u32(&mbar[1]);
    const unsigned bytes = (unsigned)(((r > 0) + (r < C - 1)) * nx * sizeof(T2));
    if (tid == 0) {
        mbar_init(lm0, 1);
        mbar_init(lm1, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cl.sync();  // every block of the cluster runs, has its buffer and its barriers
    for (int s = 0; s < steps; ++s) {
        const int p = s & 1, q = p ^ 1;
        // the halo rows that this step's neighbours send (none in the last step: never read)
        if (tid == 0 && bytes != 0 && s < steps - 1) mbar_expect(q ? lm1 : lm0, bytes);
        const T2* P = at(p, first, c);
        T2* O = at(q, first, c);
        if (cnt > 0) {
            // a thread that reads a halo row (its walk starts next to it) waits for its bytes
            if (sender && s > 0) mbar_wait(p ? lm1 : lm0, ((s - 1) >> 1) & 1);
            T2 a = P[-ds], cc = P[0], b = P[ds];
            T2 nv = gsl_vertex(K, a, cc, b, P[-1], P[1]);
            *O = nv;
            if (sender && s < steps - 1) st_async(q ? ra1 : ra0, nv, q ? rm1 : rm0);
            P += ds;
            O += ds;
            a = cc;
            cc = b;
            b = P[ds];
            nv = gsl_vertex(K, a, cc, b, P[-1], P[1]);
            *O = nv;
            *(q ? x2_1 : x2_0) = nv;
#pragma unroll 3
            for (int it = 2; it < cnt; ++it) {
                P += ds;
                O += ds;
                a = cc;
                cc = b;
                b = P[ds];
                *O = gsl_vertex(K, a, cc, b, P[-1], P[1]);
            }
        }
        __syncthreads();  // this step's rows written before the next step reads them
    }
    cl.sync();  // (no block leaves while a neighbour may still address its shared memory)
    // scatter the own rows of the last buffer written
    const int fin = steps & 1;
    for (int q = tid; q < rows * nx; q += nt) {
        const int slot = q / nx, c2 = q - slot * nx;
        const int g2 = node[j0 * nx + q];
        const T2 x = *at(fin, slot + 1, c2);
        u_out[off + g2] = x.x;
        v_out[off + g2] = x.y;
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
