// Variant: strided_smem (any axis without a transposed copy, columns cached in shared memory)
//
// Idea: softmax over a middle axis, x viewed in place as (outer, N, inner)
// as strided does, for columns too long for registers. A work item is a tile
// of W adjacent columns (one 128-byte line of each row: W = 8 chunks of
// 16 / sizeof(Tin) elements); a cluster of C blocks splits its N rows into
// slices of L = ceil(N / C) rows, and each block copies its slice, L lines,
// into shared memory with cp.async (16-byte copies that need no registers:
// every line of the slice is in flight at once). x is read once and y
// written once. A column's (max, sum): each row-thread's rows from shared
// memory, then over the TY row-threads, then on sm_90 over the C blocks
// through distributed shared memory (every block merges the C partials in
// rank order: the same bits in each); row 0's W threads merge, the others
// wait at the barrier. The block then writes its slice from shared memory,
// 16-byte streaming stores; as each line goes out, the copy of the same line
// of the block's next item goes in its place, so that where clusters loop
// over items (the planner launches a few times the clusters the GPU holds)
// the next item's reads overlap this one's writes (H100, 2026-11-24, axis 0
// of (8192, 8192) float32: a cluster an item 75% of copy, four rounds of the
// 21 clusters held 78% before this overlap and 79.5% with it;
// docs/perf/strided-prefetch-h100.txt). The copies go out in two groups of
// rows (SLICE_GROUPS), and the column's pairs fold the first while the
// second lands (80.8% with that). It writes
// softmax, or log_softmax with LOG. Why not strided: a column of 8192 needs
// all 16 blocks of a cluster at 32 values a thread there, 80 registers and
// few blocks in flight; here the slice costs no registers and three blocks
// fit an SM (H100, 2026-11-22, axis 0 of (8192, 8192) float32: strided 61% of
// copy in the suite at 9ce7c9c, this layout 74% at bbc741d; 62% and 76% in
// docs/perf/sweep-strided-smem-h100.txt).
//
// Limits: every row of the view starts at the same 16-byte phase (the
// softmax-axis and outer strides, in bytes, are multiples of 16; x itself
// may be misaligned: the tile's partial first and last chunks move element by
// element, padded with -inf); inner < 2^31 (chunk indices are int). A
// column of N must fit a cluster's shared memory: L * 128 bytes a block. C > 1
// needs thread-block clusters (sm_90); C = 16 needs the non-portable cluster
// size attribute, which the loader sets. Strides are in elements and may be
// negative. Exact aliasing (y == x, same strides) is safe: a block writes
// only the slice it read, after the column's reductions, and the next item it
// copies early is one no block has written yet (each item has one cluster).
//
// Launch contract: blockDim = (W, TY), W = 128 / sizeof(Tin) columns;
// gridDim.x a multiple of C, C consecutive blocks per item, clusters looping
// over the items o * tiles + t (tiles = ceil((inner + shift) / W), shift x's
// misalignment in elements); dynamic shared memory = (2 * W * TY + 2 * W +
// (C > 1 ? 2 * (2 + C) * W : 0)) * sizeof(A) + L * 128 bytes (A the
// accumulation type). Arguments: x, y, outer, n, inner, x's outer and
// softmax-axis strides, y's.
#include "common.cuh"

constexpr int TILE_CHUNKS = 8;  // a tile is one 128-byte line of each row
// A slice's copies go out as SLICE_GROUPS groups of consecutive rows, so that the column's pairs fold each
// group as it lands while the later ones are still in flight. H100, 2026-11-24
// (docs/perf/strided-groups-h100.txt), axis 0 of (8192, 8192) float32, one group -> 2 / 4 / 8: 79.7% ->
// 80.8 / 80.5 / 79.3% of copy; bfloat16 61.5% -> 63.0 / 61.6 / 57.6%; (8192, 2048) float64 47.0% -> 48.0 /
// 46.6 / 42.3% (each group waits at a barrier).
constexpr int SLICE_GROUPS = 2;

