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
// - warp_max_sum / block_max_sum: a row's (max, sum) from per-thread pairs,
//   max first, then the sums rescaled once (the register-resident variants).
// - three_pass_row: max, sum, write over a row in global memory; the naive,
//   smem_tree, warp and block variants differ only in who shares the row and
//   how they combine partial results.
// - Vec, load_chunk, store_chunk, widen: rows as 16-byte chunks (below).
// - Span, Slots, load_granules, store_granules (load_elements, store_elements): a
//   row of any 16-byte phase in ceil(N / V) chunks, its partial first and last granules
//   folded into one, read whole inside x's bytes (warp_rows' plain path).
// - load_strided, store_strided: a row element-strided over its G lanes, lane l
//   holding elements l + G * i in scalar accesses, any phase with no edge code
//   (warp_rows' plain kernels O = -2: float32 rows of N % V != 0, float64 rows of any N).
// - Held: what a register-resident variant keeps of its chunks between
//   reading a row and writing it; HeldGrad the same for the backward kernels.
// - Fused, RowMask: the forward's scale= and where= (softmax(scale * x) over
//   the positions a boolean mask keeps), for warp_rows, split_row and two_pass.
// - copy_async16, copies_done, copies_grouped, copies_waited: 16-byte copies
//   to shared memory (split_row's cache, strided_smem's slices), waited for
//   all at once or a group at a time.
// - cluster_sync, cluster_load: thread-block clusters (sm_90), for the
//   variants that split a row or a column over several blocks.
// - RowTree: a row's partials over a block, a cluster or blocks anywhere on
//   the grid (GridBoard) along one tree that depends on the row's thread
//   count alone (split_row).
// - merge_pairs: the (max, sum) of pairs in shared memory, in order (strided's
//   and strided_smem's columns over a block's row-threads and a cluster).
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
__device__ __forceinline__ float acc_log(float v) { return logf(v); }
__device__ __forceinline__ double acc_log(double v) { return log(v); }

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

// exp(a - m), for float as exp2((a - m) * log2(e)): one FADD, one FMUL and
// one EX2 per element. Subtracting first keeps the argument exact where a and
// m are close (|a| around 1e4 included); folding m * log2(e) into one FFMA
// would round the product at 1e4 * 2^-24 and miss the float32 tolerance there.
// A scale known to be 1 at compile time (warp_rows' GRANULES kernels: plain, 2-byte values, float sums): no
// product an element. scale * a rounded is a itself for every float a but a subnormal, which -ftz makes 0 in the
// product and makes 0 again as an operand of the difference that follows (sub.ftz), and a NaN, which leaves the
// difference NaN either way: so a - m has the bits of scaled(a, 1) - m. Float only (no overload for double).
struct Unit {};

struct FastExp {
    static constexpr float LOG2E = 1.4426950408889634f;
    __device__ __forceinline__ static float of(float a, float m) { return exp2f((a - m) * LOG2E); }
    __device__ __forceinline__ static double of(double a, double m) { return exp(a - m); }
    // scale * a - m, the product rounded before the difference (__fmul_rn:
    // never contracted into an FFMA). m is the max times scale rounded the
    // same way, so the max's own term is exactly 0; an FFMA would leave the
    // product's rounding residual there, up to half an ulp of m (past 1 for
    // |m| > 2^24; the fuzz run found NaN at scale 0.375 on 4.7e37). So scale *
    // x is rounded to the accumulation type, as softmax(x * scale) computed
    // in it would be (reference.py models it); scale = 1 gives a - m's bits.
    // The max m itself must come from scaled() too: a plain product there
    // is fused by ptxas into the difference, which then leaves the residual
    // (split_row's float32 K = 4 kernel, sm_90, at 19ccd36: FFMA max * scale -
    // product; the long fuzz run found NaN for a row of four values near 1e38 at
    // scale 0.375).
    __device__ __forceinline__ static float scaled(float a, float scale) { return __fmul_rn(a, scale); }
    __device__ __forceinline__ static double scaled(double a, double scale) { return __dmul_rn(a, scale); }
    __device__ __forceinline__ static float shifted(float a, float scale, float m) { return scaled(a, scale) - m; }
    __device__ __forceinline__ static double shifted(double a, double scale, double m) { return scaled(a, scale) - m; }
    __device__ __forceinline__ static float shifted(float a, Unit, float m) { return a - m; }
    // exp(scale * a - m), the temperature of softmax(scale * x) folded in.
    __device__ __forceinline__ static float of(float a, float scale, float m) { return exp2f(shifted(a, scale, m) * LOG2E); }
    __device__ __forceinline__ static double of(double a, double scale, double m) { return exp(shifted(a, scale, m)); }
    __device__ __forceinline__ static float of(float a, Unit, float m) { return exp2f(shifted(a, Unit(), m) * LOG2E); }
    // The max to subtract in a sum over values whose max is m: m itself, but 0
    // when m is -inf (only -inf values), so that exp(-inf - 0) = 0 needs no test.
    template <typename A> __device__ __forceinline__ static A sum_shift(A m) { return m == neg_inf<A>() ? A(0) : m; }
};

