"""scale= and where= without a GPU: their checks, the planner's rule, the reference's semantics."""
import dataclasses
from types import SimpleNamespace

import numpy
import pytest

from cupysoftmax import dtypes, fused, reference
from cupysoftmax import variants as registry
from cupysoftmax.errors import UnsuitableVariant
from cupysoftmax.planner import Launch, Planner

from fakes import H100
from test_planner import F32, fake_facts


@pytest.mark.parametrize("scale", [2, 0.5, numpy.float32(0.25), numpy.int64(3), 1e-30])
def test_scales_are_positive_finite_reals(scale):
    assert fused.check_scale(scale) == float(scale)


@pytest.mark.parametrize("scale, error", [(0.0, ValueError), (-1.0, ValueError), (float("inf"), ValueError),
                                          (float("nan"), ValueError), (10**400, ValueError), ("2", TypeError),
                                          (True, TypeError), (None, TypeError), (1 + 2j, TypeError)])
def test_bad_scales_raise(scale, error):
    with pytest.raises(error, match="scale must be"):
        fused.check_scale(scale)


@pytest.mark.parametrize("scale", [1e-39, 1e39], ids=["below_float32_normals", "past_float32_max"])
def test_scales_outside_the_accumulation_type_raise(scale):
    # float32 kernels take scale as a float (subnormals flushed): 0 or inf there
    with pytest.raises(ValueError, match="normal float32 number"):
        fused.check_scale(scale, numpy.float32)
    assert fused.check_scale(scale, numpy.float64) == scale


@pytest.mark.parametrize("scale, where, plain", [(1.0, None, True), (2.0, None, False), (1, None, False),
                                                 (1.0, "mask", False)])
def test_only_the_defaults_take_the_plain_path(scale, where, plain):
    # an int 1 goes through check_scale (the hot path tests the default float only)
    assert fused.is_plain(scale, where) is plain


def fake_mask(shape, dtype=numpy.bool_, device=0):
    return SimpleNamespace(shape=shape, dtype=numpy.dtype(dtype), device=SimpleNamespace(id=device))


@pytest.mark.parametrize("shape", [(4, 5), (5,), (1, 5), (4, 1), (1,), ()])
def test_masks_that_broadcast_pass(shape):
    fused.check_where(fake_mask(shape), (4, 5), 0)


@pytest.mark.parametrize("mask, error, message", [
    (fake_mask((4, 5), numpy.float32), TypeError, "boolean"),
    (fake_mask((3, 5)), ValueError, "does not broadcast"),
    (fake_mask((2, 4, 5)), ValueError, "does not broadcast"),  # would broadcast x up
    (fake_mask((4, 5), device=1), ValueError, "device 1"),
])
def test_bad_masks_raise(mask, error, message):
    with pytest.raises(error, match=message):
        fused.check_where(mask, (4, 5), 0)


def test_kernel_args_without_a_mask_pass_a_null_pointer():
    assert fused.kernel_args(2.0, None) == (2.0, 0, 0, 1)
    assert fused.kernel_args(1.0, None) == fused.PLAIN


def mask_rows(ptr, stride):
    """A (P, N) mask's stand-in for kernel_args and direct: its data pointer and row stride in bytes."""
    return SimpleNamespace(data=SimpleNamespace(ptr=ptr), strides=(stride, 1))


def test_kernel_args_pass_one_mask_row_for_all_with_stride_0():
    # a genuine one-row axis has a nonzero stride (x of shape (4, 1, N) against a mask of (1, 1, N)): row r's mask
    # at r strides on (warp_rows' O = 2) must still be that row
    one = mask_rows(512, 1000)
    assert fused.kernel_args(2.0, (one, 1)) == (2.0, one, 0, 1)
    every = mask_rows(512, 1000)
    assert fused.kernel_args(2.0, (every, 8)) == (2.0, every, 1000, 8)


