// The swept time-space decomposition on one GPU (docs/MODELS.md [P3], Magee & Niemeyer §4-5, "Shared"),
// and the classic kernel, generic over a stencil scheme `Op` (heat.cu, ks.cu, euler.cu).
//
// A scheme is a sequence of tiers (sub-time-steps). Tier j writes row j%2 of a node from row
// (j-1)%2 at the node and its Op::R neighbours each side and from the node's own old value in row
// j%2 (the midpoint rule's u^m in its final tier). Op provides
//     static constexpr int R, NV;                  stencil radius, components per node
//     T fetch(p, stride, c, r, g, n, wrap) const   component c at offset r from node g, with
//                                                  the boundary rule where g + r leaves [0, n)
//     template <class A> void tier(par, A, b, out) tier `par` (= j % 2) from the accessor A(c, r)
//                                                  and the node's own old values b[NV] -> out[NV]
// so the classic and the swept kernels evaluate the same arithmetic and agree to round-off.
//
// Swept: a block of W = blockDim.x threads owns W nodes and a shared working array of two rows
// (even and odd tiers) of W + 2R values per component. Its domain of dependence spans TT = W/(2R)
// tiers. Stages (one kernel launch each):
//   up       blocks [bW, bW+W): tiers 1..TT-1 on shrinking ranges [Rj, W-1-Rj] (the triangle);
//   diamond  blocks shifted by `shift` (W/2, then 0, ...): tiers 1..TT on growing ranges
//            [W/2-Rj, W/2+Rj-1] (the full row at tier TT), then TT+1..2TT-1 shrinking again;
//   down     the growing half only; writes the full row (tier TT) to the state.
// Interior values are overwritten as soon as they are used; what is left in the two rows at the
// end of a stage is exactly the block's left and right edges (Fig. 2a), dumped to global memory
// E[row][comp][node]; the next stage reads the W + 2R window around its shifted block (Fig. 2b).
// The block that straddles the ends of the domain applies the boundary rule at its centre via
// Op::fetch (node index g known per thread), as the paper's Shared variant does.
#pragma once

extern __shared__ __align__(16) unsigned char swept_smem[];

template <class Op, typename T>
struct Stencil {
    const Op& op;
    const T* p;   // the node's value in component 0 of the source row
    int stride;   // distance between components
    int g, n, wrap;
    __device__ __forceinline__ T operator()(int c, int r) const
    {
        return op.fetch(p, stride, c, r, g, n, wrap);
    }
};

// One tier at node g: a = source row at the node, b_io = the node's own slot of the target row.
template <class Op, typename T>
__device__ __forceinline__ void tier_node(const Op& op, int par, const T* a, int sa, int wrap,
                                          const T* b_in, T* b_out, int sb, int g, int n)
{
    Stencil<Op, T> A{op, a, sa, g, n, wrap};
    T b[Op::NV], out[Op::NV];
#pragma unroll
    for (int c = 0; c < Op::NV; ++c) b[c] = b_in[c * sb];
    op.tier(par, A, b, out);
#pragma unroll
    for (int c = 0; c < Op::NV; ++c) b_out[c * sb] = out[c];
}

// Classic: one thread per node, one launch per tier, global memory (arrays [comp][node]).
// A: source row; B: own old values; out: target (may be B: each thread touches its node only).
template <class Op, typename T>
__device__ void classic_tier(const Op& op, const T* __restrict__ A, const T* B, T* out, int n,
                             int par)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    tier_node(op, par, A + g, n, n, B + g, out + g, n, g, n);
}

template <class Op, typename T>
__device__ __forceinline__ void swept_tier(const Op& op, T* s, int SW, int j, int lo, int hi,
                                           int x, int g, int n)
{
    const int par = j & 1;
    if (x >= lo && x <= hi) {
        T* row_b = s + par * Op::NV * SW + Op::R + x;
        const T* row_a = s + (par ^ 1) * Op::NV * SW + Op::R + x;
        tier_node(op, par, row_a, SW, 0, row_b, row_b, SW, g, n);
    }
    __syncthreads();
}

template <class Op, typename T>
__device__ __forceinline__ void swept_load(const T* __restrict__ E, T* s, int SW, int n, int g0)
{
    const int W = blockDim.x;
    for (int i = threadIdx.x; i < SW; i += W) {
        int gg = g0 - Op::R + i;
        if (gg < 0) gg += n;
        if (gg >= n) gg -= n;
        if (gg >= n) gg -= n;
#pragma unroll
        for (int k = 0; k < 2 * Op::NV; ++k) s[k * SW + i] = E[(size_t)k * n + gg];
    }
    __syncthreads();
}

