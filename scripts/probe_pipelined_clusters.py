"""Probe: persistent clusters that prefetch the next row (cp.async into shared memory) while reducing and
writing the current one. float32, aligned rows of whole chunks. Against copy and auto."""
import sys
import cupy, numpy
from cupysoftmax import api, bench, driver, dtypes, reference

SRC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define INFINITY __int_as_float(0x7f800000)
__device__ __forceinline__ void cp16(void* s, const void* g) {
    unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ float4 max_pair(float m, float s, float m2, float s2) { return float4(); }

template <int C, int K, bool PIPE>
__global__ void __cluster_dims__(C, 1, 1) pipe(const float4* __restrict__ x, float4* __restrict__ y, int rows, int chunks) {
    extern __shared__ float4 buf[];
    __shared__ float2 part[2][32];
    cg::cluster_group cl = cg::this_cluster();
    const int B = blockDim.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int rank = static_cast<int>(cl.block_rank());
    const int T = C * B;
    const int cid = blockIdx.x / C, ncl = gridDim.x / C;
    const float L2E = 1.4426950408889634f;
    auto issue = [&](int row, int b) {
        const float4* xr = x + static_cast<long long>(row) * chunks;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = rank * B + t + i * T;
            if (c < chunks) cp16(&buf[(b * K + i) * B + t], xr + c);
        }
        commit();
    };
    int it = 0;
    if (PIPE && cid < rows) issue(cid, 0);
    for (int row = cid; row < rows; row += ncl, ++it) {
        const int b = PIPE ? (it & 1) : 0;
        if (PIPE) {
            if (row + ncl < rows) { issue(row + ncl, b ^ 1); wait_group<1>(); } else wait_group<0>();
        } else { issue(row, 0); wait_group<0>(); }
        float4 v[K];
        float m = -INFINITY;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = rank * B + t + i * T;
            v[i] = c < chunks ? buf[(b * K + i) * B + t] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
            m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
        }
        float s = 0.f;
        const float ms = m * L2E;
#pragma unroll
        for (int i = 0; i < K; ++i)
            s += exp2f(fmaf(v[i].x, L2E, -ms)) + exp2f(fmaf(v[i].y, L2E, -ms)) + exp2f(fmaf(v[i].z, L2E, -ms)) + exp2f(fmaf(v[i].w, L2E, -ms));
        // warp: max, then rescaled sums
        float wm = m;
        for (int o = 16; o; o >>= 1) wm = fmaxf(wm, __shfl_xor_sync(0xffffffffu, wm, o));
        s = m == -INFINITY ? 0.f : s * exp2f((m - wm) * L2E);
        for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) part[it & 1][warp] = make_float2(wm, s);
        cl.sync();
        const int per = B / 32, all = C * per;
        float pm = -INFINITY, ps = 0.f;
        for (int j = lane; j < all; j += 32) {
            const float2* r = cl.map_shared_rank(&part[it & 1][0], j / per);
            const float2 p = r[j % per];
            const float nm = fmaxf(pm, p.x);
            ps = ps * exp2f((pm - nm) * L2E) + p.y * exp2f((p.x - nm) * L2E);
            pm = nm;
        }
        float gm = pm;
        for (int o = 16; o; o >>= 1) gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, o));
        ps = pm == -INFINITY ? 0.f : ps * exp2f((pm - gm) * L2E);
        for (int o = 16; o; o >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, o);
        const float inv = 1.f / ps, gms = gm * L2E;
        float4* yr = y + static_cast<long long>(row) * chunks;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = rank * B + t + i * T;
            if (c < chunks) {
                float4 o;
                o.x = exp2f(fmaf(v[i].x, L2E, -gms)) * inv; o.y = exp2f(fmaf(v[i].y, L2E, -gms)) * inv;
                o.z = exp2f(fmaf(v[i].z, L2E, -gms)) * inv; o.w = exp2f(fmaf(v[i].w, L2E, -gms)) * inv;
                __stcs(yr + c, o);
            }
        }
    }
    cl.sync();  // no block leaves while others read its partials
}
'''

def active(kernel, c, b, smem):
    try:
        return driver.active_clusters(kernel.kernel.ptr, c, (b, 1), smem)
    except RuntimeError:
        return -1

SHAPES = [(8, 262144), (32, 262144), (128, 262144), (8, 128256), (32, 128256), (128, 128256)]
configs = []
for m, n in SHAPES:
    chunks = n // 4
    for c in (16,):
        for b in (256, 512, 1024):
            k = -(-chunks // (c * b))
            if k > 16 or 2 * k * b * 16 > 227 * 1024 or k < 1:
                continue
            if k * c * b >= 2 * chunks and k > 1:  # too loose
                continue
            configs.append((m, n, c, b, k))
names = sorted({f"pipe<{c},{k},{p}>" for _, _, c, _, k in configs for p in ("true", "false")})
mod = cupy.RawModule(code=SRC, options=("-std=c++17",), name_expressions=names)
f32 = dtypes.parse("float32")
for m, n in SHAPES:
    x = bench.random_input(m, n, f32)
    y = cupy.empty_like(x)
    ref = reference.softmax(cupy.asnumpy(x), axis=-1)
    fns = {"copy": bench.copy_call(x.nbytes), "auto": lambda: api.softmax(x, axis=-1, out=y)}
    chunks = n // 4
    for mm, nn, c, b, k in configs:
        if (mm, nn) != (m, n):
            continue
        for p in ("true", "false"):
            fn = mod.get_function(f"pipe<{c},{k},{p}>")
            smem = (2 if p == "true" else 1) * k * b * 16
            fn.max_dynamic_shared_size_bytes = smem
            cupy.cuda.driver.funcSetAttribute(fn.kernel.ptr, 14, 1)
            a = active(fn, c, b, smem)
            if a <= 0:
                print(f"  {m}x{n} C={c} B={b} K={k} pipe={p}: active {a}, skipped"); continue
            grid = min(m, a) * c
            launch = (lambda fn=fn, grid=grid, b=b, smem=smem: fn((grid,), (b,), (x, y, numpy.int32(m), numpy.int32(chunks)), shared_mem=smem))
            y.fill(numpy.nan); launch(); cupy.cuda.Device().synchronize()
            err = float(numpy.max(numpy.abs(cupy.asnumpy(y).astype(numpy.float64) - ref) / (numpy.abs(ref) + 1e-30)))
            if not err < 1e-5:
                print(f"  {m}x{n} C={c} B={b} K={k} pipe={p}: WRONG rel err {err}"); continue
            fns[f"C={c:2} B={b:4} K={k:2} {'pipe' if p == 'true' else 'once'} act={a}"] = launch
    res = bench.interleaved_ms(fns, repeat=20, rounds=2)
    cp = res["copy"]
    print(f"{m} x {n} float32: copy {cp * 1e3:.1f} us")
    for name, ms in res.items():
        print(f"   {name:34} {ms * 1e3:8.1f} us {cp / ms * 100:5.0f}%")
    sys.stdout.flush()
