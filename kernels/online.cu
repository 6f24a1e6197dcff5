// Variant: online (seed 000 and seed 003: online softmax)
//
// Idea: one block owns one row. Each thread keeps a running (max, sum) pair and
// rescales its sum whenever the max grows, so max and sum come from a single
// read of the row; the block merges the pairs with warp shuffles and one
// shared-memory step. A second pass writes exp(x - max) / sum (with LOG,
// log_softmax's (x - max) - log(sum)): two reads of each element instead of three.
//
// Limits: any N.
//
// Launch contract: blockDim.x a multiple of 32, at most 1024; one block per row
// with a grid-stride loop over rows; no dynamic shared memory (32 (max, sum)
// pairs of static shared scratch).
#include "common.cuh"

template <typename Tin, typename Tout, bool LOG>
__global__ void softmax_online(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                               long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    using State = csm::MaxSum<A>;
    __shared__ State scratch[32];
    const csm::OnlineOp<A> op;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const Tin* xr = x + row * x_row_stride;
        Tout* yr = y + row * y_row_stride;
        State state = op.identity();
        for (long long i = threadIdx.x; i < n; i += blockDim.x) state = op.add(state, csm::to_acc<A>(xr[i]));
        state = csm::block_reduce(state, op, scratch);
        const auto out = csm::normalizer<Tin, LOG>(state);
        for (long long i = threadIdx.x; i < n; i += blockDim.x) yr[i] = csm::from_acc<Tout>(out.of(csm::to_acc<A>(xr[i])));
    }
}
