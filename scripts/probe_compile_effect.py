"""Evidence: which step of a PyTorch session makes later launches in the process faster.

On the H100 (2026-11-22) split_row at 4096 x 2048 float32 read 27.4 us in a
fresh process and 24.1 us after the first call of a torch.compile'd softmax,
while the copy baseline did not move. This script times cupysoftmax and the
copy after each step, in one process, in this order: eager torch.softmax
(100 calls), the Triton peer (100 launches), a second process holding a CUDA
context, the persisting-L2 limit set to 0, a torch.compile object, its first
call, 100 more calls. Each line also prints the context's cache config.
Usage: python scripts/probe_compile_effect.py
"""
import ctypes
import subprocess
import sys

import cupy
import numpy
import torch

from cupysoftmax import api, bench, device, dtypes, peer_triton

PERSISTING_L2_LIMIT = 0x06  # cudaLimitPersistingL2CacheSize


def cudart():
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise OSError("no libcudart found")


def main():
    lib = cudart()
    x = bench.random_input(4096, 2048, dtypes.parse("float32"))
    y = cupy.full_like(x, numpy.nan)
    t = torch.from_dlpack(x)
    copy = bench.copy_call(x.nbytes)
    compiled = {}

    def show(step):
        config = ctypes.c_int()
        lib.cudaDeviceGetCacheConfig(ctypes.byref(config))
        ours = bench.median_ms(lambda: api.softmax(x, axis=-1, out=y)) * 1e3
        print(f"{step:36} cupysoftmax {ours:5.1f} us  copy {bench.median_ms(copy) * 1e3:5.1f} us  "
              f"persisting L2 {cupy.cuda.runtime.deviceGetLimit(PERSISTING_L2_LIMIT)}  cache config {config.value}",
              flush=True)

    def other_context():
        code = "import cupy, time; cupy.zeros(1); print('up', flush=True); time.sleep(60)"
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        child.stdout.readline()
        show("(a second process holds a context)")
        child.kill()
        child.wait()

    steps = [
        ("eager torch.softmax x 100", lambda: [torch.softmax(t, -1) for _ in range(100)]),
        ("Triton peer x 100", lambda: [peer_triton.launcher(t, torch.empty_like(t), device.facts(0).sms)()
                                       for _ in range(100)]),
        ("second process exited", other_context),
        ("persisting L2 limit set to 0", lambda: cupy.cuda.runtime.deviceSetLimit(PERSISTING_L2_LIMIT, 0)),
        ("torch.compile object made", lambda: compiled.setdefault(
            "f", torch.compile(lambda a: torch.softmax(a, -1), dynamic=False))),
        ("its first call", lambda: compiled["f"](t)),
        ("100 more calls", lambda: [compiled["f"](t) for _ in range(100)]),
    ]
    show("fresh process")
    for step, run in steps:
        run()
        cupy.cuda.Device().synchronize()
        show(step)


if __name__ == "__main__":
    main()
