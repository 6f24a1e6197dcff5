"""Evidence for the benchmark's L2 flush: what the state the flush leaves in L2 does to each provider's time.

Times copy, cupysoftmax, the Triton peer and torch.softmax after three flushes:
- write: write a buffer twice the size of L2 (L2 ends full of dirty lines,
  which the timed call then writes back);
- write+read: bench.Flush (the write, then a read of another such buffer:
  L2 ends clean);
- read: the read alone.
The same, again, after the first call of a torch.compile'd softmax (the step
scripts/probe_compile_effect.py found to move some timings).
Prints one line a (state, shape, flush): microseconds per provider.
Usage: python scripts/probe_flush.py
"""
import statistics

import cupy
import numpy
import torch

from cupysoftmax import api, bench, device, dtypes, peer_triton, suite

SHAPES = [(4096, 2048, "float32"), (4096, 4096, "bfloat16")]


def flushes(l2_bytes):
    written = cupy.empty(2 * l2_bytes, numpy.uint8)
    read = cupy.random.randint(0, 256, 2 * l2_bytes, dtype=numpy.uint8)
    sink = cupy.empty((), numpy.uint8)
    return {
        "write": lambda: written.fill(1),
        "write+read": bench.Flush(l2_bytes),
        "read": lambda: cupy.max(read, out=sink),
    }


def median_us(fn, flush, gate, repeat=40):
    """bench's gated timing loop with a given flush in place of bench.Flush."""
    for _ in range(3):
        fn()
    return 1e3 * statistics.median(bench._timed_calls(fn, repeat, flush, gate))


def main():
    facts = device.facts(cupy.cuda.Device().id)
    gate = bench.Gate()
    cases = []
    for m, n, dtype in SHAPES:
        x = bench.random_input(m, n, dtypes.parse(dtype))
        y = cupy.full_like(x, numpy.nan)
        t = torch.from_dlpack(x)
        cases.append((f"{m}x{n} {dtype}", {
            "copy": bench.copy_call(x.nbytes),
            "cupysoftmax": lambda x=x, y=y: api.softmax(x, axis=-1, out=y),
            "triton": peer_triton.launcher(t, torch.empty_like(t), facts.sms),
            "torch": suite.PROVIDERS["torch"](x, "softmax"),
        }))

    def show(state):
        for label, providers in cases:
            for how, flush in flushes(facts.l2_bytes).items():
                cells = "  ".join(f"{name} {median_us(fn, flush, gate):6.1f}" for name, fn in providers.items())
                print(f"{state:14} {label:20} flush={how:10} {cells}", flush=True)

    show("fresh")
    compiled = torch.compile(lambda a: torch.softmax(a, -1), dynamic=False)
    compiled(torch.from_dlpack(bench.random_input(4096, 2048, dtypes.parse("float32"))))
    torch.cuda.synchronize()
    show("after compile")


if __name__ == "__main__":
    main()
