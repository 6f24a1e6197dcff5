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
    knobs: tuple[tuple[int, ...], ...] = ()  # the compile-time knob values compiled, in template order
    # Variants whose last knob is a cluster size C: C > 1 instantiates this
    # __cluster_dims__(C) template (sm_90 and later), C = 1 the plain one without C.
    cluster_template: str = ""

    def instantiations(self, cc: tuple[int, int] = (9, 0)) -> list[tuple[tuple, tuple]]:
        """Every (dtype pair, knobs) compiled for a device of compute capability `cc`."""
        knob_sets = [k for k in self.knobs if cc >= (9, 0) or not self.clustered(k)] or [()]
        return [(pair, knobs) for pair in dtypes.PAIRS for knobs in knob_sets]

    def clustered(self, knobs) -> bool:
        return bool(self.cluster_template) and knobs[-1] > 1

    def name_expression(self, pair, knobs=()) -> str:
        template = self.cluster_template if self.clustered(knobs) else self.template
        if self.cluster_template and not self.clustered(knobs):
            knobs = knobs[:-1]
        args = [dtypes.CTYPE[pair[0]], dtypes.CTYPE[pair[1]], *map(str, knobs)]
        return f"{template}<{', '.join(args)}>"


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
            knobs=tuple((items,) for items in (1, 2, 4, 8, 16, 32)),
        ),
        Variant(
            "smem_cached", "smem_cached.cu", "softmax_smem_cached", "row_in_smem",
            "the row cached in shared memory with 16-byte vector loads, aligned and safe paths", "PyTorch", reads=1,
        ),
        Variant(
            "warp_rows", "warp_rows.cu", "softmax_warp_rows", "rows_in_warp",
            "1 to 32 threads per row, several rows per warp, the row in registers as 16-byte chunks",
            "past the peers", reads=1,
            knobs=tuple((g, k) for g in (1, 2, 4, 8, 16, 32) for k in (1, 2, 4, 8)),  # (G lanes per row, K chunks per lane)
        ),
        Variant(
            "split_row", "split_row.cu", "softmax_split_row", "row_over_cluster",
            "a row split over a cluster of 1 to 16 blocks, registers plus shared memory, partials over DSMEM",
            "past the peers", reads=1,
            knobs=tuple((k, c) for k in (2, 4, 8) for c in (1, 2, 4, 8, 16)),  # (K chunks per thread, C)
            cluster_template="softmax_split_row_cluster",
        ),
        Variant(
            "two_pass", "two_pass.cu", "softmax_two_pass", "row_in_two_passes",
            "rows past the chip: (max, sum) per slice to a workspace, then merge and write, second read from L2",
            "past the peers", reads=2,
            knobs=((4,),),  # K chunks per thread in flight
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
