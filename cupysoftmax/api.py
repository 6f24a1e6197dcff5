"""softmax() and log_softmax(): validation, axis handling, dispatch, out=.

Every check on user input runs before anything touches the GPU, and raises an
exception (TypeError for the kind of thing passed, ValueError for its value,
numpy AxisError for axes). The hot path after the checks is dictionary
look-ups: a launch is planned once per (device, variant, M, N, dtypes, op)
(for a middle axis read in place: per (outer, N, inner)) and cached.
"""
from __future__ import annotations

import dataclasses
import itertools
import operator
import secrets
import threading

import numpy

from . import device, driver, dtypes, fused, loader
from . import variants as registry
from .errors import UnsuitableVariant
from .packed import PackedLaunch
from .planner import Launch, Planner, check_takes_options

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    from numpy import AxisError


# -- validation (pure: no GPU needed) ------------------------------------------


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """Sorted non-negative axes from an int, a tuple of ints or None (all axes)."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for item in items:
        try:
            a = operator.index(item)
        except TypeError:
            raise TypeError(f"axis must be an int, a tuple of ints or None; got {item!r}") from None
        if not -ndim <= a < ndim:
            raise AxisError(a, ndim)
        axes.append(a % ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(sorted(axes))


def resolve_dtypes(in_dtype, dtype) -> tuple[numpy.dtype, numpy.dtype]:
    """(input, output) dtypes; TypeError for anything but the four floating types."""
    in_dtype = numpy.dtype(in_dtype)
    dtypes.check(in_dtype)
    out_dtype = in_dtype if dtype is None else dtypes.parse(dtype)
    return in_dtype, out_dtype


def check_variant(variant) -> str:
    if variant != registry.AUTO:
        registry.get(variant)
    return variant


def check_out(out, shape, out_dtype, device_id) -> None:
    """TypeError / ValueError unless `out` can take the result."""
    import cupy

    if not isinstance(out, cupy.ndarray):
        raise TypeError(f"out must be a cupy.ndarray; got {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError(f"out has shape {out.shape}; the result has shape {tuple(shape)}")
    if out.dtype != out_dtype:
        raise TypeError(f"out has dtype {out.dtype}; the result has dtype {out_dtype} (pass dtype= to change it)")
    if out.device.id != device_id:
        raise ValueError(f"out is on device {out.device.id}; the input is on device {device_id}")


def as_cupy(x):
    """A CuPy view of a CUDA array (CuPy, __cuda_array_interface__ or __dlpack__), never a copy."""
    if isinstance(x, numpy.ndarray) or numpy.isscalar(x) or isinstance(x, (list, tuple)):
        raise TypeError(
            f"softmax runs on the GPU and got host data ({type(x).__name__}); "
            "move it first with cupy.asarray(x), or use cupysoftmax.reference.softmax on the CPU"
        )
    import cupy

    if isinstance(x, cupy.ndarray):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return cupy.asarray(x)
    if hasattr(x, "__dlpack__"):
        try:
            return cupy.from_dlpack(x)
        except Exception as exc:  # a CPU torch tensor, say
            raise TypeError(f"cannot view {type(x).__name__} as a CUDA array through DLPack: {exc}") from None
    raise TypeError(
        f"expected a CuPy array or an object with __cuda_array_interface__ or __dlpack__; got {type(x).__name__}"
    )


# -- layout ----------------------------------------------------------------------


def _collapse(shape, strides):
    """(size, stride) of consecutive axes merged into one, or None where they do not merge.

    Axes of size 1 do not count (any stride); with none left the stride is 0.
    Each other axis must step by the size times the stride of the next one.
    """
    size, stride, span = 1, 0, None
    for length, step in zip(reversed(shape), reversed(strides)):
        if length == 1:
            continue
        if span is None:
            stride = step
        elif step != span:
            return None
        span = step * length
        size *= length
    return size, stride


def rows_view(a, axes):
    """`a` as an (M, N) view whose rows run over `axes` with unit inner stride, or None.

    `axes` must be the trailing axes. The inner axes must be C-contiguous among
    themselves and the outer ones must collapse to one (possibly negative) row
    stride; views such as x[:, 1:] or x[::-1] qualify, transposes do not.
    """
    import cupy

    k, itemsize = len(axes), a.itemsize
    inner = _collapse(a.shape[a.ndim - k:], a.strides[a.ndim - k:])
    outer = _collapse(a.shape[: a.ndim - k], a.strides[: a.ndim - k])
    if inner is None or outer is None or (inner[0] > 1 and inner[1] != itemsize):
        return None
    (n, _), (m, row_stride) = inner, outer
    if m == 1:
        row_stride = n * itemsize
    if row_stride % itemsize:
        return None
    return cupy.ndarray((m, n), a.dtype, memptr=a.data, strides=(row_stride, itemsize))


def columns_view(shape, strides, itemsize: int, axes):
    """(outer, N, inner, outer stride, axis stride) of an array viewed as (outer, N, inner), or None.

    Pure (shape, strides in bytes, itemsize): strides come back in elements.
    `axes` (sorted) must be one run of adjacent axes with axes after it; those
    must collapse to one axis of unit stride and more than one element (inner),
    the run to one stride (N's) and the axes before it to one (outer's), either
    of them negative or stepped: x[::-1], x[:, ::2] and x[:, 1:] qualify. An
    inner axis stepped, reversed or transposed does not (None: the caller
    copies), nor are axes that are the trailing ones (rows: rows_view).
    """
    if not axes or axes[-1] == len(shape) - 1:  # a 0-d array's (), or trailing axes
        return None
    first, last = axes[0], axes[-1]
    if last - first + 1 != len(axes):
        return None
    parts = [_collapse(shape[a:b], strides[a:b]) for a, b in ((0, first), (first, last + 1), (last + 1, len(shape)))]
    if None in parts:
        return None
    (outer, outer_stride), (n, axis_stride), (inner, inner_stride) = parts
    if inner == 1 or inner_stride != itemsize or outer_stride % itemsize or axis_stride % itemsize:
        return None
    return outer, n, inner, outer_stride // itemsize, axis_stride // itemsize


def columns_aligned(view, itemsize: int) -> bool:
    """Every row of an (outer, N, inner) view starts at the first's 16-byte phase (its strides are whole 16 bytes)."""
    outer, _, _, outer_stride, axis_stride = view
    return axis_stride * itemsize % 16 == 0 and (outer == 1 or outer_stride * itemsize % 16 == 0)


