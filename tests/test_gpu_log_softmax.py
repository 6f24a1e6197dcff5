"""log_softmax's own rules on the GPU: refusal by the classic variants, axes, dtype=, remembered calls.

Every variant that computes log_softmax is checked against the reference on
softmax's shapes, layouts and extreme rows in test_gpu_softmax.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, dtypes, log_softmax, reference, softmax
from cupysoftmax import variants as registry
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

LOG = registry.LOG_SOFTMAX


def expect(x, axis=-1):
    return reference.log_softmax(cupy.asnumpy(x), axis=axis)


def test_classic_variant_refuses_and_the_next_call_works(rng):
    x = draw(rng, (8, 300), numpy.float32)
    with pytest.raises(UnsuitableVariant, match="naive computes softmax only; variants with log_softmax"):
        log_softmax(x, axis=-1, variant="naive")
    reference.assert_close(cupy.asnumpy(log_softmax(x, axis=-1)), expect(x), numpy.float32, LOG)


@pytest.mark.parametrize("shape, axis", [((6, 70), 0), ((3, 4, 50), (1, 2)), ((5, 7), None)],
                         ids=["axis0_strided_in_place", "trailing_pair_row_view", "none_all_axes"])
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
