"""Time cupysoftmax's API calls in the tree on PYTHONPATH: shapes of any rank, any axis, the forward ops and the
gradients. Each call is checked against the float64 reference on a NaN-poisoned output (the gradients with the
tests' scale, reference.gradient_scale), then timed with bench.interleaved_ms against a copy of the same moved
bytes (2 x the array's for the forward ops, 3 x for the gradients). One line a case: the case, us, % of copy and
the error ratio (<= 1 passes). Run it in two trees in turn for an A/B of calls that ab_trees.py cannot express
(ab_trees.py times rows through the CLI):

    PYTHONPATH=OLD python3 scripts/time_calls.py CASE ...; PYTHONPATH=NEW python3 scripts/time_calls.py CASE ...

CASE: op:shape:dtype[:axisA], e.g. softmax:8192x8192:float32:axis0 or softmax_backward:8192x50257:bfloat16
(axis -1 where left out). The inputs are drawn from a fixed seed, so two trees get the same ones. The gradients
over another axis than the last go through a copy (gradients.py), which the % of copy does not count.
"""
import sys

import cupy
import numpy

import cupysoftmax
from cupysoftmax import bench, dtypes, reference
from cupysoftmax import variants as registry

SEED = 45  # the same inputs in each tree


def parse(case):
    """(op, shape, dtype, axis) from op:shape:dtype[:axisA]."""
    op, shape, name, *rest = case.split(":")
    if op not in registry.FORWARD and op not in registry.BACKWARD:
        raise SystemExit(f"{case}: op must be one of {', '.join((*registry.FORWARD, *registry.BACKWARD))}")
    axis = int(rest[0].removeprefix("axis")) if rest else -1
    return op, tuple(int(s) for s in shape.split("x")), dtypes.parse(name), axis


def drawn(rng, shape, dtype, scale):
    return cupy.asarray(rng.standard_normal(shape, dtype=numpy.float32) * scale).astype(dtype)


def prepared(op, shape, dtype, axis, rng):
    """(the call, the moved bytes, its error ratio after one call on a poisoned output)."""
    x = drawn(rng, shape, dtype, 3.0)
    out = cupy.full(shape, numpy.nan, dtype=dtype)
    if op in registry.FORWARD:
        f = getattr(cupysoftmax, op)
        call = lambda: f(x, axis=axis, out=out)  # noqa: E731
        expected, scale, moved = getattr(reference, op)(cupy.asnumpy(x), axis), None, 2 * x.nbytes
    else:
        y = getattr(cupysoftmax, registry.FORWARD_OF[op])(x, axis=axis)
        dy = drawn(rng, shape, dtype, 1.0)
        f = getattr(cupysoftmax, op)
        call = lambda: f(y, dy, axis=axis, out=out)  # noqa: E731
        y_host, dy_host = cupy.asnumpy(y), cupy.asnumpy(dy)
        expected = getattr(reference, op)(y_host, dy_host, axis)
        scale, moved = reference.gradient_scale(y_host, dy_host, op, axis), 3 * x.nbytes
    call()
    cupy.cuda.Device().synchronize()
    return call, moved, reference.error_ratio(cupy.asnumpy(out), expected, dtype, op, scale)


def main(cases):
    rng = numpy.random.default_rng(SEED)
    for case in cases:
        op, shape, dtype, axis = parse(case)
        call, moved, err = prepared(op, shape, dtype, axis, rng)
        t = bench.interleaved_ms({"copy": bench.copy_call(moved // 2), "call": call}, repeat=30, rounds=3)
        failed = [f"{label}: {ms!r}" for label, ms in t.items() if not isinstance(ms, float)]
        if failed:
            print(f"{case:44s} FAILED {'; '.join(failed)}", flush=True)
        else:
            print(f"{case:44s} {t['call'] * 1e3:8.1f} us {t['copy'] / t['call']:6.1%} err {err:.2f}", flush=True)
        del call  # (it holds the case's arrays)
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    main(sys.argv[1:])
