// Variant: split_row (past the peers: long rows, and few rows)
//
// Idea: a row is split over a cluster of C blocks (C = 1 .. 16; C = 1 is one
// block per row). Its T = C * blockDim.x threads read it once with 16-byte
// loads, thread i (cluster rank * blockDim.x + threadIdx.x) the chunks i,
// i + T, ...: K of them in registers, then S more in dynamic shared memory
// when the row is longer. Each thread folds its chunks into a (max, sum) pair
// (online as each lands, where it keeps values rather than exponentials:
// split_rows), and common.cuh's RowTree combines the pairs along a tree fixed by T
// (warps, groups of 32 warps, groups); on sm_90 a cluster's blocks read each
// other's warp pairs through distributed shared memory. Every thread ends
// with the row's max and sum and writes its chunks: one read and one write of
// each element. Few long rows (8 x 128256) thus spread over C times more SMs
// than one block per row would. It writes softmax, or log_softmax with LOG,
// of scale * x over the positions a mask keeps (common.cuh, Fused).
//
// On the grid (C = 0, softmax_split_row_grid): the row's T threads (T / -G
// where G < 0 folds, below) in `blocks` blocks anywhere on the GPU instead
// of a cluster (which the H100 places 7 at a time for 16 one-block-an-SM
// blocks), a cooperative launch;
// the warp pairs go through a workspace in global memory (csm::GridBoard) and
// the tree is the same; it writes in one pass (ONE_PASS), as the clusters of
// the rows it cuts do (R = -1), so the bits are those of the cluster launch. Rows
// longer than a cluster holds (float32 past 524288) go there too, with up to
// four times a cluster's threads and a shared-memory part: one read of the row,
// where two_pass reads it twice; rows whose shared-memory part blocks of a
// warp a group cannot hold take blocks of fewer warps (G = 4: float32 rows
// of 4194304). C = -1 is the same kernel with the fused options compiled out
// (O = 0), for calls without them; C = 0 (O = 1) reads them.
//
// Folds (R > 1, one block; R < 0 folds -R, plain: below; clusters fold
// none, R = -1 there is ONE_PASS, below, and the gradients' R = 2 their
// late-y twin): thread t stands
// for the row's R logical threads t + r * blockDim.x, T = R * blockDim.x of
// them, and its chunk j belongs to
// logical thread t + (j % R) * blockDim.x, which thus owns the chunks
// l, l + T, ... as a thread of a cluster launch of T threads does. It keeps a
// (max, sum) pair per logical thread, summed in that thread's own order, and
// the tree is T's. So one block of many rows and clusters of few rows can
// share a row's layout while the clusters give each logical thread a thread
// of its own (8 x 128256 bfloat16: 4096 threads a row, not the 1024 of the
// block that holds a row in registers and shared memory).
//
// Batch invariance: the planner fixes the row's logical threads T, and K and
// S, by the row alone and picks only C (with R) by the number of rows; a
// logical thread's chunks and the tree follow from T, so a row's bits do not
// depend on its batch. Where R folds, outputs come from the row's (max, sum)
// alone (csm::Held), in the block (R > 1 or R < 0) and in the clusters
// (`again`); so do they on the grid, always, and in the clusters of rows no
// block holds (R = -1, ONE_PASS: the launches that share those rows with the
// grid).
//
// Limits: the row's chunks, ceil((N + shift) / V) with V = 16 / sizeof(Tin)
// and shift its misalignment in elements (up to V - 1; the planner counts 0
// only where every row is aligned), <= (K + S) * T, T the row's logical
// threads (C * blockDim.x, R * blockDim.x folded, blocks * blockDim.x on the
// grid, times -G where G < 0 folds there); T <= 16384 (C = 0: 65536);
// S * blockDim.x * 16 bytes of shared memory per block.
// C > 1 needs thread-block clusters (sm_90); the planner falls back to C = 1
// (or to a variant that needs no clusters) elsewhere, and folds only where
// clusters exist. C = 16 needs the non-portable cluster size attribute, which
// the loader sets. C = 0: compiled for sm_90 (it cuts layouts of clusters,
// and holds rows longer than a cluster does; log_softmax's gradient both, at
// K = 8), a block at least a warp for every max(G, 1) groups of 32
// logical warps of T.
//
// Backward (softmax_split_row_backward, _cluster_backward, _grid_backward):
// each thread holds its chunks of y and dy in registers (K of each, no
// shared-memory part), the row's threads sum s (sum of dy * y, or of dy with
// LOG) along the same tree, and every thread writes its chunks of dx. No
// folds (R = 1; R = 2 on log_softmax's gradient clusters is its late-y twin,
// below). On the grid (C = 0, LOG only: rows no cluster holds, in place
// of two_pass's two reads, and a K = 8 cluster layout's rows from
// planner.SPLIT_GRID_BACKWARD_FROM_ROWS rows, on its T), a thread holds dy alone
// while the row sums, then reads y a chunk at a time as it writes dx (on the
// clusters that lost 2 us at 1-6 rows, so they hold y too; their R = 2 twin
// reads y late, with y's chunks sent to L2 while the row sums, for the planner's
// rows off 16-byte boundaries: planner.LATE_Y_ITEMSIZES). softmax's gradient, which
// must hold y and dy there, tied or lost against two_pass (planner:
// SPLIT_GRID_BACKWARD_ITEMS), so it is not built.
//
// Launch contract: blockDim.x a multiple of 32, at most 1024 (128 on the
// plain float32 K = 2 kernel: its bound, below); gridDim.x a
// multiple of C, C consecutive blocks per row, clusters looping over rows;
// the fused options (csm::Fused) after the row strides (R <= 0 and the
// grid's O = 0 ignore them, calls without options; R = 0 S too: rows in
// registers), then S and `again`
// (nonzero: clusters write every output from the row's (max, sum); honoured
// by float-accumulating K <= 4, the planner gives it nowhere else: the grid
// and R = -1 on clusters write so always); dynamic
// shared memory = S * blockDim.x * 16 bytes (above 48 KB after raising
// max_dynamic_shared_size_bytes), S * blockDim.x * V more where the planner
// gives room for the cached chunks' mask bytes (where=). C = 0: then
// `blocks` (T / blockDim.x; T / (-G * blockDim.x) where G < 0 folds), the workspace (a 64-bit tag per
// block of each row, then rows * T / 32 pairs: csm::GridBoard) and the
// launch's tag (not 0, and no earlier launch's that the workspace may hold:
// zeroed where it may, under stream capture); gridDim.x a multiple of
// `blocks`, every block resident (a cooperative launch). Backward: no S, no `again` and no dynamic
// shared memory; y and dy rows start at the same offset from a 16-byte
// boundary; on the grid `blocks`, the workspace (a 64-bit tag per block of
// each row, then rows * T / 32 sums) and the tag, as above.
#include "common.cuh"