// A row-thread's (max, sum) of a column in shared memory (`values`: the column's element of line 0; lines W
// elements apart) with its rows r, r + step, ... < end folded in; r is left at the first row past them, so a
// slice can be folded in parts (each part as its copies land), its rows in the same order as whole (the bits
// may differ from one part: the four-row steps restart at each part's first row). Float accumulators
// take one pass, four rows at a time, the sum rescaled where the max grows (the last rows by OnlineOp::add);
// double takes a pass for the max, then one for the sum, as a rescale's exponential costs more there than a
// second read, and merges that into `pair`. H100, 2026-11-24, two runs, two passes -> one
// (docs/perf/strided-prefetch-h100.txt): axis 0 of (8192, 8192) bfloat16 54.0-54.3% -> 61.3-61.6% of copy,
// float32 79.4-79.9% -> 79.6-80.3%, log_softmax 79.5-79.6% -> 79.3-80.1%; (8192, 2048) float64 46.4% -> 44.3%
// (one pass there too), so double keeps two.
template <typename A, int W, typename Tin>
__device__ __forceinline__ csm::MaxSum<A> column_pair(const Tin* values, csm::MaxSum<A> pair, int& r, int end,
                                                      int step) {
    if constexpr (sizeof(A) == 4) {
        A m = pair.m, s = pair.s;
        for (; r + 3 * step < end; r += 4 * step) {
            A v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = csm::to_acc<A>(values[(r + k * step) * W]);
            const A grown = csm::acc_max(m, csm::acc_max(csm::acc_max(v[0], v[1]), csm::acc_max(v[2], v[3])));
            const A to = csm::FastExp::sum_shift(grown);
            s = csm::rescale(s, m, grown);  // from the maxima themselves: -inf to a finite max scales by 0, not
            m = grown;                      // by exp(0 - max), which overflows for a max below -88 (a NaN)
#pragma unroll
            for (int k = 0; k < 4; ++k) s += csm::FastExp::of(v[k], to);
        }
        pair = {m, s};  // the last rows, fewer than four, one at a time
        for (; r < end; r += step) pair = csm::OnlineOp<A>{}.add(pair, csm::to_acc<A>(values[r * W]));
        return pair;
    } else {
        A m = csm::neg_inf<A>(), s = A(0);
        const int from = r;
        // (unrolled: four loads in flight rather than one shared-memory latency a row)
#pragma unroll 4
        for (; r < end; r += step) m = csm::acc_max(m, csm::to_acc<A>(values[r * W]));
        const A shift_by = csm::FastExp::sum_shift(m);
#pragma unroll 4
        for (int q = from; q < end; q += step) s += csm::FastExp::of(csm::to_acc<A>(values[q * W]), shift_by);
        return csm::OnlineOp<A>{}(pair, {m, s});
    }
}

