"""packed.PackedLaunch, no GPU needed: the kernelParams array it hands cuLaunchKernel, read back from memory as the
driver reads it (each slot at its argument's C type), and what it launches with."""
import ctypes

import numpy
import pytest

from cupysoftmax.packed import PackedLaunch, pack

pytest.importorskip("cupy")  # PackedLaunch launches through cupy.cuda.driver

# the remembered call of split_row's one-block kernel on a reversed view: rows, n, the two row strides (x's
# negative), the fused options (scale, no mask), then the launch's two int arguments
TAIL = (8, 1000, -1000, 1000, 1.0, 0, 0, 1, numpy.int32(3), numpy.int32(-2))
C_TYPES = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
           ctypes.c_double, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32]


class FakeFunction:
    ptr = 0xF00D


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
    # CuPy passes these at other widths (a bool as one byte, numpy scalars at their own size): not guessed
    with pytest.raises(TypeError, match="cannot pack"):
        pack((8, value))
