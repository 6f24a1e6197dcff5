"""Fuzzing against the float64 reference on the GPU: hypothesis draws a case (fuzz_cases: op, dtype, a shape
aimed at a planner path, layout, values, scale=, where=, out=), runs auto and a variant that serves the
case, and both must match the reference within its tolerance.

`pytest -m gpu` runs EXAMPLES examples; `pytest -m fuzz tests/test_gpu_fuzz.py` the long run, LONG_EXAMPLES
(CUPYSOFTMAX_FUZZ_EXAMPLES sets another count). Hypothesis prints a failing case; its seed makes the values.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy
import pytest
from hypothesis import HealthCheck, given, settings

import fuzz_cases
from cupysoftmax import UnsuitableVariant, api, device, gradients, loader, reference
from cupysoftmax import variants as registry
from fuzz_cases import placed, view

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

EXAMPLES = 200
LONG_EXAMPLES = int(os.environ.get("CUPYSOFTMAX_FUZZ_EXAMPLES", "2000"))


@pytest.fixture(scope="module")
def compiled():
    """Every instantiation compiled (or read from CuPy's disk cache) up front, in threads side by side."""
    device_id = cupy.cuda.Device().id
    cc = device.facts(device_id).compute_capability
    jobs = [(v.name, pair, knobs, op) for v in registry.VARIANTS.values() for pair, knobs, op in v.instantiations(cc)]
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(lambda job: loader.function(job[0], job[1], job[2], device_id, job[3]), jobs))


@pytest.mark.parametrize("examples", [EXAMPLES, pytest.param(LONG_EXAMPLES, marks=pytest.mark.fuzz, id="long")])
def test_auto_and_a_serving_variant_match_the_reference(compiled, examples):
    run = settings(max_examples=examples, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(given(fuzz_cases.cases())(check))
    run()


def check(case):
    """auto, then the case's variants in its order until one serves (refusals launch nothing), against the reference."""
    host = fuzz_cases.host_arrays(case)
    call = Forward(case, host) if case.op in registry.FORWARD else Backward(case, host)
    call.judge("auto", call.run("auto"))
    n = math.prod(case.shape[a] for a in fuzz_cases.axes_of(case))
    refused = []
    for name in case.order:
        if name == "naive" and n > reference.SEQUENTIAL_SUM_MOST_N:
            continue
        try:
            got = call.run(name)
        except UnsuitableVariant:
            refused.append(name)
            assert call.untouched(), f"{name} refused after writing out="
            continue
        call.judge(name, got)
        return
    pytest.fail(f"every variant refused the case: {refused}")


class Call:
    """One op's call on the case's arrays: run(variant) -> result, judge(variant, result), untouched()."""

    case = out = None

    def untouched(self):
        """Whether the last run left a NaN-filled out= as it was."""
        return self.case.out not in ("poisoned", "offset") or bool(cupy.isnan(self.out).all())


class Forward(Call):
    """softmax or log_softmax of the case's x, fresh arrays for each call (out=x writes x)."""

    def __init__(self, case, host):
        self.case, self.host = case, host
        self.expected = reference.REFERENCES[case.op](host.x, case.axis, scale=case.scale, where=host.where)

    def run(self, variant):
        case = self.case
        x = view(cupy.asarray(self.host.x_base), case.layout)
        where = None if self.host.where_base is None else view(cupy.asarray(self.host.where_base),
                                                               self.host.where_layout)
        self.out = outputs(case, x, case.out_dtype)
        dtype = None if case.out_dtype == case.dtype else case.out_dtype
        got = api.FUNCTIONS[case.op](x, case.axis, out=self.out, dtype=dtype, variant=variant, scale=case.scale,
                                     where=where)
        assert self.out is None or got is self.out
        return got

    def judge(self, variant, got):
        with_variant(variant, reference.assert_close, cupy.asnumpy(got), self.expected, self.case.out_dtype,
                     self.case.op)


class Backward(Call):
    """softmax_backward or log_softmax_backward: y the forward's (auto) output of x, dy standard normal."""

    def __init__(self, case, host):
        self.case = case
        x = view(cupy.asarray(host.x_base), case.layout)
        self.y = api.FUNCTIONS[registry.FORWARD_OF[case.op]](x, case.axis)
        self.dy = host.dy
        y_host = cupy.asnumpy(self.y)
        self.expected = reference.GRADIENTS[case.op](y_host, self.dy, axis=case.axis)
        self.scale = reference.gradient_scale(y_host, self.dy, case.op, axis=case.axis)

    def run(self, variant):
        case = self.case
        y = placed(self.y, case.layout, cupy)[1]
        dy = placed(cupy.asarray(self.dy), case.dy_layout, cupy)[1]
        self.out = dy if case.out == "in_place" else outputs(case, y, case.dtype)
        got = gradients.GRADIENTS[case.op](y, dy, case.axis, out=self.out, variant=variant)
        assert self.out is None or got is self.out
        return got

    def judge(self, variant, got):
        with_variant(variant, reference.assert_close, cupy.asnumpy(got), self.expected, self.case.dtype,
                     self.case.op, self.scale)


def outputs(case, x, dtype):
    """out= as the case says: None, NaN-filled, a NaN-filled view one element in, or x itself."""
    if case.out == "new":
        return None
    if case.out == "in_place":
        return x
    out = cupy.full(case.shape, numpy.nan, dtype)
    return placed(out, fuzz_cases.MISALIGNED, cupy)[1] if case.out == "offset" else out


def with_variant(variant, check, *args):
    """check(*args), its AssertionError naming the variant."""
    try:
        check(*args)
    except AssertionError as exc:
        raise AssertionError(f"variant {variant}: {exc}") from None
