"""Evidence for the copy baseline as the ceiling: the copy, a plain copy kernel, cupysoftmax and the peers in a fresh process.

In the suite run at 971af81 Triton and Liger read up to 110% of the copy at
4096 x 4096 float32. This times, with bench.interleaved_ms (the suite's
engine and flush) in a fresh process: cudaMemcpyAsync, a grid-stride 16-byte
copy kernel (plain and evict-first, 4 / 8 / 16 blocks of 256 per SM),
cupysoftmax into a CuPy-allocated and a torch-allocated output, the Triton
peer into each, and Liger. Prints microseconds and GB/s (bytes read + written).
Usage: python scripts/probe_ceiling.py
"""
import cupy
import numpy
import torch

from cupysoftmax import api, bench, device, dtypes, peer_triton, suite

SHAPES = [(4096, 4096, "float32"), (4096, 2048, "float32"), (4096, 8192, "float32"), (4096, 4096, "bfloat16")]
COPY_KERNELS = r"""
extern "C" __global__ void copy_plain(const uint4* __restrict__ x, uint4* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}
extern "C" __global__ void copy_evict_first(const uint4* __restrict__ x, uint4* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        __stcs(y + i, __ldcs(x + i));
}
"""


def main():
    sms = device.facts(cupy.cuda.Device().id).sms
    module = cupy.RawModule(code=COPY_KERNELS)
    for m, n, name in SHAPES:
        x = bench.random_input(m, n, dtypes.parse(name))
        t = torch.from_dlpack(x)
        y_cupy = cupy.full_like(x, numpy.nan)
        y_torch_tensor = torch.full_like(t, float("nan"))
        y_torch = cupy.from_dlpack(y_torch_tensor)
        vectors = numpy.int64(x.nbytes // 16)
        fns = {"memcpyAsync": bench.copy_call(x.nbytes)}
        for kernel_name in ("copy_plain", "copy_evict_first"):
            kernel = module.get_function(kernel_name)
            for per_sm in (4, 8, 16):
                fns[f"{kernel_name} {per_sm}/SM"] = (
                    lambda kernel=kernel, grid=per_sm * sms: kernel((grid,), (256,), (x, y_cupy, vectors)))
        fns["cupysoftmax y=cupy"] = lambda: api.softmax(x, axis=-1, out=y_cupy)
        fns["cupysoftmax y=torch"] = lambda: api.softmax(x, axis=-1, out=y_torch)
        fns["triton y=torch"] = peer_triton.launcher(t, y_torch_tensor, sms)
        fns["triton y=cupy"] = peer_triton.launcher(t, torch.from_dlpack(y_cupy), sms)
        fns["liger"] = suite.PROVIDERS["liger"](x, "softmax")
        times = bench.interleaved_ms(fns, repeat=40, rounds=4)
        print(f"{m} x {n} {name}: {2 * x.nbytes / 1e6:.0f} MB moved")
        for label, ms in times.items():
            print(f"   {label:24} {ms * 1e3:7.1f} us {2 * x.nbytes / ms / 1e6:6.0f} GB/s")


if __name__ == "__main__":
    main()
