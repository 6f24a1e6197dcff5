// Variant: warp_rows (past the peers: short rows)
//
// Idea: G threads share a row (G = 1 .. 32, a power of two), so a warp serves
// 32 / G rows at once and short rows still fill every lane. Each thread holds
// K 16-byte chunks of its row in registers, read once and written once (16-byte
// accesses on whole granules; see O below); the row's max comes from a butterfly over
// the G lanes, then its sum from a second over their sums rescaled to that max.
// It writes softmax, or log_softmax with LOG, of scale * x over the positions
// a mask keeps (common.cuh, Fused). A block takes blockDim.x / G rows; blocks
// loop over further groups of rows only past the grid limit (a grid of the
// resident blocks looping over the rows was 3-6 points slower: planner.py).
//
// O = 1 takes the fused options; O = 0 compiles them out (no mask, scale 1 as
// constants), the plain path: the options' code cost short rows 2-11 points
// of copy even where no call passed them (H100, 2026-11-23,
// scripts/probe_plain_warp_rows.py, docs/perf/plain-warp-rows-h100.txt:
// 262144 x 32 float32 94% -> 97%, log_softmax 4096 x 1024 bfloat16 82% -> 91%).
// The plain forward path (O = 0) holds a row of any 16-byte phase in ceil(N / V)
// chunks, as many as a row on a boundary (common.cuh, Slots: the row's last
// partial granule folded into its first where both are partial); its partial
// granules (the row's first and last, at most two a row, in the first chunk of
// its first two lanes) are read whole where they lie inside x and padded, and
// written in aligned pieces, for 2-byte rows of more than one chunk a lane
// (GRANULES), element by element otherwise. The kernels with options (O = 1)
// and the gradients count chunks from the 16-byte boundary before the row, up
// to one more. H200, 2026-11-29 (docs/perf/plain-odd-rows-h200.txt), against
// the layout from the boundary: 4194304 x 63 float32 791 -> 574 us (62% -> 86%
// of copy), 2097152 x 255 bfloat16 1187 -> 677 (42% -> 74%), 1048576 x 127
// float16 350 -> 177, 16384 x 1023 bfloat16 30.4 -> 19.8.
// O = -2 is the plain path element-strided, for float32 rows whose N is not
// a multiple of V and float64 rows of any N, on layouts of their own
// (planner.py, ELEMENT_STRIDED_LAYOUTS: 2 to 88 and 129 to 256 chunks,
// float64 2 to 256):
// lane l of G holds elements l + G * i, each read and written in a scalar
// access (common.cuh, load_strided), any phase with no edge code. Its sum
// runs in another order than O = 0's, so the planner gives it a row at any
// phase (a float32 row that may take O = -1, N % V == 0, never), and a row
// plans it alone as in any batch (Planner.element_strided; the measurement
// beside the table).
// O = -1 is the plain path on whole chunks, for calls whose rows of x and y
// all start on 16-byte boundaries and whose N is a multiple of V: every
// chunk a lane holds is read whole, and written whole where Tout is as wide
// as Tin (a wider output is written element by element, as in O = 0), so
// neither the misalignment arithmetic nor those element paths are compiled;
// same values, same order, so the same bits as O = 0 (the planner takes it
// where it may: Planner.on_whole_chunks, with the measurement).
// O = 2 is O = 1 on whole chunks, for calls with options whose rows are
// whole chunks as above and whose mask, if any, has its row r at mask row
// r (one mask row for all: stride 0) at x's 16-byte phase: no misalignment
// arithmetic, no remainder for the mask row, and every chunk's mask bytes
// one aligned word (RowMask::apply's in-phase path, also at K = 1, where O = 1
// reads a chunk's bytes through kept_bytes); the same bits as O = 1.
// H100, 2026-11-28 (scripts/probe_fused.py --shapes, against the head
// before it, two runs a side; docs/perf/where-whole-chunks-h100.txt), us:
// where=(M, N) 262144 x 32 float32 27.9 -> 24.3-24.4, 262144 x 100
// 78.1-78.4 -> 76.1-76.2, 16384 x 256 float16 10.1-10.3 -> 9.8-9.9; scale=
// 262144 x 100 69.9-70.1 -> 68.3-68.4. Registers down or equal for one
// dtype in and out (2-byte (16, 2) 55 -> 40), up for half precision in and
// float32 out ((32, 8) 76 -> 96, not timed); no spills.
//
// Limits: N + V - 1 <= G * K * V, V = 16 / sizeof(Tin) elements per chunk (the
// extra V - 1 covers a row that starts mid-chunk); N <= G * K * V for O = 0's
// forward kernels (Slots), for O = -2 (element-strided) and for O = -1 and 2
// (whole chunks).
//
// Backward (softmax_warp_rows_backward): the same layout over a row's y and
// dy (both held), one butterfly for s (sum of dy * y, or of dy with LOG),
// then dx written: one read of y and dy, one write of dx. O = 0 counts a
// row's chunks from the 16-byte boundary before it; O = -1 is its twin on
// whole chunks (rows of y, dy and dx on 16-byte boundaries, N a multiple of
// V), the same bits with no misalignment arithmetic and no element path
// (Planner.on_whole_chunks has the measurement: 4096 x 1024 bfloat16
// softmax_backward 10.4 -> 9.5 us on the H200).
//
// Launch contract: blockDim.x a multiple of 32 (at most 256 for the kernels
// with a bound: warp_rows_bounded, warp_rows_plain_held, warp_rows_grad_bounded);
// 32 / G rows per warp;
// any grid (blocks loop over row groups by gridDim.x); no shared memory;
// the fused options (csm::Fused) after the row strides, read with O = 1 and 2
// (O = 0, -1 and -2 ignore them: calls without scale= or where=). O = -1 and 2: every
// row of x and y starts on a 16-byte boundary and N is a multiple of V; O = 2
// also: mask_rows is 1 (stride 0) or the number of rows, and every mask row
// starts on a V-byte boundary.
// Backward: y and dy rows start at the same offset from a 16-byte boundary;
// O = -1 (the gradients' twin on whole chunks): every row of y, dy and dx
// starts on a 16-byte boundary and N is a multiple of V.
#include "common.cuh"

