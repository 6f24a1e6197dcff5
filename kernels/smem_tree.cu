// Variant: smem_tree (llm.c softmax forward kernel 2)
//
// Idea: one block owns one row. Each thread strides over the row keeping a
// partial max, then the block combines the partials with a shared-memory tree
// (halve the active threads, one barrier per level: log2(block) barriers).
// The same again for the sum of exp(x - max); then a write pass. Loads are
// coalesced, but each element is read three times and each reduction costs
// log2(block) barriers.
//
// Limits: any N.
//
// Launch contract: blockDim.x a power of two, 32..1024; one block per row with
// a grid-stride loop over rows; dynamic shared memory = blockDim.x * sizeof(acc)
// where acc is float (double for float64).
#include "common.cuh"

// Tree reduction through shared memory; every thread returns the result.
template <typename A, typename Op>
__device__ __forceinline__ A tree_reduce(A v, Op op, A* buf) {
    buf[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int half = blockDim.x >> 1; half > 0; half >>= 1) {
        if (threadIdx.x < half) buf[threadIdx.x] = op(buf[threadIdx.x], buf[threadIdx.x + half]);
        __syncthreads();
    }
    const A result = buf[0];
    __syncthreads();  // buf is reused by the next reduction
    return result;
}

template <typename Tin, typename Tout>
__global__ void softmax_smem_tree(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                  long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    A* buf = reinterpret_cast<A*>(smem_raw);
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        csm::three_pass_row<A>(x + row * x_row_stride, y + row * y_row_stride, n, threadIdx.x, blockDim.x,
                               [&](auto v, auto op) { return tree_reduce(v, op, buf); });
    }
}
