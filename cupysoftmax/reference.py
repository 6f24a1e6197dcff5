"""NumPy float64 softmax with cupysoftmax's semantics, and the tolerance table.

The tests and the CLI's check both compare against `softmax` here with the
tolerance of the output dtype, so a result is judged one way everywhere.

Semantics (PyTorch and JAX agree): a row that holds a NaN or +inf, or only
-inf, is NaN throughout; empty input gives empty output.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy

from . import dtypes


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


TOLERANCES = {
    # half an ulp of output rounding (2**-11) plus float32 accumulation; atol one subnormal step
    dtypes.FLOAT16: Tolerance(rtol=2e-3, atol=6e-8),
    # half an ulp of output rounding (2**-8); atol covers CuPy's -ftz flush below 1.2e-38
    dtypes.BFLOAT16: Tolerance(rtol=1e-2, atol=1e-37),
    # float32 accumulation; the loosest case is naive's one-thread sum of a 50257-long row,
    # where terms below half an ulp of the running sum are lost: 0.87e-4 measured on the
    # H100 (8192 x 50257, normal x 3); atol covers -ftz as above
    dtypes.FLOAT32: Tolerance(rtol=2e-4, atol=1e-37),
    # float64 accumulation end to end; -ftz does not touch float64
    dtypes.FLOAT64: Tolerance(rtol=1e-10, atol=1e-300),
}


def tolerance(dtype) -> Tolerance:
    return TOLERANCES[numpy.dtype(dtype)]


def _axes(axis, ndim):
    return tuple(range(ndim)) if axis is None else axis


def softmax(x, axis=None) -> numpy.ndarray:
    """softmax of a NumPy array in float64 over `axis` (int, tuple or None = all axes)."""
    x = numpy.asarray(x).astype(numpy.float64)
    if x.size == 0:
        return x
    axes = _axes(axis, x.ndim)
    # numpy.max propagates NaN; +inf - +inf and -inf - -inf are NaN: the semantics above
    with numpy.errstate(invalid="ignore", over="ignore"):
        shifted = x - numpy.max(x, axis=axes, keepdims=True)
        e = numpy.exp(shifted)
        return e / numpy.sum(e, axis=axes, keepdims=True)


def error_ratio(actual, expected, dtype) -> float:
    """max |actual - expected| / (atol + rtol * |expected|): <= 1 passes.

    NaN must sit exactly where the reference has NaN; anything else is inf.
    """
    actual = numpy.asarray(actual).astype(numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if actual.shape != expected.shape:
        raise ValueError(f"shape {actual.shape} against reference {expected.shape}")
    nan_a, nan_e = numpy.isnan(actual), numpy.isnan(expected)
    if not numpy.array_equal(nan_a, nan_e):
        return numpy.inf
    if actual.size == 0 or nan_e.all():
        return 0.0
    tol = tolerance(dtype)
    keep = ~nan_e
    bound = tol.atol + tol.rtol * numpy.abs(expected[keep])
    return float(numpy.max(numpy.abs(actual[keep] - expected[keep]) / bound))


def assert_close(actual, expected, dtype) -> None:
    """AssertionError naming the worst element unless `actual` is within tolerance."""
    ratio = error_ratio(actual, expected, dtype)
    if ratio <= 1.0:
        return
    actual = numpy.asarray(actual).astype(numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    nan_mismatch = numpy.isnan(actual) != numpy.isnan(expected)
    if nan_mismatch.any():
        where = tuple(int(i) for i in numpy.argwhere(nan_mismatch)[0])
        raise AssertionError(f"NaN mismatch at {where}: got {actual[where]}, reference {expected[where]}")
    tol = tolerance(dtype)
    err = numpy.where(numpy.isnan(expected), 0, numpy.abs(actual - expected) / (tol.atol + tol.rtol * numpy.abs(expected)))
    where = numpy.unravel_index(int(numpy.nanargmax(err)), err.shape)
    raise AssertionError(
        f"{numpy.dtype(dtype).name} result off by {ratio:.3g} x tolerance (rtol={tol.rtol}, atol={tol.atol}) "
        f"at {tuple(int(i) for i in where)}: got {actual[where]!r}, reference {expected[where]!r}"
    )
