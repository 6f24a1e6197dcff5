"""dtype="float32" from half precision: cupysoftmax (whatever is on PYTHONPATH) against torch and a copy of the
same bytes (read 2 or 4 bytes in, write 4 out), interleaved. Checks 32 rows of each op first.
Usage: python3 scripts/probe_mixed_stores.py MxNxin ..."""
import sys

import cupy
import numpy
import torch

from cupysoftmax import api, bench, dtypes, reference

TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16}
for s in sys.argv[1:]:
    m, n, name = s.split("x")
    m, n, dt = int(m), int(n), dtypes.parse(name)
    x = bench.random_input(m, n, dt)
    y = cupy.empty((m, n), numpy.float32)
    full = cupy.random.random((m, n)) < 0.7
    rows = numpy.unique(numpy.linspace(0, m - 1, 32).astype(int))
    host = cupy.asnumpy(x[rows]).astype(numpy.float64)
    for op, kw, want in (("softmax", {}, reference.softmax(host, axis=-1)),
                         ("log_softmax", {}, reference.log_softmax(host, axis=-1)),
                         ("softmax", {"where": full}, reference.softmax(host, axis=-1, where=cupy.asnumpy(full[rows])))):
        y.fill(numpy.nan)
        api.FUNCTIONS[op](x, axis=-1, out=y, dtype="float32", **kw)
        err = reference.error_ratio(cupy.asnumpy(y[rows]), want, numpy.float32, op)
        assert err <= 1, (s, op, err)
    t = torch.randn(m, n, device="cuda", dtype=TORCH[name]) * 3
    fns = {"copy": bench.copy_call((dt.itemsize + 4) * m * n // 2),
           "softmax": lambda: api.softmax(x, axis=-1, out=y, dtype="float32"),
           "log_softmax": lambda: api.log_softmax(x, axis=-1, out=y, dtype="float32"),
           "softmax where=": lambda: api.softmax(x, axis=-1, out=y, dtype="float32", where=full),
           "torch softmax": lambda: torch.softmax(t, -1, dtype=torch.float32),
           "torch log_softmax": lambda: torch.log_softmax(t, -1, dtype=torch.float32)}
    times = bench.interleaved_ms(fns, repeat=30, rounds=3)
    print(f"{m} x {n} {name} -> float32")
    for label, ms in times.items():
        print(f"   {label:18} {ms * 1e3:9.1f} us")
    del x, y, full, t
    cupy.get_default_memory_pool().free_all_blocks(); torch.cuda.empty_cache()