// Rescale a partial sum taken against max `from` to max `to` (to >= from).
// Equal maxima keep the sum as it is, which also keeps -inf == -inf from
// producing exp(NaN); a NaN sum stays NaN because NaN * 0 is NaN. exp2 (one
// MUFU op) rather than expf: rescales sit on the reductions' serial path.
template <typename A> __device__ __forceinline__ A rescale(A s, A from, A to) {
    return from == to ? s : s * FastExp::of(from, to);
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

// Butterfly reduction over aligned groups of WIDTH lanes (a power of two, at
// most 32); every lane gets its group's result. All 32 lanes must take part.
template <int WIDTH = 32, typename V, typename Op> __device__ __forceinline__ V warp_reduce(V v, Op op) {
#pragma unroll
    for (int lane_mask = WIDTH / 2; lane_mask > 0; lane_mask >>= 1) v = op(v, shfl_xor(v, lane_mask));
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

// A row's (max, sum) from every thread's pair (m, s), s the sum of
// exp(a - sum_shift(m)) over the thread's values: the max first (a butterfly
// of fmax), then each thread's sum rescaled to it once and summed. Merging
// pairs level by level (OnlineOp) puts two exponentials on every level of
// the serial path; this puts one in all. H100, 2026-11-22 (clean L2),
// together with rescale's exp2: split_row 4096 x 4096 bfloat16 23.6 -> 21.8 us,
// 4096 x 1024 float32 13.9 -> 13.0, 128 x 32000 float32 16.1 -> 14.7;
// warp_rows 4096 x 1024 bfloat16 9.1 -> 8.3, 4096 x 256 float32 6.7 -> 6.4.
// Deterministic, like warp_reduce and block_reduce.
template <int WIDTH = 32, typename A> __device__ __forceinline__ MaxSum<A> warp_max_sum(MaxSum<A> t) {
    const A m = warp_reduce<WIDTH>(t.m, MaxOp<A>());
    return {m, warp_reduce<WIDTH>(rescale(t.s, t.m, m), SumOp<A>())};
}

// R values a lane (R a power of two, at most 32) reduced over the warp at once,
// transposed: at each of the first log2(R) levels a lane keeps half of its
// values (the upper half where its lane bit is set) and swaps the other half
// with its partner, so a level moves half as many values as the one before;
// then the lanes that share a value finish it with plain butterfly levels.
// Lane l ends with value l / (32 / R)'s result (R = 4: lanes 0-7 value 0),
// combined as lane 0 of R separate warp_reduce butterflies combines it: the
// lower lane's half first at every level, so the same bits (op need not
// commute). R - 1 + 5 - log2(R) shuffles in place of 5R (R = 4: 6 for 20).
// split_row's folds reduce their pairs so (RowTree::reduce, warp_max_sum
// below: a max, R shuffles to share the maxima, a sum): a row's first level,
// one pair at a time, took 1280 warp shuffles for a fold of 4 on 1024 threads
// or of 8 on 512, against 160 for the row unfolded on 512; transposed, 512 and
// 416. H200, 2026-12-03
// (docs/perf/transposed-folds-s64-h200.txt), auto, us: softmax 8192 x 50257
// bfloat16 434.3 -> 424.2 (89% -> 91% of copy), 4096 x 40001 bfloat16 180.4
// -> 175.5, 4096 x 65537 bfloat16 346.8 -> 336.4; float32 8192 x 50257 and
// log_softmax 8192 x 50257 bfloat16 level. A fold of 8 on 512 threads
// (fold8.py, two calls) at 4096 x 65537 bfloat16: 311.5 -> 286.5.
template <int R, typename V, typename Op> __device__ __forceinline__ V warp_reduce_each(V (&v)[R], Op op) {
    static_assert(R >= 1 && R <= 32 && (R & (R - 1)) == 0, "R: a power of two, at most 32");
    const int lane = threadIdx.x & 31;
    int lane_mask = 16;
#pragma unroll
    for (int half = R / 2; half > 0; half /= 2, lane_mask >>= 1) {
        const bool upper = lane & lane_mask;
#pragma unroll
        for (int i = 0; i < half; ++i) {
            const V mine = upper ? v[i + half] : v[i];
            const V theirs = shfl_xor(upper ? v[i] : v[i + half], lane_mask);
            v[i] = upper ? op(theirs, mine) : op(mine, theirs);
        }
    }
#pragma unroll
    for (; lane_mask > 0; lane_mask >>= 1) {
        const V theirs = shfl_xor(v[0], lane_mask);
        v[0] = lane & lane_mask ? op(theirs, v[0]) : op(v[0], theirs);
    }
    return v[0];
}

// warp_max_sum of R pairs a lane at once (a thread's folds), transposed as
// warp_reduce_each: lane l gets pair l / (32 / R)'s (max, sum) with the bits of
// lane 0 of warp_max_sum on that pair alone. Every lane rescales its own sums
// to their pairs' maxima, read from the lanes that hold them: lane 0's maxima,
// where warp_max_sum's lanes each used their own, which differ at most in a
// zero's sign (or a NaN's payload), and rescale gives the same bits for either.
template <int R, typename A> __device__ __forceinline__ MaxSum<A> warp_max_sum(const MaxSum<A> (&t)[R]) {
    A v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = t[r].m;
    const A m = warp_reduce_each(v, MaxOp<A>());
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = rescale(t[r].s, t[r].m, __shfl_sync(0xffffffffu, m, r * (32 / R)));
    return {m, warp_reduce_each(v, SumOp<A>())};
}

// split_row's `level` for RowTree: warp_max_sum of one pair, or of a fold's R pairs at once.
struct MaxSumLevel {
    template <typename A> __device__ __forceinline__ MaxSum<A> operator()(MaxSum<A> p) const { return warp_max_sum(p); }
    template <int R, typename A> __device__ __forceinline__ MaxSum<A> operator()(const MaxSum<A> (&p)[R]) const {
        return warp_max_sum(p);
    }
};

// The same over a block (blockDim.x a multiple of 32); scratch holds 32 pairs,
// the warps' maxima in .m and their sums in .s. The leading barrier lets a
// caller reuse it for consecutive rows.
template <typename A> __device__ __forceinline__ MaxSum<A> block_max_sum(MaxSum<A> t, MaxSum<A>* scratch) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = static_cast<int>(blockDim.x >> 5);
    const A warp_m = warp_reduce(t.m, MaxOp<A>());
    __syncthreads();
    if (lane == 0) scratch[warp].m = warp_m;
    __syncthreads();
    const A m = warp_reduce(lane < warps ? scratch[lane].m : neg_inf<A>(), MaxOp<A>());
    const A warp_s = warp_reduce(rescale(t.s, t.m, m), SumOp<A>());
    if (lane == 0) scratch[warp].s = warp_s;
    __syncthreads();
    return {m, warp_reduce(lane < warps ? scratch[lane].s : A(0), SumOp<A>())};
}

// -- rows held in registers as 16-byte chunks -----------------------------------
//
// A row is cut into 16-byte chunks counted from the 16-byte boundary at or
// before its first element: chunk c holds elements [c*V - shift, c*V - shift + V)
// where V = 16 / sizeof(T) and `shift` is the row's misalignment in elements.
// Whole chunks inside the row move as one 16-byte access; the partial first and
// last chunks move element by element (or, for some 2-byte kernels, a word at a
// time: load_chunk's PART_WORDS) and are padded (-inf, or zeros in the
// gradients). So any N, and views such as x[:, 1:], are served without reading
// outside the row.

// Storage types as raw bits, and back.
template <typename T> struct Bits;
template <> struct Bits<float> {
    using U = unsigned;
    __device__ __forceinline__ static U of(float v) { return __float_as_uint(v); }
    __device__ __forceinline__ static float to(U u) { return __uint_as_float(u); }
};
template <> struct Bits<double> {
    using U = unsigned long long;
    __device__ __forceinline__ static U of(double v) { return static_cast<U>(__double_as_longlong(v)); }
    __device__ __forceinline__ static double to(U u) { return __longlong_as_double(static_cast<long long>(u)); }
};
template <> struct Bits<__half> {
    using U = unsigned short;
    __device__ __forceinline__ static U of(__half v) { return __half_as_ushort(v); }
    __device__ __forceinline__ static __half to(U u) { return __ushort_as_half(u); }
};
template <> struct Bits<__nv_bfloat16> {
    using U = unsigned short;
    __device__ __forceinline__ static U of(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
    __device__ __forceinline__ static __nv_bfloat16 to(U u) { return __ushort_as_bfloat16(u); }
};

// A chunk is four 32-bit words, so that 2-byte values stay two to a register
// (an array of eight 16-bit values would take a register each).
template <typename T> struct alignas(16) Vec {
    static constexpr int size = 16 / sizeof(T);
    unsigned w[4];
    __device__ __forceinline__ T get(int k) const {
        if constexpr (sizeof(T) == 2) return Bits<T>::to(static_cast<unsigned short>(w[k / 2] >> (k % 2 * 16)));
        else if constexpr (sizeof(T) == 4) return Bits<T>::to(w[k]);
        else return Bits<T>::to(static_cast<unsigned long long>(w[2 * k + 1]) << 32 | w[2 * k]);
    }
    __device__ __forceinline__ void set(int k, T value) {
        const auto u = Bits<T>::of(value);
        if constexpr (sizeof(T) == 2) {
            const int at = k % 2 * 16;
            w[k / 2] = (w[k / 2] & ~(0xffffu << at)) | static_cast<unsigned>(u) << at;
        } else if constexpr (sizeof(T) == 4) {
            w[k] = u;
        } else {
            w[2 * k] = static_cast<unsigned>(u);
            w[2 * k + 1] = static_cast<unsigned>(u >> 32);
        }
    }
};

// A 2-byte value of a word (its low or high half) widened to float through
// volatile PTX, one instruction straight from the packed word, so that the
// row stays packed two values to a register. Volatile keeps NVVM from
// reusing one widening for another; ptxas, which sees plain instructions,
// still merges two widenings of a word written alike, and then keeps the
// row's widened values alive from its read to its write. So the pass that
// writes a row (Normalize, HeldGrad) widens in other instructions than the
// passes that read it: bfloat16 through one byte permute, half through a
// permute that swaps the halves before the conversion. Merged, the 2-byte
// kernels took up to twice float32's registers (sm_90, NVRTC 13.5: split_row
// gradients K = 4 in clusters 85 against 48, the plain split_row
// log_softmax K = 8 94 against 56); apart, 48 and 61. A kernel may widen
// alike (P = read) and keep the widened row where that costs it less than
// widening twice (warp_rows' forward: warp_rows.cu).
enum class WidenPass { read, write };
template <WidenPass P = WidenPass::read>
__device__ __forceinline__ float widen_half_word(unsigned w, bool high, const __nv_bfloat16*) {
    float f;
    if constexpr (P == WidenPass::write) {
        if (high) asm volatile("prmt.b32 %0, %1, 0, 0x3244;" : "=f"(f) : "r"(w));
        else asm volatile("prmt.b32 %0, %1, 0, 0x1044;" : "=f"(f) : "r"(w));
    } else {
        if (high) asm volatile("and.b32 %0, %1, 0xffff0000;" : "=f"(f) : "r"(w));
        else asm volatile("shl.b32 %0, %1, 16;" : "=f"(f) : "r"(w));
    }
    return f;
}
template <WidenPass P = WidenPass::read>
__device__ __forceinline__ float widen_half_word(unsigned w, bool high, const __half*) {
    float f;
    if constexpr (P == WidenPass::write) {
        if (high) asm volatile("{ .reg .b32 s; .reg .b16 lo, hi; prmt.b32 s, %1, 0, 0x1032; mov.b32 {lo, hi}, s; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(w));
        else asm volatile("{ .reg .b32 s; .reg .b16 lo, hi; prmt.b32 s, %1, 0, 0x1032; mov.b32 {lo, hi}, s; cvt.f32.f16 %0, hi; }" : "=f"(f) : "r"(w));
    } else {
        if (high) asm volatile("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=f"(f) : "r"(w));
        else asm volatile("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(w));
    }
    return f;
}

// Element k of a chunk in the accumulation type (P: the pass that widens it, above).
template <typename A, WidenPass P = WidenPass::read, typename T> __device__ __forceinline__ A widen(const Vec<T>& v, int k) {
    if constexpr (sizeof(T) == 2) return static_cast<A>(widen_half_word<P>(v.w[k / 2], k % 2 == 1, static_cast<const T*>(nullptr)));
    else return static_cast<A>(v.get(k));
}

template <typename T> __device__ __forceinline__ int misalignment(const T* p) {
    return static_cast<int>((reinterpret_cast<unsigned long long>(p) & 15ull) / sizeof(T));
}

// -inf in a storage type (padding for partial chunks).
template <typename T> __device__ __forceinline__ T storage_neg_inf();
template <> __device__ __forceinline__ float storage_neg_inf<float>() { return neg_inf<float>(); }
template <> __device__ __forceinline__ double storage_neg_inf<double>() { return neg_inf<double>(); }
template <> __device__ __forceinline__ __half storage_neg_inf<__half>() { return __ushort_as_half(0xfc00); }
template <> __device__ __forceinline__ __nv_bfloat16 storage_neg_inf<__nv_bfloat16>() { return __ushort_as_bfloat16(0xff80); }

template <typename T> __device__ __forceinline__ Vec<T> padding_chunk() {
    Vec<T> out;
#pragma unroll
    for (int k = 0; k < Vec<T>::size; ++k) out.set(k, storage_neg_inf<T>());
    return out;
}

// +0 in every element (all bits clear, whatever the type).
template <typename T> __device__ __forceinline__ Vec<T> zero_chunk() { return Vec<T>{{0u, 0u, 0u, 0u}}; }

// How a whole chunk is read: a plain 16-byte load, or one with an L2 hint.
struct PlainLoad {
    template <typename T> __device__ __forceinline__ Vec<T> operator()(const T* p) const {
        return *reinterpret_cast<const Vec<T>*>(p);
    }
};

// Ask L2 for the bytes at p now (a hint: no register waits on it, and it
// does not fault).
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// Chunk and element indices inside a row are int: the register-resident
// variants hold at most a few million elements of a row.
// Elements outside the row read as `pad`'s (-inf by default: they add
// nothing to a max or to a sum of exponentials; the backward kernels pad
// with zeros). `whole` (a constant where given): the caller knows chunk c
// lies inside the row (shift 0, n a multiple of V), so the element path is
// not compiled. PART_WORDS: a 2-byte part chunk is read a word at a time (the
// branch below); split_row.cu's split_row_backward (kPartWords) says which of
// its kernels set it and why; the other kernels keep the element path.
template <bool PART_WORDS = false, typename T, typename Load = PlainLoad>
__device__ __forceinline__ Vec<T> load_chunk(const T* __restrict__ row, int n, int shift, int c, Load load = {},
                                             const Vec<T>& pad = padding_chunk<T>(), bool whole = false) {
    constexpr int V = Vec<T>::size;
    const int e0 = c * V - shift;
    if (whole || (e0 >= 0 && e0 + V <= n)) return load(row + e0);
    Vec<T> out = pad;
    if constexpr (PART_WORDS && sizeof(T) == 2) {
        // A part chunk of 2-byte values a word at a time: a word whose two elements lie in the row in one 4-byte
        // load (the chunk starts on a 16-byte boundary), at most one word at each end of the row by halves. Its
        // elements one at a time, each merged into its word as it landed, made the thread holding a row's part
        // chunk wait for each load before the next went out, and the row's sum wait for that thread.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int a = e0 + 2 * i;
            const bool low = a >= 0 && a < n, high = a + 1 >= 0 && a + 1 < n;
            if (low && high) out.w[i] = *reinterpret_cast<const unsigned*>(row + a);
            else if (low) out.set(2 * i, row[a]);
            else if (high) out.set(2 * i + 1, row[a + 1]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (e0 + k >= 0 && e0 + k < n) out.set(k, row[e0 + k]);
    }
    return out;
}

// Whether an output row's chunk stores line up with the input row's chunks:
// the outputs of every input chunk (V = 16 / sizeof(Tin) of them, starting
// `shift` elements before the row) start on a 16-byte boundary. With one
// element width, the two rows' misalignments are equal.
template <typename Tin, typename Tout> __device__ __forceinline__ bool stores_aligned(const Tout* row, int shift) {
    return ((reinterpret_cast<unsigned long long>(row) - static_cast<unsigned long long>(shift) * sizeof(Tout)) &
            15ull) == 0;
}

// Write chunk c (counted against the input row's shift) of the output row;
// value(k) gives its k-th output, V = 16 / sizeof(Tin) of them. 16-byte
// stores when the chunk is whole and `aligned` (stores_aligned): one, or two
// for float32 out of a 2-byte input; element stores otherwise. `streaming`
// marks the 16-byte stores evict-first in L2 (st.global.cs). `whole`, as in
// load_chunk: the chunk is whole and the output row aligned.
template <typename Tin, typename Tout, typename F>
__device__ __forceinline__ void store_chunk(Tout* __restrict__ row, int n, int shift, bool aligned, int c, F value,
                                            bool streaming = false, bool whole = false) {
    constexpr int V = Vec<Tin>::size;
    const int e0 = c * V - shift;
    if constexpr (sizeof(Tout) >= sizeof(Tin)) {
        if (whole || (aligned && e0 >= 0 && e0 + V <= n)) {
            constexpr int W = Vec<Tout>::size;  // outputs a store holds: V, or V / 2 for the wider output
#pragma unroll
            for (int q = 0; q < V; q += W) {
                Vec<Tout> out;
#pragma unroll
                for (int k = 0; k < W; ++k) out.set(k, value(q + k));
                if (streaming)
                    __stcs(reinterpret_cast<uint4*>(row + e0 + q), make_uint4(out.w[0], out.w[1], out.w[2], out.w[3]));
                else *reinterpret_cast<Vec<Tout>*>(row + e0 + q) = out;
            }
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < V; ++k)
        if (e0 + k >= 0 && e0 + k < n) row[e0 + k] = value(k);
}

// What a row's value a becomes once the row's (max, sum) is known, in the
// accumulation type: softmax's exp(a - max) / sum, or with LOG log_softmax's
// (a - max) - log(sum). The semantics hold for both: a NaN or +inf in the row
// makes sum NaN; a row of only -inf has max = -inf, and -inf - -inf is NaN.
// With the temperature (scale, see Fused), a is the stored value and max
// the row's max of scale * a.
template <typename A, typename T, bool LOG, WidenPass P = WidenPass::write, typename S = A> struct Normalize {
    A max, by;  // by: 1 / sum, or log(sum)
    S scale;    // A, or Unit
    __device__ __forceinline__ A of(A a) const {
        if constexpr (LOG) return FastExp::shifted(a, scale, max) - by;
        else return FastExp::of(a, scale, max) * by;
    }
    __device__ __forceinline__ A operator()(const Vec<T>& v, int k) const { return of(widen<A, P>(v, k)); }
    // What a masked-out position gets (Fused): 0, or log(0) = -inf.
    __device__ __forceinline__ A masked() const { return LOG ? neg_inf<A>() : A(0); }
};
// scale: an A, or Unit (1 at compile time: no product an element).
template <typename T, bool LOG = false, WidenPass P = WidenPass::write, typename A, typename S = A>
__device__ __forceinline__ Normalize<A, T, LOG, P, S> normalizer(MaxSum<A> row, S scale = S(1)) {
    return {row.m, LOG ? acc_log(row.s) : A(1) / row.s, scale};
}

// The larger of each pair of 2-byte values in two words (max.bf16x2 /
// max.f16x2, sm_80 on): like fmaxf, a NaN loses to a number; the sum sees it.
__device__ __forceinline__ unsigned max_pairs(unsigned a, unsigned b, const __nv_bfloat16*) {
    unsigned r;
    asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
__device__ __forceinline__ unsigned max_pairs(unsigned a, unsigned b, const __half*) {
    unsigned r;
    asm("max.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

// Max of the values in a chunk, folded into m. Half precision compares the
// packed pairs first (three instructions for eight values) and widens two:
// exact, and H100, 2026-11-22 (clean L2), split_row 4096 x 4096 bfloat16
// 25.1 -> 24.3 us, 4096 x 8192 46.5 -> 45.7 us.
template <typename A, typename T> __device__ __forceinline__ A chunk_max(A m, const Vec<T>& v) {
#if __CUDA_ARCH__ >= 800
    if constexpr (sizeof(T) == 2) {
        const T* tag = nullptr;
        const unsigned w = max_pairs(max_pairs(v.w[0], v.w[1], tag), max_pairs(v.w[2], v.w[3], tag), tag);
        return acc_max(m, acc_max(static_cast<A>(widen_half_word(w, false, tag)),
                                  static_cast<A>(widen_half_word(w, true, tag))));
    }
#endif
#pragma unroll
    for (int k = 0; k < Vec<T>::size; ++k) m = acc_max(m, widen<A>(v, k));
    return m;
}

// Sum of exp(scale * a - m) over a chunk (ms = FastExp::sum_shift(m)), folded into s.
// -inf entries (padding included) add exp(-inf) = 0, also for a thread that
// holds only -inf (its shift is 0); NaN and +inf make s NaN.
// scale: an A, or Unit.
template <typename A, typename T, typename S> __device__ __forceinline__ A chunk_sum(A s, const Vec<T>& v, A ms, S scale) {
#pragma unroll
    for (int k = 0; k < Vec<T>::size; ++k) s += FastExp::of(widen<A>(v, k), scale, ms);
    return s;
}

// A chunk folded into a running (max, sum) pair over b = scale * a, online:
// the sum is rescaled to the new max where the chunk raises it (one EX2, and
// none where it does not), then the chunk's exponentials added against it.
// So a thread can fold each chunk as it arrives instead of waiting for every
// chunk's max first, and the exponentials overlap the row's read.
template <typename A, typename T> __device__ __forceinline__ MaxSum<A> chunk_fold(MaxSum<A> p, const Vec<T>& v, A scale) {
    const A m = acc_max(p.m, FastExp::scaled(chunk_max(neg_inf<A>(), v), scale));
    return {m, chunk_sum(rescale(p.s, p.m, m), v, FastExp::sum_shift(m), scale)};
}

// Max of the K chunks a thread holds in registers.
template <typename A, typename T, int K> __device__ __forceinline__ A chunks_max(const Vec<T> (&v)[K]) {
    A m = neg_inf<A>();
#pragma unroll
    for (int j = 0; j < K; ++j) m = chunk_max(m, v[j]);
    return m;
}

// (max, sum of exp(b - max)) over b = scale * a, a the values of the K
// chunks a thread holds in registers (scale > 0: the max of b is scale times a's).
template <typename A, typename T, int K>
__device__ __forceinline__ MaxSum<A> chunk_stats(const Vec<T> (&v)[K], A scale) {
    const A m = FastExp::scaled(chunks_max<A>(v), scale);
    const A ms = FastExp::sum_shift(m);
    A s = A(0);
#pragma unroll
    for (int j = 0; j < K; ++j) s = chunk_sum(s, v[j], ms, scale);
    return {m, s};
}

// Held: what a thread of a register-resident variant keeps of its K chunks
// between reading a row and writing it. Use, in two passes:
//   s = held.start(v, m, scale)
//                          m: the thread's max of scale * a (over v and anything
//                          else it holds); returns the sum of exp(scale * a - sum_shift(m)) over v
// or, where it keeps values only (keeps false), in one pass, online
// (split_row), chunk j = 0 .. K - 1 in order as each lands:
//   p = held.fold(j, v[j], p, scale)
//                          p: the running (max, sum) of the chunks before
//                          (MaxSum, from (-inf, 0)), returned with chunk j's
// then:
//   held.finish(row)       the row's (max, sum), once reduced
//   held.out(j, k)         the k-th output of chunk j, in the accumulation type
//   held.masked()          the output of a masked-out position (Fused)
// Values as wide as their exponentials (float, double) keep e = exp(a - shift)
// and are exponentiated once; at the end one factor per thread,
// exp(m - max) / sum, turns e into outputs. Half-precision values keep the
// values themselves, two to a register where their exponentials would take
// one each, and are exponentiated again at write, once a thread would hold
// more than HALF_EXPS_KEPT exponentials: registers, not exponentials, then
// bound how much of a row a block keeps in flight. (Kept exponentials
// folded online, rescaled in place as the thread's max rose, lost on the
// H100, 2026-11-24, docs/perf/split-row-online-h100.txt: split_row float32
// 128 x 32000 80% -> 75% of copy, 128 x 128256 83% -> 80%.)
// Whether Held keeps exponentials: never for log_softmax (it writes a - max -
// log(sum), and an exponential that underflowed has lost a); for softmax
// always where values are as wide as their exponentials, and for half
// precision up to HALF_EXPS_KEPT a thread. H100, 2026-11-22: warp_rows
// 4096 x 1024 bfloat16 89% -> 96% of copy, registers unchanged; split_row
// (clean L2, packed max) 4096 x 4096 bfloat16 24.3 -> 23.6 us, float16
// 24.2 -> 23.7 us (registers 40 -> 56); 16384 x 4096 bfloat16 89.9 -> 89.2.
//
// Folds (split_row): a thread may stand for R logical threads of a row, its
// chunk j (in registers, then those it keeps elsewhere) belonging to fold
// j % R, whose running pair it passes to fold. A logical thread's sum adds
// its chunks' exponentials in its own order whichever thread holds them, and
// its outputs must not depend on that either: a Held of R > 1 never keeps
// exponentials, its outputs (Normalize) come from the row's (max, sum) alone,
// and a launch that gives each logical thread a thread of its own writes
// them the same way: Held<A, T, K, LOG, 1, false>.
constexpr int HALF_EXPS_KEPT = 32;
template <typename A, typename T, int K, bool LOG>
constexpr bool keep_exps = !LOG && (sizeof(T) >= sizeof(A) || K * Vec<T>::size <= HALF_EXPS_KEPT);

// P: how the outputs widen the kept values again (WidenPass), where they do.
template <typename A, typename T, int K, bool LOG = false, int R = 1, bool KEEP_EXPS = R == 1 && keep_exps<A, T, K, LOG>,
          WidenPass P = WidenPass::write, typename S = A>
struct Held;

template <typename A, typename T, int K, WidenPass P, typename S> struct Held<A, T, K, false, 1, true, P, S> {
    static constexpr int chunks = K;
    static constexpr bool keeps = true;
    A e[K][Vec<T>::size];
    A m, factor;
    __device__ __forceinline__ A start(const Vec<T> (&v)[K], A thread_max, S scale) {
        m = thread_max;
        const A shift = FastExp::sum_shift(m);
        A s = A(0);
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int k = 0; k < Vec<T>::size; ++k) {
                e[j][k] = FastExp::of(widen<A>(v[j], k), scale, shift);
                s += e[j][k];
            }
        return s;
    }
    // A thread that held only -inf has e = 0 and gets 0 / sum (its shift was
    // 0, not its max): 0, or NaN when the row holds a NaN or +inf elsewhere; a
    // row of only -inf gets exp(-inf - -inf) = NaN, as the semantics ask.
    __device__ __forceinline__ void finish(MaxSum<A> row) {
        factor = m == neg_inf<A>() && row.m != neg_inf<A>() ? A(0) / row.s : FastExp::of(m, row.m) / row.s;
    }
    __device__ __forceinline__ A out(int j, int k) const { return e[j][k] * factor; }
    __device__ __forceinline__ A masked() const { return A(0); }
};

template <typename A, typename T, int K, bool LOG, int R, WidenPass P, typename S>
struct Held<A, T, K, LOG, R, false, P, S> {
    static constexpr int chunks = K;
    static constexpr bool keeps = false;
    Vec<T> v[K];
    Normalize<A, T, LOG, P, S> prob;
    S scale;
    __device__ __forceinline__ A start(const Vec<T> (&values)[K], A thread_max, S scale_) {
        static_assert(R == 1, "two passes: one fold (folds go through fold)");
        scale = scale_;
        A s = A(0);
#pragma unroll
        for (int j = 0; j < K; ++j) {
            v[j] = values[j];
            s = chunk_sum(s, v[j], FastExp::sum_shift(thread_max), scale);
        }
        return s;
    }
    __device__ __forceinline__ MaxSum<A> fold(int j, const Vec<T>& value, MaxSum<A> p, A scale_) {
        scale = scale_;
        v[j] = value;
        return chunk_fold(p, value, scale);
    }
    __device__ __forceinline__ void finish(MaxSum<A> row) { prob = normalizer<T, LOG, P>(row, scale); }
    __device__ __forceinline__ A out(int j, int k) const { return prob(v[j], k); }
    __device__ __forceinline__ A masked() const { return prob.masked(); }
};

// The K chunks first, first + stride, ... of a row, `pad` (-inf) from `end` on.
template <bool PART_WORDS = false, typename T, int K, typename Load = PlainLoad>
__device__ __forceinline__ void load_chunks(Vec<T> (&v)[K], const T* __restrict__ row, int n, int shift, int first,
                                            int stride, int end, Load load = {},
                                            const Vec<T>& pad = padding_chunk<T>(), bool whole = false) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const int c = first + j * stride;
        v[j] = c < end ? load_chunk<PART_WORDS>(row, n, shift, c, load, pad, whole) : pad;
    }
}

// HeldGrad: what a thread of a backward kernel keeps of its K chunks of a
// row's y (the forward's output) and dy (the gradient of the loss by y),
// zero-padded, to write dx:
//   softmax:     dx = y (dy - s), s = sum(dy y)
//   log_softmax: dx = dy - exp(y) s, s = sum(dy)
//   s = held.partial()   this thread's share of s
//   held.finish(s)       the row's s, once reduced
//   held.out(j, k)       the k-th output of chunk j, in the accumulation type
// A NaN in dy makes s NaN and the row's dx NaN; so does one in y for
// softmax (s sums dy y), for log_softmax only its own element.
template <typename A, typename T, int K, bool LOG> struct HeldGrad {
    static constexpr int chunks = K;
    Vec<T> y[K], dy[K];
    A s;
    __device__ __forceinline__ A partial() const {
        A sum = A(0);
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int k = 0; k < Vec<T>::size; ++k)
                sum += LOG ? widen<A>(dy[j], k) : widen<A>(dy[j], k) * widen<A>(y[j], k);
        return sum;
    }
    __device__ __forceinline__ void finish(A row_s) { s = row_s; }
    __device__ __forceinline__ A out(int j, int k) const {
        const A yv = widen<A, WidenPass::write>(y[j], k), dyv = widen<A, WidenPass::write>(dy[j], k);
        if constexpr (LOG) return dyv - FastExp::of(yv, A(0)) * s;
        else return yv * (dyv - s);
    }
};

// -- fused options of the forward row kernels --------------------------------------
//
// softmax(scale * x) (scale > 0: a temperature 1 / T) over the positions where
// a boolean mask holds (JAX's where=): masked-out values read as -inf, so they
// take no part in the max or the sum, and their outputs are written as 0
// (log_softmax: -inf). A row with every position masked out gives only those;
// kept values follow the usual semantics (kept values all -inf: NaN).
// The mask is one byte per element (NumPy's bool, nonzero = kept), read
// again after the write (from L2: a row's mask was read moments before)
// rather than held in registers, to overwrite the masked-out outputs.

// A row's mask bytes, or none (null).
//
// Chunk c of the row (counted as in load_chunk) takes the mask bytes of its V
// elements, bytes + c * V - shift on. Where that address is V-aligned for one
// chunk it is for all (`in_phase`: the mask row sits at x's row's 16-byte
// phase, as every row of a contiguous mask of x's shape does against a
// contiguous x, whatever N), and a chunk's flags are one aligned V-byte load
// with no bounds arithmetic; a partial first or last chunk's word then spans
// bytes just outside the row (up to V - 1 on either side, inside the
// V-aligned granules that hold the row's first and last bytes), whose flags
// do not matter: those positions hold padding, -inf kept or not. Out of phase
// (a mask broadcast over rows of other phases, a view) a chunk reads the
// aligned 32-bit words around its bytes (kept_bytes).
struct RowMask {
    template <int N> struct Count { static constexpr int value = N; };
    // Out of phase a chunk's flags take up to three words in flight, not one:
    // batches of at most 4 chunks (8 spilled the grid's bfloat16 G = 1 twin,
    // held to 64 registers: 60 bytes, sm_90, NVRTC 13.5).
    template <int B> static constexpr int kOutOfPhaseBatch = B < 4 ? B : 4;
    const unsigned char* __restrict__ bytes;
    template <int V> __device__ __forceinline__ bool in_phase(int shift) const {
        return ((reinterpret_cast<unsigned long long>(bytes) - static_cast<unsigned>(shift)) & (V - 1)) == 0;
    }
    // Where chunk c's V mask bytes start, in phase (V-aligned).
    template <int V> __device__ __forceinline__ const unsigned char* at(int shift, int c) const { return bytes + (c * V - shift); }
    // The V bytes at p (V-aligned) as a word, byte k in byte k of (x, y): from
    // global memory through the read-only path, or (STAGED) from shared memory.
    template <int V, bool STAGED = false> __device__ __forceinline__ static uint2 word_at(const unsigned char* p) {
        if constexpr (STAGED && V == 8) return *reinterpret_cast<const uint2*>(p);
        else if constexpr (STAGED) return make_uint2(*reinterpret_cast<const unsigned*>(p), 0u);
        else if constexpr (V == 8) return __ldg(reinterpret_cast<const uint2*>(p));
        else if constexpr (V == 4) return make_uint2(__ldg(reinterpret_cast<const unsigned*>(p)), 0u);
        else return make_uint2(__ldg(reinterpret_cast<const unsigned short*>(p)), 0u);
    }
    template <int V> __device__ __forceinline__ uint2 word(int shift, int c) const { return word_at<V>(at<V>(shift, c)); }
    // Mask bytes as flags: 0xff where kept (nonzero), 0 where masked out.
    __device__ __forceinline__ static uint2 flags(uint2 w) { return make_uint2(__vcmpne4(w.x, 0u), __vcmpne4(w.y, 0u)); }
    // Out of phase: chunk c's mask bytes as flags, from the aligned 32-bit
    // words around them (one to three, as many as the bytes straddle) shifted
    // into place, with no branch, so that the words of several chunks fly
    // together (apply). Each word's address is held inside the words that
    // hold the row's first and last bytes: a partial first or last chunk then
    // reads other bytes of those words for its positions outside the row,
    // whose flags do not matter (they hold padding), and nothing outside them.
    template <int V> __device__ __forceinline__ uint2 kept_bytes(int n, int shift, int c) const {
        // Byte offsets from the aligned word that holds the row's first byte.
        const int lead = static_cast<int>(reinterpret_cast<unsigned long long>(bytes) & 3u);
        const int p = lead + c * V - shift, last = (lead + n - 1) & ~3;
        const unsigned* const low = reinterpret_cast<const unsigned*>(bytes - lead);
        const auto held_word = [&](int a) { return __ldg(low + (min(max(a, 0), last) >> 2)); };
        const int q = p & ~3, o = p & 3;  // q rounds down, also below 0
        const unsigned w1 = o + V > 4 ? held_word(q + 4) : 0u;
        const unsigned hi = V == 8 ? __funnelshift_r(w1, o ? held_word(q + 8) : 0u, 8 * o) : 0u;
        return flags(make_uint2(__funnelshift_r(held_word(q), w1, 8 * o), hi));
    }
    // Masked-out values of a chunk become -inf: a select per 32-bit word of
    // the packed chunk (a byte_perm spreads each flag over its value's bytes).
    template <typename T> __device__ __forceinline__ static void select(Vec<T>& v, uint2 flags) {
        const Vec<T> pad = padding_chunk<T>();
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            unsigned keep;
            if constexpr (sizeof(T) == 4) keep = __byte_perm(flags.x, 0u, i * 0x1111u);
            else if constexpr (sizeof(T) == 8) keep = __byte_perm(flags.x, 0u, (i / 2) * 0x1111u);
            else {  // two values a word: flags 2i and 2i + 1
                const unsigned j = (i % 2) * 2;
                keep = __byte_perm(i < 2 ? flags.x : flags.y, 0u, j * 0x11u + (j + 1) * 0x1100u);
            }
            v.w[i] = (v.w[i] & keep) | (pad.w[i] & ~keep);
        }
    }
    // The same from the mask bytes themselves (w: byte k of (x, y) value k's, nonzero = kept; flags are such
    // bytes too), for 4-byte values: a test and a select each (LOP3 to a predicate, SEL), 8 instructions a
    // chunk where flags and select take 12 (vcmpne4 is 4 on sm_90: 3 ALU and a PRMT; then a PRMT and a LOP3
    // a value). 2-byte values: a PRMT, an HSET2 and a LOP3 a 32-bit word of the chunk (below): 12 instructions
    // a chunk where flags and select take 16. Other types: select(v, flags(w)). The same bits: the keep words
    // are select's, byte for byte.
    template <typename T> __device__ __forceinline__ static void select_bytes(Vec<T>& v, uint2 w) {
        if constexpr (sizeof(T) == 4) {
            const Vec<T> pad = padding_chunk<T>();
#pragma unroll
            for (int i = 0; i < 4; ++i) v.w[i] = (w.x & (0xffu << (8 * i))) != 0u ? v.w[i] : pad.w[i];
        } else if constexpr (sizeof(T) == 2) {
            const Vec<T> pad = padding_chunk<T>();
            // Here a PRMT puts value 2i's and 2i + 1's mask bytes in the low bytes of two 16-bit lanes (0x00bb:
            // an f16 zero or subnormal, never a NaN), and one HSET2 (set.ne.u32.f16x2, without .ftz, so that
            // subnormals compare as themselves) gives 0xffff in each lane whose byte is nonzero: 3 instructions a
            // 32-bit word, 12 a chunk (4 of them on the FMA pipe, not the ALU).
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const unsigned lanes = __byte_perm(i < 2 ? w.x : w.y, 0u, i % 2 ? 0x4342u : 0x4140u);
                unsigned keep;
                asm("set.ne.u32.f16x2 %0, %1, %2;" : "=r"(keep) : "r"(lanes), "r"(0u));
                v.w[i] = (v.w[i] & keep) | (pad.w[i] & ~keep);
            }
        } else {
            select(v, flags(w));
        }
    }
    // B: the chunks whose mask words a thread reads at once, in phase (out of
    // phase at most 4, kOutOfPhaseBatch). B = 1 compiles the in-phase path
    // out and reads every chunk's bytes through kept_bytes, one chunk after
    // another: the kernels held to a register bound, which spilled with it
    // (sm_90, NVRTC 13.5: split_row's float32 K = 8 on clusters of 16, 20
    // spill stores; warp_rows' 2-byte K = 1, 16).
    //
    // Chunk c (inside the row's chunks) with its masked-out values -inf.
    template <int B, typename T> __device__ __forceinline__ void apply(Vec<T>& v, int n, int shift, int c) const {
        constexpr int V = Vec<T>::size;
        if (bytes == nullptr) return;
        if (B > 1 && in_phase<V>(shift)) select(v, flags(word<V>(shift, c)));
        else select(v, kept_bytes<V>(n, shift, c));
    }
    // Ask L2 for chunk c's mask bytes now (no register waits on them), so that
    // apply, once the chunk's own copy to shared memory lands, finds them there.
    template <int B, int V> __device__ __forceinline__ void prefetch(int shift, int c) const {
        if (B > 1 && bytes != nullptr) prefetch_l2(bytes + (c * V - shift));
    }
    // The same over chunks first, first + stride, ... before `end` (load_chunks' layout). The words of
    // B chunks at a time are read before any is used, with no branch between, so the loads fly together
    // (chunks past `end`, padding, read the last chunk's words: -inf either way). B chunks' flags take B
    // registers (2-byte types 2 B) while in flight, their words out of phase two or three times that.
    // in_phase_known: the launch guarantees every mask row at x's phase (warp_rows' O = 2), so no test and
    // the batched in-phase words for any B, B = 1 too (a constant after inlining, so the rest compiles out).
    template <int B, typename T, int K>
    __device__ __forceinline__ void apply(Vec<T> (&v)[K], int n, int shift, int first, int stride, int end,
                                          bool in_phase_known = false) const {
        static_assert(K % B == 0, "whole batches");
        constexpr int V = Vec<T>::size;
        if (bytes == nullptr) return;
        const auto batched = [&](auto batch, auto flags_of) {
            constexpr int N = decltype(batch)::value;
#pragma unroll
            for (int j0 = 0; j0 < K; j0 += N) {
                uint2 f[N];
#pragma unroll
                for (int j = 0; j < N; ++j) f[j] = flags_of(max(min(first + (j0 + j) * stride, end - 1), 0));
#pragma unroll
                for (int j = 0; j < N; ++j) select(v[j0 + j], f[j]);
            }
        };
        if (in_phase_known || (B > 1 && in_phase<V>(shift))) batched(Count<B>{}, [&](int c) { return flags(word<V>(shift, c)); });
        else if (B > 1) batched(Count<kOutOfPhaseBatch<B>>{}, [&](int c) { return kept_bytes<V>(n, shift, c); });
        else {
#pragma unroll
            for (int j = 0; j < K; ++j)
                if (first + j * stride < end) select(v[j], kept_bytes<V>(n, shift, first + j * stride));
        }
    }
    // apply's in-phase words for chunks first, first + stride, ... before `end` (its layout and clamp),
    // loaded now and used later (select_bytes each with w[j]), so that they fly while the caller issues
    // other loads; false, loading nothing, without a mask or out of phase, where the caller applies instead.
    template <int V, int K>
    __device__ __forceinline__ bool fetch(uint2 (&w)[K], int shift, int first, int stride, int end) const {
        if (bytes == nullptr || !in_phase<V>(shift)) return false;
#pragma unroll
        for (int j = 0; j < K; ++j) w[j] = word<V>(shift, max(min(first + j * stride, end - 1), 0));
        return true;
    }
    // Once a thread has stored its chunks (`count` of them from `first` by
    // `stride`, before `end`; V elements each): its masked-out positions
    // written again with `fill`, where `spoiled` says the row's (max, sum) is
    // not finite (every position masked out, or a kept NaN or infinity).
    // Elsewhere a masked-out value, read as -inf, already came out 0 (or
    // -inf). The same thread's second store wins. A separate loop, so that
    // the stores' own code and registers stay the plain path's: a select per
    // element inside them took split_row's float32 K = 8 kernel from 56 to 104
    // registers (sm_90).
    template <int V, typename Tout>
    __device__ __forceinline__ void refill(Tout* __restrict__ row, int n, int shift, int first, int stride, int end,
                                           int count, bool spoiled, Tout fill) const {
        if (bytes == nullptr || !spoiled) return;
#pragma unroll 1
        for (int j = 0; j < count; ++j) {
            const int c = first + j * stride;
            if (c >= end) break;
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const int e = c * V - shift + k;
                if (e >= 0 && e < n && bytes[e] == 0) row[e] = fill;
            }
        }
    }
};

// Whether a row's (max, sum) is finite: false for a row masked out
// everywhere (max -inf) and for rows with a NaN or +inf (RowMask::refill).
template <typename A> __device__ __forceinline__ bool finite_row(MaxSum<A> row) {
    return isfinite(row.m) && isfinite(row.s);
}

// The fused options as the forward row kernels take them (after the row
// strides): scale (1 for plain softmax), mask (null for none; else row r of
// x takes mask row r % mask_rows, so a mask broadcast over leading axes is
// read in place), mask_row_stride in bytes (0 where mask_rows is 1:
// fused.kernel_args). `direct`: the caller knows row r's mask row is r
// strides on (r < mask_rows, or mask_rows 1 at stride 0: warp_rows' O = 2
// launches, split_row's kFetchEarly, kLeanHeld, kLeanFold and kLeanWords rows), with no 64-bit remainder.
struct Fused {
    double scale;
    const unsigned char* mask;
    long long mask_row_stride, mask_rows;
    // No options, as constants: the plain kernels' (warp_rows O = 0, split_row R = 0), which compile them out
    __device__ __forceinline__ static Fused none() { return {1.0, nullptr, 0, 1}; }
    __device__ __forceinline__ RowMask row(long long r, bool direct = false) const {
        return {mask == nullptr ? nullptr : mask + (direct ? r : r % mask_rows) * mask_row_stride};
    }
};

// Write the chunks a thread holds (first, first + stride, ... before `end`),
// their values from held.out.
template <typename Tin, typename Tout, typename H>
__device__ __forceinline__ void store_chunks(Tout* __restrict__ row, int n, int shift, bool aligned, int first,
                                             int stride, int end, const H& held, bool streaming = false,
                                             bool whole = false) {
#pragma unroll
    for (int j = 0; j < H::chunks; ++j) {
        const int c = first + j * stride;
        if (c < end)
            store_chunk<Tin>(
                row, n, shift, aligned, c, [&](int k) { return from_acc<Tout>(held.out(j, k)); }, streaming,
                whole);
    }
}

// 16-byte chunks spanned by a row of n elements starting `shift` elements past a chunk boundary.
__device__ __forceinline__ int chunks_of(long long n, int shift, int per_chunk) {
    return static_cast<int>((n + shift + per_chunk - 1) / per_chunk);
}

// -- rows of any phase in ceil(N / V) chunks (warp_rows' plain forward path) --------
//
// A row of n elements starting `shift` elements past a 16-byte boundary spans
// C = chunks_of(n, shift, V) granules of x's 16-byte grid, and L = ceil(n / V)
// <= C <= L + 1. It takes L slots (the chunks its threads hold), one granule
// each. Where C = L + 1
// (folded), the row's positions in its first granule ([shift, V)) and in its
// last ([0, t), t = n + shift - L * V <= shift) do not overlap, and slot 0
// holds both: so a row takes L slots whatever its phase, as many as a row of
// its length on a boundary. Only granules 0 and L - 1 (and L, folded) can be
// partial. Slot c holds granule c, except where granule L - 1 is partial and
// not folded (the row's last granule, t < 0): there slot 1 holds it and slot
// c >= 2 granule c - 1, so that with G >= 2 threads a row every partial
// granule sits in the first chunk of its first two threads, and a warp runs
// the code of partial granules once a row group (j = 0), not once for each
// chunk a thread holds. Rows of whole chunks (t = 0, shift 0) keep slot c at
// granule c: the order of the kernels on whole chunks (O = -1) and with
// options, so the same bits (rows with a partial last granule sum in another
// order than the kernels with options, which count chunks from the boundary).
// Whole granules move as one 16-byte access. Partial ones, two ways:
// load_granules / store_granules (2-byte values, more than one chunk a lane:
// warp_rows' GRANULES) read them with one 16-byte load, the positions outside
// the row then padded with -inf (edge_slot), and write them in the naturally
// aligned pieces of their row part where the output row is at x's phase
// (store_from, store_below: at most log2(V) stores a side); load_elements /
// store_elements (the rest) move them element by element. A write never
// touches a position outside the row.
//
// load_granules' partial granules hold bytes outside the row: of the rows before and after
// it, of the gap between the rows of a strided view, or before x's first row
// and after its last. It is read whole only where it lies inside Span, the
// bytes from x's lowest row start to its highest row end (a view lies inside
// one allocation, so those bytes are the caller's and read without fault),
// and element by element elsewhere: so the granules that hold x's first and
// last bytes, which may stick out of its allocation, are never read past x.
// Values read from outside the row become -inf before any use, so bytes that
// another thread writes meanwhile (an output that aliases x) change nothing.
struct Span {
    unsigned long long lo, hi;  // [lo, hi): x's bytes
    template <typename T>
    __device__ __forceinline__ static Span of(const T* x, long long rows, long long n, long long row_stride) {
        const long long last = (rows - 1) * row_stride;  // the last row's offset, negative for x[::-1]
        return {reinterpret_cast<unsigned long long>(x + (last < 0 ? last : 0)),
                reinterpret_cast<unsigned long long>(x + (last > 0 ? last : 0) + n)};
    }
    __device__ __forceinline__ bool holds(const void* granule) const {
        const auto a = reinterpret_cast<unsigned long long>(granule);
        return a >= lo && a + 16 <= hi;
    }
};

template <typename T> struct Slots {
    static constexpr int V = Vec<T>::size;
    int count;  // L: the slots the row takes (0: a lane past the last row)
    int tail;   // t > 0: slot 0 also holds granule L's positions [0, t) (folded); <= 0 otherwise
    bool head_whole, tail_whole;  // granule 0, and the row's last granule (L - 1, or L folded), inside Span
    // count: ceil(n / V), or 0 for a lane past the last row
    __device__ __forceinline__ Slots(const T* row, int n, int shift, int count_, const Span& span)
        : count(count_), tail(n + shift - count_ * V), head_whole(span.holds(row - shift)),
          tail_whole(span.holds(row - shift + (count_ - (n + shift - count_ * V > 0 ? 0 : 1)) * V)) {}
    __device__ __forceinline__ bool folded() const { return tail > 0 && count > 0; }
    // The granule slot c holds (its first, for a folded slot 0); inner(c) the same for a slot past a row's
    // first two (c >= 2).
    __device__ __forceinline__ int granule(int c) const {
        return tail >= 0 ? c : c == 0 ? 0 : c == 1 ? count - 1 : c - 1;
    }
    __device__ __forceinline__ int inner(int c) const { return c - (tail < 0); }
    // granule(c) without branches, for load_granules and store_granules: a compare and two selects, where the
    // nested conditional took a divergent branch region each time, three times a row group (sm_90: the loop of
    // a (8, 2) half row group 430 -> 410 instructions, registers 47 either way). sm_80 keeps granule(c): there
    // the selects took the 2-byte softmax kernels at (8, 2) and (16, 2) from 47 and 50 registers to 53 (five
    // 256-thread blocks an SM to four at (8, 2)).
    __device__ __forceinline__ int granule_flat(int c) const {
#if __CUDA_ARCH__ >= 900
        const bool lifted = tail < 0;
        return lifted && c == 1 ? count - 1 : c - (lifted && c >= 2);
#else
        return granule(c);
#endif
    }
    // Whether partial granule g (0, L - 1 or L) is read whole.
    __device__ __forceinline__ bool whole(int g) const { return g == 0 ? head_whole : tail_whole; }
    // What slot c adds to a position before the row: L * V for a folded slot 0 (granule L), else 0 (none).
    __device__ __forceinline__ int wrap(int c) const { return c == 0 && folded() ? count * V : 0; }
};

// Slot c as the row holds it: positions [a, b) of its granule (the row's part),
// positions [0, t) from `last` (the folded last granule: slot 0), -inf elsewhere.
// A select per 32-bit word: of the whole word for 4- and 8-byte values, of
// each half for 2-byte values (two selects, then one byte permute).
template <typename T> __device__ __forceinline__ Vec<T> edge_slot(const Vec<T>& v, const Vec<T>& last, int a, int b, int t) {
    const Vec<T> pad = padding_chunk<T>();
    const auto pick = [&](int i, int k) {  // word i of the source of position k
        return k >= a && k < b ? v.w[i] : k < t ? last.w[i] : pad.w[i];
    };
    Vec<T> out;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        if constexpr (sizeof(T) == 2) out.w[i] = __byte_perm(pick(i, 2 * i), pick(i, 2 * i + 1), 0x7610);
        else out.w[i] = pick(i, sizeof(T) == 4 ? i : i / 2);
    }
    return out;
}

// Whether slot j of a thread (slot first + j * stride) may hold a partial granule: its first, or any
// where a thread holds a row's slots 0 and 1 both (stride 1). A constant once inlined.
__device__ __forceinline__ constexpr bool may_hold_edge(int j, int stride) { return j == 0 || stride < 2; }

// The K slots first, first + stride, ... of a row (`s.count` of them; -inf past it): every
// load issued first, then the partial slots padded (and slot 0 folded), so that no load waits on another.
template <typename T, int K>
__device__ __forceinline__ void load_granules(Vec<T> (&v)[K], const T* __restrict__ row, int n, int shift, int first,
                                           int stride, const Slots<T>& s) {
    constexpr int V = Vec<T>::size;
    const Vec<T>* const grid = reinterpret_cast<const Vec<T>*>(row - shift);  // granule 0
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const int c = first + j * stride;
        const bool edges = may_hold_edge(j, stride);
        const int g = edges ? s.granule_flat(c) : s.inner(c), e0 = g * V - shift;
        const bool whole = !edges || (e0 >= 0 && e0 + V <= n) || s.whole(g);
        v[j] = c >= s.count ? padding_chunk<T>() : whole ? grid[g] : load_chunk(row, n, shift, g);
    }
    const bool folds = first == 0 && s.folded();
    const Vec<T> last = !folds ? padding_chunk<T>() : s.tail_whole ? grid[s.count] : load_chunk(row, n, shift, s.count);
#pragma unroll
    for (int j = 0; j < K; ++j) {
        if (!may_hold_edge(j, stride)) continue;
        const int c = first + j * stride, g = s.granule_flat(c);
        const int a = g == 0 ? shift : 0, b = n + shift - g * V;
        if (c < s.count && (a > 0 || b < V)) v[j] = edge_slot(v[j], last, a, b, c == 0 && folds ? s.tail : 0);
    }
}

