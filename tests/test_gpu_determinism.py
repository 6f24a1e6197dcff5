"""Determinism on the GPU: the same input gives the same bits on every run, and a row's bits do not
depend on how many rows surround it (batch invariance), for every variant `auto` picks.

Each case names the path auto takes for it on the H100 (asserted through api.plan and
api.plan_columns, the plans the calls use) and runs softmax and log_softmax, each also with scale=
and where=, and both gradients. Batches are prefixes x[:M] of one array, so every row keeps its
address; a row alone is a one-row copy where rows are whole 16-byte chunks, and a one-row
view otherwise: the chunk kernels cut a row at 16-byte boundaries, so a row's sums follow
its offset from one, which a copy would change.

A row's bits follow from its launch: auto may cut a row differently for another number of
rows (split_row's cluster size C), but split_row fixes the tree that combines a row's
partials by the row's logical threads alone (kernels/split_row.cu: one block folds four of them
a thread where clusters give each its own), and two_pass slices a row by its length
alone, so any difference fails (its message names both launches). On the H100 the split_row
cases for rows of 10000 and more take another C for 1 and 3 rows than for the whole batch
(the bfloat16 and float64 cases added after the last GPU run, 8f1fde6), and the float32 rows
of 100003, 128256 and 262144 go on the grid (C = -1, or 0 with the options) for the half batch and
the whole one (where the clusters of their smaller batches write from the row's (max, sum), as the
grid does); rows past a
cluster (float32 1048573 and 4194307) take the grid for any number of rows, log_softmax's gradient too where
the grid's T = 32768 holds dy in registers (1048573), else two_pass (4194307), softmax's gradient two_pass.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import api, dtypes, gradients, reference
from cupysoftmax import variants as registry
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

# the forward ops with scale= and where= (fused into warp_rows, split_row, two_pass), by the op they call
MASKED = {"softmax_scale_where": registry.SOFTMAX, "log_softmax_scale_where": registry.LOG_SOFTMAX}
ROW_OPS = [*registry.FORWARD, *MASKED, *registry.BACKWARD]
COLUMN_OPS = registry.FORWARD

# the variant planned by op, where the forward ops and the gradients part ways: rows past a cluster that
# log_softmax's gradient holds on the grid (softmax's has no grid kernel), and rows past what it holds there
PAST_A_CLUSTER = {**dict.fromkeys((registry.SOFTMAX, registry.LOG_SOFTMAX, *MASKED), "split_row"),
                  registry.LOG_SOFTMAX_BACKWARD: "split_row", registry.SOFTMAX_BACKWARD: "two_pass"}
PAST_THE_GRADIENTS_GRID = {**PAST_A_CLUSTER, registry.LOG_SOFTMAX_BACKWARD: "two_pass"}

# (id naming the path on the H100, shape (batch first), axis, dtype, variant asked, variant planned (or by op))
CASES = [
    ("warp_rows_n300", (300, 300), -1, dtypes.FLOAT32, "auto", "warp_rows"),
    ("warp_rows_n77_misaligned_rows", (300, 77), -1, dtypes.BFLOAT16, "auto", "warp_rows"),
    # plain float32 rows of N % V != 0 and float64 rows of any N: the element-strided kernels (O = -2) on layouts of
    # their own
    ("warp_rows_element_strided_n99", (300, 99), -1, dtypes.FLOAT32, "auto", "warp_rows"),
    ("warp_rows_element_strided_f64_n41", (300, 41), -1, dtypes.FLOAT64, "auto", "warp_rows"),
    ("warp_rows_element_strided_f64_n96_whole_chunks", (300, 96), -1, dtypes.FLOAT64, "auto", "warp_rows"),
    ("split_row_block_n4096", (200, 4096), -1, dtypes.FLOAT32, "auto", "split_row"),
    ("split_row_block_n3001_misaligned_rows", (200, 3001), -1, dtypes.FLOAT16, "auto", "split_row"),
    # a block with a shared-memory part folding four logical threads a thread, or clusters of 4096 threads;
    # the gradients' clusters (here and below) loop over the 200 rows, at least twice the clusters the GPU holds
    # (planner.persistent; H200: 45 of 8 in float32, 92 of 4 in bfloat16), and over batches down to that
    # (float32's 100 rows too); a cluster a row below it
    ("split_row_fold_or_clusters_n50257", (200, 50257), -1, dtypes.FLOAT32, "auto", "split_row"),
    # the same for half precision: 512 threads with a shared-memory part, two blocks an SM (SPLIT_TWO_BLOCKS)
    ("split_row_two_blocks_fold_or_clusters_bf16_n50257", (200, 50257), -1, dtypes.BFLOAT16, "auto", "split_row"),
    ("split_row_fold_or_clusters_bf16_n128256", (140, 128256), -1, dtypes.BFLOAT16, "auto", "split_row"),
    ("split_row_block_or_clusters_n32000", (200, 32000), -1, dtypes.FLOAT32, "auto", "split_row"),
    # clusters for few rows, blocks anywhere on the grid from 24 / 16 rows (planner: SPLIT_GRID_FROM_ROWS);
    # 128256 folds two logical threads a thread there past 33 rows (SPLIT_GRID_FOLD), 100003 past the rows
    # the grid holds unfolded
    ("split_row_clusters_or_grid_n128256", (140, 128256), -1, dtypes.FLOAT32, "auto", "split_row"),
    ("split_row_clusters_or_grid_n100003", (60, 100003), -1, dtypes.FLOAT32, "auto", "split_row"),
    ("split_row_clusters_or_grid_n262144", (40, 262144), -1, dtypes.FLOAT32, "auto", "split_row"),
    # other kernels' arithmetic: bfloat16 (one block of 1024 or 16 of 64), float64 (log_softmax's 640
    # threads a row not rounded: one block or 4 of 160; the gradients clusters of 4, 8 or 16)
    ("split_row_block_or_clusters_bf16_n65536", (200, 65536), -1, dtypes.BFLOAT16, "auto", "split_row"),
    ("split_row_block_or_clusters_f64_n10000", (200, 10000), -1, dtypes.FLOAT64, "auto", "split_row"),
    # past a cluster: split_row on the grid (8 rows at once; log_softmax's gradient 4, 8 chunks of dy a thread,
    # its 262144 at most on a row of any phase: 2^20 - 3 elements)
    ("past_a_cluster_n1048573", (9, 2**20 - 3), -1, dtypes.FLOAT32, "auto", PAST_A_CLUSTER),
    # 1048578 chunks: the grid's blocks of 8 warps, each reducing four groups of the row's 32 (G = 4), two rows
    # at once, so the batch of three loops; past what log_softmax's gradient holds on the grid: two_pass
    ("past_a_cluster_four_groups_a_warp_n4194307", (3, 2**22 + 3), -1, dtypes.FLOAT32, "auto",
     PAST_THE_GRADIENTS_GRID),
    ("two_pass_f64_n524291", (9, 2**19 + 3), -1, dtypes.FLOAT64, "auto", "two_pass"),
    # auto takes online only for rows past 2^31 elements (gigabytes a row): asked by name here
    ("online_by_name_n5000", (64, 5000), -1, dtypes.FLOAT32, "online", "online"),
    ("strided_one_block_n100", (64, 100, 45), 1, dtypes.FLOAT32, "auto", "strided"),
    ("strided_cluster_n2500_rows_82_bytes_apart", (8, 2500, 41), 1, dtypes.BFLOAT16, "auto", "strided"),
    ("strided_smem_cluster_n3000", (8, 3000, 48), 1, dtypes.FLOAT32, "auto", "strided_smem"),
]


def case_ops():
    """(case, op) pairs: every op the planned variant computes (masked: where it takes options)."""
    pairs = []
    for case in CASES:
        if isinstance(case[-1], dict):
            pairs += [(case, op) for op in case[-1]]
            continue
        v = registry.VARIANTS[case[-1]]
        ops = COLUMN_OPS if v.layout == registry.COLUMNS else ROW_OPS
        pairs += [(case, op) for op in ops if (v.fused if op in MASKED else op in v.ops)]
    return pairs


CASE_OPS = case_ops()
CASE_OP_IDS = [f"{case[0]}-{op}" for case, op in CASE_OPS]


def inputs(rng, op, shape, axis, dtype, variant):
    """The full batch's arrays for `op`: (x,), (x, mask), or the gradients' (y, dy)."""
    x = draw(rng, shape, dtype)
    if op in MASKED:
        return x, cupy.asarray(rng.random(shape) < 0.7)
    if op in registry.BACKWARD:
        y = api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=axis, variant=variant)
        return y, draw(rng, shape, dtype, scale=1.0)
    return (x,)


def call(op, arrays, axis, variant):
    """op over `arrays` (inputs' layout), written into a poisoned output."""
    out = poisoned(arrays[0].shape, arrays[0].dtype)
    if op in MASKED:
        x, mask = arrays
        return api.FUNCTIONS[MASKED[op]](x, axis=axis, out=out, variant=variant, scale=1.7, where=mask)
    if op in registry.BACKWARD:
        return gradients.GRADIENTS[op](*arrays, axis=axis, out=out, variant=variant)
    return api.FUNCTIONS[op](arrays[0], axis=axis, out=out, variant=variant)


def launch_of(op, arrays, axis, variant):
    """The launch the call plans: (variant, knobs, blockDim, shared bytes, split_row's S or two_pass's slices)."""
    a = arrays[0]
    kernel_op = MASKED.get(op, op)
    if axis != -1:
        view = api.columns_view(a.shape, a.strides, a.itemsize, api.normalize_axes(axis, a.ndim))
        launch = api.plan_columns(a.device.id, variant, *view[:3], (a.dtype, a.dtype), kernel_op,
                                  api.columns_aligned(view, a.itemsize))[1]
    else:
        rows = api.rows_view(a, (a.ndim - 1,))
        launch = api.plan(a.device.id, variant, *rows.shape, (a.dtype, a.dtype), api.rows_aligned(rows), kernel_op,
                          masked=op in MASKED)[1]
    return launch.variant, launch.knobs, launch.block, launch.block_y, launch.smem, tuple(map(int, launch.args[:1]))


def bits(a) -> numpy.ndarray:
    return cupy.asnumpy(a).view(numpy.uint8)


def check_reference(op, arrays, got, axis):
    host = [cupy.asnumpy(a) for a in arrays]
    dtype = arrays[0].dtype
    if op in MASKED:
        want = reference.REFERENCES[MASKED[op]](host[0], axis, scale=1.7, where=host[1])
        reference.assert_close(cupy.asnumpy(got), want, dtype, MASKED[op])
    elif op in registry.BACKWARD:
        want = reference.GRADIENTS[op](*host, axis=axis)
        reference.assert_close(cupy.asnumpy(got), want, dtype, op, reference.gradient_scale(*host, op, axis))
    else:
        reference.assert_close(cupy.asnumpy(got), reference.REFERENCES[op](host[0], axis), dtype, op)


@pytest.mark.parametrize("case, op", CASE_OPS, ids=CASE_OP_IDS)
def test_same_input_same_bits_on_every_run(rng, case, op):
    _, shape, axis, dtype, variant, planned = case
    planned = planned[op] if isinstance(planned, dict) else planned
    arrays = inputs(rng, op, shape, axis, dtype, variant)
    assert launch_of(op, arrays, axis, variant)[0] == planned
    first = call(op, arrays, axis, variant)
    check_reference(op, arrays, first, axis)
    for _ in range(3):
        assert numpy.array_equal(bits(call(op, arrays, axis, variant)), bits(first))


def alone(a, row: int):
    """Row `row` of a batch as a batch of one: a copy where every row starts on a 16-byte boundary, else a view."""
    one = a[row:row + 1]
    whole_chunks = a.ndim == 3 or (a.strides[0] % 16 == 0 and a.data.ptr % 16 == 0)
    return one.copy() if whole_chunks else one


@pytest.mark.parametrize("case, op", CASE_OPS, ids=CASE_OP_IDS)
def test_a_row_has_the_same_bits_alone_and_in_batches_of_any_size(rng, case, op):
    _, shape, axis, dtype, variant, planned = case
    planned = planned[op] if isinstance(planned, dict) else planned
    arrays = inputs(rng, op, shape, axis, dtype, variant)
    full = call(op, arrays, axis, variant)
    full_launch = launch_of(op, arrays, axis, variant)
    assert full_launch[0] == planned
    total = shape[0]
    # 33 rows: the most the grid's unfolded cut of 128256 float32 holds at once on the H100 (log_softmax folds past it)
    prefixes = {1, 3, total // 2} | ({33} if total > 33 else set())
    runs = [(f"the first {m} rows", slice(0, m), tuple(a[:m] for a in arrays)) for m in sorted(prefixes)]
    runs += [(f"row {r} alone", slice(r, r + 1), tuple(alone(a, r) for a in arrays)) for r in sorted({1, total - 1})]
    for what, rows, batch in runs:
        launch = launch_of(op, batch, axis, variant)
        assert launch[0] == planned, what
        same = numpy.array_equal(bits(call(op, batch, axis, variant)), bits(full[rows]))
        assert same, f"{what}: bits differ from the batch of {total} (launch {launch} against {full_launch})"


# Rows in a batch whose rows are not all on 16-byte boundaries: the first N columns of rows `pitch` elements long.
# A row of whole chunks (N % V == 0) there takes warp_rows' plain kernel on Slots (O = 0) and alone on a boundary
# its twin on whole chunks (O = -1), which sum alike; a row of N % V != 0, and a float64 row of any N, takes the
# element-strided kernel (O = -2) in the batch and alone, at any phase. (id naming the paths, dtype, rows, N, pitch, knobs in the batch, knobs of
# row 0 alone)
OFF_PHASE_BATCHES = [("slots_or_whole_chunks_n32_eight_lanes", dtypes.FLOAT32, 200, 32, 34, (8, 1, 0), (8, 1, -1)),
                     ("slots_or_whole_chunks_n128", dtypes.FLOAT32, 200, 128, 130, (16, 2, 0), (16, 2, -1)),
                     ("element_strided_n99", dtypes.FLOAT32, 200, 99, 102, (16, 2, -2), (16, 2, -2)),
                     # past 128 chunks (planner.AUTO_FIRST_PLAIN_WIDE)
                     ("slots_or_whole_chunks_n1024_full_warp", dtypes.FLOAT32, 200, 1024, 1026, (32, 8, 0),
                      (32, 8, -1)),
                     ("element_strided_n1023_full_warp", dtypes.FLOAT32, 200, 1023, 1026, (32, 8, -2), (32, 8, -2)),
                     ("element_strided_f64_n45", dtypes.FLOAT64, 200, 45, 47, (8, 4, -2), (8, 4, -2)),
                     ("element_strided_f64_n64_whole_chunks", dtypes.FLOAT64, 200, 64, 67, (8, 4, -2), (8, 4, -2))]


@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("case", OFF_PHASE_BATCHES, ids=[c[0] for c in OFF_PHASE_BATCHES])
def test_rows_out_of_phase_in_a_batch_have_the_bits_they_have_alone(rng, case, op):
    _, dtype, m, n, pitch, batch_knobs, alone_knobs = case
    x = draw(rng, (m, pitch), dtype)[:, :n]
    for a, knobs in ((x, batch_knobs), (x[:1], alone_knobs)):  # call's output: contiguous, as poisoned() makes it
        rows, out = api.rows_view(a, (1,)), api.rows_view(poisoned(a.shape, dtype), (1,))
        launch = api.plan(x.device.id, "auto", *rows.shape, (dtype, dtype), api.rows_aligned(rows), op,
                          y_aligned=api.rows_aligned(out))[1]
        assert (launch.variant, launch.knobs) == ("warp_rows", knobs)
    full = call(op, (x,), -1, "auto")
    check_reference(op, (x,), full, -1)
    for r in (0, 1, 2, 3, m - 1):  # rows at every 16-byte phase the pitch gives
        same = numpy.array_equal(bits(call(op, (x[r:r + 1],), -1, "auto")), bits(full[r:r + 1]))
        assert same, f"row {r} alone: bits differ from the batch of {m}"


# Launches auto plans on a plain kernel (the fused options compiled out: warp_rows O = 0, split_row R = 0,
# or R = -4 the plain fold; registry.plain_knob at that value), named by that path on the H100; rows of
# 3001 and 50257 start mid-chunk.
PLAIN_CASES = [("warp_rows_plain_n300", (200, 300), dtypes.FLOAT32, "warp_rows", 0),
               ("split_row_plain_n1100", (200, 1100), dtypes.FLOAT32, "split_row", 0),  # float32 to 1024: warp_rows
               ("split_row_plain_bf16_n4096", (200, 4096), dtypes.BFLOAT16, "split_row", 0),
               ("split_row_plain_n32000", (200, 32000), dtypes.FLOAT32, "split_row", 0),
               ("split_row_plain_f16_n3001_misaligned_rows", (200, 3001), dtypes.FLOAT16, "split_row", 0),
               ("split_row_plain_fold_bf16_n128256", (128, 128256), dtypes.BFLOAT16, "split_row", -4),
               ("split_row_plain_fold_n50257_misaligned_rows", (200, 50257), dtypes.FLOAT32, "split_row", -4),
               ("split_row_plain_fold_two_blocks_f16_n50257", (200, 50257), dtypes.FLOAT16, "split_row", -4)]


@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("case", PLAIN_CASES, ids=[c[0] for c in PLAIN_CASES])
def test_a_plain_kernel_gives_the_bits_of_its_twin_that_reads_the_options(rng, case, op):
    # scale 1 and no mask as constants change no bit (common.cuh, FastExp::scaled): the plain kernel and the
    # kernel that calls with options run, on the same launch with the options left at their defaults
    _, shape, dtype, variant, knob = case
    x = draw(rng, shape, dtype)
    pair, device_id = (dtype, dtype), cupy.cuda.Device().id
    aligned = x.strides[0] % 16 == 0
    plain, launch = api.plan(device_id, "auto", *shape, pair, aligned, op)
    twin, with_options = api.plan(device_id, "auto", *shape, pair, aligned, op, with_options=True)
    assert launch.variant == variant and launch.knobs[registry.VARIANTS[variant].plain_knob] == knob
    assert with_options.knobs != launch.knobs and (with_options.grid, with_options.block) == (launch.grid, launch.block)
    assert_same_bits((x,), op, launch, plain, twin)


def assert_same_bits(arrays, op, launch, kernel, twin):
    """`kernel` matches the reference and `twin` writes its bits, each on `launch` over `arrays` (x, or a gradient's
    y and dy, rows of the same stride) into a poisoned output."""
    results = []
    for k in (kernel, twin):
        out = poisoned(arrays[0].shape, arrays[0].dtype)
        if op in registry.BACKWARD:
            m, n = out.shape
            api.run(k, launch, (*arrays, out, m, n, *(a.strides[0] // a.itemsize for a in (*arrays, out))))
        else:
            api.launch_rows(k, launch, arrays[0], out)
        results.append(out)
    check_reference(op, arrays, results[0], -1)
    assert numpy.array_equal(bits(results[0]), bits(results[1]))


# Launches auto plans on warp_rows' kernel on whole chunks (O = -1: every row of x and y, or of a gradient's y, dy
# and dx, on a 16-byte boundary, N a multiple of a chunk), run beside its kernel of any phase (O = 0) on the same
# launch: the same values in the same order, so the same bits (kernels/warp_rows.cu). A float64 row of two chunks or
# more takes the forward's element-strided kernel (O = -2) whatever its phase (planner.ELEMENT_STRIDED_WHOLE_ROWS),
# so float64 reaches the forward's twin with one chunk only; the gradients have no element-strided kernels.
WHOLE_CASES = [("warp_rows_whole_n64_eight_lanes", (1000, 64), dtypes.FLOAT32),
               ("warp_rows_whole_n300_full_warp_four_chunks", (200, 300), dtypes.FLOAT32),
               ("warp_rows_whole_bf16_n1024_full_warp", (200, 1024), dtypes.BFLOAT16),
               ("warp_rows_whole_f16_n8_one_lane", (300, 8), dtypes.FLOAT16),
               ("warp_rows_whole_f64_n2_one_chunk", (301, 2), dtypes.FLOAT64)]
GRADIENT_WHOLE_CASES = [*WHOLE_CASES, ("warp_rows_grad_whole_f64_n6_four_lanes", (301, 6), dtypes.FLOAT64)]
WHOLE_CASE_OPS = ([(c, op) for op in registry.FORWARD for c in WHOLE_CASES]
                  + [(c, op) for op in registry.BACKWARD for c in GRADIENT_WHOLE_CASES])


@pytest.mark.parametrize("case, op", WHOLE_CASE_OPS, ids=[f"{c[0]}-{op}" for c, op in WHOLE_CASE_OPS])
def test_warp_rows_on_whole_chunks_gives_the_bits_of_its_kernel_of_any_phase(rng, case, op):
    _, shape, dtype = case
    x = draw(rng, shape, dtype)
    if op in registry.BACKWARD:  # a gradient's y (the forward's output) and dy
        arrays = (api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=-1), draw(rng, shape, dtype, scale=1.0))
    else:
        arrays = (x,)
    pair, device_id = (dtype, dtype), cupy.cuda.Device().id
    whole, launch = api.plan(device_id, "auto", *shape, pair, True, op, y_aligned=True)
    plain, plain_launch = api.plan(device_id, "auto", *shape, pair, True, op)
    assert (launch.variant, launch.knobs[-1], plain_launch.knobs[-1]) == ("warp_rows", -1, 0)
    assert (launch.knobs[:-1], launch.grid, launch.block) == (plain_launch.knobs[:-1], plain_launch.grid,
                                                              plain_launch.block)
    assert_same_bits(arrays, op, launch, whole, plain)
