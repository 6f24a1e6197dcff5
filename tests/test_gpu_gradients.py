"""softmax_backward and log_softmax_backward on the GPU against the float64 reference.

y is the forward's own output (softmax or log_softmax of fresh standard normal
x 3), dy fresh standard normal; dx is poisoned with NaN before every launch and
compared with reference.GRADIENTS within reference.gradient_scale.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, device, dtypes, gradients, reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import SPLIT_GRID_BACKWARD_FROM_ROWS
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

VARIANTS = ["auto", *(name for name, v in registry.VARIANTS.items() if registry.SOFTMAX_BACKWARD in v.ops)]
DTYPES = [dtypes.FLOAT16, dtypes.BFLOAT16, dtypes.FLOAT32, dtypes.FLOAT64]

# (id naming the code path it reaches on the H100, M, N)
SHAPES = [
    ("n1_one_lane", 5, 1),
    ("n33_warp_rows_tail", 5, 33),
    ("n1000_warp_rows_full_warp", 4, 1000),  # 2-byte rows (float32 and float64 gradients: split_row)
    ("n4097_split_row_block_tail", 3, 4097),
    ("n50257_split_row_cluster", 2, 50257),
    ("m1_single_row", 1, 2049),
    ("m5000_many_rows_warp_rows", 5000, 67),
    ("n32000_half_rows_past_one_block_cluster", 4, 32000),  # half precision: y and dy outgrow a block's registers
    ("n150001_clusters_of_16", 2, 150_001),  # split_row's largest clusters in every type; two_pass by name
]
# y, dy and dx contiguous; all three views one element in (same misalignment);
# dy misaligned against y (the kernels pair their chunks: one contiguous copy of each);
# dx misaligned against y and dy (dx's element stores).
LAYOUTS = ["contiguous", "offset_views", "dy_misaligned_against_y", "dx_misaligned_against_y"]


def inputs(rng, op, shape, dtype, layout):
    m, n = shape
    wide = (m, n + 1)
    x = draw(rng, wide if layout == "offset_views" else shape, dtype)
    y = api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=-1)
    dy = draw(rng, wide if layout in ("dy_misaligned_against_y", "offset_views") else shape, dtype, scale=1.0)
    if layout == "offset_views":
        return y[:, 1:], dy[:, 1:], poisoned(wide, dtype)[:, 1:]
    if layout == "dy_misaligned_against_y":
        return y, dy[:, 1:], poisoned(shape, dtype)
    if layout == "dx_misaligned_against_y":
        return y, dy, poisoned(wide, dtype)[:, 1:]
    return y, dy, poisoned(shape, dtype)


def check(op, y, dy, dx, dtype, axis=-1):
    y_host, dy_host = cupy.asnumpy(y), cupy.asnumpy(dy)
    expected = reference.GRADIENTS[op](y_host, dy_host, axis=axis)
    reference.assert_close(cupy.asnumpy(dx), expected, dtype, op, reference.gradient_scale(y_host, dy_host, op, axis))


# split_row's log_softmax gradient in float64 at 8 chunks a thread takes 102 registers on sm_90
# (softmax's 96, `cupysoftmax build`): too few threads a block for a 16-block cluster to hold
# y and dy of 150001 doubles (refused on the H100, 2026-11-22).
SPLIT_ROW_REFUSES = {(registry.LOG_SOFTMAX_BACKWARD, numpy.dtype(numpy.float64), 150_001)}


def refuses(variant, op, n, dtype):
    """The variants a refusal names, or None where `variant` serves the row.

    warp_rows holds a row in one warp: 32 lanes x 8 chunks of 16 bytes (a
    misaligned row one chunk more); split_row holds it in a cluster's registers.
    """
    beyond_split_row = (op, numpy.dtype(dtype), n) in SPLIT_ROW_REFUSES
    if variant == "split_row" and beyond_split_row:
        return "two_pass"
    if variant == "warp_rows" and -(-(n + 16 // dtype.itemsize - 1) // (16 // dtype.itemsize)) > 256:
        return "two_pass" if beyond_split_row else "split_row, two_pass"
    return None


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("op", registry.BACKWARD)
@pytest.mark.parametrize("variant", VARIANTS)
def test_matches_reference(rng, variant, op, dtype, case, layout):
    _, m, n = case
    y, dy, dx = inputs(rng, op, (m, n), dtype, layout)
    function = gradients.GRADIENTS[op]
    can = refuses(variant, op, n, dtype)
    if can:
        with pytest.raises(UnsuitableVariant, match=f"variants that can: {can}$"):
            function(y, dy, out=dx, variant=variant)
        return
    assert function(y, dy, out=dx, variant=variant) is dx
    check(op, y, dy, dx, dtype)


# (layout, O warp_rows runs): the twin on whole chunks (O = -1) where the rows of y, dy and dx the kernel reads and
# writes all start on 16-byte boundaries (contiguous ones, dy's contiguous copy, a fresh dx for an out= that aliases
# y), else the kernel of any phase (O = 0)
GRADIENT_PHASES = [("contiguous", -1), ("offset_views", 0), ("dy_misaligned_against_y", -1),
                   ("dx_misaligned_against_y", 0), ("out_is_y", -1)]


@pytest.mark.parametrize("layout, o", GRADIENT_PHASES, ids=[c[0] for c in GRADIENT_PHASES])
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_warp_rows_gradients_take_the_twin_on_whole_chunks_where_every_row_is(rng, monkeypatch, op, layout, o):
    y, dy, dx = inputs(rng, op, (64, 512), dtypes.FLOAT32, "contiguous" if layout == "out_is_y" else layout)
    # the gradient's launches, not the forward's of inputs: warp_rows (32, 4, O), or (32, 8, 0) for the offset views
    # (a row one element in spans 129 chunks from the boundary before it)
    launches, run = [], api.run
    monkeypatch.setattr(api, "run", lambda kernel, launch, args: (launches.append(launch), run(kernel, launch, args)))
    y_host, dy_host = cupy.asnumpy(y), cupy.asnumpy(dy)
    out = y if layout == "out_is_y" else dx
    assert gradients.GRADIENTS[op](y, dy, out=out) is out
    assert [(launch.variant, launch.knobs[-1]) for launch in launches] == [("warp_rows", o)]
    expected = reference.GRADIENTS[op](y_host, dy_host, axis=-1)
    reference.assert_close(cupy.asnumpy(out), expected, dtypes.FLOAT32, op, reference.gradient_scale(y_host, dy_host, op))


@pytest.mark.parametrize("dtype", [dtypes.BFLOAT16, dtypes.FLOAT32], ids=dtypes.name)
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_m400_n50257_split_row_clusters_and_late_y_twin_loop_over_rows(rng, op, dtype):
    # More rows than twice the clusters the GPU holds: planner.persistent cuts the grid to those clusters and
    # each takes rows in turn (H200: 92 clusters of 4 in bfloat16, 45 of 8 in float32). Rows of 50257 are off
    # 16-byte boundaries: log_softmax's bfloat16 gradient takes the late-y twin (R = 2; planner.LATE_Y_ITEMSIZES)
    m, n = 400, 50257
    if device.facts(cupy.cuda.Device().id).compute_capability < (9, 0):
        pytest.skip("split_row's clusters need sm_90")
    y, dy, dx = inputs(rng, op, (m, n), dtype, "contiguous")
    _, launch = api.plan(y.device.id, "auto", m, n, (y.dtype, y.dtype), api.rows_aligned(y), op)  # the call's plan
    c = launch.knobs[-1]
    assert (launch.variant, c > 1) == ("split_row", True) and launch.grid < m * c
    assert (launch.knobs[1] == 2) == (op == registry.LOG_SOFTMAX_BACKWARD and dtype == dtypes.BFLOAT16)
    assert gradients.GRADIENTS[op](y, dy, out=dx) is dx
    check(op, y, dy, dx, dtype)


@pytest.mark.parametrize("op", registry.BACKWARD)
def test_a_nan_in_dy_makes_only_its_row_nan(rng, op):
    y, dy, _ = inputs(rng, op, (4, 3000), numpy.float32, "contiguous")
    dy[2, 1234] = numpy.nan
    dx = cupy.asnumpy(gradients.GRADIENTS[op](y, dy))
    assert numpy.isnan(dx[2]).all() and not numpy.isnan(dx[[0, 1, 3]]).any()


@pytest.mark.parametrize("op", registry.BACKWARD)
def test_a_nan_in_y_spoils_the_row_for_softmax_and_the_element_for_log_softmax(rng, op):
    y, dy, _ = inputs(rng, op, (4, 3000), numpy.float32, "contiguous")
    y[1, 17] = numpy.nan
    dx = cupy.asnumpy(gradients.GRADIENTS[op](y, dy))
    nan = numpy.isnan(dx)
    if op == registry.SOFTMAX_BACKWARD:  # s = sum(dy y)
        assert nan[1].all() and not nan[[0, 2, 3]].any()
    else:  # s = sum(dy): only dx[1, 17] = dy - exp(NaN) s
        assert nan[1, 17] and nan.sum() == 1


@pytest.mark.parametrize("shape, axis", [((6, 70), 0), ((3, 4, 50), (1, 2)), ((5, 7), None)],
                         ids=["axis0_transposed_copy", "trailing_pair_row_view", "none_all_axes"])
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_axes(rng, op, shape, axis):
    x = draw(rng, shape, numpy.float32)
    y = api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=axis)
    dy = draw(rng, shape, numpy.float32, scale=1.0)
    dx = poisoned(shape, numpy.float32)
    gradients.GRADIENTS[op](y, dy, axis=axis, out=dx)
    check(op, y, dy, dx, numpy.float32, axis)


@pytest.mark.parametrize("alias", ["dy", "y"])
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_out_may_be_dy_or_y(rng, op, alias):
    y, dy, _ = inputs(rng, op, (64, 1000), numpy.float32, "contiguous")
    y_before, dy_before = y.copy(), dy.copy()
    out = dy if alias == "dy" else y
    assert gradients.GRADIENTS[op](y, dy, out=out) is out
    check(op, y_before, dy_before, out, numpy.float32)


def test_bad_input_raises_before_launch_and_the_next_call_works(rng):
    y, dy, _ = inputs(rng, registry.SOFTMAX_BACKWARD, (8, 300), numpy.float32, "contiguous")
    with pytest.raises(ValueError, match="they must be the same"):
        gradients.softmax_backward(y, dy[:, :299])
    with pytest.raises(TypeError, match="y has dtype float32 and dy float16"):
        gradients.softmax_backward(y, dy.astype(numpy.float16))
    with pytest.raises(TypeError, match="out has dtype float64"):
        gradients.softmax_backward(y, dy, out=cupy.empty((8, 300), numpy.float64))
    with pytest.raises(UnsuitableVariant, match="naive computes softmax only; variants with softmax_backward"):
        gradients.softmax_backward(y, dy, variant="naive")
    dx = poisoned((8, 300), numpy.float32)
    gradients.softmax_backward(y, dy, out=dx)
    check(registry.SOFTMAX_BACKWARD, y, dy, dx, numpy.float32)


# (id naming the path, M, N, dtype, layout, variant asked, variant log_softmax's gradient takes): rows no cluster
# holds. log_softmax's gradient takes split_row's grid (C = 0) on 16384 or 32768 threads x 8 chunks of dy in
# registers, for rows of 81921-262144 chunks (float32 327681-1048576, half precision to 2097152, on a 16-byte
# boundary; planner.SPLIT_GRID_BACKWARD_ROW_THREADS), more rows than it holds at once in rounds; two_pass past that,
# and by name (a group of rows at a time, each reread from L2). softmax's gradient takes two_pass (its grid kernel tied or
# lost there: planner.SPLIT_GRID_BACKWARD_ITEMS).
PAST_A_CLUSTER = [
    ("grid_rows_in_rounds", 40, 1_000_003, dtypes.FLOAT32, "contiguous", "auto", "split_row"),
    ("grid_float32_views", 4, 700_001, dtypes.FLOAT32, "offset_views", "auto", "split_row"),
    ("grid_bfloat16_views", 6, 1_500_001, dtypes.BFLOAT16, "offset_views", "auto", "split_row"),
    ("grid_dy_misaligned_against_y", 5, 600_001, dtypes.FLOAT32, "dy_misaligned_against_y", "auto", "split_row"),
    ("grid_float16_dx_misaligned", 3, 2_000_001, dtypes.FLOAT16, "dx_misaligned_against_y", "auto", "split_row"),
    ("grid_largest_row_it_holds", 2, 1_048_576, dtypes.FLOAT32, "contiguous", "auto", "split_row"),
    ("two_pass_one_chunk_past_the_grid", 2, 1_048_580, dtypes.FLOAT32, "contiguous", "auto", "two_pass"),
    ("grid_t16384_rows_in_rounds", 9, 400_003, dtypes.FLOAT32, "contiguous", "auto", "split_row"),
    ("grid_t16384_first_row_past_a_cluster", 3, 327_681, dtypes.FLOAT32, "contiguous", "auto", "split_row"),
    ("grid_t16384_bfloat16_views", 2, 1_000_001, dtypes.BFLOAT16, "offset_views", "auto", "split_row"),
    ("two_pass_few_huge_rows_one_a_group", 3, 2**22 + 3, dtypes.FLOAT32, "contiguous", "auto", "two_pass"),
    ("two_pass_groups_of_rows", 40, 1_000_003, dtypes.FLOAT32, "contiguous", "two_pass", "two_pass"),
    ("two_pass_groups_of_bfloat16_views", 40, 1_000_003, dtypes.BFLOAT16, "offset_views", "two_pass", "two_pass"),
]


@pytest.mark.parametrize("op", registry.BACKWARD)
@pytest.mark.parametrize("m, n, dtype, layout, variant, planned", [c[1:] for c in PAST_A_CLUSTER],
                         ids=[c[0] for c in PAST_A_CLUSTER])
def test_rows_longer_than_a_cluster_holds(rng, op, m, n, dtype, layout, variant, planned):
    planned = planned if op == registry.LOG_SOFTMAX_BACKWARD else "two_pass"
    if planned == "split_row" and device.facts(cupy.cuda.Device().id).compute_capability < (9, 0):
        pytest.skip("split_row's grid launch needs sm_90 (else two_pass)")
    y, dy, dx = inputs(rng, op, (m, n), dtype, layout)
    dy += 1  # each slice or block then carries its share of s: a lost or stale partial shows (not so for a zero-mean dy)
    _, launch = api.plan(y.device.id, variant, m, n, (dtype, dtype), api.rows_aligned(y), op)
    assert launch.variant == planned
    if planned == "split_row":  # C = 0, and rounds of rows where the rows outnumber those the GPU holds at once
        assert launch.knobs[-1] == 0 and (m <= 6 or launch.grid // launch.unit < m)
    elif m == 40:  # several groups
        assert int(launch.args[1]) < m
    assert gradients.GRADIENTS[op](y, dy, out=dx, variant=variant) is dx
    check(op, y, dy, dx, dtype)
    if planned == "split_row" and layout != "dy_misaligned_against_y":
        # a row's bits do not depend on its batch: the first and the last row alone (views at the batch's phases;
        # dy's contiguous copy would put a row alone at another phase than in the batch's copy)
        for r in (0, m - 1):
            alone = gradients.GRADIENTS[op](y[r:r + 1], dy[r:r + 1], variant=variant)
            assert (cupy.asnumpy(alone).view(numpy.uint8) == cupy.asnumpy(dx[r:r + 1]).view(numpy.uint8)).all()


# (id naming the path, M, N, dtype, layout, whether log_softmax's gradient takes the grid): rows a cluster holds at
# 8 chunks a thread of y and dy. log_softmax's gradient takes split_row's grid (C = 0) from
# planner.SPLIT_GRID_BACKWARD_FROM_ROWS rows, on the cluster layout's threads (float32 262144: T = 8192; 200003 a
# chunk out of phase: 16 blocks of 416, T = 6656), more rows than the grid holds at once in rounds; fewer rows, and
# softmax's gradient, keep the clusters (the ids name log_softmax's path; softmax's gradient runs each on
# clusters). A row's bits are those of the row alone on clusters.
CLUSTER_ROWS_ON_THE_GRID = [
    ("log_grid_t8192_from_the_rows_it_takes", SPLIT_GRID_BACKWARD_FROM_ROWS, 262144, dtypes.FLOAT32, "contiguous", True),
    ("log_clusters_a_row_fewer", SPLIT_GRID_BACKWARD_FROM_ROWS - 1, 262144, dtypes.FLOAT32, "contiguous", False),
    ("log_grid_t6656_views_in_rounds", 40, 200003, dtypes.FLOAT32, "offset_views", True),
    ("log_grid_t8192_bfloat16_dx_misaligned", 9, 524288, dtypes.BFLOAT16, "dx_misaligned_against_y", True),
]


@pytest.mark.parametrize("op", registry.BACKWARD)
@pytest.mark.parametrize("m, n, dtype, layout, grid", [c[1:] for c in CLUSTER_ROWS_ON_THE_GRID],
                         ids=[c[0] for c in CLUSTER_ROWS_ON_THE_GRID])
def test_log_gradient_of_cluster_rows_takes_the_grid_from_enough_rows(rng, op, m, n, dtype, layout, grid):
    if device.facts(cupy.cuda.Device().id).compute_capability < (9, 0):
        pytest.skip("split_row's clusters and grid launch need sm_90")
    on_grid = grid and op == registry.LOG_SOFTMAX_BACKWARD
    y, dy, dx = inputs(rng, op, (m, n), dtype, layout)
    dy += 1  # each block carries its share of s: a lost or stale partial shows (not so for a zero-mean dy)
    pair = (dtype, dtype)
    _, launch = api.plan(y.device.id, "auto", m, n, pair, api.rows_aligned(y), op)
    assert launch.variant == "split_row" and (launch.knobs[-1] == 0) == on_grid and (on_grid or launch.knobs[-1] > 1)
    if on_grid and m == 40:
        assert launch.grid // launch.unit < m  # rounds
    assert gradients.GRADIENTS[op](y, dy, out=dx) is dx
    check(op, y, dy, dx, dtype)
    for r in (0, m - 1):  # the first and the last row alone, on clusters (views at the batch's phases)
        _, alone = api.plan(y.device.id, "auto", 1, n, pair, api.rows_aligned(y[r:r + 1]), op)
        assert alone.variant == "split_row" and alone.knobs[-1] > 1
        row = gradients.GRADIENTS[op](y[r:r + 1], dy[r:r + 1])
        assert (cupy.asnumpy(row).view(numpy.uint8) == cupy.asnumpy(dx[r:r + 1]).view(numpy.uint8)).all()


@pytest.mark.parametrize("shape", [(0, 5), (3, 0)], ids=["no_rows", "empty_rows"])
def test_empty_input_gives_empty_output(shape):
    y = cupy.empty(shape, numpy.float32)
    assert gradients.softmax_backward(y, y).shape == shape
