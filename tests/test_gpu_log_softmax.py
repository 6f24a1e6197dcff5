"""log_softmax on the GPU against the float64 reference: every variant that computes it x dtype x path-hitting shape.

The shapes, layouts and extreme rows are softmax's (test_gpu_softmax), so
log_softmax reaches the same code paths; outputs are poisoned with NaN first.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, dtypes, log_softmax, reference, softmax
from cupysoftmax import variants as registry
from test_gpu_softmax import DTYPES, LAYOUTS, SHAPES, draw, extreme_rows, poisoned, refuses

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

LOG = registry.LOG_SOFTMAX
LOG_VARIANTS = [name for name, v in registry.VARIANTS.items() if LOG in v.ops]


def expect(x, axis=-1):
    return reference.log_softmax(cupy.asnumpy(x), axis=axis)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("variant", LOG_VARIANTS)
def test_matches_reference(rng, variant, dtype, case, layout):
    _, m, n = case
    if layout == "contiguous":
        x = draw(rng, (m, n), dtype)
        out = poisoned((m, n), dtype)
    else:
        x = draw(rng, (m, n + 1), dtype)[:, 1:]
        out = poisoned((m, n + 1), dtype)[:, 1:] if layout == "x_and_out_offset_views" else poisoned((m, n), dtype)
    aligned = layout == "contiguous" and (m == 1 or n * dtype.itemsize % 16 == 0)
    if refuses(variant, n, dtype, aligned):
        with pytest.raises(UnsuitableVariant, match="variants that can: .*online"):
            log_softmax(x, axis=-1, out=out, variant=variant)
        return
    assert log_softmax(x, axis=-1, out=out, variant=variant) is out
    reference.assert_close(cupy.asnumpy(out), expect(x), dtype, LOG)


@pytest.mark.parametrize("n", [33, 1025, 5000], ids=["n33_warp_tail", "n1025_block_tail", "n5000_vector_body"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtypes.name)
@pytest.mark.parametrize("variant", LOG_VARIANTS)
def test_extreme_values_follow_the_semantics(rng, variant, dtype, n):
    x = extreme_rows(rng, n, dtype)
    out = poisoned(x.shape, dtype)
    if refuses(variant, n, dtype, aligned=n * dtype.itemsize % 16 == 0):
        with pytest.raises(UnsuitableVariant):
            log_softmax(x, axis=-1, out=out, variant=variant)
        return
    log_softmax(x, axis=-1, out=out, variant=variant)
    got = cupy.asnumpy(out)
    reference.assert_close(got, expect(x), dtype, LOG)
    nan_rows = numpy.isnan(got).all(axis=1)
    assert list(nan_rows) == [False, False, False, True, True, True, False, True, False, True, True]
    assert numpy.isneginf(got[2]).any() and numpy.isfinite(got[8]).all()  # -inf stays -inf; no underflow to -inf


def test_classic_variant_refuses_and_the_next_call_works(rng):
    x = draw(rng, (8, 300), numpy.float32)
    with pytest.raises(UnsuitableVariant, match="naive computes softmax only; variants with log_softmax"):
        log_softmax(x, axis=-1, variant="naive")
    reference.assert_close(cupy.asnumpy(log_softmax(x, axis=-1)), expect(x), numpy.float32, LOG)


@pytest.mark.parametrize("shape, axis", [((6, 70), 0), ((3, 4, 50), (1, 2)), ((5, 7), None)],
                         ids=["axis0_transposed_copy", "trailing_pair_row_view", "none_all_axes"])
def test_axes(rng, shape, axis):
    x = draw(rng, shape, numpy.float32)
    out = poisoned(shape, numpy.float32)
    log_softmax(x, axis=axis, out=out)
    reference.assert_close(cupy.asnumpy(out), expect(x, axis), numpy.float32, LOG)


def test_dtype_float32_from_bfloat16(rng):
    x = draw(rng, (4, 1000), dtypes.BFLOAT16)
    got = log_softmax(x, axis=-1, dtype="float32")
    assert got.dtype == numpy.float32
    reference.assert_close(cupy.asnumpy(got), expect(x), numpy.float32, LOG)


def test_softmax_and_log_softmax_of_one_shape_keep_their_own_remembered_launch(rng):
    # the remembered call is keyed by op too
    for _ in range(2):
        x = draw(rng, (64, 1000), numpy.float32)
        reference.assert_close(cupy.asnumpy(softmax(x, axis=-1)), reference.softmax(cupy.asnumpy(x), -1), numpy.float32)
        reference.assert_close(cupy.asnumpy(log_softmax(x, axis=-1)), expect(x), numpy.float32, LOG)


def test_exp_of_log_softmax_is_softmax(rng):
    x = draw(rng, (32, 5000), numpy.float32)
    numpy.testing.assert_allclose(cupy.asnumpy(cupy.exp(log_softmax(x, axis=-1))),
                                  cupy.asnumpy(softmax(x, axis=-1)), rtol=1e-5, atol=1e-30)
