"""Probe: plain softmax on rows out of 16-byte phase (an odd N), auto's launch against a copy of the same bytes,
torch and the Triton peer, all interleaved in the same rounds (bench.interleaved_ms). No suite holds such rows; this
is where warp_rows' any-phase layout (kernels/common.cuh, Slots) shows against the peers
(H200: docs/perf/plain-odd-rows-peers-h200.txt).

    PYTHONPATH=$PWD python3 scripts/probe_odd_rows_peers.py "4194304x63xfloat32 2097152x255xbfloat16"
"""
import sys

from cupysoftmax import bench, dtypes, suite

PEERS = [("copy", suite.make_copy), ("cupysoftmax", suite.make_cupysoftmax), ("torch", suite.make_torch),
         ("triton", suite.make_triton)]

for word in sys.argv[1].split():
    m, n, name = word.split("x")
    x = bench.random_input(int(m), int(n), dtypes.parse(name))
    fns = {}
    for label, make in PEERS:
        try:
            fns[label] = make(x, "softmax")
        except Exception as exc:  # a peer not installed or refusing the shape: say so, time the rest
            print(f"   {label}: {type(exc).__name__} {exc}")
    times = bench.interleaved_ms(fns, repeat=20, rounds=3)
    print(f"{m} x {n} {name}", flush=True)
    for label, ms in times.items():
        print(f"   {label:12} {ms * 1e3:9.1f} us  {times['copy'] / ms * 100:5.0f}% of copy", flush=True)
