"""Probe: every block of a resident grid holds a slice of every row, W rows in flight a block (cp.async
groups), so a row's writes overlap the next rows' reads. Each block posts a row's (max, sum) to global memory
and counts itself in; it waits for a row's count LAG rows later, merges the row's posts and writes its slice.
float32, whole aligned rows of whole chunks, softmax. Against copy and auto (H100: the few-long-row misses).

    PYTHONPATH=$PWD python3 scripts/probe_pipelined_grid.py
"""
import itertools
import sys

import cupy
import numpy
from cupy.cuda import driver

from cupysoftmax import api, bench, dtypes, reference

SRC = r'''
#define NEG_INF __int_as_float(0xff800000)
#define L2E 1.4426950408889634f
__device__ __forceinline__ void cp16(void* s, const void* g) {
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(s));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
__device__ __forceinline__ float2 combine(float2 a, float2 b) {
    const float m = fmaxf(a.x, b.x);
    if (m == NEG_INF) return make_float2(NEG_INF, 0.f);
    return make_float2(m, a.y * exp2f((a.x - m) * L2E) + b.y * exp2f((b.x - m) * L2E));
}
__device__ __forceinline__ float2 warp_combine(float2 p) {
    for (int o = 16; o; o >>= 1) p = combine(p, make_float2(__shfl_xor_sync(0xffffffffu, p.x, o), __shfl_xor_sync(0xffffffffu, p.y, o)));
    return p;
}

// TAG: each block's post is one 16-byte store of (max, sum, launch), read until its launch shows: no count,
// no fence (a 16-byte aligned store lands whole in practice; the PTX model does not promise it). Else a post
// and a fence, then a count a row, which a block spins on (the gx probe's scheme).
template <int W, int LAG, bool TAG>
__global__ void pg(const float4* __restrict__ x, float4* __restrict__ y, int rows, int chunks, int L, int J,
                   float2* __restrict__ parts, unsigned* __restrict__ counts, unsigned target, unsigned epoch) {
    uint4* tagged = reinterpret_cast<uint4*>(parts);
    static_assert(W >= LAG + 1, "a row's data before its partial");
    extern __shared__ float4 buf[];  // [W][J][blockDim.x]
    __shared__ float2 wp[2][32];
    __shared__ float2 tot[2];
    const int B = blockDim.x, t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = B >> 5, P = gridDim.x;
    const int lo = blockIdx.x * L, hi = min(lo + L, chunks);
    const auto at = [&](int r, int j) -> float4* { return &buf[((r % W) * J + j) * B + t]; };
    const auto issue = [&](int r) {
        if (r < rows) {
            const float4* xr = x + static_cast<long long>(r) * chunks;
            for (int j = 0; j < J; ++j) {
                const int c = lo + t + j * B;
                if (c < hi) cp16(at(r, j), xr + c);
            }
        }
        commit();  // empty past the rows: the count of groups stays W
    };
    for (int r = 0; r < W; ++r) issue(r);
    for (int i = 0; i < rows + LAG; ++i) {
        if (i < rows) {
            wait_groups<W - 1 - LAG>();  // row i's copies (this thread's own: no barrier)
            float m = NEG_INF;
            for (int j = 0; j < J; ++j) {
                if (lo + t + j * B < hi) {
                    const float4 v = *at(i, j);
                    m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
                }
            }
            const float ms = m * L2E;
            float s = 0.f;
            for (int j = 0; j < J; ++j) {
                if (lo + t + j * B < hi) {
                    const float4 v = *at(i, j);
                    s += exp2f(fmaf(v.x, L2E, -ms)) + exp2f(fmaf(v.y, L2E, -ms)) + exp2f(fmaf(v.z, L2E, -ms)) + exp2f(fmaf(v.w, L2E, -ms));
                }
            }
            const float2 p = warp_combine(make_float2(m, s));
            if (lane == 0) wp[i & 1][warp] = p;
            __syncthreads();
            if (warp == 0) {
                const float2 q = warp_combine(lane < nw ? wp[i & 1][lane] : make_float2(NEG_INF, 0.f));
                if (lane == 0 && TAG) {
                    __stcg(&tagged[static_cast<long long>(i) * P + blockIdx.x],
                           make_uint4(__float_as_uint(q.x), __float_as_uint(q.y), epoch, 0u));
                } else if (lane == 0) {
                    parts[static_cast<long long>(i) * P + blockIdx.x] = q;
                    __threadfence();
                    atomicAdd(&counts[i], 1u);
                }
            }
        }
        const int r = i - LAG;
        if (r >= 0) {
            if (warp == 0) {
                float2 q = make_float2(NEG_INF, 0.f);
                if (TAG) {
                    for (int j = lane; j < P; j += 32) {
                        uint4 v;
                        do {
                            asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                                         : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(&tagged[static_cast<long long>(r) * P + j]));
                        } while (v.z != epoch);
                        q = combine(q, make_float2(__uint_as_float(v.x), __uint_as_float(v.y)));
                    }
                } else {
                    if (lane == 0) {
                        while (*reinterpret_cast<volatile unsigned*>(&counts[r]) < target) __nanosleep(32);
                        __threadfence();
                    }
                    __syncwarp();
                    float2 v[16];  // every post a lane reads in flight at once (P <= 512)
#pragma unroll
                    for (int u = 0; u < 16; ++u)
                        v[u] = lane + 32 * u < P ? __ldcg(&parts[static_cast<long long>(r) * P + lane + 32 * u]) : make_float2(NEG_INF, 0.f);
#pragma unroll
                    for (int u = 0; u < 16; ++u) q = combine(q, v[u]);
                }
                q = warp_combine(q);
                if (lane == 0) tot[r & 1] = q;
            }
            __syncthreads();
            const float2 total = tot[r & 1];
            const float gms = total.x * L2E, inv = 1.f / total.y;
            float4* yr = y + static_cast<long long>(r) * chunks;
            for (int j = 0; j < J; ++j) {
                const int c = lo + t + j * B;
                if (c < hi) {
                    const float4 v = *at(r, j);
                    __stcs(yr + c, make_float4(exp2f(fmaf(v.x, L2E, -gms)) * inv, exp2f(fmaf(v.y, L2E, -gms)) * inv,
                                               exp2f(fmaf(v.z, L2E, -gms)) * inv, exp2f(fmaf(v.w, L2E, -gms)) * inv));
                }
            }
            issue(r + W);
        }
    }
}
'''
WINDOWS = [(2, 0), (2, 1), (4, 1), (4, 2), (8, 2), (8, 4), (16, 4), (16, 8)]
SHAPES = [(8, 262144), (32, 262144), (128, 262144), (8, 128256), (32, 128256), (128, 128256), (128, 32000),
          (32, 32000), (8, 32000), (1, 262144)]