// The row loop, its Held type H given (split_row picks it).
template <typename Tin, typename Tout, bool LOG, int K, int R, int C, int G, typename H>
__device__ __forceinline__ void split_rows(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                           long long n, long long x_row_stride, long long y_row_stride,
                                           const csm::Fused& fused, int smem_chunks,
                                           csm::MaxSum<csm::acc_t<Tin, Tout>> (&warp_pairs)[2][32 * R],
                                           csm::MaxSum<csm::acc_t<Tin, Tout>> (&group_pairs)[2][csm::RowTree<C, R, G>::kGroups],
                                           const csm::RowTree<C, R, G>& tree) {
    using A = csm::acc_t<Tin, Tout>;
    const A scale = static_cast<A>(fused.scale);
    using State = csm::MaxSum<A>;
    // Mask words in flight at once (RowMask::apply): none in phase for clusters of 16 and the grid's G > 1,
    // held to 64 registers, which spilled with them, nor for the grid's folds, which took 70 registers with
    // them, not 64: three blocks an SM, not four (sm_90, NVRTC 13.5, float32 K = 8). The grid's G = 1 twin,
    // also held to 64 (split_row_grid_threads), batches and stages without a spill.
    constexpr int kMaskBatch = C == 16 || G > 1 || (C == 0 && R > 1) ? 1 : K;
    constexpr int V = csm::Vec<Tin>::size;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    csm::Vec<Tin>* cache = reinterpret_cast<csm::Vec<Tin>*>(smem_raw);  // chunk K + j of thread t at [j * B + t]
    // The mask's bytes of chunk K + j of thread t at [(j * B + t) * V], where the launch gave room for them
    // after the chunks (planner.stages_mask names these kernels, the grid's G = 1 among them; with_mask_room
    // gives the room where that costs no block an SM; cp.async copies 4 or 8 bytes, so not for float64) and
    // the row is in phase (RowMask::in_phase): copied with the chunk, in its group.
    constexpr bool kMayStage = kMaskBatch > 1 && V >= 4;
    // One pass, float32 folds: the register chunks' mask words loaded right after x's (RowMask::fetch),
    // before the shared-memory part's copies, not after them: issued after the copies, which queue on the
    // load unit, the words landed after every copy, and the register fold waited for them (ncu source
    // counters, H200, 8192 x 50257 float32 where=(M, N), the fold (8, 4): 9.6% of the stall samples on the
    // first word's first use). The loads' chunk indices come from a copy of `first` NVVM cannot match with
    // the later ones (an empty asm, which stops NVVM's merging only; here the result has no spills, sm_90,
    // NVRTC 13.5). Merged, held from the loads on for the writes, they took the
    // registers the words need in flight (8 bytes of spills at 64 registers, one of them a word stored to
    // the stack, which waited for it to land before the copies went out: sm_90, NVRTC 13.5).
    // A/B on the H200, 2026-11-29 (docs/perf/where-fetch-early-h200.txt): where=(M, N) 8192 x 50257 float32
    // 1032 -> 945 us, 4096 x 65536 629 -> 598 us, where=(N,) -2% and -5%; plain and scale= unchanged, outputs
    // the same bits.
    constexpr bool kFetchEarly = kMaskBatch > 1 && V == 4 && R > 1;
    // The one-block 2-byte kernel at K = 8 that folds in one pass, the input's type out (2048 x 32768 bfloat16:
    // a block of 512 a row, no shared-memory part): the 8 words read where apply read them, select_bytes
    // selects (12 instructions a chunk, not 16) and the mask row skips the 64-bit remainder where it may (as
    // kFetchEarly's). The select is what paid: reading the 8 words from a chunk index ptxas could not merge with
    // the writes' (so all 8 left together) and leaving out prefetch_held_masks' L2 prefetches gained nothing
    // on top of it (H200, 2026-11-29, docs/perf/where-bf16-attribution-h200.txt: where=(M, N) 2048 x 32768
    // 91.5 us with them, 91.0 without; scale= 71.8 and 70.9; the same bits).
    // sm_90 only: for sm_80 (not measured) it took those kernels from 64 registers to 66, past what a block of
    // 1024 threads (1024 x 65536 bfloat16 with where=) may take (NVRTC 13.5). kLeanFold and kLeanWords are
    // sm_90 only as well, having been built and timed only there.
#if __CUDA_ARCH__ >= 900
    constexpr bool kSm90 = true;
#else
    constexpr bool kSm90 = false;
#endif
    constexpr bool kLeanHeld =
        kSm90 && kMaskBatch > 1 && V == 8 && K == 8 && R == 1 && C == 1 && sizeof(Tout) == 2 && !H::keeps && !LOG;
    // The 2-byte folds, the input's type out (256 and 64 x 50257 float16: few rows, where the mask's
    // instructions a chunk show): kFetchEarly's lean parts without the early words, which held to 64 registers
    // spilled 32-36 bytes there (16 registers of words across the copies, not 8): the words read where apply
    // read them (after the copies, all 8 together as before), select_bytes for them and for the staged bytes,
    // each shared chunk read once, the mask row without the remainder where it may.
    constexpr bool kLeanFold = kSm90 && kMaskBatch > 1 && V == 8 && R > 1 && sizeof(Tout) == 2 && !LOG;
    // The 2-byte one-block kernels at K = 2 and 4 (two passes: H::keeps), the input's type out (8192 x 2048
    // bfloat16 at K = 2, 4096 x 16384 at K = 4 on twice the threads, planner.SPLIT_MASKED_ITEMS): their words
    // already leave together; here select_bytes (12 instructions a chunk, not 16) and the mask row without the
    // 64-bit remainder (a dozen dependent uniform steps and a MUFU.RCP ahead of x's first load, a row) where it may.
    constexpr bool kLeanWords = kSm90 && kMaskBatch > 1 && V == 8 && (K == 2 || K == 4) && R == 1 && C == 1 &&
                                sizeof(Tout) == 2 && H::keeps && !LOG;
    // A/B on the H200, 2026-11-29 (docs/perf/where-bf16-select-h200.txt; the same output bits on 120 calls):
    // where=(M, N) 2048 x 32768 bfloat16 100.6 -> 91.6 us, 8192 x 2048 24.2 -> 23.0, 4096 x 16384 83.7 -> 81.8;
    // where=(N,) -1.4% to -3.7%; 256 and 64 x 50257 float16 within 0.2 us; scale= 2048 x 32768 +0.7 us. With a
    // 14-instruction select of LOP3s and PRMTs instead of the HSET2 one, the same three changes took 2048 x 32768
    // to 103.0 us: the ALU's issue, not the 8th word's latency, is what that row waited for.
    const long long clusters = gridDim.x / tree.blocks;  // rows at a time
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    const int threads = tree.blocks * b, first = static_cast<int>(blockIdx.x % tree.blocks) * b + t;  // the row's threads, this one
    const csm::MaxSumLevel level;  // a warp's (max, sum) of one pair, or of a fold's R pairs at once (csm::RowTree)
    // f(j, r) for each chunk K + j kept in shared memory, r its fold (a
    // constant once the inner loop is unrolled, so partials stay in registers)
    const auto each_cached = [&](auto f) {
        for (int j0 = 0; j0 < smem_chunks; j0 += R)
#pragma unroll
            for (int i = 0; i < R; ++i)
                if (j0 + i < smem_chunks) f(j0 + i, (K + i) % R);
    };
    int parity = 0;
    for (long long row = blockIdx.x / tree.blocks; row < rows; row += clusters, parity ^= 1) {
        const Tin* xr = x + row * x_row_stride;
        Tout* yr = y + row * y_row_stride;
        const int shift = csm::misalignment(xr);
        const int end = csm::chunks_of(n, shift, V);
        // kFetchEarly's, kLeanHeld's, kLeanFold's and kLeanWords' kernels: the row's mask row without the
        // 64-bit remainder where it is the row itself
        // (a mask of x's rows: row < mask_rows) or the only one (mask_rows 1, its stride 0): the same row
        // as fused.row(row), whose remainder (I2F, MUFU.RCP, F2I and a dozen uniform steps in a chain) every
        // warp ran before x's first load.
        const csm::RowMask keep =
            fused.row(row, (kFetchEarly || kLeanHeld || kLeanFold || kLeanWords) &&
                               (row < fused.mask_rows || fused.mask_rows == 1));
        const bool staged = kMayStage && keep.bytes != nullptr && keep.in_phase<V>(shift) &&
                            csm::dynamic_smem_bytes() >= smem_chunks * b * (16 + V);
        unsigned char* const mask_cache = smem_raw + smem_chunks * b * 16;
        // chunk K + j into its shared-memory slot, asynchronously where it is
        // whole; its mask bytes beside it (staged), or else into L2 meanwhile
        // (mask_cached reads them once the chunk lands, one chunk after
        // another: each a wait on L2, which the staged copy does not make)
        const auto copy_cached = [&](int j) {
            const int c = first + (K + j) * threads;
            const int e0 = c * V - shift;
            if constexpr (kMayStage) {
                if (c < end && staged) csm::copy_async<V>(mask_cache + (j * b + t) * V, keep.at<V>(shift, c));
                else if (c < end) keep.prefetch<kMaskBatch, V>(shift, c);
            } else if (c < end) {
                keep.prefetch<kMaskBatch, V>(shift, c);
            }
            if (c < end && e0 >= 0 && e0 + V <= n) csm::copy_async16(&cache[j * b + t], xr + e0);
            else cache[j * b + t] = c < end ? csm::load_chunk(xr, static_cast<int>(n), shift, c) : csm::padding_chunk<Tin>();
        };
        const auto mask_cached = [&](int j) {
            const int c = first + (K + j) * threads;
            if (kMayStage && c < end && staged)
                keep.select(cache[j * b + t], csm::RowMask::flags(csm::RowMask::word_at<V, true>(mask_cache + (j * b + t) * V)));
            else if (c < end)
                keep.apply<kMaskBatch>(cache[j * b + t], static_cast<int>(n), shift, c);
        };
        csm::Vec<Tin> v[K];
        // The register chunks' mask lines asked of L2 once x's loads are out
        // (no register waits on them), where K = 8 words of a 2-byte type take
        // 16 registers in flight: ptxas, short of them, issued only 6 of the
        // bfloat16 kernel's 8 word loads before using the first (56
        // registers), and the last 2 each waited a DRAM latency of their own
        // (ncu source counters, H100, 2026-11-27; 4096 x 16384 bfloat16
        // where=(M, N) 118 -> 115 us with the prefetches, 111.5 with them ahead
        // of x's loads, which cost 64 x 50257 float16 0.5 us;
        // docs/perf/where-held-words-h100.txt). In phase only (the addresses
        // the words' loads read); not for a mask row that all rows share
        // (mask_rows 1, in L2 after the first row) nor at K = 4 and 2, which
        // lost time with prefetches ahead of x's loads (4096 x 8192 float16
        // where=(N,) +1.4 us, 4096 x 2048 bfloat16 where=(M, N) +0.6 us); nor
        // for the folds, held to 64 registers (12 bytes of spills, sm_90,
        // NVRTC 13.5). Since then where= rows of up to 2048 chunks launch at
        // K = 4 on twice the threads instead (planner.SPLIT_MASKED_ITEMS:
        // 4096 x 16384 bfloat16 114.7 -> 109.3 us); these prefetches served the
        // longer rows a block holds at K = 8 (2048 x 32768 bfloat16), on sm_90
        // beside kLeanHeld's select too (docs/perf/where-bf16-attribution-h200.txt).
        // One row for all sent as copies at x's phases (fused.phased: mask_rows
        // 2 to 8, as L2-resident as the one row) takes them too: not measured.
        const auto prefetch_held_masks = [&] {
            if constexpr (V == 8 && K == 8 && R == 1 && C == 1) {
                if (fused.mask_rows > 1 && keep.bytes != nullptr && keep.in_phase<V>(shift)) {
#pragma unroll
                    for (int j = 0; j < K; ++j)
                        if (first + j * threads < end) keep.prefetch<kMaskBatch, V>(shift, first + j * threads);
                }
            }
        };
        H held;
        State pairs[R];
        if constexpr (H::keeps) {
            // Two passes (R = 1): kept exponentials are taken against the
            // thread's max of all its chunks. The shared-memory part is
            // copied first, so it flies while the register part loads.
            for (int j = 0; j < smem_chunks; ++j) copy_cached(j);
            csm::load_chunks(v, xr, static_cast<int>(n), shift, first, threads, end);
            prefetch_held_masks();
            uint2 words[K];
            if (kLeanWords && keep.fetch<V>(words, shift, first + csm::opaque_zero(), threads, end)) {
#pragma unroll
                for (int j = 0; j < K; ++j) keep.select_bytes(v[j], words[j]);
            } else {
                keep.apply<kMaskBatch>(v, static_cast<int>(n), shift, first, threads, end);
            }
            A m = csm::chunks_max<A>(v);
            csm::copies_done();  // each thread reads back only chunks it copied itself: no barrier needed
            each_cached([&](int j, int) {
                mask_cached(j);
                m = csm::chunk_max(m, cache[j * b + t]);
            });
            m = csm::FastExp::scaled(m, scale);  // the max of scale * x (scale > 0), rounded as each product is
            A s = held.start(v, m, scale);
            each_cached([&](int j, int) { s = csm::chunk_sum(s, cache[j * b + t], csm::FastExp::sum_shift(m), scale); });
            pairs[0] = State{m, s};
        } else {
            // One pass: each chunk folds into its logical thread's (max, sum)
            // online as it lands, the register part first (issued first, so
            // it lands first; two passes issue the copies first, as they
            // need every chunk before any exponential), then the
            // shared-memory part, a group of copies a chunk. So the
            // exponentials overlap the row's read instead of following it
            // (H100, 2026-11-24, docs/perf/split-row-online-h100.txt: 128 x
            // 128256 bfloat16, one block a row, 68% -> 78% of copy).
            // `first` as the compiler cannot match it with the later uses' (kFetchEarly); fused.mask, not
            // the constant, keeps the plain kernel's code as it was. (The same copy for the writes instead
            // lost their whole-chunk stores' vectorization when not streaming: 4 STG.E a chunk.)
            int first_in = first;
            if (kFetchEarly && fused.mask != nullptr) asm volatile("" : "+r"(first_in));
            csm::load_chunks(v, xr, static_cast<int>(n), shift, first_in, threads, end);
            prefetch_held_masks();
            uint2 words[K];
            bool fetched = kFetchEarly && keep.fetch<V>(words, shift, first_in, threads, end);
            for (int j = 0; j < smem_chunks; ++j) {
                copy_cached(j);
                csm::copies_grouped();
            }
            if constexpr (kLeanHeld || kLeanFold) fetched = keep.fetch<V>(words, shift, first, threads, end);
            if (fetched) {
#pragma unroll
                for (int j = 0; j < K; ++j) keep.select_bytes(v[j], words[j]);
            } else {
                keep.apply<kMaskBatch>(v, static_cast<int>(n), shift, first, threads, end);
            }
#pragma unroll
            for (int r = 0; r < R; ++r) pairs[r] = State{csm::neg_inf<A>(), A(0)};
#pragma unroll
            for (int j = 0; j < K; ++j) pairs[j % R] = held.fold(j, v[j], pairs[j % R], scale);
            each_cached([&](int j, int r) {
                csm::copies_waited(smem_chunks - 1 - j);  // chunk K + j has landed (each thread reads back only its own)
                if constexpr (kFetchEarly || kLeanFold) {
                    // kFetchEarly's and kLeanFold's kernels: the chunk read once into registers, masked there (select_bytes
                    // where staged) and stored back whole where the mask applies (the writes read it again),
                    // then folded from the registers: mask_cached's select on the shared chunk, on one branch
                    // of two, read it twice (LDS.128 before the select, again after the branches met).
                    csm::Vec<Tin> chunk = cache[j * b + t];
                    const int c = first + (K + j) * threads;
                    if (keep.bytes != nullptr && c < end) {
                        if (staged)
                            keep.select_bytes(chunk, csm::RowMask::word_at<V, true>(mask_cache + (j * b + t) * V));
                        else
                            keep.apply<kMaskBatch>(chunk, static_cast<int>(n), shift, c);
                        cache[j * b + t] = chunk;
                    }
                    pairs[r] = csm::chunk_fold(pairs[r], chunk, scale);
                } else {
                    mask_cached(j);
                    pairs[r] = csm::chunk_fold(pairs[r], cache[j * b + t], scale);
                }
            });
        }
        const State stats = tree.reduce(pairs, level, State{csm::neg_inf<A>(), A(0)}, warp_pairs, group_pairs, parity, row);
        held.finish(stats);
        const bool y_aligned = csm::stores_aligned<Tin>(yr, shift);
        // Launches with a shared-memory part store evict-first: H100, 8192 x 50257
        // float32, 91% of copy with plain stores, 97% with st.global.cs (no gain,
        // or a loss, for the register-only launches and warp_rows).
        const bool streaming = smem_chunks > 0;
        csm::store_chunks<Tin>(yr, static_cast<int>(n), shift, y_aligned, first, threads, end, held, streaming);
        const auto prob = csm::normalizer<Tin, LOG>(stats, scale);  // the shared-memory part, exponentiated again
        for (int j = 0; j < smem_chunks; ++j) {
            const int c = first + (K + j) * threads;
            const csm::Vec<Tin>& chunk = cache[j * b + t];
            if (c < end)
                csm::store_chunk<Tin>(
                    yr, static_cast<int>(n), shift, y_aligned, c,
                    [&](int k) { return csm::from_acc<Tout>(prob(chunk, k)); }, streaming);
        }
        const Tout fill = csm::from_acc<Tout>(prob.masked());
        keep.refill<V>(yr, static_cast<int>(n), shift, first, threads, end, K + smem_chunks, !csm::finite_row(stats), fill);
    }
    if constexpr (C > 1) {
        // A block's shared memory must outlive every read of it by the cluster.
        csm::cluster_sync();
    }
}

