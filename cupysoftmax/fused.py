"""scale= and where=, the forward's fused options: checked, and laid out as the kernels take them.

softmax(x, scale=s, where=mask) is softmax(s * x) over the positions where
mask holds (JAX's `where=`): masked-out positions come out 0 (log_softmax:
-inf) and take no part in the max or the sum; a row masked out everywhere
comes out all 0 (all -inf). The kernels multiply by s in their own pass
(s * x rounded to the accumulation type) and read the mask as one byte per element, in place
when its rows can be addressed as row r -> mask row r % P (a mask broadcast
over leading axes, such as an attention mask of shape (1, 1, S, N) against
(B, H, S, N)), else through one contiguous copy of the broadcast mask. One
mask row for all rows of a large x whose rows are out of 16-byte phase goes
as a few copies of that row, one at each of x's rows' phases (phased).
Only the variants with `fused` in the registry take them.
"""
from __future__ import annotations

import math

import numpy

# The kernels' arguments for a call without options: scale, mask (a null
# pointer), mask row stride in bytes, mask rows.
PLAIN = (1.0, 0, 0, 1)


def is_plain(scale, where) -> bool:
    """Whether a call passes no option: the hot path's test, before any check."""
    return where is None and type(scale) is float and scale == 1.0


def check_scale(scale, accumulator=numpy.float64) -> float:
    """scale as a float; TypeError unless a real number, ValueError unless a normal number > 0 of `accumulator`.

    The kernels take scale in their accumulation type (float32 unless float64
    is involved), flushing subnormals: a scale below its smallest normal
    number would be 0 there, one above its largest inf.
    """
    if isinstance(scale, (bool, numpy.bool_)) or not isinstance(scale, (int, float, numpy.integer, numpy.floating)):
        raise TypeError(f"scale must be a real number; got {type(scale).__name__}")
    try:
        value = float(scale)
    except OverflowError:
        value = math.inf
    info = numpy.finfo(accumulator)
    if not (math.isfinite(value) and float(info.tiny) <= value <= float(info.max)):
        raise ValueError(f"scale must be finite and > 0 (softmax(scale * x), a temperature of 1 / scale), a normal "
                         f"{numpy.dtype(accumulator).name} number ({float(info.tiny):.3g} to {float(info.max):.3g}); "
                         f"got {scale!r}")
    return value


def check_where(where, shape, device_id) -> None:
    """TypeError / ValueError unless `where` (a CuPy array) is a boolean mask broadcastable to `shape` on the device."""
    if where.dtype != numpy.bool_:
        raise TypeError(f"where must be a boolean array; got dtype {where.dtype}")
    try:
        broadcast = numpy.broadcast_shapes(where.shape, tuple(shape))
    except ValueError:
        broadcast = None
    if broadcast != tuple(shape):
        raise ValueError(f"where has shape {where.shape}, which does not broadcast to the input's {tuple(shape)}")
    if where.device.id != device_id:
        raise ValueError(f"where is on device {where.device.id}; the input is on device {device_id}")


def mask_rows(where, shape, axes, m: int, n: int, rows_view):
    """(mask as a (P, N) array whose row r % P is row r's mask, P).

    x's rows are its moved axes' elements in C order, and so are the mask's;
    dropping outer axes leaves the innermost ones, so P divides M and row r
    of x takes row r % P. In place when, after dropping outer axes that the
    mask broadcasts over (stride 0), its rows have one stride and unit inner
    stride (`rows_view`, api's); otherwise one contiguous copy of the
    broadcast mask (P = M). Rows of stride 0 (one mask row for all) give P = 1.
    """
    import cupy

    k = len(axes)
    moved = cupy.moveaxis(cupy.broadcast_to(where, shape), axes, tuple(range(len(shape) - k, len(shape))))
    lead = moved.ndim - k
    for dropped in range(lead + 1):
        if dropped and moved.strides[dropped - 1] != 0 and moved.shape[dropped - 1] != 1:
            break  # an outer axis the mask does not broadcast over: its rows are not periodic
        sub = moved[(0,) * dropped]
        m2 = rows_view(sub, tuple(range(sub.ndim - k, sub.ndim)))
        if m2 is not None:
            return (m2[:1], 1) if m2.strides[0] == 0 else (m2, m2.shape[0])
    return cupy.ascontiguousarray(moved).reshape(m, n), m


def row_stride(mask) -> int:
    """A (mask (P, N), P) pair's row stride in bytes as the kernels take it: 0 for one mask row (P = 1), so that a
    kernel may address row r's mask as r strides on where P is 1 or M (direct)."""
    m2, period = mask
    return 0 if period == 1 else m2.strides[0]


