"""The timing engine on a GPU: the gate keeps host launch time out, and fails loudly when a call waits on it."""
import time

import cupy
import numpy
import pytest

from cupysoftmax import bench, driver

pytestmark = pytest.mark.gpu


def test_gated_time_leaves_host_time_out():
    # 2 ms of host work before a tiny launch: ungated the timed region would
    # hold that wait, gated it holds the device's work only
    x = cupy.ones(1024, numpy.float32)

    def slow_host_launch():
        time.sleep(0.002)
        x.fill(2)

    assert bench.median_ms(slow_host_launch, repeat=5, warmup=1) < 1.0
    slow_host_launch.syncs_host = True
    assert bench.median_ms(slow_host_launch, repeat=5, warmup=1) > 1.5


def test_a_call_that_waits_on_the_device_fails_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(bench, "GATE_TIMEOUT_S", 0.2)

    def waits():
        cupy.cuda.get_current_stream().synchronize()

    with pytest.raises(RuntimeError, match="syncs_host"):
        bench.median_ms(waits, repeat=2, warmup=1)
    assert bench.median_ms(lambda: cupy.ones(16), repeat=3, warmup=1) > 0  # the stream works again


def test_the_flush_returns_persisting_l2_lines_to_normal_before_it_evicts(monkeypatch):
    # lines torch.compile's kernels leave persisting outlive a plain write and read (docs/perf/peer-l2-h100.txt)
    flush = bench.Flush(1 << 20)
    steps = []
    reset = driver.reset_persisting_l2
    monkeypatch.setattr(driver, "reset_persisting_l2", lambda: steps.append("reset") or reset())
    monkeypatch.setattr(flush, "_written", _Recording(flush._written, steps))
    flush()
    cupy.cuda.get_current_stream().synchronize()
    assert steps == ["reset", "write"]


class _Recording:
    """The flush's write buffer, noting when fill is queued."""

    def __init__(self, array, steps):
        self._array, self._steps = array, steps

    def fill(self, value):
        self._steps.append("write")
        self._array.fill(value)