namespace csm {
// Pick<C, X, Y>::type: X where C, else Y (no <type_traits> under NVRTC).
template <bool C, typename X, typename Y> struct Pick { using type = X; };
template <typename X, typename Y> struct Pick<false, X, Y> { using type = Y; };
// The scale as the type S takes it: Unit (scale 1 at compile time) or the accumulation type.
template <typename S> __device__ __forceinline__ S scale_as(double scale) { return static_cast<S>(scale); }
template <> __device__ __forceinline__ Unit scale_as<Unit>(double) { return Unit(); }

// Kernels of one chunk a lane are held to 32 registers (eight 256-thread
// blocks an SM: WARP_ROWS_THREADS) where that spills nothing (sm_90: float32,
// and 2-byte types with 8 or more lanes a row): where= took them from 30-32
// to 37-46 registers (f446e42; the plain path too, before O), and tiny rows need
// every warp an SM holds in flight. H100, 2026-11-23 (scripts/sweep_configs.py,
// docs/perf/warp-rows-bound-h100.txt): 262144 x 32 float32 at (8, 1) 83% of
// copy with 46 registers, 91-92% with 32 (96% at e8d06f1, before where=).
// The others get no bound at all (0, 0: no .maxntid): a bound of 256 threads
// alone let ptxas take more registers (bfloat16 (32, 4) 63 -> 69).
template <typename Tin, typename Tout, int G, int K>
constexpr bool warp_rows_bounded =
    K == 1 && sizeof(Tin) == sizeof(Tout) && (sizeof(Tin) == 4 || (sizeof(Tin) == 2 && G >= 8));
// float32's plain kernels at K = 2 held to eight 256-thread blocks an SM, but log_softmax's on Slots (O = 0) to
// six. On Slots they took 40 registers (softmax) and 47-48 (log_softmax), six and five blocks; held, 32 and 40, no
// spills (sm_90 and sm_80, NVRTC 13), the same bits (H200, 2026-11-29, docs/perf/odd-rows-s50-h200.txt:
// softmax 2097152 x 127 556 -> 536 us; log_softmax 4194304 x 63 601 -> 576); log_softmax at eight blocks
// spilled 8 bytes and ran 25-40% slower. Element-strided (O = -2) both take 28-32 (sm_90) held to eight.
template <typename Tin, typename Tout, int K, int O>
constexpr bool warp_rows_plain_held = (O == 0 || O == -2) && K == 2 && sizeof(Tin) == 4 && sizeof(Tout) == 4;
template <typename Tin, typename Tout, bool LOG, int G, int K, int O>
constexpr int warp_rows_min_blocks = warp_rows_bounded<Tin, Tout, G, K>           ? 8
                                     : warp_rows_plain_held<Tin, Tout, K, O>      ? (LOG && O == 0 ? 6 : 8)
                                                                                  : 0;
}  // namespace csm

