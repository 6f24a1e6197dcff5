"""Input validation that needs no GPU: every check runs before anything touches a device."""
import numpy
import pytest

import cupysoftmax
from cupysoftmax import api, dtypes, gradients


@pytest.mark.parametrize(
    "axis, ndim, expected",
    [(None, 3, (0, 1, 2)), (-1, 3, (2,)), (0, 1, (0,)), ((2, 0), 3, (0, 2)), ((-1, -2), 2, (0, 1)),
     (numpy.int64(1), 2, (1,))],
)
def test_axes_are_normalized(axis, ndim, expected):
    assert api.normalize_axes(axis, ndim) == expected


@pytest.mark.parametrize("axis, ndim", [(2, 2), (-3, 2), ((0, 5), 3)])
def test_axis_out_of_range_is_an_axis_error(axis, ndim):
    with pytest.raises(api.AxisError):
        api.normalize_axes(axis, ndim)


def test_repeated_axis_is_a_value_error():
    with pytest.raises(ValueError, match="repeated axis"):
        api.normalize_axes((1, -1), 2)


@pytest.mark.parametrize("axis", [1.5, "0", [0]])
def test_non_integer_axis_is_a_type_error(axis):
    with pytest.raises(TypeError, match="axis must be"):
        api.normalize_axes(axis, 2)


@pytest.mark.parametrize(
    "dtype, kind", [(numpy.int32, "integer"), (numpy.bool_, "boolean"), (numpy.complex64, "complex"),
                    (numpy.uint8, "unsigned integer")]
)
def test_non_floating_inputs_are_type_errors(dtype, kind):
    with pytest.raises(TypeError, match=f"got {kind} dtype"):
        api.resolve_dtypes(dtype, None)


@pytest.mark.parametrize(
    "in_dtype, dtype, expected",
    [(numpy.float16, None, (dtypes.FLOAT16, dtypes.FLOAT16)),
     (numpy.float16, "float32", (dtypes.FLOAT16, dtypes.FLOAT32)),
     (dtypes.BFLOAT16, numpy.float32, (dtypes.BFLOAT16, dtypes.FLOAT32)),
     (numpy.float32, "bfloat16", (dtypes.FLOAT32, dtypes.BFLOAT16))],
)
def test_output_dtype(in_dtype, dtype, expected):
    assert api.resolve_dtypes(in_dtype, dtype) == expected


def test_output_dtype_must_be_floating():
    with pytest.raises(TypeError, match="integer"):
        api.resolve_dtypes(numpy.float32, numpy.int64)


def test_unknown_variant_lists_the_known_ones():
    assert api.check_variant("auto") == "auto"
    with pytest.raises(ValueError, match="unknown softmax variant 'quick'; known variants: auto, naive, smem_tree"):
        api.check_variant("quick")


@pytest.mark.parametrize("host", [numpy.ones((2, 3), numpy.float32), [[1.0, 2.0]], 3.0], ids=["ndarray", "list", "scalar"])
@pytest.mark.parametrize("function", [cupysoftmax.softmax, cupysoftmax.log_softmax], ids=["softmax", "log_softmax"])
def test_host_data_is_a_type_error_that_says_how_to_move_it(host, function):
    with pytest.raises(TypeError, match=r"move it first with cupy\.asarray"):
        function(host)


def test_objects_that_are_not_arrays_are_type_errors():
    pytest.importorskip("cupy")
    with pytest.raises(TypeError, match="__cuda_array_interface__ or __dlpack__"):
        cupysoftmax.softmax(object())


def test_import_needs_no_gpu_and_exposes_the_api():
    assert callable(cupysoftmax.softmax) and callable(cupysoftmax.log_softmax)
    assert set(cupysoftmax.VARIANTS) >= {"naive", "smem_tree", "warp", "block", "online", "registers", "smem_cached"}
    assert issubclass(cupysoftmax.UnsuitableVariant, ValueError)


class _Strided:  # what api._span reads of an array
    def __init__(self, shape, strides, itemsize):
        self.shape, self.strides, self.itemsize = shape, strides, itemsize


@pytest.mark.parametrize("shape, strides, span", [
    ((4, 5), (20, 4), (0, 80)),  # C-contiguous float32
    ((4, 5), (-20, 4), (-60, 20)),  # rows reversed: x[::-1]
    ((4, 5), (24, 4), (0, 92)),  # x[:, 1:] of a (4, 6) array
    ((1, 5), (0, 4), (0, 20)),  # a broadcast row stride touches one row
])
def test_span_of_strided_layouts(shape, strides, span):
    assert api._span(_Strided(shape, strides, 4)) == span


def test_overlap_is_the_bounds_test():
    spans = ((0, 80), (0, 80))
    assert api._overlap(1000, 1000, spans)  # in place
    assert api._overlap(1000, 1079, spans)  # one element shared
    assert not api._overlap(1000, 1080, spans)  # adjacent
    assert not api._overlap(1080, 1000, spans)


