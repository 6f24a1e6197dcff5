"""softmax on the GPU against the float64 reference: every variant x dtype x path-hitting shape.

The reference tests run log_softmax too, for every variant that computes it
(test_gpu_log_softmax has log_softmax's own rules; test_gpu_gradients the
backward ops).

Outputs are poisoned with NaN before every launch and inputs are fresh random
numbers (standard normal x 3) each run; the seed is printed for replay.
"""
from __future__ import annotations

import dataclasses

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, dtypes, reference, softmax
from cupysoftmax import variants as registry

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

# the variants that read rows (strided, reading a middle axis in place, has test_gpu_strided)
VARIANTS = [name for name, v in registry.VARIANTS.items() if v.layout == registry.ROWS]
VARIANT_OPS = [(name, op) for name in VARIANTS for op in registry.VARIANTS[name].ops if op in api.FUNCTIONS]  # forward
VARIANT_OP_IDS = [f"{name}-{op}" for name, op in VARIANT_OPS]
DTYPES = [dtypes.FLOAT16, dtypes.BFLOAT16, dtypes.FLOAT32, dtypes.FLOAT64]

# (id naming the code path it reaches, M, N)
SHAPES = [
    ("n1_single_element", 5, 1),
    ("n31_partial_warp", 7, 31),
    ("n32_one_full_warp", 6, 32),
    ("n33_warp_plus_one", 5, 33),
    ("n1000_block128_partial_items", 4, 1000),
    ("n1024_block128_exact", 3, 1024),
    ("n1025_pow2_plus_one_registers_items16", 3, 1025),
    ("n4097_block512_vector_tail", 2, 4097),
    ("n8193_block1024_partial_items", 2, 8193),
    ("n16383_registers_cap_minus_one", 2, 16383),
    ("n50257_vocab_past_registers", 2, 50257),
    # half precision, one block a row: 512 threads with a shared-memory part, two blocks an SM (SPLIT_TWO_BLOCKS)
    ("m106_n50257_split_row_two_blocks_an_sm", 106, 50257),
    # fewer rows than 0.75 an SM: the same row's threads over clusters (planner.few_rows_cuts): half precision 8 of
    # 256 threads, float32 16 of 256; float64, which no block holds, 16 as before
    ("m64_n50257_split_row_few_rows_clusters", 64, 50257),
    ("m1_single_row", 1, 2049),
    ("m5000_many_rows", 5000, 67),
]

# Layouts: x contiguous; x a view one element in (x[:, 1:], misaligned for 16-byte
# vectors, row stride N + 1); both x and out such views (equal misalignment).
LAYOUTS = ["contiguous", "x_offset_view", "x_and_out_offset_views"]