template <typename Tin, typename Tout, bool LOG, int G, int K, int O>
__global__ void __launch_bounds__(csm::warp_rows_min_blocks<Tin, Tout, LOG, G, K, O> ? 256 : 0,
                                  csm::warp_rows_min_blocks<Tin, Tout, LOG, G, K, O>) softmax_warp_rows(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                  long long n, long long x_row_stride, long long y_row_stride, double scale,
                                  const unsigned char* __restrict__ mask, long long mask_row_stride,
                                  long long mask_rows) {
    using A = csm::acc_t<Tin, Tout>;
    static_assert(O >= -2 && O <= 2, "O: the fused options compiled in (1; 2 on whole chunks), out (0; -1 on whole "
                                     "chunks; -2 element-strided)");
    constexpr bool WHOLE = O == -1 || O == 2;
    constexpr bool SLOTS = O == 0;  // rows of any phase in ceil(N / V) slots (common.cuh, Slots)
    // Partial granules read whole and written in pieces for 2-byte rows of more than one chunk a lane; element
    // by element for the rest. A/B on the H200, 2026-11-29 (docs/perf/plain-odd-rows-h200.txt), whole granules
    // against element edges: 2097152 x 255 bfloat16 677 against 732 us, 1048576 x 127 float16 177 against 201,
    // 16384 x 1023 bfloat16 19.8 against 21.1; but 4194304 x 63 float32 627 against 574 (log_softmax 630
    // against 599): the selects and narrow pieces cost float32 rows more than their element paths.
    constexpr bool GRANULES = SLOTS && K > 1 && sizeof(Tin) == 2;
    constexpr bool STRIDED = O == -2;  // element-strided: no chunks, no Slots
    static_assert(!STRIDED || (sizeof(Tin) >= 4 && sizeof(Tout) == sizeof(Tin)),
                  "element-strided: float32 and float64 in and out (the rows measured)");
    const csm::Span span = csm::Span::of(x, rows, n, x_row_stride);
    const int slot_count = static_cast<int>((n + csm::Vec<Tin>::size - 1) / csm::Vec<Tin>::size);
    const csm::Fused fused = O >= 1 ? csm::Fused{scale, mask, mask_row_stride, mask_rows} : csm::Fused::none();
    const int lane_in_row = threadIdx.x & (G - 1);
    constexpr int ROWS_PER_WARP = 32 / G;
    const long long warp = static_cast<long long>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long warp_step = static_cast<long long>(gridDim.x) * (blockDim.x >> 5) * ROWS_PER_WARP;
    // The loop runs the same number of times on every lane of a warp, so the
    // shuffles below always see all 32 lanes; lanes past the last row idle.
    for (long long first = warp * ROWS_PER_WARP; first < rows; first += warp_step) {
        const long long row = first + ((threadIdx.x & 31) / G);
        const bool live = row < rows;
        const Tin* xr = x + (live ? row : 0) * x_row_stride;
        Tout* yr = y + (live ? row : 0) * y_row_stride;
        const int shift = WHOLE ? 0 : csm::misalignment(xr);
        const csm::Slots<Tin> slots(xr, static_cast<int>(n), shift, live ? slot_count : 0, span);
        const int chunks = SLOTS ? slots.count : live ? csm::chunks_of(n, shift, csm::Vec<Tin>::size) : 0;
        const csm::RowMask keep = fused.row(live ? row : 0, O == 2);
        csm::Vec<Tin> v[K];
        if constexpr (STRIDED)  // lane l: elements l + G * i (a lane past the last row: none)
            csm::load_strided<G>(v, xr, live ? static_cast<int>(n) : 0, lane_in_row);
        else if constexpr (GRANULES)  // whole granules, padded
            csm::load_granules(v, xr, static_cast<int>(n), shift, lane_in_row, G, slots);
        else if constexpr (SLOTS)
            csm::load_elements(v, xr, static_cast<int>(n), shift, lane_in_row, G, slots);
        else
            csm::load_chunks(v, xr, static_cast<int>(n), shift, lane_in_row, G, chunks, csm::PlainLoad(),
                             csm::padding_chunk<Tin>(), WHOLE);
        // Every lane of the warp gets here (the loop above is warp-uniform). Without this barrier ptxas kept a
        // divergent fallback for the shuffles and, in float64 log_softmax, issued the last loads only after the
        // max of the first (SASS of (16, 4, -2): 3 of 8 loads after the max): a warp waited on memory twice.
        // With it, every load issues first, and registers fell (float64 (16, 4, -2) log 76 -> 56; (32, 2, -1)
        // 60 -> 38), the same bits on all 963 check.py digests. H200, 2026-11-29 (docs/perf/syncwarp-s52-h200.txt),
        // us: float64 log_softmax 524288 x 201 770 -> 514, 1048576 x 127 659 -> 558; softmax 1048576 x 128
        // 634 -> 533, 524288 x 201 459 -> 435; float32 2097152 x 127 525 -> 519; no shape slower. float64
        // strided softmax of four chunks a lane then took 48 registers free, and the bound to four blocks an SM
        // (64) that had paid before the barrier cost it 5%: 524288 x 201 439 -> 414 us without it, 2097152 x 41
        // 404 -> 381 (docs/perf/wide-held-s52-h200.txt).
        __syncwarp();
        keep.apply<K>(v, static_cast<int>(n), shift, lane_in_row, G, chunks, O == 2);
        const A thread_max = csm::FastExp::scaled(csm::chunks_max<A>(v), static_cast<A>(fused.scale));
        // The outputs widen the kept values as the sum did (WidenPass::read): ptxas then keeps the widened row
        // rather than widening it twice. That costs registers (bfloat16 LOG (32, 4): 64 against 53, four
        // 256-thread blocks an SM either way; (16, 2): 48 against 40, five blocks against six), and widening
        // twice cost short half-precision rows more (H100, 2026-11-23, scripts/probe_widen_pass.py,
        // docs/perf/widen-pass-h100.txt: log_softmax 4096 x 1024 bfloat16 92% of copy against 90%, 4096 x 256
        // at (16, 2) 89% against 86%).
        // GRANULES and STRIDED float32: scale 1 known at compile time (csm::Unit), so no product by it an element
        // (the max's stays); float64 has no Unit (a product by 1 there is exact).
        using Scale = typename csm::Pick<GRANULES || (STRIDED && sizeof(A) == 4), csm::Unit, A>::type;
        csm::Held<A, Tin, K, LOG, 1, csm::keep_exps<A, Tin, K, LOG>, csm::WidenPass::read, Scale> held;
        const A thread_sum = held.start(v, thread_max, csm::scale_as<Scale>(fused.scale));
        const csm::MaxSum<A> stats = csm::warp_max_sum<G>(csm::MaxSum<A>{thread_max, thread_sum});
        held.finish(stats);
        if constexpr (STRIDED)
            csm::store_strided<G, Tin>(yr, live ? static_cast<int>(n) : 0, lane_in_row, held);
        else if constexpr (GRANULES)
            csm::store_granules<Tin>(yr, static_cast<int>(n), shift, csm::stores_aligned<Tin>(yr, shift), lane_in_row,
                                     G, slots, held);
        else if constexpr (SLOTS)
            csm::store_elements<Tin>(yr, static_cast<int>(n), shift, csm::stores_aligned<Tin>(yr, shift), lane_in_row,
                                     G, slots, held);
        else
            csm::store_chunks<Tin>(yr, static_cast<int>(n), shift, WHOLE || csm::stores_aligned<Tin>(yr, shift),
                                   lane_in_row, G, chunks, held, false, WHOLE);
        keep.refill<csm::Vec<Tin>::size>(yr, static_cast<int>(n), shift, lane_in_row, G, chunks, K,
                                         !csm::finite_row(stats), csm::from_acc<Tout>(held.masked()));
    }
}

