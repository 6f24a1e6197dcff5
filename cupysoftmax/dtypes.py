"""The floating types cupysoftmax computes in, and how they reach the kernels.

Kernels are templates over (input type, output type). The pairs compiled are
the same-type pairs plus the half-precision inputs with a float32 output (the
``dtype=float32`` case of mixed-precision models). Any other ``dtype=`` request
is served by casting the input to the requested type first (one copy), which is
what PyTorch's ``softmax(x, dtype=...)`` means too.
"""
from __future__ import annotations

import ml_dtypes
import numpy

FLOAT16 = numpy.dtype(numpy.float16)
BFLOAT16 = numpy.dtype(ml_dtypes.bfloat16)
FLOAT32 = numpy.dtype(numpy.float32)
FLOAT64 = numpy.dtype(numpy.float64)

SUPPORTED = (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)

# numpy dtype -> the C++ type the kernels are instantiated with
CTYPE = {FLOAT16: "__half", BFLOAT16: "__nv_bfloat16", FLOAT32: "float", FLOAT64: "double"}

# (input, output) pairs that have compiled kernels
PAIRS = (
    (FLOAT16, FLOAT16),
    (BFLOAT16, BFLOAT16),
    (FLOAT32, FLOAT32),
    (FLOAT64, FLOAT64),
    (FLOAT16, FLOAT32),
    (BFLOAT16, FLOAT32),
)


def name(dtype: numpy.dtype) -> str:
    """The short name users type: float16, bfloat16, float32, float64."""
    return numpy.dtype(dtype).name


def parse(value) -> numpy.dtype:
    """A supported floating dtype from a dtype, type or name; TypeError otherwise."""
    try:
        dtype = BFLOAT16 if value == "bfloat16" else numpy.dtype(value)
    except TypeError as exc:
        raise TypeError(f"not a dtype: {value!r}") from exc
    check(dtype)
    return dtype


def check(dtype: numpy.dtype) -> None:
    """TypeError unless `dtype` is one of the four floating types softmax supports."""
    if dtype not in SUPPORTED:
        kinds = {"b": "boolean", "i": "integer", "u": "unsigned integer", "c": "complex"}
        kind = kinds.get(dtype.kind, "unsupported")
        raise TypeError(
            f"softmax needs a floating dtype (float16, bfloat16, float32 or float64); got {kind} dtype {dtype}"
        )


def accumulator(pair: tuple[numpy.dtype, numpy.dtype]) -> numpy.dtype:
    """The type the kernels accumulate in: float64 if either side is float64, else float32."""
    return FLOAT64 if FLOAT64 in pair else FLOAT32