@pytest.mark.parametrize("function", [cupysoftmax.softmax_backward, cupysoftmax.log_softmax_backward],
                         ids=["softmax_backward", "log_softmax_backward"])
def test_gradients_refuse_host_data_too(function):
    with pytest.raises(TypeError, match=r"move it first with cupy\.asarray"):
        function(numpy.ones((2, 3), numpy.float32), numpy.ones((2, 3), numpy.float32))


@pytest.mark.parametrize(
    "y, dy, error, message",
    [(((2, 3), numpy.float32), ((3, 2), numpy.float32), ValueError, r"y has shape \(2, 3\) and dy \(3, 2\)"),
     (((2, 3), numpy.float32), ((2, 3), numpy.float16), TypeError, "y has dtype float32 and dy float16"),
     (((2, 3), numpy.int32), ((2, 3), numpy.int32), TypeError, "got integer dtype")],
    ids=["shapes_differ", "dtypes_differ", "not_floating"],
)
def test_gradient_inputs_must_match_in_shape_and_dtype(y, dy, error, message):
    with pytest.raises(error, match=message):
        gradients.check_pair(y[0], y[1], dy[0], dy[1])


def test_the_torch_wrappers_say_they_need_torch_where_it_is_missing():
    try:
        import torch  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="cupysoftmax.torch needs PyTorch"):
            import cupysoftmax.torch  # noqa: F401
    else:
        pytest.skip("torch is installed here: the wrappers' GPU tests cover them")



def _view(shape, axes, make=lambda a: a):
    """api.columns_view of make(numpy.empty(shape, float32)) over `axes` (NumPy's strides are CuPy's)."""
    a = make(numpy.empty(shape, numpy.float32))
    return api.columns_view(a.shape, a.strides, a.itemsize, api.normalize_axes(axes, a.ndim))


@pytest.mark.parametrize("shape, axes, make, view", [
    ((32, 19, 512, 512), 1, None, (32, 19, 262144, 19 * 262144, 262144)),  # the shapes
    ((8192, 8192), 0, None, (1, 8192, 8192, 0, 8192)),
    ((4, 6, 5, 7), (1, 2), None, (4, 30, 7, 210, 7)),  # a run of adjacent axes collapses
    ((4, 6, 7), -2, None, (4, 6, 7, 42, 7)),  # negative axis
    ((4, 6, 7), 1, lambda a: a[::-1, ::2], (4, 3, 7, -42, 14)),  # reversed outer, stepped softmax axis
    ((4, 6, 8), 1, lambda a: a[:, :, 1:], (4, 6, 7, 48, 8)),  # inner sliced one in: still unit stride
    ((4, 6, 1, 7), 1, None, (4, 6, 7, 42, 7)),  # a size-1 axis inside inner does not count
    ((6, 4, 8), 1, lambda a: a.transpose(1, 0, 2)[:, ::2], (4, 3, 8, 8, 64)),  # outer and axis transposed
], ids=["axis1_of_4d", "axis0_of_2d", "adjacent_pair", "negative_axis", "reversed_outer_stepped_axis",
        "inner_offset_view", "size1_inner_axis", "outer_and_axis_transposed"])
def test_columns_view_accepts_in_place_layouts(shape, axes, make, view):
    assert _view(shape, axes, make or (lambda a: a)) == view


@pytest.mark.parametrize("shape, axes, make", [
    ((4, 6, 8), 1, lambda a: a[:, :, ::2]),  # stepped inner axis: a copy
    ((4, 6, 8), 1, lambda a: a[:, :, ::-1]),  # reversed inner axis
    ((4, 6, 8), 1, lambda a: a.transpose(0, 2, 1)),  # the softmax axis is the unit-stride one
    ((4, 6, 8, 5), 1, lambda a: a.transpose(0, 1, 3, 2)),  # inner axes that do not collapse
    ((4, 6, 8, 5), 1, lambda a: a[:, :, :, :4]),  # inner axes cut short: no single stride
    ((4, 5, 6, 7), 2, lambda a: a[:, :3]),  # outer axes cut short: no single stride
    ((4, 6, 8), (0, 2), lambda a: a),  # axes that are not one run
    ((4, 6, 8), (1, 2), lambda a: a),  # trailing axes: rows
    ((4, 6, 1), 1, lambda a: a),  # inner of one element: rows
    ((), None, lambda a: a),  # a 0-d array: no axes
], ids=["stepped_inner", "reversed_inner", "transposed_inner", "inner_pair_transposed", "inner_pair_cut",
        "outer_pair_cut", "axes_not_a_run", "trailing_axes", "inner_one_element", "zero_d"])
def test_columns_view_refuses_what_needs_a_copy(shape, axes, make):
    assert _view(shape, axes, make) is None