// `again`: write every output from the row's (max, sum) alone, never from
// kept exponentials: a launch on clusters of a row whose one-block launch
// folds (csm::Held). It picks the row loop's Held type once a launch (two
// loops take the registers of the larger); choosing it per element took the
// float32 K = 8 cluster kernels from 69 to 96 registers (sm_90). Only
// float-accumulating K <= 4 compile it (the planner's folds launch no
// other): compiled into the K = 8 kernels it slowed their kept path (H100,
// 2026-11-24, 1 x 32000 float32 at (8, 1, 16) 7.0 -> 9.4 us, 3112 -> 4096
// instructions, registers 64 both; docs/perf/grid-one-pass-h100.txt).
// ONE_PASS writes so at compile time: the grid always, and the clusters of a
// row no block holds (R = -1 on clusters), which share their rows with the
// grid. Clusters keep no half-precision exponentials at all: their K <= 4
// launches are the folds' (`again`; rows whose own layout takes clusters
// hold more than 512 chunks a block: K = 8), and the loop that keeps 32 a
// thread took the bfloat16 K = 4 cluster kernel from 40 registers to 56
// (H100, 2026-11-23: 32 x 128256 bfloat16 52% -> 67% of copy without that
// loop, as log_softmax's; 8 x 128256 56% -> 59%).
template <typename Tin, typename Tout, bool LOG, int K, int R, int C, int G = 1, bool ONE_PASS = false>
__device__ __forceinline__ void split_row(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                          long long n, long long x_row_stride, long long y_row_stride,
                                          const csm::Fused& fused, int smem_chunks, bool again,
                                          int blocks = C, void* board = nullptr, unsigned long long tag = 0) {
    using A = csm::acc_t<Tin, Tout>;
    __shared__ __align__(16) csm::MaxSum<A> warp_pairs[2][32 * R];  // RowTree's, double-buffered by row parity
    __shared__ __align__(16) csm::MaxSum<A> group_pairs[2][csm::RowTree<C, R, G>::kGroups];
    constexpr bool keep = !ONE_PASS && R == 1 && csm::keep_exps<A, Tin, K, LOG> && (C == 1 || sizeof(Tin) >= sizeof(A));
    using Kept = csm::Held<A, Tin, K, LOG, R, keep>;  // keeps exponentials where it may
    using Again = csm::Held<A, Tin, K, LOG, R, false>;
    const csm::RowTree<C, R, G> tree(blocks, board, rows, tag);
    if (C != 1 && K <= 4 && sizeof(A) == 4 && again && keep)
        split_rows<Tin, Tout, LOG, K, R, C, G, Again>(x, y, rows, n, x_row_stride, y_row_stride, fused, smem_chunks,
                                                   warp_pairs, group_pairs, tree);
    else
        split_rows<Tin, Tout, LOG, K, R, C, G, Kept>(x, y, rows, n, x_row_stride, y_row_stride, fused, smem_chunks,
                                                  warp_pairs, group_pairs, tree);
}

