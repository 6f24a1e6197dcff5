"""A Triton peer for the benchmark suite: the idea of Triton's fused-softmax tutorial.

A persistent grid (a few programs per SM), each program taking rows in turn
(softmax, or log_softmax with LOG); a whole row is loaded at once as a power-of-two block (masked past N, padded
with -inf), reduced in float32 and stored in the output's type. The row lives
in registers, so it serves N up to MAX_BLOCK. Short rows pipeline the next
row's load behind the current row's arithmetic (num_stages of the row loop).
Imports triton at module level: import this module only where Triton is wanted.
"""
from __future__ import annotations

import triton
import triton.language as tl

MAX_BLOCK = 32768
PIPELINED_ROW_BYTES = 16384  # rows up to this size get 2 stages (a row in flight in shared memory)


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_rows, x_row_stride, y_row_stride, n_cols,
                  BLOCK: tl.constexpr, STAGES: tl.constexpr, LOG: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=STAGES):
        r = row.to(tl.int64)
        v = tl.load(x_ptr + r * x_row_stride + cols, mask=inside, other=-float("inf")).to(tl.float32)
        shifted = v - tl.max(v, axis=0)
        e = tl.exp(shifted)
        if LOG:
            y = shifted - tl.log(tl.sum(e, axis=0))
        else:
            y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + r * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


def launcher(x, y, sms: int, log: bool = False):
    """A no-argument function writing softmax(x) (log_softmax with `log`) over the last axis into y; returns y.

    x and y are 2-D torch tensors.

    ValueError if a row does not fit one block. Grid, block, warps and stages
    are worked out here once, so a call is one kernel launch.
    """
    m, n = x.shape
    block = triton.next_power_of_2(n)
    if block > MAX_BLOCK:
        raise ValueError(f"a row of {n} does not fit one block of at most {MAX_BLOCK}")
    # a warp per 256 elements up to 1024 (short rows keep programs small), then 4 to 16 warps
    warps = max(1, block // 256) if block <= 1024 else min(16, max(4, block // 1024))
    stages = 2 if block * x.element_size() <= PIPELINED_ROW_BYTES else 1
    programs = min(m, sms * max(1, min(32, 64 // warps)))  # 64 warps and 32 blocks per SM at most
    kernel = _softmax_rows[(programs,)]
    sx, sy = x.stride(0), y.stride(0)

    def run():
        kernel(x, y, m, sx, sy, n, BLOCK=block, STAGES=stages, LOG=log, num_warps=warps)
        return y

    return run