# (id naming the kernel the mask allows, (mask rows' pointer and stride, P) or None, M, x's itemsize, direct):
# the kernels on whole chunks read mask row r at r strides on, one aligned word a chunk (fused.direct)
DIRECT = [("no_mask_whole_chunks", None, 64, 4, True),
          ("a_row_each_whole_chunks", ((256, 1024), 64), 64, 4, True),
          ("one_row_for_all_whole_chunks", ((256, 0), 1), 64, 2, True),
          ("one_genuine_row_whole_chunks", ((256, 1001), 1), 64, 4, True),
          ("a_row_each_2_byte_stride_of_8_whole_chunks", ((264, 8), 64), 64, 2, True),
          ("period_between_1_and_m_options_twin", ((256, 1024), 8), 64, 4, False),
          ("rows_off_the_chunk_phase_options_twin", ((256, 1020), 64), 64, 2, False),
          ("first_row_off_the_chunk_phase_options_twin", ((258, 1024), 64), 64, 4, False)]


@pytest.mark.parametrize("mask, m, itemsize, direct", [c[1:] for c in DIRECT], ids=[c[0] for c in DIRECT])
def test_direct_masks_are_read_row_for_row_at_x_phase(mask, m, itemsize, direct):
    pair = None if mask is None else (mask_rows(*mask[0]), mask[1])
    assert fused.direct(pair, m, itemsize) is direct


