// Variant: registers (seed 002: Triton's fused softmax)
//
// Idea: the whole row lives in registers. Thread t of the block holds elements
// t, t + B, ..., t + (ITEMS - 1) * B of its row (B = blockDim.x), so the row is
// read from global memory once and written once: the minimum traffic. Max and
// sum are block reductions over values already on chip. The grid is
// persistent: as many blocks as fit on the GPU at once (from the occupancy the
// kernel's registers allow), each looping over rows.
//
// Limits: N <= ITEMS * blockDim.x; ITEMS is a compile-time knob (1 .. 32) so
// the register array is indexed only by unrolled constants. Each thread holds
// ITEMS accumulators (2 registers each for float64), and the block's threads
// times the kernel's registers must fit the register file: 16384 float32
// or 8192 float64 elements per row on the H100 (the planner works it out from
// the compiled kernel's registers).
//
// Launch contract: blockDim.x a multiple of 32, at most 1024, with
// ITEMS * blockDim.x >= N; grid = min(rows, resident blocks); grid-stride loop
// over rows; no dynamic shared memory.
#include "common.cuh"

template <typename Tin, typename Tout, int ITEMS>
__global__ void softmax_registers(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                  long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    __shared__ A scratch[32];
    A v[ITEMS];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const Tin* xr = x + row * x_row_stride;
        Tout* yr = y + row * y_row_stride;
        A m = csm::neg_inf<A>();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * blockDim.x + threadIdx.x;  // a row fits in int: n <= 32 * 1024
            v[k] = i < n ? csm::to_acc<A>(xr[i]) : csm::neg_inf<A>();
            m = csm::acc_max(m, v[k]);
        }
        m = csm::block_reduce(m, csm::MaxOp<A>(), scratch);
        A s = A(0);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            v[k] = csm::acc_exp(v[k] - m);  // padding: exp(-inf - m) = 0
            s += v[k];
        }
        s = csm::block_reduce(s, csm::SumOp<A>(), scratch);
        const A inv = A(1) / s;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int i = k * blockDim.x + threadIdx.x;
            if (i < n) yr[i] = csm::from_acc<Tout>(v[k] * inv);
        }
    }
}