// Folds (R > 1, and the plain folds R < 0) serve one-block layouts of 1024
// threads (and of 512, the planner's SPLIT_TWO_BLOCKS, at the same bound):
// float-accumulating ones are held to the 64 registers 1024 threads take
// (left free, float32 K = 8 with R = 4 took 96, sm_90); float64 ones spill
// there, so theirs is free and the planner folds no row its block cannot
// launch.
//
// R = 0, the plain kernel: no folds, and the fused options and the
// shared-memory part compiled out (no mask, scale 1 and S = 0 as constants:
// the same bits, FastExp::scaled). The planner launches it for calls without
// options whose block holds the row in registers; calls with options take its
// R = 1 twin on the same launch (calls with where= may take K = 4 on more
// threads first: planner.SPLIT_MASKED_ITEMS). The code for options and S cost those
// launches up to 4 points of copy (H100, 2026-11-23,
// scripts/probe_plain_split_row.py, docs/perf/plain-split-row-h100.txt:
// 4096 x 1024 float32 94% -> 97%, 4096 x 4096 bfloat16 94% -> 98%; the options
// compiled out with S read at run time: 93% and 96%). One kernel
// choosing either path at run time took the registers of both (float32 K = 8:
// 56 -> 75).
//
// R < 0, the plain fold: the fold -R with the options compiled out (S kept),
// for calls without options; calls with them take its R = -R twin on the same
// launch (H100, 2026-11-24, docs/perf/plain-fold-h100.txt, three runs:
// 128 x 128256 bfloat16 softmax 26.1-26.4 -> 25.8-26.2 us, log_softmax
// 25.8-26.2 -> 25.2-25.7, 78-80% -> 79-82% of copy; 64 x 50257 float32
// 16.5 -> 16.2; 8192 x 50257 float32 1117 -> 1115; 4096 x 65536 float32
// 724-725 both; bfloat16 64 -> 60 registers, float32 61 -> 58).
namespace csm {
// The one-block kernel's __launch_bounds__ (threads, blocks an SM; 0 sets
// none): folds as above; the plain float32 K = 2 kernel, whose blocks are 128
// threads at most (rows of up to 256 chunks: planner.SPLIT_ITEMS; the planner
// launches no larger block on it), is held to 32 registers, sixteen blocks an
// SM. Left free the log_softmax one took 34, twelve blocks (H100, 2026-11-23,
// scripts/probe_kernels_ab.py, docs/perf/plain-k2-bound-h100.txt, two runs:
// log_softmax 4096 x 1024 12.9-13.0 -> 12.5 us, 95% -> 98-99% of copy;
// 8192 x 1000 21.2 -> 20.8-20.9; softmax, 32 registers before and 31 after,
// 4096 x 1024 12.7 -> 12.6, 16384 x 640 26.9 -> 26.5-26.6).
template <typename Tin, typename Tout, int K, int R>
constexpr bool split_row_plain_k2 = R == 0 && K == 2 && sizeof(Tin) == 4 && sizeof(acc_t<Tin, Tout>) == 4;
// The logical threads a thread of the one-block kernel stands for (R = 0: 1, R < 0: -R, the plain fold).
template <int R>
constexpr int split_row_folds = R < 0 ? -R : R == 0 ? 1 : R;
template <typename Tin, typename Tout, int K, int R>
constexpr int split_row_threads =
    split_row_folds<R> > 1 && sizeof(acc_t<Tin, Tout>) == 4 ? 1024 : split_row_plain_k2<Tin, Tout, K, R> ? 128 : 0;
}  // namespace csm

