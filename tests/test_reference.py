"""The float64 reference against hand-computed cases and the semantics rules."""
import math

import ml_dtypes
import numpy
import pytest

from cupysoftmax import reference


def test_hand_computed_row():
    got = reference.softmax(numpy.array([[0.0, math.log(3.0)]]), axis=-1)
    numpy.testing.assert_allclose(got, [[0.25, 0.75]], rtol=1e-15)


def test_axis_none_takes_every_element():
    x = numpy.log(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    numpy.testing.assert_allclose(reference.softmax(x), [[0.1, 0.2], [0.3, 0.4]], rtol=1e-15)


def test_axis_zero_and_tuple():
    x = numpy.log(numpy.array([[1.0, 1.0], [3.0, 1.0]]))
    numpy.testing.assert_allclose(reference.softmax(x, axis=0), [[0.25, 0.5], [0.75, 0.5]], rtol=1e-15)
    y = numpy.zeros((2, 2, 2))
    numpy.testing.assert_allclose(reference.softmax(y, axis=(1, 2)), numpy.full((2, 2, 2), 0.25))


def test_shift_invariance_and_large_offsets():
    x = numpy.array([[1.0, 2.0, 3.0]])
    numpy.testing.assert_allclose(reference.softmax(x + 1e4, axis=-1), reference.softmax(x, axis=-1), rtol=1e-12)
    assert numpy.all(numpy.isfinite(reference.softmax(x - 1e4, axis=-1)))


@pytest.mark.parametrize(
    "row",
    [[1.0, numpy.nan, 2.0], [1.0, numpy.inf, 2.0], [-numpy.inf, -numpy.inf], [numpy.inf, -numpy.inf]],
    ids=["nan", "plus_inf", "all_minus_inf", "plus_and_minus_inf"],
)
def test_rows_that_become_nan(row):
    got = reference.softmax(numpy.array([row, [0.0] * len(row)]), axis=-1)
    assert numpy.isnan(got[0]).all()
    numpy.testing.assert_allclose(got[1], 1.0 / len(row))


def test_minus_inf_entries_get_zero():
    got = reference.softmax(numpy.array([[-numpy.inf, 0.0, 0.0]]), axis=-1)
    numpy.testing.assert_array_equal(got, [[0.0, 0.5, 0.5]])


def test_empty_input_gives_empty_output():
    assert reference.softmax(numpy.empty((0, 4)), axis=-1).shape == (0, 4)
    assert reference.softmax(numpy.empty((3, 0)), axis=-1).shape == (3, 0)


def test_bfloat16_input_is_widened_exactly():
    x = numpy.array([[0.5, 1.5]], dtype=ml_dtypes.bfloat16)
    numpy.testing.assert_allclose(reference.softmax(x, axis=-1), reference.softmax(x.astype(numpy.float64), axis=-1))


def test_error_ratio_passes_within_and_fails_outside_tolerance():
    expected = numpy.array([0.5, 0.25, 0.25])
    tol = reference.tolerance(numpy.float32)
    inside = expected * (1 + 0.5 * tol.rtol)
    outside = expected * (1 + 2 * tol.rtol)
    assert reference.error_ratio(inside, expected, numpy.float32) <= 1
    assert reference.error_ratio(outside, expected, numpy.float32) > 1
    reference.assert_close(inside, expected, numpy.float32)
    with pytest.raises(AssertionError, match="x tolerance"):
        reference.assert_close(outside, expected, numpy.float32)


def test_nan_where_reference_has_none_fails():
    expected = numpy.array([0.5, 0.5])
    assert reference.error_ratio([numpy.nan, 0.5], expected, numpy.float32) == numpy.inf
    with pytest.raises(AssertionError, match="NaN mismatch"):
        reference.assert_close([numpy.nan, 0.5], expected, numpy.float32)
    assert reference.error_ratio([numpy.nan, numpy.nan], [numpy.nan, numpy.nan], numpy.float32) == 0


def test_tolerances_follow_output_precision():
    order = [numpy.float64, numpy.float32, numpy.float16, ml_dtypes.bfloat16]
    rtols = [reference.tolerance(d).rtol for d in order]
    assert rtols == sorted(rtols)


def test_log_softmax_reference_semantics():
    got = reference.log_softmax(numpy.array([[0.0, 0.0], [-numpy.inf, 0.0], [-numpy.inf, -numpy.inf], [1.0, numpy.nan]]), -1)
    numpy.testing.assert_allclose(got[0], numpy.log(0.5))
    assert got[1, 0] == -numpy.inf and got[1, 1] == 0.0
    assert numpy.isnan(got[2]).all() and numpy.isnan(got[3]).all()


def test_a_reference_past_the_output_range_is_that_types_infinity():
    # float16 log_softmax of [20, -65504]: -65524 does not exist in float16, -inf is right
    expected = reference.log_softmax(numpy.array([20.0, -65504.0]), -1)
    assert reference.error_ratio([0.0, -numpy.inf], expected, numpy.float16, "log_softmax") == 0
    assert reference.error_ratio([0.0, -65504.0], expected, numpy.float16, "log_softmax") == numpy.inf


def test_log_softmax_tolerance_adds_an_absolute_term():
    assert reference.tolerance(numpy.float32, "log_softmax").atol == 1e-5
    assert reference.tolerance(numpy.float32).atol == 1e-37


@pytest.mark.parametrize("op, forward", [("softmax_backward", reference.softmax),
                                         ("log_softmax_backward", reference.log_softmax)])
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_gradients_are_the_vector_jacobian_product_of_the_forward(op, forward, axis):
    # central differences of L(x) = sum(dy * forward(x)) in float64 against the closed form
    rng = numpy.random.default_rng(7)
    x = rng.standard_normal((3, 5))
    dy = rng.standard_normal((3, 5))
    dx = reference.GRADIENTS[op](forward(x, axis=axis), dy, axis=axis)
    h = 1e-6
    numeric = numpy.empty_like(x)
    for i in numpy.ndindex(x.shape):
        step = numpy.zeros_like(x)
        step[i] = h
        numeric[i] = (numpy.sum(dy * forward(x + step, axis=axis)) - numpy.sum(dy * forward(x - step, axis=axis))) / (2 * h)
    numpy.testing.assert_allclose(dx, numeric, rtol=1e-6, atol=1e-8)


def test_gradient_scale_lets_cancellation_pass_and_catches_real_errors():
    y = reference.softmax(numpy.array([[0.0, 1.0, 2.0]]), axis=-1)
    dy = numpy.ones_like(y)  # s = 1: dx = y (1 - 1) = 0 exactly, float32 would leave about 1e-8
    expected = reference.softmax_backward(y, dy)
    scale = reference.gradient_scale(y, dy, "softmax_backward")
    off_by_rounding = expected + 1e-8
    assert reference.error_ratio(off_by_rounding, expected, numpy.float32, "softmax_backward", scale) <= 1
    assert reference.error_ratio(off_by_rounding, expected, numpy.float32, "softmax_backward") > 1  # |dx| = 0 alone
    assert reference.error_ratio(expected + 1e-3, expected, numpy.float32, "softmax_backward", scale) > 1


def test_scale_times_x_is_rounded_to_the_accumulation_type():
    x = numpy.array([3.5533443e37, 4.6817810e37, 1.2095424e37], numpy.float32)
    # the product rounded in float32 keeps the max's own term exactly exp(0): the kernels' rounding (an FFMA's
    # residual, up to half an ulp of 1.7e37, gave NaN there)
    assert list(reference.softmax(x, scale=0.375)) == [0.0, 1.0, 0.0]
    x = numpy.array([1.0, 1.0 + 2**-20], numpy.float32)
    scale = 1 / 3
    rounded = (x * numpy.float32(scale)).astype(numpy.float64)
    assert numpy.array_equal(reference.log_softmax(x, scale=scale), reference.log_softmax(rounded))
    # float64 accumulates in float64: half in, float64 out takes the exact product
    half = numpy.array([1.0, 2.0], numpy.float16)
    exact = half.astype(numpy.float64) * scale
    assert numpy.array_equal(reference.softmax(half, scale=scale, dtype=numpy.float64), reference.softmax(exact))


def test_a_pair_the_kernels_lack_is_cast_to_the_output_type_first():
    x = numpy.array([0.1, 0.2, 0.3], numpy.float32)  # float32 in, float16 out: the API casts x first
    assert numpy.array_equal(reference.softmax(x, scale=0.5, dtype=numpy.float16),
                             reference.softmax(x.astype(numpy.float16), scale=0.5))
    assert not numpy.array_equal(reference.softmax(x, scale=0.5, dtype=numpy.float16), reference.softmax(x, scale=0.5))