def rows_aligned(a2) -> bool:
    """Every row of an (M, N) view starts on a 16-byte boundary, and so would every row of a batch of them.

    A single row (rows_view gives it the row stride N * itemsize) counts as
    aligned only where its length is whole 16-byte chunks: the planner then
    picks the same launch for a row alone as for the row in a batch, and the
    row gets the same bits (batch invariance; a row's chunks, and so the
    order of its sums, follow from the launch and its 16-byte offset).
    """
    return a2.data.ptr % 16 == 0 and a2.strides[0] % 16 == 0


# -- dispatch ----------------------------------------------------------------------

_planners: dict[int, Planner] = {}
_launches: dict[tuple, tuple] = {}
_MAX_CACHED_LAUNCHES = 4096


def planner(device_id: int) -> Planner:
    p = _planners.get(device_id)
    if p is None:
        p = _planners[device_id] = Planner(device.facts(device_id))
    return p


def plan(device_id: int, variant: str, m: int, n: int, pair, aligned: bool = True,
         op: str = registry.SOFTMAX, with_options: bool = False, y_aligned: bool = False,
         masked: bool = False, mask_direct: bool = False) -> tuple[object, Launch]:
    """(kernel, launch) for a shape and op, planned once and cached; UnsuitableVariant if it cannot serve.

    with_options: the call passes scale= or where= (a variant that takes them, see fused.py).
    y_aligned: every row of the output starts on a 16-byte boundary too (Planner.on_whole_chunks).
    masked: the call passes where= (with_options too; Planner.with_mask_layout).
    mask_direct: its mask is read row for row at x's phase (fused.direct; Planner.on_whole_chunks).
    """
    key = (device_id, variant, m, n, pair, aligned, op, with_options or masked, y_aligned, masked,
           masked and mask_direct)
    hit = _launches.get(key)
    if hit is not None:
        return hit
    p = planner(device_id)
    launch = p.plan(variant, m, n, pair, _facts(device_id, pair, op), aligned, op, with_options, y_aligned, masked,
                    mask_direct)
    kernel = _loaded(p, launch, device_id, pair, op)
    launch = p.persistent(launch, _active_clusters(kernel, launch, op), op)
    if launch.workspace:  # a cooperative launch: the driver refuses a grid larger than the GPU holds at once
        from cupy.cuda import driver

        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, launch.block, launch.smem)
        most = per_sm * p.device.sms // launch.unit * launch.unit  # whole rows of a grid launch's blocks
        if most == 0:
            raise RuntimeError(f"{launch.variant} {launch.knobs}: the GPU holds {per_sm * p.device.sms} blocks of "
                               f"{launch.block} threads at once, fewer than the {launch.unit} a row needs")
        launch = dataclasses.replace(launch, grid=min(launch.grid, most))
    return _remember(key, (kernel, launch))


