"""strided and strided_smem on the GPU: softmax and log_softmax over a middle axis, read in place, against the
float64 reference.

Outputs are poisoned with NaN before every launch and inputs are fresh random
numbers (standard normal x 3) each run; the seed is printed for replay. Each
case names the code path it reaches: strided's column in one thread (TY = 1),
over several row-threads (TY > 1), over a cluster (C > 1, sm_90);
strided_smem's column cached in shared memory (aligned rows, columns past a
block of registers); a copy to the row variants (layouts neither reads in place).
"""
from __future__ import annotations

import dataclasses

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, dtypes, log_softmax, reference, softmax
from cupysoftmax import variants as registry
from test_gpu_softmax import DTYPES, draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

OPS = registry.FORWARD
COLUMN_VARIANTS = [name for name, v in registry.VARIANTS.items() if v.layout == registry.COLUMNS]


def has_clusters() -> bool:
    return cupy.cuda.Device().compute_capability >= "90"


def check(x, axis, out, op, dtype=None):
    """out against the float64 reference of op over axis (dtype: the output's, for the tolerance)."""
    cupy.cuda.Device().synchronize()
    want = reference.REFERENCES[op](cupy.asnumpy(x), axis)
    reference.assert_close(cupy.asnumpy(out), want, dtype or x.dtype, op)


def launch_of(x, axis, op=registry.SOFTMAX, out_dtype=None, variant="auto"):
    """The column launch `variant` plans for x over axis (None where it takes the rows path)."""
    axes = api.normalize_axes(axis, x.ndim)
    view = api.columns_view(x.shape, x.strides, x.itemsize, axes)
    if view is None:
        return None
    try:
        return api.plan_columns(x.device.id, variant, *view[:3], (x.dtype, out_dtype or x.dtype), op,
                                api.columns_aligned(view, x.itemsize))[1]
    except UnsuitableVariant:
        return None


# (id naming the path, shape, axis, the variant auto takes on sm_90 for every dtype). An inner axis of 16-byte
# multiples in every dtype (24, 48, 64, 200 elements) keeps the rows aligned, which strided_smem needs; auto
# takes it for columns past one block of registers (past 896 rows in float32 at 70 registers, 1024 at most;
# 384 in float64).
SHAPES = [
    ("n1_column_of_one", (3, 1, 70), 1, "strided"),
    ("n2_tiny_wide_tx", (5, 2, 300), 1, "strided"),
    ("n19_one_row_thread", (4, 19, 130), 1, "strided"),  # R = 32 in one thread, inner not a multiple of TX
    ("n19_4d_axis1", (3, 19, 6, 11), 1, "strided"),  # the issue's layout, small
    ("n100_row_threads_not_multiple", (2, 100, 45), -2, "strided"),  # TY = 4, negative axis
    ("n1000_many_row_threads", (2, 1000, 33), 1, "strided"),  # float64: a cluster
    ("axis0_of_2d", (777, 97), 0, "strided"),
    ("axis_pair_collapsed", (3, 5, 7, 40), (1, 2), "strided"),
    ("outer_large", (600, 3, 64), 1, "strided"),
    ("n2500_registers_cluster_unaligned_rows", (2, 2500, 41), 1, "strided"),  # a cluster on sm_90, a copy elsewhere
    ("n4000_registers_cluster_unaligned_rows", (1, 4000, 33), 1, "strided"),
    ("n3000_smem_cluster", (2, 3000, 48), 1, "strided_smem"),
    ("n1500_smem_outer_and_tiles", (3, 1500, 200), 1, "strided_smem"),
    ("n1100_smem_partial_tile", (2, 1100, 24), 1, "strided_smem"),
    ("axis0_smem_of_2d", (2000, 64), 0, "strided_smem"),
    ("n20000_smem_cluster_of_16_large_slices", (1, 20000, 32), 1, "strided_smem"),  # 1250 lines (160 KB) a block
]


