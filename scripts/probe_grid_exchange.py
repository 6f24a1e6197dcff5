"""Probe: a row split over P blocks anywhere on the GPU (not a cluster): (max, sum) per block to global memory,
a counter per row, spin, write. Cooperative launch (all blocks resident). float32, aligned whole chunks."""
import sys
import cupy, numpy
from cupy.cuda import driver
from cupysoftmax import api, bench, dtypes, reference

SRC = r'''
#define NEG_INF __int_as_float(0xff800000)
// KEEP, STORE, SCALE: split_row's habits (kept exponentials, its store path, the scale multiply), for
// scripts/probe_grid_habits.py; BOUND: __launch_bounds__(256, 4). All false: the plain probe.
template <int K, bool KEEP, bool STORE, bool SCALE, bool BOUND>
__global__ void __launch_bounds__(BOUND ? 256 : 0, BOUND ? 4 : 0) gx(const float4* __restrict__ x, float4* __restrict__ y, int rows, int chunks, int P,
                   float2* __restrict__ parts, unsigned* __restrict__ counts, float scale, int n, int shift, int stream) {
    __shared__ float2 wp[32];
    __shared__ float2 total;
    const int B = blockDim.x, t = threadIdx.x, lane = t & 31, warp = t >> 5, nw = B >> 5;
    const int rank = blockIdx.x % P, T = P * B, slots = gridDim.x / P;
    const float L2E = 1.4426950408889634f;
    for (int row = blockIdx.x / P; row < rows; row += slots) {
        const float4* xr = x + static_cast<long long>(row) * chunks;
        float4 v[K];
        float m = NEG_INF;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = rank * B + t + i * T;
            v[i] = c < chunks ? xr[c] : make_float4(NEG_INF, NEG_INF, NEG_INF, NEG_INF);
            if (SCALE) { v[i].x *= scale; v[i].y *= scale; v[i].z *= scale; v[i].w *= scale; }
        }
#pragma unroll
        for (int i = 0; i < K; ++i) m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
        const float ms = m * L2E;
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const float4 e = make_float4(exp2f(fmaf(v[i].x, L2E, -ms)), exp2f(fmaf(v[i].y, L2E, -ms)), exp2f(fmaf(v[i].z, L2E, -ms)), exp2f(fmaf(v[i].w, L2E, -ms)));
            s += e.x + e.y + e.z + e.w;
            if (KEEP) v[i] = e;
        }
        float wm = m;
        for (int o = 16; o; o >>= 1) wm = fmaxf(wm, __shfl_xor_sync(0xffffffffu, wm, o));
        s = m == NEG_INF ? 0.f : s * exp2f((m - wm) * L2E);
        for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) wp[warp] = make_float2(wm, s);
        __syncthreads();
        if (warp == 0) {
            float2 p = lane < nw ? wp[lane] : make_float2(NEG_INF, 0.f);
            float bm = p.x;
            for (int o = 16; o; o >>= 1) bm = fmaxf(bm, __shfl_xor_sync(0xffffffffu, bm, o));
            float bs = p.x == NEG_INF ? 0.f : p.y * exp2f((p.x - bm) * L2E);
            for (int o = 16; o; o >>= 1) bs += __shfl_xor_sync(0xffffffffu, bs, o);
            if (lane == 0) {
                parts[static_cast<long long>(row) * P + rank] = make_float2(bm, bs);
                __threadfence();
                atomicAdd(&counts[row], 1u);
                while (*reinterpret_cast<volatile unsigned*>(&counts[row]) < static_cast<unsigned>(P)) __nanosleep(32);
                __threadfence();
                // the last block past the wait leaves the row's counters zero for the next launch
                if (atomicAdd(&counts[rows + row], 1u) == static_cast<unsigned>(P - 1)) { counts[row] = 0; counts[rows + row] = 0; }
            }
            __syncwarp();
            float pm = NEG_INF, ps = 0.f;
            for (int j = lane; j < P; j += 32) {
                const float2 q = __ldcg(&parts[static_cast<long long>(row) * P + j]);
                const float nm = fmaxf(pm, q.x);
                ps = (pm == NEG_INF ? 0.f : ps * exp2f((pm - nm) * L2E)) + (q.x == NEG_INF ? 0.f : q.y * exp2f((q.x - nm) * L2E));
                pm = nm;
            }
            float gm = pm;
            for (int o = 16; o; o >>= 1) gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, o));
            ps = pm == NEG_INF ? 0.f : ps * exp2f((pm - gm) * L2E);
            for (int o = 16; o; o >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, o);
            if (lane == 0) total = make_float2(gm, ps);
        }
        __syncthreads();
        const float inv = 1.f / total.y, gms = total.x * L2E;
        const float factor = exp2f((m - total.x) * L2E) / total.y;
        float4* yr = y + static_cast<long long>(row) * chunks;
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = rank * B + t + i * T;
            if (c < chunks) {
                float4 o;
                if (KEEP) { o.x = v[i].x * factor; o.y = v[i].y * factor; o.z = v[i].z * factor; o.w = v[i].w * factor; }
                else {
                o.x = exp2f(fmaf(v[i].x, L2E, -gms)) * inv; o.y = exp2f(fmaf(v[i].y, L2E, -gms)) * inv;
                o.z = exp2f(fmaf(v[i].z, L2E, -gms)) * inv; o.w = exp2f(fmaf(v[i].w, L2E, -gms)) * inv;
                }
                if (STORE) {  // split_row's store path: bounds, alignment, a streaming flag; element stores otherwise
                    float* yr = reinterpret_cast<float*>(y) + static_cast<long long>(row) * chunks * 4;
                    const int e0 = c * 4 - shift;
                    if (shift == 0 && e0 >= 0 && e0 + 4 <= n) {
                        if (stream) __stcs(reinterpret_cast<float4*>(yr + e0), o);
                        else *reinterpret_cast<float4*>(yr + e0) = o;
                    } else {
                        const float ov[4] = {o.x, o.y, o.z, o.w};
                        for (int k = 0; k < 4; ++k) if (e0 + k >= 0 && e0 + k < n) yr[e0 + k] = ov[k];
                    }
                } else {
                    y[static_cast<long long>(row) * chunks + c] = o;
                }
            }
        }
        __syncthreads();  // total and wp reused next row
    }
}
'''
KS = (1, 2, 4, 8, 16)


