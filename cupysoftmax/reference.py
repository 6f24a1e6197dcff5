"""NumPy float64 softmax and log_softmax (and their gradients) with cupysoftmax's semantics, and the tolerance table.

The tests and the CLI's check both compare against the functions here with the
tolerance of the output dtype (and op), so a result is judged one way everywhere.

Semantics (PyTorch and JAX agree): a row that holds a NaN or +inf, or only
-inf, is NaN throughout; empty input gives empty output. log_softmax gives
-inf where x is -inf in any other row. With scale= and where= (JAX's where=),
the row is scale * x over the kept positions only: a masked-out position gives
0 (log_softmax: -inf) whatever x holds there, a row masked out everywhere all 0.
scale * x is rounded to the accumulation type (float32, or float64 for float64
input), as softmax(x * scale) computed in that type would be: the kernels do so.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy

from . import dtypes
from .variants import LOG_SOFTMAX, LOG_SOFTMAX_BACKWARD, SOFTMAX, SOFTMAX_BACKWARD


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
# The longest row that float32's tolerance covers for a one-thread sequential sum (naive's):
# past it the sum loses more, which is naive's point, not a bug; checks skip naive there.
SEQUENTIAL_SUM_MOST_N = 50257


# log_softmax's outputs are about -10 .. 0, and the ones near 0 carry the
# absolute error of log(sum): float accumulation of the sum (relative 1e-6 or
# so) becomes an absolute error of that size, which no rtol covers there.
LOG_ATOL = {dtypes.FLOAT16: 1e-5, dtypes.BFLOAT16: 1e-5, dtypes.FLOAT32: 1e-5, dtypes.FLOAT64: 1e-12}


def tolerance(dtype, op: str = SOFTMAX) -> Tolerance:
    """The table's tolerance; log_softmax has its own atol. The gradients' rtol applies to gradient_scale."""
    tol = TOLERANCES[numpy.dtype(dtype)]
    return Tolerance(rtol=tol.rtol, atol=LOG_ATOL[numpy.dtype(dtype)]) if op == LOG_SOFTMAX else tol


def _axes(axis, ndim):
    return tuple(range(ndim)) if axis is None else axis


def softmax(x, axis=None, *, scale=1.0, where=None, dtype=None) -> numpy.ndarray:
    """softmax of a NumPy array in float64 over `axis` (int, tuple or None = all axes); dtype: the output's (as
    the API's dtype=), which with x's sets the accumulation type that scale * x is rounded to."""
    x, where = _scaled_and_masked(x, scale, where, dtype)
    if x.size == 0:
        return x
    axes = _axes(axis, x.ndim)
    # numpy.max propagates NaN; +inf - +inf and -inf - -inf are NaN: the semantics above
    with numpy.errstate(invalid="ignore", over="ignore"):
        shifted = x - numpy.max(x, axis=axes, keepdims=True)
        e = numpy.exp(shifted)
        result = e / numpy.sum(e, axis=axes, keepdims=True)
    return result if where is None else numpy.where(where, result, 0.0)


def log_softmax(x, axis=None, *, scale=1.0, where=None, dtype=None) -> numpy.ndarray:
    """log_softmax of a NumPy array in float64 over `axis`: x - max - log(sum(exp(x - max))); dtype as softmax's."""
    x, where = _scaled_and_masked(x, scale, where, dtype)
    if x.size == 0:
        return x
    axes = _axes(axis, x.ndim)
    with numpy.errstate(invalid="ignore", over="ignore", divide="ignore"):
        shifted = x - numpy.max(x, axis=axes, keepdims=True)
        result = shifted - numpy.log(numpy.sum(numpy.exp(shifted), axis=axes, keepdims=True))
    return result if where is None else numpy.where(where, result, -numpy.inf)


def _scaled_and_masked(x, scale, where, dtype=None):
    """(scale * x, rounded to the accumulation type, in float64 with -inf at masked-out positions; the mask
    broadcast to x or None)."""
    x = numpy.asarray(x)
    out = numpy.dtype(dtype or x.dtype)
    if (x.dtype, out) not in dtypes.PAIRS:  # the API casts x to the output type first (float32 in, float16 out)
        x = x.astype(out)
    accumulate = dtypes.accumulator((x.dtype, out))
    x = (x.astype(accumulate) * accumulate.type(scale)).astype(numpy.float64)
    if where is None:
        return x, None
    where = numpy.broadcast_to(numpy.asarray(where, dtype=bool), x.shape)
    return numpy.where(where, x, -numpy.inf), where


REFERENCES = {SOFTMAX: softmax, LOG_SOFTMAX: log_softmax}


def softmax_backward(y, dy, axis=-1) -> numpy.ndarray:
    """dx = y (dy - sum(dy y)) over `axis`, in float64: the gradient through softmax's output y."""
    y, dy = _as64(y), _as64(dy)
    return y * (dy - numpy.sum(dy * y, axis=_axes(axis, y.ndim), keepdims=True))


def log_softmax_backward(y, dy, axis=-1) -> numpy.ndarray:
    """dx = dy - exp(y) sum(dy) over `axis`, in float64: the gradient through log_softmax's output y."""
    y, dy = _as64(y), _as64(dy)
    return dy - numpy.exp(y) * numpy.sum(dy, axis=_axes(axis, y.ndim), keepdims=True)


GRADIENTS = {SOFTMAX_BACKWARD: softmax_backward, LOG_SOFTMAX_BACKWARD: log_softmax_backward}


def gradient_scale(y, dy, op: str, axis=-1) -> numpy.ndarray:
    """What a float computation of dx can be off by, per element, in units of its precision.

    softmax: |y| (|dy| + sum |dy y|); log_softmax: |dy| + exp(y) sum |dy|.
    The sums carry the rounding of s, which cancels in dy - s; compare
    gradients with `assert_close(..., scale=gradient_scale(...))`.
    """
    y, dy = _as64(y), _as64(dy)
    axes = _axes(axis, y.ndim)
    if op == SOFTMAX_BACKWARD:
        return numpy.abs(y) * (numpy.abs(dy) + numpy.sum(numpy.abs(dy * y), axis=axes, keepdims=True))
    return numpy.abs(dy) + numpy.exp(y) * numpy.sum(numpy.abs(dy), axis=axes, keepdims=True)


def _as64(a) -> numpy.ndarray:
    return numpy.asarray(a).astype(numpy.float64)


def error_ratio(actual, expected, dtype, op: str = SOFTMAX, scale=None) -> float:
    """max |actual - expected| / (atol + rtol * scale): <= 1 passes; scale is |expected| unless given.

    NaN and infinities must sit exactly where the reference has them; anything else is inf.
    """
    return _compare(actual, expected, dtype, op, scale)[0]


def assert_close(actual, expected, dtype, op: str = SOFTMAX, scale=None) -> None:
    """AssertionError naming the worst element unless `actual` is within tolerance (see error_ratio)."""
    ratio, actual, expected, err = _compare(actual, expected, dtype, op, scale)
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


def _compare(actual, expected, dtype, op, scale=None):
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
        size = numpy.abs(expected) if scale is None else numpy.asarray(scale, dtype=numpy.float64)
        err = numpy.abs(actual - expected) / (tol.atol + tol.rtol * size)
        same = (actual == expected) | (numpy.isnan(actual) & numpy.isnan(expected))
    err = numpy.where(exact, numpy.where(same, 0.0, numpy.inf), err)
    return (float(err.max()) if err.size else 0.0), actual, expected, err
