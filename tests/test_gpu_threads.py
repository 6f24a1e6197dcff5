"""Threads calling the API for the first time at once: each kernel module compiles once, every result is right.

The loader's and api's caches are swapped for empty ones (the process's own come back after the test), and
loader._compile is wrapped to count compilations (CuPy's disk cache may serve NVRTC's part: each is still one
module load per instantiation).
"""
from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy
import pytest

from cupysoftmax import api, gradients, loader, reference
from cupysoftmax.packed import PackedLaunch
from cupysoftmax import variants as registry
from test_gpu_gradients import check as check_gradient
from test_gpu_softmax import draw

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

THREADS = 8
# (op, shape, axis, dtype): warp_rows, split_row's clusters, strided over a middle axis, the gradients
CALLS = [(registry.SOFTMAX, (64, 1000), -1, numpy.float32),
         (registry.LOG_SOFTMAX, (2, 50257), -1, numpy.float16),
         (registry.SOFTMAX, (4, 300, 64), 1, numpy.float32),
         (registry.SOFTMAX_BACKWARD, (8, 3000), -1, numpy.float32),
         (registry.LOG_SOFTMAX_BACKWARD, (8, 3000), -1, numpy.float64)]


def test_first_calls_from_many_threads_compile_each_module_once(rng, monkeypatch):
    inputs = []
    for op, shape, axis, dtype in CALLS:
        x = draw(rng, shape, dtype)
        if op in registry.BACKWARD:  # y from the forward, before the caches are emptied
            x = (api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=axis), draw(rng, shape, dtype, scale=1.0))
        inputs.append(x)
    cupy.cuda.Device().synchronize()
    compiled, guard = Counter(), threading.Lock()
    compile_ = loader._compile

    def counted(*args):
        with guard:
            compiled[args] += 1
        return compile_(*args)

    monkeypatch.setattr(loader, "_compile", counted)
    for module, name in [(loader, "_kernels"), (loader, "_compiling"), (api, "_launches")]:
        monkeypatch.setattr(module, name, {})
    monkeypatch.setattr(api, "_remembered", api._Remembered())  # the main thread's remembered calls too
    start = threading.Barrier(THREADS)

    def work(i):
        start.wait()
        order = [(i + k) % len(CALLS) for k in range(len(CALLS))]  # each thread starts with another call
        results = {}
        for k in order:
            op, _, axis, _ = CALLS[k]
            if op in registry.BACKWARD:
                results[k] = gradients.GRADIENTS[op](*inputs[k], axis=axis)
            else:
                results[k] = api.FUNCTIONS[op](inputs[k], axis=axis)
        cupy.cuda.get_current_stream().synchronize()
        return results

    with ThreadPoolExecutor(THREADS) as pool:
        every = [future.result() for future in [pool.submit(work, i) for i in range(THREADS)]]
    assert compiled and all(count == 1 for count in compiled.values()), compiled
    for results in every:
        for k, (op, _, axis, dtype) in enumerate(CALLS):
            if op in registry.BACKWARD:
                check_gradient(op, *inputs[k], results[k], dtype, axis)
            else:
                want = reference.REFERENCES[op](cupy.asnumpy(inputs[k]), axis)
                reference.assert_close(cupy.asnumpy(results[k]), want, dtype, op)


@pytest.mark.parametrize("shape, axis", [((64, 1000), -1), ((4, 300, 64), 1)], ids=["split_row_rows", "strided_columns"])
def test_remembered_calls_from_many_threads_at_once(rng, monkeypatch, shape, axis):
    # each thread remembers its own calls (a packed launch has its pointers written in just before it goes), so
    # threads repeating one shape at once each launch on their own inputs and outputs
    inputs = [[draw(rng, shape, numpy.float32) for _ in range(4)] for _ in range(THREADS)]
    api.softmax(inputs[0][0], axis=axis)  # the process's first call binds cupy.ndarray for the fast path
    cupy.cuda.Device().synchronize()
    start = threading.Barrier(THREADS)
    packed_calls, guard = Counter(), threading.Lock()
    launch = PackedLaunch.__call__

    def counted(self, *args):
        with guard:
            packed_calls[threading.get_ident()] += 1
        return launch(self, *args)

    monkeypatch.setattr(PackedLaunch, "__call__", counted)

    def work(i):
        start.wait()
        results = [api.softmax(x, axis=axis) for x in inputs[i] for _ in range(3)]
        cupy.cuda.get_current_stream().synchronize()
        assert len(api.remembered_calls()) == 1
        assert packed_calls[threading.get_ident()] == 11  # every call after the thread's first
        return results

    with ThreadPoolExecutor(THREADS) as pool:
        every = [future.result() for future in [pool.submit(work, i) for i in range(THREADS)]]
    for i, results in enumerate(every):
        for k, y in enumerate(results):
            x = inputs[i][k // 3]
            reference.assert_close(cupy.asnumpy(y), reference.softmax(cupy.asnumpy(x), axis), numpy.float32)
