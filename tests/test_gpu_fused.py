"""scale= and where= on the GPU against the float64 reference (reference.softmax(x, scale=, where=)).

Outputs are poisoned with NaN before every launch, inputs fresh standard
normal x 3, masks fresh random; masked-out positions of x hold NaN, which must
not reach their row.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, dtypes, fused, reference
from cupysoftmax import variants as registry
from test_gpu_softmax import draw, poisoned, refuses

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

OPS = list(api.FUNCTIONS)
VARIANTS = ["auto", *(name for name, v in registry.VARIANTS.items() if v.fused)]
DTYPES = [dtypes.FLOAT16, dtypes.BFLOAT16, dtypes.FLOAT32, dtypes.FLOAT64]

# (id naming the code path it reaches on the H100, M, N)
SHAPES = [
    ("n33_warp_rows_tail", 5, 33),
    ("n1000_warp_rows_full_warp", 4, 1000),
    # float32 256 chunks: auto's scale= alone on warp_rows (32, 8) (planner.AUTO_FIRST_PLAIN_WIDE), where= on
    # split_row's block
    ("n1024_float32_scale_alone_warp_rows_where_split_row", 7, 1024),
    ("n4097_split_row_block_tail", 3, 4097),
    # where=: half precision 1001 chunks a row, float32 2001, in a block of four a thread (K = 8 without a mask)
    ("n8001_split_row_block_masked_k4", 3, 8001),
    # where=: half precision 2500 chunks a row, one pass at K = 8 (split_row.cu's kLeanHeld: the HSET2 select of
    # the 8 mask words); float32 past a block (clusters)
    ("n20000_split_row_block_k8_one_pass", 3, 20000),
    ("n50257_split_row_cluster", 2, 50257),
    # one block a row, S > 0: float32 past registers, half precision two blocks an SM (float64: clusters of 16)
    ("m106_n50257_split_row_shared_memory_part", 106, 50257),
    # fewer rows than 0.75 an SM: the same row's threads over clusters (planner.few_rows_cuts): half precision 8 of
    # 256 threads, float32 16 of 256
    ("m64_n50257_split_row_few_rows_clusters", 64, 50257),
    ("n150001_clusters_of_16", 2, 150_001),  # split_row's largest clusters; two_pass by name
    # float32 past the 33 rows the grid holds at once: log_softmax folds two logical threads a thread there
    ("m34_n128256_split_row_grid_fold", 34, 128256),
    # past a cluster: split_row on the grid with a shared-memory part (on the H100 float32 16384 threads a
    # row, half precision 8192); float64 two_pass
    ("n1100001_split_row_grid_past_a_cluster", 2, 1_100_001),
]

# How the mask reaches the kernel: none (scale only); a contiguous (M, N) mask,
# every row in phase with x's (one aligned word a chunk, RowMask::in_phase, the
# partial edge chunks of odd N included); a full mask of row stride N + 1 (rows
# in phase and out of it); one row broadcast to every row (row stride 0); a
# view one byte in (out of phase); a column (M, 1) broadcast along the row: one
# contiguous copy.
MASKS = ["scale_only", "contiguous", "full", "one_row_for_all", "misaligned_view", "column_copied"]


def draw_mask(rng, shape, kind):
    m, n = shape
    if kind == "scale_only":
        return None
    if kind == "column_copied":
        return cupy.asarray(rng.random((m, 1)) < 0.7)
    if kind == "one_row_for_all":
        return cupy.asarray(rng.random(n) < 0.7)
    if kind == "contiguous":
        keep = rng.random((m, n)) < 0.7
        keep[0] = False
        return cupy.asarray(keep)
    keep = rng.random((m, n + 1)) < 0.7
    keep[0] = False  # a row masked out everywhere
    keep[-1, :] = True  # and one kept everywhere
    mask = cupy.asarray(keep)
    return mask[:, 1:] if kind == "misaligned_view" else mask[:, :n]


@pytest.mark.parametrize("kind", MASKS)
@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_matches_reference(rng, variant, op, dtype, case, kind):
    _, m, n = case
    x = draw(rng, (m, n), dtype)
    mask = draw_mask(rng, (m, n), kind)
    scale = 0.37 if kind == "scale_only" else 2.5
    if mask is not None:
        x[~cupy.broadcast_to(mask, x.shape)] = numpy.nan  # a masked-out value must not matter
    out = poisoned((m, n), dtype)
    function = api.FUNCTIONS[op]
    if refuses(variant, n, dtype, aligned=n * dtype.itemsize % 16 == 0, options=True):
        with pytest.raises(UnsuitableVariant, match="variants that can: (split_row, )?two_pass$"):
            function(x, axis=-1, out=out, variant=variant, scale=scale, where=mask)
        return
    assert function(x, axis=-1, out=out, variant=variant, scale=scale, where=mask) is out
    where = None if mask is None else cupy.asnumpy(mask)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, scale=scale, where=where)
    reference.assert_close(cupy.asnumpy(out), expected, dtype, op)


# warp_rows' options twin on whole chunks (O = 2) at N = 480 (whole chunks for every dtype), by how the mask
# comes: where it is read row for row at x's phase (fused.direct) or there is none, the twin on whole chunks, which
# must write the bits of the options twin (O = 1) on the same launch; the other masks take O = 1 itself. Every
# dtype pair with kernels: half precision in and float32 out too (dtype=), whose O = 2 kernels took more registers
# than their O = 1 twins (docs/perf/where-whole-chunks-h100.txt).
DIRECT_KINDS = [("scale_only", 2), ("contiguous", 2), ("one_row_for_all", 2), ("column_copied", 2), ("full", 1),
                ("misaligned_view", 1)]


@pytest.mark.parametrize("kind, o", DIRECT_KINDS, ids=[f"{k}_o{o}" for k, o in DIRECT_KINDS])
@pytest.mark.parametrize("pair", dtypes.PAIRS, ids=[f"{dtypes.name(i)}_{dtypes.name(o)}" for i, o in dtypes.PAIRS])
@pytest.mark.parametrize("op", OPS)
def test_warp_rows_reads_options_on_whole_chunks_where_the_mask_allows(rng, op, pair, kind, o):
    m, n = 300, 480
    dtype, out_dtype = pair
    x = draw(rng, (m, n), dtype)
    mask = draw_mask(rng, (m, n), kind)
    if mask is not None:
        x[~cupy.broadcast_to(mask, x.shape)] = numpy.nan
    rows = None if mask is None else fused.mask_rows(mask, x.shape, (1,), m, n, api.rows_view)
    device_id = cupy.cuda.Device().id
    kernel, launch = api.plan(device_id, "warp_rows", m, n, pair, True, op, True, True, mask is not None,
                              fused.direct(rows, m, dtype.itemsize))
    assert launch.variant == "warp_rows" and launch.knobs[-1] == o
    options = fused.kernel_args(2.5, rows)
    twin = api.plan(device_id, "warp_rows", m, n, pair, True, op, True)[0]  # y's rows not said aligned: O = 1
    outs = []
    for k in (kernel, twin):
        outs.append(poisoned((m, n), out_dtype))
        api.launch_rows(k, launch, x, outs[-1], options)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, scale=2.5,
                                        where=None if mask is None else cupy.asnumpy(mask))
    reference.assert_close(cupy.asnumpy(outs[0]), expected, out_dtype, op)
    assert numpy.array_equal(cupy.asnumpy(outs[0]).view(numpy.uint8), cupy.asnumpy(outs[1]).view(numpy.uint8))


# half-precision input, float32 output (dtype=): the mixed kernels with options; past a cluster they take the
# grid's G = 4 (their G = 1 twin, left free of a register bound, fits one block of 512 an SM)
MIXED = [("n1100001_split_row_grid_g4", 2, 1_100_001), ("m24_n2100001_split_row_grid_g4_rows_in_rounds", 24, 2_100_001)]


@pytest.mark.parametrize("kind", ["contiguous", "one_row_for_all"])
@pytest.mark.parametrize("case", MIXED, ids=[c[0] for c in MIXED])
@pytest.mark.parametrize("dtype", [dtypes.FLOAT16, dtypes.BFLOAT16], ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_half_input_float32_output_with_options(rng, op, dtype, case, kind):
    _, m, n = case
    x = draw(rng, (m, n), dtype)
    mask = draw_mask(rng, (m, n), kind)
    x[~cupy.broadcast_to(mask, x.shape)] = numpy.nan
    out = poisoned((m, n), dtypes.FLOAT32)
    assert api.FUNCTIONS[op](x, axis=-1, out=out, dtype="float32", scale=2.5, where=mask) is out
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, scale=2.5, where=cupy.asnumpy(mask))
    reference.assert_close(cupy.asnumpy(out), expected, numpy.float32, op)


@pytest.mark.parametrize("mask_shape, period", [((1, 1, 12, 300), 12), ((2, 1, 12, 300), 72), ((300,), 1)],
                         ids=["in_place_period_12", "copied_not_periodic", "in_place_row_stride_0"])
@pytest.mark.parametrize("op", OPS)
def test_attention_masks_broadcast_over_leading_axes(rng, op, mask_shape, period):
    x = draw(rng, (2, 3, 12, 300), numpy.float32)
    mask = cupy.asarray(rng.random(mask_shape) < 0.5)
    m2, p = fused.mask_rows(mask, x.shape, (3,), 72, 300, api.rows_view)
    assert p == period and m2.shape == (p, 300)
    assert (m2.data.ptr == mask.data.ptr) == (period != 72)  # in place, or the copy
    out = poisoned(x.shape, numpy.float32)
    api.FUNCTIONS[op](x, axis=-1, out=out, where=mask)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, where=cupy.asnumpy(mask))
    reference.assert_close(cupy.asnumpy(out), expected, numpy.float32, op)


# One mask row for all against x's rows off its 16-byte phase: fused.phased sends it as Q copies at the rows' phases
# from PHASED_FROM bytes and PHASED_FROM_ROWS rows of x, both dropped to 0 here so that small shapes take it. By the
# path the rows reach (on the H100 and H200): warp_rows, float64 split_row (N = 333); split_row's registers
# (N = 4097); split_row's shared-memory part with the mask staged, float32 the fold that fetches its words early,
# float64 clusters of 16 (106 x 50257). x contiguous at an odd row stride (Q = 16 / itemsize), a view one element in
# at an odd stride, and a view one element into a parent of whole 16-byte rows (Q = 1, every row off the mask's
# phase). The copies must give the one row's bits.
PHASED = [("n333_warp_rows_float64_split_row", 40, 333), ("n4097_split_row_registers", 9, 4097),
          ("m106_n50257_split_row_shared_memory_part_float64_clusters", 106, 50257)]
PHASED_LAYOUTS = {"contiguous_odd_stride": lambda n: (n, 0), "view_one_element_in_odd_stride": lambda n: (n + 2, 1),
                  "view_one_element_in_whole_chunk_stride": lambda n: ((n + 1 + 7) // 8 * 8, 1)}


@pytest.mark.parametrize("layout", PHASED_LAYOUTS)
@pytest.mark.parametrize("case", PHASED, ids=[c[0] for c in PHASED])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", OPS)
def test_one_row_for_all_goes_as_copies_at_x_rows_phases(rng, monkeypatch, op, dtype, case, layout):
    _, m, n = case
    width, first = PHASED_LAYOUTS[layout](n)
    x = draw(rng, (m, width), dtype)[:, first:first + n]
    row = cupy.asarray(rng.random(n) < 0.7)
    x[~cupy.broadcast_to(row, x.shape)] = numpy.nan
    monkeypatch.setattr(fused, "PHASED_FROM_ROWS", 0)
    monkeypatch.setattr(fused, "PHASED_FROM", 0)
    q = fused.row_phases(x.data.ptr, x.strides[0], x.itemsize)[0]
    copies, period = fused.phased(fused.mask_rows(row, x.shape, (1,), m, n, api.rows_view), x)
    chunk = 16 // x.itemsize
    assert period == q == (1 if layout.endswith("whole_chunk_stride") else chunk)
    assert copies.data.ptr != row.data.ptr and bool((copies == row).all())
    assert all((copies[p].data.ptr - x[p].data.ptr // x.itemsize) % chunk == 0 for p in range(q))
    outs = []
    for limit in (0, x.nbytes + 1):  # as copies, then as the one row
        monkeypatch.setattr(fused, "PHASED_FROM", limit)
        outs.append(poisoned((m, n), dtype))
        assert api.FUNCTIONS[op](x, axis=-1, out=outs[-1], where=row) is outs[-1]
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, where=cupy.asnumpy(row))
    reference.assert_close(cupy.asnumpy(outs[0]), expected, dtype, op)
    assert numpy.array_equal(cupy.asnumpy(outs[0]).view(numpy.uint8), cupy.asnumpy(outs[1]).view(numpy.uint8))


@pytest.mark.parametrize("variant, shape", [("warp_rows", (4, 100)), ("split_row", (4, 5000)),
                                            ("split_row", (106, 50257)), ("two_pass", (4, 5000))],
                         ids=["warp_rows", "split_row_registers", "split_row_shared_memory_part", "two_pass"])
@pytest.mark.parametrize("op", OPS)
def test_kept_values_keep_the_semantics(rng, op, variant, shape):
    """Spoiled rows (refilled): kept values all -inf, a kept NaN, a kept +inf, each with masked-out positions."""
    m, n = shape
    x = draw(rng, shape, numpy.float32)
    keep = cupy.ones(shape, bool)
    keep[:3, n // 2:] = False
    x[0, : n // 2] = -numpy.inf  # kept values all -inf: NaN there, as without a mask
    x[1, 7] = numpy.nan  # a kept NaN: the kept part NaN
    x[2, 9] = numpy.inf  # a kept +inf: likewise
    out = poisoned(shape, numpy.float32)
    api.FUNCTIONS[op](x, axis=-1, out=out, where=keep, variant=variant)
    got = cupy.asnumpy(out)
    masked = -numpy.inf if op == registry.LOG_SOFTMAX else 0.0
    assert numpy.isnan(got[:3, : n // 2]).all() and (got[:3, n // 2:] == masked).all()
    assert not numpy.isnan(got[3:]).any()


@pytest.mark.parametrize("shape, axis, mask_of", [((6, 70), 0, lambda s: s), ((3, 4, 50), (1, 2), lambda s: s[1:]),
                                                  ((5, 7), None, lambda s: s), ((40, 300), -1, lambda s: s)],
                         ids=["axis0_copied_rows", "trailing_pair_mask_broadcast", "axis_none", "reversed_mask_rows"])
@pytest.mark.parametrize("op", OPS)
def test_where_over_other_axes(rng, op, shape, axis, mask_of):
    x = draw(rng, shape, numpy.float32)
    mask = cupy.asarray(rng.random(mask_of(shape)) < 0.6)
    if axis == -1:
        mask = cupy.asarray(rng.random(shape) < 0.6)[::-1]  # negative row stride, read in place
    out = poisoned(shape, numpy.float32)
    api.FUNCTIONS[op](x, axis=axis, out=out, scale=1.5, where=mask)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), axis, scale=1.5, where=cupy.asnumpy(mask))
    reference.assert_close(cupy.asnumpy(out), expected, numpy.float32, op)


@pytest.mark.parametrize("x_of", [lambda a: a.T, lambda a: a[:0]], ids=["copy_needing_layout", "empty"])
def test_options_refused_before_any_copy_even_for_empty_input(rng, x_of):
    x = x_of(draw(rng, (50, 40), numpy.float32))
    with pytest.raises(UnsuitableVariant, match="online takes no scale= or where="):
        api.softmax(x, axis=-1, variant="online", scale=2.0)
    api.softmax(x, axis=-1, variant="online")  # the next call works


def test_scale_matches_scaling_x(rng):
    x = draw(rng, (64, 1000), numpy.float32)
    fused = cupy.asnumpy(api.softmax(x, axis=-1, scale=0.5))
    reference.assert_close(fused, reference.softmax(cupy.asnumpy(x) * 0.5, -1), numpy.float32)


@pytest.mark.parametrize("variant", ["online", "naive"])
def test_variants_without_options_refuse_and_the_next_call_works(rng, variant):
    x = draw(rng, (4, 500), numpy.float32)
    out = poisoned((4, 500), numpy.float32)
    with pytest.raises(UnsuitableVariant, match="takes no scale= or where=; variants that do: warp_rows, split_row"):
        api.softmax(x, axis=-1, out=out, variant=variant, scale=2.0)
    assert bool(cupy.isnan(out).all())  # nothing launched
    api.softmax(x, axis=-1, out=out, variant=variant)
    reference.assert_close(cupy.asnumpy(out), reference.softmax(cupy.asnumpy(x), -1), numpy.float32)


BAD_MASKS = {"host_numpy_mask": (lambda: numpy.ones((4, 500), bool), TypeError),
             "float_mask": (lambda: cupy.ones((4, 500), numpy.float32), TypeError),
             "wrong_shape": (lambda: cupy.ones((3, 500), bool), ValueError)}


@pytest.mark.parametrize("kind", BAD_MASKS)
def test_bad_masks_raise_before_any_launch(rng, kind):
    make, error = BAD_MASKS[kind]
    where = make()
    x = draw(rng, (4, 500), numpy.float32)
    out = poisoned((4, 500), numpy.float32)
    with pytest.raises(error):
        api.softmax(x, axis=-1, out=out, where=where)
    assert bool(cupy.isnan(out).all())


def test_out_may_alias_x_with_options(rng):
    x = draw(rng, (16, 3000), numpy.float32)
    mask = cupy.asarray(rng.random((16, 3000)) < 0.5)
    expected = reference.softmax(cupy.asnumpy(x), -1, scale=3.0, where=cupy.asnumpy(mask))
    assert api.softmax(x, axis=-1, out=x, scale=3.0, where=mask) is x
    reference.assert_close(cupy.asnumpy(x), expected, numpy.float32)
