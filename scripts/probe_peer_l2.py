"""Evidence: do L2 lines marked evict-last outlive the suite's flush, and do the peers read x from them?

In every suite run Triton and Liger read above the copy (up to 109% at 4096 x 4096
float32) only when torch and torch.compile are timed in the same rounds. 128 MB in
39 us is above HBM3's 3.35 TB/s, so part of x must come from L2. Inductor's looped
reductions load x with eviction_policy='evict_last'; bench.Flush evicts with plain
writes and reads. This probe, in one process:
1. marks x evict-last with one read (createpolicy.fractional.L2::evict_last) and
   times a plain kernel that reads x, each call after the write+read flush:
   before marking, after it, and after cuCtxResetPersistingL2Cache;
2. prints whether Inductor's kernel for the shape carries evict_last;
3. times the suite's providers in the suite's order (copy, cupysoftmax, torch,
   torch_compile, triton, liger) with the write+read flush (bench.Flush before
   2026-11-23), then with bench.Flush (persisting lines reset first), then with
   the write+read flush and torch_compile last in each round, then without
   torch_compile.
Prints microseconds and % of the copy per line.
Usage: python scripts/probe_peer_l2.py
"""
import contextlib

import cupy
import numpy
import torch

from cupysoftmax import api, bench, driver, dtypes, suite

SHAPES = [(4096, 4096, "float32"), (4096, 2048, "float32"), (4096, 16384, "bfloat16"), (4096, 1024, "float32"),
          (262144, 64, "float32"), (262144, 32, "float32")]
KERNELS = r"""
extern "C" __global__ void read_evict_last(const uint4* __restrict__ x, long long n, unsigned* sink) {
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    unsigned acc = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned a, b, c, d;
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(x + i), "l"(policy));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x12345678u) *sink = acc;  // keeps the loads
}
extern "C" __global__ void copy_plain(const uint4* __restrict__ x, uint4* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}
"""


class WriteReadFlush(bench.Flush):
    """bench.Flush without the reset of persisting lines."""

    def __call__(self):
        self._written.fill(1)
        cupy.max(self._read, out=self._sink)


@contextlib.contextmanager
def write_read_flush():
    kept = bench.Flush
    bench.Flush = WriteReadFlush
    try:
        yield
    finally:
        bench.Flush = kept


def timed(fns, label, copy_name="copy"):
    times = bench.interleaved_ms(fns, repeat=40, rounds=4)
    copy = times[copy_name]
    cells = "  ".join(f"{name} {ms * 1e3:6.1f} us {100 * copy / ms:5.1f}%" if not isinstance(ms, Exception)
                      else f"{name} failed" for name, ms in times.items())
    print(f"  {label:34} {cells}", flush=True)


def main():
    module = cupy.RawModule(code=KERNELS)
    mark, copy_plain = module.get_function("read_evict_last"), module.get_function("copy_plain")
    sink = cupy.zeros(1, numpy.uint32)
    for m, n, name in SHAPES:
        x = bench.random_input(m, n, dtypes.parse(name))
        y = cupy.full_like(x, numpy.nan)
        vectors = numpy.int64(x.nbytes // 16)
        print(f"{m} x {n} {name}", flush=True)

        # 1. evict-last lines against the flush
        reads = {"copy": bench.copy_call(x.nbytes), "x->y kernel": lambda: copy_plain((1056,), (256,), (x, y, vectors)),
                 "cupysoftmax": lambda: api.softmax(x, axis=-1, out=y)}
        with write_read_flush():
            timed(reads, "before marking")
            mark((1056,), (256,), (x, vectors, sink))
            timed(reads, "x marked evict-last once")
            driver.reset_persisting_l2()
            timed(reads, "after cuCtxResetPersistingL2Cache")

        # 2. Inductor's kernel
        t = torch.from_dlpack(x)
        compiled = torch.compile(lambda a: torch.softmax(a, -1), dynamic=False)
        from torch._inductor.utils import run_and_get_code
        _, codes = run_and_get_code(compiled, t)
        code = "\n".join(codes)
        print(f"  inductor: evict_last {code.count('evict_last')}x, evict_first {code.count('evict_first')}x, "
              f"loads {code.count('tl.load(')}", flush=True)
        driver.reset_persisting_l2()

        # 3. the suite's providers, the suite's order
        names = ["copy", "cupysoftmax", "torch", "torch_compile", "triton", "liger"]
        made = {}
        for p in names:
            try:
                made[p] = suite.PROVIDERS[p](x, "softmax")
            except Exception as exc:  # e.g. Liger past 65536
                print(f"  {p}: {type(exc).__name__}: {exc}")
        with write_read_flush():
            timed(made, "suite order, write+read")
        timed(made, "suite order, bench.Flush (reset)")
        last = {p: made[p] for p in names if p in made and p != "torch_compile"}
        last["torch_compile"] = made["torch_compile"]
        with write_read_flush():
            timed(last, "torch_compile last, write+read")
        no_compile = {p: fn for p, fn in made.items() if p != "torch_compile"}
        driver.reset_persisting_l2()
        with write_read_flush():
            timed(no_compile, "no torch_compile, write+read")
        del made, last, no_compile, t
        suite._free_gpu_memory()


if __name__ == "__main__":
    main()
