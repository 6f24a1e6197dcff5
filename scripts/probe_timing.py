"""Evidence for the benchmark's method: what the host and the order of timing do to each provider's time.

Times the suite's providers, one after another, two ways:
- ungated: the method before the gate (write 2 x L2, record, call, record),
  where a slow Python launch path can leave the device idle inside the timed
  region, or not, depending on what ran before;
- gated: bench.median_ms as it is (the call queued behind a gate kernel).
Prints one line a (shape, provider): microseconds and % of copy under each.
Providers are made and timed one after another (the suite's order before it
prepared them all first), and cupysoftmax is timed again last.
Usage: python scripts/probe_timing.py [--once [--op OP]] [M N dtype]...
--once: each provider once after the benchmark's L2 flush, inside an NVTX range
"timed" (for ncu --nvtx --nvtx-include timed/ --cache-control none; see
scripts/ncu_peers.sh), on the suite's input for OP (softmax unless --op names
another: log_softmax, softmax_backward, log_softmax_backward).
"""
import sys

import cupy

from cupysoftmax import bench, device, dtypes, suite

SHAPES = [(4096, 2048, "float32"), (4096, 4096, "bfloat16"), (4096, 512, "float32"), (262144, 32, "float32"),
          (4096, 16384, "float32")]
# the suite's order before it prepared every provider first; cupysoftmax again last,
# after torch.compile has compiled the shape
PROVIDERS = ("copy", "cupysoftmax", "torch", "torch_compile", "triton", "liger", "cupysoftmax")


def ways(fn):
    def ungated():
        return fn()

    ungated.syncs_host = True  # bench.median_ms times it as it timed every call before the gate
    return {"ungated": ungated, "gated": fn}


def median_us(fn):
    return 1e3 * bench.median_ms(fn)


def once(shapes, op):
    flush = bench.Flush(device.facts(cupy.cuda.Device().id).l2_bytes)
    for m, n, dtype in shapes:
        x = suite._inputs({"M": m, "N": n, "dtype": dtype}, op)[0]
        for name in PROVIDERS:
            try:
                fn = suite.PROVIDERS[name](x, op)
            except suite.Unsupported:
                continue
            fn()
            cupy.cuda.Device().synchronize()
            cupy.cuda.nvtx.RangePush("timed")
            flush()  # bench.median_ms's preparation
            fn()
            cupy.cuda.nvtx.RangePop()
            cupy.cuda.Device().synchronize()
            print(f"{m}x{n} {dtype} {op} {name}", flush=True)
        del x
        suite._free_gpu_memory()


def main(shapes):
    print(f"{'shape':>22} {'provider':>14} " + " ".join(f"{w:>16}" for w in ("ungated", "gated")))
    for m, n, dtype in shapes:
        x = bench.random_input(m, n, dtypes.parse(dtype))
        copy_us = {}
        for name in PROVIDERS:
            try:
                fn = suite.PROVIDERS[name](x, "softmax")
            except suite.Unsupported as exc:
                print(f"{m}x{n} {dtype}: {name} skipped ({exc})")
                continue
            cells = []
            for way, call in ways(fn).items():
                us = median_us(call)
                if name == "copy":
                    copy_us[way] = us
                cells.append(f"{us:7.1f} us {100 * copy_us[way] / us:4.0f}%")
            print(f"{f'{m}x{n} {dtype}':>22} {name:>14} " + " ".join(cells), flush=True)
        del x
        suite._free_gpu_memory()


if __name__ == "__main__":
    args = sys.argv[1:]
    op = "softmax"
    if "--op" in args:
        at = args.index("--op")
        op = args[at + 1]
        del args[at:at + 2]
    args = [a for a in args if a != "--once"]
    shapes = [(int(args[i]), int(args[i + 1]), args[i + 2]) for i in range(0, len(args), 3)] or SHAPES
    if "--once" in sys.argv:
        once(shapes, op)
    else:
        main(shapes)
