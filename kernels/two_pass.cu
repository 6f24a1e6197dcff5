// Variant: two_pass (rows longer than the chip holds)
//
// Idea: rows are cut into `slices` slices, one (row, slice) piece per block
// at a time, and taken in groups of `group_rows` rows small enough to stay
// in L2 between their two reads. Phase 0 of a piece folds its slice into a (max, sum)
// pair (16-byte loads, K chunks per thread in flight), writes it to a
// workspace and counts it into its row's counter. Phase 1 of a piece waits
// until its row's counter holds every slice, merges the row's pairs (the
// same order in every block of the row), reads its slice again -- from L2 --
// and writes exp(x - max) / sum (with LOG, log_softmax's (x - max) - log(sum)),
// of scale * x over the positions a mask keeps (common.cuh, Fused).
// Every block walks the groups pipelined by one: phase 0 of its pieces of
// group g, then phase 1 of its pieces of group g - 1, which the whole grid
// finished reading a step earlier, so waits are rare and no grid-wide barrier
// stalls every SM. y is written once; x leaves HBM once where the second
// read hits L2 (not for rows longer than half of L2, which go a row a group).
//
// Backward (softmax_two_pass_backward): the same walk over y and dy; phase 0
// folds a slice into its share of s (sum of dy * y, or of dy with LOG),
// phase 1 merges the row's shares and writes dx from y and dy read again.
//
// Limits: any N; workspace of rows * slices (max, sum) pairs (backward: one
// sum each) and rows 32-bit counters. A row's phase 1 waits for blocks of the
// same grid.
//
// Launch contract: a cooperative launch (the whole grid resident at once, so
// every wait ends); blockDim.x a multiple of 32, at most 1024; the fused
// options (csm::Fused) after the row strides (not the backward's); the workspace
// zeroed (the counters lie after the pairs); no dynamic shared memory.
// Backward: y and dy rows start at the same offset from a 16-byte boundary.
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

// The (row, slice) pieces: which row a piece is in, and its slice's [first,
// end) chunks of that row (counted from the row's 16-byte boundary).
struct Piece {
    long long row;
    int shift, first, end;
    template <typename T>
    __device__ __forceinline__ Piece(long long piece, const T* base, long long row_stride, long long n, int slices)
        : row(piece / slices) {
        shift = csm::misalignment(base + row * row_stride);
        const int chunks = csm::chunks_of(n, shift, csm::Vec<T>::size);
        const int per_slice = (chunks + slices - 1) / slices;
        first = static_cast<int>(piece % slices) * per_slice;
        end = first + per_slice < chunks ? first + per_slice : chunks;
    }
};

// The workspace: a partial result per piece, then a counter per row of the
// partials written.
template <typename Partial> struct Board {
    Partial* partials;  // piece (row * slices + slice) at [piece]
    unsigned* counted;
    int slices;
    __device__ __forceinline__ Board(void* workspace, long long rows, int slices_)
        : partials(reinterpret_cast<Partial*>(workspace)),
          counted(reinterpret_cast<unsigned*>(reinterpret_cast<Partial*>(workspace) + rows * slices_)),
          slices(slices_) {}
    // Thread 0 writes the block's partial, then counts it.
    __device__ __forceinline__ void publish(long long piece, const Partial& p) {
        if (threadIdx.x == 0) {
            partials[piece] = p;
            csm::count_in(&counted[piece / slices]);  // the partial before its count
        }
    }
    // The whole block waits until every partial of the row is in.
    __device__ __forceinline__ void wait(long long row) {
        if (threadIdx.x == 0) csm::await_count(&counted[row], static_cast<unsigned>(slices));
        __syncthreads();
    }
    // The row's partials merged by `op`, strided over the block, then one block
    // reduction (`reduce`): the same order in every block of the row.
    template <typename Op, typename Reduce>
    __device__ __forceinline__ Partial merged(long long row, Op op, Reduce reduce) const {
        Partial p = op.identity();
        for (int s = threadIdx.x; s < slices; s += blockDim.x) p = op(p, partials[row * slices + s]);
        return reduce(p);
    }
};

