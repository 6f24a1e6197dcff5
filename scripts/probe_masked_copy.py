"""Probe: what a mask's own bytes cost a kernel that reads x and its mask once and writes once.

Issue 4 asks that where= cost at most the mask's own bytes; the probes so far
priced them as cudaMemcpy of x's bytes plus the mask's (one stream). A softmax
with where= reads two streams (x and the mask) and writes one. The masked copy
here does only that: y = x where the mask keeps, else 0, each thread one
16-byte chunk of x and the chunk's 4 or 8 mask bytes in one load (ILP 1, a
grid of chunks / 256 blocks), or 4 chunks a thread grid-stride (ILP 4, four
waves of resident blocks); the same kernels without the mask are a kernel
copy of x. Each masked copy is checked against cupy.where on a NaN-poisoned
output before it is timed.

Timed interleaved with bench's engine and flush: cudaMemcpy of x's bytes and
of x's plus M x N / 2 (the mask's M x N bytes of traffic), the kernel copies,
the masked copies, plain softmax and where= with a full random mask, on
probe_fused's shapes (the kernels ignore rows and cover the whole chunks of
the flat array).

    PYTHONPATH=$PWD python3 scripts/probe_masked_copy.py [--json FILE] [MxNxdtype ...]
"""
import argparse
import json

import cupy
import numpy

from cupysoftmax import api, bench, dtypes
from probe_fused import SHAPES, parsed_shapes, timed  # scripts/: the same shapes, parsing, timing and records

SOURCE = r"""
// V: mask bytes a 16-byte chunk of x spans (4 float32, 8 two-byte types); MASK: select, else copy
template <int V, bool MASK, int ILP>
__device__ void masked_copy(const uint4* __restrict__ x, const unsigned char* __restrict__ mask,
                            uint4* __restrict__ y, long long chunks) {
    const long long step = (long long)gridDim.x * blockDim.x * ILP;
    for (long long i0 = (long long)blockIdx.x * blockDim.x * ILP + threadIdx.x; i0 < chunks; i0 += step) {
        uint4 v[ILP];
        uint2 m[ILP];
#pragma unroll
        for (int k = 0; k < ILP; ++k) {  // every load of the step before any use
            const long long i = i0 + (long long)k * blockDim.x;
            if (i >= chunks) continue;
            v[k] = __ldcs(x + i);
            if (MASK)
                m[k] = V == 4 ? make_uint2(__ldcs((const unsigned*)mask + i), 0u) : __ldcs((const uint2*)mask + i);
        }
#pragma unroll
        for (int k = 0; k < ILP; ++k) {
            const long long i = i0 + (long long)k * blockDim.x;
            if (i >= chunks) continue;
            if (MASK) {
                const unsigned f0 = __vcmpne4(m[k].x, 0u), f1 = __vcmpne4(m[k].y, 0u);
                unsigned* w = &v[k].x;
#pragma unroll
                for (int q = 0; q < 4; ++q) {  // spread each value's flag over its bytes
                    const unsigned j = (q % 2) * 2;
                    w[q] &= V == 4 ? __byte_perm(f0, 0u, q * 0x1111u)
                                   : __byte_perm(q < 2 ? f0 : f1, 0u, j * 0x11u + (j + 1) * 0x1100u);
                }
            }
            __stcs(y + i, v[k]);
        }
    }
}
extern "C" {
#define WRAP(NAME, V, MASK, ILP)                                                          \
    __global__ void NAME(const uint4* x, const unsigned char* m, uint4* y, long long c) { \
        masked_copy<V, MASK, ILP>(x, m, y, c);                                            \
    }
WRAP(masked4_ilp1, 4, true, 1)
WRAP(masked4_ilp4, 4, true, 4)
WRAP(masked8_ilp1, 8, true, 1)
WRAP(masked8_ilp4, 8, true, 4)
WRAP(copy_ilp1, 4, false, 1)
WRAP(copy_ilp4, 4, false, 4)
}
"""
WAVES_OF_BLOCKS = 4 * 8  # ILP 4's grid-stride grid an SM: four waves of the 8 blocks of 256 threads it holds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("shapes", nargs="*", default=[f"{m}x{n}x{name}" for m, n, name in SHAPES])
    args = parser.parse_args()
    module = cupy.RawModule(code=SOURCE, options=("-std=c++17",))
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    records = []
    for m, n, name in parsed_shapes(" ".join(args.shapes)):
        dtype = dtypes.parse(name)
        x = bench.random_input(m, n, dtype)
        y = cupy.empty_like(x)
        full = cupy.random.random((m, n)) < 0.7
        v = 16 // x.itemsize
        chunks = x.size // v  # whole chunks of the flat array (a partial last chunk is left out)
        flat_x, flat_mask = x.reshape(-1), full.reshape(-1)

        def kernel(function, ilp, out):
            f = module.get_function(function)
            grid = -(-chunks // 256) if ilp == 1 else min(-(-chunks // (256 * ilp)), sms * WAVES_OF_BLOCKS)
            return lambda: f((grid,), (256,), (flat_x, flat_mask, out, numpy.int64(chunks)))

        want = cupy.where(full, x, 0).reshape(-1)[: chunks * v]
        for ilp in (1, 4):  # each masked copy against cupy.where on a NaN-poisoned output first
            checked = cupy.full_like(x, numpy.nan)
            kernel(f"masked{v}_ilp{ilp}", ilp, checked)()
            if not bool((checked.reshape(-1)[: chunks * v] == want).all()):
                raise SystemExit(f"{m} x {n} {name}: the masked copy of ILP {ilp} does not match cupy.where")
        fns = {"copy": bench.copy_call(x.nbytes), "copy + mask bytes": bench.copy_call(x.nbytes + m * n // 2),
               "kernel copy ILP 1": kernel("copy_ilp1", 1, y), "kernel copy ILP 4": kernel("copy_ilp4", 4, y),
               "masked copy ILP 1": kernel(f"masked{v}_ilp1", 1, y),
               "masked copy ILP 4": kernel(f"masked{v}_ilp4", 4, y),
               "softmax": lambda: api.softmax(x, axis=-1, out=y),
               "where=(M, N)": lambda: api.softmax(x, axis=-1, out=y, where=full)}
        timed(m, n, name, fns, records)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
