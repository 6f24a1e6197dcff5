// Variant: smem_cached (seed 004: PyTorch's cunn_SoftMaxForwardSmem)
//
// Idea: one block owns one row and copies it into dynamic shared memory on the
// way in, with 16-byte vector loads (VEC = 16 / sizeof(Tin) elements per load),
// taking the max as it goes. The sum and the write pass then read shared
// memory, so each input element leaves global memory once.
//
// Alignment: the fast path is the 16-byte vector body. Each row is peeled per
// row: a scalar head up to the first 16-byte boundary of x, the vector body,
// a scalar tail. Element i sits at smem[i + shift_x] (shift_x = x's
// misalignment in elements), so body vectors are aligned in shared memory too.
// The write pass uses vector stores when y has the same misalignment as x (the
// usual case: both aligned); otherwise the safe path stores element by element.
// Views such as x[:, 1:] and any N are served.
//
// Limits: (N + VEC) * sizeof(Tin) bytes must fit in one block's shared memory
// (the opt-in limit: 227 KB on the H100, so float32 rows up to about 58K).
//
// Launch contract: blockDim.x a multiple of 32, at most 1024; one block per row
// with a grid-stride loop over rows; dynamic shared memory =
// (N + VEC) * sizeof(Tin) bytes, above 48 KB only after the kernel's
// max_dynamic_shared_size_bytes is raised.
#include "common.cuh"

template <typename Tin, typename Tout>
__global__ void softmax_smem_cached(const Tin* __restrict__ x, Tout* __restrict__ y, long long rows,
                                    long long n, long long x_row_stride, long long y_row_stride) {
    using A = csm::acc_t<Tin, Tout>;
    using VIn = csm::Vec<Tin>;
    using VOut = csm::Vec<Tout>;
    constexpr int VEC = VIn::size;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Tin* cache = reinterpret_cast<Tin*>(smem_raw);
    __shared__ A scratch[32];

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const Tin* xr = x + row * x_row_stride;
        Tout* yr = y + row * y_row_stride;
        const int shift = csm::misalignment(xr);
        Tin* row_cache = cache + shift;  // row_cache[i] is 16-byte aligned where xr + i is
        const long long head = n < (VEC - shift) % VEC ? n : (VEC - shift) % VEC;
        const long long body_end = head + (n - head) / VEC * VEC;

        A m = csm::neg_inf<A>();
        auto cache_one = [&](long long i) {
            row_cache[i] = xr[i];
            m = csm::acc_max(m, csm::to_acc<A>(row_cache[i]));
        };
        for (long long i = threadIdx.x; i < head; i += blockDim.x) cache_one(i);
        for (long long i = head + static_cast<long long>(threadIdx.x) * VEC; i < body_end;
             i += static_cast<long long>(blockDim.x) * VEC) {
            const VIn chunk = *reinterpret_cast<const VIn*>(xr + i);
            *reinterpret_cast<VIn*>(row_cache + i) = chunk;
#pragma unroll
            for (int k = 0; k < VEC; ++k) m = csm::acc_max(m, csm::widen<A>(chunk, k));
        }
        for (long long i = body_end + threadIdx.x; i < n; i += blockDim.x) cache_one(i);
        m = csm::block_reduce(m, csm::MaxOp<A>(), scratch);  // its barriers also publish the cache

        A s = A(0);
        for (long long i = threadIdx.x; i < n; i += blockDim.x) s += csm::acc_exp(csm::to_acc<A>(row_cache[i]) - m);
        s = csm::block_reduce(s, csm::SumOp<A>(), scratch);
        const A inv = A(1) / s;
        auto prob = [&](Tin v) { return csm::from_acc<Tout>(csm::acc_exp(csm::to_acc<A>(v) - m) * inv); };

        if (VOut::size == VEC && csm::misalignment(yr) == shift) {  // fast path: vector stores
            for (long long i = threadIdx.x; i < head; i += blockDim.x) yr[i] = prob(row_cache[i]);
            for (long long i = head + static_cast<long long>(threadIdx.x) * VEC; i < body_end;
                 i += static_cast<long long>(blockDim.x) * VEC) {
                const VIn chunk = *reinterpret_cast<const VIn*>(row_cache + i);
                VOut out;
#pragma unroll
                for (int k = 0; k < VOut::size; ++k) out.set(k, prob(chunk.get(k)));  // VOut::size == VEC here
                *reinterpret_cast<VOut*>(yr + i) = out;
            }
            for (long long i = body_end + threadIdx.x; i < n; i += blockDim.x) yr[i] = prob(row_cache[i]);
        } else {  // safe path: y misaligned against x, or a different output width
            for (long long i = threadIdx.x; i < n; i += blockDim.x) yr[i] = prob(row_cache[i]);
        }
        __syncthreads();  // the next row overwrites the cache
    }
}
