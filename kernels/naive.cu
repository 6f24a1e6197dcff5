// Variant: naive (llm.c softmax forward kernel 1)
//
// Idea: one thread owns one row and walks it three times: the max, the sum of
// exp(x - max), then the write of exp(x - max) / sum. Nothing is shared
// between threads; neighbouring threads read addresses a whole row apart, so
// loads are not coalesced and each element is read from memory three times.
//
// Limits: any N; slow for long rows (one thread does all the work of a row)
// and for few rows (M threads in all).
//
// Launch contract: 1-D blocks of any size; grid * block threads cover rows
// with a grid-stride loop; no shared memory.
#include "common.cuh"

template <typename Tin, typename Tout>
__global__ void softmax_naive(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                              long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; row < rows;
         row += step) {
        // one thread, so there is nothing to combine
        csm::three_pass_row<A>(x + row * x_row_stride, y + row * y_row_stride, n, 0, 1,
                               [](auto v, auto) { return v; });
    }
}