def refuses(variant: str, n: int, dtype, aligned: bool, options: bool = False) -> bool:
    """Shapes a variant must refuse on the H100-class GPU: rows past registers or shared memory. `options`: the
    call passes scale= or where=."""
    per_chunk = 16 // dtype.itemsize
    if variant == "warp_rows":  # 32 threads x 8 chunks of 16 bytes; a misaligned row may span one chunk more where
        # the kernel counts chunks from the boundary (options); the plain kernels take any phase in ceil(N / V)
        return -(-(n + (0 if aligned or not options else per_chunk - 1)) // per_chunk) > 256
    if variant == "split_row":  # a cluster of 16 blocks holds 16384 threads x 8 chunks, the grid 65536 x 36 (not float64)
        return -(-(n + (0 if aligned else per_chunk - 1)) // per_chunk) > (
            16384 * 8 if dtype == dtypes.FLOAT64 else 65536 * 36)
    if variant == "registers":
        return n > (8192 if dtype == dtypes.FLOAT64 else 16384)
    if variant == "smem_cached":
        return n * dtype.itemsize > 227 * 1024
    return False


def draw(rng, shape, dtype, scale=3.0):
    """Fresh standard normal x scale in `dtype`, on the GPU."""
    return cupy.asarray((rng.standard_normal(shape) * scale).astype(dtype))


def poisoned(shape, dtype):
    return cupy.full(shape, numpy.nan, dtype)


def operands(rng, m, n, dtype, out_dtype, layout):
    """(x, out, the array out is a view of) for an (M, N) call in one of LAYOUTS; out poisoned."""
    if layout == "contiguous":
        out = poisoned((m, n), out_dtype)
        return draw(rng, (m, n), dtype), out, out
    x = draw(rng, (m, n + 1), dtype)[:, 1:]
    if layout == "x_offset_view":
        out = poisoned((m, n), out_dtype)
        return x, out, out
    out_base = poisoned((m, n + 1), out_dtype)
    return x, out_base[:, 1:], out_base


def expect(x, axis=-1):
    return reference.softmax(cupy.asnumpy(x), axis=axis)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("variant, op", VARIANT_OPS, ids=VARIANT_OP_IDS)
def test_matches_reference(rng, variant, op, dtype, case, layout):
    _, m, n = case
    function = api.FUNCTIONS[op]
    x, out, out_base = operands(rng, m, n, dtype, dtype, layout)
    aligned = layout == "contiguous" and n * dtype.itemsize % 16 == 0  # as api.rows_aligned counts a row
    if refuses(variant, n, dtype, aligned):
        with pytest.raises(UnsuitableVariant, match="variants that can: .*online"):
            function(x, axis=-1, out=out, variant=variant)
        return
    got = function(x, axis=-1, out=out, variant=variant)
    assert got is out
    cupy.cuda.Device().synchronize()
    reference.assert_close(cupy.asnumpy(out), reference.REFERENCES[op](cupy.asnumpy(x), -1), dtype, op)
    if layout == "x_and_out_offset_views":  # the column before the view must stay untouched
        assert bool(cupy.isnan(out_base[:, 0]).all())


# warp_rows' kernel on whole chunks (O = -1) serves calls whose rows of x and out all start on 16-byte boundaries;
# an out one element into a wider array, x contiguous, takes the plain kernel (O = 0), which stores element by
# element there. Called twice: the full path, then the remembered one.
OUT_OFF_THE_GRID = [("warp_rows_plain_out_offset_n64", 1000, 64, dtypes.FLOAT32),
                    ("warp_rows_plain_out_offset_bf16_n1024", 300, 1024, dtypes.BFLOAT16)]


@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("case", OUT_OFF_THE_GRID, ids=[c[0] for c in OUT_OFF_THE_GRID])
def test_an_out_off_the_16_byte_grid_takes_the_plain_kernel(rng, case, op):
    _, m, n, dtype = case
    x = draw(rng, (m, n), dtype)
    for _ in range(2):
        out_base = poisoned((m, n + 1), dtype)
        out = out_base[:, 1:]
        planned = api.plan(cupy.cuda.Device().id, "auto", m, n, (dtype, dtype), api.rows_aligned(x), op,
                           y_aligned=api.rows_aligned(out))[1]
        assert (planned.variant, planned.knobs[-1]) == ("warp_rows", 0)
        assert api.FUNCTIONS[op](x, axis=-1, out=out) is out
        reference.assert_close(cupy.asnumpy(out), reference.REFERENCES[op](cupy.asnumpy(x), -1), dtype, op)
        assert bool(cupy.isnan(out_base[:, 0]).all())


# warp_rows' plain kernels hold a row of any 16-byte phase in ceil(N / V) chunks (kernels/common.cuh, Slots): the
# row's partial first and last granules share slot 0 where both are partial. 2-byte rows of more than one chunk a
# lane read those granules whole (inside x's bytes) and pad what is not theirs; float32 rows past the element-strided
# layouts, and float32 rows of whole chunks, read them element by element. float32 rows of N % V != 0 of 2 to 88
# and 129 to 256 chunks and float64 rows of 2 to 256 (any N) read the row element-strided (O = -2: lane l holds elements l + G * i;
# warp_rows.cu), on layouts of their own (planner.ELEMENT_STRIDED_LAYOUTS). (id naming the path, N, dtype, the
# output's dtype, the planned (G, K, O), or those by op); 37 rows, so that every phase shows (row 0's last granule
# partial and not folded, the others folded or not by their phase).
ODD_ROWS = [("granules_n255_bfloat16", 255, dtypes.BFLOAT16, dtypes.BFLOAT16, (16, 2, 0)),
            ("granules_n127_float16", 127, dtypes.FLOAT16, dtypes.FLOAT16, (8, 2, 0)),
            ("granules_n1023_bfloat16_four_a_lane", 1023, dtypes.BFLOAT16, dtypes.BFLOAT16, (32, 4, 0)),
            ("granules_n255_bfloat16_float32_out_wider_stores", 255, dtypes.BFLOAT16, dtypes.FLOAT32, (16, 2, 0)),
            ("elements_n399_float32_four_a_lane", 399, dtypes.FLOAT32, dtypes.FLOAT32, (32, 4, 0)),
            # whole chunks: Slots' element edges out of phase, the twin on whole chunks where x and out are aligned
            ("elements_or_whole_n36_float32_two_a_lane", 36, dtypes.FLOAT32, dtypes.FLOAT32, (8, 2, 0)),
            # float64 rows of 101 chunks: softmax eight a lane, log_softmax four (ELEMENT_STRIDED_LAYOUTS by op)
            ("strided_n201_float64_by_op", 201, dtypes.FLOAT64, dtypes.FLOAT64,
             {registry.SOFTMAX: (16, 8, -2), registry.LOG_SOFTMAX: (32, 4, -2)}),
            # past 128 chunks, on warp_rows rather than split_row (planner.AUTO_FIRST_PLAIN_WIDE)
            ("strided_n301_float64_eight_a_lane", 301, dtypes.FLOAT64, dtypes.FLOAT64, (32, 8, -2)),
            ("strided_n9_float32_two_lanes_two_chunks", 9, dtypes.FLOAT32, dtypes.FLOAT32, (2, 2, -2)),
            ("strided_n31_float32_one_a_lane", 31, dtypes.FLOAT32, dtypes.FLOAT32, (8, 1, -2)),
            ("strided_n63_float32_sixteen_lanes", 63, dtypes.FLOAT32, dtypes.FLOAT32, (16, 1, -2)),
            ("strided_n99_float32", 99, dtypes.FLOAT32, dtypes.FLOAT32, (16, 2, -2)),
            ("strided_n255_float32_full_warp", 255, dtypes.FLOAT32, dtypes.FLOAT32, (32, 2, -2)),
            # past 128 chunks, on warp_rows rather than split_row (planner.AUTO_FIRST_PLAIN_WIDE)
            ("strided_n1023_float32_eight_a_lane", 1023, dtypes.FLOAT32, dtypes.FLOAT32, (32, 8, -2)),
            ("strided_n3_float64_one_lane", 3, dtypes.FLOAT64, dtypes.FLOAT64, (1, 2, -2)),
            ("strided_n15_float64", 15, dtypes.FLOAT64, dtypes.FLOAT64, (4, 2, -2)),
            ("strided_n45_float64_four_a_lane", 45, dtypes.FLOAT64, dtypes.FLOAT64, (8, 4, -2)),
            ("elements_n15_bfloat16_one_a_lane", 15, dtypes.BFLOAT16, dtypes.BFLOAT16, (2, 1, 0))]
ODD_LAYOUTS = ["one_in_out_at_phase", "one_in_out_off_phase", "strided_nan_gaps", "reversed", "exact_allocation"]


def special_rows(rng, m, n, dtype):
    """Fresh values whose rows' first or last element is NaN, +inf, -inf or large, and a row of only -inf: the
    positions a partial granule holds."""
    v = rng.standard_normal((m, n)) * 3
    v[1, 0], v[2, -1], v[3, 0], v[4, -1], v[5, :], v[6, -1], v[7, 0], v[8, -1] = (
        numpy.nan, numpy.nan, numpy.inf, numpy.inf, -numpy.inf, -numpy.inf, 60.0, 60.0)
    return cupy.asarray(v.astype(dtype))


@pytest.mark.parametrize("layout", ODD_LAYOUTS)
@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("case", ODD_ROWS, ids=[c[0] for c in ODD_ROWS])
def test_rows_out_of_phase_take_the_plain_layout_of_aligned_rows(rng, case, op, layout):
    _, n, dtype, out_dtype, knobs = case
    m = 37
    values = special_rows(rng, m, n, dtype)
    out_base, out, ptr = poisoned((m * n + 16,), out_dtype), None, None
    if layout.startswith("one_in"):  # x one element into its allocation; out one (x's phase) or two elements in
        x = cupy.concatenate([draw(rng, (1,), dtype), values.reshape(-1), draw(rng, (15,), dtype)])[1:1 + m * n]
        lead = 1 if layout == "one_in_out_at_phase" else 2
        x, out = x.reshape(m, n), out_base[lead:lead + m * n].reshape(m, n)
    elif layout == "strided_nan_gaps":  # a granule read across the gap between rows must not let its NaN in
        x = poisoned((m, n + 5), dtype)[:, 2:n + 2]
        x[...] = values
        out_base = poisoned((m, n + 5), out_dtype)
        out = out_base[:, 1:n + 1]
    elif layout == "reversed":
        x = values[::-1]
    else:  # x ending at the very end of a raw allocation of its exact size (compute-sanitizer sees a read past it)
        nbytes = m * n * dtype.itemsize
        ptr = cupy.cuda.runtime.malloc(nbytes)
        x = cupy.ndarray((m, n), dtype, cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(ptr, nbytes, None), 0))
        x[...] = values
    try:
        launch = api.plan(cupy.cuda.Device().id, "auto", m, n, (dtype, out_dtype), api.rows_aligned(x), op,
                          y_aligned=out is None or api.rows_aligned(out))[1]
        planned = knobs[op] if isinstance(knobs, dict) else knobs
        whole = (planned[2] == 0 and n % (16 // dtype.itemsize) == 0 and api.rows_aligned(x)
                 and (out is None or api.rows_aligned(out)))
        assert (launch.variant, launch.knobs) == ("warp_rows", (*planned[:2], -1) if whole else planned)
        got = api.FUNCTIONS[op](x, axis=-1, out=out, dtype=out_dtype)
        cupy.cuda.Device().synchronize()
        expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, dtype=out_dtype)
        reference.assert_close(cupy.asnumpy(got), expected, out_dtype, op)
        if out is not None:  # every element of the buffer outside out's view stays as poisoned
            written = cupy.zeros(out_base.shape, bool)
            written.reshape(-1)[(out.data.ptr - out_base.data.ptr) // out_dtype.itemsize
                                + (cupy.arange(m)[:, None] * (out.strides[0] // out_dtype.itemsize)
                                   + cupy.arange(n)).reshape(-1)] = True
            assert bool(cupy.isnan(out_base[~written]).all())
    finally:
        if ptr is not None:
            cupy.cuda.runtime.free(ptr)


# (id naming the path, M, N, dtype, split_row's C or None): launches whose blocks take more rows than the grid
# has blocks (auto launches a block per row group; only past the grid limit do its blocks loop)
LOOPS = [("warp_rows_16_rows_a_block", 1000, 67, dtypes.FLOAT32, None),
         ("warp_rows_one_lane", 3000, 3, dtypes.FLOAT64, None),
         ("split_row_block_per_row", 40, 2000, dtypes.BFLOAT16, 1),
         ("split_row_cluster", 9, 50257, dtypes.FLOAT32, 16), ("split_row_grid", 40, 262144, dtypes.FLOAT32, -1),
         ("split_row_grid_past_a_cluster", 20, 1048576, dtypes.FLOAT32, -1)]  # eight rows at once, S > 0


@pytest.mark.parametrize("case", LOOPS, ids=[c[0] for c in LOOPS])
def test_blocks_loop_over_rows_past_a_short_grid(rng, case):
    _, m, n, dtype, c = case
    x = draw(rng, (m, n), dtype)
    out = poisoned((m, n), dtype)
    kernel, launch = api.plan(cupy.cuda.Device().id, "auto", m, n, (dtype, dtype), api.rows_aligned(x))
    assert (launch.variant, launch.knobs[-1]) == ("warp_rows" if c is None else "split_row", launch.knobs[-1] if c is None else c)
    short = dataclasses.replace(launch, grid=3 * launch.unit)  # whole rows: a cluster's blocks, or a grid launch's
    assert short.grid < launch.grid  # every block takes several rows
    api.launch_rows(kernel, short, x, out)
    reference.assert_close(cupy.asnumpy(out), expect(x), dtype)


# (id naming the path, M, N, rows at once or None: as planned): grid launches (a tagged workspace: csm::GridBoard),
# unfolded, folded (two logical threads a thread), past a cluster, and in rounds (blocks looping over rows)
GRID_WORKSPACES = [("split_row_grid_unfolded", 32, 262144, None), ("split_row_grid_folded", 128, 128256, None),
                   ("split_row_grid_past_a_cluster", 4, 1048576, None), ("split_row_grid_in_rounds", 32, 262144, 2)]


@pytest.mark.parametrize("case", GRID_WORKSPACES, ids=[c[0] for c in GRID_WORKSPACES])
def test_a_grid_launch_reads_only_the_slots_its_own_tag_marks(rng, case):
    """A grid launch's workspace is not zeroed (api.run): the pool hands it over holding an earlier launch's slots,
    or anything. Here one workspace serves three launches in a row: on bytes of 0xff, then on the slots of the
    launch before (its tag and its rows' values, of another input) twice; each must read only its own."""
    _, m, n, at_once = case
    dtype = dtypes.FLOAT32
    kernel, launch = api.plan(cupy.cuda.Device().id, "auto", m, n, (dtype, dtype), True)
    assert launch.variant == "split_row" and launch.knobs[-1] == -1 and launch.tagged
    if at_once:
        launch = dataclasses.replace(launch, grid=at_once * launch.unit)
    workspace = cupy.full(launch.workspace, 0xFF, numpy.uint8)
    for _ in range(3):
        x = draw(rng, (m, n), dtype)
        out = poisoned((m, n), dtype)
        kernel.kernel((launch.grid,), (launch.block,), (x, out, *api.row_args(launch, x, out), workspace,
                      numpy.uint64(next(api._tags))), shared_mem=launch.smem, enable_cooperative_groups=True)
        reference.assert_close(cupy.asnumpy(out), expect(x), dtype)


def extreme_rows(rng, n, dtype):
    """Rows that reach the semantics rules: huge offsets, -inf masks, NaN, +inf, all -inf."""
    rows = rng.standard_normal((11, n)) * 3
    rows[0] += 1e4
    rows[1] -= 1e4
    rows[2, rng.random(n) < 0.5] = -numpy.inf
    rows[2, rng.integers(n)] = 0.0  # at least one finite entry
    rows[3, rng.integers(n)] = numpy.nan
    rows[4, rng.integers(n)] = numpy.inf
    rows[5] = -numpy.inf
    rows[6, : n // 2] = -numpy.inf  # leading -inf: the online variant's first update
    rows[7, 0], rows[7, -1] = numpy.inf, -numpy.inf
    rows[8] *= 30  # logits up to about +-300: exp underflows, -ftz flushes
    rows[9, 4:] = -numpy.inf  # NaN first, then a run of -inf: lanes holding only -inf must write NaN too
    rows[9, 0] = numpy.nan
    rows[10, 4:] = -numpy.inf  # the same with +inf
    rows[10, 0] = numpy.inf
    return cupy.asarray(rows.astype(dtype))


@pytest.mark.parametrize("n", [33, 1025, 5000], ids=["n33_warp_tail", "n1025_block_tail", "n5000_vector_body"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("variant, op", VARIANT_OPS, ids=VARIANT_OP_IDS)
def test_extreme_values_follow_the_semantics(rng, variant, op, dtype, n):
    x = extreme_rows(rng, n, dtype)
    out = poisoned(x.shape, dtype)
    function = api.FUNCTIONS[op]
    if refuses(variant, n, dtype, aligned=n * dtype.itemsize % 16 == 0):
        with pytest.raises(UnsuitableVariant):
            function(x, axis=-1, out=out, variant=variant)
        return
    function(x, axis=-1, out=out, variant=variant)
    got = cupy.asnumpy(out)
    reference.assert_close(got, reference.REFERENCES[op](cupy.asnumpy(x), -1), dtype, op)
    nan_rows = numpy.isnan(got).all(axis=1)
    assert list(nan_rows) == [False, False, False, True, True, True, False, True, False, True, True]
    if op == registry.LOG_SOFTMAX:  # -inf stays -inf; logits of +-300 stay finite (no log of an underflow)
        assert numpy.isneginf(got[2]).any() and numpy.isfinite(got[8]).all()


# The mixed kernels store two 16-byte words a chunk where out's row lines up with x's chunks (stores_aligned in
# kernels/common.cuh): contiguous rows; both views one element in (a float32 row 4 bytes in, a 2-byte row 2 bytes
# in: lined up on every row); x alone one in (lined up where x's row is 0 or 8 bytes into a chunk: of these six
# rows only row 3; element stores on the rest).
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("in_dtype", [dtypes.FLOAT16, dtypes.BFLOAT16], ids=dtypes.name)
@pytest.mark.parametrize("variant", VARIANTS)
def test_dtype_float32_from_half_precision_uses_the_mixed_kernel(rng, variant, in_dtype, layout):
    x, out, out_base = operands(rng, 6, 1000, in_dtype, dtypes.FLOAT32, layout)
    got = softmax(x, axis=-1, dtype="float32", out=out, variant=variant)
    assert got is out and got.dtype == numpy.float32
    reference.assert_close(cupy.asnumpy(got), expect(x), numpy.float32)
    if layout == "x_and_out_offset_views":  # the column before the view must stay untouched
        assert bool(cupy.isnan(out_base[:, 0]).all())


def test_dtype_narrower_than_input_casts_first(rng):
    x = draw(rng, (4, 1000), numpy.float32)
    got = softmax(x, axis=-1, dtype=numpy.float16)
    assert got.dtype == numpy.float16
    reference.assert_close(cupy.asnumpy(got), expect(x.astype(numpy.float16)), numpy.float16)


@pytest.mark.parametrize("variant", VARIANTS)
def test_rows_sum_to_one_and_shift_invariance(rng, variant):
    x = draw(rng, (64, 1000), numpy.float32)
    y = softmax(x, axis=-1, variant=variant)
    numpy.testing.assert_allclose(cupy.asnumpy(y.sum(axis=-1, dtype=numpy.float64)), 1.0, rtol=1e-5)
    shifted = softmax(x + numpy.float32(100), axis=-1, variant=variant)
    reference.assert_close(cupy.asnumpy(shifted), cupy.asnumpy(y).astype(numpy.float64), numpy.float32)


@pytest.mark.parametrize(
    "shape, axis",
    [((6, 70), 0), ((3, 4, 50), (1, 2)), ((3, 4, 50), (0, 2)), ((5, 7), None), ((2, 3, 9), -2), ((30,), 0)],
    ids=["axis0_strided_in_place", "trailing_pair_row_view", "split_axes_copy", "none_all_axes", "negative_axis",
         "one_dim"],
)
def test_axes(rng, shape, axis):
    x = draw(rng, shape, numpy.float32)
    out = poisoned(shape, numpy.float32)
    softmax(x, axis=axis, out=out)
    reference.assert_close(cupy.asnumpy(out), expect(x, axis), numpy.float32)


@pytest.mark.parametrize(
    "make_x",
    [lambda a: a[::-1], lambda a: a[:, ::2], lambda a: a.T.copy().T, lambda a: a[1:-1]],
    ids=["negative_row_stride", "strided_columns_copy", "fortran_order_copy", "inner_rows_view"],
)
def test_non_contiguous_inputs(rng, make_x):
    x = make_x(draw(rng, (40, 130), numpy.float32))
    out = poisoned(x.shape, numpy.float32)
    softmax(x, axis=-1, out=out)
    reference.assert_close(cupy.asnumpy(out), expect(x), numpy.float32)


def test_out_that_is_not_row_contiguous_goes_through_a_temporary(rng):
    x = draw(rng, (16, 200), numpy.float32)
    base = poisoned((200, 16), numpy.float32)
    out = base.T
    assert softmax(x, axis=-1, out=out) is out
    reference.assert_close(cupy.asnumpy(out), expect(x), numpy.float32)


def test_out_aliasing_the_input_is_served(rng):
    x = draw(rng, (8, 300), numpy.float32)
    want = expect(x)
    softmax(x, axis=-1, out=x)
    reference.assert_close(cupy.asnumpy(x), want, numpy.float32)


def test_output_without_out_is_fully_written(rng):
    x = draw(rng, (33, 777), numpy.float32)
    stale = poisoned(x.shape, numpy.float32)  # freed to the pool; the result likely reuses its block
    del stale
    y = softmax(x, axis=-1)
    assert not bool(cupy.isnan(y).any())
    reference.assert_close(cupy.asnumpy(y), expect(x), numpy.float32)


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (0,)], ids=["no_rows", "empty_rows", "empty_1d"])
def test_empty_input_gives_empty_output(shape):
    x = cupy.empty(shape, numpy.float32)
    y = softmax(x, axis=-1)
    assert y.shape == shape and y.dtype == numpy.float32


def test_bad_input_raises_before_launch_and_the_next_call_works(rng):
    x = draw(rng, (4, 100), numpy.float32)
    cases = [
        (TypeError, dict(x=x.astype(numpy.int32))),
        (TypeError, dict(x=x.astype(numpy.complex64))),
        (ValueError, dict(x=x, variant="nope")),
        (numpy.exceptions.AxisError, dict(x=x, axis=2)),
        (ValueError, dict(x=x, axis=(1, 1))),
        (ValueError, dict(x=x, out=cupy.empty((4, 99), numpy.float32))),
        (TypeError, dict(x=x, out=cupy.empty((4, 100), numpy.float16))),
        (TypeError, dict(x=x, out=numpy.empty((4, 100), numpy.float32))),
        (UnsuitableVariant, dict(x=draw(rng, (2, 50257), numpy.float32), variant="registers")),
    ]
    for error, kwargs in cases:
        with pytest.raises(error):
            softmax(kwargs.pop("x"), axis=kwargs.pop("axis", -1), **kwargs)
        y = softmax(x, axis=-1)
        reference.assert_close(cupy.asnumpy(y), expect(x), numpy.float32)


def test_unsuitable_variant_says_why_and_which_can(rng):
    x = draw(rng, (2, 50257), numpy.float64)
    with pytest.raises(UnsuitableVariant, match=r"402072 bytes.*variants that can: naive, smem_tree, warp, block, online, split_row, two_pass$"):
        softmax(x, axis=-1, variant="smem_cached")


@pytest.mark.parametrize(
    "m, n, dtype",
    [(9, 1048576 + 3, numpy.float32),  # 4 MB rows, six a group on a 50 MB L2: groups of 6 and 3
     (3, 4194304 + 1, numpy.float16),  # 8 MB rows: one group of three
     (2, 3 * 2**20 + 5, numpy.float64)],  # 24 MB rows: a row a group, two groups
    ids=["two_pass_short_last_group_f32", "two_pass_one_group_f16", "two_pass_row_a_group_f64"],
)
def test_two_pass_over_groups_of_rows(rng, m, n, dtype):
    x = draw(rng, (m, n + 1), dtype)[:, 1:]  # misaligned rows: partial first and last chunks
    out = poisoned(x.shape, dtype)
    assert softmax(x, axis=-1, out=out, variant="two_pass") is out
    reference.assert_close(cupy.asnumpy(out), expect(x), dtype)


@pytest.mark.parametrize("variant", ["auto", *VARIANTS])
def test_same_input_same_bits(rng, variant):
    x = draw(rng, (300, 1000), numpy.float32)
    first = softmax(x, axis=-1, variant=variant)
    assert bool((softmax(x, axis=-1, variant=variant) == first).all())


def test_torch_tensors_are_viewed_without_a_copy(rng):
    torch = pytest.importorskip("torch")
    t = torch.randn(16, 500, device="cuda") * 3
    from cupysoftmax import api

    assert api.as_cupy(t).data.ptr == t.data_ptr()
    got = softmax(t, axis=-1)
    want = torch.softmax(t.double(), dim=-1).cpu().numpy()
    reference.assert_close(cupy.asnumpy(got), want, numpy.float32)


def test_cupyx_scipy_signature_is_a_drop_in(rng):
    special = pytest.importorskip("cupyx.scipy.special")
    x = draw(rng, (3, 4, 5), numpy.float64)
    for axis in (None, 1, (0, 2)):
        numpy.testing.assert_allclose(cupy.asnumpy(softmax(x, axis)), cupy.asnumpy(special.softmax(x, axis)),
                                      rtol=1e-12)


@pytest.mark.parametrize("m, n", [(64, 1100), (8, 32000), (4096, 100)],
                         ids=["split_row_block", "split_row_cluster16", "warp_rows"])
def test_remembered_calls_stay_correct(rng, m, n):
    # the second call of a (shape, strides, dtype, axis) takes the remembered launch
    from cupysoftmax import api

    softmax(draw(rng, (2, 3), numpy.float32))  # the process's first call binds cupy.ndarray for the fast path
    api.remembered_calls().clear()
    for call in range(2):
        x = draw(rng, (m, n), numpy.float32)
        remembered = [key for key in api.remembered_calls() if key[:4] == (x.shape, x.strides, x.dtype, -1)]
        assert len(remembered) == call  # the first call plans, the second finds it remembered
        reference.assert_close(cupy.asnumpy(softmax(x, axis=-1)), expect(x), numpy.float32)
    view = draw(rng, (m, n + 1), numpy.float32)[:, 1:]  # same shape, other strides and alignment
    for _ in range(2):
        reference.assert_close(cupy.asnumpy(softmax(view, axis=-1)), expect(view), numpy.float32)
    half = draw(rng, (m, n), numpy.float16)  # same shape, other dtype
    reference.assert_close(cupy.asnumpy(softmax(half, axis=-1)), expect(half), numpy.float16)


@pytest.mark.parametrize("m, n", [(64, 1100), (4096, 100)], ids=["split_row_block", "warp_rows"])
def test_remembered_calls_with_out(rng, m, n):
    # out= is remembered with x (the same path as out=None); an out that
    # overlaps x (in place) leaves the remembered path for the copying one
    from cupysoftmax import api

    softmax(draw(rng, (2, 3), numpy.float32))  # the process's first call binds cupy.ndarray for the fast path
    api.remembered_calls().clear()
    for call in range(3):
        x = draw(rng, (m, n), numpy.float32)
        out = cupy.full((m, n), numpy.nan, numpy.float32)
        assert softmax(x, axis=-1, out=out) is out
        reference.assert_close(cupy.asnumpy(out), expect(x), numpy.float32)
        assert len(api.remembered_calls()) == 1  # remembered after the first call, found on the others
    x = draw(rng, (m, n), numpy.float32)
    want = expect(x)
    assert softmax(x, axis=-1, out=x) is x  # in place: same metadata as the remembered out
    reference.assert_close(cupy.asnumpy(x), want, numpy.float32)
