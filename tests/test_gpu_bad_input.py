"""Each class of bad input raises its exception and message before any launch, and the next valid call works.

docs/RELIABILITY.md's table lists these classes (test_reliability_doc keeps the two in step).
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import UnsuitableVariant, api, device, gradients, log_softmax, reference, softmax
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

SHAPE = (4, 100)


def on_second_gpu(make):
    with cupy.cuda.Device(1):
        return make()


# class -> (call(x, out), exception, message); x is float32 of SHAPE on the current GPU, out a NaN-filled array like it
BAD = {
    "host_data": (lambda x, out: softmax(cupy.asnumpy(x)), TypeError, r"got host data \(ndarray\); move it first"),
    "not_an_array": (lambda x, out: softmax(object()), TypeError, "__cuda_array_interface__ or __dlpack__; got object"),
    "integer_dtype": (lambda x, out: softmax(x.astype(numpy.int32)), TypeError, "got integer dtype int32"),
    "bool_dtype": (lambda x, out: softmax(x > 0), TypeError, "got boolean dtype bool"),
    "complex_dtype": (lambda x, out: softmax(x.astype(numpy.complex64)), TypeError, "got complex dtype complex64"),
    "dtype_not_floating": (lambda x, out: softmax(x, -1, dtype=numpy.int64), TypeError, "got integer dtype int64"),
    "axis_out_of_range": (lambda x, out: softmax(x, 2), api.AxisError, "out of bounds"),
    "repeated_axis": (lambda x, out: softmax(x, (1, -1)), ValueError, r"repeated axis in \(1, -1\)"),
    "axis_not_an_int": (lambda x, out: softmax(x, 1.5), TypeError, "axis must be an int, a tuple of ints or None"),
    "out_not_cupy": (lambda x, out: softmax(x, -1, out=cupy.asnumpy(out)), TypeError, "out must be a cupy.ndarray"),
    "out_wrong_shape": (lambda x, out: softmax(x, -1, out=out[:, :99]), ValueError,
                        r"out has shape \(4, 99\); the result has shape \(4, 100\)"),
    "out_wrong_dtype": (lambda x, out: softmax(x, -1, out=out.astype(numpy.float16)), TypeError,
                        r"out has dtype float16; the result has dtype float32 \(pass dtype= to change it\)"),
    "unknown_variant": (lambda x, out: softmax(x, -1, variant="nope"), ValueError,
                        "unknown softmax variant 'nope'; known variants: auto, naive"),
    "variant_cannot_hold_the_row": (lambda x, out: softmax(cupy.zeros((2, 50257), numpy.float32), -1,
                                                           variant="registers"), UnsuitableVariant,
                                    "registers holds the row in registers.*variants that can: .*online"),
    "variant_without_the_op": (lambda x, out: log_softmax(x, -1, variant="naive"), UnsuitableVariant,
                               "naive computes softmax only; variants with log_softmax: online"),
    "variant_without_options": (lambda x, out: softmax(x, -1, variant="online", scale=2.0), UnsuitableVariant,
                                "online takes no scale= or where=; variants that do: warp_rows"),
    "variant_reads_columns": (lambda x, out: softmax(x, -1, variant="strided"), UnsuitableVariant,
                              "strided reads columns"),
    "scale_not_above_zero": (lambda x, out: softmax(x, -1, scale=0.0), ValueError, "scale must be finite and > 0"),
    "scale_not_a_number": (lambda x, out: softmax(x, -1, scale="2"), TypeError, "scale must be a real number"),
    "where_not_boolean": (lambda x, out: softmax(x, -1, where=x), TypeError,
                          "where must be a boolean array; got dtype float32"),
    "where_wrong_shape": (lambda x, out: softmax(x, -1, where=cupy.ones((3, 100), bool)), ValueError,
                          r"where has shape \(3, 100\), which does not broadcast to the input's \(4, 100\)"),
    "where_host_data": (lambda x, out: softmax(x, -1, where=numpy.ones(SHAPE, bool)), TypeError, "got host data"),
    "dy_wrong_shape": (lambda x, out: gradients.softmax_backward(x, x[:, :99]), ValueError,
                       r"y has shape \(4, 100\) and dy \(4, 99\); they must be the same"),
    "dy_wrong_dtype": (lambda x, out: gradients.softmax_backward(x, x.astype(numpy.float16)), TypeError,
                       "y has dtype float32 and dy float16; they must be the same"),
    "gradient_variant_without_the_op": (lambda x, out: gradients.log_softmax_backward(x, x, variant="online"),
                                        UnsuitableVariant, "online computes softmax, log_softmax only"),
}
ON_TWO_GPUS = {
    "out_on_another_gpu": (lambda x, out: softmax(x, -1, out=on_second_gpu(lambda: cupy.empty(SHAPE, numpy.float32))),
                           ValueError, "out is on device 1; the input is on device 0"),
    "where_on_another_gpu": (lambda x, out: softmax(x, -1, where=on_second_gpu(lambda: cupy.ones(SHAPE, bool))),
                             ValueError, "where is on device 1; the input is on device 0"),
    "dy_on_another_gpu": (lambda x, out: gradients.softmax_backward(x, on_second_gpu(lambda: cupy.ones(SHAPE, numpy.float32))),
                          ValueError, "dy is on device 1; y is on device 0"),
}
CASES = [pytest.param(*case, id=name) for name, case in BAD.items()] + [
    pytest.param(*case, id=name, marks=pytest.mark.skipif(device.count() < 2, reason="needs two visible GPUs"))
    for name, case in ON_TWO_GPUS.items()]


@pytest.mark.parametrize("call, error, message", CASES)
def test_bad_input_raises_and_the_next_call_works(rng, call, error, message):
    with cupy.cuda.Device(0):
        x = draw(rng, SHAPE, numpy.float32)
        out = poisoned(SHAPE, numpy.float32)
        with pytest.raises(error, match=message):
            call(x, out)
        assert bool(cupy.isnan(out).all())  # nothing written
        assert softmax(x, -1, out=out) is out
        reference.assert_close(cupy.asnumpy(out), reference.softmax(cupy.asnumpy(x), -1), numpy.float32)