namespace csm {
// The 2-byte log_softmax gradients of four chunks a lane on a whole warp a
// row (G = 32) are held to 64 registers (four 256-thread blocks an SM), as
// their softmax twins take without a bound; left free they took 68 (bfloat16)
// and 70 (half) and an SM held three blocks (smaller G took 55-64 free, so
// theirs stay free) (H100, 2026-11-25, scripts/ab_trees.py, three rounds,
// docs/perf/warp-rows-grad-bound-h100.txt: 4096 x 1024 bfloat16 11.6 ->
// 11.1 us, float16 11.8 -> 11.1; no spills, sm_90).
template <typename T, typename Tout, bool LOG, int G, int K>
constexpr bool warp_rows_grad_bounded = LOG && G == 32 && K == 4 && sizeof(T) == 2 && sizeof(Tout) == 2;
}  // namespace csm

template <typename T, typename Tout, bool LOG, int G, int K, int O>
__global__ void __launch_bounds__(csm::warp_rows_grad_bounded<T, Tout, LOG, G, K> ? 256 : 0,
                                  csm::warp_rows_grad_bounded<T, Tout, LOG, G, K> ? 4 : 0) softmax_warp_rows_backward(const T* __restrict__ y, const T* __restrict__ dy, Tout* __restrict__ dx,
                                           long long rows, long long n, long long y_row_stride,
                                           long long dy_row_stride, long long dx_row_stride) {
    static_assert(O == 0 || O == -1, "the gradients take no options (O: 0 any phase, -1 on whole chunks)");
    constexpr bool WHOLE = O == -1;
    using A = csm::acc_t<T, Tout>;
    const int lane_in_row = threadIdx.x & (G - 1);
    constexpr int ROWS_PER_WARP = 32 / G;
    const long long warp = static_cast<long long>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const long long warp_step = static_cast<long long>(gridDim.x) * (blockDim.x >> 5) * ROWS_PER_WARP;
    const csm::Vec<T> zero = csm::zero_chunk<T>();
    for (long long first = warp * ROWS_PER_WARP; first < rows; first += warp_step) {  // as in the forward
        const long long row = first + ((threadIdx.x & 31) / G);
        const bool live = row < rows;
        const T* yr = y + (live ? row : 0) * y_row_stride;
        const T* dyr = dy + (live ? row : 0) * dy_row_stride;
        Tout* dxr = dx + (live ? row : 0) * dx_row_stride;
        const int shift = WHOLE ? 0 : csm::misalignment(yr);
        const int chunks = live ? csm::chunks_of(n, shift, csm::Vec<T>::size) : 0;
        csm::HeldGrad<A, T, K, LOG> held;
        csm::load_chunks(held.y, yr, static_cast<int>(n), shift, lane_in_row, G, chunks, csm::PlainLoad(), zero, WHOLE);
        csm::load_chunks(held.dy, dyr, static_cast<int>(n), shift, lane_in_row, G, chunks, csm::PlainLoad(), zero,
                         WHOLE);
        held.finish(csm::warp_reduce<G>(held.partial(), csm::SumOp<A>()));
        csm::store_chunks<T>(dxr, static_cast<int>(n), shift, WHOLE || csm::stores_aligned<T>(dxr, shift), lane_in_row,
                             G, chunks, held, false, WHOLE);
    }
}