template <typename Tin, typename Tout, bool LOG, int K, int R>
__global__ void __launch_bounds__(csm::split_row_threads<Tin, Tout, K, R>, csm::split_row_plain_k2<Tin, Tout, K, R> ? 16 : 0)
    softmax_split_row(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                      long long x_row_stride, long long y_row_stride, double scale,
                      const unsigned char* __restrict__ mask, long long mask_row_stride,
                      long long mask_rows, int smem_chunks, int again) {
    constexpr bool plain = R <= 0;
    split_row<Tin, Tout, LOG, K, csm::split_row_folds<R>, 1>(
        x, y, rows, n, x_row_stride, y_row_stride,
        plain ? csm::Fused::none() : csm::Fused{scale, mask, mask_row_stride, mask_rows},
        R == 0 ? 0 : smem_chunks, again != 0);
}

#if __CUDA_ARCH__ >= 900  // clusters exist from sm_90 on
namespace csm {
// The float-accumulating K = 8 kernels of a 16-block cluster are held to 64
// registers (a bound of 1024 threads): two 512-thread blocks an SM then, for
// rows of 8192 threads (262144 float32). Left free the compiler took 72 and
// one block fit: H100, 2026-11-23, 32 x 262144 float32 at (8, 16) with 512
// threads, 48% of copy with 72 registers, 65% with the bound (60% with 63
// registers and the tree before). The others need no bound or spill under it
// (float64 K = 8; K = 8 in clusters of 2 to 8; half-precision K = 2 in
// clusters of 16), so theirs is 0, which sets none (NVRTC 13.5 and nvcc 13.0
// emit no .maxntid for it; tests/test_build.py checks which kernels carry one).
template <typename Tin, typename Tout, int K, int C>
constexpr int split_row_bound = C == 16 && K == 8 && sizeof(acc_t<Tin, Tout>) == 4 ? 1024 : 0;
}  // namespace csm

