"""Work goes to CuPy's current stream, the calls never wait for the device, and a call captured in a CUDA graph
replays correctly.

Each case's input is written by a kernel that first spins on the GPU for SPIN_SECONDS, on a stream that does
not synchronise with the legacy default one: a launch on another stream would read the input before it is
written, and a call that synchronised would return only after the spin. Every case is warmed up first on
that stream (compiled, planned, remembered; the pool keeps the blocks of its temporaries for that stream).
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import api, gradients, reference
from cupysoftmax import variants as registry
from test_gpu_gradients import check as check_gradient
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

SPIN_SECONDS = 0.5
F32 = numpy.float32
_SPIN = r"""
extern "C" __global__ void spin_then_copy(const unsigned char* src, unsigned char* dst, long long n, long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < (unsigned long long)ns);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
"""


def spin_then_copy(src, dst):
    """On the current stream: spin SPIN_SECONDS on the GPU, then copy src's bytes into dst (both contiguous)."""
    kernel = cupy.RawKernel(_SPIN, "spin_then_copy")
    kernel((64,), (256,), (src, dst, numpy.int64(src.nbytes), numpy.int64(SPIN_SECONDS * 1e9)))


class Forward:
    """op over `axis` of a float32 array of `shape` (the input a view of it: `view`), with scale= and a random
    where= mask of x's shape (masked=True) where asked; out_dtype: the output's (dtype=)."""

    def __init__(self, op, shape, axis=-1, view=lambda a: a, variant="auto", scale=1.0, masked=False, out_dtype=F32):
        self.op, self.shape, self.axis, self.view, self.variant = op, shape, axis, view, variant
        self.scale, self.masked, self.where, self.out_dtype = scale, masked, None, out_dtype

    def inputs(self, rng):
        """(the contiguous array the spin writes, the call's input)."""
        base = draw(rng, self.shape, F32)
        x = self.view(base)
        if self.masked:
            self.where = cupy.asarray(rng.random(x.shape) < 0.6)
        return base, x

    def call(self, x, out):
        return api.FUNCTIONS[self.op](x, self.axis, out=out, dtype=self.out_dtype, variant=self.variant, scale=self.scale,
                                      where=self.where)

    def check(self, x, out):
        where = None if self.where is None else cupy.asnumpy(self.where)
        want = reference.REFERENCES[self.op](cupy.asnumpy(x), self.axis, scale=self.scale, where=where,
                                             dtype=self.out_dtype)
        reference.assert_close(cupy.asnumpy(out), want, self.out_dtype, self.op)


class Backward:
    """op's gradient over the last axis of `shape`: y the forward's output, dy the input the spin writes."""

    out_dtype = F32

    def __init__(self, op, shape):
        self.op, self.shape = op, shape

    def inputs(self, rng):
        self.y = api.FUNCTIONS[registry.FORWARD_OF[self.op]](draw(rng, self.shape, F32), axis=-1)
        dy = draw(rng, self.shape, F32, scale=1.0)
        return dy, dy

    def call(self, dy, out):
        return gradients.GRADIENTS[self.op](self.y, dy, out=out)

    def check(self, dy, out):
        check_gradient(self.op, self.y, dy, out, F32)


# (id naming the path) -> case; TEMPORARIES: the cases whose calls allocate on every call
CASES = {
    "warp_rows_remembered_call": Forward(registry.SOFTMAX, (64, 1000)),
    "split_row_cluster_log_softmax": Forward(registry.LOG_SOFTMAX, (2, 50257)),
    "options_full_path": Forward(registry.SOFTMAX, (16, 3000), scale=2.0, masked=True),
    "strided_middle_axis": Forward(registry.SOFTMAX, (4, 300, 64), axis=1),
    "softmax_backward": Backward(registry.SOFTMAX_BACKWARD, (8, 3000)),
    "log_softmax_backward_cluster": Backward(registry.LOG_SOFTMAX_BACKWARD, (2, 50257)),
    "two_pass_workspace": Forward(registry.SOFTMAX, (4, 5000), variant="two_pass"),
    # split_row on the grid: a replay keeps its launch's tag, so a capture zeroes the workspace (api.run)
    "split_row_grid_tagged_workspace": Forward(registry.SOFTMAX, (32, 128256)),
    "transposed_copy": Forward(registry.SOFTMAX, (200, 16), view=lambda a: a.T),
    # float32 in, float16 out: a cast first (no such kernel pair), then the transposed copy of the cast
    "cast_then_transposed_copy": Forward(registry.SOFTMAX, (200, 16), view=lambda a: a.T, out_dtype=numpy.float16),
}
TEMPORARIES = ["two_pass_workspace", "split_row_grid_tagged_workspace", "transposed_copy", "cast_then_transposed_copy"]


def warmed_up(rng, name):
    """(case, the array the spin writes, the call's input, out, a non-blocking stream) after a first call on
    that stream (compiled, planned, remembered)."""
    case = CASES[name]
    target, x = case.inputs(rng)
    out = poisoned(x.shape, case.out_dtype)
    cupy.cuda.Device().synchronize()  # the inputs, made on the legacy stream, which this one does not wait for
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        assert case.call(x, out) is out
        stream.synchronize()
    return case, target, x, out, stream


@pytest.mark.parametrize("name", CASES)
def test_calls_run_on_the_current_stream_and_never_wait(rng, name):
    case, target, x, out, stream = warmed_up(rng, name)
    with stream:
        fresh = draw(rng, target.shape, F32)
        target.fill(numpy.nan)
        out.fill(numpy.nan)
        stream.synchronize()
        spin_then_copy(fresh, target)
        case.call(x, out)
        waited = stream.done
        stream.synchronize()
    assert not waited, "the call returned only once the stream's earlier work was done"
    case.check(x, out)


@pytest.mark.parametrize("name", CASES)
def test_a_captured_call_replays_on_new_inputs(rng, name):
    case, target, x, out, stream = warmed_up(rng, name)
    with stream:
        stream.begin_capture()
        case.call(x, out)
        graph = stream.end_capture()
        for _ in range(2):
            target[...] = draw(rng, target.shape, F32)
            out.fill(numpy.nan)
            graph.launch()
            stream.synchronize()
            case.check(x, out)


@pytest.mark.parametrize("name", TEMPORARIES)
def test_a_captured_call_keeps_its_temporaries_from_later_arrays(rng, name):
    """A replay writes the temporaries its capture was given (two_pass's workspace, 48 bytes here; the grid's, a tag
    per block and 128 pairs a row; the transposed copy and its output, x's size). Arrays made on the stream
    after the capture, of those sizes, would get the same blocks from the pool had the call let them go (api.run
    keeps them); a replay must leave them alone."""
    case, target, x, out, stream = warmed_up(rng, name)
    pair = (numpy.dtype(F32), numpy.dtype(F32))
    workspace = api.plan(cupy.cuda.Device().id, case.variant, *x.shape, pair)[1].workspace  # 0: none
    with stream:
        stream.begin_capture()
        case.call(x, out)
        graph = stream.end_capture()
        bystanders = [cupy.full(size, 7, numpy.uint8) for size in (512, workspace, x.nbytes, out.nbytes) for _ in range(2)]
        target[...] = draw(rng, target.shape, F32)
        out.fill(numpy.nan)
        graph.launch()
        stream.synchronize()
    case.check(x, out)
    assert all(bool((b == 7).all()) for b in bystanders), "a replay wrote into an array made after the capture"