// Word i of a chunk, i a run-time index in [0, 4): selects, not an indexed
// array (which would go through local memory).
__device__ __forceinline__ unsigned word_of(const unsigned (&w)[4], int i) {
    return i & 2 ? (i & 1 ? w[3] : w[2]) : (i & 1 ? w[1] : w[0]);
}

// Positions [pos, pos + S) of a packed chunk `o` stored to the granule at `to` (pos a multiple of S, so
// the store is aligned to its S * sizeof(T) bytes): a 2-, 4- or 8-byte store (sm_80: store_from, store_below).
template <int S, typename T> __device__ __forceinline__ void store_piece(T* to, int pos, const Vec<T>& o) {
    constexpr int BYTES = S * static_cast<int>(sizeof(T));
    const int byte = pos * static_cast<int>(sizeof(T));
    char* at = reinterpret_cast<char*>(to) + byte;
    if constexpr (BYTES == 8) {
        const bool high = byte & 8;
        *reinterpret_cast<uint2*>(at) = make_uint2(high ? o.w[2] : o.w[0], high ? o.w[3] : o.w[1]);
    } else if constexpr (BYTES == 4) {
        *reinterpret_cast<unsigned*>(at) = word_of(o.w, byte >> 2);
    } else {
        static_assert(BYTES == 2, "pieces of 2, 4 or 8 bytes");
        *reinterpret_cast<unsigned short*>(at) = static_cast<unsigned short>(word_of(o.w, byte >> 2) >> (byte & 2) * 8);
    }
}

