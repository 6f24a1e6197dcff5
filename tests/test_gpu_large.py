"""64-bit safety on the GPU: inputs of more than 2^31 elements, and single rows longer than 2^24.

Past 2^31 elements a row's offset (row * row stride) no longer fits an int; the kernels
take rows, N and strides as 64-bit and compute a row's base in 64 bits, then index inside
the row in 32 bits (rows up to 2^31 - 32 elements; longer ones go to online, all 64-bit).
The > 2^31 inputs are drawn on the GPU (cupy's generator, seeded from the test's printed
seed) and checked against the float64 reference on sampled rows (the first, the last, the
first row past element 2^31 and random ones: a full float64 reference would take 32 GB
of host memory), and everywhere for having been written (outputs start as NaN). Rows
past 2^24 elements (where a float counter would stop counting) are checked whole. Each
test skips where the GPU has too little free memory.
"""
from __future__ import annotations

import numpy
import pytest

from cupysoftmax import api, dtypes, gradients, reference
from cupysoftmax import variants as registry
from test_gpu_softmax import draw, poisoned

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

GIB = 2**30
SLAB = 2**27  # elements drawn or checked at a time
MASKED = "softmax_scale_where"


def need_free_bytes(nbytes: int) -> None:
    """Skip unless the GPU has `nbytes` free (after handing CuPy's cached blocks back)."""
    cupy.get_default_memory_pool().free_all_blocks()
    free = cupy.cuda.runtime.memGetInfo()[0]
    if free < nbytes:
        pytest.skip(f"needs {nbytes / GIB:.1f} GiB of free GPU memory, {free / GIB:.1f} GiB free")


def big_normal(state, shape, dtype, scale=3.0):
    """Standard normal x scale in `dtype` (float32 or bfloat16), drawn on the GPU a slab at a time.

    bfloat16 takes the upper 16 bits of the float32 draw (rounded toward zero).
    """
    out = cupy.empty(shape, dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, SLAB):
        part = state.standard_normal(min(SLAB, flat.size - start), dtype=numpy.float32) * numpy.float32(scale)
        if dtype == dtypes.BFLOAT16:
            flat.view(numpy.uint16)[start:start + part.size] = (part.view(numpy.uint32) >> 16).astype(numpy.uint16)
        else:
            flat[start:start + part.size] = part
    return out


def big_mask(state, shape, keep=0.7):
    mask = cupy.empty(shape, bool)
    flat = mask.reshape(-1)
    for start in range(0, flat.size, SLAB):
        size = min(SLAB, flat.size - start)
        flat[start:start + size] = state.random_sample(size, dtype=numpy.float32) < keep
    return mask