def plan_columns(device_id: int, variant: str, outer: int, n: int, inner: int, pair, op: str,
                 aligned: bool) -> tuple[object, Launch]:
    """(kernel, launch) for softmax down the columns of an (outer, N, inner) view, planned once and cached.

    aligned: the view's rows keep one 16-byte phase (columns_aligned).
    """
    key = ("columns", device_id, variant, outer, n, inner, pair, op, aligned)
    hit = _launches.get(key)
    if hit is not None:
        return hit
    p = planner(device_id)
    launch = p.plan_columns(variant, outer, n, inner, pair, _facts(device_id, pair, op), op, aligned=aligned)
    kernel = _loaded(p, launch, device_id, pair, op)
    return _remember(key, (kernel, p.persistent(launch, _active_clusters(kernel, launch, op), op)))


def _active_clusters(kernel, launch: Launch, op: str) -> int:
    """The clusters of a launch on clusters that may loop (Planner.loops) the GPU holds at once, from the driver;
    0 for other launches or where the driver cannot say (the planner then keeps a cluster an item, correct either
    way)."""
    if not Planner.loops(launch, op):
        return 0
    c, function = launch.knobs[-1], kernel.kernel.ptr
    try:
        return driver.active_clusters(function, c, (launch.block, launch.block_y), launch.smem)
    except (OSError, RuntimeError):  # no driver library, a driver without the call, or the call's failure
        return 0


def _facts(device_id: int, pair, op: str):
    def facts(name, knobs):
        return loader.facts_of(loader.function(name, pair, knobs, device_id, op))

    return facts


def _loaded(p: Planner, launch: Launch, device_id: int, pair, op: str):
    """The launch's kernel, its dynamic shared memory limit raised where the launch needs more than the default
    (48 KB a block, the kernel's static shared memory counted in)."""
    kernel = loader.function(launch.variant, pair, launch.knobs, device_id, op)
    if launch.smem + kernel.shared_size_bytes > p.device.smem_per_block:
        kernel.max_dynamic_shared_size_bytes = max(launch.smem, kernel.max_dynamic_shared_size_bytes)
    return kernel


def _remember(key, hit):
    if len(_launches) >= _MAX_CACHED_LAUNCHES:
        _launches.clear()
    _launches[key] = hit
    return hit


