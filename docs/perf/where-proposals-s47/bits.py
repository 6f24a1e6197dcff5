"""Digests of split_row's outputs for calls that reach the float32 fold (8, 4) and its plain twin, for comparing
trees bit for bit: PYTHONPATH=<tree> python3 bits.py > digests.txt; then diff two trees' digests.
Covers where=(M, N) (rows in phase), where=(N,) (3 rows in 4 out of phase), a sliced mask (out of phase), rows
with every position masked out (refill), scale=, plain, log_softmax, and a row count that loops blocks."""
import hashlib
import cupy
from cupysoftmax import api

def digest(a):
    return hashlib.sha256(cupy.asnumpy(a).tobytes()).hexdigest()[:16]

rs = cupy.random.RandomState(7)
for m, n in [(8192, 50257), (300, 50257), (64, 65536), (257, 40001), (96, 50000)]:
    x = (rs.standard_normal((m, n), dtype=cupy.float32) * 3)
    full = rs.random_sample((m, n)) < 0.7
    full[::97] = False  # whole rows masked out: refill
    row = rs.random_sample(n) < 0.7
    wide = rs.random_sample((m, n + 3)) < 0.7
    sliced = wide[:, 1:n + 1]  # a view whose rows are out of phase
    calls = {
        "softmax": lambda: api.softmax(x, axis=-1),
        "scale": lambda: api.softmax(x, axis=-1, scale=0.5),
        "where_MN": lambda: api.softmax(x, axis=-1, where=full),
        "where_N": lambda: api.softmax(x, axis=-1, where=row),
        "where_view": lambda: api.softmax(x, axis=-1, where=sliced),
        "where_MN_scale": lambda: api.softmax(x, axis=-1, where=full, scale=0.375),
        "log_where_MN": lambda: api.log_softmax(x, axis=-1, where=full),
        "log_where_N": lambda: api.log_softmax(x, axis=-1, where=row),
        "x_offset_where_MN": lambda: api.softmax(x[:, 1:], axis=-1, where=full[:, 1:]),
    }
    for name, f in calls.items():
        try:
            print(f"{m}x{n} {name} {digest(f())}", flush=True)
        except Exception as exc:  # a call the API refuses: the same refusal in every tree
            print(f"{m}x{n} {name} refused: {type(exc).__name__}", flush=True)
