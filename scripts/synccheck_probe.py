"""A branch-free kernel that compute-sanitizer's synccheck reports as divergent: the control for scripts/sanitize.py.

Each block of a CLUSTER-block cluster writes one value a warp to shared memory, meets a
__syncthreads(), and reads a neighbouring warp's value; there is no branch, no cluster
barrier and no distributed shared memory, so every warp is whole at the barrier. Yet
compute-sanitizer 2025.3.1 (CUDA 13) synccheck reports "Barrier error detected. Divergent
thread(s) in warp" at that __syncthreads() once enough clusters of 12 or 16 blocks are
launched (H100, 2026-11-23: 352 errors at 132 clusters of 16, none at 16; a first version
with 416 threads: 33, 66 and 132 clusters of 16 and 132 of 12 reported, 16 and 24 clusters
of 16, 132 of 9 or 10 and 264 of 8 did not). sanitize.py runs this probe under
synccheck to show whether the sanitizer at hand has that fault, and keeps kernels of
clusters of 16 out of its many-row synccheck run (see there).

    compute-sanitizer --tool synccheck python3 scripts/synccheck_probe.py --cluster 16 --clusters 132

Exits 0 when the kernel ran and wrote what it should.
"""
from __future__ import annotations

import argparse
import sys

import cupy
import numpy

SOURCE = r"""
template <int C>
__global__ void __cluster_dims__(C, 1, 1) probe(float* out) {
    __shared__ float warps[32];
    const int warp = threadIdx.x >> 5;
    warps[warp] = static_cast<float>(blockIdx.x * 32 + warp);  // every lane the same value: no branch
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = warps[warp ^ 1];
}
"""
NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, for clusters past 8


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", type=int, default=16, choices=range(2, 17), metavar="C")
    parser.add_argument("--clusters", type=int, default=132)
    parser.add_argument("--threads", type=int, default=512, help="a block's threads, a multiple of 64")
    args = parser.parse_args(argv)
    if args.threads % 64 or not 64 <= args.threads <= 1024:
        parser.error("--threads must be a multiple of 64 from 64 to 1024")
    name = f"probe<{args.cluster}>"
    kernel = cupy.RawModule(code=SOURCE, options=("--std=c++17", "-lineinfo"), name_expressions=[name]).get_function(name)
    if args.cluster > 8:
        cupy.cuda.driver.funcSetAttribute(kernel.kernel.ptr, NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    blocks = args.clusters * args.cluster
    out = cupy.full(blocks * args.threads, numpy.nan, dtype=cupy.float32)
    kernel((blocks,), (args.threads,), (out,))
    warps = numpy.arange(blocks * args.threads) // 32
    expected = (warps // (args.threads // 32) * 32 + (warps % (args.threads // 32) ^ 1)).astype(numpy.float32)
    right = bool((cupy.asnumpy(out) == expected).all())
    print(f"probe: {args.clusters} clusters of {args.cluster}, {args.threads} threads: {'right' if right else 'WRONG'}")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