// Predicated stores through PTX (one compare and one store each, no branch): a 2-byte store of the low or the
// high half of a word, a 4-byte and an 8-byte one, where `on`. sm_90 (store_from, store_below): against
// store_piece's branches, a (8, 2) half row group's loop 410 -> 390 instructions and log_softmax's 2-byte (8, 2)
// and (16, 2) kernels 54 -> 47 registers; on sm_80 they took the 2-byte softmax (8, 2) kernels from 47 to 51
// registers (five 256-thread blocks an SM to four), so sm_80 keeps store_piece.
__device__ __forceinline__ void store_half_if(bool on, void* at, unsigned w, bool high) {
    if (high)
        asm volatile("{ .reg .pred p; .reg .b16 lo, hi; setp.ne.u32 p, %0, 0; mov.b32 {lo, hi}, %2; @p st.global.b16 [%1], hi; }"
                     :: "r"(static_cast<unsigned>(on)), "l"(at), "r"(w) : "memory");
    else
        asm volatile("{ .reg .pred p; .reg .b16 lo, hi; setp.ne.u32 p, %0, 0; mov.b32 {lo, hi}, %2; @p st.global.b16 [%1], lo; }"
                     :: "r"(static_cast<unsigned>(on)), "l"(at), "r"(w) : "memory");
}
__device__ __forceinline__ void store_word_if(bool on, void* at, unsigned w) {
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %0, 0; @p st.global.b32 [%1], %2; }"
                 :: "r"(static_cast<unsigned>(on)), "l"(at), "r"(w) : "memory");
}
__device__ __forceinline__ void store_pair_if(bool on, void* at, unsigned w0, unsigned w1) {
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %0, 0; @p st.global.v2.b32 [%1], {%2, %3}; }"
                 :: "r"(static_cast<unsigned>(on)), "l"(at), "r"(w0), "r"(w1) : "memory");
}