template <typename Tin, typename Tout, bool LOG, int K, int R, int C>
__global__ void __cluster_dims__(C, 1, 1) __launch_bounds__(csm::split_row_bound<Tin, Tout, K, C>)
    softmax_split_row_cluster(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                              long long x_row_stride, long long y_row_stride, double scale,
                              const unsigned char* __restrict__ mask, long long mask_row_stride, long long mask_rows,
                              int smem_chunks, int again) {
    static_assert(R == 1 || R == -1, "clusters fold no rows; R = -1 writes in one pass (ONE_PASS)");
    split_row<Tin, Tout, LOG, K, 1, C, 1, (R == -1)>(x, y, rows, n, x_row_stride, y_row_stride,
                                                  csm::Fused{scale, mask, mask_row_stride, mask_rows}, smem_chunks,
                                                  again != 0);
}

// A row over `blocks` blocks anywhere on the grid (C = 0), its warp values
// through `board` in global memory (csm::GridBoard): a cooperative launch
// of a multiple of `blocks` blocks, every one resident. The knob after K is
// G here: G > 0 the groups of 32 warps each warp reduces (RowTree), so that
// G > 1 takes blocks of fewer warps than the row has groups. No thread
// bound on the plain kernels: float32 K = 8 took 64 registers without one (four 256-thread
// blocks an SM), and held there by __launch_bounds__(1024) as the 16-block
// clusters are it ran 2-4 us slower a launch (H100, 2026-11-23, 32 x 262144
// float32: 30.1 against 28.0 us; a probe kernel at 64 registers either way
// lost 27.0 -> 30.6 us to a (256, 4) bound). The float-accumulating G > 1
// kernels are held to two 512-thread blocks an SM (64 registers; 70 left
// free on the H100's NVRTC): the blocks of rows of T = 65536, which hold as
// many rows at once as T = 32768 in twice the warps (H100, 2026-11-24, 4 x
// 4194304 float32 63.4 -> 61.4 us; ncu at T = 32768: a quarter of the SM's
// warps active, issue active 27%; planner.SPLIT_GRID_ROW_THREADS). The
// float-accumulating G = 1, K = 8 twin that reads the options (O = 1), its
// output the input's type, is held to 64 registers by a bound of 1024
// threads (any block the planner cuts):
// with the cached chunks' mask bytes staged it took more on the H100's NVRTC
// (62 on NVRTC 13.5 here), one 512-thread block an SM, and the planner moved
// where= calls to G = 4 or the fold, which read the mask a word at a time
// (H100, 2026-11-27, docs/perf/where-grid-staged-h100.txt: 64 x 1048576
// float32 where=(M, N) 245 us with the mask read from L2 after each chunk,
// 276 staged and unbounded, 222-225 staged and bounded; plain softmax 192-193
// in all three). Half-precision input to float32 output stays free (about 71
// registers): held to 64, its 1024-thread blocks became launchable, tied G = 4
// on rows at once and won the tie, and lost (8 x 4194304 bfloat16 -> float32
// with options 256 -> 366 us; docs/perf/where-grid-staged-h100.txt run 5).
//
// G < 0 folds R = -G logical threads a thread instead (one group a warp):
// the row's layout with 1 / R of the threads (K in registers, the rest of the
// logical threads' chunks in shared memory: S = R * (K + S') - K, S' the
// unfolded layout's S), so the grid holds R times its rows at once (128256
// float32: 66 rows, not 33). The grid writes from the row's (max, sum)
// whatever the fold, so the bits are the unfolded launch's. softmax kept
// exponentials here before (the registers' chunks exponentiated once, not
// twice), which a fold would change, and its folds lost in every form tried:
// two passes (a thread's max over all its chunks, then their exponentials,
// after the last lands) double per wave as the waves halve (H100,
// 2026-11-24, docs/perf/grid-folds-h100.txt: 128 x 128256 float32 at K = 8 in
// 62 registers, 66 rows at once, 49.0 -> 49.6 us). In one pass it folds as
// log_softmax does: 48.8 -> 45.6 us (docs/perf/grid-one-pass-h100.txt).
//
// O = 0, the plain grid kernel (C = -1 in the registry): the fused options
// compiled out (no mask, scale 1 as constants: the same bits, FastExp::scaled),
// for calls without them; calls with them take its O = 1 twin, on a grid
// cut by the twin's registers (planner.as_launched). The mask's code took
// registers the shared-memory part and the loads in flight want (float32
// K = 8: 62 -> 56; H100, 2026-11-24,
// scripts/ab_trees.py, docs/perf/grid-plain-h100.txt, two runs: 64 x 1048576
// float32 193.2-194.8 -> 190.6-192.6 us, 32 x 128256 16.4-16.5 -> 16.0-16.1,
// 32 x 262144 26.4-26.5 -> 26.0-26.1; the rest within 0.3 us).
namespace csm {
template <int G>
constexpr int grid_groups = G > 0 ? G : 1;
template <int G>
constexpr int grid_folds = G < 0 ? -G : 1;
template <typename Tin, typename Tout, int K, int G, int O>
constexpr int split_row_grid_threads =
    sizeof(acc_t<Tin, Tout>) != 4 ? 0 : G > 1 ? 512 : G == 1 && K == 8 && O == 1 && sizeof(Tin) == sizeof(Tout) ? 1024 : 0;
}  // namespace csm

