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

# What a kernel writes for each element of a row: softmax exp(x - max) / sum,
# or log_softmax (x - max) - log(sum).
SOFTMAX = "softmax"
LOG_SOFTMAX = "log_softmax"
# The gradients: dx from the forward's output y and the gradient dy.
SOFTMAX_BACKWARD = "softmax_backward"
LOG_SOFTMAX_BACKWARD = "log_softmax_backward"
FORWARD = (SOFTMAX, LOG_SOFTMAX)
BACKWARD = (SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD)
FORWARD_OF = {SOFTMAX_BACKWARD: SOFTMAX, LOG_SOFTMAX_BACKWARD: LOG_SOFTMAX}  # the op whose output a gradient takes as y
LOG_OPS = (LOG_SOFTMAX, LOG_SOFTMAX_BACKWARD)  # the kernels' `bool LOG`
# How benchmark records name the ops ("op"): softmax's records have said
# "forward" from the first suite run on, its gradient's "backward"; "axis" is
# softmax over a middle axis (records carry the array's "shape" and the "axis").
RECORD_OPS = {"forward": SOFTMAX, "log_softmax": LOG_SOFTMAX, "backward": SOFTMAX_BACKWARD,
              "log_softmax_backward": LOG_SOFTMAX_BACKWARD, "axis": SOFTMAX}
