"""packed.PackedLaunch, no GPU needed: the kernelParams array it hands cuLaunchKernel, read back from memory as the
driver reads it (each slot at its argument's C type), and what it launches with; and that every argument the
planner gives a launch the remembered path may keep is one pack takes."""
import ctypes
import importlib.util

import numpy
import pytest

from cupysoftmax import api
from cupysoftmax.packed import PackedLaunch, pack
from cupysoftmax.planner import Planner

from fakes import H100
from test_planner import BF16, F32, fake_facts

needs_cupy = pytest.mark.skipif(importlib.util.find_spec("cupy") is None,
                                reason="PackedLaunch launches through cupy.cuda.driver")

# the remembered call of split_row's one-block kernel on a reversed view: rows, n, the two row strides (x's
# negative), the fused options (scale, no mask), then the launch's two int arguments
TAIL = (8, 1000, -1000, 1000, 1.0, 0, 0, 1, numpy.int32(3), numpy.int32(-2))
C_TYPES = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
           ctypes.c_double, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32]


class FakeFunction:
    ptr = 0xF00D


@needs_cupy
def test_the_driver_reads_each_argument_at_its_type_and_the_pointers_of_the_call():
    launch = PackedLaunch(FakeFunction(), 8, (128, 2), 4096, TAIL)
    seen = []
    launch._launch = lambda *args: seen.append(args)
    launch(0x7000_0000_0000, 0x7000_0001_0000, 42)
    (function, gx, gy, gz, bx, by, bz, smem, stream, params, extra), = seen
    assert (function, gx, gy, gz, bx, by, bz, smem, stream, extra) == (0xF00D, 8, 1, 1, 128, 2, 1, 4096, 42, 0)
    addresses = [ctypes.c_uint64.from_address(params + 8 * i).value for i in range(len(C_TYPES))]
    read = [c.from_address(a).value for c, a in zip(C_TYPES, addresses)]
    assert read == [0x7000_0000_0000, 0x7000_0001_0000, 8, 1000, -1000, 1000, 1.0, 0, 0, 1, 3, -2]


@needs_cupy
def test_a_second_call_rewrites_only_the_pointers():
    launch = PackedLaunch(FakeFunction(), 1, (32, 1), 0, TAIL)
    launch._launch = lambda *args: None
    launch(0x1000, 0x2000, 0)
    first = launch._values.copy()
    launch(0x3000, 0x4000, 0)
    assert list(launch._values[:2]) == [0x3000, 0x4000]
    assert (launch._values[2:] == first[2:]).all()


@pytest.mark.parametrize("value", [True, numpy.int64(3), numpy.float32(1.0), None], ids=repr)
def test_an_argument_it_cannot_pack_raises(value):
    # a bool goes as one byte, and the kernels take no numpy.int64, numpy.float32 or pointer given as None: what
    # the remembered path never passes is refused rather than guessed
    with pytest.raises(TypeError, match="cannot pack"):
        pack((8, value))


# auto's launches without a workspace (the ones a remembered call keeps), on the made-up H100: warp_rows, split_row
# in one block (plain and folded) and on clusters, registers
SHAPES = [(262144, 64, F32), (4096, 1000, F32), (8, 1000, F32), (4096, 4096, BF16), (128, 32000, F32),
          (8, 128256, F32), (32, 128256, BF16), (1, 50257, F32)]


@pytest.mark.parametrize("m, n, pair", SHAPES, ids=lambda v: str(v))
def test_the_planners_arguments_pack(m, n, pair):
    launch = Planner(H100).plan("auto", m, n, pair, fake_facts)
    assert not launch.workspace
    rows = numpy.empty((m, n), pair[0])  # shape and strides only: what api.row_args reads
    tail = api.row_args(launch, rows, rows)
    assert len(pack(tail)) == 2 + len(tail)