def row_args(launch: Launch, x2, y2, options: tuple = fused.PLAIN) -> tuple:
    """The kernel arguments after the two pointers: rows, n, both row strides, the fused options
    (variants that take them: fused.kernel_args), the launch's own.

    The `long long` go as Python ints, which CuPy passes as 64-bit
    integers and converts faster than NumPy scalars (H100 host, 2026-11-22:
    a six-argument launch 8.4 us against 9.4 us).
    """
    shape = (x2.shape[0], x2.shape[1], x2.strides[0] // x2.itemsize, y2.strides[0] // y2.itemsize)
    if registry.VARIANTS[launch.variant].fused:
        return (*shape, *options, *launch.args)
    return (*shape, *launch.args)


def launch_rows(kernel, launch: Launch, x2, y2, options: tuple = fused.PLAIN) -> None:
    """Run one planned launch over (M, N) row views on the current stream."""
    run(kernel, launch, (x2, y2, *row_args(launch, x2, y2, options)))


# A CUDA graph captured from a call replays its launches later, on the memory
# they were given. A temporary (two_pass's workspace, a contiguous copy, a
# copied mask, a cast) goes back to CuPy's pool when the call returns, and the
# pool hands it to the next array while the graph still writes it. So a launch
# made under stream capture keeps every array it is given for the life of the
# process: capture once, replay many (each capture keeps its own).
_captured: list = []


def keep_while_capturing(arrays) -> None:
    """Keep `arrays` (CuPy arrays among other values) for the life of the process if the current stream is capturing."""
    import cupy

    if cupy.cuda.get_current_stream().is_capturing():
        _captured.extend(a for a in arrays if isinstance(a, cupy.ndarray))


# The tags of split_row's grid launches (csm::GridBoard): each launch's
# workspace slots carry the launch's tag, and a reader waits for its own, so
# the workspace, fresh from CuPy's pool, needs no zeroing, provided no earlier
# launch's tag can equal it: a random start a process (not 0), counted up by
# one a launch. A count per row zeroed before each launch cost the grid's
# launches of 32 rows 0.7-0.9 us a call (H100, 2026-11-24,
# docs/perf/workspace-zeroing-h100.txt); with the tags, 32 x 262144 float32
# 26.1 -> 25.1 us (2026-11-25, csm::GridBoard's measurements).
_tags = itertools.count(secrets.randbits(62) + 1)


def run(kernel, launch: Launch, args: tuple) -> None:
    """Launch `kernel` on args; one with a workspace gets it after them, cooperatively: zeroed first, unless
    the launch is tagged (then its tag follows it, and only under stream capture, where a graph replays the
    launch with the same tag, are its tags zeroed: the values are read only once their row's tags match)."""
    import cupy

    if not launch.workspace:
        kernel((launch.grid,), (launch.block, launch.block_y), args, shared_mem=launch.smem)
    else:
        workspace = cupy.empty(launch.workspace, numpy.uint8)
        if not launch.tagged:
            workspace.data.memset_async(0, launch.workspace)
        elif cupy.cuda.get_current_stream().is_capturing():
            workspace.data.memset_async(0, launch.tagged)
        args = (*args, workspace, *((numpy.uint64(next(_tags)),) if launch.tagged else ()))
        kernel.kernel((launch.grid,), (launch.block,), args, shared_mem=launch.smem, enable_cooperative_groups=True)
    keep_while_capturing(args)


# -- the public function ----------------------------------------------------------


# The common call -- a CuPy array, no dtype=, axis None or an int, out None
# or a CuPy array -- remembered per (shape, strides, dtype, axis, variant,
# device, alignment, the same of out, op) once the full path has served it
# directly (no copy): later calls cost a dict look-up, the result's allocation
# (or a bounds check that out does not overlap x) and the launch. The host
# time of this path is the product (issue 3: at most 1.3 x a bare RawKernel
# launch), so it skips layers: the launch's arguments packed once
# (packed.PackedLaunch, cuLaunchKernel) rather than converted by
# Function.__call__, cupy.ndarray rather than cupy.empty (about 1.2 us on the
# H100 host, 2026-11-22). Launches with a workspace (two_pass, rows of
# megabytes) keep the full path. Each thread remembers its own calls: a
# packed launch has its pointers written in just before it goes.
class _Remembered(threading.local):
    def __init__(self):
        self.calls: dict[tuple, tuple] = {}


_remembered = _Remembered()
_ndarray = None  # cupy.ndarray, once cupy has been imported
_current_device = None  # cupy.cuda.runtime.getDevice, likewise
_current_stream = None  # cupy.cuda.get_current_stream, likewise


def remembered_calls() -> dict:
    """The calling thread's remembered calls: {key: (PackedLaunch, result dtype, byte spans of x and the result)}."""
    return _remembered.calls


def softmax(x, axis=None, *, out=None, dtype=None, variant: str = registry.AUTO, scale=1.0, where=None):
    """softmax(x) = exp(x - max) / sum(exp(x - max)) over `axis`, on the GPU.

    Same signature as scipy.special.softmax (and cupyx.scipy.special.softmax),
    with keyword-only extras:

    - axis: int, negative int, tuple of ints, or None (all axes, as in SciPy).
    - out: a cupy.ndarray of the result's shape and dtype, written and returned.
    - dtype: the output dtype (e.g. float32 for a float16 input); the kernels
      accumulate in float32 (float64 for float64).
    - variant: "auto" or a name from `cupysoftmax list`.
    - scale: softmax(scale * x), a float > 0 (the inverse of a temperature),
      applied in the kernel's own pass (no pass over x more); scale * x is
      rounded to the accumulation type, as softmax(x * scale) in it would be.
    - where: a boolean CUDA array broadcastable to x (JAX's where=): positions
      where it is False come out 0 and take no part in the max or the sum; a
      row masked out everywhere comes out all 0. A mask broadcast over leading
      axes is read in place; otherwise one contiguous copy of it is made.
      scale= and where= are taken by warp_rows, split_row and two_pass
      (`cupysoftmax list`); others raise UnsuitableVariant.

    x is a CuPy array or any CUDA array with __cuda_array_interface__ or
    __dlpack__ (a torch CUDA tensor, say), viewed without a copy; the result is
    a CuPy array. A row holding NaN or +inf, or only -inf, comes out NaN.
    Softmax over a middle axis (or a run of adjacent axes) whose following
    axes collapse to one of unit stride is read in place by `strided` or
    `strided_smem` where auto or one of them is asked for and a column fits on
    chip; other axes, and
    layouts whose rows do not have one stride, go through one contiguous copy.
    """
    return _forward(registry.SOFTMAX, x, axis, out, dtype, variant, scale, where)


def log_softmax(x, axis=None, *, out=None, dtype=None, variant: str = registry.AUTO, scale=1.0, where=None):
    """log_softmax(x) = x - max - log(sum(exp(x - max))) over `axis`, on the GPU.

    The arguments and rules of `softmax` (scipy.special.log_softmax has the
    same signature): a row holding NaN or +inf, or only -inf, comes out NaN; a
    -inf element of any other row comes out -inf, as does a value below the
    output type's range (float16: -65504). The result is computed from
    x itself, not as the log of softmax, so it stays finite and exact where
    exp(x - max) underflows. `variant`: "auto" or one of the variants that
    compute log_softmax (`cupysoftmax list`); the classic ones compute softmax
    only and raise UnsuitableVariant. scale= as in softmax (log_softmax(scale
    * x)); where= as in softmax, masked-out positions coming out -inf.
    """
    return _forward(registry.LOG_SOFTMAX, x, axis, out, dtype, variant, scale, where)


FUNCTIONS = {registry.SOFTMAX: softmax, registry.LOG_SOFTMAX: log_softmax}


def _forward(op, x, axis, out, dtype, variant, scale, where):
    """softmax or log_softmax: the remembered launch when there is one, else the full path."""
    key = None
    if not fused.is_plain(scale, where):
        return _full(op, x, axis, out, dtype, variant, None, scale, where)
    if type(x) is _ndarray and dtype is None and (axis is None or type(axis) is int) and (
            out is None or type(out) is _ndarray):
        device_id = x.data.device_id
        key = (x.shape, x.strides, x.dtype, axis, variant, device_id, x.data.ptr % 16 == 0,
               None if out is None else (out.shape, out.strides, out.dtype, out.data.device_id, out.data.ptr % 16 == 0),
               op)
        hit = _remembered.calls.get(key)
        if hit is not None and device_id == _current_device():  # launches go to the current device
            launch, out_dtype, spans = hit
            if out is None:
                out = _ndarray(x.shape, out_dtype)
            elif _overlap(x.data.ptr, out.data.ptr, spans):
                return _full(op, x, axis, out, dtype, variant, None, scale, where)
            launch(x.data.ptr, out.data.ptr, _current_stream().ptr)
            return out
    return _full(op, x, axis, out, dtype, variant, key, scale, where)


def _span(a) -> tuple[int, int]:
    """Bytes [lo, hi) that an array touches, relative to its data pointer."""
    lo = sum((size - 1) * stride for size, stride in zip(a.shape, a.strides) if stride < 0)
    hi = sum((size - 1) * stride for size, stride in zip(a.shape, a.strides) if stride > 0) + a.itemsize
    return lo, hi


def _overlap(x_ptr: int, y_ptr: int, spans) -> bool:
    """Whether x's and out's byte ranges overlap (cupy.may_share_memory's bounds test)."""
    (x_lo, x_hi), (y_lo, y_hi) = spans
    return x_ptr + x_lo < y_ptr + y_hi and y_ptr + y_lo < x_ptr + x_hi


def _full(op, x, axis, out, dtype, variant, key, scale=1.0, where=None):
    """Validate, lay out (columns in place, or rows), plan (cached), launch; remember the call under `key` where it went direct."""
    global _ndarray, _current_device, _current_stream
    import cupy

    _ndarray, _current_device, _current_stream = cupy.ndarray, cupy.cuda.runtime.getDevice, cupy.cuda.get_current_stream
    x = as_cupy(x)
    in_dtype, out_dtype = resolve_dtypes(x.dtype, dtype)
    axes = normalize_axes(axis, x.ndim)
    check_variant(variant)
    device_id = x.device.id
    if out is not None:
        check_out(out, x.shape, out_dtype, device_id)
    scale = fused.check_scale(scale, dtypes.accumulator((in_dtype, out_dtype)))
    if where is not None:
        where = as_cupy(where)
        fused.check_where(where, x.shape, device_id)
    with_options = where is not None or scale != 1.0
    if with_options and variant != registry.AUTO:  # before any cast or copy below
        check_takes_options(registry.get(variant), op)

    pair = (in_dtype, out_dtype)
    with x.device:  # the cast, the result and the launch on x's device, whichever device is current
        if pair not in dtypes.PAIRS:  # e.g. float32 in, float16 out: cast first, as PyTorch does
            x = x.astype(out_dtype)
            keep_while_capturing((x,))  # a copy of it may be what the launch reads
            pair = (out_dtype, out_dtype)
        result = out if out is not None else cupy.empty(x.shape, out_dtype)
        if x.size == 0:
            return result
        # the column kernels take no scale= or where=: with them, a middle axis goes as rows (through a copy)
        columns = None if with_options else _columns(op, x, axes, pair, variant, device_id)
        if columns is None:
            call = _launch_rows(op, x, axes, result, out, pair, variant, device_id, scale, where)
        else:
            call = _launch_columns(x, axes, result, out, *columns)
        if key is not None and call is not None:
            _remember_call(key, call, out_dtype, x, result)
    return result


def _remember_call(key, call, out_dtype, x, result) -> None:
    """Remember a call that went direct, for the calling thread; on x's device (kernel.kernel is the Function
    loaded on the current device)."""
    calls = _remembered.calls
    if len(calls) >= _MAX_CACHED_LAUNCHES:
        calls.clear()
    kernel, launch, tail = call
    packed_launch = PackedLaunch(kernel.kernel, launch.grid, (launch.block, launch.block_y), launch.smem, tail)
    calls[key] = (packed_launch, out_dtype, (_span(x), _span(result)))


def _launch_rows(op, x, axes, result, out, pair, variant, device_id, scale=1.0, where=None):
    """Softmax over `axes` as (M, N) rows, through a transposed copy where x's layout has none.

    scale and where: the fused options (checked), where as a CuPy array or None.

    Returns (kernel, launch, arguments after x and y) where the call read x and
    wrote `result` in place (the remembered call's path), else None.
    """
    import cupy

    trailing = tuple(range(x.ndim - len(axes), x.ndim))
    xs = cupy.moveaxis(x, axes, trailing)
    ys = cupy.moveaxis(result, axes, trailing)
    n = int(numpy.prod([x.shape[a] for a in axes], dtype=numpy.int64))
    m = x.size // n
    x2 = rows_view(xs, trailing)
    viewed = x2 is not None
    if not viewed:
        x2 = cupy.ascontiguousarray(xs).reshape(m, n)
    y2 = rows_view(ys, trailing)
    direct = y2 is not None and (out is None or not any(
        cupy.may_share_memory(out, a) for a in (x, where) if a is not None))
    if not direct:
        y2 = cupy.empty((m, n), result.dtype)
    mask = None if where is None else fused.phased(fused.mask_rows(where, x.shape, axes, m, n, rows_view), x2)
    kernel, launch = plan(device_id, variant, m, n, pair, rows_aligned(x2), op, scale != 1.0, rows_aligned(y2),
                          where is not None, fused.direct(mask, m, x2.itemsize))
    launch_rows(kernel, launch, x2, y2, fused.kernel_args(scale, mask))
    if not direct:
        ys[...] = y2.reshape(ys.shape)
    return (kernel, launch, row_args(launch, x2, y2)) if viewed and direct and not launch.workspace else None


def _columns(op, x, axes, pair, variant, device_id):
    """(kernel, launch, x's column view) where a variant reading columns serves, else None (the rows path).

    auto takes it where x views as (outer, N, inner) and the planner can hold
    a column; a row variant never does (a middle axis goes through a copy for
    it); a column variant named for a middle axis it cannot serve raises
    UnsuitableVariant, before any launch (for trailing axes the rows path's
    planner says so).
    """
    if variant != registry.AUTO and registry.get(variant).layout != registry.COLUMNS:
        return None
    view = columns_view(x.shape, x.strides, x.itemsize, axes)
    if view is None:
        if variant == registry.AUTO or not axes or axes[-1] == x.ndim - 1:
            return None
        raise UnsuitableVariant(
            f"{variant} reads x in place as (outer, N, inner): the softmax axes one run, the axes after them "
            f"collapsing to one of unit stride and more than one element; x of shape {x.shape} and strides "
            f"{x.strides} over axes {axes} is no such view (variant auto copies it for a row variant)")
    try:
        kernel, launch = plan_columns(device_id, variant, *view[:3], pair, op, columns_aligned(view, x.itemsize))
    except UnsuitableVariant:
        if variant == registry.AUTO:
            return None
        raise
    return kernel, launch, view


def _launch_columns(x, axes, result, out, kernel, launch, view):
    """Softmax down the columns of x's (outer, N, inner) view, read in place.

    `result` is written in place where it views the same way and does not
    overlap x, or overlaps it exactly (same data, same strides: each thread
    writes only what it read); otherwise through a contiguous temporary.
    Returns (kernel, launch, arguments after x and y) where it wrote result in place, else None.
    """
    import cupy

    y_view = columns_view(result.shape, result.strides, result.itemsize, axes)
    exact = y_view == view and result.data.ptr == x.data.ptr and result.dtype == x.dtype
    direct = y_view is not None and (out is None or exact or not cupy.may_share_memory(out, x))
    y = result if direct else cupy.empty(x.shape, result.dtype)
    if not direct:
        y_view = columns_view(y.shape, y.strides, y.itemsize, axes)
    tail = (*view, *y_view[3:])
    run(kernel, launch, (x, y, *tail))
    if not direct:
        result[...] = y
    return (kernel, launch, tail) if direct else None