// Positions [a, V) of `o` to the granule at `to` (0 < a < V), where `on`: the pieces that align a up to V,
// smallest first. 2-byte values (V = 8): with r = V - a, the 2-byte piece (r odd) at a, odd, the high half of
// word a / 2; the 4-byte one (r & 2) at V - (r & 6), word 1 or 3; the 8-byte one (r & 4) at 4, words 2 and 3.
template <typename T> __device__ __forceinline__ void store_from(bool on, T* to, int a, const Vec<T>& o) {
    static_assert(Vec<T>::size == 8, "2-byte values");
#if __CUDA_ARCH__ >= 900
    char* const at = reinterpret_cast<char*>(to);
    const unsigned r = 8u - static_cast<unsigned>(a);
    store_half_if(on && (r & 1u), at + 2u * static_cast<unsigned>(a), word_of(o.w, a >> 1), true);
    store_word_if(on && (r & 2u), at + 2u * (8u - (r & 6u)), r & 4u ? o.w[1] : o.w[3]);
    store_pair_if(on && (r & 4u), at + 8, o.w[2], o.w[3]);
#else
    if (!on) return;
    if (a & 1) store_piece<1>(to, a, o), a += 1;
    if (a & 2) store_piece<2>(to, a, o), a += 2;
    if (a & 4) store_piece<4>(to, a, o);
#endif
}

