"""api.run's workspaces, no GPU needed: what it zeroes and what it passes after a launch's arguments, by whether the
launch is tagged (split_row's grid: csm::GridBoard) and whether the stream is capturing. CuPy's allocation, stream
and kernel are stood in for, so the test reads the calls api.run makes."""
import importlib.util

import numpy
import pytest

from cupysoftmax import api
from cupysoftmax.planner import Launch

pytestmark = pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="api.run imports cupy")


class Memory:
    def __init__(self, calls):
        self.calls = calls

    def memset_async(self, value, size):
        self.calls.append(("memset", value, size))


class Workspace:
    def __init__(self, calls, size):
        calls.append(("empty", size))
        self.data = Memory(calls)


class Stream:
    def __init__(self, capturing):
        self.capturing = capturing

    def is_capturing(self):
        return self.capturing


class Kernel:
    def __init__(self, calls):
        self.calls = calls
        self.kernel = self  # api.run launches a cooperative kernel through RawKernel's .kernel

    def __call__(self, grid, block, args, **options):
        self.calls.append(("launch", args, options))


@pytest.fixture
def calls(monkeypatch):
    import cupy

    seen = []
    monkeypatch.setattr(cupy, "empty", lambda size, dtype: Workspace(seen, size))
    return seen


def capturing(monkeypatch, value):
    import cupy

    monkeypatch.setattr(cupy.cuda, "get_current_stream", lambda: Stream(value))


GRID = Launch("split_row", (8, 1, -1), 512, 256, 0, workspace=4096 + 32 * 128 * 8, unit=16, tagged=4096)
TWO_PASS = Launch("two_pass", (1,), 528, 512, 0, workspace=64 * 88 * 8 + 64 * 4)


def test_a_tagged_launch_zeroes_nothing_and_gets_a_fresh_tag_after_its_workspace(monkeypatch, calls):
    capturing(monkeypatch, False)
    api.run(Kernel(calls), GRID, ("x", "y"))
    api.run(Kernel(calls), GRID, ("x", "y"))
    assert [c[0] for c in calls] == ["empty", "launch", "empty", "launch"]  # no memset
    (*_, first), (*_, second) = calls[1][1], calls[3][1]
    assert isinstance(first, numpy.uint64) and 0 < first < second  # never 0 (a zeroed tag), never repeated
    assert isinstance(calls[1][1][2], Workspace) and calls[1][2]["enable_cooperative_groups"]


def test_under_capture_a_tagged_launch_zeroes_its_tags_alone(monkeypatch, calls):
    capturing(monkeypatch, True)
    api.run(Kernel(calls), GRID, ("x", "y"))
    assert calls[:2] == [("empty", GRID.workspace), ("memset", 0, GRID.tagged)]  # a replay reuses the tag
    assert isinstance(calls[2][1][-1], numpy.uint64)


@pytest.mark.parametrize("capture", [False, True], ids=["not_capturing", "capturing"])
def test_an_untagged_workspace_is_zeroed_whole_and_nothing_follows_it(monkeypatch, calls, capture):
    capturing(monkeypatch, capture)
    api.run(Kernel(calls), TWO_PASS, ("x", "y"))
    assert calls[:2] == [("empty", TWO_PASS.workspace), ("memset", 0, TWO_PASS.workspace)]
    assert isinstance(calls[2][1][-1], Workspace)