def kernel_args(scale: float, mask) -> tuple:
    """The kernels' fused arguments for a scale and a (mask (P, N), P) pair or None."""
    if mask is None:
        return (scale, 0, 0, 1)
    m2, period = mask
    return (scale, m2, row_stride(mask), period)


def direct(mask, m: int, itemsize: int) -> bool:
    """Whether a (mask (P, N), P) pair (or None) is read row for row at x's 16-byte phase, as the kernels on whole
    chunks take it (warp_rows' O = 2): P is 1 or M, and every mask row starts on a boundary of the bytes of a
    16-byte chunk of x (16 / itemsize elements, one byte each)."""
    if mask is None:
        return True
    m2, period = mask
    chunk = 16 // itemsize
    return period in (1, m) and m2.data.ptr % chunk == 0 and row_stride(mask) % chunk == 0


# One mask row for all rows (P = 1) sits at one 16-byte phase, and x's rows take Q of them (row_phases: Q > 1 at a
# row stride that is not whole 16-byte chunks of x, and Q = 1 with every row off the mask's phase in a view one
# element into an aligned parent). Rows off the mask row's phase read it through kept_bytes (two or three aligned
# words a chunk where one or two do in phase, and funnel shifts), and split_row stages none of it with x's copies.
# From PHASED_FROM bytes of x and PHASED_FROM_ROWS rows, the row goes to the kernels as Q copies, copy p at x's row
# p's phase, so that row r's mask row r % Q is in phase (phased): one more launch, a few us. H200, 2026-11-29,
# where=(N,) as one row -> as Q copies, us (docs/perf/where-phased-rows-h200.txt): 4194304 x 63 float32 (1.06 GB)
# 1203 -> 1051, 2097152 x 255 bfloat16 (1.07 GB) 1606 -> 1495, 8192 x 50257 float32 (1.6 GB) 996 -> 925, bfloat16
# (823 MB) 528 -> 503; even near the bytes limit: 4096 x 32001 float32 (524 MB) 271 -> 269, 16384 x 8193 float32
# (537 MB) 264 -> 266; below it a loss: 4096 x 8191 float32 (134 MB) 69.0 -> 70.4, 256 x 50257 float16 (26 MB)
# 25.4 -> 29.2. Every shape measured had 4096 rows or more; fewer, longer rows (clusters of 16 and the grid's
# G > 1, which read every chunk's bytes through kept_bytes) are not measured and go as they come.
PHASED_FROM = 1 << 29
PHASED_FROM_ROWS = 4096


def row_phases(ptr: int, row_stride: int, itemsize: int) -> tuple[int, int]:
    """(Q, phase) of rows from data pointer `ptr` at `row_stride` bytes (negative too): the rows until their 16-byte
    phase repeats, and row 0's phase in elements (csm::misalignment's; row r's: (phase + r * stride) mod 16 /
    itemsize)."""
    chunk = 16 // itemsize
    return chunk // math.gcd(row_stride // itemsize, chunk), ptr // itemsize % chunk


def phased(mask, x2):
    """A (mask (P, N), P) pair (or None) for x's rows x2 (M, N): one row for all (P = 1) as Q copies at x2's rows'
    phases (PHASED_FROM above) where x2 holds PHASED_FROM bytes and PHASED_FROM_ROWS rows or more and some row is
    off the one row's phase; else `mask` itself. The copies' row stride is the least one of at least N elements at
    x2's row stride's phase, so any x2 row stride serves (negative, overlapping)."""
    (m, n), itemsize = x2.shape, x2.itemsize
    if mask is None or mask[1] != 1 or x2.nbytes < PHASED_FROM or m < PHASED_FROM_ROWS:
        return mask
    chunk = 16 // itemsize
    q, phase = row_phases(x2.data.ptr, x2.strides[0], itemsize)
    if q == 1 and mask[0].data.ptr % chunk == phase:
        return mask  # every row at the one row's phase already
    import cupy

    stride = n + (x2.strides[0] // itemsize - n) % chunk
    room = cupy.empty(q * stride + chunk, numpy.uint8)
    start = (phase - room.data.ptr) % chunk  # copy 0 at row 0's phase; copy p stride on, at row p's
    copies = room[start:start + q * stride].reshape(q, stride)[:, :n]
    copies[...] = mask[0][:1].view(numpy.uint8)  # the bytes as they are: nonzero = kept, whatever the value
    return copies.view(numpy.bool_), q
