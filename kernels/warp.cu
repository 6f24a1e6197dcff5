// Variant: warp (seed 000, "CUDA 009 - Softmax": warp shuffles)
//
// Idea: one warp owns one row, several rows per block. Lanes stride over the
// row and combine partial max and sum with __shfl_xor_sync butterflies: no
// shared memory, no barriers. Each element is read three times (max, sum,
// write), the second and third mostly from cache for short rows.
//
// Limits: any N; a long row is left to 32 threads, so it suits N up to a few
// thousand.
//
// Launch contract: blockDim.x a multiple of 32; blockDim.x / 32 rows per block;
// grid = ceil(rows / (blockDim.x / 32)) rounded up (never zero blocks for few
// rows), with a grid-stride loop; no shared memory.
#include "common.cuh"

template <typename Tin, typename Tout>
__global__ void softmax_warp(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                             long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    const int lane = threadIdx.x & 31;
    const long long warps_per_block = blockDim.x >> 5;
    const long long step = gridDim.x * warps_per_block;
    for (long long row = blockIdx.x * warps_per_block + (threadIdx.x >> 5); row < rows; row += step) {
        csm::three_pass_row<A>(x + row * x_row_stride, y + row * y_row_stride, n, lane, 32,
                               [](auto v, auto op) { return csm::warp_reduce(v, op); });
    }
}
