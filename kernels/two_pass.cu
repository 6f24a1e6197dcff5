// Variant: two_pass (rows longer than the chip holds)
//
// Idea: rows are cut into `slices` slices, one (row, slice) piece per block
// at a time, and taken in groups of `group_rows` rows small enough to stay
// in L2 between their two reads. Phase 0 of a piece folds its slice into a (max, sum)
// pair (16-byte loads, K chunks per thread in flight), writes it to a
// workspace and counts it into its row's counter. Phase 1 of a piece waits
// until its row's counter holds every slice, merges the row's pairs (the
// same order in every block of the row), reads its slice again -- from L2 --
// and writes exp(x - max) / sum (with LOG, log_softmax's (x - max) - log(sum)).
// Every block walks the groups pipelined by one: phase 0 of its pieces of
// group g, then phase 1 of its pieces of group g - 1, which the whole grid
// finished reading a step earlier, so waits are rare and no grid-wide barrier
// stalls every SM. y is written once; x leaves HBM once where the second
// read hits L2 (not for rows longer than half of L2, which go a row a group).
//
// Limits: any N; workspace of rows * slices (max, sum) pairs and rows 32-bit
// counters. A row's phase 1 waits for blocks of the same grid.
//
// Launch contract: a cooperative launch (the whole grid resident at once, so
// every wait ends); blockDim.x a multiple of 32, at most 1024; the workspace
// zeroed (the counters lie after the pairs); no dynamic shared memory.
#include "common.cuh"

// Phase 0 reads with L2's evict_last priority, so that the group is still
// there at phase 1 while other groups and y stream through (sm_80+; a plain
// load before). Phase 1 reads it a last time evict-first (ld.global.cs), and
// y is stored evict-first too.
struct KeepInL2 {
    template <typename T> __device__ __forceinline__ csm::Vec<T> operator()(const T* p) const {
#if __CUDA_ARCH__ >= 800
        csm::Vec<T> v;
        asm("{\n\t.reg .b64 policy;\n\tcreatepolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
            "ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], policy;\n\t}"
            : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
        return v;
#else
        return csm::PlainLoad()(p);
#endif
    }
};

struct LastUse {
    template <typename T> __device__ __forceinline__ csm::Vec<T> operator()(const T* p) const {
        const uint4 u = __ldcs(reinterpret_cast<const uint4*>(p));
        csm::Vec<T> v;
        v.w[0] = u.x, v.w[1] = u.y, v.w[2] = u.z, v.w[3] = u.w;
        return v;
    }
};

template <typename Tin, typename Tout, bool LOG, int K>
__global__ void softmax_two_pass(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                                 long long x_row_stride, long long y_row_stride, int slices, int group_rows,
                                 void* workspace) {
    using A = csm::acc_t<Tin, Tout>;
    using State = csm::MaxSum<A>;
    constexpr int V = csm::Vec<Tin>::size;
    const csm::OnlineOp<A> op;
    __shared__ State scratch[32];
    State* partials = reinterpret_cast<State*>(workspace);  // pair of (row, slice) at [row * slices + slice]
    unsigned* counted = reinterpret_cast<unsigned*>(partials + rows * slices);  // pairs written, per row
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    // The row of a piece (row * slices + slice) and its slice's [first, end) chunks.
    auto slice_of = [&](long long piece, const Tin*& xr, int& shift, int& first, int& end) {
        xr = x + piece / slices * x_row_stride;
        shift = csm::misalignment(xr);
        const int chunks = csm::chunks_of(n, shift, V);
        const int per_slice = (chunks + slices - 1) / slices;
        first = static_cast<int>(piece % slices) * per_slice;
        end = first + per_slice < chunks ? first + per_slice : chunks;
    };
    const long long all_pieces = rows * slices;
    const long long group_pieces = static_cast<long long>(group_rows) * slices;
    // Phase 0: fold the piece's slice into a pair, write it, count it.
    auto fold = [&](long long piece) {
        const Tin* xr;
        int shift, first, end;
        slice_of(piece, xr, shift, first, end);
        State stats = op.identity();
        for (int c0 = first + t; c0 < end; c0 += K * b) {
            csm::Vec<Tin> v[K];
            csm::load_chunks(v, xr, static_cast<int>(n), shift, c0, b, end, KeepInL2());
            stats = op(stats, csm::chunk_stats<A>(v));
        }
        stats = csm::block_max_sum(stats, scratch);
        if (t == 0) {
            partials[piece] = stats;
            __threadfence();  // the pair before its count
            atomicAdd(&counted[piece / slices], 1u);
        }
    };
    // Phase 1: wait for the row's pairs, merge them, write the piece's slice.
    auto write = [&](long long piece) {
        const long long row = piece / slices;
        if (t == 0) {
            while (*reinterpret_cast<volatile unsigned*>(&counted[row]) < static_cast<unsigned>(slices)) {
#if __CUDA_ARCH__ >= 700
                __nanosleep(64);
#endif
            }
            __threadfence();  // the counted pairs before reading them
        }
        __syncthreads();
        const Tin* xr;
        int shift, first, end;
        slice_of(piece, xr, shift, first, end);
        // The row's pairs, strided over the block, then one block reduction:
        // the same order in every block of the row.
        const State* row_pairs = partials + row * slices;
        State stats = op.identity();
        for (int s = t; s < slices; s += b) stats = op(stats, row_pairs[s]);
        const auto prob = csm::normalizer<Tin, LOG>(csm::block_max_sum(stats, scratch));
        Tout* yr = y + row * y_row_stride;
        const bool same_alignment = csm::misalignment(yr) == shift;
#pragma unroll 4
        for (int c = first + t; c < end; c += b) {
            const csm::Vec<Tin> chunk = csm::load_chunk(xr, static_cast<int>(n), shift, c, LastUse());
            csm::store_chunk<Tin>(
                yr, static_cast<int>(n), shift, same_alignment, c,
                [&](int k) { return csm::from_acc<Tout>(prob(chunk, k)); }, true);
        }
    };
    // Group g's pieces are [g * group_pieces, group_end(g)); this block takes
    // every gridDim.x-th from its own index on.
    auto group_end = [&](long long g) { return (g + 1) * group_pieces < all_pieces ? (g + 1) * group_pieces : all_pieces; };
    const long long groups = (rows + group_rows - 1) / group_rows;
    for (long long group = 0; group <= groups; ++group) {
        if (group < groups)
            for (long long piece = group * group_pieces + blockIdx.x; piece < group_end(group); piece += gridDim.x)
                fold(piece);
        if (group > 0)
            for (long long piece = (group - 1) * group_pieces + blockIdx.x; piece < group_end(group - 1);
                 piece += gridDim.x)
                write(piece);
    }
}