template <typename Tin, typename Tout, bool LOG, int K, int G, int O>
__global__ void __launch_bounds__(csm::split_row_grid_threads<Tin, Tout, K, G, O>,
                                  csm::split_row_grid_threads<Tin, Tout, K, G, O> == 512 ? 2 : 0)
    softmax_split_row_grid(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                           long long x_row_stride, long long y_row_stride, double scale,
                           const unsigned char* __restrict__ mask, long long mask_row_stride, long long mask_rows,
                           int smem_chunks, int again, int blocks, void* board, unsigned long long tag) {
    static_assert(O == 0 || O == 1, "O: the fused options compiled out (0) or in (1)");
    split_row<Tin, Tout, LOG, K, csm::grid_folds<G>, 0, csm::grid_groups<G>, true>(
        x, y, rows, n, x_row_stride, y_row_stride,
        O ? csm::Fused{scale, mask, mask_row_stride, mask_rows} : csm::Fused::none(), smem_chunks, again != 0, blocks,
        board, tag);
}
#endif

template <typename T, typename Tout, bool LOG, int K, int C, int G, bool LATE_Y>
__device__ __forceinline__ void split_row_backward(const T* __restrict__ y, const T* __restrict__ dy,
                                                   Tout* __restrict__ dx, long long rows, long long n,
                                                   long long y_row_stride, long long dy_row_stride,
                                                   long long dx_row_stride, int blocks = C, void* board = nullptr,
                                                   unsigned long long tag = 0) {
    using A = csm::acc_t<T, Tout>;
    using Tree = csm::RowTree<C, 1, G>;
    constexpr int V = csm::Vec<T>::size;
    // LATE_Y: log_softmax's gradient holds dy alone while the row's sum (of dy) is taken, and reads y once it is
    // known. On the grid a row takes fewer registers (float32 K = 8: 64 under its bound, softmax's gradient 98;
    // sm_90), so the grid holds more rows at once, and y still leaves memory once (24-30% ahead of two_pass on
    // the H200: planner.SPLIT_GRID_BACKWARD_ITEMS). On clusters (the R = 2 twin) y's chunks go to L2 as soon as
    // dy's loads are out (planner.LATE_Y_ITEMSIZES has the measurements). A row's bits are the same either way.
    static_assert(!LATE_Y || LOG, "softmax's gradient needs y in its sum");
    constexpr bool kPrefetchY = LATE_Y && C > 1;
    // softmax's gradient (one block, and clusters of up to 8) reads a 2-byte part chunk a word at a time
    // (common.cuh's load_chunk), where the thread holding it kept the row's tree waiting element by element. H200,
    // auto each side (PERFORMANCE.md, "sixty-third"), us, bfloat16: 8192 x 50257 668.5 -> 615.1 (87% -> 95% of
    // copy; registers 48 -> 52 move it from (4, 1, 4) on 416 threads to (4, 1, 8) on 224), 4096 x 16383 110.4 ->
    // 95.7 (one block), 128 x 50257 16.6 -> 15.0. Clusters of 16 keep the element path: there the registers alone
    // lost (32 x 128256, whole chunks, 10.5 -> 11.9 on the same launch). log_softmax's gradient takes it on one
    // block only: on clusters its R = 1 kernel's registers set the layout its late-y twin runs on, and the twin lost
    // on the moved one (8192 x 50257 629.9 -> 633.9, session 62). On one block no plan moves (plan_offline.py over
    // the suite), registers go 55 -> 48, and on the same launch, us: 4096 x 16383 float16 112.9 -> 96.7 (85% -> 99%
    // of copy), bfloat16 111.9 -> 96.6, 4096 x 4095 bfloat16 30.8 -> 27.7; whole rows level (PERFORMANCE.md,
    // "sixty-eighth").
    constexpr bool kPartWords = C < 16 && (!LOG || C == 1);
    __shared__ A warp_sums[2][32];  // RowTree's, double-buffered by row parity
    __shared__ A group_sums[2][Tree::kGroups];
    const int row_blocks = C ? C : blocks;  // a row's (C a constant: the cluster kernels' code as before the grid's)
    const long long at_once = gridDim.x / row_blocks;  // rows
    const int b = static_cast<int>(blockDim.x);
    const int threads = row_blocks * b, first = static_cast<int>(blockIdx.x % row_blocks) * b + static_cast<int>(threadIdx.x);
    const auto level = [](A v) { return csm::warp_reduce(v, csm::SumOp<A>()); };
    const Tree tree(blocks, board, rows, tag);
    const csm::Vec<T> zero = csm::zero_chunk<T>();
    int parity = 0;
    for (long long row = blockIdx.x / row_blocks; row < rows; row += at_once, parity ^= 1) {
        const T* yr = y + row * y_row_stride;
        const T* dyr = dy + row * dy_row_stride;
        Tout* dxr = dx + row * dx_row_stride;
        const int shift = csm::misalignment(yr);
        const int end = csm::chunks_of(n, shift, V);
        csm::HeldGrad<A, T, K, LOG> held;
        if constexpr (!LATE_Y)
            csm::load_chunks<kPartWords>(held.y, yr, static_cast<int>(n), shift, first, threads, end, csm::PlainLoad(),
                                         zero);
        csm::load_chunks<kPartWords>(held.dy, dyr, static_cast<int>(n), shift, first, threads, end, csm::PlainLoad(),
                                     zero);
        if constexpr (kPrefetchY) {
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int c = first + j * threads;
                if (c < end) csm::prefetch_l2(yr + (static_cast<long long>(c) * V - shift));
            }
        }
        const A partial[1] = {held.partial()};
        held.finish(tree.reduce(partial, level, A(0), warp_sums, group_sums, parity, row));
        const bool dx_aligned = csm::stores_aligned<T>(dxr, shift);
        if constexpr (LATE_Y) {
            // y a chunk at a time, each written as it lands: all K read first, then written, took K chunks of
            // registers more and spilled under the bound (float32 K = 8: 284 bytes, sm_90), and so did two or
            // four at a time (180 bytes); this leaves a thread one load in flight (32 warps an SM: 16 KB)
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int c = first + j * threads;
                if (c < end) {
                    held.y[j] = csm::load_chunk(yr, static_cast<int>(n), shift, c, csm::PlainLoad(), zero);
                    csm::store_chunk<T>(dxr, static_cast<int>(n), shift, dx_aligned, c,
                                        [&](int k) { return csm::from_acc<Tout>(held.out(j, k)); });
                }
            }
        } else {
            csm::store_chunks<T>(dxr, static_cast<int>(n), shift, dx_aligned, first, threads, end, held);
        }
    }
    if constexpr (C > 1) csm::cluster_sync();  // shared memory outlives every read of it by the cluster
}