SMEM_MOST = 227 * 1024 - 1024


def main() -> int:
    names = [f"pg<{w}, {g}, {tag}>" for w, g in WINDOWS for tag in ("false", "true")]
    mod = cupy.RawModule(code=SRC, options=("-std=c++17",), name_expressions=names)
    f32 = dtypes.parse("float32")
    dev = cupy.cuda.Device()
    sms = dev.attributes["MultiProcessorCount"]
    bad = 0
    for m, n in SHAPES:
        chunks = n // 4
        x = bench.random_input(m, n, f32)
        y = cupy.empty_like(x)
        checked = sorted({0, m // 2, m - 1})  # rows compared with the reference
        ref = reference.softmax(cupy.asnumpy(x[checked]), axis=-1)
        launch = api.plan(dev.id, "auto", m, n, (f32, f32))[1]
        fns = {"copy": bench.copy_call(x.nbytes), f"auto {launch.variant} {launch.knobs} {launch.block}": lambda: api.softmax(x, axis=-1, out=y)}
        configs = []
        for b in (128, 256, 512):
            for per_sm in (1, 2, 3):  # P <= 512: the posts a lane reads in flight
                p = per_sm * sms
                length = -(-chunks // p)
                j = -(-length // b)
                if j > 8 or (j == 1 and length * 2 <= b and b > 128):
                    continue  # too much a thread, or half a block idle
                for (w, lag), tag in itertools.product(WINDOWS, ("false", "true")):
                    smem = w * j * b * 16
                    if smem * per_sm > SMEM_MOST or (w > 2 and w > 2 * m):
                        continue
                    fn = mod.get_function(f"pg<{w}, {lag}, {tag}>")
                    fn.max_dynamic_shared_size_bytes = smem
                    if driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, b, smem) < per_sm:
                        continue
                    configs.append((b, per_sm, p, length, j, w, lag, tag, smem, fn))
        for b, per_sm, p, length, j, w, lag, tag, smem, fn in configs:
            parts = cupy.zeros((m * p, 4), numpy.float32)  # float2 posts, or uint4 tagged ones (launch 0: none)
            counts = cupy.zeros(m, numpy.uint32)
            state = {"launches": 0}

            def run(fn=fn, p=p, b=b, smem=smem, length=length, j=j, parts=parts, counts=counts, state=state):
                state["launches"] += 1
                fn.kernel((p,), (b,), (x, y, numpy.int32(m), numpy.int32(chunks), numpy.int32(length), numpy.int32(j), parts,
                                        counts, numpy.uint32(state["launches"] * p), numpy.uint32(state["launches"])),
                          shared_mem=smem,
                          enable_cooperative_groups=True)
            name = f"B={b:3} {per_sm}/SM L={length:5} J={j} W={w:2} LAG={lag}{' tagged' if tag == 'true' else ''}"
            ok = True
            for _ in range(2):  # the second launch checks the counts' targets
                y.fill(numpy.nan)
                run()
                dev.synchronize()
                got = cupy.asnumpy(y[checked]).astype(numpy.float64)
                ok &= not bool(cupy.isnan(y).any())
                err = float(numpy.max(numpy.abs(got - ref) / (numpy.abs(ref) + 1e-30)))
                ok &= bool(err < 1e-5)
            if not ok:
                print(f"  {m} x {n} {name}: WRONG (rel err {err})")
                bad += 1
                continue
            fns[name] = run
        res = bench.interleaved_ms(fns, repeat=20, rounds=2)
        cp = res.pop("copy")
        print(f"{m} x {n} float32: copy {cp * 1e3:.1f} us")
        ranked = sorted(res.items(), key=lambda kv: kv[1])
        for name, ms in [kv for kv in ranked if kv[0].startswith("auto")] + [kv for kv in ranked if not kv[0].startswith("auto")][:8]:
            print(f"   {name:48} {ms * 1e3:8.1f} us {cp / ms * 100:5.0f}%")
        sys.stdout.flush()
    print(f"wrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
