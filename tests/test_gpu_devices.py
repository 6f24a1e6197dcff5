"""An array on the second GPU runs on that GPU, whichever device is current (needs two visible GPUs).

api.run, through which every launch but the remembered call's goes, is wrapped to record the device current at
each launch; the remembered call launches only for arrays on the current device.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import api, device, gradients, reference
from cupysoftmax import variants as registry
from test_gpu_gradients import check as check_gradient
from test_gpu_softmax import draw

cupy = pytest.importorskip("cupy")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(device.count() < 2, reason="needs two visible GPUs")]

SECOND = 1


@pytest.fixture
def launched_on(monkeypatch):
    """The device current at each launch through api.run."""
    devices, run = [], api.run

    def recorded(kernel, launch, args):
        devices.append(cupy.cuda.runtime.getDevice())
        run(kernel, launch, args)

    monkeypatch.setattr(api, "run", recorded)
    return devices


# (id naming the path): (op, shape, axis, keywords); where= is a mask on the second GPU
CASES = {
    "warp_rows_new_result": (registry.SOFTMAX, (64, 1000), -1, {}),
    "cast_then_rows": (registry.SOFTMAX, (64, 1000), -1, {"dtype": numpy.float16}),
    "split_row_cluster_log_softmax": (registry.LOG_SOFTMAX, (2, 50257), -1, {}),
    "strided_middle_axis": (registry.SOFTMAX, (4, 300, 64), 1, {}),
    "options_and_mask": (registry.SOFTMAX, (16, 3000), -1, {"scale": 2.0, "where": True}),
    "two_pass_workspace": (registry.SOFTMAX, (4, 5000), -1, {"variant": "two_pass"}),
}


@pytest.mark.parametrize("name", CASES)
def test_forward_on_the_second_gpu_runs_there(rng, launched_on, name):
    op, shape, axis, keywords = CASES[name]
    with cupy.cuda.Device(SECOND):
        x = draw(rng, shape, numpy.float32)
        if "where" in keywords:
            keywords = {**keywords, "where": cupy.asarray(rng.random(shape) < 0.6)}
    assert cupy.cuda.runtime.getDevice() != SECOND
    got = api.FUNCTIONS[op](x, axis, **keywords)
    assert got.device.id == SECOND and launched_on and set(launched_on) == {SECOND}
    where = keywords.get("where")
    want = reference.REFERENCES[op](cupy.asnumpy(x).astype(got.dtype), axis, scale=keywords.get("scale", 1.0),
                                    where=None if where is None else cupy.asnumpy(where))
    reference.assert_close(cupy.asnumpy(got), want, got.dtype, op)


@pytest.mark.parametrize("op", registry.BACKWARD)
def test_gradients_on_the_second_gpu_run_there(rng, launched_on, op):
    with cupy.cuda.Device(SECOND):
        y = api.FUNCTIONS[registry.SOFTMAX if op == registry.SOFTMAX_BACKWARD else registry.LOG_SOFTMAX](
            draw(rng, (8, 3000), numpy.float32), axis=-1)
        dy = draw(rng, (8, 3000), numpy.float32, scale=1.0)
    del launched_on[:]
    dx = gradients.GRADIENTS[op](y, dy)
    assert dx.device.id == SECOND and launched_on == [SECOND]
    check_gradient(op, y, dy, dx, numpy.float32)


def test_the_remembered_call_serves_the_second_gpu_when_current(rng):
    with cupy.cuda.Device(SECOND):
        for _ in range(2):  # the second call takes the remembered launch
            x = draw(rng, (64, 1000), numpy.float32)
            got = api.softmax(x, axis=-1)
            assert got.device.id == SECOND
            reference.assert_close(cupy.asnumpy(got), reference.softmax(cupy.asnumpy(x), -1), numpy.float32)
    x = draw(rng, (64, 1000), numpy.float32)  # the same shape on the current GPU after it: its own launch
    got = api.softmax(x, axis=-1)
    assert got.device.id == x.device.id != SECOND
    reference.assert_close(cupy.asnumpy(got), reference.softmax(cupy.asnumpy(x), -1), numpy.float32)