@pytest.mark.parametrize("itemsize", [2, 4, 8])
@pytest.mark.parametrize("stride_elements", [1, 2, 3, 4, 6, 50257, 50260, 1024])
@pytest.mark.parametrize("first", [0, 1, 3, 7])
def test_row_phases_repeat_after_q_rows_and_no_sooner(itemsize, stride_elements, first):
    chunk = 16 // itemsize
    ptr = 4096 + first * itemsize
    q, phase = fused.row_phases(ptr, stride_elements * itemsize, itemsize)
    phases = [(ptr // itemsize + r * stride_elements) % chunk for r in range(3 * chunk)]
    assert phase == phases[0]
    assert all(phases[r] == (phase + (r % q) * stride_elements) % chunk for r in range(3 * chunk))
    assert len(set(phases)) == q  # every phase in a cycle differs: no shorter period


def rows_of(nbytes_each, m, n, itemsize, ptr=4096):
    """x's rows' stand-in for phased's early returns: (M, N) at row stride nbytes_each."""
    return SimpleNamespace(shape=(m, n), strides=(nbytes_each, itemsize), itemsize=itemsize,
                           data=SimpleNamespace(ptr=ptr), nbytes=m * n * itemsize)


# (id naming why the mask goes as it came, mask pair, x's rows): only one row for all, at PHASED_FROM bytes of x and
# PHASED_FROM_ROWS rows or more, some row off its phase, is copied (on the GPU: test_gpu_fused)
AS_IT_CAME = [("no_mask", None, rows_of(50257 * 4, 8192, 50257, 4)),
              ("a_row_each", (mask_rows(0, 50257), 8192), rows_of(50257 * 4, 8192, 50257, 4)),
              ("below_the_bytes_limit", (mask_rows(0, 0), 1), rows_of(8191 * 4, 4096, 8191, 4)),
              ("below_the_rows_limit", (mask_rows(0, 0), 1), rows_of(4194305 * 4, 32, 4194305, 4)),
              ("rows_in_phase", (mask_rows(0, 0), 1), rows_of(65536 * 4, 4096, 65536, 4)),
              ("rows_one_element_in_and_the_row_too", (mask_rows(1, 0), 1),
               rows_of(65536 * 4, 4096, 65536, 4, ptr=4100))]


@pytest.mark.parametrize("mask, x2", [c[1:] for c in AS_IT_CAME], ids=[c[0] for c in AS_IT_CAME])
def test_masks_go_as_they_came_unless_one_row_meets_rows_out_of_phase(mask, x2):
    assert fused.phased(mask, x2) is mask


@pytest.mark.parametrize("variant", [name for name, v in registry.VARIANTS.items() if not v.fused])
def test_variants_without_options_refuse_them(variant):
    with pytest.raises(UnsuitableVariant, match="takes no scale= or where=; variants that do: "
                                                "warp_rows, split_row, two_pass"):
        Planner(H100).plan(variant, 4, 1000, F32, fake_facts, op=registry.SOFTMAX, fused=True)


@pytest.mark.parametrize("m, n, variant, twin", [(8, 100, "warp_rows", True), (4096, 1100, "split_row", True),
                                                 (8192, 50257, "split_row", True),
                                                 (8, 50257, "split_row", False), (8, 128256, "split_row", False),
                                                 (8, 4_194_304, "split_row", True),
                                                 (8, 2**24 + 4, "two_pass", False)],
                         ids=["short_rows_warp_rows_plain", "block_row_in_registers_split_row_plain",
                              "vocab_many_rows_split_row_plain_fold", "vocab_split_row_clusters",
                              "row_no_block_holds_split_row_clusters_in_one_pass",
                              "past_a_cluster_split_row_grid", "past_the_grid_two_pass"])
def test_auto_with_options_picks_what_it_picks_without(m, n, variant, twin):
    # the same launch; where the call without options gets a plain kernel (the options compiled out: its
    # plain_knob at 0, split_row's plain fold at -4, or its grid's C at -1), the call with them gets the twin
    # that reads them (that knob at 1, or 4, or C at 0), a kernel the variant builds
    h100 = Planner(H100)
    with_options = h100.plan("auto", m, n, F32, fake_facts, fused=True)
    assert with_options.variant == variant
    plain = h100.plan("auto", m, n, F32, fake_facts)
    v = registry.VARIANTS[variant]
    assert with_options == Planner.with_options(v, plain, True)  # scale= alone: no room for a mask (MASK_ROOM)
    assert (with_options.knobs != plain.knobs) == twin
    if twin:
        i = -1 if v.gridded(plain.knobs) else v.plain_knob
        assert (plain.knobs[i], with_options.knobs[i]) in {(0, 1), (-4, 4), (-1, 0)}
        assert with_options.knobs in v.knob_sets(registry.SOFTMAX)
    assert dataclasses.replace(with_options, knobs=plain.knobs) == plain


# (id naming the path, M, N, dtype, the launch's knobs with where=, whether it gets room for the mask bytes of its cached
# chunks)
F64 = (numpy.dtype("float64"),) * 2
MASK_ROOM = [("vocab_many_rows_fold_two_blocks_an_sm_keep_two", 8192, 50257, F32, (8, 4, 1), True),
             ("row_in_registers_no_cached_chunks", 4096, 1024, F32, (2, 1, 1), False),
             ("float64_clusters_no_cached_chunks", 8192, 50257, F64, (8, 1, 8), False),
             ("past_a_cluster_grid_g1_stages", 64, 1048576, F32, (8, 1, 0), True),
             ("grid_g4_reads_words_one_at_a_time", 4, 4194304, F32, (8, 4, 0), False),
             ("clusters_of_16_read_words_one_at_a_time", 8, 262144, F32, (8, -1, 16), False)]


@pytest.mark.parametrize("m, n, pair, knobs, room", [c[1:] for c in MASK_ROOM], ids=[c[0] for c in MASK_ROOM])
def test_split_row_with_where_stages_the_mask_where_it_costs_no_block(m, n, pair, knobs, room):
    h100 = Planner(H100)
    masked = h100.plan("split_row", m, n, pair, fake_facts, masked=True)
    plain = h100.plan("split_row", m, n, pair, fake_facts)
    assert masked.knobs == knobs
    s, v = int(plain.args[0]), 16 // pair[0].itemsize
    assert masked.smem - plain.smem == (s * plain.block * v if room else 0)
    assert not room or s > 0
    kernel = fake_facts("split_row", masked.knobs)
    assert h100.blocks_per_sm(masked.block, kernel, masked.smem) == h100.blocks_per_sm(
        plain.block, kernel, plain.smem)
    # scale= alone: the same kernel on the plain call's shared memory (the kernel stages mask bytes only where a
    # mask is passed)
    assert h100.plan("split_row", m, n, pair, fake_facts, fused=True) == dataclasses.replace(masked, smem=plain.smem)


def test_no_mask_room_for_float64_whose_2_byte_words_cp_async_cannot_copy():
    # one block a row with a shared-memory part, as float32 gets it room: float64's V = 2 bytes a chunk stay in L2
    h100 = Planner(H100)
    launch = Launch("split_row", (8, 1, 1), grid=264, block=512, smem=5 * 512 * 16, args=(numpy.int32(5), numpy.int32(0)))
    assert h100.with_mask_room(registry.VARIANTS["split_row"], launch, F64, fake_facts) == launch
    assert h100.with_mask_room(registry.VARIANTS["split_row"], launch, F32, fake_facts).smem == 5 * 512 * 20


def test_no_mask_room_where_it_would_cost_a_block_an_sm():
    # a launch whose blocks fill an SM's shared memory: the mask's bytes would leave room for one block fewer
    h100 = Planner(H100)
    launch = Launch("split_row", (8, 1, 1), grid=264, block=512, smem=12 * 512 * 16, args=(numpy.int32(12), numpy.int32(0)))
    kernel = fake_facts("split_row", launch.knobs)
    assert h100.blocks_per_sm(512, kernel, launch.smem) == 2
    assert h100.with_mask_room(registry.VARIANTS["split_row"], launch, F32, fake_facts) == launch
    smaller = dataclasses.replace(launch, smem=10 * 512 * 16, args=(numpy.int32(10), numpy.int32(0)))
    assert h100.with_mask_room(registry.VARIANTS["split_row"], smaller, F32, fake_facts).smem == 10 * 512 * 20


# (id naming the path, M, N, dtype pair, where='s knobs and block, scale='s knobs and block): where= rows held in
# one block's registers at K = 8 take K = 4 on twice the threads up to 2048 chunks (planner.SPLIT_MASKED_ITEMS),
# float32 and 2-byte rows only
F16, BF16, F16_F32 = (dtypes.FLOAT16,) * 2, (dtypes.BFLOAT16,) * 2, (dtypes.FLOAT16, dtypes.FLOAT32)
MASK_LAYOUT = [("f16_1024_chunks_k4_on_256_threads", 4096, 8192, F16, (4, 1, 1), 256, (8, 1, 1), 128),
               ("bf16_2048_chunks_k4_on_512_threads", 4096, 16384, BF16, (4, 1, 1), 512, (8, 1, 1), 256),
               ("f32_1024_chunks_k4_on_256_threads", 4096, 4096, F32, (4, 1, 1), 256, (8, 1, 1), 128),
               ("bf16_4096_chunks_past_the_table_keep_k8", 2048, 32768, BF16, (8, 1, 1), 512, (8, 1, 1), 512),
               ("f32_512_chunks_already_k4", 4096, 2048, F32, (4, 1, 1), 128, (4, 1, 1), 128),
               ("f64_1024_chunks_not_measured_keep_k8", 4096, 2048, F64, (8, 1, 1), 128, (8, 1, 1), 128),
               ("f16_in_f32_out_not_measured_keeps_k8", 4096, 8192, F16_F32, (8, 1, 1), 128, (8, 1, 1), 128)]


@pytest.mark.parametrize("op", registry.FORWARD)
@pytest.mark.parametrize("m, n, pair, knobs, block, scaled_knobs, scaled_block", [c[1:] for c in MASK_LAYOUT],
                         ids=[c[0] for c in MASK_LAYOUT])
def test_where_takes_four_chunks_a_thread_where_one_block_holds_its_row_at_eight(m, n, pair, knobs, block,
                                                                                  scaled_knobs, scaled_block, op):
    h100 = Planner(H100)
    masked = h100.plan("auto", m, n, pair, fake_facts, True, op, masked=True)
    scaled = h100.plan("auto", m, n, pair, fake_facts, True, op, fused=True)
    assert (masked.variant, masked.knobs, masked.block) == ("split_row", knobs, block)
    assert (scaled.knobs, scaled.block) == (scaled_knobs, scaled_block)
    assert masked.grid == scaled.grid
    # pick takes where= alone as a call with options too: the twin that reads them, never the plain kernel
    assert h100.pick(m, n, pair, fake_facts, True, op, masked=True) == masked
    # the layout follows the row, not the rows: one row alone gets the same
    alone = h100.plan("auto", 1, n, pair, fake_facts, True, op, masked=True)
    assert (alone.knobs, alone.block) == (masked.knobs, masked.block)


def test_where_keeps_folds_clusters_shared_memory_parts_and_blocks_the_k4_kernel_cannot_launch():
    # launches with_mask_layout leaves as they are, each on an aligned row of 4096 float32 (1024 chunks, which K = 4
    # serves on one block of 256 threads)
    h100, v = Planner(H100), registry.VARIANTS["split_row"]
    one_block = Launch("split_row", (8, 1, 1), grid=4096, block=128, smem=0, args=(numpy.int32(0), numpy.int32(0)))
    kept = [dataclasses.replace(one_block, knobs=(8, 4, 1), smem=2 * 128 * 16, args=(numpy.int32(2), numpy.int32(0))),
            dataclasses.replace(one_block, knobs=(8, 1, 2), grid=8192, block=64, unit=2),
            dataclasses.replace(one_block, smem=2 * 128 * 16, args=(numpy.int32(2), numpy.int32(0)))]
    for launch in kept:
        assert h100.with_mask_layout(v, launch, 4096, F32, True, fake_facts, registry.SOFTMAX) == launch
    four = h100.with_mask_layout(v, one_block, 4096, F32, True, fake_facts, registry.SOFTMAX)
    assert (four.knobs, four.block, four.grid, four.smem) == ((4, 1, 1), 256, 4096, 0)

    def k4_to_128_threads(name, knobs):
        facts = fake_facts(name, knobs)
        return dataclasses.replace(facts, max_threads=128) if knobs[0] == 4 else facts

    assert h100.with_mask_layout(v, one_block, 4096, F32, True, k4_to_128_threads, registry.SOFTMAX) == one_block


def test_auto_with_options_refuses_rows_only_online_serves():
    with pytest.raises(UnsuitableVariant, match="with scale= or where="):
        Planner(H100).plan("auto", 1, 2**31, F32, fake_facts, fused=True)


@pytest.mark.parametrize("function, masked", [(reference.softmax, 0.0), (reference.log_softmax, -numpy.inf)])
def test_reference_masks_like_jax(function, masked):
    x = numpy.array([[1.0, numpy.nan, 3.0], [numpy.nan, numpy.nan, numpy.nan], [-numpy.inf, 2.0, 5.0]])
    keep = numpy.array([[True, False, True], [False, False, False], [True, False, False]])
    got = function(x, -1, scale=2.0, where=keep)
    plain = function(numpy.array([2.0, 6.0]), -1)
    numpy.testing.assert_allclose(got[0, [0, 2]], plain)
    assert got[0, 1] == masked and (got[1] == masked).all()  # a row masked out everywhere
    assert numpy.isnan(got[2, 0]) and (got[2, 1:] == masked).all()  # kept values all -inf: NaN, as unmasked


def test_reference_scale_is_softmax_of_scaled_x():
    x = numpy.random.default_rng(0).standard_normal((3, 50))
    numpy.testing.assert_allclose(reference.softmax(x, -1, scale=0.3), reference.softmax(0.3 * x, -1))