def assert_all_written(out) -> None:
    """No NaN left of the poison, anywhere (checked a slab of rows at a time)."""
    step = max(1, SLAB // out.shape[1])
    for start in range(0, out.shape[0], step):
        assert not bool(cupy.isnan(out[start:start + step]).any()), f"NaN in rows {start} .. {start + step}"


def host_rows(a, rows) -> numpy.ndarray:
    """Rows of a GPU array on the host, each through a view (no gather kernel over the whole array)."""
    return numpy.concatenate([cupy.asnumpy(a[r:r + 1]) for r in rows])


def sampled_rows(rng, m, n):
    """The first and last rows, the first row past element 2^31, and six random ones."""
    return sorted({0, m - 1, 2**31 // n, *map(int, rng.integers(0, m, 6))})


# (id naming the path on the H100, variant auto plans, M, N): M * N = 2^31 + 4096 bfloat16 elements, 4 GiB an array
PAST_INT = [
    ("warp_rows_n256", "warp_rows", 2**23 + 16, 256),
    ("split_row_n4096", "split_row", 2**19 + 1, 4096),
]
OPS = [registry.SOFTMAX, registry.LOG_SOFTMAX, MASKED, *registry.BACKWARD]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("case", PAST_INT, ids=[c[0] for c in PAST_INT])
def test_more_than_2_to_the_31_elements(rng, case, op):
    _, planned, m, n = case
    dtype = dtypes.BFLOAT16
    assert m * n > 2**31
    arrays = 3 if op in registry.BACKWARD else 2  # x and out; the gradients' y, dy and dx (x freed)
    need_free_bytes(arrays * m * n * dtype.itemsize + (m * n if op == MASKED else 0) + 2 * GIB)
    state = cupy.random.RandomState(int(rng.integers(2**31)))
    x = big_normal(state, (m, n), dtype)
    assert api.plan(x.device.id, "auto", m, n, (dtype, dtype), True, registry.SOFTMAX)[1].variant == planned
    out = poisoned((m, n), dtype)
    rows = sampled_rows(rng, m, n)
    if op in registry.BACKWARD:
        y = api.FUNCTIONS[registry.FORWARD_OF[op]](x, axis=-1)
        del x
        dy = big_normal(state, (m, n), dtype, scale=1.0)
        assert gradients.GRADIENTS[op](y, dy, out=out) is out
        y_host, dy_host = host_rows(y, rows), host_rows(dy, rows)
        want = reference.GRADIENTS[op](y_host, dy_host)
        reference.assert_close(host_rows(out, rows), want, dtype, op, reference.gradient_scale(y_host, dy_host, op))
    elif op == MASKED:
        mask = big_mask(state, (m, n))
        assert api.softmax(x, axis=-1, out=out, scale=1.7, where=mask) is out
        want = reference.softmax(host_rows(x, rows), -1, scale=1.7, where=host_rows(mask, rows))
        reference.assert_close(host_rows(out, rows), want, dtype)
    else:
        assert api.FUNCTIONS[op](x, axis=-1, out=out) is out
        reference.assert_close(host_rows(out, rows), reference.REFERENCES[op](host_rows(x, rows), -1), dtype, op)
    assert_all_written(out)


LONG_ROW = 2**24 + 7
# variants with no limit on N (a row in global memory): auto's two_pass (float32; a misaligned bfloat16 row of
# 2**24 + 7 spans 2**21 + 2 chunks, which split_row's grid holds in 65536 threads), and online and block by name
LONG_ROW_AUTO = {dtypes.FLOAT32: "two_pass", dtypes.BFLOAT16: "split_row"}
LONG_ROW_VARIANT_OPS = [("auto", registry.SOFTMAX), ("auto", registry.LOG_SOFTMAX),
                        *((name, op) for name in ("two_pass", "online", "block") for op in registry.VARIANTS[name].ops
                          if op in api.FUNCTIONS)]


@pytest.mark.parametrize("dtype", [dtypes.FLOAT32, dtypes.BFLOAT16], ids=dtypes.name)
@pytest.mark.parametrize("variant, op", LONG_ROW_VARIANT_OPS, ids=[f"{v}-{op}" for v, op in LONG_ROW_VARIANT_OPS])
def test_a_row_longer_than_2_to_the_24(rng, variant, op, dtype):
    need_free_bytes(4 * LONG_ROW * dtype.itemsize + GIB)
    x = draw(rng, (1, LONG_ROW + 1), dtype)[:, 1:]  # misaligned: partial first and last chunks
    launch = api.plan(x.device.id, variant, 1, LONG_ROW, (dtype, dtype), api.rows_aligned(x), op)[1]
    assert launch.variant == (LONG_ROW_AUTO[dtype] if variant == "auto" else variant)
    out = poisoned(x.shape, dtype)
    assert api.FUNCTIONS[op](x, axis=-1, out=out, variant=variant) is out
    reference.assert_close(cupy.asnumpy(out), reference.REFERENCES[op](cupy.asnumpy(x), -1), dtype, op)


@pytest.mark.parametrize("dtype", [dtypes.FLOAT32, dtypes.BFLOAT16], ids=dtypes.name)
@pytest.mark.parametrize("op", registry.BACKWARD)
def test_the_gradient_of_a_row_longer_than_2_to_the_24(rng, op, dtype):
    need_free_bytes(5 * LONG_ROW * dtype.itemsize + GIB)
    y = api.FUNCTIONS[registry.FORWARD_OF[op]](draw(rng, (1, LONG_ROW), dtype), axis=-1)
    dy = draw(rng, (1, LONG_ROW), dtype, scale=1.0)
    dy += 1  # a nonzero mean: every slice's share of s shows
    assert api.plan(y.device.id, "auto", 1, LONG_ROW, (dtype, dtype), api.rows_aligned(y), op)[1].variant == "two_pass"
    dx = poisoned(y.shape, dtype)
    assert gradients.GRADIENTS[op](y, dy, out=dx) is dx
    y_host, dy_host = cupy.asnumpy(y), cupy.asnumpy(dy)
    reference.assert_close(cupy.asnumpy(dx), reference.GRADIENTS[op](y_host, dy_host), dtype, op,
                           reference.gradient_scale(y_host, dy_host, op))
