// Variant: two_pass (rows longer than the chip holds)
//
// Idea: each row is cut into slices, one block per (row, slice). The kernel
// runs twice on the same grid. Pass 0: every block folds its slice into a
// (max, sum) pair (16-byte loads, K chunks per thread in flight) and writes
// it to a workspace. Pass 1: every block merges its row's pairs in slice
// order, then reads its slice again and writes exp(x - max) / sum. Pass 1
// walks the blocks in reverse, so the first blocks it runs find the slices
// pass 0 read last still in L2. x is read twice (partly from L2), y written
// once: for rows no cluster can hold (16 MB of float32, say) this is the
// fewest reads that spread a few rows over every SM.
//
// Limits: any N; rows * slices (max, sum) pairs of workspace.
//
// Launch contract: blockDim.x a multiple of 32, at most 1024; blocks loop
// over the rows * slices pieces with a grid stride; launched with pass = 0,
// then pass = 1 on the same stream and workspace; no dynamic shared memory.
#include "common.cuh"

template <typename Tin, typename Tout, int K>
__global__ void softmax_two_pass(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows, long long n,
                                 long long x_row_stride, long long y_row_stride, int slices, void* workspace,
                                 int pass) {
    using A = csm::acc_t<Tin, Tout>;
    using State = csm::MaxSum<A>;
    constexpr int V = csm::Vec<Tin>::size;
    const csm::OnlineOp<A> op;
    __shared__ State scratch[32];
    State* partials = reinterpret_cast<State*>(workspace);
    const long long pieces = rows * slices;
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    for (long long id = blockIdx.x; id < pieces; id += gridDim.x) {
        const long long piece = pass == 0 ? id : pieces - 1 - id;
        const long long row = piece / slices;
        const int slice = static_cast<int>(piece % slices);
        const Tin* xr = x + row * x_row_stride;
        const int shift = csm::misalignment(xr);
        const int chunks = csm::chunks_of(n, shift, V);
        const int per_slice = (chunks + slices - 1) / slices;
        const int first = slice * per_slice;
        const int end = first + per_slice < chunks ? first + per_slice : chunks;
        if (pass == 0) {
            State stats = op.identity();
            for (int c0 = first + t; c0 < end; c0 += K * b) {
                csm::Vec<Tin> v[K];
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const int c = c0 + j * b;
                    v[j] = c < end ? csm::load_chunk(xr, static_cast<int>(n), shift, c) : csm::padding_chunk<Tin>();
                }
                stats = op(stats, csm::chunk_stats<A>(v));
            }
            stats = csm::block_reduce(stats, op, scratch);
            if (t == 0) partials[piece] = stats;
        } else {
            State stats = op.identity();
            for (int s = 0; s < slices; ++s) stats = op(stats, partials[row * slices + s]);
            const auto prob = csm::normalizer<Tin>(stats);
            Tout* yr = y + row * y_row_stride;
            const bool same_alignment = csm::misalignment(yr) == shift;
#pragma unroll 4
            for (int c = first + t; c < end; c += b) {
                const csm::Vec<Tin> chunk = csm::load_chunk(xr, static_cast<int>(n), shift, c);
                csm::store_chunk<Tin>(yr, static_cast<int>(n), shift, same_alignment, c,
                                      [&](int k) { return csm::from_acc<Tout>(prob(chunk, k)); });
            }
        }
    }
}