template <typename Tin, typename Tout, bool LOG, int C>
__device__ __forceinline__ void strided_smem(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer,
                                             long long n, long long inner, long long x_outer_stride,
                                             long long x_stride, long long y_outer_stride, long long y_stride) {
    using A = csm::acc_t<Tin, Tout>;
    using State = csm::MaxSum<A>;
    constexpr int V = csm::Vec<Tin>::size;
    constexpr int W = TILE_CHUNKS * V;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
    const int row_threads = static_cast<int>(blockDim.y), threads = W * row_threads, t = ty * W + tx;
    State* pairs = reinterpret_cast<State*>(smem_raw);  // [TY][W]: each row-thread's (max, sum)
    State* column = pairs + threads;  // [W]: (max, 1 / sum or log(sum)) a column
    State* partial = column + W;  // [2][W]: this block's pairs, by item parity
    State* gathered = partial + 2 * W;  // [C][W]: the cluster's pairs, in rank order
    const int reductions = 2 * threads + 2 * W + (C > 1 ? 2 * (2 + C) * W : 0);  // accumulators, all of the above
    csm::Vec<Tin>* slice = reinterpret_cast<csm::Vec<Tin>*>(smem_raw + reductions * sizeof(A));  // [L][8]
    const int rank = static_cast<int>(blockIdx.x) % C;
    const long long clusters = gridDim.x / C;
    const long long share = (n + C - 1) / C;
    const long long first = rank * share;
    const int rows = static_cast<int>(first < n ? (n - first < share ? n - first : share) : 0);
    const int shift = csm::misalignment(x);  // every row's (the planner checks the strides)
    const long long tiles = (inner + shift + W - 1) / W;
    const long long items = outer * tiles;
    // An item's slice: its first row in x, and its tile
    const auto origin = [&](long long item, int& tile) {
        const long long o = item / tiles;
        tile = static_cast<int>(item - o * tiles);
        return x + o * x_outer_stride + first * x_stride;
    };
    // Line i of a slice into shared memory (the tile's partial first and last chunks element by element)
    const auto fetch = [&](const Tin* xs, int tile, int i) {
        const int r = i / TILE_CHUNKS, c = tile * TILE_CHUNKS + i % TILE_CHUNKS;
        const Tin* row = xs + r * x_stride;
        const int e0 = c * V - shift;
        if (e0 >= 0 && e0 + V <= inner) csm::copy_async16<true>(slice + i, row + e0);  // L2 hint: see copy_async16
        else slice[i] = csm::load_chunk(row, static_cast<int>(inner), shift, c);
    };
    const auto group_end = [&](int g) { return (g + 1) * rows / SLICE_GROUPS; };  // rows [group_end(g - 1), this)
    // f(i) for each line i of the thread's, a group of copies a SLICE_GROUPS-th of the slice's rows
    const auto each_line = [&](auto f) {
        int i = t;
#pragma unroll 1
        for (int g = 0; g < SLICE_GROUPS; ++g) {
#pragma unroll 4
            for (; i < group_end(g) * TILE_CHUNKS; i += threads) f(i);
            csm::copies_grouped();
        }
    };
    long long item = blockIdx.x / C;
    if (item < items) {
        int tile;
        const Tin* xs = origin(item, tile);
        each_line([&](int i) { fetch(xs, tile, i); });
    }
    for (int parity = 0; item < items; item += clusters, parity ^= 1) {
        const long long o = item / tiles;
        const int tile = static_cast<int>(item - o * tiles);
        // column tx of the tile: element tx of each line
        const Tin* values = reinterpret_cast<const Tin*>(slice) + tx;
        // The column's (max, sum): each row-thread's rows (column_pair), then row 0's threads merge the TY
        // row-threads' pairs, then (clusters) every row-thread fetches one block's pair and row 0 merges the C
        // of them; the others only wait.
        int next_row = ty;
        State pair{csm::neg_inf<A>(), A(0)};
#pragma unroll 1  // (unrolled, the group loops took bfloat16's kernels from 63 to 80 registers, sm_90)
        for (int g = 0; g < SLICE_GROUPS; ++g) {
            csm::copies_waited(SLICE_GROUPS - 1 - g);  // this item's group g: fetched above, or during the last item's writes
            __syncthreads();  // ... seen by all; (g = 0) and every thread is done with the last item's pairs and columns
            pair = column_pair<A, W>(values, pair, next_row, group_end(g), row_threads);
        }
        pairs[t] = pair;
        __syncthreads();
        State stats{};
        // Row 0 merges with every pair's load in flight at once, not one load a pair: the block and its cluster
        // wait on these merges (H100, 2026-11-25, scripts/probe_strided_prefetch.py,
        // docs/perf/strided-merge-h100.txt, the planner's launch, % of copy: axis 0 of (8192, 8192) float32
        // 80.8% -> 82.6%, log_softmax 80.5% -> 82.3%, bfloat16 63.0% -> 67.2%; (4096, 4096) 79.9% -> 83.5%;
        // (2048, 16384) 84.5% -> 85.7%; the same bits. Registers, sm_90: float32 47-50 both; 2-byte 56-69 -> 56-64;
        // double's log_softmax on clusters of 16 62 -> 84, three blocks an SM still).
        if (ty == 0) stats = csm::merge_pairs<8>(pairs + tx, row_threads, W);
        if constexpr (C > 1) {
            State* mine = partial + parity * W + tx;
            if (ty == 0) *mine = stats;
            csm::cluster_sync();
            for (int r = ty; r < C; r += row_threads) gathered[r * W + tx] = csm::cluster_load(mine, r);
            __syncthreads();
            if (ty == 0) stats = csm::merge_pairs<C>(gathered + tx, C, W);
        }
        if (ty == 0) column[tx] = {stats.m, LOG ? csm::acc_log(stats.s) : A(1) / stats.s};
        __syncthreads();
        // A thread writes chunk t % 8 of its lines (threads is a multiple of 8): its V columns' factors once.
        const int j = t % TILE_CHUNKS, c = tile * TILE_CHUNKS + j;
        csm::Normalize<A, Tin, LOG> columns[V];
#pragma unroll
        for (int k = 0; k < V; ++k) columns[k] = {column[j * V + k].m, column[j * V + k].s, A(1)};
        Tout* ys = y + o * y_outer_stride + first * y_stride;
        // Each line, once written out, makes room for the same line of the block's next item: its copy goes
        // out now (after the store, which needed the line's value), so the next item's reads overlap these writes.
        const bool more = item + clusters < items;
        int next_tile = 0;
        const Tin* next_xs = more ? origin(item + clusters, next_tile) : nullptr;
        const auto write = [&](int i) {
            Tout* row = ys + (i / TILE_CHUNKS) * y_stride;
            const csm::Vec<Tin> v = slice[i];
            csm::store_chunk<Tin>(
                row, static_cast<int>(inner), shift, csm::stores_aligned<Tin>(row, shift), c,
                [&](int k) { return csm::from_acc<Tout>(columns[k](v, k)); }, true);
            if (more) fetch(next_xs, next_tile, i);
        };
        each_line(write);
    }
    if constexpr (C > 1) {
        // A block's shared memory must outlive every read of it by the cluster.
        csm::cluster_sync();
    }
}

template <typename Tin, typename Tout, bool LOG>
__global__ void softmax_strided_smem(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer, long long n,
                                     long long inner, long long x_outer_stride, long long x_stride,
                                     long long y_outer_stride, long long y_stride) {
    strided_smem<Tin, Tout, LOG, 1>(x, y, outer, n, inner, x_outer_stride, x_stride, y_outer_stride, y_stride);
}

#if __CUDA_ARCH__ >= 900  // clusters exist from sm_90 on
template <typename Tin, typename Tout, bool LOG, int C>
__global__ void __cluster_dims__(C, 1, 1)
    softmax_strided_smem_cluster(const Tin* __restrict__ x, Tout* __restrict__ y, long long outer, long long n,
                                 long long inner, long long x_outer_stride, long long x_stride,
                                 long long y_outer_stride, long long y_stride) {
    strided_smem<Tin, Tout, LOG, C>(x, y, outer, n, inner, x_outer_stride, x_stride, y_outer_stride, y_stride);
}
#endif
