"""softmax_backward() and log_softmax_backward(): dx from the forward's output y and the gradient dy.

The rules of softmax() (api.py) apply: every check on user input runs before
anything touches the GPU; rows are laid out as (M, N) views where the strides
allow, and a launch is planned once per shape and cached. One fused kernel
reads y and dy once and writes dx (warp_rows or split_row, their `_backward`
kernels): 3 * M * N * itemsize bytes; rows longer than a cluster holds take
two_pass's, which reads them twice (the second time mostly from L2), but for
log_softmax's gradient of rows split_row's grid holds (planner:
SPLIT_GRID_BACKWARD_ROW_THREADS).
"""
from __future__ import annotations

import numpy

from . import api, dtypes
from . import variants as registry


def softmax_backward(y, dy, axis=-1, *, out=None, variant: str = registry.AUTO):
    """dx = y * (dy - sum(dy * y)) over `axis`: the gradient of a loss through y = softmax(x, axis).

    y is softmax's output, dy the gradient of the loss by y; both CUDA arrays
    of one shape and one floating dtype, on one device (CuPy arrays, or
    anything with __cuda_array_interface__ or __dlpack__, viewed without a
    copy). axis: int, tuple of ints, or None, as in softmax. out: a
    cupy.ndarray of y's shape and dtype (it may be dy: the result goes through
    a temporary then). variant: "auto", "warp_rows", "split_row" or "two_pass". Sums
    accumulate in float32 (float64 for float64). A NaN in a row of y or dy
    makes that row of dx NaN.

    axis defaults to -1, the last axis, where softmax's defaults to None (all
    axes, as SciPy's): pass the axis the forward used.
    """
    return _backward(registry.SOFTMAX_BACKWARD, y, dy, axis, out, variant)


def log_softmax_backward(y, dy, axis=-1, *, out=None, variant: str = registry.AUTO):
    """dx = dy - exp(y) * sum(dy) over `axis`: the gradient of a loss through y = log_softmax(x, axis).

    The arguments and rules of softmax_backward, with y log_softmax's output.
    A NaN in dy makes its row of dx NaN (s is sum(dy)); a NaN in y only its own element.
    """
    return _backward(registry.LOG_SOFTMAX_BACKWARD, y, dy, axis, out, variant)


GRADIENTS = {registry.SOFTMAX_BACKWARD: softmax_backward, registry.LOG_SOFTMAX_BACKWARD: log_softmax_backward}


def check_pair(y_shape, y_dtype, dy_shape, dy_dtype) -> None:
    """ValueError / TypeError unless y and dy have one shape and one supported floating dtype."""
    dtypes.check(numpy.dtype(y_dtype))
    if tuple(y_shape) != tuple(dy_shape):
        raise ValueError(f"y has shape {tuple(y_shape)} and dy {tuple(dy_shape)}; they must be the same")
    if numpy.dtype(dy_dtype) != numpy.dtype(y_dtype):
        raise TypeError(f"y has dtype {numpy.dtype(y_dtype)} and dy {numpy.dtype(dy_dtype)}; they must be the same")


def same_misalignment(a2, b2) -> bool:
    """Every row of the (M, N) views a2 and b2 starts at the same offset from a 16-byte boundary."""
    return (a2.data.ptr - b2.data.ptr) % 16 == 0 and (a2.shape[0] == 1 or (a2.strides[0] - b2.strides[0]) % 16 == 0)


def _aligned_rows(cupy, a, m, n):
    """a as a C-contiguous (M, N) array that starts on a 16-byte boundary: `a` itself when it is one, else a copy.

    ascontiguousarray alone is not enough: a one-row view one element in is
    already contiguous and comes back as it is, misaligned.
    """
    a = cupy.ascontiguousarray(a)
    return (a if a.data.ptr % 16 == 0 else a.copy()).reshape(m, n)


def _backward(op, y, dy, axis, out, variant):
    """Validate, lay out y, dy and dx as rows, plan (cached), launch."""
    import cupy

    y, dy = api.as_cupy(y), api.as_cupy(dy)
    check_pair(y.shape, y.dtype, dy.shape, dy.dtype)
    axes = api.normalize_axes(axis, y.ndim)
    api.check_variant(variant)
    device_id = y.device.id
    if dy.device.id != device_id:
        raise ValueError(f"dy is on device {dy.device.id}; y is on device {device_id}")
    if out is not None:
        api.check_out(out, y.shape, y.dtype, device_id)
    with y.device:
        result = out if out is not None else cupy.empty(y.shape, y.dtype)
        if y.size == 0:
            return result
        trailing = tuple(range(y.ndim - len(axes), y.ndim))
        ys, dys, rs = (cupy.moveaxis(a, axes, trailing) for a in (y, dy, result))
        n = int(numpy.prod([y.shape[a] for a in axes], dtype=numpy.int64))
        m = y.size // n
        y2, dy2 = api.rows_view(ys, trailing), api.rows_view(dys, trailing)
        copied = y2 is None or dy2 is None or not same_misalignment(y2, dy2)  # the kernels pair y's and dy's chunks
        # planned before any copy: a variant that cannot serve raises with nothing launched. A
        # contiguous copy starts aligned; its rows are when they are whole 16-byte chunks (a
        # single row too, as api.rows_aligned counts it).
        aligned = n * y.itemsize % 16 == 0 if copied else api.rows_aligned(y2)
        dx2 = api.rows_view(rs, trailing)
        direct = dx2 is not None and (out is None or not (cupy.may_share_memory(out, y) or cupy.may_share_memory(out, dy)))
        # dx written in place, or to a fresh (aligned) array; whole-chunk rows of y, dy and dx take
        # warp_rows' twin on whole chunks (Planner.on_whole_chunks)
        dx_aligned = api.rows_aligned(dx2) if direct else n * y.itemsize % 16 == 0
        kernel, launch = api.plan(device_id, variant, m, n, (y.dtype, y.dtype), aligned, op, y_aligned=dx_aligned)
        if copied:
            y2, dy2 = (_aligned_rows(cupy, a, m, n) for a in (ys, dys))
        if not direct:
            dx2 = cupy.empty((m, n), y.dtype)
        strides = (a.strides[0] // a.itemsize for a in (y2, dy2, dx2))
        api.run(kernel, launch, (y2, dy2, dx2, m, n, *strides, *launch.args))
        if not direct:
            rs[...] = dx2.reshape(rs.shape)
    return result