// R: the forward's folds; the gradients' launches fold no rows (knobs with R = 1 only, and the clusters' late-y
// twin R = 2: variants.py)
template <typename T, typename Tout, bool LOG, int K, int R>
__global__ void softmax_split_row_backward(const T* __restrict__ y, const T* __restrict__ dy, Tout* __restrict__ dx,
                                           long long rows, long long n, long long y_row_stride,
                                           long long dy_row_stride, long long dx_row_stride) {
    static_assert(R == 1, "the gradients fold no rows");
    split_row_backward<T, Tout, LOG, K, 1, 1, false>(y, dy, dx, rows, n, y_row_stride, dy_row_stride, dx_row_stride);
}

#if __CUDA_ARCH__ >= 900
template <typename T, typename Tout, bool LOG, int K, int R, int C>
__global__ void __cluster_dims__(C, 1, 1)
    softmax_split_row_cluster_backward(const T* __restrict__ y, const T* __restrict__ dy, Tout* __restrict__ dx,
                                       long long rows, long long n, long long y_row_stride,
                                       long long dy_row_stride, long long dx_row_stride) {
    static_assert(R == 1 || R == 2, "the gradients fold no rows (R = 2: the late-y twin)");
    split_row_backward<T, Tout, LOG, K, C, 1, R == 2>(y, dy, dx, rows, n, y_row_stride, dy_row_stride,
                                                      dx_row_stride);
}

// log_softmax's gradient of rows no cluster holds, and of a K = 8 cluster layout's rows from
// planner.SPLIT_GRID_BACKWARD_FROM_ROWS rows (on its T), over `blocks` blocks anywhere on the grid (C = 0, as the forward's
// softmax_split_row_grid: a cooperative launch, the warp sums through `board`, csm::GridBoard). G as there.
// log_softmax's G = 1, K = 8 float-accumulating kernel is held to 64 registers (a bound of 1024 threads, the
// block a warp for each of 32 groups needs): 70 left free (sm_90, NVRTC 13.5), where 1024 threads do not launch.
namespace csm {
template <typename T, typename Tout, bool LOG, int K, int G>
constexpr int split_row_grid_backward_threads = K == 8 && G == 1 && sizeof(acc_t<T, Tout>) == 4 ? 1024 : 0;
}  // namespace csm

template <typename T, typename Tout, bool LOG, int K, int G>
__global__ void __launch_bounds__(csm::split_row_grid_backward_threads<T, Tout, LOG, K, G>)
    softmax_split_row_grid_backward(const T* __restrict__ y, const T* __restrict__ dy, Tout* __restrict__ dx,
                                    long long rows, long long n, long long y_row_stride, long long dy_row_stride,
                                    long long dx_row_stride, int blocks, void* board, unsigned long long tag) {
    static_assert(LOG, "softmax's gradient stays on two_pass past a cluster (planner.SPLIT_GRID_BACKWARD_ITEMS)");
    split_row_backward<T, Tout, LOG, K, 0, G, true>(y, dy, dx, rows, n, y_row_stride, dy_row_stride, dx_row_stride,
                                                    blocks, board, tag);
}
#endif
