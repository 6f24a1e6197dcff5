// common.cuh: pieces every softmax variant shares.
//
// The loader inlines this file into each variant's source string (CuPy's disk
// cache key does not cover #include'd files), with #line directives so that
// compiler messages name this file.
//
// - Acc<Tin, Tout>: the accumulation type. float for float16, bfloat16 and
//   float32; double as soon as either side is float64.
// - to_acc / from_acc: conversions between storage and accumulation types.
// - neg_inf, acc_exp: -inf and exp in the accumulation type.
// - MaxOp, SumOp, OnlineOp: reduction operators with their identities.
// - warp_reduce / block_reduce: butterfly shuffles inside a warp, then one
//   shared-memory step across warps. Every lane of every warp ends with the
//   same value, combined in the same order on every run (deterministic).
// - three_pass_row: max, sum, write over a row in global memory; the naive,
//   smem_tree, warp and block variants differ only in who shares the row and
//   how they combine partial results.
//
// Semantics come for free from IEEE arithmetic once the running max starts at
// -inf: a NaN or +inf in a row, or a row of only -inf, makes the row's sum
// NaN (inf - inf, -inf + inf), and then every output of the row is NaN.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace csm {

template <typename Tin, typename Tout> struct Acc { using type = float; };
template <typename Tout> struct Acc<double, Tout> { using type = double; };
template <typename Tin> struct Acc<Tin, double> { using type = double; };
template <> struct Acc<double, double> { using type = double; };

template <typename Tin, typename Tout>
using acc_t = typename Acc<Tin, Tout>::type;

template <typename A> __device__ __forceinline__ A to_acc(float v) { return static_cast<A>(v); }
template <typename A> __device__ __forceinline__ A to_acc(double v) { return static_cast<A>(v); }
template <typename A> __device__ __forceinline__ A to_acc(__half v) { return static_cast<A>(__half2float(v)); }
template <typename A> __device__ __forceinline__ A to_acc(__nv_bfloat16 v) { return static_cast<A>(__bfloat162float(v)); }

template <typename T> struct FromAcc;
template <> struct FromAcc<float> {
    template <typename A> __device__ __forceinline__ static float of(A v) { return static_cast<float>(v); }
};
template <> struct FromAcc<double> {
    template <typename A> __device__ __forceinline__ static double of(A v) { return static_cast<double>(v); }
};
template <> struct FromAcc<__half> {
    template <typename A> __device__ __forceinline__ static __half of(A v) { return __float2half_rn(static_cast<float>(v)); }
};
template <> struct FromAcc<__nv_bfloat16> {
    template <typename A> __device__ __forceinline__ static __nv_bfloat16 of(A v) { return __float2bfloat16_rn(static_cast<float>(v)); }
};
template <typename T, typename A> __device__ __forceinline__ T from_acc(A v) { return FromAcc<T>::of(v); }

template <typename A> __device__ __forceinline__ A neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return __longlong_as_double(0xfff0000000000000ll); }

__device__ __forceinline__ float acc_exp(float v) { return expf(v); }
__device__ __forceinline__ double acc_exp(double v) { return exp(v); }

__device__ __forceinline__ float acc_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double acc_max(double a, double b) { return fmax(a, b); }

template <typename A> struct MaxOp {
    __device__ __forceinline__ A identity() const { return neg_inf<A>(); }
    __device__ __forceinline__ A operator()(A a, A b) const { return acc_max(a, b); }
};

template <typename A> struct SumOp {
    __device__ __forceinline__ A identity() const { return A(0); }
    __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// Online softmax state: the running max m and the sum s of exp(x - m) so far.
template <typename A> struct MaxSum { A m; A s; };

// Rescale a partial sum taken against max `from` to max `to` (to >= from).
// Equal maxima keep the sum as it is, which also keeps -inf == -inf from
// producing exp(NaN); a NaN sum stays NaN because NaN * 0 is NaN.
template <typename A> __device__ __forceinline__ A rescale(A s, A from, A to) {
    return from == to ? s : s * acc_exp(from - to);
}

template <typename A> struct OnlineOp {
    __device__ __forceinline__ MaxSum<A> identity() const { return {neg_inf<A>(), A(0)}; }
    __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> a, MaxSum<A> b) const {
        const A m = acc_max(a.m, b.m);
        return {m, rescale(a.s, a.m, m) + rescale(b.s, b.m, m)};
    }
    // Fold one element x into the state. A -inf element adds nothing; an
    // element equal to a +inf max adds exp(inf - inf) = NaN, as it must.
    __device__ __forceinline__ MaxSum<A> add(MaxSum<A> a, A x) const {
        const A m = acc_max(a.m, x);
        const A e = x == neg_inf<A>() ? A(0) : acc_exp(x - m);
        return {m, rescale(a.s, a.m, m) + e};
    }
};

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ __forceinline__ double shfl_xor(double v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
template <typename A> __device__ __forceinline__ MaxSum<A> shfl_xor(MaxSum<A> v, int lane_mask) {
    return {shfl_xor(v.m, lane_mask), shfl_xor(v.s, lane_mask)};
}

// Butterfly reduction over the 32 lanes of a warp; every lane gets the result.
template <typename V, typename Op> __device__ __forceinline__ V warp_reduce(V v, Op op) {
#pragma unroll
    for (int lane_mask = 16; lane_mask > 0; lane_mask >>= 1) v = op(v, shfl_xor(v, lane_mask));
    return v;
}

// Reduction over the whole block (blockDim.x a multiple of 32, at most 1024).
// `scratch` holds 32 values in shared memory; the leading barrier lets a
// caller reuse it for consecutive reductions. Every thread gets the result.
template <typename V, typename Op> __device__ __forceinline__ V block_reduce(V v, Op op, V* scratch) {
    v = warp_reduce(v, op);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < static_cast<int>(blockDim.x >> 5) ? scratch[lane] : op.identity();
    return warp_reduce(v, op);
}

// Softmax of one row in three passes over global memory (max, sum of
// exp(x - max), write). The threads sharing the row start at `first` and step
// by `step`; reduce(v, op) combines their partial results and hands every one
// of them the total.
template <typename A, typename Tin, typename Tout, typename Reduce>
__device__ __forceinline__ void three_pass_row(const Tin* __restrict__ xr, Tout* __restrict__ yr, long long n,
                                               long long first, long long step, Reduce reduce) {
    A m = neg_inf<A>();
    for (long long i = first; i < n; i += step) m = acc_max(m, to_acc<A>(xr[i]));
    m = reduce(m, MaxOp<A>());
    A s = A(0);
    for (long long i = first; i < n; i += step) s += acc_exp(to_acc<A>(xr[i]) - m);
    s = reduce(s, SumOp<A>());
    const A inv = A(1) / s;
    for (long long i = first; i < n; i += step) yr[i] = from_acc<Tout>(acc_exp(to_acc<A>(xr[i]) - m) * inv);
}

}  // namespace csm
