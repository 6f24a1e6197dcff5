// Variant: strided (any axis without a transposed copy)
//
// Idea: softmax over a middle axis, x viewed in place as (outer, N, inner):
// the softmax axis (one axis, or a run of adjacent axes that collapses) has
// N elements, the axes after it collapse to one of unit stride (inner), the
// axes before it to one (outer). A softmax runs down a column (o, :, i). A
// block is TX adjacent columns (threadIdx.x: a warp reads TX consecutive
// elements of each of its 32 / TX rows, coalesced) by TY row-threads (threadIdx.y). Row-thread
// ty of block `rank` in a cluster of C blocks holds rows g, g + G, g + 2G, ...
// (g = rank * TY + ty, G = C * TY) of its column, R of them at most, in
// registers (packed two to a register for 2-byte types, as 16-byte Vec
// chunks with Held deciding what to keep): x is read once and y written
// once. A column's (max, sum): the thread's own values, then over the TY
// row-threads through shared memory (the maxima first, then each sum
// rescaled once to the column's max), then on sm_90 over the C blocks
// through distributed shared memory (each block merges the C partials in
// rank order, so every block of the cluster gets the same bits). It writes
// softmax, or log_softmax with LOG. Exact aliasing (y == x, same strides) is
// safe: a thread writes only the elements it read, after the column's
// reductions.
//
// Limits: N <= C * TY * R; TX * TY <= 1024; R a whole number of 16-byte
// chunks (R % (16 / sizeof(Tin)) == 0). C > 1 needs thread-block clusters
// (sm_90); C = 16 needs the non-portable cluster size attribute, which the
// loader sets. Strides are in elements and may be negative (reversed or
// stepped outer and softmax axes); the inner axis has unit stride. Indices
// are 64-bit (outer * N * inner may pass 2^31).
//
// Launch contract: blockDim = (TX, TY), TX a multiple of 8; gridDim.x a
// multiple of C, C consecutive blocks per work item, clusters looping over
// the items o * tiles + t (tiles = ceil(inner / TX), t a tile of TX columns);
// dynamic shared memory = (2 * TX * TY + (C > 1 ? 2 * (2 + C) * TX : 0)) *
// sizeof(A) bytes, A the accumulation type (float, or double for float64).
// Arguments: x, y, outer, n, inner, x's outer and softmax-axis strides, y's.
#include "common.cuh"

// A column's (max, sum) over the block's TY row-threads from each thread's
// pair: maxima[ty][tx] first, then sums[ty][tx] rescaled to the column's
// max by their own thread. Every thread reads its column's TY entries in the
// same order, so all get the same bits; the leading barrier of the next call
// comes after every read of this one. The loops here and in merge_pairs stay
// rolled: unrolled, they load up to 16 entries at once while the thread's R
// values are live (float32, R = 32, C = 8: 96 registers a thread against N).
template <typename A>
__device__ __forceinline__ csm::MaxSum<A> column_max_sum(csm::MaxSum<A> t, A* maxima, A* sums) {
    const int tx = static_cast<int>(threadIdx.x), b = static_cast<int>(blockDim.x);
    const int rows = static_cast<int>(blockDim.y), own = static_cast<int>(threadIdx.y) * b + tx;
    maxima[own] = t.m;
    __syncthreads();
    A m = csm::neg_inf<A>();
#pragma unroll 1
    for (int r = 0; r < rows; ++r) m = csm::acc_max(m, maxima[r * b + tx]);
    sums[own] = csm::rescale(t.s, t.m, m);
    __syncthreads();
    A s = A(0);
#pragma unroll 1
    for (int r = 0; r < rows; ++r) s += sums[r * b + tx];
    return {m, s};
}

// v, through a volatile move the compiler cannot see through: the stores test
// their rows against it afresh rather than keep the loads' R predicates alive
// across the reductions (there are 7 predicate registers; the rest would take
// general registers: float32 at R = 32, 107 registers a thread against N).
__device__ __forceinline__ int opaque(int v) {
    int out;
    asm volatile("mov.b32 %0, %1;" : "=r"(out) : "r"(v));
    return out;
}