// Every block walks the groups pipelined by one: phase 0 (fold) of its pieces
// of group g, then phase 1 (write) of its pieces of group g - 1. Group g's
// pieces are [g * group_pieces, ...); a block takes every gridDim.x-th from its own index on.
template <typename Fold, typename Write>
__device__ __forceinline__ void walk_groups(long long rows, int slices, int group_rows, Fold fold, Write write) {
    const long long all_pieces = rows * slices;
    const long long group_pieces = static_cast<long long>(group_rows) * slices;
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

template <typename Tin, typename Tout, bool LOG, int K>
__global__ void softmax_two_pass(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                                 long long x_row_stride, long long y_row_stride, double scale_,
                                 const unsigned char* __restrict__ mask, long long mask_row_stride,
                                 long long mask_rows, int slices, int group_rows, void* workspace) {
    using A = csm::acc_t<Tin, Tout>;
    const csm::Fused fused{scale_, mask, mask_row_stride, mask_rows};
    const A scale = static_cast<A>(scale_);
    using State = csm::MaxSum<A>;
    const csm::OnlineOp<A> op;
    __shared__ State scratch[32];
    Board<State> board(workspace, rows, slices);
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    // Phase 0: fold the piece's slice into a (max, sum) pair, publish it.
    auto fold = [&](long long id) {
        const Piece piece(id, x, x_row_stride, n, slices);
        const Tin* xr = x + piece.row * x_row_stride;
        const csm::RowMask keep = fused.row(piece.row);
        State stats = op.identity();
        for (int c0 = piece.first + t; c0 < piece.end; c0 += K * b) {
            csm::Vec<Tin> v[K];
            csm::load_chunks(v, xr, static_cast<int>(n), piece.shift, c0, b, piece.end, KeepInL2());
            keep.apply<K>(v, static_cast<int>(n), piece.shift, c0, b, piece.end);
            stats = op(stats, csm::chunk_stats<A>(v, scale));
        }
        board.publish(id, csm::block_max_sum(stats, scratch));
    };
    // Phase 1: wait for the row's pairs, merge them, write the piece's slice.
    auto write = [&](long long id) {
        const Piece piece(id, x, x_row_stride, n, slices);
        board.wait(piece.row);
        const Tin* xr = x + piece.row * x_row_stride;
        const auto prob = csm::normalizer<Tin, LOG>(
            board.merged(piece.row, op, [&](State s) { return csm::block_max_sum(s, scratch); }), scale);
        Tout* yr = y + piece.row * y_row_stride;
        const bool y_aligned = csm::stores_aligned<Tin>(yr, piece.shift);
#pragma unroll 4
        for (int c = piece.first + t; c < piece.end; c += b) {
            const csm::Vec<Tin> chunk = csm::load_chunk(xr, static_cast<int>(n), piece.shift, c, LastUse());
            csm::store_chunk<Tin>(
                yr, static_cast<int>(n), piece.shift, y_aligned, c,
                [&](int k) { return csm::from_acc<Tout>(prob(chunk, k)); }, true);
        }
        // x was read again as it is: every masked-out output is written again (not only those of spoiled rows).
        // The mask looked up after the loop: before it, two_pass float32 took 52 registers, not 44 (sm_90)
        fused.row(piece.row).refill<csm::Vec<Tin>::size>(
            yr, static_cast<int>(n), piece.shift, piece.first + t, b, piece.end, (piece.end - piece.first + b - 1) / b,
            true, csm::from_acc<Tout>(prob.masked()));
    };
    walk_groups(rows, slices, group_rows, fold, write);
}

// The gradients: phase 0 folds a piece's slice of y and dy into its share of
// s (sum dy * y, or sum dy with LOG), phase 1 merges the row's shares and
// writes the piece's slice of dx from y and dy read again.
template <typename T, typename Tout, bool LOG, int K>
__global__ void softmax_two_pass_backward(const T* __restrict__ y, const T* __restrict__ dy, Tout* __restrict__ dx,
                                          long long rows, long long n, long long y_row_stride,
                                          long long dy_row_stride, long long dx_row_stride, int slices,
                                          int group_rows, void* workspace) {
    using A = csm::acc_t<T, Tout>;
    const csm::SumOp<A> op;
    __shared__ A scratch[32];
    Board<A> board(workspace, rows, slices);
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    const csm::Vec<T> zero = csm::zero_chunk<T>();
    auto fold = [&](long long id) {
        const Piece piece(id, y, y_row_stride, n, slices);
        const T* yr = y + piece.row * y_row_stride;
        const T* dyr = dy + piece.row * dy_row_stride;
        A s = A(0);
        for (int c0 = piece.first + t; c0 < piece.end; c0 += K * b) {
            csm::HeldGrad<A, T, K, LOG> held;
            csm::load_chunks(held.y, yr, static_cast<int>(n), piece.shift, c0, b, piece.end, KeepInL2(), zero);
            csm::load_chunks(held.dy, dyr, static_cast<int>(n), piece.shift, c0, b, piece.end, KeepInL2(), zero);
            s += held.partial();
        }
        board.publish(id, csm::block_reduce(s, op, scratch));
    };
    auto write = [&](long long id) {
        const Piece piece(id, y, y_row_stride, n, slices);
        board.wait(piece.row);
        const T* yr = y + piece.row * y_row_stride;
        const T* dyr = dy + piece.row * dy_row_stride;
        Tout* dxr = dx + piece.row * dx_row_stride;
        csm::HeldGrad<A, T, 1, LOG> held;
        held.finish(board.merged(piece.row, op, [&](A s) { return csm::block_reduce(s, op, scratch); }));
        const bool dx_aligned = csm::stores_aligned<T>(dxr, piece.shift);
#pragma unroll 4
        for (int c = piece.first + t; c < piece.end; c += b) {
            held.y[0] = csm::load_chunk(yr, static_cast<int>(n), piece.shift, c, LastUse(), zero);
            held.dy[0] = csm::load_chunk(dyr, static_cast<int>(n), piece.shift, c, LastUse(), zero);
            csm::store_chunk<T>(
                dxr, static_cast<int>(n), piece.shift, dx_aligned, c,
                [&](int k) { return csm::from_acc<Tout>(held.out(0, k)); }, true);
        }
    };
    walk_groups(rows, slices, group_rows, fold, write);
}