template <class Op, typename T>
__device__ __forceinline__ void swept_dump(const T* s, T* __restrict__ E, int SW, int n, int g)
{
#pragma unroll
    for (int k = 0; k < 2 * Op::NV; ++k) E[(size_t)k * n + g] = s[k * SW + Op::R + threadIdx.x];
}

template <class Op, typename T>
__device__ __forceinline__ void swept_expand(const Op& op, T* s, int SW, int x, int g, int n)
{
    const int W = blockDim.x, TT = W / (2 * Op::R);
    for (int j = 1; j <= TT; ++j)
        swept_tier(op, s, SW, j, W / 2 - Op::R * j, W / 2 + Op::R * j - 1, x, g, n);
}

template <class Op, typename T>
__device__ __forceinline__ void swept_contract(const Op& op, T* s, int SW, int x, int g, int n)
{
    const int W = blockDim.x, TT = W / (2 * Op::R);  // TT is even: tier TT + j has j's parity
    for (int j = 1; j < TT; ++j)
        swept_tier(op, s, SW, j, Op::R * j, W - 1 - Op::R * j, x, g, n);
}

template <class Op, typename T>
__device__ void swept_up(const Op& op, const T* __restrict__ u, T* __restrict__ E, int n)
{
    T* s = reinterpret_cast<T*>(swept_smem);
    const int W = blockDim.x, x = threadIdx.x, SW = W + 2 * Op::R;
    const int g = blockIdx.x * W + x;
#pragma unroll
    for (int c = 0; c < Op::NV; ++c) s[c * SW + Op::R + x] = u[(size_t)c * n + g];
    __syncthreads();
    swept_contract(op, s, SW, x, g, n);
    swept_dump<Op>(s, E, SW, n, g);
}

template <class Op, typename T>
__device__ void swept_diamond(const Op& op, const T* __restrict__ Ein, T* __restrict__ Eout,
                              int n, int shift)
{
    T* s = reinterpret_cast<T*>(swept_smem);
    const int W = blockDim.x, x = threadIdx.x, SW = W + 2 * Op::R;
    const int g0 = blockIdx.x * W + shift;
    const int g = (g0 + x < n) ? g0 + x : g0 + x - n;
    swept_load<Op>(Ein, s, SW, n, g0);
    swept_expand(op, s, SW, x, g, n);
    swept_contract(op, s, SW, x, g, n);
    swept_dump<Op>(s, Eout, SW, n, g);
}

template <class Op, typename T>
__device__ void swept_down(const Op& op, const T* __restrict__ Ein, T* __restrict__ u, int n,
                           int shift)
{
    T* s = reinterpret_cast<T*>(swept_smem);
    const int W = blockDim.x, x = threadIdx.x, SW = W + 2 * Op::R;
    const int g0 = blockIdx.x * W + shift;
    const int g = (g0 + x < n) ? g0 + x : g0 + x - n;
    swept_load<Op>(Ein, s, SW, n, g0);
    swept_expand(op, s, SW, x, g, n);
#pragma unroll
    for (int c = 0; c < Op::NV; ++c) u[(size_t)c * n + g] = s[c * SW + Op::R + x];  // row 0
}

// The four kernels of a scheme (NAME_classic, NAME_up, NAME_diamond, NAME_down) that the host
// launches (swept/fused.py): ARGS, the scheme's parameters as kernel arguments (a macro of T
// that may hold commas, e.g. HEAT_ARGS), and OP, the Op built from them (e.g. HEAT_OP).
#define SWEPT_KERNELS(NAME, ARGS, OP)                                                            \
    template <typename T>                                                                        \
    __global__ void NAME##_classic(const T* __restrict__ A, const T* B, T* out, int n, int par,  \
                                   ARGS)                                                         \
    {                                                                                            \
        classic_tier(OP, A, B, out, n, par);                                                     \
    }                                                                                            \
    template <typename T>                                                                        \
    __global__ void NAME##_up(const T* __restrict__ u, T* __restrict__ E, int n, ARGS)           \
    {                                                                                            \
        swept_up(OP, u, E, n);                                                                   \
    }                                                                                            \
    template <typename T>                                                                        \
    __global__ void NAME##_diamond(const T* __restrict__ Ein, T* __restrict__ Eout, int n,       \
                                   int shift, ARGS)                                              \
    {                                                                                            \
        swept_diamond(OP, Ein, Eout, n, shift);                                                  \
    }                                                                                            \
    template <typename T>                                                                        \
    __global__ void NAME##_down(const T* __restrict__ Ein, T* __restrict__ u, int n, int shift,  \
                                ARGS)                                                            \
    {                                                                                            \
        swept_down(OP, Ein, u, n, shift);                                                        \
    }