// Positions [0, b) of `o` to the granule at `to` (0 <= b < V), where `on`: the pieces of b, largest first.
// 2-byte values (V = 8): the 8-byte piece (b & 4) at 0, words 0 and 1; the 4-byte one (b & 2) at b & 4, word 0
// or 2; the 2-byte one (b odd) at b & 6, even, the low half of word (b & 6) / 2.
template <typename T> __device__ __forceinline__ void store_below(bool on, T* to, int b, const Vec<T>& o) {
    static_assert(Vec<T>::size == 8, "2-byte values");
#if __CUDA_ARCH__ >= 900
    char* const at = reinterpret_cast<char*>(to);
    const unsigned q = static_cast<unsigned>(b);
    store_pair_if(on && (q & 4u), at, o.w[0], o.w[1]);
    store_word_if(on && (q & 2u), at + 2u * (q & 4u), q & 4u ? o.w[2] : o.w[0]);
    store_half_if(on && (q & 1u), at + 2u * (q & 6u), word_of(o.w, static_cast<int>(q >> 1)), false);
#else
    if (!on) return;
    int at = 0;
    if (b & 4) store_piece<4>(to, at, o), at += 4;
    if (b & 2) store_piece<2>(to, at, o), at += 2;
    if (b & 1) store_piece<1>(to, at, o);
#endif
}

// Write a thread's slots (load_granules' layout), their values from held.out. Where the output
// row is at x's phase (`aligned`: stores_aligned) and has x's element size, a slot's values
// are packed as one chunk: a granule inside the row takes one 16-byte store, a partial one
// the pieces of its row part (store_from at the row's start, store_below at its end, where
// slot 0 of a folded row also goes: granule L). Elsewhere (a wider or narrower output, an
// output out of x's phase, a row inside one granule) partial granules are written element
// by element (positions of a folded slot 0 before the row wrap to granule L), and whole
// ones of a wider output in two 16-byte stores.
template <typename Tin, typename Tout, typename H>
__device__ __forceinline__ void store_granules(Tout* __restrict__ row, int n, int shift, bool aligned, int first,
                                            int stride, const Slots<Tin>& s, const H& held) {
    constexpr int V = Vec<Tin>::size;
    constexpr bool PACKED = sizeof(Tout) == sizeof(Tin);
#pragma unroll
    for (int j = 0; j < H::chunks; ++j) {
        const int c = first + j * stride;
        if (c >= s.count) continue;
        const auto value = [&](int k) { return from_acc<Tout>(held.out(j, k)); };
        const bool edges = may_hold_edge(j, stride);
        const int g = edges ? s.granule_flat(c) : s.inner(c), e0 = g * V - shift;
        const bool inside = !edges || (e0 >= 0 && e0 + V <= n);
        if constexpr (PACKED) {
            if (aligned) {
                Tout* const to = row - shift + g * V;
                Vec<Tout> o;
#pragma unroll
                for (int k = 0; k < V; ++k) o.set(k, value(k));
                if (inside) {
                    // one 16-byte store (st.global.wb.v4: a plain store here was split into four by NVVM)
                    __stwb(reinterpret_cast<uint4*>(to), make_uint4(o.w[0], o.w[1], o.w[2], o.w[3]));
                    continue;
                }
                const bool head = e0 < 0 && e0 + V <= n, tail = e0 >= 0;  // neither: the row inside one granule
                if (head || tail) {
                    store_from(head, to, head ? -e0 : 1, o);
                    const bool below = tail || (c == 0 && s.folded());
                    store_below(below, tail ? to : row - shift + s.count * V, tail ? n - e0 : s.tail, o);
                    continue;
                }
            }
        } else if constexpr (sizeof(Tout) > sizeof(Tin)) {
            if (aligned && inside) {
                constexpr int W = Vec<Tout>::size;  // outputs a store holds: V / 2
                Vec<Tout>* out = reinterpret_cast<Vec<Tout>*>(row - shift) + g * (V / W);
#pragma unroll
                for (int q = 0; q < V; q += W) {
                    Vec<Tout> o;
#pragma unroll
                    for (int k = 0; k < W; ++k) o.set(k, value(q + k));
                    out[q / W] = o;
                }
                continue;
            }
        }
        const int wrap = edges && c == 0 && s.folded() ? s.count * V : 0;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int e = e0 + k < 0 ? e0 + k + wrap : e0 + k;  // past n (as unsigned) outside the row
            if (static_cast<unsigned>(e) < static_cast<unsigned>(n)) row[e] = value(k);
        }
    }
}

// The K slots first, first + stride, ... of a row (`s.count` of them; -inf past it), partial granules
// element by element (positions of a folded slot 0 before the row wrap to granule L), reading only the
// row's positions: the kernels of one chunk a lane held to 32 registers, which spill with load_granules'
// extra chunk and selects and store_granules' pieces (sm_90, NVRTC 13.5: warp_rows' float32 and 2-byte
// log_softmax of one chunk a lane, 8 to 20 bytes).
template <typename T, int K>
__device__ __forceinline__ void load_elements(Vec<T> (&v)[K], const T* __restrict__ row, int n, int shift, int first,
                                           int stride, const Slots<T>& s) {
    constexpr int V = Vec<T>::size;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const int c = first + j * stride;
        const bool edges = may_hold_edge(j, stride);
        const int e0 = (edges ? s.granule(c) : s.inner(c)) * V - shift;
        v[j] = padding_chunk<T>();
        if (c >= s.count) continue;
        if (!edges || (e0 >= 0 && e0 + V <= n)) {
            v[j] = *reinterpret_cast<const Vec<T>*>(row + e0);
            continue;
        }
        const int wrap = s.wrap(c);
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int e = e0 + k < 0 ? e0 + k + wrap : e0 + k;  // past n (as unsigned) outside the row
            if (static_cast<unsigned>(e) < static_cast<unsigned>(n)) v[j].set(k, row[e]);
        }
    }
}