# What a variant reads: rows (softmax over the last axes, an (M, N) view with
# unit inner stride), or columns (softmax over a middle axis, an (outer, N,
# inner) view read in place, coalesced along inner; api.columns_view).
ROWS = "rows"
COLUMNS = "columns"


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
    # ... and C = 0 this one without C: a row's blocks anywhere on the grid,
    # their count given at run time (a cooperative launch with a workspace);
    # C = -1 the same with the fused options compiled out (the template's last
    # argument O is C + 1).
    grid_template: str = ""
    # The ops its kernels compute. A variant with log_softmax takes `bool LOG`
    # as the template parameter after the two types; the classic variants,
    # there to compare softmax kernels, compute softmax only. A variant with
    # the backward ops has `<template>_backward` kernels (y, dy, dx), same knobs.
    ops: tuple[str, ...] = (SOFTMAX,)
    # The knob sets the backward kernels compile where not all of `knobs` (None: all).
    backward_knobs: tuple[tuple[int, ...], ...] | None = None
    # Knob sets of `knobs` compiled only where clusters exist, besides C > 1 (split_row's folds and its grid
    # launches, which cut only layouts of clusters).
    cluster_only: tuple[tuple[int, ...], ...] = ()
    # Knob sets of `backward_knobs` compiled for one gradient alone: (op, knob sets) (split_row's grid and its
    # clusters' late-y twins, for log_softmax's gradient only).
    gradient_only: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...] = ()
    # Knob sets of its gradient kernels' late-y twins (split_row's R = 2 clusters), each the twin of the knob set
    # with the same K and C and R = 1 (Planner.late_y_off_boundaries).
    late_y: tuple[tuple[int, ...], ...] = ()
    # Whether its forward kernels take the fused options, scale= and where=
    # (csm::Fused in kernels/common.cuh), after the row strides.
    fused: bool = False
    # The index of its knob whose value <= 0 marks a kernel with those options
    # compiled out, -value (0: 1) its twin that reads them (warp_rows' O 0 and
    # 1; split_row's R in one block, 0 and 1, -4 and 4), or None: the planner
    # plans the plain kernel where it serves, then the twin for calls with
    # options (Planner.with_options, through twin_with_options).
    plain_knob: int | None = None
    # Whether its plain kernels (plain_knob 0) have a twin on whole chunks (plain_knob -1), and its kernels that
    # read the options (1) one too (2), for calls whose rows of x and y all start on a 16-byte boundary and span
    # whole chunks (and whose mask, if any, is read row for row at x's phase): no element path, no misalignment
    # arithmetic (Planner.on_whole_chunks; warp_rows).
    whole_chunks: bool = False
    # Whether its plain forward kernels (plain_knob 0, softmax and log_softmax) hold a row of any 16-byte phase in
    # as many chunks as a row on a boundary, ceil(N / V) (kernels/common.cuh, Slots; warp_rows): the planner
    # lays out such calls' rows as if aligned (Planner.plain_slots).
    slots: bool = False
    # Knob sets of its element-strided plain kernels (warp_rows' O = -2: a row's elements dealt out to its lanes in
    # turn, no 16-byte chunks): (dtype, op, knob sets), each compiled for that op with that dtype in and out only;
    # the planner's kernels for plain rows whose N is not a multiple of V, float64 rows of any N (Planner.element_strided).
    element_strided: tuple[tuple[object, str, tuple[tuple[int, ...], ...]], ...] = ()
    layout: str = ROWS  # ROWS or COLUMNS: which view of x its kernels take, and which planner entry plans it

    def instantiations(self, cc: tuple[int, int] = (9, 0)) -> list[tuple[tuple, tuple, str]]:
        """Every (dtype pair, knobs, op) compiled for a device of compute capability `cc`."""
        return [(pair, knobs, op) for op in self.ops for pair in op_pairs(op) for knobs in self.knob_sets(op, cc, pair)]

    def knob_sets(self, op: str = SOFTMAX, cc: tuple[int, int] = (9, 0), pair=None) -> list[tuple[int, ...]]:
        """The knob sets compiled for `op` on a device of compute capability `cc`, for the dtype pair `pair`
        (None: those of every pair, element-strided ones of any dtype included)."""
        knobs = self.backward_knobs if op in BACKWARD and self.backward_knobs is not None else self.knobs
        mine = ({k for _, o, sets in self.element_strided if o == op for k in sets} if pair is None
                else set(self.element_strided_for(pair, op)))
        return [k for k in knobs if (cc >= (9, 0) or not (self.clustered(k) or k in self.cluster_only))
                and (not self.is_element_strided(k) or k in mine)
                and not (op in BACKWARD and any(k in sets for o, sets in self.gradient_only if o != op))] or [()]

    def is_element_strided(self, knobs) -> bool:
        return any(knobs in sets for _, _, sets in self.element_strided)

    def element_strided_for(self, pair, op: str) -> tuple[tuple[int, ...], ...]:
        """The element-strided knob sets compiled for `op` on the dtype pair `pair` (none where input and output
        differ)."""
        return next((sets for dtype, o, sets in self.element_strided if pair == (dtype, dtype) and o == op), ())

    def twin_with_options(self, knobs) -> tuple | None:
        """The knob set of the kernel that reads scale= and where= in place of the plain kernel `knobs`, or None
        where `knobs` reads them already. split_row's cluster kernels always do (their R = -1 is no plain
        knob); its grid's plain kernel is C = -1 (there the knob after K is G, not R)."""
        if self.gridded(knobs):  # the grid's plain kernel is C = -1, its twin C = 0
            return (*knobs[:-1], 0) if knobs[-1] < 0 else None
        i = self.plain_knob
        if i is None or knobs[i] > 0 or self.clustered(knobs) or self.is_element_strided(knobs):
            return None  # the element-strided kernels have none: the planner takes them after with_options
        return (*knobs[:i], -knobs[i] or 1, *knobs[i + 1:])

    def twin_on_whole_chunks(self, knobs, op: str) -> tuple | None:
        """The knob set of the kernel `knobs`' twin on whole chunks for `op` (plain 0 -> -1, with options
        1 -> 2), or None where it has none."""
        i = self.plain_knob
        whole = {0: -1, 1: 2}.get(knobs[i]) if self.whole_chunks else None
        if whole is None:
            return None
        twin = (*knobs[:i], whole, *knobs[i + 1:])
        return twin if twin in self.knob_sets(op) else None

    def clustered(self, knobs) -> bool:
        return bool(self.cluster_template) and knobs[-1] > 1

    def gridded(self, knobs) -> bool:
        return bool(self.grid_template) and knobs[-1] <= 0

    def name_expression(self, pair, knobs=(), op: str = SOFTMAX) -> str:
        template = (self.cluster_template if self.clustered(knobs)
                    else self.grid_template if self.gridded(knobs) else self.template)
        if op in BACKWARD:
            template += "_backward"
        if self.gridded(knobs):  # C = 0 reads the options, C = -1 compiles them out: the grid template's O
            knobs = knobs[:-1] if op in BACKWARD else (*knobs[:-1], knobs[-1] + 1)  # (the gradients take none)
        elif self.cluster_template and not self.clustered(knobs):
            knobs = knobs[:-1]
        log = [] if self.ops == (SOFTMAX,) else ["true" if op in LOG_OPS else "false"]
        args = [dtypes.CTYPE[pair[0]], dtypes.CTYPE[pair[1]], *log, *map(str, knobs)]
        return f"{template}<{', '.join(args)}>"


