"""The driver calls CuPy does not wrap (cupysoftmax/driver.py): failures named, on a stand-in library; and which
launches ask it (api._active_clusters)."""
import ctypes

import pytest

from cupysoftmax import api, driver
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch


def test_a_missing_driver_library_is_named_with_the_names_tried(monkeypatch):
    monkeypatch.setattr(driver, "LIBRARIES", ("libcuda-missing.so.0",))
    driver.library.cache_clear()
    try:
        with pytest.raises(OSError, match="no CUDA driver library found .tried libcuda-missing.so.0"):
            driver.library()
    finally:
        driver.library.cache_clear()


class _Library:
    def __init__(self, result):
        self.result = result

    def cuCtxResetPersistingL2Cache(self):  # noqa: N802 - the driver's names
        return self.result

    def cuOccupancyMaxActiveClusters(self, count, function, config):  # noqa: N802
        config = config._obj
        self.asked = (function.value, tuple(config.grid), tuple(config.block), config.smem, config.num_attrs)
        count._obj.value = 21
        return self.result


class _OldLibrary:  # a driver before cuOccupancyMaxActiveClusters
    pass


@pytest.mark.parametrize("result", [0, driver.NOT_SUPPORTED])
def test_resetting_persisting_lines_passes_where_the_gpu_keeps_none(monkeypatch, result):
    monkeypatch.setattr(driver, "library", lambda: _Library(result))
    driver.reset_persisting_l2()


def test_resetting_persisting_lines_names_a_driver_failure(monkeypatch):
    monkeypatch.setattr(driver, "library", lambda: _Library(201))  # CUDA_ERROR_INVALID_CONTEXT
    with pytest.raises(RuntimeError, match="cuCtxResetPersistingL2Cache failed with CUresult 201"):
        driver.reset_persisting_l2()


def test_the_cluster_count_is_the_drivers_for_the_launch_described(monkeypatch):
    fake = _Library(0)
    monkeypatch.setattr(driver, "library", lambda: fake)
    assert driver.active_clusters(0x1000, 16, (32, 8), 65536) == 21
    assert fake.asked == (0x1000, (16, 1, 1), (32, 8, 1), 65536, 0)


def test_the_launch_config_has_the_drivers_layout():
    # CUlaunchConfig (cuda.h): gridDim[3], blockDim[3], sharedMemBytes (unsigned), hStream, attrs, numAttrs
    config = driver._LaunchConfig
    offsets = [getattr(config, name).offset for name in ("grid", "block", "smem", "stream", "attrs", "num_attrs")]
    assert offsets == [0, 12, 24, 32, 40, 48] and ctypes.sizeof(config) == 56


def test_a_driver_without_the_cluster_query_is_named(monkeypatch):
    monkeypatch.setattr(driver, "library", lambda: _OldLibrary())
    with pytest.raises(RuntimeError, match="no cuOccupancyMaxActiveClusters"):
        driver.active_clusters(0x1000, 16, (32, 8), 65536)


def test_a_failed_cluster_count_names_the_driver_result(monkeypatch):
    monkeypatch.setattr(driver, "library", lambda: _Library(1))  # CUDA_ERROR_INVALID_VALUE
    with pytest.raises(RuntimeError, match="cuOccupancyMaxActiveClusters failed with CUresult 1"):
        driver.active_clusters(0x1000, 16, (32, 8), 65536)


@pytest.mark.parametrize("launch, op", [
    (Launch("online", (), 60, 128, 0), registry.SOFTMAX),  # no knobs (the GPU test that found this crashed here)
    (Launch("split_row", (1,), 8192, 1024, 0), registry.SOFTMAX_BACKWARD),  # one block a row: no clusters
    (Launch("split_row", (4,), 4 * 8192, 512, 0), registry.SOFTMAX)],  # clusters, but the forward does not loop
    ids=["online_no_knobs", "split_row_one_block", "split_row_forward"])
def test_only_looping_cluster_launches_ask_the_driver(monkeypatch, launch, op):
    monkeypatch.setattr(driver, "library", lambda: pytest.fail("asked the driver"))
    assert api._active_clusters(None, launch, op) == 0
