// Variant: block (seed 000: block reduce)
//
// Idea: one block owns one row. Partial max and sum are combined with warp
// shuffles first, then one shared-memory step across the block's warps (two
// barriers per reduction instead of log2(block) for smem_tree). Each element
// is still read three times: max, sum, write.
//
// Limits: any N.
//
// Launch contract: blockDim.x a multiple of 32, at most 1024; one block per row
// with a grid-stride loop over rows; no dynamic shared memory (32 accumulators
// of static shared scratch).
#include "common.cuh"

template <typename Tin, typename Tout>
__global__ void softmax_block(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                              long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    __shared__ A scratch[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        csm::three_pass_row<A>(x + row * x_row_stride, y + row * y_row_stride, n, threadIdx.x, blockDim.x,
                               [&](auto v, auto op) { return csm::block_reduce(v, op, scratch); });
    }
}
