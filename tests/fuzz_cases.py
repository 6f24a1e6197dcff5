"""What the fuzz tests draw: an op, a dtype, a shape aimed at one planner path, a layout, values, scale= and where=.

`cases()` is the hypothesis strategy; `host_arrays(case)` builds x (and the
mask) on the host, as NumPy arrays laid out as the case says. Only NumPy here:
test_fuzz_cases checks the cases and the reference's semantics on them on
the CPU, test_gpu_fuzz runs them on the GPU against the reference.

A case's values are rows (the softmax axes' elements, in C order, for each
position of the other axes) of kinds drawn per row: normal, wide (exp
underflows, -ftz flushes), offset by +-1e4, huge, subnormal, half -inf, all
-inf, one NaN, one +inf. Elements of x outside the view, and masked-out
elements, hold NaN: a kernel that reads them spoils its row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import ml_dtypes
import numpy
from hypothesis import strategies as st

from cupysoftmax import dtypes
from cupysoftmax import variants as registry

OPS = (*registry.FORWARD, *registry.BACKWARD)
DTYPES = (dtypes.FLOAT16, dtypes.BFLOAT16, dtypes.FLOAT32, dtypes.FLOAT64)

# Rows over the last axis, by the planner path auto takes on the H100 (test_fuzz_cases checks each on
# fakes.H100): (fewest, most) 16-byte chunks a row spans, aligned or not, and the most rows drawn.
ROW_PATHS = {
    "warp_rows_sub_warp": (1, 31, 300),  # fewer than 32 lanes a row, several rows a warp
    "warp_rows_full_warp": (33, 127, 100),  # 32 lanes a row
    "split_row_block": (129, 4095, 40),  # one block a row (to 256 chunks warp_rows: float32 and float64 softmax without options, float32 with scale= alone on whole chunks)
    "split_row_cluster": (4097, 40000, 3),  # a cluster of blocks a row
    # past a cluster of 16 blocks: split_row on the grid (forward ops of 2- and 4-byte types), else two passes
    "past_a_cluster": (131073, 140000, 2),
}
# A middle axis of an (outer, N, inner) array, read in place by strided or strided_smem: (fewest, most) N, most
# outer, most inner.
COLUMN_PATHS = {
    "strided_one_block": (1, 384, 6, 200),  # a column in one block, in every dtype
    # past one block of registers (896 float32 rows at 70 registers, 1024 at most): strided_smem where rows keep
    # one 16-byte phase, else strided's cluster
    "strided_cluster": (1025, 4000, 2, 40),
}
OTHER_AXES = "other_axes"  # axes (0, 2) of three (not one run: rows through one contiguous copy), or all axes
PATHS = (*ROW_PATHS, *COLUMN_PATHS, OTHER_AXES)
ELEMENTS = 2**18  # rows are cut to about this many elements (a row stays whole): milliseconds an example

KINDS = ("normal", "wide", "offset", "huge", "tiny", "half_neg_inf", "all_neg_inf", "nan", "pos_inf")
SPOILING = ("all_neg_inf", "nan", "pos_inf")  # a row of these kinds is NaN (where no mask hides the value)
SCALES = (1.0, 0.375, 2.5)  # scale= (forward only); 1.0 takes the plain path
# How the mask reaches the kernels (forward only): a full mask (its first row masked out everywhere), a view
# one element in (misaligned), one row for all rows, the last axes broadcast over the first, a column
# broadcast along the rows (one contiguous copy).
MASKS = (None, "full", "misaligned", "one_row", "leading", "column")
# How x sits in memory: a view function and the shape of the array it views.
LAYOUTS = ("contiguous", "offset", "reversed", "stepped", "transposed")
OUTS = ("new", "poisoned", "offset", "in_place")  # out=None, out= fresh or a view one element in, out=x (or dy)


@dataclass(frozen=True)
class Case:
    path: str
    op: str
    dtype: numpy.dtype
    out_dtype: numpy.dtype  # dtype= (float32 for a half-precision input: the mixed kernel) or the input's
    shape: tuple
    axis: object
    layout: tuple  # (LAYOUTS entry, the axis it steps or reverses)
    dy_layout: tuple  # the gradients' dy, likewise (y takes `layout`): misaligned against y, or not
    out: str
    kinds: tuple  # the value kinds rows are drawn from
    scale: float
    mask: str | None
    seed: int  # NumPy's generator for the values
    order: tuple  # the variants in the order tried for "a variant that serves" (see test_gpu_fuzz)


def axes_of(case) -> tuple:
    """The case's softmax axes, sorted and non-negative."""
    ndim = len(case.shape)
    items = range(ndim) if case.axis is None else (case.axis if isinstance(case.axis, tuple) else (case.axis,))
    return tuple(sorted(a % ndim for a in items))


