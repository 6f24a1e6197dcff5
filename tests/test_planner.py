"""Planner rules on made-up devices (an H100 and a smaller GPU), no GPU needed.

Kernel attributes come from `fake_facts`: the registers kernel's counts are the
ones `cupysoftmax build --arch sm_90` reports for float32 (by ITEMS), the other
kernels get 64 registers (1024 threads per block still launch).
"""
import dataclasses

import numpy
import pytest

from cupysoftmax import dtypes
from cupysoftmax.errors import UnsuitableVariant
from cupysoftmax import variants as registry
from cupysoftmax.planner import (AUTO_FIRST, AUTO_ORDER, BLOCK_THREADS, SPLIT_GRID_BACKWARD_FROM_ROWS, KernelFacts,
                                 Planner, lookup)

from fakes import H100, SMALL

F32 = (dtypes.FLOAT32, dtypes.FLOAT32)
F64 = (dtypes.FLOAT64, dtypes.FLOAT64)
F16 = (dtypes.FLOAT16, dtypes.FLOAT16)
BF16 = (dtypes.BFLOAT16, dtypes.BFLOAT16)


def max_threads(regs):
    """The most threads a block of a kernel of `regs` registers launches: its warps, rounded up to the SM's four
    quarters, must fit the register file (cuda_occupancy.h's hardware check)."""
    per_warp = -(-regs * 32 // 256) * 256
    return min(1024, 65536 // per_warp // 4 * 4 * 32)


REGISTERS_SM90_F32 = {1: 25, 2: 28, 4: 29, 8: 36, 16: 60, 32: 127}


def fake_facts(name, knobs, regs_by_items=REGISTERS_SM90_F32):
    regs = regs_by_items[knobs[0]] if name == "registers" else 64
    return KernelFacts(num_regs=regs, static_smem=128, local_bytes=0, max_threads=max_threads(regs))


@pytest.fixture
def h100():
    return Planner(H100)


@pytest.mark.parametrize("m, grid", [(1, 1), (256, 1), (257, 2), (8192, 32)], ids=lambda v: str(v))
def test_naive_one_thread_per_row(h100, m, grid):
    launch = h100.plan("naive", m, 100, F32, fake_facts)
    assert (launch.grid, launch.block, launch.smem) == (grid, 256, 0)


@pytest.mark.parametrize("m, grid", [(1, 1), (3, 1), (4, 1), (5, 2), (4099, 1025)], ids=lambda v: str(v))
def test_warp_rounds_blocks_up_never_zero(h100, m, grid):
    # seed 000 launched rows / 4 blocks: zero blocks for fewer than 4 rows
    launch = h100.plan("warp", m, 100, F32, fake_facts)
    assert (launch.grid, launch.block) == (grid, 128)


@pytest.mark.parametrize(
    "n, threads",
    [(1, 128), (2048, 128), (2049, 256), (4096, 256), (4097, 512), (8192, 512), (8193, 1024), (50257, 1024)],
)
@pytest.mark.parametrize("variant", ["block", "online", "smem_tree"])
def test_block_per_row_threads_follow_the_table(h100, variant, n, threads):
    launch = h100.plan(variant, 7, n, F32, fake_facts)
    assert (launch.grid, launch.block) == (7, threads)


def test_smem_tree_takes_one_accumulator_per_thread(h100):
    assert h100.plan("smem_tree", 2, 1000, F32, fake_facts).smem == 128 * 4
    assert h100.plan("smem_tree", 2, 1000, F64, fake_facts).smem == 128 * 8
    assert h100.plan("block", 2, 1000, F32, fake_facts).smem == 0


def test_smem_cached_row_plus_one_vector_of_slack(h100):
    launch = h100.plan("smem_cached", 8192, 50257, F32, fake_facts)
    assert launch.smem == (50257 + 4) * 4 and launch.block == 1024
    assert h100.plan("smem_cached", 1, 4097, F16, fake_facts).smem == (4097 + 8) * 2


def test_smem_cached_refuses_rows_past_the_opt_in_limit():
    with pytest.raises(UnsuitableVariant, match=r"needs 402072 bytes.*at most 232320.*variants that can: .*online"):
        Planner(H100).plan("smem_cached", 4, 50257, F64, fake_facts)
    with pytest.raises(UnsuitableVariant, match="at most 65408"):
        Planner(SMALL).plan("smem_cached", 4, 50257, F32, fake_facts)


@pytest.mark.parametrize(
    "n, threads, items",
    [(1, 32, 1), (32, 32, 1), (33, 64, 1), (100, 128, 1), (1000, 128, 8), (2049, 256, 16), (4097, 512, 16),
     (16384, 512, 32)],
)
def test_registers_triton_rule(h100, n, threads, items):
    launch = h100.plan("registers", 4096, n, F32, fake_facts)
    assert (launch.block, launch.knobs) == (threads, (items,))
    assert launch.block * items >= n


def test_registers_grid_is_persistent(h100):
    # items=8 -> 36 registers -> 1280 per warp -> 51 warps -> 12 blocks of 4 warps per SM
    big = h100.plan("registers", 100_000, 1000, F32, fake_facts)
    assert big.grid == 12 * 132
    assert h100.plan("registers", 10, 1000, F32, fake_facts).grid == 10


def test_registers_trade_threads_for_items_when_registers_run_short(h100):
    # items=16 at 153 registers launches 384 threads at most, so 512 x 16 becomes 256 x 32
    tight = {**REGISTERS_SM90_F32, 16: 153}
    launch = h100.plan("registers", 64, 8192, F32, lambda n, k: fake_facts(n, k, regs_by_items=tight))
    assert (launch.block, launch.knobs) == (256, (32,))


def test_registers_refuse_rows_past_capacity(h100):
    with pytest.raises(UnsuitableVariant, match="holds the row in registers.*variants that can: .*smem_cached"):
        h100.plan("registers", 4, 32768, F32, fake_facts)


def test_kernel_thread_limit_is_respected(h100):
    def few_threads(name, knobs):
        return KernelFacts(num_regs=255, static_smem=0, local_bytes=0, max_threads=256)

    with pytest.raises(UnsuitableVariant, match="needs 1024 threads per block but its kernel launches at most 256"):
        h100.plan("block", 1, 50257, F32, few_threads)


@pytest.mark.parametrize(
    "gpu, n, pair, expected",
    [
        (H100, 256, F32, "warp_rows"),
        (H100, 512, F32, "warp_rows"),
        (H100, 1024, F16, "warp_rows"),
        (H100, 1024, F32, "warp_rows"),
        (H100, 1025, F32, "split_row"),
        (H100, 16384, F32, "split_row"),
        (H100, 50257, F32, "split_row"),
        (H100, 50257, F64, "split_row"),
        (H100, 512, F64, "warp_rows"),
        (H100, 513, F64, "split_row"),
        (H100, 1048576, F32, "split_row"),
        (H100, 8388612, F32, "split_row"),
        (H100, 16777220, F32, "two_pass"),
        (SMALL, 50257, F32, "two_pass"),
        (SMALL, 12000, F32, "split_row"),
    ],
    ids=["h100_256_warp_rows", "h100_512_warp_rows", "h100_1024_f16_warp_rows", "h100_1024_f32_plain_warp_rows_to_256_chunks", "h100_1025_split", "h100_16k_split", "h100_vocab_split", "h100_vocab_f64_split",
         "h100_512_f64_plain_warp_rows_to_256_chunks", "h100_513_f64_split",
         "h100_4MB_row_split_on_the_grid", "h100_32MB_row_grid_of_65536_threads", "h100_64MB_row_two_pass", "small_vocab_no_clusters_two_pass",
         "small_12k_split"],
)
def test_auto_takes_the_first_variant_that_serves(gpu, n, pair, expected):
    assert Planner(gpu).plan("auto", 64, n, pair, fake_facts).variant == expected


@pytest.mark.parametrize("pair, n", [(F64, 511), (F32, 1023)], ids=["float64_256_chunks", "float32_256_chunks"])
@pytest.mark.parametrize("op, fused", [(registry.SOFTMAX_BACKWARD, False), (registry.LOG_SOFTMAX, True)],
                         ids=["gradient", "log_softmax_with_options"])
def test_auto_keeps_wide_rows_past_128_chunks_on_split_row_for_the_gradients_and_options(h100, op, fused, pair, n):
    # AUTO_FIRST_PLAIN_WIDE serves softmax and log_softmax without options, of one dtype in and out, and float32
    # ones with scale= alone on rows of whole chunks (the test below); not the gradients, nor options on rows that
    # end in a part chunk (float32 N = 1023) or on float64 rows
    assert h100.plan("auto", 4096, n, pair, fake_facts, op=op, fused=fused).variant == "split_row"
    assert h100.plan("auto", 4096, n, pair, fake_facts, op=registry.LOG_SOFTMAX).variant == "warp_rows"
    assert h100.plan("auto", 1, n, pair, fake_facts).variant == "warp_rows"  # a row alone as in a batch
    assert h100.plan("auto", 4096, n, (pair[0], dtypes.FLOAT16), fake_facts).variant == "split_row"  # two dtypes


@pytest.mark.parametrize("op", [registry.SOFTMAX, registry.LOG_SOFTMAX])
@pytest.mark.parametrize("n", [516, 1024], ids=["129_chunks", "256_chunks"])
def test_auto_takes_warp_rows_for_scale_alone_on_float32_rows_of_whole_chunks(h100, op, n):
    # AUTO_FIRST_PLAIN_WIDE: scale= alone on whole chunks, x's rows on 16-byte boundaries, as the plain call
    scaled = h100.plan("auto", 4096, n, F32, fake_facts, True, op, fused=True, y_aligned=True)
    assert (scaled.variant, scaled.knobs) == ("warp_rows", (32, 8, 2))
    assert scaled.grid == h100.plan("auto", 4096, n, F32, fake_facts, True, op).grid
    # y's rows off 16-byte boundaries: the same layout on the kernel of any phase (one order of sums)
    assert h100.plan("auto", 4096, n, F32, fake_facts, True, op, fused=True).knobs == (32, 8, 1)
    # where=, x's rows off 16-byte boundaries, rows of a part chunk, float64: split_row, as before
    assert h100.plan("auto", 4096, n, F32, fake_facts, True, op, True, True, True, True).variant == "split_row"
    assert h100.plan("auto", 4096, n, F32, fake_facts, False, op, fused=True, y_aligned=True).variant == "split_row"
    assert h100.plan("auto", 4096, n - 1, F32, fake_facts, True, op, fused=True, y_aligned=True).variant == "split_row"
    assert h100.plan("auto", 4096, n // 2, F64, fake_facts, True, op, fused=True, y_aligned=True).variant == "split_row"


def test_blocks_per_sm_follows_each_limit(h100):
    light = KernelFacts(num_regs=16, static_smem=0, local_bytes=0, max_threads=1024)
    assert h100.blocks_per_sm(64, light, 0) == 32  # the block-count limit
    assert h100.blocks_per_sm(1024, light, 0) == 2  # threads per SM
    heavy = KernelFacts(num_regs=128, static_smem=0, local_bytes=0, max_threads=512)
    assert h100.blocks_per_sm(256, heavy, 0) == 2  # registers
    assert h100.blocks_per_sm(128, light, 100_000) == 2  # shared memory (plus the reserved 1 KB each)
    # registers by quarters of the SM: 48 a thread is 1536 a warp, 10 warps a quarter, 40 an SM
    gradient = KernelFacts(num_regs=48, static_smem=0, local_bytes=0, max_threads=1024)
    assert (h100.blocks_per_sm(416, gradient, 0), h100.blocks_per_sm(448, gradient, 0)) == (3, 2)


def test_unknown_variant_names_the_known_ones(h100):
    with pytest.raises(ValueError, match="unknown softmax variant 'fast'.*auto, naive"):
        h100.plan("fast", 1, 1, F32, fake_facts)


def test_every_variant_auto_can_pick_computes_both_forward_ops():
    # for softmax and log_softmax the op narrows only variants asked by name (Planner.plan)
    for name in {v for _, v in AUTO_FIRST} | set(AUTO_ORDER):
        assert {registry.SOFTMAX, registry.LOG_SOFTMAX} <= set(registry.VARIANTS[name].ops), name


# the gradients' rows below clusters: K from BACKWARD_ONE_BLOCK_ITEMS (4 up to 3072 chunks, then 8), no
# shared-memory part
@pytest.mark.parametrize("op", registry.BACKWARD)
@pytest.mark.parametrize("m, n, variant, knobs, block", [
    (4096, 100, "warp_rows", (16, 2, 0), 256),
    (4096, 4096, "split_row", (4, 1, 1), 256),  # 1024 chunks: K = 4 where the forward takes 8 (SPLIT_ITEMS)
    (4096, 12288, "split_row", (4, 1, 1), 768),  # 3072 chunks, the most K = 4 takes
    (8, 16384, "split_row", (8, 1, 1), 512)],  # 4096 chunks: K = 8, the same for any number of rows
    ids=["short_rows_warp_rows", "rows_of_1024_chunks_split_row_block_k4", "rows_of_3072_chunks_split_row_block_k4",
         "few_rows_below_clusters_split_row_block_k8"])
def test_gradients_rows_one_block_holds_without_shared_memory(h100, op, m, n, variant, knobs, block):
    launch = h100.plan("auto", m, n, F32, split_facts, op=op)
    assert (launch.variant, launch.knobs, launch.block, launch.smem, launch.args) == (variant, knobs, block, 0, ())


@pytest.mark.parametrize("op", registry.BACKWARD)
def test_gradients_of_rows_past_registers_cluster_where_the_forward_uses_shared_memory(h100, op):
    # 8192 x 50257 float32: the forward keeps part of a row in shared memory (one block per row);
    # the gradient kernels hold y and dy in registers only (and fold no rows), so a cluster splits the row
    assert h100.plan("auto", 8192, 50257, F32, split_facts).knobs == (8, -4, 1)
    launch = h100.plan("auto", 8192, 50257, F32, split_facts, op=op)
    assert launch.variant == "split_row" and launch.knobs[1:] in {(1, c) for c in (2, 4, 8, 16)} and launch.smem == 0


def gradient_facts(name, knobs):
    """Heavy gradient kernels: registers by K about as sm_90 built split_row's half-precision ones before their
    write pass widened in instructions of its own (common.cuh, WidenPass::write; now they take float32's)."""
    regs = {2: 47, 4: 82, 8: 151}[knobs[0]]
    return KernelFacts(num_regs=regs, static_smem=144, local_bytes=0, max_threads=max_threads(regs))


@pytest.mark.parametrize("n", [26632, 32000, 32768], ids=["n26632_one_chunk_past_a_block", "vocab32000", "n32768"])
def test_gradient_rows_one_block_cannot_hold_go_to_clusters_below_the_forwards_threshold(h100, n):
    # 151 registers a thread: 416 threads x 8 chunks = 3328 chunks a block, fewer than
    # SPLIT_CLUSTER_MIN_CHUNKS (4096), below which the forward never tries clusters
    launch = h100.plan("split_row", 4096, n, BF16, gradient_facts, op=registry.SOFTMAX_BACKWARD)
    assert launch.knobs[-1] > 1 and launch.smem == 0 and launch.args == ()


def test_without_clusters_a_refusal_names_one_block():
    with pytest.raises(UnsuitableVariant, match="does not fit in one block's registers"):
        Planner(SMALL).plan("split_row", 8, 32000, BF16, gradient_facts, op=registry.SOFTMAX_BACKWARD)


# (slices, rows a group): 2048-chunk slices (float16 256, float32 512) but at most the grid (528 blocks)
# over the rows of a group; a group holds 25 MB of what the second pass rereads: softmax's y and dy,
# log_softmax's dy (three float16 rows of 8 MB)
@pytest.mark.parametrize("pair, partial, softmax_args, log_args", [(F16, 4, (256, 1), (176, 3)),
                                                                   (F32, 4, (512, 1), (512, 1)),
                                                                   (F64, 8, (528, 1), (528, 1))],
                         ids=["float16", "float32", "float64"])
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_two_pass_gradients_take_one_sum_a_piece(h100, op, pair, partial, softmax_args, log_args):
    launch = h100.plan("two_pass", 4, 4194304, pair, split_facts, op=op)
    slices, group_rows = softmax_args if op == registry.SOFTMAX_BACKWARD else log_args
    assert tuple(map(int, launch.args)) == (slices, group_rows)
    assert launch.workspace == 4 * slices * partial + 4 * 4  # an accumulator-type sum a piece, a counter a row


@pytest.mark.parametrize("op, arrays", [(registry.SOFTMAX_BACKWARD, 2), (registry.LOG_SOFTMAX_BACKWARD, 1)])
def test_two_pass_groups_what_its_second_pass_rereads(h100, op, arrays):
    # softmax's gradient rereads y and dy, log_softmax's dy only (its first pass reads no y)
    launch = h100.plan("two_pass", 64, 1048576, F32, split_facts, op=op)
    assert int(launch.args[1]) == 50 * 2**20 // 2 // (arrays * 1048576 * 4)


@pytest.mark.parametrize("op", registry.BACKWARD)
def test_gradients_of_rows_past_the_chunk_index_are_refused_with_the_reason(h100, op):
    with pytest.raises(UnsuitableVariant, match=rf"no variant computes {op} for rows of 2147483648 float32"):
        h100.plan("auto", 1, 2**31, F32, split_facts, op=op)


@pytest.mark.parametrize("variant", ["naive", "online", "smem_cached"])
def test_variants_without_gradients_refuse_them_by_name(h100, variant):
    with pytest.raises(UnsuitableVariant, match=r"variants with softmax_backward: warp_rows, split_row, two_pass"):
        h100.plan(variant, 8, 1000, F32, fake_facts, op=registry.SOFTMAX_BACKWARD)


@pytest.mark.parametrize("variant", ["naive", "smem_tree", "warp", "block", "registers", "smem_cached"])
def test_classic_variants_refuse_log_softmax_and_name_the_ones_that_compute_it(h100, variant):
    with pytest.raises(UnsuitableVariant, match=rf"{variant} computes softmax only; variants with log_softmax: "
                                                r"online, warp_rows, split_row, two_pass"):
        h100.plan(variant, 8, 1000, F32, fake_facts, op=registry.LOG_SOFTMAX)


@pytest.mark.parametrize("m, n, variant", [(4096, 100, "warp_rows"), (64, 1100, "split_row"),
                                           (8, 128256, "split_row"), (4, 2**24 + 4, "two_pass")],
                         ids=["warp_rows", "split_row_block", "split_row_cluster", "two_pass"])
def test_log_softmax_gets_the_softmax_launch(h100, m, n, variant):
    softmax = h100.plan("auto", m, n, F32, fake_facts)
    assert softmax.variant == variant
    assert h100.plan("auto", m, n, F32, fake_facts, op=registry.LOG_SOFTMAX) == softmax


def test_lookup_tables():
    assert lookup(BLOCK_THREADS, 1) == 128
    assert lookup(BLOCK_THREADS, numpy.int64(10**12)) == 1024
    with pytest.raises(ValueError):
        lookup(((10, 1),), 11)


# The chunk layouts' rule; float32 rows of N % V != 0 (2 to 88 and 129 to 256 chunks) and float64 rows of two chunks or more take the
# element-strided layouts instead (ELEMENT_STRIDED below), so the float32 rows here are whole chunks or out of those.
@pytest.mark.parametrize(
    "n, aligned, knobs",
    [(1, True, (1, 1, 0)), (8, True, (2, 1, 0)), (32, True, (8, 1, 0)), (36, False, (8, 2, 0)), (100, False, (16, 2, 0)),
     (256, True, (32, 2, 0)), (260, False, (32, 4, 0)), (1024, True, (32, 8, 0)), (2048, True, (32, 8, 0))],
    ids=["n1_one_lane", "n8_two_lanes_one_chunk", "n32_eight_lanes_one_chunk", "n36_misaligned_eight_lanes",
         "n100_sixteen_lanes", "n256_full_warp", "n260_misaligned_four_chunks_per_lane", "n1024_eight_chunks_per_lane",
         "n2048_float16_eight_chunks"],
)
def test_warp_rows_takes_the_fewest_lanes_that_hold_a_row_at_one_chunk_each_up_to_8_then_two(h100, n, aligned, knobs):
    pair = F16 if n == 2048 else F32
    launch = h100.plan("warp_rows", 100_000, n, pair, fake_facts, aligned)
    assert launch.knobs == knobs and launch.block == 256
    assert launch.grid == -(-100_000 // (256 // knobs[0]))  # a block for each 256 / G rows, not a resident grid


@pytest.mark.parametrize("variant", ["warp_rows", "auto"])
def test_warp_rows_launches_the_kernel_that_reads_the_options_only_for_calls_that_pass_them(h100, variant):
    plain = h100.plan(variant, 4096, 100, F32, fake_facts)
    options = h100.plan(variant, 4096, 100, F32, fake_facts, fused=True)
    assert plain.knobs == (16, 2, 0) and options == dataclasses.replace(plain, knobs=(16, 2, 1))
    log = h100.plan(variant, 4096, 100, F32, fake_facts, op=registry.LOG_SOFTMAX, fused=True)
    assert log.knobs == (16, 2, 1)


@pytest.mark.parametrize("pair", [F16, F32, F64], ids=["float16", "float32", "float64"])
def test_warp_rows_compiles_a_plain_kernel_for_every_layout_it_launches(h100, pair):
    # variants.WARP_ROWS_PLAIN: every row length warp_rows serves, aligned or not, lands on one of its layouts;
    # float32 rows of N % V != 0 and float64 rows on one of the element-strided layouts of their op
    # (variants.WARP_ROWS_ELEMENT_STRIDED, planner.ELEMENT_STRIDED_LAYOUTS), every one of which some row takes
    v = registry.VARIANTS["warp_rows"]
    plain = set()
    for op in registry.FORWARD:
        strided = set()
        for chunks in range(1, 257):
            for aligned in (True, False):
                n = chunks * (16 // pair[0].itemsize) - (0 if aligned else 16 // pair[0].itemsize - 1)  # spans `chunks`
                g, k, o = h100.plan("warp_rows", 64, n, pair, fake_facts, aligned, op).knobs
                assert (g, k, o) in v.knob_sets(op, pair=pair) and g * k * 16 >= n * pair[0].itemsize  # holds the row
                (plain if o == 0 else strided).add((g, k, o))
        assert strided == set(v.element_strided_for(pair, op)), op
    # float64 rows of two chunks or more take the element-strided layouts whatever N (ELEMENT_STRIDED_WHOLE_ROWS)
    assert plain == ({(1, 1, 0)} if pair == F64 else {(g, k, 0) for g, k in registry.WARP_ROWS_PLAIN})
    assert {(g, k, o) for g, k in registry.WARP_ROWS_PLAIN for o in (1, -1, 2)} <= set(v.knobs)


# (id naming the path, pair, N, x rows aligned, y rows aligned, options, op, O): the twin on whole chunks of the
# plain kernel (O = -1) and of the kernel that reads the options (O = 2) only where the rows of x and y start on
# 16-byte boundaries and N is whole chunks, and with where= only where its mask is read row for row at x's phase
# (fused.direct); the gradients' twin (O = -1) where the rows of y, dy ("x") and dx ("y") are. options: None, "scale" (scale= alone), "direct" (where=, direct) or
# "mask" (where=, its rows not direct: a period between 1 and M, or rows off x's phase)
WHOLE_CHUNKS = [
    ("whole_chunks_n64", F32, 64, True, True, None, registry.SOFTMAX, -1),
    ("whole_chunks_log_softmax_bf16_n1024", BF16, 1024, True, True, None, registry.LOG_SOFTMAX, -1),
    ("whole_chunks_f16_n8_one_chunk", F16, 8, True, True, None, registry.SOFTMAX, -1),
    ("n66_not_whole_chunks_element_strided", F32, 66, True, True, None, registry.SOFTMAX, -2),
    ("f16_n1020_not_whole_chunks_plain", F16, 1020, True, True, None, registry.SOFTMAX, 0),
    ("y_misaligned_plain", F32, 64, True, False, None, registry.SOFTMAX, 0),
    ("x_misaligned_plain", F32, 64, False, True, None, registry.SOFTMAX, 0),
    ("scale_whole_chunks_options_twin_on_whole_chunks", F32, 64, True, True, "scale", registry.SOFTMAX, 2),
    ("where_direct_whole_chunks_options_twin_on_whole_chunks", F16, 256, True, True, "direct", registry.LOG_SOFTMAX,
     2),
    ("where_not_direct_options_twin", F32, 64, True, True, "mask", registry.SOFTMAX, 1),
    ("where_direct_y_misaligned_options_twin", F32, 64, True, False, "direct", registry.SOFTMAX, 1),
    ("scale_f16_n66_not_whole_chunks_options_twin", F16, 66, True, True, "scale", registry.SOFTMAX, 1),
    ("gradient_whole_chunks", F32, 64, True, True, None, registry.SOFTMAX_BACKWARD, -1),
    ("log_gradient_bf16_n1024_whole_chunks", BF16, 1024, True, True, None, registry.LOG_SOFTMAX_BACKWARD, -1),
    ("gradient_dx_misaligned_plain", F32, 64, True, False, None, registry.SOFTMAX_BACKWARD, 0),
    ("gradient_f16_n1020_not_whole_chunks_plain", F16, 1020, True, True, None, registry.LOG_SOFTMAX_BACKWARD, 0),
]


@pytest.mark.parametrize("variant", ["warp_rows", "auto"])
@pytest.mark.parametrize("case", WHOLE_CHUNKS, ids=[c[0] for c in WHOLE_CHUNKS])
def test_warp_rows_takes_its_kernel_on_whole_chunks_only_where_every_row_of_x_and_y_is(h100, case, variant):
    _, pair, n, aligned, y_aligned, options, op, o = case
    masked = options in ("direct", "mask")
    launch = h100.plan(variant, 4096, n, pair, fake_facts, aligned, op, options is not None, y_aligned, masked,
                       mask_direct=options == "direct")
    plain = h100.plan(variant, 4096, n, pair, fake_facts, aligned, op)  # y_aligned False: the plain kernel
    assert launch.variant == "warp_rows" and launch.knobs[2] == o
    assert launch == dataclasses.replace(plain, knobs=launch.knobs)  # the same layout, block and grid
    assert launch.knobs in registry.VARIANTS["warp_rows"].knob_sets(op)


# (id naming the path, pair, N, x rows aligned, options, op, planned (G, K, O)): plain float32 rows whose N is not a
# multiple of V, and plain float64 rows of any N, take warp_rows' element-strided kernels (O = -2) on their own
# layouts (planner.ELEMENT_STRIDED_LAYOUTS), at any phase of x and y; not float32 rows of N % V == 0 (on whole chunks
# where x and y allow, else Slots), rows past the table's chunks, 2-byte inputs, calls with options, nor the gradients.
ELEMENT_STRIDED = [
    ("strided_n31_one_chunk_a_lane", F32, 31, True, None, registry.SOFTMAX, (8, 1, -2)),
    ("strided_n127_x_misaligned", F32, 127, False, None, registry.LOG_SOFTMAX, (16, 2, -2)),
    ("strided_n255_full_warp", F32, 255, True, None, registry.SOFTMAX, (32, 2, -2)),
    ("strided_f64_log_softmax_n127_four_chunks_a_lane", F64, 127, False, None, registry.LOG_SOFTMAX, (16, 4, -2)),
    ("n128_whole_chunks_slots", F32, 128, False, None, registry.SOFTMAX, (16, 2, 0)),
    ("strided_n63_sixteen_lanes_one_chunk_where_slots_has_eight_of_two", F32, 63, False, None, registry.SOFTMAX,
     (16, 1, -2)),
    ("strided_n9_two_lanes_of_two_chunks", F32, 9, True, None, registry.LOG_SOFTMAX, (2, 2, -2)),
    ("strided_f64_n255_four_chunks_a_lane", F64, 255, True, None, registry.SOFTMAX, (32, 4, -2)),
    ("strided_f64_log_softmax_n255_four_chunks_a_lane", F64, 255, True, None, registry.LOG_SOFTMAX, (32, 4, -2)),
    ("strided_f64_n511_eight_chunks_a_lane_past_128_chunks", F64, 511, False, None, registry.SOFTMAX, (32, 8, -2)),
    ("strided_f64_n512_whole_chunks_past_128_chunks", F64, 512, True, None, registry.LOG_SOFTMAX, (32, 8, -2)),
    ("strided_f64_n128_whole_chunks_aligned", F64, 128, True, None, registry.SOFTMAX, (16, 4, -2)),
    ("strided_f64_n111_four_chunks_a_lane", F64, 111, False, None, registry.SOFTMAX, (16, 4, -2)),
    ("strided_f64_log_softmax_n111_eight_chunks_a_lane", F64, 111, False, None, registry.LOG_SOFTMAX, (8, 8, -2)),
    ("n361_past_88_chunks_slots", F32, 361, True, None, registry.SOFTMAX, (32, 4, 0)),
    ("n3_one_chunk_slots", F32, 3, True, None, registry.SOFTMAX, (1, 1, 0)),
    ("strided_n299_four_chunks_a_lane", F32, 299, True, None, registry.SOFTMAX, (32, 4, -2)),
    ("f16_n127_granules", F16, 127, True, None, registry.SOFTMAX, (8, 2, 0)),
    ("bf16_to_f32_n255_granules", (dtypes.BFLOAT16, dtypes.FLOAT32), 255, True, None, registry.SOFTMAX, (16, 2, 0)),
    ("scale_n127_options_twin", F32, 127, True, "scale", registry.SOFTMAX, (16, 2, 1)),
    ("gradient_n127_plain", F32, 127, True, None, registry.SOFTMAX_BACKWARD, (16, 2, 0)),
]


@pytest.mark.parametrize("variant", ["warp_rows", "auto"])
@pytest.mark.parametrize("case", ELEMENT_STRIDED, ids=[c[0] for c in ELEMENT_STRIDED])
def test_warp_rows_takes_its_element_strided_kernel_for_plain_rows_never_float32_whole_chunks(h100, case, variant):
    _, pair, n, aligned, options, op, knobs = case
    launch = h100.plan(variant, 4096, n, pair, fake_facts, aligned, op, options is not None)
    assert (launch.variant, launch.knobs) == ("warp_rows", knobs)
    assert launch.grid == -(-4096 // (launch.block // knobs[0]))  # a block for each blockDim.x / G rows
    if knobs[2] == -2:  # one kernel whatever the phase of x and y, for a batch as for a row alone
        for m, x_aligned, y_aligned in [(4096, True, True), (4096, False, True), (1, False, True), (1, False, False)]:
            alone = h100.plan(variant, m, n, pair, fake_facts, x_aligned, op, y_aligned=y_aligned)
            assert alone.knobs == knobs, (m, x_aligned, y_aligned)


def test_split_row_has_no_kernel_on_whole_chunks(h100):
    plain = h100.plan("auto", 4096, 1100, F32, split_facts)
    assert plain.variant == "split_row" and h100.plan("auto", 4096, 1100, F32, split_facts, y_aligned=True) == plain


def test_warp_rows_refuses_a_misaligned_row_one_chunk_too_long_where_its_kernel_counts_chunks_from_the_boundary(h100):
    # the kernels with options (and the gradients) count a row's chunks from the 16-byte boundary before it
    with pytest.raises(UnsuitableVariant, match="spans 257 16-byte chunks, a warp holds 256"):
        h100.plan("warp_rows", 8, 1024, F32, fake_facts, aligned=False, fused=True)
    with pytest.raises(UnsuitableVariant, match="spans 257 16-byte chunks, a warp holds 256"):
        h100.plan("warp_rows", 8, 1024, F32, fake_facts, aligned=False, op=registry.SOFTMAX_BACKWARD)
    # the plain forward kernels hold a row of any phase in ceil(N / V) chunks (kernels/common.cuh, Slots)
    assert h100.plan("warp_rows", 8, 1024, F32, fake_facts, aligned=False).knobs == (32, 8, 0)


def test_a_refusal_names_warp_rows_for_plain_rows_out_of_phase_it_lays_out_as_aligned(h100):
    # the list of variants that can serve the call applies Planner.plain_slots as the launch does
    with pytest.raises(UnsuitableVariant, match=r"variants that can: .*warp_rows"):
        h100.plan("strided", 8, 1024, F32, fake_facts, aligned=False)


@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("n, pair, plain, options", [(510, F32, (32, 4), (32, 8)), (255, BF16, (16, 2), (32, 2)),
                                                     (1023, BF16, (32, 4), (32, 8)), (127, F16, (8, 2), (16, 2)),
                                                     (64, F32, (8, 2), (16, 2))],
                         ids=["n510_float32", "n255_bfloat16", "n1023_bfloat16", "n127_float16", "n64_float32"])
def test_warp_rows_lays_out_plain_rows_of_any_phase_as_aligned_ones(h100, n, pair, plain, options, op):
    # plain calls: the layout of an aligned row of N (Planner.plain_slots), whatever the rows' phase; calls with
    # options and the gradients keep the layout of their phase (a chunk more for rows out of phase)
    for aligned in (True, False):
        launch = h100.plan("auto", 2**20, n, pair, fake_facts, aligned, op)
        assert launch.variant == "warp_rows" and launch.knobs == (*plain, 0)
    assert h100.plan("auto", 2**20, n, pair, fake_facts, False, op, fused=True).knobs == (*options, 1)
    backward = registry.SOFTMAX_BACKWARD if op == registry.SOFTMAX else registry.LOG_SOFTMAX_BACKWARD
    assert h100.plan("auto", 2**20, n, pair, fake_facts, False, backward).knobs == (*options, 0)


def split_facts(name, knobs):
    """Registers of split_row by K as `cupysoftmax build --arch sm_90` reports for float32 (about)."""
    regs = {2: 32, 4: 40, 8: 56}[knobs[0]] if name == "split_row" else 64
    return KernelFacts(num_regs=regs, static_smem=272, local_bytes=0, max_threads=max_threads(regs))


@pytest.mark.parametrize(
    "m, n, knobs, block, extra, again",
    [(4096, 1024, (2, 0, 1), 128, 0, 0),  # many rows: one block per row, the row in registers (R = 0: plain), up to 256 chunks: two a thread
     (4096, 2048, (4, 0, 1), 128, 0, 0),  # up to 512 chunks: four a thread
     (4096, 4096, (8, 0, 1), 128, 0, 0),  # past 512: eight
     (4096, 65536, (8, -4, 1), 1024, 8, 0),  # 256 KB rows: 128 KB in registers, 128 KB in shared memory,
                                            # four logical threads a thread (16 chunks: four each), plain
     (8, 128256, (8, -1, 16), 256, 0, 0),  # few rows: a cluster of 16 per row, 8 x 16 = 128 blocks, writing from
                                           # the row's (max, sum) as the grid does (R = -1: no block holds the row)
     (1, 32000, (8, 1, 16), 64, 0, 0),  # the 1024 threads a row of the launch for many rows, over 16 blocks
     (23, 128256, (8, -1, 16), 256, 0, 0),  # 368 blocks, 4 resident per SM (from 24 rows: the grid)
     (99, 32000, (8, 0, 1), 1024, 0, 0),  # rows a block holds, 0.75 an SM and more: no cluster (fewer: the test below)
     (63, 32000, (8, 1, 16), 64, 0, 0),  # below SPLIT_BLOCK_ROWS: the most blocks, clusters of 16
     (23, 100003, (8, -1, 16), 224, 0, 0),  # no block holds a float32 row: clusters, no fold (from 24 rows: the grid)
     (8, 16384, (8, 0, 1), 512, 0, 0),  # rows of SPLIT_CLUSTER_MIN_CHUNKS chunks: no cluster, no fold
     (8, 16388, (8, 1, 16), 64, 0, 0),  # one chunk more: clusters, the most blocks resident
     (4096, 16388, (8, 0, 1), 1024, 0, 0),  # 544 threads rounded up to 1024, which 16 blocks of whole warps cut
     (1, 65536, (4, 1, 16), 256, 0, 1)],  # the 4096 logical threads of the launch for many rows, in registers
    ids=["n1024_block_per_row", "n2048_four_chunks_a_thread", "n4096_eight_chunks_a_thread",
         "long_rows_registers_plus_smem", "few_rows_cluster16", "one_row_cluster16", "23_rows_cluster16",
         "99_rows_block_per_row", "63_rows_cluster16", "23_long_rows_cluster16", "8_rows_64KB_no_cluster",
         "8_rows_past_64KB_cluster", "many_rows_past_64KB_rounded_threads", "one_row_shared_memory_part_cluster16"],
)
def test_split_row_block_per_row_for_many_rows_clusters_for_few(h100, m, n, knobs, block, extra, again):
    launch = h100.plan("split_row", m, n, F32, split_facts)
    assert (launch.knobs, launch.block, *map(int, launch.args)) == (knobs, block, extra, again)
    assert launch.smem == extra * block * 16
    assert launch.grid == m * knobs[-1]  # one cluster per row


@pytest.mark.parametrize(
    "m, n, pair, knobs, block, extra",
    [(8192, 50257, BF16, (8, -4, 1), 512, 5),  # 6283 chunks: 800 threads in registers would fill the SM alone;
                                                # 512 threads keep 5 chunks each in shared memory, two blocks an SM
     (8192, 40000, F16, (8, -4, 1), 512, 2),  # float16 alike (5000 chunks)
     (8192, 36864, BF16, (8, -4, 1), 512, 1),  # 4608 chunks: 576 threads, which the layout rounds up to 1024
     (8, 50257, BF16, (4, 1, 16), 128, 0),  # few rows: the fold's 2048 logical threads over a cluster of 16
     (106, 50257, BF16, (8, -4, 1), 512, 5),  # 0.75 an SM and more: one block a row, the fold on two blocks an SM
     (4096, 65536, BF16, (8, 0, 1), 1024, 0),  # 8192 chunks, SPLIT_TWO_BLOCKS' upper bound: registers alone
     (4096, 32000, F32, (8, 0, 1), 1024, 0),  # float32: not taken (SPLIT_TWO_BLOCKS)
     (4096, 16384, BF16, (8, 0, 1), 256, 0)],  # 2048 chunks: 256 threads, several blocks an SM already
    ids=["bf16_50257_two_blocks_an_sm", "f16_40000_two_blocks_an_sm", "bf16_36864_rounded_block_two_blocks_an_sm",
         "bf16_50257_few_rows_fold_clusters",
         "bf16_50257_106_rows_two_blocks_an_sm",
         "bf16_65536_registers", "f32_32000_registers", "bf16_16384_registers"],
)
def test_split_row_two_blocks_an_sm_for_long_two_byte_rows(h100, m, n, pair, knobs, block, extra):
    launch = h100.plan("split_row", m, n, pair, split_facts)
    assert (launch.knobs, launch.block, int(launch.args[0])) == (knobs, block, extra)
    assert launch.smem == extra * block * 16


@pytest.mark.parametrize("m, n, pair, knobs, block", [
    (64, 50257, BF16, (4, 1, 8), 256),  # a row one block holds, under 0.75 rows an SM: clusters of 8, not 16 of 128
    (64, 128256, BF16, (4, 1, 16), 256),  # clusters of 16 where their blocks are 256 threads wide
    (64, 65536, BF16, (8, 1, 8), 128),  # 16 of 64 threads would be the most blocks: 8 of 128
    (98, 32000, F32, (8, 1, 8), 128),  # the last row count below 0.75 an SM (132 SMs)
    (99, 32000, F32, (8, 0, 1), 1024),  # 0.75 an SM: one block a row
    (64, 32000, F64, (8, 1, 1), 1024),  # float64, not measured: one block a row with a shared-memory part
    (64, 150001, BF16, (8, 1, 1), 1024),  # the clusters keep a shared-memory part, not measured: one block a row
    (64, 50257, (dtypes.BFLOAT16, dtypes.FLOAT32), (8, 0, 1), 1024),  # two dtypes, not measured: one block a row
], ids=["bf16_50257_clusters_of_8", "bf16_128256_clusters_of_16_wide_blocks", "bf16_65536_clusters_of_8",
        "f32_98_rows_clusters_of_8", "f32_99_rows_block_per_row", "f64_block_per_row", "bf16_150001_block_per_row",
        "bf16_in_f32_out_block_per_row"])
def test_split_row_rows_a_block_holds_take_clusters_below_0_75_an_sm(h100, m, n, pair, knobs, block):
    launch = h100.plan("split_row", m, n, pair, split_facts)
    assert (launch.knobs, launch.block, launch.grid) == (knobs, block, m * knobs[-1])


def test_split_row_two_blocks_an_sm_only_for_one_dtype(h100):
    # half precision in, float32 out (dtype=): the pairs SPLIT_TWO_BLOCKS measured are one dtype in and out
    launch = h100.plan("split_row", 8192, 50257, (dtypes.BFLOAT16, dtypes.FLOAT32), split_facts)
    assert (launch.block, launch.smem) == (1024, 0)


def test_split_row_plain_kernel_only_where_it_takes_the_block(h100):
    # R = 0 compiles the options and the shared-memory part out: one block holding the row in registers,
    # of a block size the plain kernel itself launches; the gradients and shared-memory parts keep R = 1.
    # R = -4, the plain fold, likewise only where it takes the fold's block
    def heavier_plain(name, knobs):  # a plain kernel at 72 registers launches at most 896 threads
        facts = split_facts(name, knobs)
        return dataclasses.replace(facts, num_regs=72, max_threads=max_threads(72)) if knobs[1] <= 0 else facts

    assert h100.plan("split_row", 106, 32000, F32, heavier_plain).knobs == (8, 1, 1)  # 1024 threads
    assert h100.plan("split_row", 4096, 4096, F32, heavier_plain).knobs == (8, 0, 1)  # 128 threads
    assert h100.plan("split_row", 4096, 65536, F32, heavier_plain).knobs == (8, 4, 1)  # a fold of 1024 threads
    assert h100.plan("split_row", 4096, 65536, F32, split_facts).knobs == (8, -4, 1)
    assert h100.plan("split_row", 4096, 1024, F32, split_facts, op=registry.SOFTMAX_BACKWARD).knobs == (2, 1, 1)
    assert h100.plan("split_row", 4096, 1024, F32, split_facts, op=registry.LOG_SOFTMAX).knobs == (2, 0, 1)
    with_smem = h100.plan("split_row", 4096, 32768, F64, split_facts)  # float64 folds no row
    assert (with_smem.knobs, with_smem.smem > 0) == ((8, 1, 1), True)


def test_split_row_block_per_row_with_shared_memory_beats_clusters_from_64_rows(h100):
    # a 256 KB bfloat16 row: 128 KB in registers, 128 KB in shared memory
    launch = h100.plan("split_row", 128, 128256, BF16, split_facts)
    assert (launch.knobs, launch.block, launch.smem) == ((8, -4, 1), 1024, 8 * 1024 * 16)
    assert h100.plan("split_row", 63, 128256, BF16, split_facts).knobs[-1] > 1


@pytest.mark.parametrize(
    "m, n, pair, op, blocks, block",
    [(32, 128256, F32, registry.SOFTMAX, 16, 256),  # 4096 threads a row: 16 blocks of 256 anywhere
     (16, 262144, F32, registry.LOG_SOFTMAX, 16, 256),  # 4096 threads a row (SPLIT_SHARED_FROM_CHUNKS): 16 blocks
     (1024, 262144, F32, registry.SOFTMAX, 16, 256),  # any number of rows past them
     (20, 278528, F32, registry.SOFTMAX, 18, 256)],  # 8704 threads halved up to 4608 (144 warps): 18 blocks of 8
    ids=["n128256_from_32_rows", "n262144_log_softmax_from_16_rows", "n262144_1024_rows",
         "blocks_of_whole_warps_dividing_the_row"],
)
def test_split_row_takes_the_grid_for_long_rows_between_its_row_limits(h100, m, n, pair, op, blocks, block):
    cluster = h100.plan("split_row", 1, n, pair, split_facts, op=op)
    launch = h100.plan("split_row", m, n, pair, split_facts, op=op)
    assert launch.knobs == (cluster.knobs[0], 1, -1) and (launch.block, int(launch.args[2])) == (block, blocks)  # the plain grid kernel
    assert row_layout(launch) == row_layout(cluster)  # the same logical threads, K and S: the same bits
    slots = h100.blocks_per_sm(block, split_facts("split_row", launch.knobs), launch.smem) * H100.sms // blocks  # rows at once
    assert launch.unit == blocks and launch.grid == min(m, slots) * blocks
    # a tag per block of each row, then a (max, sum) per logical warp of each row (csm::GridBoard)
    assert launch.tagged == m * blocks * 8 and launch.workspace == launch.tagged + m * (block * blocks // 32) * 2 * pair[1].itemsize


@pytest.mark.parametrize("m, op, knobs, rows_at_once", [
    (33, registry.LOG_SOFTMAX, (8, 1, -1), 33),  # the grid holds them at once: a thread for each logical thread
    (34, registry.LOG_SOFTMAX, (8, -2, -1), 34),  # past the 33 it holds so: two logical threads a thread
    (256, registry.LOG_SOFTMAX, (8, -2, -1), 66),
    (33, registry.SOFTMAX, (8, 1, -1), 33),
    (1024, registry.SOFTMAX, (8, -2, -1), 66),
], ids=["log_softmax_33_rows_unfolded", "log_softmax_34_rows_folded", "log_softmax_256_rows_folded",
        "softmax_33_rows_unfolded", "softmax_1024_rows_folded"])
def test_split_row_folds_on_the_grid_past_the_rows_it_holds_at_once(h100, m, op, knobs, rows_at_once):
    launch = h100.plan("split_row", m, 128256, F32, split_facts, op=op)
    assert launch.knobs == knobs and launch.grid // launch.unit == rows_at_once
    assert row_layout(launch, op) == row_layout(h100.plan("split_row", 1, 128256, F32, split_facts, op=op), op)
    assert launch.smem == (8 * 256 * 16 if knobs[1] < 0 else 0)  # a logical thread's K chunks, in shared memory
    # a tag per block of each row, a (max, sum) per logical warp: 4096 threads a row
    assert launch.tagged == m * launch.unit * 8 and launch.workspace == launch.tagged + m * 128 * 2 * 4
    # calls with scale= or where= take the plain kernel's twin that reads them (C = 0) on the same launch
    # (no room for the mask's bytes: none cached unfolded, and folds read a word at a time: planner.stages_mask)
    fused = h100.plan("split_row", m, 128256, F32, split_facts, op=op, fused=True)
    assert fused == dataclasses.replace(launch, knobs=(*knobs[:-1], 0))


@pytest.mark.parametrize(
    "n, pair, op, threads, k, extra",
    [(262144, F32, registry.SOFTMAX, 4096, 8, 8),  # 65536 chunks: half of 8192 threads, as many chunks again shared
     (262144, F32, registry.LOG_SOFTMAX, 4096, 8, 8),
     (500000, F32, registry.SOFTMAX, 8192, 8, 8),  # 125000 chunks: 16384 threads (whole warps in 16 blocks), halved
     (262140, F32, registry.SOFTMAX, 8192, 8, 0),  # 65535 chunks, SPLIT_SHARED_FROM_CHUNKS: registers
     (128256, F32, registry.SOFTMAX, 4096, 8, 0),  # 32064 chunks: registers
     (524288, BF16, registry.SOFTMAX, 8192, 8, 0),  # 65536 chunks of bfloat16: registers (float32 rows only)
     (262144, F32, registry.SOFTMAX_BACKWARD, 8192, 8, None)],  # the gradients keep theirs (no S)
    ids=["f32_262144", "f32_262144_log_softmax", "f32_500000", "f32_just_under", "f32_128256_registers",
         "bf16_524288_registers", "gradients"],
)
def test_split_row_keeps_long_float32_rows_half_in_shared_memory(h100, n, pair, op, threads, k, extra):
    layout = h100._split_layout(registry.get("split_row"), n, h100._chunks(n, pair, True), pair, split_facts, op)
    assert (layout.threads, layout.k, layout.extra) == (threads, k, extra)


@pytest.mark.parametrize(
    "m, n, pair, op",
    [(23, 128256, F32, registry.SOFTMAX), (15, 262144, F32, registry.SOFTMAX),
     (128, 65536, F32, registry.SOFTMAX), (23, 120000, F32, registry.SOFTMAX), (128, 262144, BF16, registry.SOFTMAX), (64, 150001, F64, registry.SOFTMAX),
     (64, 262144, F32, registry.SOFTMAX_BACKWARD)],
    ids=["n128256_below_24_rows", "n262144_below_16_rows", "n65536_one_block_holds_it", "n120000_below_24_rows",
         "bf16_not_measured", "f64_not_measured", "gradients_never"],
)
def test_split_row_keeps_clusters_outside_the_grid_rule(h100, m, n, pair, op):
    assert h100.plan("split_row", m, n, pair, split_facts, op=op).knobs[-1] > 0  # not the grid (C = 0 or -1)


def test_split_row_without_clusters_keeps_one_block_per_row():
    launch = Planner(SMALL).plan("split_row", 8, 12000, F32, fake_facts)
    assert launch.knobs == (8, 0, 1) and launch.grid == 8  # the plain kernel, no fold: no cluster serves fewer rows


def cluster_bound_facts(name, knobs):
    """split_row float32 as sm_90 builds the one-tree kernel: K = 8 takes 56 registers in one block, 72 in
    clusters of 2 to 8, 64 in clusters of 16 (held there by the kernel's launch bound)."""
    k, c = knobs[0], knobs[-1]
    regs = {2: 32, 4: 40}.get(k) or (56 if c == 1 else 64 if c == 16 else 72)
    return KernelFacts(num_regs=regs, static_smem=272, local_bytes=0, max_threads=max_threads(regs))


@pytest.mark.parametrize("m, knobs, blocks", [(8, (8, -1, 16), 16), (23, (8, -1, 16), 16), (257, (8, -2, -1), 8),
                                             (8192, (8, -2, -1), 8)],
                         ids=["few_rows_clusters", "23_rows_clusters", "257_rows_grid_fold", "many_rows_grid_fold"])
def test_split_row_rows_no_block_holds_take_clusters_that_leave_room(h100, m, knobs, blocks):
    # 120000 float32 (30000 chunks): 4096 logical threads a row in blocks of 256, which the grid cuts the same
    # way from 24 rows on (two logical threads a thread past the rows it holds); (8, 8) would give one 512-thread
    # block an SM
    launch = h100.plan("split_row", m, 120000, F32, cluster_bound_facts)
    assert (launch.knobs, launch.block, launch.unit) == (knobs, 256, blocks)


def wide_block_facts(name, knobs):
    """split_row float32 with K = 8 at 72 registers in one block (896 threads at most)."""
    k, c = knobs[0], knobs[-1]
    regs = {2: 32, 4: 40}.get(k) or (72 if c == 1 else 64)
    return KernelFacts(num_regs=regs, static_smem=272, local_bytes=0, max_threads=max_threads(regs))


def test_split_row_keeps_a_layout_whose_block_rounding_would_overfill(h100):
    # 8192 x 50257 float32: 896 threads and a shared-memory part; 1024 would pass what the kernel
    # launches, so T stays 896 (28 warps), four logical threads each: 3584, which clusters of 4 to 16 cut
    # (1792 threads in each of two blocks would pass what a K = 4 kernel launches)
    many = h100.plan("split_row", 8192, 50257, F32, wide_block_facts)
    assert (many.knobs, many.block, int(many.args[0])) == ((8, -4, 1), 896, 7)
    few = h100.plan("split_row", 1, 50257, F32, wide_block_facts)
    assert (few.knobs, few.block, *map(int, few.args)) == ((4, 1, 16), 224, 0, 1)


def no_cut_facts(name, knobs):
    """split_row whose K = 8 kernels launch at most 640 threads in clusters of 2 (96 registers), 256 elsewhere (255
    registers), and whose one-block kernel leaves no room for a shared-memory part."""
    regs = 96 if knobs[0] == 8 and knobs[-1] == 2 else 255
    static = 150_000 if knobs[-1] == 1 else 272
    return KernelFacts(num_regs=regs, static_smem=static, local_bytes=0, max_threads=max_threads(regs))


def test_split_row_rounds_no_layout_past_its_kernel(h100):
    # 36000 float32 (9000 chunks) over 2 blocks of 576 threads: rounding the row's 1152 threads to whole warps
    # in 16 blocks (1536) would take 768; an earlier rule failed on such a row with min() of no launches
    launch = h100.plan("split_row", 8, 36000, F32, no_cut_facts)
    assert (launch.knobs, launch.block) == ((8, -1, 2), 576)  # no block holds it: R = -1


def unlaunchable_facts(name, knobs):
    """split_row whose static shared memory fills an SM (no block resident); the other variants as usual."""
    facts = split_facts(name, knobs)
    return dataclasses.replace(facts, static_smem=300_000) if name == "split_row" else facts


def test_split_row_refuses_rather_than_fails_where_no_launch_is_resident(h100):
    with pytest.raises(UnsuitableVariant, match="no cluster size cuts a row of 50257 float32"):
        h100.plan("split_row", 8, 50257, F32, unlaunchable_facts)


SPLIT_ROW_LENGTHS = [1000, 4096, 16384, 16388, 26632, 32000, 50257, 65536, 100003, 128256, 262144, 1048576, 2097152]


def row_layout(launch, op=registry.SOFTMAX):
    """What a row's bits follow in split_row (kernels/split_row.cu): its logical threads (C x blockDim.x x R,
    or blocks x blockDim.x on the grid, x -G where G < 0 folds there),
    and unless its outputs come from the row's (max, sum) alone (folds, `again` and R = -1 in clusters, the grid and
    log_softmax always: one pass folds a logical thread's chunks in their order wherever K and S put them) the chunks
    a thread keeps in registers (K) and in shared memory (S). The gradients: T and K (their sums), on the grid too."""
    k, r, c = launch.knobs
    args = tuple(map(int, launch.args))
    if op in registry.BACKWARD:  # the gradients: T (the grid's blocks a row, or C) and K, which their sums follow
        return launch.block * (args[0] if c <= 0 else c), k
    if c <= 0:  # the grid: its blocks a row after S and again; the knob G, or -G folds where G < 0
        blocks, folds = args[2], max(-r, 1)
    elif c > 1:  # clusters fold none (R = -1: one pass)
        blocks, folds = c, 1
    else:  # R = 0: the plain kernel, a thread for each logical thread; R < 0: the plain fold
        blocks, folds = c, abs(r) or 1
    again = c <= 0 or (c > 1 and r < 0) or folds > 1 or args[1:2] == (1,) or op == registry.LOG_SOFTMAX
    threads = launch.block * blocks * folds
    return (threads, "again") if again else (threads, k, args[:2])


@pytest.mark.parametrize("device", [H100, SMALL], ids=["h100_clusters", "small_no_clusters"])
# the rows whose one-block layout folds on sm_90: those with a shared-memory part (float32 past 8192
# chunks, bfloat16 past 8192 too, and 50257 bfloat16, 6283 chunks: SPLIT_TWO_BLOCKS) that four logical
# threads a thread leave at four chunks or fewer
# (100003 float32 needs clusters of its own); float32 rows also fold on the grid past the rows it holds at
# once there (SPLIT_GRID_FOLD: 128256 from 34 rows, 63 among the rows walked here; 100003 too)
@pytest.mark.parametrize("op, pair, facts, folds", [
    (registry.SOFTMAX, F32, "split_facts", {50257, 65536, 100003, 128256}),
    (registry.LOG_SOFTMAX, F32, "split_facts", {50257, 65536, 100003, 128256}),
    (registry.LOG_SOFTMAX, BF16, "split_facts", {50257, 65536, 100003, 128256}),
    (registry.SOFTMAX, F64, "split_facts", set()),  # float64 rows do not fold
    (registry.SOFTMAX_BACKWARD, F32, "gradient_facts_f32", set()),
    (registry.LOG_SOFTMAX_BACKWARD, F32, "log_gradient_facts_f32", set()),  # on the grid past a cluster
    (registry.LOG_SOFTMAX_BACKWARD, BF16, "gradient_facts", set()),
], ids=["softmax_f32", "log_softmax_f32", "log_softmax_bf16", "softmax_f64", "softmax_backward_f32",
        "log_softmax_backward_f32_grid", "log_softmax_backward_bf16_151_registers"])
def test_split_row_cuts_a_row_the_same_way_for_any_number_of_rows(device, op, pair, facts, folds):
    # batch invariance: only C (and with it R) may vary with the rows, and the row's layout may not
    facts = globals()[facts]
    folded = set()
    for n in SPLIT_ROW_LENGTHS:
        for aligned in (True, False):
            layouts = set()
            for m in (1, 2, 3, 8, 63, 64, 100, 131, 132, 1000, 8192):
                try:
                    launch = Planner(device).plan("split_row", m, n, pair, facts, aligned, op)
                except UnsuitableVariant:
                    continue
                layouts.add(row_layout(launch, op))
                assert launch.knobs in registry.get("split_row").knob_sets(op), launch  # a kernel it builds
                k, r, c = launch.knobs  # folds: R < 0 or R > 1 in one block, G < 0 on the grid (R = -1 on clusters is none)
                if (r < 0 and c <= 1) or (r > 1 and c == 1):
                    folded.add(n)
                if launch.args[1:] and int(launch.args[1]):  # `again` where the kernels compile it (split_row.cu)
                    assert launch.knobs[0] <= 4 and pair != F64, launch
            assert len(layouts) <= 1, (n, aligned, layouts)
    # the paths this walks: folds where one block serves many rows and clusters few (forward, sm_90)
    assert folded == (folds if device is H100 else set())


# SPLIT_HALVED_FOLD: a plain call's fold of 4 on one 1024-thread block an SM (2-byte rows past 8192 chunks) runs
# as a fold of 8 on 512 threads, two blocks an SM, from 1.5 rows an SM (198 on the H100's 132 SMs); the same 4096
# logical threads (row_layout), so the same bits. 65537 bfloat16 off boundaries: 8194 chunks, 17 a thread, 9 in
# shared memory.
@pytest.mark.parametrize("m, n, pair, fused, knobs, block, smem", [
    (4096, 65537, BF16, False, (8, -8, 1), 512, 9 * 512 * 16),
    (198, 76000, F16, False, (8, -8, 1), 512, 11 * 512 * 16),  # 9501 chunks: the longest row measured to gain
    (4096, 65537, BF16, True, (8, 4, 1), 1024, 1024 * 16),  # options: the twin of the fold of 4 (8, 8, 1) is not built
    (197, 65537, BF16, False, (8, -4, 1), 1024, 1024 * 16),  # fewer than 1.5 rows an SM
    (4096, 80000, BF16, False, (8, -4, 1), 1024, 2 * 1024 * 16),  # past the table's chunks
    (4096, 40000, F32, False, (8, -4, 1), 1024, 2 * 1024 * 16),  # float32 keeps the fold of 4
], ids=["halved_fold_bf16_65537", "halved_fold_f16_76000_198_rows", "options_keep_the_fold_of_4",
        "fold_of_4_below_1.5_rows_an_sm", "fold_of_4_past_the_table", "fold_of_4_float32"])
def test_a_plain_fold_on_one_block_an_sm_halves_its_block(h100, m, n, pair, fused, knobs, block, smem):
    launch = h100.plan("auto", m, n, pair, split_facts, aligned=False, fused=fused)
    assert (launch.variant, launch.knobs, launch.block, launch.smem, launch.grid) == ("split_row", knobs, block, smem, m)
    assert row_layout(launch) == (4096, "again")


@pytest.mark.parametrize("m, n, pair, op", [(4, 16777220, F32, registry.SOFTMAX),
                                            (4, 4194304, F32, registry.SOFTMAX_BACKWARD),
                                            (64, 524288, F64, registry.SOFTMAX)],
                         ids=["64MB_rows_past_the_grid", "gradients_of_16MB_rows", "float64_4MB_rows"])
def test_split_row_refuses_rows_past_a_cluster_of_16_in_registers(h100, m, n, pair, op):
    # the grid holds rows past a cluster for forward ops of float-accumulating types, up to 65536 x 36 chunks
    # (8 in registers and 28 in 224 KB blocks of 512 threads; a chunk more passes the opt-in limit), and
    # log_softmax's gradient's up to 32768 x 8 chunks (registers only; softmax's gradient has no grid kernel)
    with pytest.raises(UnsuitableVariant, match="does not fit in a cluster of 16 blocks.*variants that can: .*two_pass"):
        h100.plan("split_row", m, n, pair, split_facts, op=op)


# split_facts: 56 registers at K = 8, so blocks of 512 threads fit two an SM by registers, of 1024 one.
# G = 1: a warp a block for each group of 32 warps of T, so 32 blocks a row; G = 4: a warp for every four
@pytest.mark.parametrize(
    "m, n, pair, op, aligned, g, block, blocks, extra",
    [(64, 1048576, F32, registry.SOFTMAX, True, 1, 512, 32, 8),  # 262144 chunks: 16384 threads (8 rows at once; 8192 too)
     (3, 2097152, F32, registry.LOG_SOFTMAX, True, 1, 1024, 32, 8),  # 32768 threads (4 rows at once, as every T)
     (5, 1048576, F32, registry.SOFTMAX, False, 1, 512, 32, 9),  # a chunk more: 16384 threads of 17
     (9, 524289, F32, registry.SOFTMAX, True, 1, 256, 32, 9),  # a chunk past a cluster: 8192 threads (16 rows at once)
     (2, 2097152, BF16, registry.SOFTMAX, True, 1, 512, 32, 8),  # 262144 bfloat16 chunks, as 1048576 float32
     # 1048576 chunks: G = 1 fits no T (32768 threads in 1024-thread blocks would keep 384 KB each); G = 4 cuts
     # 65536 threads into 128 blocks of 512 with 64 KB each (two an SM, 2 rows at once; 32768 threads in blocks
     # of 256 with 96 KB hold as many, and ties take the larger T)
     (4, 4194304, F32, registry.SOFTMAX, True, 4, 512, 128, 8),
     (1, 8388608, F32, registry.LOG_SOFTMAX, True, 4, 512, 128, 24)],  # 192 KB blocks, one an SM: a row at once
    ids=["n1048576_ties_take_more_threads", "n2097152_log_softmax_largest_tree", "misaligned_rows",
         "just_past_a_cluster_most_rows_at_once", "bf16_n2097152", "n4194304_four_groups_a_warp",
         "n8388608_one_row_at_once"],
)
def test_split_row_holds_rows_past_a_cluster_on_the_grid(h100, m, n, pair, op, aligned, g, block, blocks, extra):
    launch = h100.plan("split_row", m, n, pair, split_facts, aligned, op)
    threads = blocks * block
    assert launch.knobs == (8, g, -1) and (launch.block, int(launch.args[0]), int(launch.args[2])) == (block, extra, blocks)
    assert launch.smem == extra * block * 16 and launch.unit == blocks
    slots = h100.blocks_per_sm(block, split_facts("split_row", launch.knobs), launch.smem) * H100.sms // blocks
    assert slots > 0 and launch.grid == min(m, slots) * blocks
    assert launch.tagged == m * blocks * 8 and launch.workspace == launch.tagged + m * (threads // 32) * 2 * 4
    assert h100.plan("auto", m, n, pair, split_facts, aligned, op) == launch


def log_gradient_facts_f32(name, knobs):
    """split_row's log_softmax_backward registers on sm_90 (float32): K = 4 40, K = 8 96 (blocks of 640 threads),
    on the grid (C = 0) K = 8 64 (its bound)."""
    regs = (64 if knobs[-1] == 0 else {2: 40, 4: 40, 8: 96}[knobs[0]]) if name == "split_row" else 64
    return KernelFacts(num_regs=regs, static_smem=512, local_bytes=0, max_threads=max_threads(regs))


# log_softmax's gradient of rows no cluster holds: 8 chunks of dy a thread in registers
# (planner.SPLIT_GRID_BACKWARD_ITEMS, its y read as it writes) on the least T of SPLIT_GRID_BACKWARD_ROW_THREADS
# that holds the row (G = 1, a warp of blocks for each of 32 groups): T = 16384 (blocks of 512) for 81921-131072
# chunks, T = 32768 (blocks of 1024) for 131073-262144; registers as sm_90 builds it (64 at K = 8, under its bound)
@pytest.mark.parametrize(
    "m, n, block",
    # 262144 chunks, the most it holds: 32 blocks of 1024 (one an SM), 4 rows at once
    [(64, 1048576, 1024),
     # 150000 chunks
     (40, 600000, 1024),
     # one chunk past what T = 16384 holds (131072)
     (8, 524292, 1024),
     # 131072 chunks, the most T = 16384 holds
     (8, 524288, 512),
     # one chunk past what a gradient cluster holds (81920 chunks: 16 blocks of 640 threads x 8 chunks)
     (9, 327681, 512),
     # 100000 chunks, one row
     (1, 400000, 512)],
    ids=["log_n1048576_k8_largest_row_it_holds", "log_n600000_rows_in_rounds", "log_one_chunk_past_t16384",
         "log_n524288_largest_row_t16384_holds", "log_one_chunk_past_a_cluster_t16384", "log_n400000_one_row_t16384"])
def test_split_row_holds_log_gradient_rows_past_a_cluster_on_the_grid(h100, m, n, block):
    op = registry.LOG_SOFTMAX_BACKWARD
    launch = h100.plan("split_row", m, n, F32, log_gradient_facts_f32, op=op)
    blocks, threads = 32, 32 * block
    assert (launch.knobs, launch.block, tuple(map(int, launch.args))) == ((8, 1, 0), block, (blocks,))
    assert launch.smem == 0 and launch.unit == blocks
    slots = h100.blocks_per_sm(block, log_gradient_facts_f32("split_row", launch.knobs), 0) * H100.sms // blocks
    assert launch.grid == min(m, slots) * blocks
    # a 64-bit tag per block of each row, then a sum per logical warp of each row
    assert launch.tagged == m * blocks * 8 and launch.workspace == launch.tagged + m * (threads // 32) * 4
    assert h100.plan("auto", m, n, F32, log_gradient_facts_f32, op=op) == launch


# log_softmax's gradient of rows a cluster holds at 8 chunks a thread (y and dy: 96 registers, blocks of 512 for
# 65536 chunks) takes the grid from SPLIT_GRID_BACKWARD_FROM_ROWS rows: the cluster layout's T threads (8192 in 32
# blocks of 256, four an SM at the grid kernel's 64 registers) and K, so the row's bits stay; fewer rows, rows of
# K = 4 layouts and softmax's gradient (no grid kernel built for either) and float64 (whose accumulator the grid
# kernel does not take) keep the clusters
@pytest.mark.parametrize("m, n, pair, op, grid", [
    (SPLIT_GRID_BACKWARD_FROM_ROWS, 262144, F32, registry.LOG_SOFTMAX_BACKWARD, True),
    (128, 262144, F32, registry.LOG_SOFTMAX_BACKWARD, True),
    (SPLIT_GRID_BACKWARD_FROM_ROWS - 1, 262144, F32, registry.LOG_SOFTMAX_BACKWARD, False),
    (128, 128256, F32, registry.LOG_SOFTMAX_BACKWARD, False),
    (128, 131072, F64, registry.LOG_SOFTMAX_BACKWARD, False),
    (128, 262144, F32, registry.SOFTMAX_BACKWARD, False)],
    ids=["log_k8_from_the_rows_it_takes", "log_k8_many_rows_in_rounds", "log_k8_a_row_fewer", "log_k4_layout",
         "log_k8_float64", "softmax_backward_k8"])
def test_log_gradient_k8_cluster_rows_take_the_grid_from_enough_rows(h100, m, n, pair, op, grid):
    facts = log_gradient_facts_f32
    launch = h100.plan("auto", m, n, pair, facts, op=op)
    alone = h100.plan("auto", 1, n, pair, facts, op=op)
    assert launch.variant == alone.variant == "split_row" and alone.knobs[-1] > 1
    assert (launch.knobs[-1] == 0) == grid
    assert row_layout(launch, op) == row_layout(alone, op)
    if grid:
        blocks = 32
        assert (launch.knobs, launch.block, tuple(map(int, launch.args))) == ((8, 1, 0), 256, (blocks,))
        assert launch.smem == 0 and launch.unit == blocks
        slots = h100.blocks_per_sm(256, facts("split_row", launch.knobs), 0) * H100.sms // blocks
        assert launch.grid == min(m, slots) * blocks and (m <= slots) == (m == SPLIT_GRID_BACKWARD_FROM_ROWS)
        # a 64-bit tag per block of each row, then a sum per logical warp of each row
        assert launch.tagged == m * blocks * 8 and launch.workspace == launch.tagged + m * (8192 // 32) * 4
        assert row_layout(launch, op) == (8192, 8)


# rows past what log_softmax's gradient holds on the grid (262144 chunks), and softmax's gradient past a cluster
# (no grid kernel: it tied or lost against two_pass) stay on two_pass
@pytest.mark.parametrize("op, facts, n", [
    (registry.LOG_SOFTMAX_BACKWARD, "log_gradient_facts_f32", 1048580),
    (registry.LOG_SOFTMAX_BACKWARD, "log_gradient_facts_f32", 2097152),
    (registry.SOFTMAX_BACKWARD, "gradient_facts_f32", 400000),
    (registry.SOFTMAX_BACKWARD, "gradient_facts_f32", 600000),
    (registry.SOFTMAX_BACKWARD, "gradient_facts_f32", 1048576)],
    ids=["log_one_chunk_past_the_grid", "log_n2097152", "n400000_no_grid_kernel", "n600000_no_grid_kernel",
         "n1048576_no_grid_kernel"])
def test_gradient_rows_past_what_the_grid_holds_go_to_two_pass(h100, op, facts, n):
    facts = globals()[facts]
    assert h100.plan("auto", 8, n, F32, facts, op=op).variant == "two_pass"
    with pytest.raises(UnsuitableVariant, match="split_row"):
        h100.plan("split_row", 8, n, F32, facts, op=op)


def twin_facts(twin_regs):
    """split_facts, but the grid's G = 1 twin that reads the options (C = 0) at `twin_regs` registers."""
    def facts(name, knobs):
        regs = twin_regs if name == "split_row" and knobs[1:] == (1, 0) else 56 if name == "split_row" else 64
        return KernelFacts(num_regs=regs, static_smem=272, local_bytes=0, max_threads=max_threads(regs))
    return facts


# (id, the twin's registers, its knobs with options, its rows at once): the plain kernel (C = -1) has 56
# registers, two 512-thread blocks an SM, 8 rows at once
TWINS = [("heavier_twin_one_block_an_sm_takes_g4", 72, (8, 4, 0), 8),  # G = 4 (64 registers): 8 rows in blocks of 256
         # lighter, as the bfloat16-in float32-out kernels are (64 against 68): three blocks an SM by shared
         # memory, 12 rows at once (and no room for the mask, which would cost the third)
         ("lighter_twin_more_rows", 40, (8, 1, 0), 12)]


@pytest.mark.parametrize("twin_regs, knobs, rows_at_once", [t[1:] for t in TWINS], ids=[t[0] for t in TWINS])
def test_split_row_cuts_the_grid_by_the_registers_of_the_kernel_the_call_launches(h100, twin_regs, knobs, rows_at_once):
    # 64 x 1048576 float32 (past a cluster): the plain call is cut by its own kernel's registers, as though the
    # twin did not exist; the call with options by the twin's, so that every one of its blocks is resident
    facts = twin_facts(twin_regs)
    plain = h100.plan("split_row", 64, 1048576, F32, facts)
    assert plain == h100.plan("split_row", 64, 1048576, F32, split_facts)
    assert plain.knobs == (8, 1, -1) and plain.grid // plain.unit == 8
    fused = h100.plan("split_row", 64, 1048576, F32, facts, fused=True)
    kernel = facts("split_row", fused.knobs)
    assert fused.knobs == knobs and fused.grid // fused.unit == rows_at_once
    assert fused.grid <= h100.blocks_per_sm(fused.block, kernel, fused.smem) * H100.sms


@pytest.mark.parametrize(
    "m, n, group_rows, slices",
    [(4, 4194304, 1, 512),  # 16 MB rows: one row a group (half of L2 at most), 2048-chunk slices
     (64, 1048576, 6, 88),  # 4 MB rows: six a group, 6 x 88 pieces for 528 blocks
     (1, 4096, 1, 1)],  # a slice keeps at least 2048 chunks
    ids=["few_huge_rows", "many_long_rows", "short_row_one_slice"],
)
def test_two_pass_groups_rows_to_fit_l2_and_slices_them_over_the_resident_grid(h100, m, n, group_rows, slices):
    launch = h100.plan("two_pass", m, n, F32, fake_facts)
    assert launch.grid == 4 * 132  # 64 registers: four blocks of 256 per SM, all resident
    assert tuple(map(int, launch.args)) == (slices, group_rows)
    assert launch.workspace == m * slices * 8 + m * 4  # a float32 (max, sum) per piece, a counter per row
    wide = h100.plan("two_pass", m, n, F64, fake_facts)  # rows twice as long: groups and slices of their own
    assert wide.workspace == m * int(wide.args[0]) * 16 + m * 4


@pytest.mark.parametrize("pair, slices, capacity", [(F32, 88, 6), (F16, 44, 12)])
@pytest.mark.parametrize("op", [registry.SOFTMAX, registry.LOG_SOFTMAX_BACKWARD])
def test_two_pass_slices_a_row_the_same_way_for_any_number_of_rows(h100, op, pair, slices, capacity):
    # rows of 2^20: a group holds six float32 rows (twelve float16) of what the second pass rereads; one
    # row alone takes the slices it takes among 64, ceil(528 blocks / capacity) (batch invariance)
    for m in (1, 2, 5, 6, 7, 64):
        launch = h100.plan("two_pass", m, 1048576, pair, fake_facts, op=op)
        assert tuple(map(int, launch.args)) == (slices, min(m, capacity)), m


def test_rows_past_int_indexing_go_to_online(h100):
    with pytest.raises(UnsuitableVariant, match="index a row with int.*variants that can: .*online"):
        h100.plan("two_pass", 1, 2**31, F32, fake_facts)
    assert h100.plan("auto", 1, 2**31, F32, fake_facts).variant == "online"
    assert h100.plan("auto", 1, 2**31 - 32, F32, fake_facts).variant == "two_pass"


# -- strided: softmax down the columns of an (outer, N, inner) view ---------------------------------------------

# registers of the float32 strided kernels by (R, C > 1), as `cupysoftmax build --arch sm_90` reports them
STRIDED_REGISTERS_SM90_F32 = {(8, False): 46, (8, True): 56, (16, False): 54, (16, True): 64, (32, False): 70,
                              (32, True): 80}


# strided_smem's, by C > 1 (the offline build, sm_90, NVRTC 13.5; the H100 image's NVRTC gave 48 for both)
STRIDED_SMEM_REGISTERS_SM90_F32 = {False: 51, True: 46}


def strided_facts(name, knobs):
    if name == "strided_smem":
        regs = STRIDED_SMEM_REGISTERS_SM90_F32[knobs[0] > 1]
    else:
        regs = STRIDED_REGISTERS_SM90_F32[knobs[0], knobs[1] > 1]
    return KernelFacts(num_regs=regs, static_smem=0, local_bytes=0, max_threads=max_threads(regs))


@pytest.mark.parametrize(
    "outer, n, inner, knobs, block, block_y, grid",
    [(32, 19, 512 * 512, (32, 1), 256, 1, 32 * 1024),  # softmax(x, axis=1) of (32, 19, 512, 512): a column a thread
     (1, 8192, 8192, (32, 16), 16, 16, 512 * 16),  # axis 0 of (8192, 8192): 80 registers allow 800 threads; 16 columns
     (4, 2, 100, (8, 1), 128, 1, 4),  # tiny N: R = 8, no more columns than inner has (100 -> 128)
     (3, 40, 1000, (32, 1), 128, 2, 3 * 8),  # two row-threads of 20 rows: R = 32 still (16 is too few)
     (2, 100, 64, (32, 1), 64, 4, 2),  # four row-threads of 25 rows
     (5, 12, 1000, (16, 1), 256, 1, 5 * 4),  # a column of 12: R = 16, one row-thread, 256 columns a block
     (1, 896, 33, (32, 1), 16, 28, 3),  # one block's row-threads at the 896-thread limit (70 registers), 16 columns
     (1, 897, 33, (32, 2), 16, 15, 3 * 2)],  # one row more: a cluster of two, 449 rows each over 15 row-threads
    ids=["axis1_of_32x19x512x512", "axis0_of_8192x8192_cluster16", "tiny_n_narrow_inner", "n40_two_row_threads",
         "n100_four_row_threads", "n12_r16", "one_block_full", "one_row_past_a_block_cluster2"],
)
def test_strided_holds_a_column_in_the_fewest_blocks(h100, outer, n, inner, knobs, block, block_y, grid):
    launch = h100.plan_columns("strided", outer, n, inner, F32, strided_facts, aligned=True)
    assert (launch.variant, launch.knobs, launch.block, launch.block_y, launch.grid) == (
        "strided", knobs, block, block_y, grid)
    c = knobs[1]
    assert launch.block * launch.block_y <= max_threads(STRIDED_REGISTERS_SM90_F32[knobs[0], c > 1])
    assert c * block_y * knobs[0] >= n  # the column fits
    assert launch.smem == (2 * block * block_y + (2 * (2 + c) * block if c > 1 else 0)) * 4


def test_strided_takes_float64_accumulators_in_shared_memory(h100):
    launch = h100.plan_columns("strided", 2, 19, 4096, F64, strided_facts, aligned=True)
    assert launch.smem == 2 * launch.block * launch.block_y * 8


@pytest.mark.parametrize("outer, n, inner", [(1, 12801, 64), (8, 100_000, 32)], ids=["past_16x25x32", "vocab_column"])
def test_strided_refuses_a_column_past_a_cluster_of_16(h100, outer, n, inner):
    with pytest.raises(UnsuitableVariant, match=rf"a column of {n} float32 does not fit in a cluster of 16 blocks"):
        h100.plan_columns("strided", outer, n, inner, F32, strided_facts, aligned=True)


def test_strided_without_clusters_holds_a_column_in_one_block():
    small = Planner(SMALL)
    assert small.plan_columns("strided", 1, 896, 64, F32, strided_facts, aligned=True).knobs == (32, 1)
    with pytest.raises(UnsuitableVariant, match="a column of 897 float32 does not fit in one block"):
        small.plan_columns("strided", 1, 897, 64, F32, strided_facts, aligned=True)


# -- auto over columns: strided while one block holds a column, strided_smem past that ---------------------------

@pytest.mark.parametrize(
    "outer, n, inner, aligned, variant, knobs",
    [(32, 19, 512 * 512, True, "strided", (32, 1)),  # the segmentation layout: one block of registers
     (2, 896, 64, True, "strided", (32, 1)),  # 28 row-threads of 32 values (70 registers): still one block
     (2, 897, 64, True, "strided_smem", (2,)),  # one row more: 449 lines a block in a cluster of 2
     (1, 8192, 8192, True, "strided_smem", (16,)),  # axis 0 of (8192, 8192): 512 lines (64 KB) a block
     (1, 8192, 8192, False, "strided", (32, 16)),  # rows without one 16-byte phase: registers, a cluster of 16
     # past 16 blocks of registers and past 64 KB a block at C = 16: the most blocks, 801 lines each
     (1, 12801, 64, True, "strided_smem", (16,))],
    ids=["segmentation_registers", "one_block_full_registers", "one_row_past_a_block_smem", "axis0_8192_smem_c16",
         "unaligned_rows_registers_cluster", "past_registers_smem_large_slices"],
)
def test_auto_takes_registers_for_one_block_and_shared_memory_past_it(h100, outer, n, inner, aligned, variant,
                                                                        knobs):
    launch = h100.plan_columns("auto", outer, n, inner, F32, strided_facts, aligned=aligned)
    assert (launch.variant, launch.knobs) == (variant, knobs)


def test_api_plans_columns_through_the_planner_and_caches_the_plan(monkeypatch):
    """api.plan_columns, the entry the calls take, with a made-up H100: the planner's keyword-only aligned passes."""
    from cupysoftmax import api

    monkeypatch.setattr(api, "_planners", {0: Planner(H100)})
    monkeypatch.setattr(api, "_launches", {})
    monkeypatch.setattr(api, "_facts", lambda device_id, pair, op: strided_facts)
    monkeypatch.setattr(api, "_loaded", lambda p, launch, device_id, pair, op: ("kernel", launch.variant))
    monkeypatch.setattr(api, "_active_clusters", lambda kernel, launch, op: 21)  # the H100's count for strided_smem's
    for aligned, variant, clusters in [(True, "strided_smem", 6 * 21), (False, "strided", 512)]:
        kernel, launch = api.plan_columns(0, "auto", 1, 8192, 8192, F32, registry.SOFTMAX, aligned)
        assert (kernel, launch.variant, launch.grid) == (("kernel", variant), variant, clusters * 16)
        assert api.plan_columns(0, "auto", 1, 8192, 8192, F32, registry.SOFTMAX, aligned)[1] is launch


@pytest.mark.parametrize(
    "smem, static, raised",
    [(47 * 1024, 1024, None),  # 48 KB with the static part: the default limit holds it
     (48 * 1024, 1024, 48 * 1024),  # 48 KB dynamic, 1 KB static: past the default (S = 12 of 256 threads)
     (96 * 1024, 0, 96 * 1024)],  # past 48 KB on its own
    ids=["fits_the_default", "past_it_with_the_static_part", "past_it_alone"],
)
def test_api_raises_the_dynamic_shared_memory_limit_where_static_and_dynamic_pass_48_kb(monkeypatch, smem, static,
                                                                                          raised):
    """A block's dynamic and static shared memory together may not pass 48 KB unless the kernel's limit is raised."""
    from cupysoftmax import api, loader
    from cupysoftmax.planner import Launch

    class Function:  # a loaded kernel's attributes, the limit at the driver's default (48 KB less the static part)
        shared_size_bytes = static
        max_dynamic_shared_size_bytes = 48 * 1024 - static

    kernel = Function()
    monkeypatch.setattr(loader, "function", lambda *args: kernel)
    launch = Launch("split_row", (4, 1, 0), 8, 256, smem, ())
    assert api._loaded(Planner(H100), launch, 0, F32, registry.SOFTMAX) is kernel
    assert kernel.max_dynamic_shared_size_bytes == (48 * 1024 - static if raised is None else raised)


def test_auto_refuses_a_column_neither_holds(h100):
    with pytest.raises(UnsuitableVariant, match="no variant holds a column of 100000 float32"):
        h100.plan_columns("auto", 8, 100_000, 32, F32, strided_facts, aligned=True)


@pytest.mark.parametrize(
    "outer, n, inner, pair, knobs, block, block_y, lines",
    [(1, 8192, 8192, F32, (16,), 32, 8, 512),  # 32 columns (128 bytes) by 8 row-threads
     (1, 8192, 8192, BF16, (16,), 64, 8, 512),  # 64 columns of 2 bytes
     (1, 4096, 4096, F32, (8,), 32, 8, 512),
     (16, 512, 4096, F32, (1,), 32, 8, 512),  # a column in one block
     (3, 5, 100, F32, (1,), 32, 5, 5)],  # fewer row-threads than 8 where the slice has fewer rows
    ids=["f32_8192_c16", "bf16_8192_c16", "f32_4096_c8", "f32_512_one_block", "n5_five_row_threads"],
)
def test_strided_smem_takes_the_fewest_blocks_whose_slices_fit_64_kb(h100, outer, n, inner, pair, knobs, block,
                                                                       block_y, lines):
    launch = h100.plan_columns("strided_smem", outer, n, inner, pair, strided_facts, aligned=True)
    assert (launch.knobs, launch.block, launch.block_y) == (knobs, block, block_y)
    c = knobs[0]
    assert -(-n // c) == lines and lines * 128 <= 64 * 1024
    reductions = 2 * block * block_y + 2 * block + (2 * (2 + c) * block if c > 1 else 0)
    assert launch.smem == reductions * 4 + lines * 128
    tiles = -(-(inner + 16 // pair[0].itemsize - 1) // block)  # room for x's misalignment
    assert launch.grid == outer * tiles * c


@pytest.mark.parametrize(
    "outer, n, inner, pair, active, clusters",
    [(1, 8192, 8192, F32, 21, 6 * 21),  # 257 items: six rounds of the 21 clusters held at once
     (1, 4096, 4096, F32, 45, 45),  # 129 items: one round leaves each cluster 2 or more
     (1, 2048, 16384, F32, 92, 2 * 92),  # 513 items: two rounds
     (1, 8192, 8192, BF16, 14, 4 * 14),  # 129 items of 64 columns: four rounds (five or six leave some one)
     (1, 8192, 300, F32, 21, 10),  # 10 items, fewer than two a held cluster: a cluster an item
     (1, 8192, 8192, F32, 0, 257),  # the driver could not say: a cluster an item
     (16, 512, 4096, F32, 21, 16 * 129)],  # C = 1: no clusters to hold, a block an item
    ids=["f32_8192_six_rounds", "f32_4096_one_round", "f32_2048x16384_two_rounds", "bf16_8192_four_rounds",
         "few_items_cluster_an_item", "count_unknown_cluster_an_item", "one_block_an_item"],
)
def test_strided_smem_loops_its_clusters_over_items_by_the_clusters_held(h100, outer, n, inner, pair, active,
                                                                           clusters):
    launch = h100.plan_columns("strided_smem", outer, n, inner, pair, strided_facts, aligned=True)
    c = launch.knobs[0]
    assert Planner.loops(launch, registry.SOFTMAX) == (c > 1)
    assert h100.persistent(launch, active, registry.SOFTMAX).grid == clusters * c


@pytest.mark.parametrize(
    "m, n, pair, op, active, clusters",
    [(8192, 50257, BF16, registry.SOFTMAX_BACKWARD, 92, 92),  # 8192 rows: one round of the 92 held (H200)
     (184, 50257, BF16, registry.SOFTMAX_BACKWARD, 92, 92),  # two rows a held cluster, the fewest that loop
     (183, 50257, BF16, registry.SOFTMAX_BACKWARD, 92, 183),  # fewer: a cluster a row
     (8192, 50257, BF16, registry.LOG_SOFTMAX_BACKWARD, 92, 92),  # log_softmax's gradient alike
     (8192, 50257, BF16, registry.SOFTMAX_BACKWARD, 0, 8192),  # the driver could not say: a cluster a row
     (32, 128256, BF16, registry.SOFTMAX, 2, 32),  # the forward ops: a cluster a row, however few clusters held
     (1024, 262144, BF16, registry.SOFTMAX, 92, 1024)],  # ... and however many rows (not measured looping)
    ids=["gradient_8192_one_round", "gradient_184_two_rows_a_cluster", "gradient_183_cluster_a_row",
         "log_gradient_8192_one_round", "count_unknown_cluster_a_row", "forward_few_rows_cluster_a_row",
         "forward_many_rows_cluster_a_row"],
)
def test_split_row_loops_its_clusters_over_rows_by_the_clusters_held(h100, m, n, pair, op, active, clusters):
    launch = h100.plan("split_row", m, n, pair, split_facts, True, op)
    c = launch.knobs[-1]
    assert c > 1 and launch.grid == m * c  # planned a cluster a row; the cut comes after, from the driver's count
    assert Planner.loops(launch, op) == (op in registry.BACKWARD)  # (CLUSTER_ROUNDS: the gradients only)
    assert h100.persistent(launch, active, op).grid == clusters * c


@pytest.mark.parametrize("last_knob, planned", [
    ((16,), lambda p: p.plan_columns("strided", 1, 8192, 8192, F32, strided_facts, aligned=True)),  # not looping
    ((1,), lambda p: p.plan("split_row", 8192, 4096, F32, split_facts)),  # one block a row
    ((-1,), lambda p: p.plan("split_row", 64, 1048576, F32, split_facts)),  # on the grid (a cooperative launch)
    ((), lambda p: p.plan("online", 8192, 4096, F32, fake_facts))],  # a variant without knobs
    ids=["strided_clusters", "split_row_one_block", "split_row_grid", "online_no_knobs"])
def test_only_looping_cluster_launches_loop(h100, last_knob, planned):
    launch = planned(h100)
    assert launch.knobs[-1:] == last_knob and not Planner.loops(launch, registry.SOFTMAX)
    assert h100.persistent(launch, 21, registry.SOFTMAX) is launch


def test_strided_smem_refuses_rows_without_one_16_byte_phase(h100):
    with pytest.raises(UnsuitableVariant, match="strides must be whole multiples of 16 bytes"):
        h100.plan_columns("strided_smem", 1, 8192, 8192, F32, strided_facts, aligned=False)


def test_strided_smem_refuses_a_column_past_a_clusters_shared_memory(h100):
    with pytest.raises(UnsuitableVariant, match="a column of 40000 float32 needs .* in a cluster of 16"):
        h100.plan_columns("strided_smem", 1, 40_000, 32, F32, strided_facts, aligned=True)


# an sm_80 GPU without clusters whose blocks opt in to 64 KB of shared memory, no more
NO_CLUSTERS_64KB = dataclasses.replace(SMALL, compute_capability=(8, 0))


def test_strided_smem_without_clusters_takes_one_block_up_to_the_opt_in_limit():
    planner = Planner(NO_CLUSTERS_64KB)
    launch = planner.plan_columns("strided_smem", 1, 400, 64, F32, strided_facts, aligned=True)
    assert launch.knobs == (1,) and launch.smem <= NO_CLUSTERS_64KB.smem_per_block_optin
    # 495 lines (63360 bytes) fit 64 KB, but not with the reductions' 2304 bytes: refused, not launched past the limit
    with pytest.raises(UnsuitableVariant, match="a column of 495 float32 needs 65664 bytes a block in a cluster of 1"):
        planner.plan_columns("strided_smem", 1, 495, 64, F32, strided_facts, aligned=True)


def test_strided_smem_needs_cp_async():
    with pytest.raises(UnsuitableVariant, match="cp.async, which needs sm_80"):
        Planner(SMALL).plan_columns("strided_smem", 1, 400, 64, F32, strided_facts, aligned=True)


def test_auto_over_columns_refuses_the_gradients(h100):
    with pytest.raises(UnsuitableVariant, match="strided computes softmax, log_softmax only"):
        h100.plan_columns("auto", 2, 5000, 64, F32, strided_facts, op=registry.SOFTMAX_BACKWARD, aligned=True)


def test_strided_grid_stops_at_the_grid_limit(h100):
    # 2^31 items of 64 columns: the kernel loops
    launch = h100.plan_columns("auto", 2**31, 4, 64, F32, strided_facts, aligned=True)
    assert launch.grid == 2**31 - 1 and launch.block == 64


def test_strided_reads_columns_and_row_variants_read_rows(h100):
    with pytest.raises(UnsuitableVariant, match=r"strided reads columns.*variants that can: naive"):
        h100.plan("strided", 8, 1000, F32, fake_facts)
    with pytest.raises(UnsuitableVariant, match="split_row reads rows; .* in place: strided"):
        h100.plan_columns("split_row", 1, 100, 64, F32, fake_facts, aligned=True)
    assert "strided" not in {v for _, v in AUTO_FIRST} | set(AUTO_ORDER)  # auto over rows never picks it


def test_strided_computes_both_forward_ops_only(h100):
    launch = h100.plan_columns("strided", 2, 19, 64, F32, strided_facts, op=registry.LOG_SOFTMAX, aligned=True)
    assert launch.knobs == (32, 1)
    with pytest.raises(UnsuitableVariant, match="strided computes softmax, log_softmax only"):
        h100.plan_columns("strided", 2, 19, 64, F32, strided_facts, op=registry.SOFTMAX_BACKWARD, aligned=True)


def gradient_facts_f32(name, knobs):
    """split_row's softmax_backward registers on sm_90 (`cupysoftmax build`, float32): K = 4 48, K = 8 96."""
    regs = {2: 40, 4: 48, 8: 96}[knobs[0]] if name == "split_row" else 64
    return KernelFacts(num_regs=regs, static_smem=272, local_bytes=0, max_threads=max_threads(regs))


@pytest.mark.parametrize("m, n, knobs, threads", [
    (8192, 50257, (4, 1, 8), 416),  # the smallest C with three blocks an SM; T = 3328, its own (not 3584)
    (4096, 65536, (4, 1, 16), 256),  # C = 8 (512 threads) holds two
    (4096, 32768, (4, 1, 8), 256),
    (128, 128256, (4, 1, 16), 512),  # none holds three: two
    (128, 262144, (8, 1, 16), 512),  # K = 4 would take 1024 threads (one block an SM): the forward's rule
    (8, 128256, (4, 1, 16), 512),  # fewer than SPLIT_BLOCK_ROWS rows: the same threads a row, the most blocks
    (4096, 16384, (8, 1, 1), 512),  # no clusters below SPLIT_CLUSTER_MIN_CHUNKS: the forward's rule
], ids=["vocab_rows_c8", "long_rows_c16", "rows_of_32k_c8", "rows_128_two_blocks_k4", "rows_128_of_256k_k8",
        "rows_8_same_threads", "one_block_rows_unchanged"])
def test_gradients_take_four_chunks_and_clusters_that_leave_room(h100, m, n, knobs, threads):
    launch = h100.plan("split_row", m, n, F32, gradient_facts_f32, op=registry.SOFTMAX_BACKWARD)
    assert (launch.knobs, launch.block) == (knobs, threads)


@pytest.mark.parametrize("m, knobs, threads", [
    (8192, (4, 1, 4), 416),  # 1571 threads at K = 4, 416 a block in the smallest C with three blocks an SM:
                             # T = 1664, not 1792 (8 blocks of 7 warps) nor 2048 (16 blocks of 4 warps)
    (8, (4, 1, 4), 416),  # few rows: the largest C that cuts T = 1664
], ids=["vocab_rows_c4", "few_rows_c4"])
def test_gradients_keep_the_threads_of_the_layout_that_holds_the_row(h100, m, knobs, threads):
    # 8192 x 50257 bfloat16 (6283 chunks), its kernels at float32's registers (planner: the gradients keep T)
    launch = h100.plan("split_row", m, 50257, BF16, gradient_facts_f32, op=registry.SOFTMAX_BACKWARD)
    assert (launch.knobs, launch.block, launch.block * knobs[-1]) == (knobs, threads, 1664)


# (id naming the path, M, N, pair, rows of y on 16-byte boundaries, auto's knobs): log_softmax's gradient on 2-byte
# K = 4 clusters of up to 8 blocks takes the late-y twin (R = 2) where y's rows are not all whole chunks on 16-byte
# boundaries, on the launch of the kernel it replaces; never float32, C = 16, nor rows of whole chunks on boundaries.
LATE_Y = [
    ("bf16_vocab_rows_odd_n_late_y_c4", 8192, 50257, BF16, False, (4, 2, 4)),
    ("f16_vocab_rows_odd_n_late_y_c4", 8192, 50257, F16, False, (4, 2, 4)),
    ("bf16_row_alone_odd_n_late_y_c4", 1, 50257, BF16, True, (4, 2, 4)),
    ("bf16_whole_chunks_off_boundaries_late_y_c8", 4096, 65536, BF16, False, (4, 2, 8)),
    ("bf16_whole_chunks_on_boundaries_y_with_dy_c8", 4096, 65536, BF16, True, (4, 1, 8)),
    ("f32_odd_n_y_with_dy_c8", 8192, 50257, F32, False, (4, 1, 8)),
    ("bf16_c16_y_with_dy", 128, 128256, BF16, False, (4, 1, 16)),
]


@pytest.mark.parametrize("m, n, pair, aligned, knobs", [c[1:] for c in LATE_Y], ids=[c[0] for c in LATE_Y])
def test_log_gradient_takes_the_late_y_twin_on_2_byte_rows_off_16_byte_boundaries(h100, m, n, pair, aligned, knobs):
    launch = h100.plan("auto", m, n, pair, gradient_facts_f32, aligned, registry.LOG_SOFTMAX_BACKWARD)
    # softmax's gradient has no twin: its launch is the layout the twin takes over (the facts do not read the op)
    held = h100.plan("auto", m, n, pair, gradient_facts_f32, aligned, registry.SOFTMAX_BACKWARD)
    assert (launch.variant, launch.knobs) == ("split_row", knobs)
    assert launch == dataclasses.replace(held, knobs=knobs)
    assert held.knobs == (knobs[0], 1, knobs[2]) and (knobs in registry.SPLIT_LATE_Y) == (knobs[1] == 2)
