"""loader.function from many threads at once, no GPU: each instantiation compiles once, different ones side by side.

The compile is a stand-in that takes a while; test_gpu_threads does the same with NVRTC on a GPU.
"""
import threading
import time
from collections import Counter

from cupysoftmax import loader

KEYS = [("warp_rows", (1, 1, 0)), ("warp_rows", (2, 1, 0)), ("split_row", (4, 1)), ("two_pass", (4,))]
THREADS = 8


def test_each_instantiation_compiles_once_and_different_ones_side_by_side(monkeypatch):
    compiled, state, guard = Counter(), {"running": 0, "most": 0}, threading.Lock()

    def slow_compile(variant_name, pair, knobs, device_id, op):
        with guard:
            compiled[(variant_name, knobs)] += 1
            state["running"] += 1
            state["most"] = max(state["most"], state["running"])
        time.sleep(0.2)
        with guard:
            state["running"] -= 1
        return object()

    monkeypatch.setattr(loader, "_compile", slow_compile)
    monkeypatch.setattr(loader, "_kernels", {})
    monkeypatch.setattr(loader, "_compiling", {})
    start = threading.Barrier(THREADS)
    got = [None] * THREADS

    def ask(i):
        start.wait()
        order = KEYS[i % len(KEYS):] + KEYS[: i % len(KEYS)]  # each thread starts with another kernel
        got[i] = {key: loader.function(key[0], "pair", key[1], 0) for key in order}

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert compiled == Counter({key: 1 for key in KEYS})
    assert all(g == got[0] for g in got)  # every thread got the one kernel of each key
    assert state["most"] > 1  # different kernels compiled at the same time
