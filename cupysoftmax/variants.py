"""The registry: the single source of truth for softmax variants.

Each entry names its kernel file in kernels/, the template it instantiates, its
compile-time knobs, the launch rule the planner applies to it, and the line a
reader sees in ``cupysoftmax list`` and the README table. Adding a variant is
one file in kernels/ and one entry here (plus a planner rule if `auto` may pick
it).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import dtypes


@dataclass(frozen=True)
class Variant:
    name: str
    source: str  # file name in kernels/
    template: str  # kernel template name, instantiated as template<Tin, Tout, *knobs>
    launch: str  # the planner's launch rule: a key of planner.Planner.rules
    idea: str  # one line for `cupysoftmax list` and the README
    seed: str  # where the idea comes from
    reads: int  # times each input element leaves global memory
    knobs: tuple[int, ...] = ()  # values of the one compile-time knob, if any

    def instantiations(self) -> list[tuple[tuple, tuple]]:
        """Every (dtype pair, knobs) this variant is compiled for."""
        knob_sets = [(k,) for k in self.knobs] or [()]
        return [(pair, knobs) for pair in dtypes.PAIRS for knobs in knob_sets]

    def name_expression(self, pair, knobs=()) -> str:
        args = [dtypes.CTYPE[pair[0]], dtypes.CTYPE[pair[1]], *map(str, knobs)]
        return f"{self.template}<{', '.join(args)}>"


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "naive", "naive.cu", "softmax_naive", "thread_per_row",
            "one thread per row, three passes over the row", "llm.c kernel 1", reads=3,
        ),
        Variant(
            "smem_tree", "smem_tree.cu", "softmax_smem_tree", "block_per_row_tree",
            "one block per row, shared-memory tree reductions for max and sum", "llm.c kernel 2", reads=3,
        ),
        Variant(
            "warp", "warp.cu", "softmax_warp", "warp_per_row",
            "one warp per row, __shfl_xor_sync reductions, several rows per block", "CUDA 009", reads=3,
        ),
        Variant(
            "block", "block.cu", "softmax_block", "block_per_row",
            "one block per row, warp shuffles then one shared-memory step across warps", "CUDA 009", reads=3,
        ),
        Variant(
            "online", "online.cu", "softmax_online", "block_per_row",
            "one block per row, running (max, sum) in one pass, then a write pass", "CUDA 009, Pallas", reads=2,
        ),
        Variant(
            "registers", "registers.cu", "softmax_registers", "row_in_registers",
            "the row held in registers, read once; persistent grid sized from occupancy", "Triton tutorial", reads=1,
            knobs=(1, 2, 4, 8, 16, 32),
        ),
        Variant(
            "smem_cached", "smem_cached.cu", "softmax_smem_cached", "row_in_smem",
            "the row cached in shared memory with 16-byte vector loads, aligned and safe paths", "PyTorch", reads=1,
        ),
    )
}

AUTO = "auto"


def get(name: str) -> Variant:
    """The variant called `name`; ValueError naming the known ones otherwise."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        known = ", ".join([AUTO, *VARIANTS])
        raise ValueError(f"unknown softmax variant {name!r}; known variants: {known}") from None