def PLAIN_ARGS(n):
    """The habits' arguments, as the plain probe takes them: scale 1, n, shift 0, plain stores."""
    return numpy.float32(1.0), numpy.int32(n), numpy.int32(0), numpy.int32(0)


mod = cupy.RawModule(code=SRC, options=("-std=c++17",), name_expressions=[f"gx<{k}, false, false, false, false>" for k in KS])
SHAPES = [(8, 262144), (32, 262144), (128, 262144), (8, 128256), (32, 128256), (128, 128256), (128, 32000), (32, 32000)]
f32 = dtypes.parse("float32")
sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
for m, n in SHAPES:
    chunks = n // 4
    x = bench.random_input(m, n, f32)
    y = cupy.empty_like(x)
    ref = reference.softmax(cupy.asnumpy(x), axis=-1)
    fns = {"copy": bench.copy_call(x.nbytes), "auto": lambda: api.softmax(x, axis=-1, out=y)}
    for p in (8, 16, 32, 64, 128, 256):
        for b in (128, 256, 512):
            k = -(-chunks // (p * b))
            if k not in KS or (k > 1 and (k // 2) * p * b >= chunks):
                continue
            fn = mod.get_function(f"gx<{k}, false, false, false, false>")
            per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, b, 0)
            slots = min(m, per_sm * sms // p)
            if slots < 1:
                continue
            grid = slots * p
            parts = cupy.empty((m * p, 2), numpy.float32)
            counts = cupy.zeros(2 * m, numpy.uint32)
            def launch(fn=fn, grid=grid, b=b, p=p, parts=parts, counts=counts, zero=True):
                if zero:
                    counts.fill(0)
                fn.kernel((grid,), (b,), (x, y, numpy.int32(m), numpy.int32(chunks), numpy.int32(p), parts, counts, *PLAIN_ARGS(n)), enable_cooperative_groups=True)
            y.fill(numpy.nan); launch(); cupy.cuda.Device().synchronize()
            err = float(numpy.max(numpy.abs(cupy.asnumpy(y).astype(numpy.float64) - ref) / (numpy.abs(ref) + 1e-30)))
            if not err < 1e-5:
                print(f"  {m}x{n} P={p} B={b} K={k}: WRONG rel err {err}"); continue
            name = f"P={p:3} B={b:3} K={k:2} {per_sm}/SM slots={slots}"
            y.fill(numpy.nan); launch(zero=False); cupy.cuda.Device().synchronize()
            err = float(numpy.max(numpy.abs(cupy.asnumpy(y).astype(numpy.float64) - ref) / (numpy.abs(ref) + 1e-30)))
            if not err < 1e-5:
                print(f"  {m}x{n} P={p} B={b} K={k}: WRONG without memset, rel err {err}"); continue
            if b == 256:
                fns[name + " +memset"] = launch
            fns[name] = lambda launch=launch: launch(zero=False)
    res = bench.interleaved_ms(fns, repeat=20, rounds=2)
    cp = res["copy"]
    print(f"{m} x {n} float32: copy {cp * 1e3:.1f} us")
    for name, ms in res.items():
        print(f"   {name:44} {ms * 1e3:8.1f} us {cp / ms * 100:5.0f}%")
    sys.stdout.flush()
