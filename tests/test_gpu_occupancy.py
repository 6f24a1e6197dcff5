"""The planner's occupancy model (Planner.blocks_per_sm) against the driver's, for kernels it plans.

Every block size a kernel launches, without dynamic shared memory: the blocks an SM holds by the planner's rule
must be the driver's (cuOccupancyMaxActiveBlocksPerMultiprocessor). The cases cover register counts whose warps
fill an SM's quarters unevenly (planner.SUB_PARTITIONS).
"""
from __future__ import annotations

import pytest

from cupysoftmax import api, dtypes, loader
from cupysoftmax import variants as registry

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu

F32 = (dtypes.FLOAT32, dtypes.FLOAT32)
BF16 = (dtypes.BFLOAT16, dtypes.BFLOAT16)

# (variant, dtype pair, knobs, op): registers on sm_90 in the comments (`cupysoftmax build`)
KERNELS = {
    "split_row_gradient_bf16_k4_48_registers": ("split_row", BF16, (4, 1, 1), registry.SOFTMAX_BACKWARD),
    "split_row_gradient_f32_k8_92_registers": ("split_row", F32, (8, 1, 1), registry.SOFTMAX_BACKWARD),
    "split_row_plain_f32_k8": ("split_row", F32, (8, 0, 1), registry.SOFTMAX),
    "split_row_fold_bf16_log": ("split_row", BF16, (8, 4, 1), registry.LOG_SOFTMAX),
    "split_row_plain_fold_bf16": ("split_row", BF16, (8, -4, 1), registry.SOFTMAX),
    "warp_rows_f32_32x8": ("warp_rows", F32, (32, 8, 0), registry.SOFTMAX),
    "two_pass_f32": ("two_pass", F32, (4,), registry.SOFTMAX),
}


@pytest.mark.parametrize("name", KERNELS)
def test_planner_counts_the_blocks_an_sm_holds_as_the_driver_does(name):
    from cupy.cuda import driver

    variant, pair, knobs, op = KERNELS[name]
    dev = cupy.cuda.Device().id
    kernel = loader.function(variant, pair, knobs, dev, op)
    facts = loader.facts_of(kernel)
    planner = api.planner(dev)
    mismatches = []
    for block in range(32, facts.max_threads + 1, 32):
        ours = planner.blocks_per_sm(block, facts, 0)
        driver_count = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, 0)
        if ours != driver_count:
            mismatches.append((block, ours, driver_count))
    assert facts.max_threads >= 32 and not mismatches, (facts.num_regs, mismatches)
