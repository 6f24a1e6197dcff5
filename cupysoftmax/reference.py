"""NumPy float64 softmax and log_softmax with cupysoftmax's semantics, and the tolerance table.

The tests and the CLI's check both compare against the functions here with the
tolerance of the output dtype (and op), so a result is judged one way everywhere.

Semantics (PyTorch and JAX agree): a row that holds a NaN or +inf, or only
-inf, is NaN throughout; empty input gives empty output. log_softmax gives
-inf where x is -inf in any other row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy

from . import dtypes
from .variants import LOG_SOFTMAX, SOFTMAX


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


# log_softmax's outputs are about -10 .. 0, and the ones near 0 carry the
# absolute error of log(sum): float accumulation of the sum (relative 1e-6 or
# so) becomes an absolute error of that size, which no rtol covers there.
LOG_ATOL = {dtypes.FLOAT16: 1e-5, dtypes.BFLOAT16: 1e-5, dtypes.FLOAT32: 1e-5, dtypes.FLOAT64: 1e-12}


def tolerance(dtype, op: str = SOFTMAX) -> Tolerance:
    tol = TOLERANCES[numpy.dtype(dtype)]
    return tol if op == SOFTMAX else Tolerance(rtol=tol.rtol, atol=LOG_ATOL[numpy.dtype(dtype)])


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


def log_softmax(x, axis=None) -> numpy.ndarray:
    """log_softmax of a NumPy array in float64 over `axis`: x - max - log(sum(exp(x - max)))."""
    x = numpy.asarray(x).astype(numpy.float64)
    if x.size == 0:
        return x
    axes = _axes(axis, x.ndim)
    with numpy.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = x - numpy.max(x, axis=axes, keepdims=True)
        return shifted - numpy.log(numpy.sum(numpy.exp(shifted), axis=axes, keepdims=True))


REFERENCES = {SOFTMAX: softmax, LOG_SOFTMAX: log_softmax}


def error_ratio(actual, expected, dtype, op: str = SOFTMAX) -> float:
    """max |actual - expected| / (atol + rtol * |expected|): <= 1 passes.

    NaN and infinities must sit exactly where the reference has them; anything else is inf.
    """
    return _compare(actual, expected, dtype, op)[0]


def assert_close(actual, expected, dtype, op: str = SOFTMAX) -> None:
    """AssertionError naming the worst element unless `actual` is within tolerance."""
    ratio, actual, expected, err = _compare(actual, expected, dtype, op)
    if ratio <= 1.0:
        return
    where = tuple(int(i) for i in numpy.unravel_index(int(numpy.argmax(err)), err.shape))
    if not numpy.isfinite(actual[where]) or not numpy.isfinite(expected[where]):
        kind = "NaN" if numpy.isnan(actual[where]) or numpy.isnan(expected[where]) else "inf"
        raise AssertionError(f"{kind} mismatch at {where}: got {actual[where]}, reference {expected[where]}")
    tol = tolerance(dtype, op)
    raise AssertionError(
        f"{numpy.dtype(dtype).name} {op} off by {ratio:.3g} x tolerance (rtol={tol.rtol}, atol={tol.atol}) "
        f"at {where}: got {actual[where]!r}, reference {expected[where]!r}"
    )


def _compare(actual, expected, dtype, op):
    """(worst ratio, actual, expected, per-element ratios) in float64; a NaN or infinity out of place is inf."""
    actual = numpy.asarray(actual).astype(numpy.float64)
    expected = numpy.asarray(expected, dtype=numpy.float64)
    if actual.shape != expected.shape:
        raise ValueError(f"shape {actual.shape} against reference {expected.shape}")
    # A value past the output type's range is that type's infinity (a float16
    # log_softmax below -65520 is -inf)
    with numpy.errstate(over="ignore"):
        rounded = expected.astype(dtype).astype(numpy.float64)
    expected = numpy.where(numpy.isinf(rounded), rounded, expected)
    exact = ~numpy.isfinite(expected) | ~numpy.isfinite(actual)  # NaN and +-inf: the same, or wrong
    tol = tolerance(dtype, op)
    with numpy.errstate(invalid="ignore"):
        err = numpy.abs(actual - expected) / (tol.atol + tol.rtol * numpy.abs(expected))
        same = (actual == expected) | (numpy.isnan(actual) & numpy.isnan(expected))
    err = numpy.where(exact, numpy.where(same, 0.0, numpy.inf), err)
    return (float(err.max()) if err.size else 0.0), actual, expected, err
