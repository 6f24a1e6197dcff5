"""Shared fixtures: the gpu marker's skip, the fuzz marker's (the long run only when asked), fresh random numbers."""
from __future__ import annotations

import secrets

import numpy
import pytest

from cupysoftmax import device


def pytest_collection_modifyitems(config, items):
    if "fuzz" not in config.getoption("markexpr", ""):
        long_run = pytest.mark.skip(reason="the long fuzz run: select it with `pytest -m fuzz`")
        for item in items:
            if "fuzz" in item.keywords:
                item.add_marker(long_run)
    if device.count() > 0:
        return
    try:
        import cupy  # noqa: F401

        why = "no CUDA device is visible"
    except ImportError:
        why = "CuPy is not installed"
    skip = pytest.mark.skip(reason=f"gpu test: {why} (run `pytest -m gpu` on a machine with a GPU)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    """A NumPy generator with a fresh seed per test; the seed is printed so a failure can be replayed."""
    seed = secrets.randbits(63)
    print(f"random seed {seed}")
    return numpy.random.default_rng(seed)
