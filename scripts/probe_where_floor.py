"""A floor for where= on short rows: a minimal float32 softmax kernel (G lanes a row, K 16-byte chunks a lane,
no options machinery), plain and masked, against the package's plain and where= calls and copies of the same bytes.
Checked against the float64 reference on sample rows (poisoned output) before timing. It does not
handle rows masked out everywhere (a random mask keeping 70% has none at these N): a floor, not a kernel.
Usage: PYTHONPATH=$PWD python3 scripts/probe_where_floor.py --json F MxN:G,K[;G,K] ..."""
import argparse
import json

import cupy
import numpy

from cupysoftmax import api, bench, reference, dtypes
from probe_fused import timed  # scripts/, this file's folder

SRC = r"""
template <int G, int K, bool MASK>
__device__ void msoft(const float4* __restrict__ x, const unsigned* __restrict__ mask, float4* __restrict__ y,
                      long long rows, int n4) {
    const int lane = threadIdx.x & (G - 1);
    const long long step = (long long)gridDim.x * blockDim.x / G;
    const float NEG = __int_as_float(0xff800000);
    for (long long base = ((long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31)) / G; base < rows; base += step) {
        const long long row = base + (threadIdx.x & 31) / G;
        const bool live = row < rows;
        const long long off = (live ? row : 0) * n4;
        float4 v[K];
        unsigned w[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int c = lane + G * j;
            const bool ok = live && c < n4;
            v[j] = ok ? __ldg(x + off + c) : make_float4(NEG, NEG, NEG, NEG);
            if (MASK) w[j] = ok ? __ldg(mask + off + c) : 0u;
        }
        float m = NEG;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            if (MASK) {
                const unsigned f = __vcmpne4(w[j], 0u);
                unsigned* p = reinterpret_cast<unsigned*>(&v[j]);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const unsigned k = __byte_perm(f, 0u, i * 0x1111u);
                    p[i] = (p[i] & k) | (0xff800000u & ~k);
                }
            }
            m = fmaxf(m, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
        }
#pragma unroll
        for (int o = G / 2; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        const float L = 1.4426950408889634f, ml = m * L;
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            v[j].x = exp2f(fmaf(v[j].x, L, -ml)); v[j].y = exp2f(fmaf(v[j].y, L, -ml));
            v[j].z = exp2f(fmaf(v[j].z, L, -ml)); v[j].w = exp2f(fmaf(v[j].w, L, -ml));
            s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
        }
#pragma unroll
        for (int o = G / 2; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
        const float r = 1.f / s;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int c = lane + G * j;
            if (live && c < n4) y[off + c] = make_float4(v[j].x * r, v[j].y * r, v[j].z * r, v[j].w * r);
        }
    }
}
#define K_(G, K) \
extern "C" __global__ void __launch_bounds__(256) plain_##G##_##K(                                      \
    const float4* x, const unsigned* m, float4* y, long long r, int n4) { msoft<G, K, false>(x, m, y, r, n4); } \
extern "C" __global__ void __launch_bounds__(256) masked_##G##_##K(                                     \
    const float4* x, const unsigned* m, float4* y, long long r, int n4) { msoft<G, K, true>(x, m, y, r, n4); }
K_(8, 4) K_(16, 2) K_(32, 1) K_(32, 2) K_(32, 4) K_(32, 8) K_(16, 4) K_(8, 8)
"""

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("cases", nargs="+", help="MxN:G,K[;G,K]: a float32 shape and the layouts to time on it")
    a = ap.parse_args()
    mod = cupy.RawModule(code=SRC, options=("-std=c++17", "--use_fast_math"))
    records = []
    for case in a.cases:
        shape, layouts = case.split(":")
        m, n = map(int, shape.split("x"))
        n4 = n // 4  # chunks a row (rows whole chunks: N a multiple of 4)
        x = bench.random_input(m, n, numpy.float32)
        y = cupy.empty_like(x)
        full = cupy.random.random((m, n)) < 0.7
        rows = numpy.unique(numpy.linspace(0, m - 1, min(m, 64)).astype(int))
        hx, hm = cupy.asnumpy(x[rows]).astype(numpy.float64), cupy.asnumpy(full[rows])
        want = {False: reference.softmax(hx, axis=-1), True: reference.softmax(hx, axis=-1, where=hm)}
        fns = {"copy": bench.copy_call(x.nbytes), "copy + mask bytes": bench.copy_call(x.nbytes + m * n // 2),
               "softmax": lambda: api.softmax(x, axis=-1, out=y),
               "where=(M, N)": lambda: api.softmax(x, axis=-1, out=y, where=full)}
        for lay in layouts.split(";"):
            g, k = map(int, lay.split(","))
            for masked in (False, True):
                f = mod.get_function(f"{'masked' if masked else 'plain'}_{g}_{k}")
                grid = -(-m // (256 // g))
                args = (x, full, y, numpy.int64(m), numpy.int32(n4))
                y.fill(numpy.nan)
                f((grid,), (256,), args); cupy.cuda.Device().synchronize()
                err = reference.error_ratio(cupy.asnumpy(y[rows]), want[masked], dtypes.FLOAT32)
                label = f"min {'masked' if masked else 'plain'} G{g} K{k} r{f.num_regs}"
                if not err <= 1:
                    print(case, label, "WRONG", err); continue
                fns[label] = lambda f=f, grid=grid, args=args: f((grid,), (256,), args)
        timed(m, n, "float32", fns, records)
        del x, y, full; cupy.get_default_memory_pool().free_all_blocks()
    if a.json:
        json.dump(records, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