WARP_ROWS_LAYOUTS = tuple((g, k) for g in (1, 2, 4, 8, 16, 32) for k in (1, 2, 4, 8))  # (G, K)
# The layouts planner._rows_in_warp launches (the fewest lanes G at one chunk each up to 8 chunks, then two,
# and the fewest chunks K for them; tests/test_planner.py walks every row length to 256 chunks): the others
# serve launch-shape sweeps (scripts/sweep_configs.py) with the options compiled in.
WARP_ROWS_PLAIN = ((1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (16, 2), (32, 2), (32, 4), (32, 8))
# The layouts of the element-strided kernels (O = -2: kernels/warp_rows.cu), by dtype and op: those
# Planner.element_strided plans (planner.ELEMENT_STRIDED_LAYOUTS; tests/test_planner.py walks them).
_F32_STRIDED = ((2, 1), (2, 2), (4, 1), (4, 2), (8, 1), (8, 2), (16, 1), (16, 2), (32, 2), (32, 4), (32, 8))
_F64_STRIDED = ((1, 2), (1, 4), (2, 2), (2, 4), (4, 2), (4, 4), (4, 8), (8, 4), (8, 8), (16, 4), (16, 8), (32, 4),
                (32, 8))
WARP_ROWS_ELEMENT_STRIDED = ((dtypes.FLOAT32, SOFTMAX, (*_F32_STRIDED, (32, 1))),
                             (dtypes.FLOAT32, LOG_SOFTMAX, _F32_STRIDED),
                             (dtypes.FLOAT64, SOFTMAX, (*_F64_STRIDED, (8, 2))),
                             (dtypes.FLOAT64, LOG_SOFTMAX, _F64_STRIDED))
SPLIT_UNFOLDED = tuple((k, 1, c) for k in (2, 4, 8) for c in (1, 2, 4, 8, 16))
# compiled for every pair (the planner folds no float64 row); R = -4 its plain twin, the options compiled out;
# R = -8 the plain fold's launch on half the threads (planner: SPLIT_HALVED_FOLD), plain only: its twin with
# options, (8, 8, 1), spilled 84 bytes (bfloat16 softmax, sm_90)
SPLIT_FOLDED = ((8, 4, 1), (8, -4, 1), (8, -8, 1))
SPLIT_PLAIN = tuple((k, 0, 1) for k in (2, 4, 8))  # R = 0: one block, the options and the shared-memory part compiled out
SPLIT_GRID = tuple((k, 1, 0) for k in (2, 4, 8)) + ((8, 4, 0),)  # C = 0: the row's blocks anywhere on the grid, (K, G, 0)
SPLIT_GRID_FOLDED = ((8, -2, 0),)  # G = -2: a thread folds two logical threads there (planner.SPLIT_GRID_FOLD)
SPLIT_GRID_PLAIN = tuple((k, g, -1) for k, g, _ in SPLIT_GRID + SPLIT_GRID_FOLDED)  # C = -1: their plain twins
# log_softmax's gradient on the grid, (K, G, 0): no options (gradient_only); softmax's stays on two_pass
# (planner.SPLIT_GRID_BACKWARD_ITEMS)
SPLIT_GRID_BACKWARD = ((8, 1, 0),)
# R = 2 on log_softmax's gradient clusters (K = 4, C <= 8): the twin that reads y after the row's sum, y's chunks
# sent to L2 while it sums, for 2-byte rows off 16-byte boundaries (gradient_only; planner.LATE_Y_ITEMSIZES). Like
# the one-pass kernels, compiled for every pair and launched on some.
SPLIT_LATE_Y = tuple((4, 2, c) for c in (2, 4, 8))
SPLIT_ONE_PASS = tuple((8, -1, c) for c in (2, 4, 8, 16))  # R = -1 on clusters: outputs from the row's (max, sum)

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
            ops=FORWARD,
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
            # (G lanes per row, K chunks per lane, O): O = 1 takes scale= and where=, O = 0 compiles them out
            # (the plain path, for the layouts the planner launches; its forward kernels hold a row of any phase
            # in ceil(N / V) chunks: slots), O = -1 is the plain path on whole chunks (rows of x and y on 16-byte
            # boundaries, N a multiple of a chunk), O = 2 the options on whole chunks (a mask, if any, read row
            # for row at x's phase: warp_rows.cu), O = -2 the plain path element-strided (float32 rows of
            # N % V != 0, float64 rows of any N: element_strided). The gradients take no options: O = 0 on every
            # layout, and its twin on whole chunks (O = -1, rows of y, dy and dx on 16-byte boundaries) on
            # WARP_ROWS_PLAIN's
            knobs=tuple((g, k, 1) for g, k in WARP_ROWS_LAYOUTS)
            + tuple((g, k, o) for o in (0, -1, 2) for g, k in WARP_ROWS_PLAIN)
            + tuple(dict.fromkeys((g, k, -2) for _, _, layouts in WARP_ROWS_ELEMENT_STRIDED for g, k in layouts)),
            element_strided=tuple((dtype, op, tuple((g, k, -2) for g, k in layouts))
                                  for dtype, op, layouts in WARP_ROWS_ELEMENT_STRIDED),
            backward_knobs=tuple((g, k, 0) for g, k in WARP_ROWS_LAYOUTS)
            + tuple((g, k, -1) for g, k in WARP_ROWS_PLAIN),
            plain_knob=2, whole_chunks=True, slots=True,
            ops=(SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD), fused=True,
        ),
        Variant(
            "split_row", "split_row.cu", "softmax_split_row", "row_over_cluster",
            "a row split over a cluster of 1 to 16 blocks (few long rows, and rows past a cluster: blocks anywhere on the grid), registers plus shared memory, partials over DSMEM (global memory)",
            "past the peers", reads=1,
            # (K chunks per thread, R logical threads a thread folds, C): folds (R = 4, and R = -4 below) only
            # in one block (C = 1) of K = 8, for rows that clusters may also take (planner: SPLIT_FOLD); the
            # gradients fold none (their R = 2 on clusters is log_softmax's late-y twin: SPLIT_LATE_Y).
            # R = 0: the plain one-block kernel, for calls without options whose block holds the row in
            # registers (its R = 1 twin takes them: plain_knob; where= may take K = 4, planner.SPLIT_MASKED_ITEMS);
            # R = -4 the plain fold (its twin R = 4), R = -8 the same logical threads on half the threads
            # (no twin: calls with options keep R = 4).
            # R = -1 on clusters writes every output from the row's (max, sum), as the grid does: the clusters
            # of a float-accumulating row no block holds (planner: SplitLayout.one_pass); clusters always read
            # the options. It differs from R = 1 only where R = 1 keeps exponentials (float32 softmax): the
            # other pairs and log_softmax build the same code twice, float64 never launches it.
            # C = 0 cuts a row of a cluster layout over blocks anywhere on the grid (planner: SPLIT_GRID_FROM_ROWS),
            # and holds rows no cluster holds there (SPLIT_GRID_ROW_THREADS; log_softmax's gradient's too,
            # SPLIT_GRID_BACKWARD, which take no options, and its K = 8 cluster rows from
            # SPLIT_GRID_BACKWARD_FROM_ROWS rows), compiled where clusters exist (the layouts it
            # cuts). Its middle knob is G, not R: the groups of 32 warps each
            # warp reduces (planner: SPLIT_GRID_GROUPS), or (G < 0) the -G logical threads a thread folds
            # (planner: SPLIT_GRID_FOLD). C = -1 is the grid's plain twin, the options compiled out: the
            # planner plans it and with_options gives calls with options C = 0
            knobs=SPLIT_UNFOLDED + SPLIT_ONE_PASS + SPLIT_PLAIN + SPLIT_FOLDED + SPLIT_GRID + SPLIT_GRID_FOLDED
            + SPLIT_GRID_PLAIN,
            backward_knobs=SPLIT_UNFOLDED + SPLIT_GRID_BACKWARD + SPLIT_LATE_Y, plain_knob=1,
            cluster_only=SPLIT_FOLDED + SPLIT_GRID + SPLIT_GRID_FOLDED + SPLIT_GRID_PLAIN + SPLIT_GRID_BACKWARD,
            gradient_only=((LOG_SOFTMAX_BACKWARD, SPLIT_GRID_BACKWARD + SPLIT_LATE_Y),), late_y=SPLIT_LATE_Y,
            cluster_template="softmax_split_row_cluster", grid_template="softmax_split_row_grid",
            ops=(SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD), fused=True,
        ),
        Variant(
            "two_pass", "two_pass.cu", "softmax_two_pass", "row_in_two_passes",
            "rows past the chip: (max, sum) per slice to a workspace, then merge and write, second read from L2",
            "past the peers", reads=2,
            knobs=((4,),),  # K chunks per thread in flight
            ops=(SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD), fused=True,
        ),
        Variant(
            "strided", "strided.cu", "softmax_strided", "columns_in_registers",
            "softmax over a middle axis read in place, coalesced along the axes after it; a column in registers "
            "over 1 to 32 threads of a block and a cluster of 1 to 16 blocks",
            "past the peers", reads=1,
            knobs=tuple((r, c) for r in (8, 16, 32) for c in (1, 2, 4, 8, 16)),  # (R values per thread, C)
            cluster_template="softmax_strided_cluster",
            ops=FORWARD,
            layout=COLUMNS,
        ),
        Variant(
            "strided_smem", "strided_smem.cu", "softmax_strided_smem", "columns_in_shared_memory",
            "softmax over a middle axis read in place; a cluster of 1 to 16 blocks caches a column's 128-byte "
            "lines in shared memory (cp.async), for columns too long for registers; clusters loop over tiles, "
            "copying the next tile's lines while writing this one's",
            "past the peers", reads=1,
            knobs=tuple((c,) for c in (1, 2, 4, 8, 16)),  # (C,)
            cluster_template="softmax_strided_smem_cluster",
            ops=FORWARD,
            layout=COLUMNS,
        ),
    )
}

def op_pairs(op: str) -> tuple:
    """The (input, output) dtype pairs compiled for an op: the gradients take y, dy and dx of one type."""
    return tuple((a, b) for a, b in dtypes.PAIRS if a == b) if op in BACKWARD else dtypes.PAIRS


AUTO = "auto"


def get(name: str) -> Variant:
    """The variant called `name`; ValueError naming the known ones otherwise."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        known = ", ".join([AUTO, *VARIANTS])
        raise ValueError(f"unknown softmax variant {name!r}; known variants: {known}") from None
