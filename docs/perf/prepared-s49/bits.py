"""Digests of softmax / log_softmax outputs on the half-precision split_row launches that the s48 bf16 proposals
change, for comparing trees bit for bit: PYTHONPATH=<tree> python3 bits.py > digests.txt, then diff two trees'.

Launches reached (planner, H100/H200 facts, where=): 2048 x 32768 and 1024 x 65536 bfloat16, 300 x 32001 bfloat16
(misaligned rows), 2048 x 32768 float16: split_row (8, 1, 1) (kFetchTogether); 4096 x 16384 bfloat16, 100 x 16001
float16, 333 x 2047 bfloat16: (4, 1, 1) (kLeanWords); 8192 x 2048 bfloat16: (2, 1, 1) (kLeanWords); 256 and 64 x
50257 float16, 2048 x 40000 and 8192 x 50257 bfloat16: the fold (8, 4, 1) (kLeanFold). Each: plain softmax and log_softmax (their plain kernels must not change), scale=, where=(M, N) with
rows masked out everywhere (refill), where=(N,) (out of phase on odd rows; sent as phased copies at 8192 x 50257),
a sliced mask (a view one byte in: out of phase), where= with scale=, log_softmax with where=, x one element in.
The first line names the package imported (PYTHONPATH's tree, or it tests the wrong one)."""
import hashlib
import sys

import cupy

import cupysoftmax
from cupysoftmax import api, dtypes, reference

print("package", cupysoftmax.__file__, flush=True)
only = sys.argv[1:]  # optional: shape names to run


def digest(a):
    return hashlib.sha256(cupy.asnumpy(a).tobytes()).hexdigest()[:16]


SHAPES = [(2048, 32768, "bfloat16"), (1024, 65536, "bfloat16"), (300, 32001, "bfloat16"), (2048, 32768, "float16"),
          (4096, 16384, "bfloat16"), (100, 16001, "float16"), (333, 2047, "bfloat16"), (8192, 2048, "bfloat16"),
          (256, 50257, "float16"), (64, 50257, "float16"), (2048, 40000, "bfloat16"), (8192, 50257, "bfloat16")]
rs = cupy.random.RandomState(7)
for m, n, dt in SHAPES:
    name = f"{m}x{n}x{dt}"
    if only and name not in only:
        continue
    x = (rs.standard_normal((m, n), dtype=cupy.float32) * 3).astype(dtypes.parse(dt))
    full = rs.random_sample((m, n)) < 0.7
    full[::97] = False  # whole rows masked out: refill
    row = rs.random_sample(n) < 0.7
    wide = rs.random_sample((m, n + 3)) < 0.7
    sliced = wide[:, 1:n + 1]  # a view whose rows are out of phase
    calls = {
        "softmax": lambda: api.softmax(x, axis=-1),
        "log_softmax": lambda: api.log_softmax(x, axis=-1),
        "scale": lambda: api.softmax(x, axis=-1, scale=0.5),
        "where_MN": lambda: api.softmax(x, axis=-1, where=full),
        "where_N": lambda: api.softmax(x, axis=-1, where=row),
        "where_view": lambda: api.softmax(x, axis=-1, where=sliced),
        "where_MN_scale": lambda: api.softmax(x, axis=-1, where=full, scale=0.375),
        "log_where_MN": lambda: api.log_softmax(x, axis=-1, where=full),
        "log_where_N": lambda: api.log_softmax(x, axis=-1, where=row),
        "x_offset_where_MN": lambda: api.softmax(x[:, 1:], axis=-1, where=full[:, 1:]),
    }
    # rows checked against the float64 reference (row 0 is masked out everywhere), printed apart ("ref" lines)
    rows = [0, 1, 2, m // 2, m - 1]
    refs = {"where_MN": ("softmax", dict(where=full)), "log_where_MN": ("log_softmax", dict(where=full)),
            "where_N": ("softmax", dict(where=row)), "where_MN_scale": ("softmax", dict(where=full, scale=0.375))}
    for call, f in calls.items():
        try:
            y = f()
            print(f"{name} {call} {digest(y)}", flush=True)
        except Exception as exc:  # a call the API refuses: the same refusal in every tree
            print(f"{name} {call} refused: {type(exc).__name__}: {str(exc)[:80]}", flush=True)
            continue
        if call in refs:
            op, kw = refs[call]
            where = cupy.asnumpy(kw["where"])
            where = where[rows] if where.ndim == 2 else where
            expected = reference.REFERENCES[op](cupy.asnumpy(x[rows]), -1, scale=kw.get("scale", 1.0), where=where)
            ratio = reference.error_ratio(cupy.asnumpy(y[rows]), expected, x.dtype, op)
            print(f"ref {name} {call} error/tolerance {ratio:.3g} {'ok' if ratio <= 1 else 'FAIL'}", flush=True)
    del x, full, row, wide, sliced
    cupy.get_default_memory_pool().free_all_blocks()
