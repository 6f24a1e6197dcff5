"""scale= and where= on the GPU against the float64 reference (reference.softmax(x, scale=, where=)).

Outputs are poisoned with NaN before every launch, inputs fresh standard
normal x 3, masks fresh random; masked-out positions of x hold NaN, which must
not reach their row.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, dtypes, reference
from cupysoftmax import variants as registry
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

OPS = list(api.FUNCTIONS)
VARIANTS = ["auto", *(name for name, v in registry.VARIANTS.items() if v.fused)]
DTYPES = [dtypes.FLOAT16, dtypes.BFLOAT16, dtypes.FLOAT32, dtypes.FLOAT64]

# (id naming the code path it reaches on the H100, M, N)
SHAPES = [
    ("n33_warp_rows_tail", 5, 33),
    ("n1000_warp_rows_full_warp", 4, 1000),
    ("n4097_split_row_block_tail", 3, 4097),
    ("n50257_split_row_cluster", 2, 50257),
    ("m64_n50257_split_row_shared_memory_part", 64, 50257),  # float32 / float64: one block a row, S > 0
    ("n150001_clusters_of_16", 2, 150_001),  # split_row's largest clusters; two_pass by name
]

# How the mask reaches the kernel: none (scale only); a full (M, N) mask; one
# row broadcast to every row (row stride 0); a view one byte in (element
# loads, misaligned); a column (M, 1) broadcast along the row: one contiguous copy.
MASKS = ["scale_only", "full", "one_row_for_all", "misaligned_view", "column_copied"]


def draw_mask(rng, shape, kind):
    m, n = shape
    if kind == "scale_only":
        return None
    if kind == "column_copied":
        return cupy.asarray(rng.random((m, 1)) < 0.7)
    if kind == "one_row_for_all":
        return cupy.asarray(rng.random(n) < 0.7)
    keep = rng.random((m, n + 1)) < 0.7
    keep[0] = False  # a row masked out everywhere
    keep[-1, :] = True  # and one kept everywhere
    mask = cupy.asarray(keep)
    return mask[:, 1:] if kind == "misaligned_view" else mask[:, :n]


def refuses(variant, n, dtype):
    """warp_rows holds a row in one warp: 32 lanes x 8 chunks of 16 bytes (a misaligned row one chunk more)."""
    return variant == "warp_rows" and -(-(n + 16 // dtype.itemsize - 1) // (16 // dtype.itemsize)) > 256


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
    if refuses(variant, n, dtype):
        with pytest.raises(UnsuitableVariant, match="variants that can: split_row, two_pass$"):
            function(x, axis=-1, out=out, variant=variant, scale=scale, where=mask)
        return
    assert function(x, axis=-1, out=out, variant=variant, scale=scale, where=mask) is out
    where = None if mask is None else cupy.asnumpy(mask)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, scale=scale, where=where)
    reference.assert_close(cupy.asnumpy(out), expected, dtype, op)


@pytest.mark.parametrize("mask_shape, path", [((1, 1, 12, 300), "in_place_period_12"),
                                              ((2, 1, 12, 300), "copied_not_periodic"),
                                              ((300,), "in_place_row_stride_0")])
@pytest.mark.parametrize("op", OPS)
def test_attention_masks_broadcast_over_leading_axes(rng, op, mask_shape, path):
    x = draw(rng, (2, 3, 12, 300), numpy.float32)
    mask = cupy.asarray(rng.random(mask_shape) < 0.5)
    out = poisoned(x.shape, numpy.float32)
    api.FUNCTIONS[op](x, axis=-1, out=out, where=mask)
    expected = reference.REFERENCES[op](cupy.asnumpy(x), -1, where=cupy.asnumpy(mask))
    reference.assert_close(cupy.asnumpy(out), expected, numpy.float32, op)


@pytest.mark.parametrize("op", OPS)
def test_kept_values_keep_the_semantics(rng, op):
    """Kept -inf alone in a row: NaN there (as without a mask), 0 / -inf where masked out."""
    x = draw(rng, (3, 100), numpy.float32)
    keep = cupy.ones((3, 100), bool)
    keep[0, 50:] = False
    x[0, :50] = -numpy.inf
    x[1, 7] = numpy.nan  # a kept NaN: its row is NaN
    out = api.FUNCTIONS[op](x, axis=-1, where=keep)
    got = cupy.asnumpy(out)
    masked = -numpy.inf if op == registry.LOG_SOFTMAX else 0.0
    assert numpy.isnan(got[0, :50]).all() and (got[0, 50:] == masked).all()
    assert numpy.isnan(got[1]).all() and not numpy.isnan(got[2]).any()


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