// Write a thread's slots (load_elements' layout), their values from held.out: 16-byte
// stores where a granule is inside the row and `aligned` (stores_aligned), else
// element by element, slot 0 of a folded row writing its positions [0, t) to
// granule L too. With one slot a thread in the same pass over its positions
// (those before the row wrap to granule L): the kernels of one chunk a lane
// held to 32 registers spilled with a second pass (sm_90, NVRTC 13.5, 8 to 12
// bytes: warp_rows' float32 and 2-byte log_softmax); with more slots a second
// pass, which took fewer registers (bfloat16 (16, 2), sm_90: 56 in one pass,
// 47 to 52 in two, measured when 2-byte rows still took this path; since
// GRANULES only float32 and float64 rows of more than one chunk a lane do that
// warp_rows does not read element-strided: float32 rows of whole chunks out of
// phase, and rows past its element-strided layouts (warp_rows.cu, O = -2).
template <typename Tin, typename Tout, typename H>
__device__ __forceinline__ void store_elements(Tout* __restrict__ row, int n, int shift, bool aligned, int first,
                                            int stride, const Slots<Tin>& s, const H& held) {
    constexpr int V = Vec<Tin>::size;
    constexpr bool ONE_PASS = H::chunks == 1;
#pragma unroll
    for (int j = 0; j < H::chunks; ++j) {
        const int c = first + j * stride;
        if (c >= s.count) continue;
        const auto value = [&](int k) { return from_acc<Tout>(held.out(j, k)); };
        const bool edges = may_hold_edge(j, stride);
        const int g = edges ? s.granule(c) : s.inner(c);
        const int e0 = g * V - shift;
        const bool inside = !edges || (e0 >= 0 && e0 + V <= n);
        if constexpr (sizeof(Tout) >= sizeof(Tin)) {
            if (aligned && inside) {
                constexpr int W = Vec<Tout>::size;  // outputs a store holds: V, or V / 2 for the wider output
                Vec<Tout>* out = reinterpret_cast<Vec<Tout>*>(row - shift) + g * (V / W);
#pragma unroll
                for (int q = 0; q < V; q += W) {
                    Vec<Tout> o;
#pragma unroll
                    for (int k = 0; k < W; ++k) o.set(k, value(q + k));
                    out[q / W] = o;
                }
                continue;
            }
        }
        const int wrap = ONE_PASS && edges ? s.wrap(c) : 0;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int e = e0 + k < 0 ? e0 + k + wrap : e0 + k;  // past n (as unsigned) outside the row
            if (static_cast<unsigned>(e) < static_cast<unsigned>(n)) row[e] = value(k);
        }
    }
    if (!ONE_PASS && first == 0 && s.folded())
        store_chunk<Tin>(row, n, shift, false, s.count, [&](int k) { return from_acc<Tout>(held.out(0, k)); });
}

// -- rows element-strided (warp_rows' plain float32 and float64 kernels, O = -2) ------
//
// A row's G lanes take its elements in turn: lane l (0 .. G - 1) holds elements
// l + G * i, i = j * V + k at position k of its chunk j (i < K * V), -inf from n
// on; so a thread's chunks are registers, not 16-byte pieces of the row, and
// each element moves in one scalar access predicated on its index alone. A
// warp's access i then covers each row's elements [G * i, G * i + G): contiguous
// bytes whatever the row's phase, so no phase, granule or edge arithmetic at all
// (Slots' element edges took float32's K = 2 kernels to 40-48 registers, held to
// 32 and 40: warp_rows.cu). Scalar accesses are V times as many instructions as
// 16-byte ones on whole granules (PyTorch's persistent softmax reads so). A
// thread's sum runs over its elements in order of i (Held, chunk by chunk), so
// the bits differ from the chunk layouts' (Slots, whole chunks, the options'
// kernels). n: the row's elements, 0 for a lane past the last row (it reads and
// writes nothing); lane: l.
template <int G, typename T, int K>
__device__ __forceinline__ void load_strided(Vec<T> (&v)[K], const T* __restrict__ row, int n, int lane) {
    constexpr int V = Vec<T>::size;
    const T* const at = row + lane;
    const int left = n - lane;  // element l + G * i is in the row where G * i < left
#pragma unroll
    for (int j = 0; j < K; ++j) {
        v[j] = padding_chunk<T>();
#pragma unroll
        for (int k = 0; k < V; ++k)
            if ((j * V + k) * G < left) v[j].set(k, at[(j * V + k) * G]);
    }
}

// Write a thread's elements (load_strided's layout), their values from held.out.
template <int G, typename Tin, typename Tout, typename H>
__device__ __forceinline__ void store_strided(Tout* __restrict__ row, int n, int lane, const H& held) {
    constexpr int V = Vec<Tin>::size;
    Tout* const at = row + lane;
    const int left = n - lane;
#pragma unroll
    for (int j = 0; j < H::chunks; ++j)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if ((j * V + k) * G < left) at[(j * V + k) * G] = from_acc<Tout>(held.out(j, k));
}

// -- copies to shared memory -------------------------------------------------------
//
// 16 bytes global -> shared without passing through registers (cp.async,
// sm_80 on; a plain copy before); the issuing thread waits for its own copies
// with copies_done. PREFETCH_256: L2 also fetches the line's 256-byte sector
// pair, which strided_smem's neighbouring tile reads next (H100, 2026-11-22, a
// prototype of that layout, docs/perf/probe-columns-h100.txt: 64-byte tiles
// 73% -> 79% of copy with it; 128-byte tiles 79% either way).
template <bool PREFETCH_256 = false, typename T>
__device__ __forceinline__ void copy_async16(Vec<T>* shared, const T* global) {
#if __CUDA_ARCH__ >= 800
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if constexpr (PREFETCH_256) asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" :: "r"(to), "l"(global) : "memory");
    else asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(to), "l"(global) : "memory");
#else
    *shared = *reinterpret_cast<const Vec<T>*>(global);
#endif
}

// B = 4 or 8 bytes (B-aligned both sides) global -> shared the same way
// (cp.async.ca: through L1, the only form for fewer than 16 bytes).
template <int B> __device__ __forceinline__ void copy_async(unsigned char* shared, const unsigned char* global) {
    static_assert(B == 4 || B == 8, "cp.async copies 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(to), "l"(global), "n"(B) : "memory");
#else
    if constexpr (B == 8) *reinterpret_cast<uint2*>(shared) = *reinterpret_cast<const uint2*>(global);
    else *reinterpret_cast<unsigned*>(shared) = *reinterpret_cast<const unsigned*>(global);
#endif
}

// Bytes of dynamic shared memory this launch has.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
    unsigned bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}

// 0, as a value ptxas cannot fold (a launch's dynamic shared memory is far below 2^31 bytes): index + opaque_zero()
// is an index ptxas cannot merge with other uses of the same index, so it does not hold one value from an early use
// to a late one (an empty asm stops NVVM's merging only: ptxas sees the copy through).
__device__ __forceinline__ int opaque_zero() { return static_cast<int>(dynamic_smem_bytes() >> 31); }

__device__ __forceinline__ void copies_done() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// The copies issued so far form a group (copies_waited counts groups).
__device__ __forceinline__ void copies_grouped() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Wait until at most `pending` of the thread's groups are in flight (at most 7
// past 7: the instruction takes a constant).
__device__ __forceinline__ void copies_waited(int pending) {
#if __CUDA_ARCH__ >= 800
    switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
    case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
    case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    }
#endif
}

// -- thread-block clusters -------------------------------------------------------
//
// Cluster primitives (sm_90: split_row, strided, strided_smem), written as the PTX they are:
// a barrier across the cluster's blocks with release/acquire order on shared
// memory, and a load of a variable's twin in another block's shared memory.
// The barrier's release covers the block's shared memory alone
// (fence.release.sync_restrict::shared::cta, then a relaxed arrive): the
// clusters trade only shared memory, and a plain release
// (barrier.cluster.arrive.release) also orders every global store before it,
// which sm_90 builds as MEMBAR.ALL.GPU: each barrier waited for the block's
// stores of its last item or row to drain. H200, 2026-11-29
// (docs/perf/cluster-release-h200.txt): that wait was 14% of strided_smem's
// stall samples at axis 0 of (8192, 8192) float32, and without it, % of copy
// (axis 0, two runs): that shape 74.4-74.7% -> 79.6-79.7%, (4096, 4096)
// 76.4-76.7% -> 81.0-81.2%, (2048, 16384) 78.5-78.8% -> 82.6-83.0%; split_row's
// clusters (the change timed once): softmax 32 x 128256 bfloat16 66.6-67.2% ->
// 70.7%, 8 x 262144 float32 60.9-61.3% -> 64.3%; softmax_backward 128 x 128256
// float32 80.4-81.9% -> 89.5%, 8192 x 50257 bfloat16 88.6% -> 86.5% (the one
// loss); log_softmax_backward 8192 x 50257 float32 92.9-93.1% -> 96.7%.
// The other direction, a twin read by another block before a barrier and
// rewritten by its owner after it, rests on the hardware rather than on PTX's
// model (which would want a release of those reads too): every caller uses
// each ld.shared::cluster's value (stores it, or shuffles it) before its
// block arrives, so the load has completed by then. NVRTC before 12.8 (PTX
// ISA 8.6) lacks the restricted fence and keeps the plain release.
__device__ __forceinline__ void cluster_sync() {
#if __CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8)
    asm volatile("fence.release.sync_restrict::shared::cta.cluster;\n\tbarrier.cluster.arrive.relaxed.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ unsigned cluster_address(const void* local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(local))), "r"(rank));
    return remote;
}

__device__ __forceinline__ MaxSum<float> cluster_load(const MaxSum<float>* local, unsigned rank) {
    MaxSum<float> v;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.m), "=f"(v.s) : "r"(cluster_address(local, rank)) : "memory");
    return v;
}

__device__ __forceinline__ float cluster_load(const float* local, unsigned rank) {
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_address(local, rank)) : "memory");
    return v;
}

__device__ __forceinline__ double cluster_load(const double* local, unsigned rank) {
    double v;
    asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(cluster_address(local, rank)) : "memory");
    return v;
}

__device__ __forceinline__ MaxSum<double> cluster_load(const MaxSum<double>* local, unsigned rank) {
    MaxSum<double> v;
    asm volatile("ld.shared::cluster.v2.f64 {%0, %1}, [%2];" : "=d"(v.m), "=d"(v.s) : "r"(cluster_address(local, rank)) : "memory");
    return v;
}

// -- a row's blocks anywhere on the grid (split_row with C = 0) -----------------
//
// The workspace of a launch whose rows are split over blocks anywhere on the
// grid: a 64-bit tag per block of each row, then `warps` values per row.
// Each warp's lane 0 writes its value; after a block barrier, thread 0
// swaps the launch's tag into the block's place (an atomic exchange with
// release semantics), and the first warp's lanes poll the row's tags
// (acquires; every block resident: a cooperative launch) until each is this
// launch's; then the block reads the values past L1 (ld.global.cg). The host
// gives every launch a tag no earlier launch in the process had (api.run: a
// random 62-bit start, counted up), so the workspace needs no zeroing: what
// a place held before is another launch's tag, or foreign bytes that match
// this one's by chance alone (2^-62). A CUDA graph replays a captured launch
// with its tag, so a launch made under stream capture gets its workspace
// zeroed first (tags are never 0).
//
// H100, 2026-11-25, scripts/ab_trees.py, two rounds each
// (docs/perf/grid-tags-h100.txt), us, a count per row zeroed by a memset
// before each launch -> these tags: 32 x 262144 float32 26.1 -> 25.1, 32 x
// 128256 16.1 -> 15.0, 128 x 128256 45.5 -> 44.3, 256 x 262144 186.4 ->
// 183.7, 64 x 1048576 192.0 -> 192.4, 4 x 4194304 57.7 -> 58.3. A plain
// store of the tag (st.release) lost on rows in several rounds (64 x 1048576
// 191.5 -> 200.2, 128 x 128256 45.9 -> 48.6). Four blocks' tags share a
// 32-byte sector; the likely cause (not measured with counters) is that a
// poll finding it partly written has L2 fill it from memory, where an
// atomic is done in L2, which then holds the whole sector. Four threads
// writing the tag over a whole sector of its own won that back in one run
// (193.2, 45.5) but not in the next (194.0, 50.7), and spilled the float32
// G = 4 kernels with options (64 registers, their bound; ptxas, sm_90).
// Thread 0 alone polling the row's tags in turn lost (235.9, 51.0); a tag on
// each warp's value, each lane polling the one it reads without block
// barriers, took the float32 K = 8 kernel from 56 registers to 70 (sm_90),
// four blocks an SM to three. Release and acquire
// in place of __threadfence() (fence.sc) around relaxed accesses: H100,
// 2026-11-24 (docs/perf/grid-release-acquire-h100.txt, on the count), 64 x
// 1048576 float32 88% -> 90% of copy, 32 x 262144 75% -> 77%; polling the
// count without __nanosleep(32) measured the same.
template <typename A> __device__ __forceinline__ A load_cg(const A* p) { return __ldcg(p); }
template <typename A> __device__ __forceinline__ MaxSum<A> load_cg(const MaxSum<A>* p) {
    return {__ldcg(&p->m), __ldcg(&p->s)};
}