@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_matches_reference(rng, op, dtype, case):
    _, shape, axis, variant = case
    x = draw(rng, shape, dtype)
    out = poisoned(shape, dtype)
    launch = launch_of(x, axis, op)
    if has_clusters():
        assert launch is not None and launch.variant == variant, case
    if launch is not None and launch.knobs[-1] > 1:
        assert has_clusters()
    assert api.FUNCTIONS[op](x, axis=axis, out=out) is out
    check(x, axis, out, op)


@pytest.mark.parametrize("variant, shape", [("strided", (4, 300, 50)), ("strided_smem", (2, 3000, 48))],
                         ids=["strided_one_block", "strided_smem_cluster"])
@pytest.mark.parametrize("op", OPS)
def test_named_variant_matches_auto_bits(rng, op, variant, shape):
    x = draw(rng, shape, numpy.float32)
    assert not has_clusters() or launch_of(x, 1, op).variant == variant
    function = api.FUNCTIONS[op]
    assert bool((function(x, axis=1, variant=variant) == function(x, axis=1)).all())


@pytest.mark.parametrize("n, row_threads", [(300, 8), (5, 5)], ids=["one_block", "fewer_rows_than_row_threads"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_strided_smem_named_for_a_short_column_takes_one_block(rng, op, dtype, n, row_threads):
    x = draw(rng, (3, n, 64), dtype)
    launch = launch_of(x, 1, op, variant="strided_smem")  # 300 lines of 128 bytes: one block
    assert (launch.knobs, launch.block_y) == ((1,), row_threads)
    out = poisoned(x.shape, dtype)
    api.FUNCTIONS[op](x, axis=1, out=out, variant="strided_smem")
    check(x, 1, out, op)


@pytest.mark.parametrize("variant, shape", [("strided", (3, 40, 70)), ("strided_smem", (2, 3000, 48))],
                         ids=["strided", "strided_smem_element_stores"])
@pytest.mark.parametrize("in_dtype", [dtypes.FLOAT16, dtypes.BFLOAT16], ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_half_precision_in_float32_out_uses_the_mixed_kernel(rng, op, in_dtype, variant, shape):
    x = draw(rng, shape, in_dtype)
    assert not has_clusters() or launch_of(x, 1, op, dtypes.FLOAT32).variant == variant
    out = poisoned(x.shape, dtypes.FLOAT32)
    api.FUNCTIONS[op](x, axis=1, dtype="float32", out=out)
    check(x, 1, out, op, numpy.float32)


@pytest.mark.parametrize(
    "make, axis",
    [(lambda a: a[::-1], 1), (lambda a: a[:, ::2], 1), (lambda a: a[:, :, 1:], 1),
     (lambda a: a.transpose(1, 0, 2), 1)],  # softmax over the original axis 0, its outer axis the original 1
    ids=["reversed_outer", "stepped_axis", "inner_offset_view_misaligned", "transposed_outer_and_axis"],
)
def test_views_read_in_place(rng, make, axis):
    x = make(draw(rng, (6, 50, 37), numpy.float32))
    assert launch_of(x, axis).variant == "strided"
    out = poisoned(x.shape, numpy.float32)
    softmax(x, axis=axis, out=out)
    check(x, axis, out, registry.SOFTMAX)


@pytest.mark.parametrize("shape, make, why, why_smem", [
    ((4, 30, 40), lambda a: a[:, :, ::2], "strided reads x in place", "strided_smem reads x in place"),
    ((4, 30, 40), lambda a: a[:, :, ::-1], "strided reads x in place", "strided_smem reads x in place"),
    ((4, 30, 40), lambda a: a.transpose(0, 2, 1), "strided reads x in place", "strided_smem reads x in place"),
    # past 16 blocks of 800 rows (float32 at R = 32), rows 132 bytes apart
    ((1, 20000, 33), lambda a: a, "does not fit", "16 bytes"),
    # past 16 blocks of 1816 lines (227 KB of shared memory)
    ((1, 40000, 32), lambda a: a, "does not fit", "caches a column in shared memory"),
], ids=["stepped_inner_copy", "reversed_inner_copy", "transposed_inner_copy", "column_past_a_cluster_unaligned_copy",
        "column_past_shared_memory_copy"])
def test_what_neither_column_variant_reads_takes_the_copy_path_and_they_refuse(rng, shape, make, why, why_smem):
    x = make(draw(rng, shape, numpy.float32))
    assert launch_of(x, 1) is None
    out = poisoned(x.shape, numpy.float32)
    softmax(x, axis=1, out=out)
    check(x, 1, out, registry.SOFTMAX)
    with pytest.raises(UnsuitableVariant, match=why):
        softmax(x, axis=1, variant="strided")
    with pytest.raises(UnsuitableVariant, match=why_smem):
        softmax(x, axis=1, variant="strided_smem")


@pytest.mark.parametrize(
    "make",
    [lambda a: a[:, :, 1:70], lambda a: a[:, ::-1], lambda a: a[:, ::2], lambda a: a[::-1, :, 3:]],
    ids=["misaligned_start_partial_chunks", "reversed_axis", "stepped_axis", "reversed_outer_misaligned"],
)
@pytest.mark.parametrize("dtype", [numpy.float32, dtypes.BFLOAT16], ids=dtypes.name)
def test_strided_smem_reads_aligned_views_in_place(rng, dtype, make):
    x = make(draw(rng, (3, 2600, 72), dtype))  # rows 144 or 288 bytes apart: one 16-byte phase
    assert not has_clusters() or launch_of(x, 1).variant == "strided_smem"
    out = poisoned(x.shape, dtype)
    softmax(x, axis=1, out=out)
    check(x, 1, out, registry.SOFTMAX)


def test_a_row_variant_named_for_a_middle_axis_copies(rng):
    x = draw(rng, (3, 50, 20), numpy.float32)
    out = poisoned(x.shape, numpy.float32)
    softmax(x, axis=1, out=out, variant="online")
    check(x, 1, out, registry.SOFTMAX)


@pytest.mark.parametrize("variant", COLUMN_VARIANTS)
def test_column_variant_named_for_the_last_axis_refuses_before_any_launch(rng, variant):
    x = draw(rng, (8, 100), numpy.float32)
    out = poisoned(x.shape, numpy.float32)
    with pytest.raises(UnsuitableVariant, match=f"{variant} reads columns.*variants that can: .*online"):
        softmax(x, axis=-1, out=out, variant=variant)
    assert bool(cupy.isnan(out).all())


@pytest.mark.parametrize("shape", [(3, 700, 90), (2, 3000, 48)], ids=["strided", "strided_smem"])
@pytest.mark.parametrize("op", OPS)
def test_out_aliasing_x_exactly_is_written_in_place(rng, op, shape):
    x = draw(rng, shape, numpy.float32)
    want = reference.REFERENCES[op](cupy.asnumpy(x), 1)
    assert api.FUNCTIONS[op](x, axis=1, out=x) is x
    reference.assert_close(cupy.asnumpy(x), want, numpy.float32, op)


def test_out_overlapping_x_otherwise_goes_through_a_temporary(rng):
    base = draw(rng, (3, 41, 64), numpy.float32)
    x, out = base[:, :40], base[:, 1:]  # shifted by a row: overlaps, not the same elements
    want = reference.softmax(cupy.asnumpy(x), 1)
    softmax(x, axis=1, out=out)
    reference.assert_close(cupy.asnumpy(out), want, numpy.float32)


@pytest.mark.parametrize("n, inner", [(30, 50), (3000, 48)], ids=["strided", "strided_smem_element_stores"])
def test_out_with_a_layout_of_its_own(rng, n, inner):
    x = draw(rng, (4, n, inner), numpy.float32)
    out_base = poisoned((4, 2 * n, inner + 1), numpy.float32)
    out = out_base[:, ::2, 1:]  # stepped axis and misaligned inner: still a column view
    softmax(x, axis=1, out=out)
    check(x, 1, out, registry.SOFTMAX)
    assert bool(cupy.isnan(out_base[:, 1::2]).all()) and bool(cupy.isnan(out_base[:, ::2, 0]).all())
    transposed = poisoned((inner, n, 4), numpy.float32).transpose(2, 1, 0)  # no unit-stride inner: a temporary
    softmax(x, axis=1, out=transposed)
    check(x, 1, transposed, registry.SOFTMAX)


def extreme_columns(rng, shape, dtype):
    """Columns (o, :, i) of x over axis 1 that reach the semantics rules, at inner index i = 0 .. 8."""
    x = rng.standard_normal(shape) * 3
    x[:, :, 0] += 1e4
    x[:, rng.integers(shape[1]), 1] = numpy.nan
    x[:, rng.integers(shape[1]), 2] = numpy.inf
    x[:, :, 3] = -numpy.inf
    x[:, : shape[1] // 2, 4] = -numpy.inf
    x[:, :, 5] *= 30
    x[:, 0, 6], x[:, 1:, 6] = numpy.nan, -numpy.inf  # a NaN first, then only -inf: row-threads holding -inf too
    x[:, :, 7] -= 1e4  # a max far below 0 (exp(-max) overflows float)
    x[:, : shape[1] // 2, 8], x[:, shape[1] // 2 :, 8] = -numpy.inf, -100  # -inf first, then a max below -88
    return cupy.asarray(x.astype(dtype))


@pytest.mark.parametrize("n, inner, variant", [(19, 40, "strided"), (300, 40, "strided"), (3000, 41, "strided"),
                                                (3000, 48, "strided_smem")],
                         ids=["one_row_thread", "row_threads", "registers_cluster", "strided_smem_cluster"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_a_column_with_nan_gives_a_nan_column_only(rng, op, dtype, n, inner, variant):
    x = extreme_columns(rng, (2, n, inner), dtype)
    assert not has_clusters() or launch_of(x, 1, op).variant == variant
    out = poisoned(x.shape, dtype)
    api.FUNCTIONS[op](x, axis=1, out=out)
    check(x, 1, out, op)
    got = cupy.asnumpy(out)
    nan_columns = numpy.isnan(got).all(axis=1)  # (outer, inner)
    expected = numpy.zeros((2, inner), bool)
    expected[:, [1, 2, 3, 6]] = True
    assert (nan_columns == expected).all()
    assert not numpy.isnan(got[:, :, [0, 4, 5, *range(7, inner)]]).any()


@pytest.mark.parametrize("inner, variant", [(41, "strided"), (48, "strided_smem")],
                         ids=["registers_cluster", "strided_smem_cluster"])
def test_same_input_same_bits(rng, inner, variant):
    x = draw(rng, (2, 3000, inner), numpy.float32)  # a cluster on sm_90
    assert not has_clusters() or launch_of(x, 1).variant == variant
    first = softmax(x, axis=1)
    assert bool((softmax(x, axis=1) == first).all())


@pytest.mark.parametrize("shape, axis", [((64, 300, 40), 1), ((2, 3000, 41), 1), ((2, 3000, 40), 1)],
                         ids=["one_block", "registers_cluster", "strided_smem_cluster"])
def test_remembered_calls_stay_correct(rng, shape, axis):
    softmax(draw(rng, (2, 3), numpy.float32))  # the process's first call binds cupy.ndarray for the fast path
    api.remembered_calls().clear()
    for call in range(2):
        x = draw(rng, shape, numpy.float32)
        out = poisoned(shape, numpy.float32)
        assert len(api.remembered_calls()) == call
        assert softmax(x, axis=axis, out=out) is out
        check(x, axis, out, registry.SOFTMAX)
    for _ in range(2):  # in place: the remembered call overlaps x, so the full path serves it
        x = draw(rng, shape, numpy.float32)
        want = reference.softmax(cupy.asnumpy(x), axis)
        softmax(x, axis=axis, out=x)
        reference.assert_close(cupy.asnumpy(x), want, numpy.float32)


def test_log_softmax_of_the_issue_layout(rng):
    x = draw(rng, (2, 19, 64, 64), numpy.float32)
    out = poisoned(x.shape, numpy.float32)
    assert log_softmax(x, axis=1, out=out) is out
    check(x, 1, out, registry.LOG_SOFTMAX)


@pytest.mark.parametrize("shape, axis", [((32, 19, 512, 512), 1), ((8192, 8192), 0)], ids=["axis1_4d", "axis0_2d"])
def test_the_issue_shapes(rng, shape, axis):
    x = cupy.random.standard_normal(shape, dtype=numpy.float32) * 3
    launch = launch_of(x, axis)
    assert launch is not None or not has_clusters()
    y = softmax(x, axis=axis)
    sample = (slice(0, 2),) if axis == 1 else (slice(None), slice(0, 64))  # the reference on a slice
    reference.assert_close(cupy.asnumpy(y[sample]), reference.softmax(cupy.asnumpy(x[sample]), axis), numpy.float32)


def test_a_0d_array_has_no_middle_axis():
    assert float(softmax(cupy.asarray(numpy.float32(3.0)))) == 1.0  # axes (): the rows path, one row of one


# 8192 rows take clusters of 16 (64 KB slices); 33 to 129 items by the dtype (66 to 258 over two outer slices),
# more than twice the clusters the H100 holds at once, so strided_smem's clusters loop over items, each block
# copying its next item's lines while it writes this one's (planner.persistent), across outer slices too.
LOOPING = [("axis0_one_outer", (8192, 2048), 0), ("axis1_two_outer", (2, 8192, 1024), 1)]


@pytest.mark.parametrize("case", LOOPING, ids=[c[0] for c in LOOPING])
@pytest.mark.parametrize("misaligned", [False, True], ids=["aligned", "misaligned_partial_chunks"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_strided_smem_clusters_looping_over_items_match_a_cluster_an_item(rng, op, dtype, misaligned, case):
    if not has_clusters():
        pytest.skip("strided_smem's clusters loop over items on sm_90 only")
    _, shape, axis = case
    inner = shape[-1]

    def view_of(a):
        return a[..., 1 : inner + 1] if misaligned else a[..., :inner]

    host = rng.standard_normal((*shape[:-1], inner + 16)) * 3
    host[..., 5] -= 1e4  # a column whose max is far below 0
    base = cupy.asarray(host.astype(dtype))
    x = view_of(base)
    view = api.columns_view(x.shape, x.strides, x.itemsize, (axis,))
    kernel, launch = api.plan_columns(x.device.id, "auto", *view[:3], (x.dtype, x.dtype), op,
                                      api.columns_aligned(view, x.itemsize))
    c = launch.knobs[0]
    items = view[0] * -(-(inner + 16 // x.itemsize - 1) // (128 // x.itemsize))
    assert launch.variant == "strided_smem" and c == 16
    assert 0 < launch.grid // c < items  # fewer clusters than items: the driver's count was read
    out = poisoned(x.shape, dtype)
    assert api.FUNCTIONS[op](x, axis=axis, out=out) is out
    check(x, axis, out, op)
    one_each = poisoned(x.shape, dtype)
    y_view = api.columns_view(one_each.shape, one_each.strides, one_each.itemsize, (axis,))
    api.run(kernel, dataclasses.replace(launch, grid=items * c), (x, one_each, *view, *y_view[3:]))
    assert bool((one_each.view(numpy.uint8) == out.view(numpy.uint8)).all())
    in_place = view_of(base.copy())  # x's layout, written over itself
    assert api.FUNCTIONS[op](in_place, axis=axis, out=in_place) is in_place
    assert bool((in_place.view(numpy.uint8) == out.view(numpy.uint8)).all())