template <typename Tin, typename Tout, bool LOG, int R, int C>
__device__ __forceinline__ void strided(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer,
                                        long long n, long long inner, long long x_outer_stride, long long x_stride,
                                        long long y_outer_stride, long long y_stride) {
    using A = csm::acc_t<Tin, Tout>;
    using State = csm::MaxSum<A>;
    constexpr int V = csm::Vec<Tin>::size;
    constexpr int K = R / V;  // the R values as K chunks: Held and the packed max work on chunks
    static_assert(R % V == 0, "R must fill whole 16-byte chunks");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int tx = static_cast<int>(threadIdx.x), b = static_cast<int>(blockDim.x);
    const int threads = b * static_cast<int>(blockDim.y);
    A* maxima = reinterpret_cast<A*>(smem_raw);  // [TY][TX]
    A* sums = maxima + threads;  // [TY][TX]
    State* partial = reinterpret_cast<State*>(sums + threads);  // [2][TX]: this block's pairs, by item parity
    State* gathered = partial + 2 * b;  // [C][TX]: the cluster's pairs, in rank order
    const int rank = static_cast<int>(blockIdx.x) % C;
    const long long clusters = gridDim.x / C;
    const long long tiles = (inner + b - 1) / b;
    const int first = rank * static_cast<int>(blockDim.y) + static_cast<int>(threadIdx.y);  // this thread's first row
    const int step = C * static_cast<int>(blockDim.y);
    const long long x_step = step * x_stride, y_step = step * y_stride;
    const int rows_held = first < n ? static_cast<int>((n - first + step - 1) / step) : 0;  // at most R
    int parity = 0;
    for (long long item = blockIdx.x / C; item < outer * tiles; item += clusters, parity ^= 1) {
        const long long o = item / tiles;
        const long long column = (item - o * tiles) * b + tx;
        // the rows this thread holds (none for a column past inner)
        const int held_rows = column < inner ? rows_held : 0;
        const Tin* xp = x + o * x_outer_stride + column + first * x_stride;
        csm::Vec<Tin> v[K];
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int k = 0; k < V; ++k, xp += x_step)
                v[j].set(k, j * V + k < held_rows ? *xp : csm::storage_neg_inf<Tin>());
        Tout* yp = y + o * y_outer_stride + column + first * y_stride;  // here, so that o and column die early
        const A m = csm::chunks_max<A>(v);
        csm::Held<A, Tin, K, LOG> held;
        State stats{m, held.start(v, m, A(1))};  // no scale= here (api: the rows path takes the options)
        if (blockDim.y > 1) stats = column_max_sum(stats, maxima, sums);
        if constexpr (C > 1) {
            State* mine = partial + parity * b + tx;
            if (threadIdx.y == 0) *mine = stats;
            csm::cluster_sync();
            // row-thread r fetches block r's pairs (one DSMEM load a thread), then all merge them
            for (int r = static_cast<int>(threadIdx.y); r < C; r += static_cast<int>(blockDim.y))
                gathered[r * b + tx] = csm::cluster_load(mine, r);
            __syncthreads();
            stats = csm::merge_pairs(gathered + tx, C, b);
        }
        held.finish(stats);
        const int write_rows = opaque(held_rows);
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int k = 0; k < V; ++k, yp += y_step)
                if (j * V + k < write_rows) *yp = csm::from_acc<Tout>(held.out(j, k));
    }
    if constexpr (C > 1) {
        // A block's shared memory must outlive every read of it by the cluster.
        csm::cluster_sync();
    }
}

template <typename Tin, typename Tout, bool LOG, int R>
__global__ void softmax_strided(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer, long long n,
                                long long inner, long long x_outer_stride, long long x_stride,
                                long long y_outer_stride, long long y_stride) {
    strided<Tin, Tout, LOG, R, 1>(x, y, outer, n, inner, x_outer_stride, x_stride, y_outer_stride, y_stride);
}

#if __CUDA_ARCH__ >= 900  // clusters exist from sm_90 on
template <typename Tin, typename Tout, bool LOG, int R, int C>
__global__ void __cluster_dims__(C, 1, 1)
    softmax_strided_cluster(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer, long long n,
                            long long inner, long long x_outer_stride, long long x_stride,
                            long long y_outer_stride, long long y_stride) {
    strided<Tin, Tout, LOG, R, C>(x, y, outer, n, inner, x_outer_stride, x_stride, y_outer_stride, y_stride);
}
#endif