// A 32-bit count in global memory that the blocks of one cooperative launch
// count themselves in on: count_in adds one with release semantics (what the
// calling thread wrote, or saw ordered before it by a __syncthreads(), is
// visible to whoever acquires the count), await_count polls with acquire
// semantics until the count reaches `target`: the shape of CUTLASS's generic
// barrier (which releases with fence.acq_rel and a relaxed red, the same
// semantics). Before sm_70 (no release/acquire PTX): __threadfence() around
// a relaxed count.
__device__ __forceinline__ void count_in(unsigned* count) {
#if __CUDA_ARCH__ >= 700
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(count) : "memory");
#else
    __threadfence();
    atomicAdd(count, 1u);
#endif
}

__device__ __forceinline__ void await_count(const unsigned* count, unsigned target) {
#if __CUDA_ARCH__ >= 700
    unsigned seen;
    while (true) {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(count) : "memory");
        if (seen >= target) return;
        __nanosleep(32);
    }
#else
    while (*reinterpret_cast<const volatile unsigned*>(count) < target) {}
    __threadfence();
#endif
}

template <typename V> struct GridBoard {
    unsigned long long* tags;  // a tag per block of each row
    V* values;                 // then a value per logical warp of each row
    int blocks, warps;         // a row's
    unsigned long long tag;    // this launch's
    __device__ __forceinline__ GridBoard(void* workspace, long long rows, int blocks_, int warps_, unsigned long long tag_)
        : tags(static_cast<unsigned long long*>(workspace)),
          values(reinterpret_cast<V*>(tags + rows * blocks_)), blocks(blocks_), warps(warps_), tag(tag_) {}
    __device__ __forceinline__ void write(long long row, int warp, const V& v) const {
        values[row * warps + warp] = v;
    }
    __device__ __forceinline__ void wait(long long row, int block) const {
        // The block's values (the barrier orders them before thread 0's
        // swap), then its tag with release semantics, so whoever acquires it
        // sees them; the first warp's lanes poll the row's tags with acquire
        // semantics until every block's is this launch's, and the barrier
        // hands that on to the block.
        __syncthreads();
        unsigned long long* row_tags = tags + row * blocks;
        if (threadIdx.x == 0) {
            unsigned long long old;
            asm volatile("atom.release.gpu.global.exch.b64 %0, [%1], %2;" : "=l"(old) : "l"(row_tags + block), "l"(tag) : "memory");
        }
        if (threadIdx.x < 32) {
            const unsigned long long* end = row_tags + blocks;
            for (const unsigned long long* p = row_tags + threadIdx.x; p < end; p += 32) {
                unsigned long long seen;
                while (true) {
                    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(p) : "memory");
                    if (seen == tag) break;
                    __nanosleep(32);
                }
            }
        }
        __syncthreads();
    }
    __device__ __forceinline__ V read(long long row, int warp) const { return load_cg(&values[row * warps + warp]); }
};

// -- one reduction tree for a row over a block or a cluster (split_row) ----------
//
// A row's T logical threads: thread t of cluster rank c is the row's thread
// c * blockDim.x + t, and with R folds (one block, C = 1) thread t stands for
// the row's threads t + r * blockDim.x, r < R (T = R * blockDim.x; on the
// grid, C = 0, thread t of the row's block k the threads k * blockDim.x + t
// + r * blocks * blockDim.x, T = R * blocks * blockDim.x). The tree
// that combines their partials depends on T alone, not on how C or R cuts
// it: a warp's 32 lanes, then each group of 32 consecutive warps, then the
// groups (at most 16; on the grid 64: past 32, the first 32, the rest, then
// the two), every level a butterfly (`level`: a warp's 32 values
// reduced, every lane gets the result) with the missing lanes given
// `identity`; a fold's R values a lane go through `level` together
// (warp_reduce_each: the same bits, fold r's on lane r * 32 / R). So a row
// gets the same bits from every C and R that give the
// same T, and the planner may pick them by the number of rows (batch
// invariance). With T <= 1024 (one group) a level on the groups would change
// nothing, so there is none. Where each lane reads from is worked out once
// (the division worked out a row cost split_row's float32 K = 8 cluster
// kernels about 10 registers, 79 against 69, sm_90).
//
// C = 0: the row's `blocks` blocks lie anywhere on the grid (all of it
// resident: a cooperative launch), and the warp values go through a board in
// global memory instead of distributed shared memory: a tag per block of
// each row, then a value per logical warp (GridBoard). Each block writes its
// warps' values and its tag, waits for the row's tags, and reads the same
// logical warps a cluster's lanes would: the same tree, so the same bits as
// any C that gives the same T.
//
// G (C = 0 alone): the groups each warp of a block reduces, so that blocks of
// a warp for every G groups serve (8 warps for the 32 groups of T = 32768
// with G = 4: blocks small enough to keep a shared-memory part). A group's
// value is the same whichever warp reduces it, so G changes no bits. The
// loop costs registers, so G = 1 compiles none (H100, 2026-11-23: the float32
// K = 8 grid kernel took 80 registers against 64 with the loop in every
// launch). Past 32 groups (T = 65536: G > 1 alone, a block having fewer
// warps than groups) the groups' values take one level more: the first 32,
// then the rest, then the two.
template <int C, int R = 1, int G = 1> struct RowTree {
    static_assert(C <= 1 || R == 1, "a thread folds logical threads only in one block or on the grid");
    static_assert(C == 0 || G == 1, "warps share the group level only on the grid");
    // groups of 32 warps a row at most: a cluster's 16 blocks of 1024 threads;
    // on the grid two warps' lanes (T <= 65536), each block with a warp for
    // every G groups
    static constexpr int kGroups = C == 0 ? 64 : 16;
    int count = 1;             // groups of 32 warps in the row
    int slot = 0, rank = -1;   // C != 1: the warp this lane reads for its warp's group (rank -1: none, past the row)
    int blocks = C;            // the row's blocks (C = 0: given at run time)
    void* board = nullptr;     // C = 0: GridBoard's workspace
    long long rows = 0;
    unsigned long long tag = 0;  // C = 0: the launch's (GridBoard)
    __device__ __forceinline__ RowTree(int blocks_ = C, void* board_ = nullptr, long long rows_ = 0, unsigned long long tag_ = 0)
        : blocks(C ? C : blocks_), board(board_), rows(rows_), tag(tag_) {
        const int per_block = static_cast<int>(blockDim.x >> 5), total = per_block * blocks * R;
        count = (total + 31) / 32;
        if constexpr (C != 1) {
            const int w = (count == 1 ? 0 : static_cast<int>(threadIdx.x >> 5)) * 32 + static_cast<int>(threadIdx.x & 31);
            if (w < total) slot = w % per_block, rank = w / per_block;
        }
    }
    // The row's value from each thread's `v` (fold r's in v[r]). `warps` (a
    // value per logical warp) and `groups` are shared memory, double-buffered
    // by row parity: one barrier a row (a cluster barrier with C > 1), a block
    // barrier more with several groups (H100, 2026-11-23: in one block, every
    // warp reducing every group instead was no faster, 8192 x 50257 bfloat16
    // with R = 2 93% of copy against 95%).
    template <typename V, typename Level>
    __device__ __forceinline__ V reduce(const V (&v)[R], Level level, V identity, V (&warps)[2][32 * R],
                                        V (&groups)[2][kGroups], int parity, long long row = 0) const {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, per_block = blockDim.x >> 5;
        const auto grid = [&] { return GridBoard<V>(board, rows, blocks, per_block * blocks * R, tag); };  // C = 0 alone
        // fold r's warp value w (logical warp r * (the row's warps) + this one), from its lane
        const auto put = [&](int r, const V& w) {
            if constexpr (C == 0)
                grid().write(row, (r * blocks + static_cast<int>(blockIdx.x % blocks)) * per_block + warp, w);
            else
                warps[parity][r * per_block + warp] = w;
        };
        if constexpr (R == 1) {  // the loop it was before folds reduced at once: written without it, ptxas gave
                                 // float32 log_softmax (4, 0, 1) 35 registers for 40 (sm_90), the same instructions
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const V w = level(v[r]);
                if (lane == 0) put(r, w);
            }
        } else {  // a fold's R values through `level` at once (warp_reduce_each): fold r's on lane r * 32 / R
            const V w = level(v);
            if (lane % (32 / R) == 0) put(lane / (32 / R), w);
        }
        V g;
        if constexpr (C == 1) {
            __syncthreads();
            const int w = (count == 1 ? 0 : warp) * 32 + lane;
            g = level(w < per_block * R ? warps[parity][w] : identity);
        } else if constexpr (C == 0 && G > 1) {
            grid().wait(row, static_cast<int>(blockIdx.x % blocks));
            const int total = per_block * blocks * R;  // the row's logical warps
#pragma unroll 1
            for (int group = warp; group < count; group += per_block) {  // G of them at most
                const int w = group * 32 + lane;
                const V value = level(w < total ? grid().read(row, w) : identity);
                if (lane == 0) groups[parity][group] = value;
            }
            __syncthreads();
            const V first = level(lane < count ? groups[parity][lane] : identity);
            if (count <= 32) return first;
            const V rest = level(lane + 32 < count ? groups[parity][lane + 32] : identity);
            return level(lane == 0 ? first : lane == 1 ? rest : identity);
        } else if constexpr (C == 0) {
            grid().wait(row, static_cast<int>(blockIdx.x % blocks));
            g = level(rank >= 0 ? grid().read(row, rank * per_block + slot) : identity);
        } else {
            cluster_sync();
            g = level(rank >= 0 ? cluster_load(&warps[parity][slot], rank) : identity);
        }
        if (C * R == 1 || count == 1) return g;  // the row's
        if (lane == 0 && warp < count) groups[parity][warp] = g;
        __syncthreads();
        return level(lane < count ? groups[parity][lane] : identity);
    }
};

// -- columns (strided, strided_smem) --------------------------------------------
//
// The (max, sum) of `count` pairs p[0], p[stride], ...: the max first, then
// each sum rescaled to it once, in order. UNROLL pairs are read at a time (the
// same order, so the same bits): strided_smem reads them all, strided keeps
// 1, as its threads hold their rows in registers meanwhile (the note at
// strided.cu's column_max_sum).
template <int UNROLL = 1, typename A>
__device__ __forceinline__ MaxSum<A> merge_pairs(const MaxSum<A>* p, int count, int stride) {
    A m = neg_inf<A>();
#pragma unroll UNROLL
    for (int r = 0; r < count; ++r) m = acc_max(m, p[r * stride].m);
    A s = A(0);
#pragma unroll UNROLL
    for (int r = 0; r < count; ++r) s += rescale(p[r * stride].s, p[r * stride].m, m);
    return {m, s};
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
