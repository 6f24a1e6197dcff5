"""Launch planning: (variant, shape, dtypes, device facts, kernel attributes) -> grid, block, shared memory.

The planner is pure Python over plain data, so its rules are tested on the CPU
with made-up devices. It never compiles anything itself: where a rule needs a
kernel's attributes (registers decide how many threads a block may have) it asks
the `facts` callable it is given for the variant's instantiation with those knobs.

Every threshold is a row in a small (limit, value) table; the comment on each
row names the measurement behind it (docs/PERFORMANCE.md has the runs).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from . import dtypes
from . import variants as registry
from .device import DeviceFacts
from .errors import UnsuitableVariant

INF = math.inf
MAX_GRID = 2**31 - 1  # gridDim.x limit; kernels loop over rows past it

# naive: threads per block for one-thread-per-row.
# 256 is the usual llm.c choice; the variant is slow at any size, which is its point.
NAIVE_THREADS = 256

# warp: threads per block for one-warp-per-row (rows per block = threads / 32).
# 128 threads = 4 rows per block, seed 000's launch (rounded up, never zero blocks).
WARP_THREADS = 128

# Threads per block for the block-per-row variants (smem_tree, block, online,
# smem_cached), by row length N. From the H100 sweep of 2026-11-22
# (scripts/sweep_block_threads.py, docs/PERFORMANCE.md): short rows want small
# blocks so that many rows are in flight, long rows enough threads per row.
BLOCK_THREADS = (
    (2048, 128),  # N = 256, 1024, 2048: 128 fastest for all four variants
    (4096, 256),  # N = 4096: 256 fastest (smem_cached: 128 within 1%)
    (8192, 512),  # N = 8192: 512 fastest (smem_cached: 256 within 1%)
    (INF, 1024),  # N = 16384 .. 50257: 1024 fastest (smem_cached at 16384: 512 is 6% faster)
)

# registers: threads per block by the row length rounded up to a power of two,
# Triton's tutorial rule (4 warps below 2048, 8 below 4096, 16 above). Each
# thread then holds P / threads elements; where the kernel's registers do not
# allow that many threads, the planner halves threads and doubles ITEMS.
REGISTER_THREADS = (
    (2048, 128),
    (4096, 256),
    (INF, 512),
)

# auto: the first variant in this order that can serve the shape.
# registers read the row once from registers; smem_cached once through shared
# memory (rows too long for registers); online twice, for rows too long for
# shared memory. H100 run of 2026-11-22, `cupysoftmax time --variant all`.
AUTO_ORDER = ("registers", "smem_cached", "online")


@dataclass(frozen=True)
class KernelFacts:
    """Attributes of one compiled kernel instantiation."""

    num_regs: int
    static_smem: int  # bytes
    local_bytes: int  # stack / spill bytes per thread
    max_threads: int  # most threads a block of it can launch with (registers counted)


@dataclass(frozen=True)
class Launch:
    variant: str
    knobs: tuple
    grid: int
    block: int
    smem: int  # dynamic shared memory bytes


FactsFn = Callable[[str, tuple], KernelFacts]  # (variant name, knobs) -> attributes


def lookup(table, value):
    """The value of the first (limit, value) row whose limit is >= value."""
    for limit, result in table:
        if value <= limit:
            return result
    raise ValueError(f"{value} is past the last row of {table}")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


class Planner:
    """Turns (variant, M, N, dtype pair) into a Launch for one device."""

    def __init__(self, device: DeviceFacts):
        self.device = device
        self.rules = {
            "thread_per_row": self._thread_per_row,
            "warp_per_row": self._warp_per_row,
            "block_per_row": self._block_per_row,
            "block_per_row_tree": self._block_per_row,
            "row_in_registers": self._row_in_registers,
            "row_in_smem": self._row_in_smem,
        }

    # -- public -------------------------------------------------------------

    def plan(self, variant: str, m: int, n: int, pair, facts: FactsFn) -> Launch:
        """The launch for `variant` (or "auto"), or UnsuitableVariant saying why and which can."""
        if variant == registry.AUTO:
            return self.pick(m, n, pair, facts)
        v = registry.get(variant)
        try:
            return self.rules[v.launch](v, m, n, pair, facts)
        except UnsuitableVariant as exc:
            able = [name for name in registry.VARIANTS if name != variant and self._serves(name, m, n, pair, facts)]
            raise UnsuitableVariant(f"{exc}; variants that can: {', '.join(able)}") from None

    def pick(self, m: int, n: int, pair, facts: FactsFn) -> Launch:
        """auto: the first variant of AUTO_ORDER that can serve the shape."""
        for name in AUTO_ORDER:
            v = registry.VARIANTS[name]
            try:
                return self.rules[v.launch](v, m, n, pair, facts)
            except UnsuitableVariant:
                continue
        raise AssertionError("online serves every shape")  # pragma: no cover - internal invariant

    def blocks_per_sm(self, threads: int, kernel: KernelFacts, smem: int) -> int:
        """Resident blocks per SM (the CUDA occupancy rules, 256-register warp granules)."""
        d = self.device
        warps = _ceil_div(threads, 32)
        by_threads = d.max_threads_per_sm // (warps * 32)
        regs_per_warp = _round_up(max(kernel.num_regs, 1) * 32, 256)
        by_regs = (d.regs_per_sm // regs_per_warp) // warps
        block_smem = smem + kernel.static_smem + d.smem_reserved_per_block
        by_smem = d.smem_per_sm // block_smem
        return max(0, min(by_threads, by_regs, by_smem, d.max_blocks_per_sm))

    # -- rules --------------------------------------------------------------

    def _serves(self, name, m, n, pair, facts) -> bool:
        v = registry.VARIANTS[name]
        try:
            self.rules[v.launch](v, m, n, pair, facts)
            return True
        except UnsuitableVariant:
            return False

    def _fit_threads(self, v, threads: int, kernel: KernelFacts) -> None:
        if threads > kernel.max_threads:
            raise UnsuitableVariant(
                f"{v.name} needs {threads} threads per block but its kernel launches at most "
                f"{kernel.max_threads} ({kernel.num_regs} registers per thread)"
            )

    def _thread_per_row(self, v, m, n, pair, facts) -> Launch:
        threads = NAIVE_THREADS
        self._fit_threads(v, threads, facts(v.name, ()))
        return Launch(v.name, (), min(_ceil_div(m, threads), MAX_GRID), threads, 0)

    def _warp_per_row(self, v, m, n, pair, facts) -> Launch:
        threads = WARP_THREADS
        self._fit_threads(v, threads, facts(v.name, ()))
        return Launch(v.name, (), min(_ceil_div(m, threads // 32), MAX_GRID), threads, 0)

    def _block_per_row(self, v, m, n, pair, facts) -> Launch:
        threads = lookup(BLOCK_THREADS, n)
        self._fit_threads(v, threads, facts(v.name, ()))
        smem = threads * dtypes.accumulator(pair).itemsize if v.launch == "block_per_row_tree" else 0
        return Launch(v.name, (), min(m, MAX_GRID), threads, smem)

    def _row_in_smem(self, v, m, n, pair, facts) -> Launch:
        kernel = facts(v.name, ())
        itemsize = pair[0].itemsize
        smem = (n + 16 // itemsize) * itemsize
        room = self.device.smem_per_block_optin - kernel.static_smem
        if smem > room:
            raise UnsuitableVariant(
                f"{v.name} caches the row in shared memory: a row of {n} {pair[0].name} needs {smem} bytes, "
                f"a block of this GPU gets at most {room}"
            )
        threads = lookup(BLOCK_THREADS, n)
        self._fit_threads(v, threads, kernel)
        return Launch(v.name, (), min(m, MAX_GRID), threads, smem)

    def _row_in_registers(self, v, m, n, pair, facts) -> Launch:
        padded = 1 << max(n - 1, 0).bit_length()  # n rounded up to a power of two
        threads = min(lookup(REGISTER_THREADS, padded), max(padded, 32))
        items = max(padded // threads, 1)
        while items <= max(v.knobs) and threads >= 32:
            kernel = facts(v.name, (items,))
            if threads <= kernel.max_threads and self.blocks_per_sm(threads, kernel, 0) > 0:
                resident = self.blocks_per_sm(threads, kernel, 0) * self.device.sms
                return Launch(v.name, (items,), min(m, resident), threads, 0)
            threads //= 2
            items *= 2
        raise UnsuitableVariant(
            f"{v.name} holds the row in registers: a row of {n} {pair[0].name} does not fit "
            f"({max(v.knobs)} elements per thread at most, and the block's threads times registers must fit the register file)"
        )