@st.composite
def cases(draw, ops=OPS):
    op = draw(st.sampled_from(ops))
    dtype = draw(st.sampled_from(DTYPES))
    path = draw(st.sampled_from(PATHS))
    per_chunk = 16 // dtype.itemsize
    if path in ROW_PATHS:
        fewest, most, rows = ROW_PATHS[path]
        n = draw(st.integers(fewest, most)) * per_chunk - draw(st.integers(0, per_chunk - 1))
        batch = draw(st.sampled_from((1, 2, 3)))
        m = max(1, min(draw(st.integers(1, rows)), ELEMENTS // (n * batch)))
        shape = (m, n) if batch == 1 else (batch, m, n)
        axis = draw(st.sampled_from((-1, len(shape) - 1)))
        layout = (draw(st.sampled_from(LAYOUTS)), len(shape) - 2)  # rows stepped or reversed; "offset": the last axis
    elif path in COLUMN_PATHS:
        fewest, most, outer, inner = COLUMN_PATHS[path]
        n, outer, inner = draw(st.integers(fewest, most)), draw(st.integers(1, outer)), draw(st.integers(2, inner))
        shape, axis = ((n, inner), 0) if outer == 1 and draw(st.booleans()) else ((outer, n, inner), -2)
        kind = draw(st.sampled_from(("contiguous", "offset", "reversed", "stepped")))
        layout = (kind, 0 if kind == "reversed" else axis % len(shape))  # outer reversed, the axis stepped
    else:
        shape = tuple(draw(st.lists(st.integers(1, 24), min_size=3, max_size=3)))
        axis = draw(st.sampled_from(((0, 2), None)))
        layout = (draw(st.sampled_from(LAYOUTS)), 1)
    dy_layout = (draw(st.sampled_from(LAYOUTS)), layout[1]) if layout[0] != "transposed" else layout
    forward = op in registry.FORWARD
    half = dtype.itemsize == 2
    out_dtype = dtypes.FLOAT32 if forward and half and draw(st.booleans()) else dtype
    out = draw(st.sampled_from(OUTS))
    if out == "in_place" and out_dtype != dtype:
        out = "poisoned"
    scale = draw(st.sampled_from(SCALES)) if forward else 1.0
    mask = draw(st.sampled_from(MASKS)) if forward else None
    # +-1e4 times a scale other than 1 loses more than float32's tolerance to rounding scale * max (as scaling
    # x first would): such rows only without scale=
    kinds = tuple(draw(st.lists(st.sampled_from([k for k in KINDS if scale == 1.0 or k != "offset"]),
                                min_size=1, max_size=4, unique=True)))
    seed = draw(st.integers(0, 2**32 - 1))
    order = tuple(draw(st.permutations(list(registry.VARIANTS))))
    return Case(path, op, dtype, out_dtype, shape, axis, layout, dy_layout, out, kinds, scale, mask, seed, order)


# -- host arrays -------------------------------------------------------------


def view(a, layout):
    """The case's view of `a` (NumPy or CuPy), an array of base_shape(shape, layout)."""
    kind, d = layout
    if kind == "offset":
        return a[..., 1:]
    if kind == "reversed":
        return a[(slice(None),) * d + (slice(None, None, -1),)]
    if kind == "stepped":
        return a[(slice(None),) * d + (slice(None, None, 2),)]
    if kind == "transposed":
        return a.T
    return a


def base_shape(shape, layout) -> tuple:
    """The shape of the array `view` takes, for a view of `shape`."""
    kind, d = layout
    if kind == "offset":
        return (*shape[:-1], shape[-1] + 1)
    if kind == "stepped":
        return (*shape[:d], 2 * shape[d], *shape[d + 1:])
    if kind == "transposed":
        return shape[::-1]
    return shape


def placed(values, layout, xp=numpy):
    """(base, view): `values` in `layout`, a view of a NaN-filled base array (xp: numpy or cupy)."""
    base = xp.full(base_shape(values.shape, layout), numpy.nan, values.dtype)
    v = view(base, layout)
    v[...] = values
    return base, v


def from_rows(rows, shape, axes):
    """An array of `shape` whose softmax rows over `axes` (C order of the other axes) are `rows` (M, N)."""
    kept = [a for a in range(len(shape)) if a not in axes]
    moved = rows.reshape([shape[a] for a in kept] + [shape[a] for a in axes])
    return numpy.moveaxis(moved, list(range(len(kept), len(shape))), list(axes))


def accumulator_max(case) -> float:
    return float(ml_dtypes.finfo(dtypes.accumulator((case.dtype, case.out_dtype))).max)


def row_values(rng, kind, n, case):
    """One row of `kind`, in float64."""
    v = rng.standard_normal(n) * 3
    if kind == "wide":
        return v * 10
    if kind == "offset":
        return v + rng.choice((-1e4, 1e4))
    if kind == "huge":  # scale * max stays within the accumulation type (the kernels multiply the row's max by it)
        return rng.uniform(-1, 1, n) * min(float(ml_dtypes.finfo(case.dtype).max), accumulator_max(case) / 16 / case.scale)
    if kind == "tiny":  # subnormal
        return rng.uniform(-1, 1, n) * float(ml_dtypes.finfo(case.dtype).smallest_normal)
    if kind == "half_neg_inf":
        v[rng.random(n) < 0.5] = -math.inf
        v[rng.integers(n)] = 0.0  # one finite value at least
    elif kind == "all_neg_inf":
        v[:] = -math.inf
    elif kind == "nan":
        v[rng.integers(n)] = math.nan
    elif kind == "pos_inf":
        v[rng.integers(n)] = math.inf
    return v


@dataclass
class Host:
    """A case's arrays on the host, each as (base, layout): the array and the view of it the call takes."""
    x_base: numpy.ndarray  # the case's dtype (NaN outside the view and where masked out)
    layout: tuple
    row_kinds: list  # each softmax row's kind
    where_base: numpy.ndarray | None  # the mask, or None
    where_layout: tuple
    dy: numpy.ndarray  # the gradients' dy (standard normal), before its layout

    @property
    def x(self):
        return view(self.x_base, self.layout)

    @property
    def where(self):
        return None if self.where_base is None else view(self.where_base, self.where_layout)


def host_arrays(case) -> Host:
    rng = numpy.random.default_rng(case.seed)
    axes = axes_of(case)
    n = math.prod(case.shape[a] for a in axes)
    m = math.prod(case.shape) // n
    row_kinds = [case.kinds[i] for i in rng.integers(len(case.kinds), size=m)]
    rows = numpy.stack([row_values(rng, kind, n, case) for kind in row_kinds]) if m else numpy.empty((0, n))
    x = from_rows(rows, case.shape, axes)
    where_base, where_layout = mask(rng, case, axes, m, n)
    if where_base is not None:
        keep = numpy.broadcast_to(view(where_base, where_layout), case.shape)
        x = numpy.where(keep, x, numpy.nan)  # masked-out values must not matter
    dy = rng.standard_normal(case.shape).astype(case.dtype)
    x_base, _ = placed(x.astype(case.dtype), case.layout)
    return Host(x_base, case.layout, row_kinds, where_base, where_layout, dy)


CONTIGUOUS = ("contiguous", 0)
MISALIGNED = ("offset", 0)  # a view one element in along the last axis


def mask(rng, case, axes, m, n):
    """(base, layout) of the case's mask, or (None, CONTIGUOUS)."""
    shape = case.shape
    if case.mask is None:
        return None, CONTIGUOUS
    if case.mask in ("full", "misaligned"):
        keep = rng.random((m, n)) < 0.7
        keep[0] = False  # a row masked out everywhere
        full = from_rows(keep, shape, axes)
        if case.mask == "misaligned":
            return placed(full, MISALIGNED)[0], MISALIGNED
        return numpy.ascontiguousarray(full), CONTIGUOUS
    if case.mask == "one_row":
        return rng.random(shape[-1:]) < 0.7, CONTIGUOUS
    if case.mask == "leading":
        return rng.random((1, *shape[1:])) < 0.7, CONTIGUOUS
    return rng.random((*shape[:-1], 1)) < 0.7, CONTIGUOUS  # a column
