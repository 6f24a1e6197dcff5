"""Probe: where the host time of cupysoftmax.softmax(x) goes (8 x 1000 float32, the suite's host-cost shape).

Loops timed as suite.host_cost times them (suite.fastest_us: each loop's fastest of
interleaved rounds, microseconds a call):
- raw: a bare RawKernel launch of an empty kernel (the target's unit);
- floor: the result allocated (cupy.ndarray) plus an empty six-argument launch through RawKernel (the suite's
  floor until 2026-11-24);
- alloc, alloc_raw: the allocation alone, and with the bare launch (the suite's floor since);
- cupy_args: allocation plus auto's kernel for the shape launched through its Function (CuPy converts its 12
  arguments), as the remembered call launched before packed.PackedLaunch;
- packed_empty, packed: allocation plus a PackedLaunch (arguments packed once, the two pointers written in per
  call, cuLaunchKernel) of an empty kernel of the same signature and of auto's kernel;
- key: the remembered call's key built and looked up, nothing launched;
- softmax, softmax_out: the function itself, without and with out=.
Every launch of auto's kernel is checked first: its result must equal the function's, bit for bit.

    PYTHONPATH=$PWD python3 scripts/probe_host_path.py
"""
import sys

import cupy
import numpy

from cupysoftmax import api, dtypes, suite
from cupysoftmax import variants as registry
from cupysoftmax.packed import PackedLaunch

REPEAT, ROUNDS = 2000, 5
C_TYPES = {int: "long long", float: "double", numpy.int32: "int"}


def empty_kernel(name: str, args) -> cupy.RawKernel:
    """An empty kernel taking two float pointers and then parameters of `args`' types."""
    params = ", ".join(f"{C_TYPES[type(a)]} a{i}" for i, a in enumerate(args))
    return cupy.RawKernel(f'extern "C" __global__ void {name}(const float* x, float* y, {params}) {{}}', name)


def main() -> int:
    x = cupy.random.standard_normal((8, 1000), dtype=numpy.float32)
    y = cupy.empty_like(x)
    pair = (dtypes.FLOAT32, dtypes.FLOAT32)
    kernel, launch = api.plan(cupy.cuda.Device().id, "auto", 8, 1000, pair, True, registry.SOFTMAX, y_aligned=True)
    tail = api.row_args(launch, x, y)
    grid, block = (launch.grid,), (launch.block, launch.block_y)
    print(f"auto: {launch.variant} {launch.knobs} grid {grid} block {block} smem {launch.smem}; arguments after x "
          f"and y: {', '.join(f'{a!r}' for a in tail)}")
    noop = cupy.RawKernel(r'extern "C" __global__ void noop(float* p) {}', "noop")
    six = (8, 1000, 1000, 1000)
    noop6 = empty_kernel("noop6", six)
    same = empty_kernel("same", tail)
    packed_empty = PackedLaunch(same.kernel, launch.grid, block, launch.smem, tail)
    packed = PackedLaunch(kernel.kernel, launch.grid, block, launch.smem, tail)

    def through_cupy():
        out = cupy.ndarray(x.shape, x.dtype)
        kernel.kernel(grid, block, (x, out, *tail), shared_mem=launch.smem)
        return out

    def through(packed_launch):
        def call():
            out = cupy.ndarray(x.shape, x.dtype)
            packed_launch(x.data.ptr, out.data.ptr, cupy.cuda.get_current_stream().ptr)
            return out
        return call

    for _ in range(2):  # the first call binds what the remembered path checks against, the second is remembered
        want = api.softmax(x, axis=-1)
    wrong = [name for name, fn in (("cupy_args", through_cupy), ("packed", through(packed))) if not (fn() == want).all()]
    print("results equal to the function's:", "all" if not wrong else f"NOT {wrong}")

    def key_only():
        k = (x.shape, x.strides, x.dtype, -1, "auto", x.data.device_id, x.data.ptr % 16 == 0, None, "softmax")
        return api.remembered_calls().get(k) is not None and x.data.device_id == cupy.cuda.runtime.getDevice()

    loops = {
        "raw": lambda: noop((1,), (1,), (x,)),
        "floor": lambda: noop6((1,), (1,), (x, cupy.ndarray(x.shape, x.dtype), *six)),
        "alloc": lambda: cupy.ndarray(x.shape, x.dtype),
        "alloc_raw": lambda: noop((1,), (1,), (cupy.ndarray(x.shape, x.dtype),)),
        "cupy_args": through_cupy,
        "packed_empty": through(packed_empty),
        "packed": through(packed),
        "key": key_only,
        "softmax": lambda: api.softmax(x, axis=-1),
        "softmax_out": lambda: api.softmax(x, axis=-1, out=y),
    }
    assert key_only(), "the probe's key is not the remembered call's"
    best = suite.fastest_us(loops, REPEAT, ROUNDS)
    for name, us in best.items():
        print(f"{name:<12} {us:6.2f} us  {us / best['raw']:5.2f} x raw")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
