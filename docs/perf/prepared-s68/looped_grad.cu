// Prototype (session 67, not in the registry): the gradients' one-block rows read twice, as Inductor's
// `triton_red` kernel does (docs/PERFORMANCE.md, sixty-seventh: 4096 x 16384 float16 softmax_backward,
// 1024 threads at 32 registers, 88% of warps active, 89.7 us against split_row's 93.4).
//
// Idea: a block a row (the grid loops over rows). Pass 1 reads the row's y and dy in tiles of K1 chunks a
// thread with L2's evict_last priority and sums dy * y (log_softmax's gradient: dy); one block reduction;
// pass 2 reads them again in tiles of K chunks, from L2 where the row still is, evict-first, and writes dx. A
// thread holds one tile, not the row, so a block of any size serves rows of any length.
// K1 = 2 with K = 1 keeps four loads of a thread in flight in pass 1 at 32 registers under MINB = 2 (two
// blocks of 1024 an SM; K = 1 alone issued two loads, then waited: a review of the SASS, session 67).
// PF (sm_90): thread 0 asks L2 for the block's next row (one bulk prefetch of y, one of dy) before the
// reduction, so that memory stays busy through the reduction and pass 2.
//
// Launch contract: blockDim.x a multiple of 32, at most 1024; y and dy rows start at the same offset from a
// 16-byte boundary (as split_row's gradients); no dynamic shared memory.
#include "common.cuh"

namespace {
struct KeepInL2 {  // two_pass.cu's (a prototype's copy; merged into common.cuh if this is kept)
    template <typename T> __device__ __forceinline__ csm::Vec<T> operator()(const T* p) const {
        csm::Vec<T> v;
        asm("{\n\t.reg .b64 policy;\n\tcreatepolicy.fractional.L2::evict_last.b64 policy, 1.0;\n\t"
            "ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], policy;\n\t}"
            : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3]) : "l"(p));
        return v;
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
}  // namespace

template <typename T, typename Tout, bool LOG, int K, int K1, bool PF, int MINB>
__global__ void __launch_bounds__(1024, MINB) looped_grad(const T* __restrict__ y, const T* __restrict__ dy,
                                                    Tout* __restrict__ dx, long long rows, long long n,
                                                    long long y_row_stride, long long dy_row_stride,
                                                    long long dx_row_stride) {
    using A = csm::acc_t<T, Tout>;
    constexpr int V = csm::Vec<T>::size;
    __shared__ A scratch[32];
    const int b = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    const csm::Vec<T> zero = csm::zero_chunk<T>();
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* yr = y + row * y_row_stride;
        const T* dyr = dy + row * dy_row_stride;
        Tout* dxr = dx + row * dx_row_stride;
        const int shift = csm::misalignment(yr);
        const int end = csm::chunks_of(n, shift, V);
        const int len = static_cast<int>(n);
        A sum = A(0);
        for (int c0 = t; c0 < end; c0 += K1 * b) {
            csm::HeldGrad<A, T, K1, LOG> tile;
#pragma unroll
            for (int j = 0; j < K1; ++j) {
                const int c = c0 + j * b;
                tile.y[j] = c < end && !LOG ? csm::load_chunk(yr, len, shift, c, KeepInL2(), zero) : zero;
                tile.dy[j] = c < end ? csm::load_chunk(dyr, len, shift, c, KeepInL2(), zero) : zero;
            }
            sum += tile.partial();
        }
#if __CUDA_ARCH__ >= 900
        if (PF && t == 0 && row + gridDim.x < rows) {  // the next row's 16-byte chunks, from its boundary on
            const T* next_y = y + (row + gridDim.x) * y_row_stride;
            const T* next_dy = dy + (row + gridDim.x) * dy_row_stride;
            const int next_shift = csm::misalignment(next_y);
            const unsigned bytes = static_cast<unsigned>(csm::chunks_of(n, next_shift, V)) * 16u;
            if (!LOG)
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(next_y - next_shift), "r"(bytes)
                             : "memory");
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(next_dy - next_shift), "r"(bytes)
                         : "memory");
        }
#endif
        const A s = csm::block_reduce(sum, csm::SumOp<A>(), scratch);
        const bool dx_aligned = csm::stores_aligned<T>(dxr, shift);
        for (int c0 = t; c0 < end; c0 += K * b) {
            csm::HeldGrad<A, T, K, LOG> tile;
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int c = c0 + j * b;
                tile.y[j] = c < end ? csm::load_chunk(yr, len, shift, c, LastUse(), zero) : zero;
                tile.dy[j] = c < end ? csm::load_chunk(dyr, len, shift, c, LastUse(), zero) : zero;
            }
            tile.finish(s);
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int c = c0 + j * b;
                if (c < end)
                    csm::store_chunk<T>(dxr, len, shift, dx_aligned, c,
                                        [&](int k) { return csm::from_acc<Tout>(tile.out(j, k)); }, true);
            }
        }
    }
}
