"""Launch planning: (variant, shape, dtypes, device facts, kernel attributes) -> grid, block, shared memory.

The planner is pure Python over plain data, so its rules are tested on the CPU
with made-up devices. It never compiles anything itself: where a rule needs a
kernel's attributes (registers decide how many threads a block may have) it asks
the `facts` callable it is given for the variant's instantiation with those knobs.

Every threshold is a row in a small (limit, value) table; the comment on each
row names the measurement behind it (docs/PERFORMANCE.md has the runs).
Measurements marked "clean L2" ran with bench.Flush as it is now (L2 left
clean before each timed call); the others with the write-only flush before it,
which added the write-back of L2's dirty lines to every time.
"""
from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy

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

# warp_rows: threads per block (rows per block = threads / lanes per row), and
# the chunks each lane aims to hold, by the chunks a row spans: a row takes the
# fewest lanes G (a power of two) with G * items >= its chunks, so short rows
# pack several to a warp and every lane has one or more 16-byte loads in flight.
# H100 sweep of 2026-11-22 (scripts/sweep_configs.py, clean L2; docs/perf/
# launch-shapes-sweep-h100.txt): at N = 32 float32 (8 chunks) one chunk per
# lane ran at 96% of copy, two at 85%; at N = 100 (25 chunks) two 97%, one 90%;
# at N = 256 bfloat16 (32 chunks) two 88%, one 89%.
# A block for each WARP_ROWS_THREADS / G rows, not a grid of the blocks
# resident at once looping over the rows: H100, 2026-11-23, auto's launch in
# one timing with the copy (docs/perf/warp-rows-grid-h100.txt): 262144 x 100
# float32 (16, 2) 91.0% of copy on the resident grid, 96.9% a block per 16
# rows; 262144 x 64 (8, 2) 95.4% -> 97.6%.
WARP_ROWS_THREADS = 256
WARP_ROWS_ITEMS = (
    (8, 1),
    (INF, 2),
)

# warp_rows' element-strided kernels (O = -2; Planner.element_strided): float32 rows of N % V != 0 and float64 rows
# of any N (ELEMENT_STRIDED_WHOLE_ROWS below), without options, by (the input's itemsize, op): the layout (G lanes, K chunks a lane) by the row's chunks
# (None: the plain kernel on Slots). H200, 2026-11-29, at 2183e41's kernels (after the __syncwarp that let
# float64 hold more chunks a lane in fewer registers), scripts/probe_strided_layouts.py: every (G, K) that holds
# the row, strided and on Slots, 256 threads, arrays of 512 MiB, interleaved with the copy (253 us) and torch;
# docs/perf/strided-layouts-s52-h200.txt. us, softmax / log_softmax, the layout taken first:
#   float32 N = 5 (2 chunks)    (2, 1) 294 / 307    Slots (2, 1) 547 / 566   torch 550 / 613
#           N = 9 (3)           (2, 2) 257 / 306    (4, 1) 318 / 338
#           N = 13 (4)          (4, 1) 273 / 277    (2, 2) 514 / 469
#           N = 17 (5)          (4, 2) 262 / 291    (8, 1) 339 / 360
#           N = 31 (8)          (8, 1) 263 / 265    Slots (4, 2) 356 / 365
#           N = 33 (9)          (8, 2) 268 / 279    (16, 1) 357 / 375
#           N = 63 (16)         (16, 1) 262 / 263   (8, 2) 304 / 278
#           N = 65 (17)         (16, 2) 272 / 279   (8, 4) 274 / 293
#           N = 127 (32)        (32, 1) 262; (16, 2) 259 (log_softmax; (32, 1) 264)
#           N = 129 (33)        (32, 2) 267 / 273   (16, 4) 266 / 266
#           N = 255 (64)        (32, 2) 259 / 260   Slots (32, 2) 260 / (16, 4) 259
#           N = 257 (65)        (32, 4) 256 / 258   Slots (32, 4) 293 / 297
#           N = 345 (87)        (32, 4) 260 / 260   Slots (32, 4) 263 / 262
#           N = 361 (91)        Slots (32, 4) 258 / 260, strided 260 / 260: float32 stops at 88 chunks, to take
#                               (32, 8) again past 128 (AUTO_FIRST_PLAIN_WIDE: rows of whole chunks timed
#                               there, strided against Slots: 4096 x 516 7.6 / 7.7 against 8.6 / 8.7 us)
#   float64 N = 3 (2)           (1, 2) 284 / 298    (2, 1) 466 / 508         torch 378 / 552
#           N = 5 (3)           (1, 4) 316 / 313    (2, 2) 379 / 416
#           N = 7 (4)           (2, 2) 283 / 308    (4, 1) 419 / 455
#           N = 11 (6)          (2, 4) 292 / 319    (4, 2) 356 / 393
#           N = 13 (7)          (4, 2) 304 / 336    (2, 4) 416 / 352
#           N = 15 (8)          (4, 2) 280 / 304    Slots (2, 4) 361 / 360
#           N = 17 (9)          (4, 4) 349 / 398    (8, 2) 466 / 511
#           N = 27 (14)         (4, 4) 278 / 285    (8, 2) 302 / 332
#           N = 29, 31 (15, 16) (8, 2) 287, 280; (4, 4) 287, 286 (log_softmax; (8, 2) 314, 300)
#           N = 33 (17)         (4, 8) 326 / 390    (8, 4) 362 / 410
#           N = 39 (20)         (4, 8) 300 / 339    (8, 4) 313 / 354
#           N = 41 (21)         (8, 4) 298; (4, 8) 335 (log_softmax; (8, 4) 338, to 22 chunks within 1%)
#           N = 45 (23)         (8, 4) 282 / 316    (4, 8) 321 / 331
#           N = 63 (32)         (8, 4) 259 / 265    (16, 2) 280 / 302
#           N = 65 (33)         (8, 8) 317 / 381    (16, 4) 373 / 422
#           N = 101 (51)        (8, 8) 261 / 284    (16, 4) 265 / 292
#           N = 105 (53)        (16, 4) 260; (8, 8) 280 (log_softmax, to 58 chunks; (16, 4) 286)
#           N = 119 (60)        (16, 4) 255 / 267   (8, 8) 267 / 268
#           N = 127 (64)        (16, 4) 257 / 261   (8, 8) 269 / 272
#           N = 129 (65)        (16, 8) 319 / 384   (32, 4) 374 / 402
#           N = 171 (86)        (16, 8) 263 / 307   (32, 4) 290 / 308
#           N = 181 (91)        (16, 8) 256; (32, 4) 294 (log_softmax; (16, 8) 296)
#           N = 211 (106)       (32, 4) 258 / 266   (16, 8) 258 / 270
#           N = 255 (128)       (32, 4) 258 / 257   Slots (32, 4) 268 / 278
#           N = 257 (129)       (32, 8) 318 / 340   Slots (32, 8) 396 / 433, split_row 508 / 611; torch 319 / 298
#           N = 449 (225)       (32, 8) 258 / 260   Slots (32, 8) 266 / 282
#           N = 511 (256)       (32, 8) 259 / 261   Slots (32, 8) 257 / 260: float64 stops at 256 chunks
# float64 rows past 128 chunks reach warp_rows through AUTO_FIRST_PLAIN_WIDE, and so do float32 rows of 129-256
# chunks, on (32, 8): its measurement is beside that table.
# The itemsizes whose rows of whole chunks (N % V == 0) take the element-strided kernels too, at any phase, so that
# a row's kernel follows N alone (its bits do not depend on its batch): float64. The chunk rule's layouts (aligned:
# on whole chunks, O = -1) against these tables', H200, 2026-11-30 (docs/perf/f64-whole-rows-s52-h200.txt; the
# probe's run 5 in docs/perf/strided-layouts-s52-h200.txt), us, softmax / log_softmax: 4194304 x 16 (8, 1)
# 369 / 412 against (4, 2) 268 / 287 (torch 308 / 431); 2097152 x 48 (16, 2) 522 / 578 against (8, 4) 399 / 438;
# 1048576 x 96 (32, 2) 513 / 554 against (8, 8) 385 / 418 (torch 408 / 403); 1048576 x 128 (32, 2) 534 / 552
# against (16, 4) 514 / 510 (torch 513 / 514); 524288 x 200 and past: within 1% either way (log_softmax 421
# against 425); 4096 x 64 5.4 / 5.5 against 5.9 / 6.0 (a grid of 128 blocks, not 256).
ELEMENT_STRIDED_WHOLE_ROWS = (8,)
_F32_LAYOUTS = ((1, None), (2, (2, 1)), (3, (2, 2)), (4, (4, 1)), (7, (4, 2)), (8, (8, 1)), (15, (8, 2)),
                (16, (16, 1)), (31, (16, 2)))
_F32_PAST = ((64, (32, 2)), (88, (32, 4)), (128, None), (256, (32, 8)), (INF, None))  # 129-256: AUTO_FIRST_PLAIN_WIDE
_F64_LAYOUTS = ((1, None), (2, (1, 2)), (3, (1, 4)), (4, (2, 2)), (6, (2, 4)), (8, (4, 2)))
ELEMENT_STRIDED_LAYOUTS = {
    (4, registry.SOFTMAX): (*_F32_LAYOUTS, (32, (32, 1)), *_F32_PAST),
    (4, registry.LOG_SOFTMAX): (*_F32_LAYOUTS, (32, (16, 2)), *_F32_PAST),
    (8, registry.SOFTMAX): (*_F64_LAYOUTS, (14, (4, 4)), (16, (8, 2)), (20, (4, 8)), (32, (8, 4)), (52, (8, 8)),
                            (64, (16, 4)), (105, (16, 8)), (128, (32, 4)), (256, (32, 8)), (INF, None)),
    (8, registry.LOG_SOFTMAX): (*_F64_LAYOUTS, (16, (4, 4)), (22, (4, 8)), (32, (8, 4)), (58, (8, 8)), (64, (16, 4)),
                                (88, (16, 8)), (128, (32, 4)), (256, (32, 8)), (INF, None)),
}

# split_row: chunks per thread held in registers (K), by the chunks a block
# must hold; more chunks per thread means more loads in flight per thread.
# H100 sweep of 2026-11-22 (clean L2): 4096 x 1024 float32 (256 chunks) K = 4
# 95% of copy, K = 8 94%; 4096 x 2048 (512 chunks) K = 4 98%, K = 8 95%;
# 4096 x 8192 bfloat16 (1024 chunks) K = 8 100%, K = 4 98%; 4096 x 4096 float32
# (1024 chunks) 100% at every K; 4096 x 16384 bfloat16 (2048) K = 8 98%, K = 4 97%.
# A chunk takes four registers whatever its element type: 2-byte values stay
# packed (common.cuh, Held), so the same K serves every type.
SPLIT_ITEMS = (
    # 4096 x 1024 float32 (256 chunks), the plain kernel: K = 2 with 128 threads
    # 98% of copy, K = 4 with 64 threads 97% (H100, 2026-11-23, three runs of
    # scripts/probe_plain_split_row.py and scripts/sweep_configs.py,
    # docs/perf/plain-split-row-h100.txt; Liger's layout there is K = 2 with
    # 128 threads). In the full suite, K = 4 at 98438db -> K = 2: softmax 95%
    # -> 95% (64290ff), the gradient 96% -> 98% and log_softmax 95% -> 94%
    # (3139e15, docs/perf/suite-log-softmax-backward-3139e15-h100.md).
    (256, 2),
    (512, 4),
    (INF, 8),
)

# split_row: cluster sizes C (C > 1 only with clusters, sm_90+). The launch
# for as many rows as SMs fixes a row's threads T = C x blockDim.x, K and S
# (rounded up to whole warps in 16 blocks where clusters may serve fewer
# rows), and for other numbers of rows only C changes, cutting the same T:
# the kernel's reduction tree follows T, so a row's bits do not depend on its
# batch (H100, 2026-11-23, scripts/ab_trees.py against the rules before, which
# picked T by the rows too: 8 x 128256 float32 56% -> 61% of copy, 1 x 50257
# 52% -> 44%, 32 x 128256 bfloat16 56% -> 53%; gradients 8 x 128256 60% -> 65%,
# 128 x 128256 72% -> 79%; many rows within 1%). With at
# least SPLIT_ROWS_PER_SM rows per SM, the smallest C that holds a row wins:
# clusters cost their syncs, and many rows keep every SM busy anyway (H100
# sweep of 2026-11-22, clean L2: 4096 x 32768 float32 at C = 1 99% of copy,
# C = 2 89%; 8192 x 50257 at C = 1 with a shared-memory part 97%, C = 8 74%).
SPLIT_ROWS_PER_SM = 1
# With fewer rows, but at least SPLIT_BLOCK_ROWS_PER_SM an SM, one block per
# row still wins where it holds the row (registers, or registers and shared
# memory): a cluster's blocks wait for each other, and the GPU places fewer
# clusters at once than blocks (cuOccupancyMaxActiveClusters: 30 clusters of
# four 1024-thread blocks, 120 of 132 SMs). Below it, from SPLIT_BLOCK_ROWS
# rows, the rule for fewer rows (the most blocks resident, below) among C = 1
# and the cuts on clusters of at most SPLIT_FEW_ROWS_CLUSTER blocks, or of
# blocks of at least SPLIT_FEW_ROWS_WIDE_BLOCK threads, with no shared-memory
# part (Planner.few_rows_cuts): one block a row leaves SMs idle, and clusters of
# 16 small blocks lose. float32 and 2-byte rows of one dtype in and out only:
# the cuts measured (float64 and clusters with a shared-memory part were not).
# H200, 2026-12-03
# (scripts/probe_few_rows_clusters.py, docs/perf/few-rows-clusters-s66-h200.txt),
# softmax, us, C = 1 (auto before) / C = 8 / C = 16: 64 x 32000 float32 9.9 /
# 9.6 / 11.6; 64 x 50257 bfloat16 12.5 / 10.0 / 12.0 (log_softmax and scale=
# alike); 64 x 128256 bfloat16 19.5 / 16.1 / 15.6; 80 x 50257 bfloat16 12.9 /
# 11.1 / 12.7; 80 x 128256 bfloat16 20.3 / 18.1 / 17.9; 96 x 65536 bfloat16
# 13.6 / 13.2 / 15.1; 100 x 16400 float32 8.9 / 8.7 / 10.9; but 128 rows (0.97
# an SM) lose on clusters: 128 x 50257 float32 18.7 / 23.8 / 22.3, 128 x 128256
# bfloat16 22.5 / 25.2 / 25.3, 128 x 32000 float32 12.7 / 13.2 / 16.3 (C = 2
# 12.4).
# Below SPLIT_BLOCK_ROWS the 16-block clusters are as fast or faster (48 x
# 128256 bfloat16 13.1 against C = 8 13.9; 16 rows 8.4 against 9.2). Through
# auto, before / after (scripts/ab_trees.py, docs/perf/few-rows-landed-s66-h200.txt
# with clusters of at most 8, then docs/perf/few-rows-wide-s66-h200.txt with
# these cuts): 64 x 50257 bfloat16 12.3 / 9.9 us, 72 x 50257 float16 12.7 /
# 10.5, 64 x 32000 float32 9.9 / 9.2, 96 x 50257 bfloat16 13.2 / 13.0; on 16
# blocks of 256 threads 64 x 50257 float32 14.6 / 13.3, 64 x 128256 bfloat16
# 19.4 / 15.4, 80 x 128256 bfloat16 20.4 / 17.6. From 100 rows the fold on one
# block leads: 100 x 50257 float32 17.4 against C = 16's 18.0, 104 x 50257
# bfloat16 13.2 against C = 8's 13.6, 112 x 50257 bfloat16 13.3 against 14.0
# (though rows in registers gained there: 104 x 32000 float32 11.8 / 11.4,
# 100 x 16400 log_softmax 9.2 / 8.4), so the bound is 0.75 an SM (99 rows on
# 132 SMs), set after the last device call: rows of 99-105 take the launches
# of before again. Checked at 92-98 rows (H200, 2026-12-04,
# docs/perf/few-rows-bound-s67-h200.txt), before / after, us: 2-byte rows of
# 50257 on C = 8 gain at 92 rows (13.1 / 11.3), 0.3 at 93, and from 94 tie or
# lose up to 0.7 (98 x 50257 float16 log_softmax 12.0 / 12.7: the clusters
# seem to go in two waves); float32 rows of 32000 and bfloat16 of 128256 still
# gain 0.3-1.0 there (96 x 32000 log_softmax 11.9 / 10.9), so 0.75 stays.
# The gradients' layouts of these rows offer no C = 1, so no
# gradient launch changed (24360 plans on the tests' made-up H100 and small
# GPU). The H100 sweep of 2026-11-22 behind the old bound of 64 rows,
# with the kernels of then (clean L2; scripts/sweep_configs.py), float32 at N =
# 32000: 128 rows C = 1 82% of copy, best cluster 69%; 64 rows 70% against 66%;
# not measured again on the H100.
SPLIT_BLOCK_ROWS = 64
SPLIT_BLOCK_ROWS_PER_SM = 0.75
SPLIT_FEW_ROWS_CLUSTER = 8
SPLIT_FEW_ROWS_WIDE_BLOCK = 256
# Rows no block holds, with at least SPLIT_BLOCK_ROWS rows: the smallest C
# whose blocks fit SPLIT_BLOCKS_PER_SM to an SM where any does (a block that
# fills an SM waits alone on its cluster's barrier). H100, 2026-11-23
# (scripts/sweep_configs.py, the one-tree kernel): 8192 x 128256 float32
# (8, 16) 256 threads 84% of copy, (8, 8) 512 threads (72 registers, one
# block an SM) 68%; 1024 x 128256 82% against 66%.
SPLIT_BLOCKS_PER_SM = 2
# Clusters only for rows of more than SPLIT_CLUSTER_MIN_CHUNKS chunks: below,
# one block reads its row about as fast as a cluster does, without the
# cluster's syncs and its costlier launch. H100 sweep of 2026-11-22, float32:
# 1 x 4096 at C = 1 6.5 us, best cluster 7.7; 8 x 8192 7.3 against 8.2;
# 8 x 16384 (4096 chunks) 8.7 against 8.7; 8 x 32000 11.0 against 9.5.
SPLIT_CLUSTER_MIN_CHUNKS = 4096
# Rows whose launch for many rows is one block with a shared-memory part,
# where clusters may serve fewer rows: a thread of that block folds
# SPLIT_FOLD logical threads of the row, and the launches on clusters give
# each logical thread a thread of its own with at most SPLIT_FOLD_ITEMS
# chunks, in registers (rows past that, and float64 rows, do not fold: the
# cluster kernels compile their `again` path for K <= 4 in float alone). The
# row's tree follows its logical threads (kernels/split_row.cu), so few rows
# spread over four times the threads of one block without changing a row's
# bits. H100, 2026-11-23, scripts/ab_trees.py (docs/perf/split-row-folds-h100.txt),
# auto without folds -> with: 8 x 128256 bfloat16 40% -> 56% of copy, 1 x
# 50257 float32 44% -> 55%, 1 x 65536 float32 43% -> 54%; many rows 8192 x
# 50257 float32 97% -> 97%, 4096 x 65536 98% -> 97%, between 64 and 131 rows
# 3-4 points less (128 x 128256 bfloat16 71% -> 68%, 128 x 65536 float32 79%
# -> 75%). Folding the layouts in registers alone (R = 2, 1024
# threads) bought few rows 0-6 points (1 x 32000 float32 54% -> 55%, 8 x
# 50257 bfloat16 47% -> 53%) for 3-5 points on many (8192 x 50257 bfloat16
# 98% -> 93-95%, 128 x 32000 float32 81% -> 78%); R = 8 spills (sm_90, 64
# registers for 1024 threads).
SPLIT_FOLD = 4
SPLIT_FOLD_ITEMS = 4
# A plain call's one-block fold of SPLIT_FOLD on a block its SM holds once (1024 threads, 2-byte rows past 8192
# chunks): the fold of 2 x SPLIT_FOLD logical threads a thread on half the threads, the same logical threads, so
# the same layout and bits (kernels/split_row.cu, Folds), two blocks an SM, so that one block's loads overlap the
# other's exponentials. By element size, the rows' chunks (bounds exclusive), and at least
# SPLIT_HALVED_FOLD_ROWS rows an SM: fewer leave an SM a block or none, which half the threads serve slower.
# Calls with options keep the fold of SPLIT_FOLD (the halved fold's twin that reads them spilled). H200,
# 2026-12-03, docs/perf/prepared-s64/fold8.py with the transposed fold reduction (docs/perf/fold8-s65-h200.txt),
# us, the fold on 1024 threads -> on 512, bfloat16 softmax unless named: 4096 x 65537 336.1 -> 286.6, float16
# log_softmax 314.0 -> 282.8; 4096 x 72000 330.6 -> 299.6; 76000 360.7 -> 317.2. Past the bound: 80000
# 356.0 -> 353.2 (level), 86016 377.1 -> 441.3. By rows at 65537: 264 28.4 -> 26.6, 198 26.4 -> 24.7; below
# them 132 16.5 -> 17.3, 66 14.0 -> 15.3. float32 (before that reduction, fold8-s64-h200.txt), not taken: 4096 x
# 32769 279.5 -> 277.1, 4096 x 40000 324.2 -> 330.1.
SPLIT_HALVED_FOLD = (
    (2, (8192, 9600)),  # 65529-76792 elements off 16-byte boundaries: 76000 the longest row measured to gain
)
SPLIT_HALVED_FOLD_ROWS = 1.5  # 198 rows on 132 SMs gained, 132 lost
# A call with where= whose row one block holds in registers at K = 8: K = 4
# on twice the threads, by the row's chunks (Planner.with_mask_layout;
# float32 and 2-byte rows, not float64 nor half in, float32 out: not
# measured). Each chunk's mask word is read with it, and at K = 8 ptxas does
# not keep a thread's 8 chunks and 8 words in flight at once
# (kernels/split_row.cu, prefetch_held_masks). H100, 2026-11-27
# (scripts/probe_fused.py --shapes, two interleaved runs of each side, K = 8
# -> 4; docs/perf/where-masked-items-h100.txt, runs 3 and 4), us:
SPLIT_MASKED_ITEMS = (
    # 1024 chunks, 128 -> 256 threads: 4096 x 8192 float16 where=(M, N) 59.6
    # -> 53.9, where=(N,) 48.0 -> 45.0; 8192 x 8192 bfloat16 115.2 -> 108.5;
    # 4096 x 4096 float32 48.9 -> 48.3 (run 3), 48.8 -> 48.7 (run 4).
    # 2048 chunks, 256 -> 512 threads: 4096 x 16384 bfloat16 114.7 -> 109.3,
    # where=(N,) 92.4 -> 90.0; 1024 x 16384 bfloat16 32.8 -> 27.7; 4096 x
    # 8192 float32 99.0 -> 98.8.
    (2048, 4),
    # 4096 chunks, 512 -> 1024 threads: 2048 x 32768 bfloat16 where=(M, N)
    # 117.3 -> 113.1 but where=(N,) 93.5 -> 95.6, and 2048 x 16384 float32
    # where=(M, N) 99.8 -> 100.5: K = 8 stays.
    (INF, None),
)
# Rows whose pick is a cluster: split_row on the grid instead (C = 0), the
# row's T threads in blocks of at least SPLIT_GRID_THREADS anywhere on the
# GPU (the fewest whole warps that divide T and give a warp for each group of
# 32 warps of the row's tree: 512 threads for T = 8704), a cooperative launch
# with the warp values through global memory: the same tree, so the same
# bits. float32 rows only: the rows measured. The H100 holds 7 clusters of 16 one-block-an-SM blocks at once
# (112 of 132 SMs), and a cluster's blocks wait for each other on SMs that
# could stream other rows. By the chunks a row spans, the fewest rows that take
# it, and any number past them: H100, 2026-11-24 (scripts/ab_trees.py,
# docs/perf/grid-one-pass-h100.txt), float32, the clusters past 256 rows (the
# most measured before) -> the grid, us: 300 x 128256 117.8 -> 108.5 (85% ->
# 92% of copy), 1024 x 128256 388.5 -> 365.0, 2048 x 128256 771.5 -> 728.6
# (90% -> 95%); 512 x 262144 378.4 -> 371.9, 1024 x 262144 748.3 -> 738.3.
# H100, 2026-11-23 (scripts/probe_grid_rows.py, docs/perf/split-row-grid-h100.txt),
# float32, % of copy, clusters -> grid:
SPLIT_GRID_FROM_ROWS = (
    # Up to 65535 chunks the grid takes the float32 rows no block holds (past
    # about 90000; shorter rows keep their values, so never: `one_pass`). Both
    # in one pass (H100, 2026-11-24, scripts/probe_grid_rows.py,
    # docs/perf/grid-one-pass-h100.txt, runs 7 and 8), clusters -> grid, us:
    # 100003: 16 rows 11.4 -> 11.5, 24 rows 13.4 -> 13.2, 32 rows 18.0 -> 15.2
    # (75% -> 88% of copy), 128 rows 46.0 -> 39.3; 110000: 24 rows 13.8 -> 13.8,
    # 32 rows 18.7 -> 15.8; 128256: 16 rows 12.3 -> 12.3, 24 rows 15.0 -> 14.7,
    # 32 rows 19.7 -> 16.3, 128 rows 54.1 -> 45.4. Fewer rows are level (8 and
    # 16) or lose (12 rows of 128256: 10.6 -> 11.5).
    (65535, 24),
    # 262144 float32 (65536 chunks): 8 rows 62% -> 61%, 16 rows 59% -> 69%,
    # 32 rows 65% -> 74%, 128 rows 80% -> 85%. Again with the grid's
    # release/acquire barrier (db66e5e; docs/perf/split-row-grid-release-
    # acquire-h100.txt): from 8 rows, 8 gained 0.5-0.6 us (59% -> 61%) but
    # 10, 12 and 14 lost 0.4-0.8 us, so 16 stays; the shorter rows above
    # still lose on the grid.
    (INF, 16),
)
SPLIT_GRID_THREADS = 256
# Rows longer than any cluster holds in registers (the layouts above find
# none; two_pass's before): split_row on the grid too, each of the row's T
# threads holding K chunks in registers and the rest in shared memory, T from
# SPLIT_GRID_ROW_THREADS (whole groups of 32 warps, at most 64 groups:
# RowTree on the grid): the T whose blocks hold the most rows at once, then
# the larger (the device's counts, not the batch's: a row's bits do not depend
# on it). Forward ops of float-accumulating types. One read of a row where
# two_pass reads it twice. H100, 2026-11-23 (scripts/probe_long_rows.py,
# docs/perf/split-row-long-rows-h100.txt), % of copy, two_pass -> the pick
# (T, rows at once) [the others]: float32 1048576, 64 rows 64% -> 89% (16384,
# 8) [8192 (8) 82%, 32768 (4) 77%], 16 rows 61% -> 83%, one row 33% -> 44%;
# 1100001, 32 rows 61% -> 88% (16384, 8) [17408 threads, one 544-thread
# block an SM (4): 66%]; 2097152, 64 rows 65% -> 83% (32768, 4) [16384 (4)
# 74%], 8 rows 61% -> 73% [75%]; bfloat16 (80 registers at K = 8) 2097152,
# 64 rows 62% -> 77% (8192, 8) [16384 (4) 63%], 4194304, 8 rows 57% -> 69%
# (16384, 4). T = 65536 (two 512-thread blocks an SM, kernels/split_row.cu's
# split_row_grid_threads) against 32768 (256-thread blocks): H100, 2026-11-24,
# scripts/ab_trees.py (docs/perf/grid-65536-threads-h100.txt), float32
# 4194304, 4 rows 68% -> 70% (log_softmax 68% -> 72%), 8 rows 69% -> 71%;
# 8388608, 2 rows 63% -> 65%; 8388612, 2 rows two_pass 63% -> 67%.
SPLIT_GRID_ROW_THREADS = (8192, 16384, 32768, 65536)
# The groups of 32 warps each warp of a block reduces on the grid (G, the
# kernel's knob after K; K = 8 alone compiles G = 4): G = 1 where it holds as
# many rows at once, for G > 1 loops (a loop in every grid launch took float32
# K = 8 from 64 registers to 80, H100). G = 4 lets blocks of 8 warps serve
# T = 32768 with a shared-memory part that 1024-thread blocks cannot hold.
# H100, 2026-11-23 (scripts/probe_long_rows.py at d6049a4,
# docs/perf/split-row-four-groups-h100.txt), % of copy, before -> G = 4 (T, rows
# at once): float32 4194304, 4 rows two_pass 59% -> 68% (32768, 2) [16384 (2)
# 68%], 16 rows 58% -> 70%; 8388608, 2 rows 60% -> 63% (32768, 1). bfloat16 K = 8
# holds more rows at once with G = 4 on the H100's build (its G = 1 kernel takes
# more registers): 2097152, 64 rows 77% (8192, 8) -> 83% (16384, 8), 16 rows 69%
# -> 76%; 4194304, 8 rows 69% (16384, 4) -> 73% (32768, 4). float32 rows that
# G = 1 holds keep it: 1048576, 64 rows, T = 32768 with G = 4 holds 3 rows at
# once against G = 1's 4 (59% against 77%).
SPLIT_GRID_GROUPS = (1, 4)
# The gradients of rows no cluster holds, on the grid: SPLIT_GRID_BACKWARD_ITEMS chunks a thread in registers
# only (no shared-memory part), on the least T above that holds the row, where that T is one of
# SPLIT_GRID_BACKWARD_ROW_THREADS (and the GPU holds a row's blocks at once); else two_pass. log_softmax's
# gradient alone, which holds dy alone while it sums (kernels/split_row.cu); only its G = 1 kernel is built
# (variants.SPLIT_GRID_BACKWARD). T = 16384 takes rows of 81921-131072 chunks (sm_90: past a gradient cluster, whose
# K = 8 kernels take 96 registers, so blocks of 640 threads; float32 327681-524288 elements, half precision twice
# that), T = 32768 rows of 131073-262144 chunks (float32 to 1048576 elements, half precision to 2097152). H200,
# 2026-12-02, ccb40a0 (cupysoftmax time --variant auto,two_pass, docs/perf/grid-gradient-s56-h200.txt), float32,
# us, two_pass -> grid: log_softmax_backward on (8, 1, 0) 64 x 1048576 324.9 -> 231.7 (58% -> 81% of copy), 16 x
# 1048576 88.0 -> 61.8, 40 x 600000 125.7 -> 95.5; on (8, 4, 0), T = 65536, 8 x 2097152, 66.9 -> 69.6 (lost).
# softmax_backward (y and dy held: 96 registers at K = 8, so (4, 4, 0) and (8, 4, 0)) tied or lost: 64 x 1048576
# 326.7 -> 330.0, 16 x 1048576 85.5 -> 84.0, 8 x 2097152 87.4 -> 86.1, 40 x 600000 118.5 -> 153.2.
# T = 16384, H200, 2026-12-02, 03e7a2d (scripts/probe_grid_gradient_trees.py, docs/perf/grid-gradient-trees-s57-h200.txt),
# us, two_pass -> T = 16384 (8 rows at once): float32 N = 400000, by rows: 1 18.9 -> 10.3, 4 19.2 -> 11.9, 8 19.1
# -> 15.1, 9 19.6 -> 21.1 (lost: two rounds), 12 22.3 -> 22.8, 16 26.2 -> 26.1, 24 48.4 -> 37.5, 32 58.9 -> 49.1,
# 64 131.5 -> 93.8; 64 x 520000 172.4 -> 115.8; 16 x 340000 24.7 -> 23.3; bfloat16 32 x 800000 60.0 -> 49.7. T =
# 32768 held 1-4 of those rows faster still (1 x 400000 9.2), but T follows the row alone, never the batch (a
# row's bits would change with it). T = 32768 at 1-8 rows of 1048576: 1 18.4 -> 12.4, 4 20.7 -> 17.6, 8 43.3 ->
# 31.9, but 5 23.5 -> 25.8 (lost: two rounds).
SPLIT_GRID_BACKWARD_ITEMS = 8
SPLIT_GRID_BACKWARD_ROW_THREADS = (16384, 32768)
# log_softmax's gradient of rows a cluster holds at SPLIT_GRID_BACKWARD_ITEMS chunks a thread (K = 8: y and dy held,
# 94-98 registers, one 512-thread block an SM): from this many rows, the same layout on the grid (its T threads in
# blocks anywhere, as the forward's SPLIT_GRID_FROM_ROWS cuts a cluster's row), where a thread holds dy alone (64
# registers, four 256-thread blocks an SM): the same tree and sums, so the same bits. Fewer rows keep the clusters
# (the grid's y, read after the sum, was not measured faster there; on clusters it lost 2 us at 1-6 rows:
# docs/perf/late-y-clusters-s58-h200.txt). H200, 2026-12-02, aa097f1 (scripts/probe_grid_gradient_trees.py,
# docs/perf/grid-gradient-clusters-s58-h200.txt), float32 N = 262144 (T = 8192 on (8, 1, 16)), us, clusters ->
# grid: 8 rows 13.6 -> 12.9, 16 21.9 -> 17.2, 24 30.9 -> 26.6, 32 39.2 -> 31.2 (torch.compile 37.5), 64 71.1 ->
# 59.8, 128 136.8 -> 114.2; bfloat16 32 x 524288 40.8 -> 31.6. Through auto at 25d7a83 (scripts/ab_trees.py, same
# file), us: 8 x 262144 13.6 -> 12.8, 7 rows 10.3 -> 10.1 (clusters both), 32 x 200000 (T = 6656) 31.5 -> 26.8, 40 x
# 200003 38.0 -> 30.9, bfloat16 9 x 524288 14.9 -> 13.6.
SPLIT_GRID_BACKWARD_FROM_ROWS = 8
# Rows cut over the grid past the rows it holds at once: a thread folds
# SPLIT_GRID_FOLD logical threads (the knob G = -SPLIT_GRID_FOLD), its chunks
# past K in shared memory, where that holds more rows at once. Layouts with no
# shared-memory part, the ones measured. The grid writes every output from
# the row's (max, sum), so a row's bits do not depend on the fold; and the
# launches on clusters of rows no block holds write so too (R = -1), as they
# share those rows with the grid (kernels/split_row.cu). H100, 2026-11-24
# (scripts/ab_trees.py, docs/perf/grid-folds-h100.txt), 128256 float32
# log_softmax, 33 -> 66 rows at once, us: 34 rows 18.6 -> 18.8, 48 22.9 ->
# 21.8, 64 25.8 both, 100 40.2 -> 38.6, 128 48.9 -> 45.8 (86% -> 92% of copy),
# 200 78.3 -> 72.4, 256 95.0 -> 91.9. softmax kept exponentials on the grid
# and its folds lost (four tries, same file) until it wrote as log_softmax
# does (docs/perf/grid-one-pass-h100.txt, auto before -> after): 128 x 128256
# float32 48.8 -> 45.6 (87% -> 93%), 256 rows 96.0 -> 93.1, 64 rows 25.8 ->
# 25.9; the clusters writing so too (R = -1, run 6), 1 row 7.8 -> 7.9, 8 rows
# 9.8 -> 9.7; 262144 (a shared-memory part, unfolded) 1 row 10.2 -> 10.9, 8
# rows 14.0 -> 13.6, and on the grid (run 2) 16 rows 18.5 -> 17.6, 128 rows
# 95.5 -> 94.6. The fold
# starts right past the unfolded cut's rows: 34 rows' 0.2 us is within the
# spread, and a second threshold would be a rule for one measurement.
# The fold is the one the registry compiles (variants.SPLIT_GRID_FOLDED: G = -2).
SPLIT_GRID_FOLD = -registry.SPLIT_GRID_FOLDED[0][1]
# Rows one block holds in registers only on more threads than let two such
# blocks share an SM (K = 8 on 513-1024 threads, as the layout rounds them
# up to whole warps in 16 blocks where clusters serve), of an element size and
# between the chunk counts (exclusive) below: half the threads, each keeping
# the rest of its chunks in shared memory, two blocks an SM, so that one
# block's loads overlap the other's reductions and stores. The layout is the
# row's for every batch (its launches on clusters for few rows are the
# fold's, SPLIT_FOLD). Forward ops. H200, 2026-11-28 (scripts/ab_trees.py,
# two rounds, auto before -> after, % of copy; docs/perf/two-blocks-h200.txt):
# - 2-byte rows: 8192 x 50257 bfloat16 79% -> 88%, float16 77% -> 89%,
#   log_softmax bfloat16 82% -> 92%, where=(M, N) 694 -> 518 us; 256 x 50257
#   float16 79% -> 87%; few rows on clusters 51-52% -> 60-61% (1 and 8 x
#   50257 bfloat16); 64 x 50257 float16 84% -> 74% (64 blocks of half the
#   threads). 4096 x 65536 bfloat16 (8192 chunks: the upper bound) 92% ->
#   93%, but scale= 282 -> 307 us and where=(N,) 313 -> 362 us. Rows of
#   4097-4608 chunks (544-576 threads, rounded up to 1024): 8192 x 33000
#   bfloat16 64% -> 84%, 8192 x 36864 70% -> 91%, log_softmax 73% -> 95%.
# - float32, not taken: 4096 x 20000 92% -> 94%, but 4096 x 32768 97% ->
#   95%, 128 x 32000 84% -> 79%, 64 x 32000 74% -> 66%.
SPLIT_TWO_BLOCKS = (
    (2, (4096, 8192)),
)
# float32 rows of more than SPLIT_SHARED_FROM_CHUNKS chunks that clusters hold
# in registers: half the threads a row (up to whole warps in 16 blocks), each
# keeping the rest of its chunks in shared memory (K = 8, S = 8: 4096 threads
# for 262144 float32, not 8192), so the grid holds twice the rows at once (33
# of 262144, not 16). From 262144 float32 on: the rows measured. Forward ops;
# the layout is the row's, for every batch, so fewer rows lose what many
# gain. H100, 2026-11-23 (scripts/probe_grid_at_once.py,
# docs/perf/grid-at-once-h100.txt), auto, % of copy, before -> after, 262144
# float32: 1 row 45% -> 41%, 4 60% -> 55%, 8 60% -> 57%, 16 70% -> 65%, 32
# 74% -> 76%, 64 80% -> 88%, 128 85% -> 90%, 256 87% -> 93%, 300 84% -> 90%;
# 400000 float32: 8 rows 47% -> 57%, 64 80% -> 79%. 128256 float32 (32064
# chunks) keeps its layout: T = 2048 with S = 8 on the grid gave 128 rows
# 82% -> 86% but 32 rows 70% -> 64%.
SPLIT_SHARED_FROM_CHUNKS = 65535
# Fewer rows still, or rows one block cannot hold: the C with the most blocks
# resident at once wins, then the smaller (clean L2: 128 x 262144 float32
# C = 16 at two blocks per SM 76%, C = 8 59%; 32 x 128256: C = 16 55%, C = 4 32%).
# The gradients, on rows that take clusters (a thread holds a chunk of y and
# one of dy per item), with at least SPLIT_BLOCK_ROWS rows: BACKWARD_ITEMS
# chunks a thread, and among those launches the ones with
# BACKWARD_BLOCKS_PER_SM blocks resident per SM where any has, else those
# with BACKWARD_MIN_BLOCKS_PER_SM (then the rules above); none: the rules
# above alone. H100 sweep of 2026-11-22 (scripts/sweep_backward.py,
# docs/perf/sweep-backward-h100.txt), K = 8 and the smallest C before:
# 8192 x 50257 float32 (8, 4) 74% of copy -> (4, 8) 92%; bfloat16 (8, 4) 51% ->
# (4, 8) 67%; 4096 x 65536 bfloat16 58% -> (4, 8) 89%; float32 89% -> (4, 16)
# 98%; 4096 x 32768 float32 94% -> (4, 8) 99%; 128 x 128256 float32 (8, 16) 64% -> (4, 16) 73%.
# The suite at 8eb226c (K = 4 whatever the occupancy, any rows) lost where a
# K = 4 block needs 1024 threads (one an SM): 128 x 262144 float32 64% -> 58%;
# and with 8 rows or fewer: 8 x 128256 59% -> 52%.
BACKWARD_ITEMS = 4
# The gradients' rows one block holds (no clusters: SPLIT_CLUSTER_MIN_CHUNKS): K by the row's chunks, in place
# of SPLIT_ITEMS (its first two steps, measured on the gradient too, kept), K = 4 up to blocks of 768 threads.
# H200, 2026-12-02 (scripts/sweep_backward.py at 01c1624, docs/perf/sweep-backward-one-block-s56-h200.txt), us,
# softmax_backward / log_softmax_backward, K = 8 -> K = 4 (its threads): float32 4096 x 4096 (1024 chunks)
# 47.2 / 47.4 -> 46.7 / 46.5 (256), 4096 x 8192 94.4 / 94.4 -> 93.1 / 93.2 (512), 4096 x 12288 141.2 / 141.2 ->
# 140.0 / 139.8 (768); bfloat16 4096 x 8192 48.1 / 48.6 -> 46.9 / 47.1; float16 4096 x 16384 95.8 / 97.1 ->
# 93.3 / 93.6. Past 3072 chunks K = 8: float32 4096 x 16384 (4096 chunks) 186.9 both -> 186.3 / 186.9 on 1024
# threads, a tie.
BACKWARD_ONE_BLOCK_ITEMS = ((256, 2), (3072, 4), (INF, 8))
BACKWARD_BLOCKS_PER_SM = 3
BACKWARD_MIN_BLOCKS_PER_SM = 2
# log_softmax's gradient on K = 4 clusters of up to 8 blocks, rows of y not all whole chunks on 16-byte boundaries,
# in these element sizes: the late-y twin (registry.SPLIT_LATE_Y) on the same layout and block.
# H200, auto's launch on each side (scripts/ab_trees.py, docs/perf/late-y-odd-rows-s60-h200.txt), us, bfloat16:
# 8192 x 50257 688 -> 628 (84% -> 93% of copy), float16 730 -> 634 (on (4, 8) of 224 threads), 2048 x 50257 173
# -> 162, 4096 x 65537 458 -> 406, 4096 x 40001 263 -> 250, 512 x 50257 47.0 -> 45.0, 128 x 50257 16.8 -> 16.3;
# 96 rows tied (14.5), and fewer lost 0.1-0.4 us (64 x 50257 10.2 -> 10.3, float16 10.0 -> 10.3; 8 x 50257 6.9 ->
# 7.3). A floor of 128 rows (R = 1 below it), timed against this in session 61, moved those rows 0.1-0.3 us both
# ways (docs/perf/late-y-floor-s61-h200.txt), so the twin serves from one row. On rows of whole chunks
# it lost: 8192 x 50256 607 -> 616, 4096 x 65536 389 -> 416, 4096 x 40000 237 -> 250, 4096 x 65528 380 -> 410.
# float32 lost at 8192 x 50257 (1190 -> 1236), and so did clusters of 16 (128 x 128256 bfloat16 26.5 -> 28.2) and
# K = 8 (docs/perf/late-y-prefetch-s59-h200.txt).
LATE_Y_ITEMSIZES = (2,)
# The gradients keep the threads T of the layout that holds the row (whole
# warps in its own C's blocks); the forward rounds T up to whole warps in a
# 16-block cluster's blocks so that every C cuts it. A thread slot holding
# nothing still takes a gradient kernel's registers, which decide the blocks
# an SM holds. H100, 2026-11-23 (scripts/sweep_backward.py at 105f11c, 48
# registers at K = 4: common.cuh's WidenPass; docs/perf/sweep-backward-105f11c-
# h100.txt), 8192 x 50257 bfloat16, 1571 threads at K = 4: T = 1664 (its own
# 4 blocks of 416 threads) 94% of copy; T = 1792 in 8 blocks of 224 85%, in 4
# of 448 78% (auto at 105f11c, which rounded T by up to an eighth and counted
# three such blocks an SM: SUB_PARTITIONS); T = 2048 in 16 blocks of 128 74%.
# 8 rows of it take 7.3-7.4 us at C = 4, 8 or 16 alike (copy 6.9 us).
# float32 rows of 50257 (3328 threads in 8 blocks of 416) 92% of copy, as
# 3584 in 16 blocks of 224 (docs/perf/sweep-backward-h100.txt). The suite at
# 3139e15: 94% and 99% of copy (58% and 91% at 98438db;
# docs/perf/suite-log-softmax-backward-3139e15-h100.md).
# softmax_backward's 2-byte kernels of up to C = 8 blocks (the one-block kernel too) read part chunks by words
# since session 63 (kernels/split_row.cu): K = 4 at 52 registers on the H200 (53 from NVRTC on the CPU machine),
# and auto moved 8192 x 50257 bfloat16 to 8 blocks of 224 threads there (87% -> 95% of copy; PERFORMANCE.md,
# "sixty-third").

# auto: by the 16-byte chunks a row spans, the variant to try first; then the
# rest of AUTO_ORDER. warp_rows packs short rows several to a warp; split_row
# holds longer rows in a block (or a cluster, for few rows); two_pass (two
# reads, the second partly from L2) serves rows too long to keep on chip.
# H100 sweep of 2026-11-22 (clean L2), M = 4096: at N = 1024 float32 (256
# chunks) split_row with 64 threads ran at 95% of copy, warp_rows at 89%; at
# N = 512 (128 chunks) warp_rows 96%, split_row 93%; at N = 384 warp_rows 92%,
# split_row 88%; N = 1024 bfloat16 (128 chunks) warp_rows 94%, split_row 90%. (That warp_rows was
# the kernel of any phase, before its twin on whole chunks: plain float32 rows to 256 chunks now take warp_rows,
# AUTO_FIRST_PLAIN_WIDE.)
AUTO_FIRST = (
    (128, "warp_rows"),
    (INF, "split_row"),
)
# float32 and float64 softmax and log_softmax without options, one dtype in and out: warp_rows to 256 chunks
# (a warp's (32, 8)). float64, element-strided (ELEMENT_STRIDED_LAYOUTS), H200, 2026-11-29
# (scripts/probe_strided_layouts.py, docs/perf/strided-layouts-s52-h200.txt), arrays of 512 MiB, us, softmax /
# log_softmax against split_row's (2, 0, 1): N = 257 318 / 340 against 508 / 611; N = 383 256 / 257 against
# 349 / 425; N = 258 316 / 338 against 499 / 604; N = 512 259 / 258 against 340 / 417.
# By rows (docs/perf/few-f64-rows-s52-h200.txt, N = 511): 4096 rows 11.6 / 11.9 against 15.7 / 18.6, 1024 rows
# 7.4 / 7.7 against 7.8 / 8.7, but 512 rows 6.7 / 6.8 against 6.3 / 6.5 and 128 rows 6.3 / 6.5 against 5.5 / 6.0
# (N = 300 and 257 alike): the rule does not look at M, so that a row has the same bits in any batch. float32 rows
# there ran as fast on split_row past 151 chunks (N = 701: 257 against 260); the gradients and the options were
# not measured.
# float32 alike, H200, 2026-12-01 (scripts/probe_strided_layouts.py, docs/perf/f32-past-128-chunks-s54-h200.txt),
# us, softmax / log_softmax, (32, 8) on whole chunks (O = -1) against split_row's (2, 0, 1): 4096 x 516 7.6 / 7.6
# against 8.2 / 8.3 (element-strided, O = -2, 7.6 / 7.7), 4096 x 768 8.8 / 8.8 against 9.5 / 9.6, 4096 x 1024
# 10.6 / 10.6 against 11.2 / 11.3 (torch 12.8 / 11.4), 65536 x 516 65.9 / 66.6 against 70.8 / 73.5; behind by 1%
# on many rows: 65536 x 768 96.4 / 96.3 against 95.6 / 95.3, 65536 x 1024 127.8 / 127.8 against 126.8 / 126.7.
# Rows of whole chunks out of phase take Slots (32, 8, 0), which sums as on whole chunks: 4096 x 516 8.6 / 8.7,
# 65536 x 516 68.8 / 71.6, 65536 x 1024 129.5 / 129.5. Other rows take (32, 8) element-strided (O = -2): 4096 x
# 1023 11.2 / 11.3 against Slots' 11.6 / 11.7 (torch 14.0 / 11.7; split_row not timed there,
# docs/perf/f32-past-128-chunks-landed-s54-h200.txt). Session 52's "as fast on split_row past 151 chunks" above
# was on arrays of 512 MiB (many rows), where this table trails split_row by 1%.
# scale= alone takes it too on float32 rows of whole chunks whose rows start on 16-byte boundaries (warp_rows'
# (32, 8, 2); (32, 8, 1) where y's rows do not), which split_row had served. H200, 2026-12-02
# (scripts/probe_where_launches.py --scale 0.5, docs/perf/options-s57-h200.txt), us, plain softmax / scale= on
# (32, 8, 2) / on split_row's (2, 1, 1): 4096 x 1024 10.5 / 10.7 / 11.7, 4096 x 768 8.9 / 9.1 / 10.2, 65536 x
# 1024 127.1 / 127.3 / 126.7; (32, 8, 1) 12.1, 10.5, 129.7. where= keeps split_row: (32, 8, 1) 13.6, 11.9,
# 144.0 against 13.0, 11.2, 141.7. So a call whose y's rows are off 16-byte boundaries loses 0.3-3.0 us on
# (32, 8, 1), the price of y's phase never picking the layout. log_softmax through the API at 286bb6b
# (scripts/probe_scale_routes.py, same file), plain / scale= auto / scale= on split_row: 4096 x 1024 10.5 / 11.0
# / 11.5, 4096 x 516 7.6 / 8.2 / 8.9, 65536 x 1024 127.4 / 128.2 / 126.6. float64 with scale= not measured: it
# keeps split_row.
AUTO_FIRST_PLAIN_WIDE = (
    (256, "warp_rows"),
    (INF, "split_row"),
)
AUTO_ORDER = ("split_row", "two_pass", "online")  # online: rows past CHUNKED_MAX_N
# auto over a middle axis: strided while it holds a column in registers in at
# most COLUMN_REGISTER_BLOCKS blocks, strided_smem past that (where the rows
# keep one 16-byte phase), strided again where strided_smem cannot serve.
# H100, 2026-11-22 (scripts/sweep_strided.py, docs/perf/sweep-strided-*):
# (32, 19, 512, 512) float32 axis 1, a column in one block of registers: 96%
# of copy (strided_smem 40%); axis 0 of (8192, 8192) float32, 16 blocks of
# registers: 62% in the sweep (61% in the suite at 9ce7c9c), cached in shared
# memory: 76% in the sweep (74% in the suite at bbc741d). Where neither serves (a column past a
# cluster, an inner axis without unit stride) the axis goes through a
# transposed copy to the row variants.
COLUMN_VARIANTS = ("strided", "strided_smem")
COLUMN_REGISTER_BLOCKS = 1

# strided_smem: a block caches one 128-byte line of each of its slice's rows
# (L = ceil(N / C) lines), as 128 / itemsize columns by TY row-threads.
# H100, 2026-11-22 (scripts/sweep_strided.py --variant strided_smem,
# docs/perf/sweep-strided-smem-h100.txt; % of copy):
# - C: the fewest blocks whose slices fit STRIDED_SMEM_SLICE bytes (three
#   blocks an SM), else the most blocks (the smallest slices) where their
#   launch fits a block's shared memory.
#   Axis 0 of (8192, 8192) float32: C = 16 (64 KB) 76%, C = 8 (128 KB) 60%;
#   of (4096, 4096): C = 8 72%, C = 16 71%, C = 4 56%; of (2048, 16384): C = 4
#   77%, C = 8 77%, C = 2 62% (all at TY = 8).
# - TY: STRIDED_SMEM_ROW_THREADS. TY = 8 led at each shape's best C: float32 (8192,
#   8192) 76% against 65% at 16 and 39% at 32 (more threads, more registers:
#   fewer blocks an SM); bfloat16 (8192, 8192) 50% against 42% at 4, 34% at 16.
#   Fewer where the slice has fewer rows. (At a C the rule does not take, 16
#   row-threads led by 1-2 points: float32 (8192, 8192) at C = 8 62% to 60%.)
STRIDED_SMEM_LINE = 128
STRIDED_SMEM_SLICE = 64 * 1024
STRIDED_SMEM_ROW_THREADS = 8
# Launches on clusters that loop over their items (strided_smem's tiles,
# split_row's rows), by (variant, op): P x the clusters the GPU holds at once
# (the driver's count, driver.active_clusters: 21 clusters of 16 for axis 0 of
# (8192, 8192) float32 on the H100, where a per-SM count gives 24), each
# looping over items; P: the largest up to the table's that gives every
# cluster CLUSTER_MIN_ITEMS items or more; none: a cluster an item.
CLUSTER_ROUNDS = {
    # strided_smem: a block copies its next item's lines while it writes this
    # one's (kernels/strided_smem.cu). H100, 2026-11-24
    # (scripts/probe_strided_prefetch.py, docs/perf/strided-prefetch-h100.txt;
    # two runs), axis 0, % of copy, a cluster an item -> P = 1, 2, 3, 4 (the
    # pick starred): (8192, 8192) float32 (257 items, 21 held) 75% -> 78, 78,
    # 79.2-79.3, 79.3-79.8*; log_softmax 75% -> 78.5, 78.4, 78.5-79.3,
    # 79.5-79.6*; (4096, 4096) (129, 45) 72% -> 78*, 76; (2048, 16384) (513, 92)
    # 77% -> 81, 83*, 83, 81; (8192, 8192) bfloat16 (129, 14) 50% -> 54.0-54.5,
    # 54.4-54.6, 54.2-54.6, 54.1-54.4*. Raised to 6 once the cluster barrier
    # released shared memory only (common.cuh's cluster_sync): H200,
    # 2026-11-29 (scripts/time_calls.py, docs/perf/cluster-rounds-h200.txt, two
    # runs), P = 4 -> 6 where CLUSTER_MIN_ITEMS lets 6 in: (8192, 8192) float32
    # (257 items, 21 held) 79.7-80.0% -> 80.9-81.1%, log_softmax 80.4-80.7% ->
    # 81.8-81.9%; the other cases' launches do not change (their items cap P).
    **dict.fromkeys((("strided_smem", op) for op in registry.FORWARD), 6),
    # split_row, the gradients (rows one block cannot hold take clusters whatever
    # their number), against a cluster launched a row (the grid of
    # _cluster_launch). H200, 2026-11-28 (scripts/probe_persistent_rows.py,
    # docs/perf/persistent-rows-h200.txt), softmax_backward, % of copy, a
    # cluster a row -> P = 1, 2, 3, 4 (a P that leaves a cluster fewer than two
    # rows in brackets: the rule would not take it): 50257 bfloat16 (92 clusters
    # of 4 held) 512 rows 75.5% -> 83.4, 81.4, (79.2, 80.7); 1024 77.9% -> 86.5,
    # 86.7, 85.3, 84.5; 2048 79.2% -> 88.1, 87.0, 88.5, 87.9; 8192 80.6% -> 88.8,
    # 89.2, 89.9, 89.5; float32 (45 of 8) 1024 rows 90.8% -> 95.6, 94.8, 95.8,
    # 95.8; 8192 89.6% -> 92.8, 93.0, 93.4, 93.1; 4096 x 65536 bfloat16 (77 of
    # 8) 89.9% -> 93.9, 94.5, 94.5, 95.1. P = 1: up to 2 points ahead of the
    # picks of a limit of 4 at 512-1024 rows, up to 1.2 behind them at 4096-8192.
    # The forward ops keep a cluster a row: they take clusters for few rows, and
    # for many only where a row passes a block and the grid does not take it
    # (on a made-up H100: 1024 x 262144 bfloat16, 4096 x 131072 float64), shapes
    # in no suite and not measured looping.
    **dict.fromkeys((("split_row", op) for op in registry.BACKWARD), 1),
}
# Two items a cluster at least: strided_smem's (4096, 4096), 129 items on 45 clusters held,
# took P = 1 (two or three items a cluster) 78% against P = 2 (one or two) 76%.
CLUSTER_MIN_ITEMS = 2

# strided (softmax over a middle axis, x viewed as (outer, N, inner)): a
# block is TX columns by TY row-threads, each holding up to R rows of its
# column in registers, and a cluster of C blocks splits a column. Not yet
# measured on a GPU; the choices follow split_row's measurements:
# - C: the fewest blocks that hold a column (clusters cost their syncs and a
#   costlier launch; split_row's many-rows rule, SPLIT_ROWS_PER_SM).
# - TY: the fewest row-threads that hold a block's share at R <=
#   STRIDED_MOST_ROWS each (the largest R compiled), then R: the smallest
#   compiled R that holds the share over those TY (registers).
# - TX, by TY (STRIDED_COLUMNS): where TY is small, columns enough for about
#   256 threads a block (the row kernels' short-row blocks); with more
#   row-threads, 16 columns (64-byte rows, two rows a warp): smaller blocks,
#   more of them resident. H100, 2026-11-22 (scripts/sweep_strided.py,
#   docs/perf/sweep-strided-h100.txt), axis 0 of (8192, 8192) float32 at
#   R = 32, C = 16, TY = 16: TX = 32 46% of copy, 16 62%, 8 60%; R = 16,
#   TY = 32: 36%, 48%, 43%. Never more columns than inner has (rounded up to
#   a warp), nor than the kernel's registers allow.
STRIDED_COLUMNS = (
    (1, 256),
    (2, 128),
    (4, 64),
    (INF, 16),
)

# warp_rows, split_row and two_pass index elements within a row with int
# (e0 = chunk * V - shift, then e0 + V): rows up to 2^31 - 32 elements.
CHUNKED_MAX_N = 2**31 - 32

# two_pass: threads per block on a grid of every block resident at once (a
# row's second phase waits for blocks of the same grid); a slice is at least
# TWO_PASS_MIN_CHUNKS 16-byte chunks so a block has work to overlap; a group
# of rows takes at most 1 / TWO_PASS_L2_SHARE of L2, or one row where a row is
# longer (two groups or more are in flight; the second read of one should find
# it there). H100 sweep of 2026-11-22 (scripts/sweep_two_pass.py; 64 x 1048576
# float32, % of copy): share 2 / 256 threads 65%, 2 / 512 62%,
# 3 / 512 57%, 4 / 512 57%, 12 / 512 23% (groups of one row leave blocks
# idle); 4 x 4194304 (a row a group at any share): 256 threads 56%, 512 58%.
TWO_PASS_THREADS = 256
TWO_PASS_MIN_CHUNKS = 2048
TWO_PASS_L2_SHARE = 2


# An SM's registers sit in SUB_PARTITIONS quarters, each holding whole warps'
# 256-register granules (cuda_occupancy.h, cudaOccMaxBlocksPerSMRegsLimit: 4
# on every GPU but sm_60's 2, where this count is low), so the warps an SM
# holds by registers are a multiple of four. H100, 2026-11-23: the bfloat16 gradient
# at 48 registers (1536 a warp, 10 warps a quarter) in blocks of 448 threads
# (14 warps) held two blocks an SM, not the three 65536 / 1536 / 14 gives:
# 78% of copy at 8192 x 50257, against 94% in blocks of 416 (13 warps, three)
# (docs/perf/sweep-backward-105f11c-h100.txt). tests/test_gpu_occupancy.py
# holds the rule to the driver's count.
SUB_PARTITIONS = 4


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
    block: int  # blockDim.x
    smem: int  # dynamic shared memory bytes
    args: tuple = ()  # kernel arguments after (x, y, rows, n, both row strides); the gradients: (y, dy, dx, rows, n, three)
    workspace: int = 0  # bytes of scratch passed after args (zeroed, unless `tagged`); such a launch is cooperative
    block_y: int = 1  # blockDim.y (strided: the row-threads of a column)
    unit: int = 1  # the grid stays a multiple of it (split_row's launches: the blocks of a row, a cluster's or on the grid)
    tagged: int = 0  # bytes at the workspace's start holding its blocks' tags; the launch's tag is passed after it (api.run)


@dataclass(frozen=True)
class SplitLayout:
    """split_row's layout of a row, fixed by the row alone (batch invariance: kernels/split_row.cu)."""

    k: int  # chunks a thread holds in registers in the launch for many rows
    threads: int  # that launch's threads a row (C x blockDim.x)
    extra: int | None  # chunks a thread keeps in shared memory there; None for the gradients (no S)
    sizes: tuple  # the cluster sizes that may serve
    fold: int = 1  # R: the logical threads a thread of that launch stands for (one block only)
    few_k: int = 0  # with R > 1: K of the launches on clusters, one thread per logical thread
    one_pass: bool = False  # its clusters write from the row's (max, sum) as the grid does: R = -1 (no block holds it)

    def cut(self, c: int) -> tuple:
        """(knobs, the row's threads, S, again) of the launch on clusters of c blocks (C = 0: on the grid, which
        writes in one pass, as R = -1 on clusters does); again: its outputs come from the row's (max, sum) alone
        (a launch on clusters of a folded layout: kernels/split_row.cu)."""
        if self.fold == 1 or c == 1:
            return (self.k, -1 if self.one_pass and c > 1 else self.fold, c), self.threads, self.extra, False
        return (self.few_k, 1, c), self.threads * self.fold, 0, True


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


def _block_most(kernel) -> int:
    """The most threads a block of `kernel` takes in whole warps (at most 1024)."""
    return min(1024, kernel.max_threads // 32 * 32)


def as_launched(facts: FactsFn, fused: bool) -> FactsFn:
    """`facts` for the kernels a call launches: with options, a plain kernel's are its twin's (Planner.with_options
    launches the twin on the launch planned for the plain one), so every launch is cut by the registers of the
    kernel that runs it. The grid's blocks must all be resident: a twin of more registers, cut by the plain
    kernel's, may not fit; and plain calls, cut by the twin's, lost time wherever a change to the options' code
    took the twin past a register granule (H100, 2026-11-27, docs/perf/where-staged-h100.txt run 3: 32 x 128256
    float32 softmax 15.1 -> 16.5 us, the twin at 64 registers folding the grid)."""
    if not fused:
        return facts

    def launched(name, knobs):
        twin = registry.VARIANTS[name].twin_with_options(knobs)
        return facts(name, knobs if twin is None else twin)

    return launched


def stages_mask(v: registry.Variant, knobs, itemsize: int) -> bool:
    """Whether split_row's kernel `knobs` (with options) copies its cached chunks' mask bytes into shared memory
    where the launch gives room (kernels/split_row.cu, kMayStage): the kernels that read a thread's mask words
    together, not the clusters of 16 nor the grid's G > 1 and folds (held to 64 registers, they spilled or took
    70 with the batched words), and no plain kernel (no mask); nor float64, whose chunks' 2 mask bytes cp.async
    does not copy."""
    if v.name != "split_row" or itemsize not in (2, 4):
        return False
    if v.gridded(knobs):
        return knobs[1] == 1 and knobs[-1] == 0  # (K, G, C): C = 0 the twin that reads the options, C = -1 plain
    if v.clustered(knobs):
        return knobs[-1] != 16  # (K, R, C): R = 1 or -1 (one pass) alike
    return knobs[1] > 0  # (K, R, 1): R = 0 and R < 0 the plain kernels


def check_takes_options(v: registry.Variant, op: str) -> None:
    """UnsuitableVariant unless `v` takes scale= and where= (its registry entry's `fused`)."""
    if not v.fused:
        able = [name for name, other in registry.VARIANTS.items() if other.fused and op in other.ops]
        raise UnsuitableVariant(f"{v.name} takes no scale= or where=; variants that do: {', '.join(able)}")


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
            "rows_in_warp": self._rows_in_warp,
            "row_over_cluster": self._row_over_cluster,
            "row_in_two_passes": self._row_in_two_passes,
            "columns_in_registers": self._columns_in_registers,
            "columns_in_shared_memory": self._columns_in_shared_memory,
        }

    # -- public -------------------------------------------------------------

    def plan(self, variant: str, m: int, n: int, pair, facts: FactsFn, aligned: bool = True,
             op: str = registry.SOFTMAX, fused: bool = False, y_aligned: bool = False, masked: bool = False,
             mask_direct: bool = False) -> Launch:
        """The launch for `variant` (or "auto") computing `op`, or UnsuitableVariant saying why and which can.

        `aligned`: every row of x starts on a 16-byte boundary (then a row of N
        elements spans N / V 16-byte chunks rather than up to one more).
        `y_aligned`: so does every row of the output (on_whole_chunks); it
        picks a kernel, never the layout, so a row's bits do not depend on it.
        `facts` answers for the kernels that compute `op`. Every variant auto
        picks computes every op, so the op only narrows a variant asked by name.
        `fused`: the call passes scale= or where=, which only variants with
        `fused` in the registry take; `masked`: it passes where= (fused too),
        which may change split_row's layout (with_mask_layout); `mask_direct`:
        its mask's row r is mask row r, or one mask row serves every row,
        and every mask row starts at x's 16-byte phase (fused.direct), which
        the kernels on whole chunks need (on_whole_chunks); like y_aligned it
        picks a kernel, never the layout.
        """
        fused = fused or masked
        if variant == registry.AUTO:
            return self.pick(m, n, pair, facts, aligned, op, fused, y_aligned, masked, mask_direct)
        facts = as_launched(facts, fused)
        v = self._computing(variant, op)
        if fused:
            check_takes_options(v, op)
        try:
            if v.layout != registry.ROWS:
                raise UnsuitableVariant(
                    f"{variant} reads {v.layout}: softmax over an axis with unit-stride axes after it, "
                    f"not rows of {n} elements over the last axes")
            return self._launch(v, m, n, pair, facts, aligned, op, fused, y_aligned, masked, mask_direct)
        except UnsuitableVariant as exc:
            able = [name for name, other in registry.VARIANTS.items()
                    if name != variant and op in other.ops and (other.fused or not fused)
                    and self._serves(name, m, n, pair, facts, aligned, op, fused)]
            raise UnsuitableVariant(f"{exc}; variants that can: {', '.join(able)}") from None

    def plan_columns(self, variant: str, outer: int, n: int, inner: int, pair, facts: FactsFn,
                     op: str = registry.SOFTMAX, *, aligned: bool) -> Launch:
        """The launch for softmax (or `op`) down the columns of an (outer, N, inner) view, or UnsuitableVariant.

        `variant`: "auto" or a variant that reads columns (strided,
        strided_smem); the row variants serve such an axis through a
        transposed copy (api), not here. aligned: every row of the view starts
        at x's 16-byte phase (its outer and softmax-axis strides are whole
        multiples of 16 bytes), which strided_smem needs.
        """
        if variant == registry.AUTO:
            return self._auto_columns(outer, n, inner, pair, facts, op, aligned)
        v = self._computing(variant, op)
        if v.layout != registry.COLUMNS:
            raise UnsuitableVariant(f"{variant} reads rows; the variants that read an (outer, N, inner) view in place: "
                                    f"{', '.join(n for n, o in registry.VARIANTS.items() if o.layout == registry.COLUMNS)}")
        return self.rules[v.launch](v, outer, n, inner, pair, facts, op, aligned)

    def _auto_columns(self, outer, n, inner, pair, facts, op, aligned) -> Launch:
        """COLUMN_VARIANTS' rule: registers while COLUMN_REGISTER_BLOCKS blocks hold a column, else shared memory."""
        registers, smem = (self._computing(name, op) for name in COLUMN_VARIANTS)
        held = None
        try:
            held = self.rules[registers.launch](registers, outer, n, inner, pair, facts, op, aligned)
        except UnsuitableVariant:
            pass
        if held is not None and held.knobs[-1] <= COLUMN_REGISTER_BLOCKS:
            return held
        try:
            return self.rules[smem.launch](smem, outer, n, inner, pair, facts, op, aligned)
        except UnsuitableVariant as exc:
            if held is None:
                raise UnsuitableVariant(f"no variant holds a column of {n} {pair[0].name} ({exc})") from None
            return held

    def _computing(self, variant: str, op: str) -> registry.Variant:
        """The variant called `variant`; UnsuitableVariant naming those that compute `op` when it does not."""
        v = registry.get(variant)
        if op not in v.ops:
            able = [name for name, other in registry.VARIANTS.items() if op in other.ops]
            raise UnsuitableVariant(
                f"{variant} computes {', '.join(v.ops)} only; variants with {op}: {', '.join(able)}")
        return v

    def pick(self, m: int, n: int, pair, facts: FactsFn, aligned: bool = True, op: str = registry.SOFTMAX,
             fused: bool = False, y_aligned: bool = False, masked: bool = False, mask_direct: bool = False) -> Launch:
        """auto: AUTO_FIRST's variant for the row's chunks (AUTO_FIRST_PLAIN_WIDE's for the calls it names), else the
        first of AUTO_ORDER that serves `op`.

        online serves every forward shape without fused options; other calls
        raise UnsuitableVariant for rows that no variant taking them serves.
        `fused`, `masked`, `mask_direct`: as in plan.
        """
        fused = fused or masked
        one_wide_dtype = pair[0] == pair[1] and pair[0] in (dtypes.FLOAT32, dtypes.FLOAT64) and op not in registry.BACKWARD
        # scale= alone on float32 rows of whole chunks on 16-byte boundaries (AUTO_FIRST_PLAIN_WIDE); x's rows,
        # not y's, so that y's phase picks a kernel (O = 2 or 1, one order of sums), never the layout
        scaled_whole = (fused and not masked and pair[0] == dtypes.FLOAT32 and aligned
                        and n % (16 // pair[0].itemsize) == 0)
        wide = one_wide_dtype and (not fused or scaled_whole)
        first = lookup(AUTO_FIRST_PLAIN_WIDE if wide else AUTO_FIRST, _ceil_div(n, 16 // pair[0].itemsize))
        facts = as_launched(facts, fused)
        reasons = []
        for name in (first, *[v for v in AUTO_ORDER if v != first]):
            v = registry.VARIANTS[name]
            if op not in v.ops or (fused and not v.fused):
                continue
            try:
                return self._launch(v, m, n, pair, facts, aligned, op, fused, y_aligned, masked, mask_direct)
            except UnsuitableVariant as exc:
                reasons.append(str(exc))
        if op in registry.BACKWARD or fused:
            what = f"{op} with scale= or where=" if fused else op
            raise UnsuitableVariant(f"no variant computes {what} for rows of {n} {pair[0].name}: {'; '.join(reasons)}")
        raise AssertionError("online serves every shape")  # internal invariant, not user input

    def _launch(self, v, m, n, pair, facts, aligned, op, fused, y_aligned, masked=False, mask_direct=False) -> Launch:
        """`v`'s rule, then the kernel the call runs on its launch: the twin that reads the options (a call with
        where= may take another layout of its row first, with_mask_layout, and room for its mask), then that
        kernel's twin on whole chunks where the call's rows (and mask) allow, the gradient's late-y twin where its
        rows are off 16-byte boundaries (late_y_off_boundaries), or, for plain rows that are not whole
        chunks and plain float64 rows of any N, an element-strided kernel on a layout of its own
        (element_strided). `facts` as_launched gives them."""
        laid_out = aligned or self.plain_slots(v, op, fused)  # plain calls: rows of any phase as aligned ones
        launch = self.with_options(v, self.rules[v.launch](v, m, n, pair, facts, laid_out, op), fused)
        if not fused:
            launch = self.with_halved_fold(v, launch, m, n, pair, laid_out, facts, op)
        if masked:
            launch = self.with_mask_layout(v, launch, n, pair, aligned, facts, op)
        if masked:
            launch = self.with_mask_room(v, launch, pair, facts)
        launch = self.on_whole_chunks(v, launch, n, pair, op, aligned and y_aligned and (mask_direct or not masked))
        launch = self.late_y_off_boundaries(v, launch, n, pair, op, aligned)
        return self.element_strided(v, launch, m, n, pair, op, facts)

    @staticmethod
    def plain_slots(v: registry.Variant, op: str, fused: bool) -> bool:
        """Whether the call's rows take as many chunks whatever their 16-byte phase: a forward call without options
        to a variant whose plain kernels hold a row of any phase in ceil(N / V) chunks (registry: slots;
        warp_rows, kernels/common.cuh's Slots). Its rule then lays the rows out as aligned ones; calls with
        options keep the layout of their phase (the kernels that read them count chunks from the 16-byte
        boundary before the row), and so may take another layout than the same call without them.
        H200, 2026-11-29 (docs/perf/plain-odd-rows-h200.txt): 4194304 x 63 float32 62% -> 86% of copy,
        2097152 x 255 bfloat16 42% -> 74%."""
        return v.slots and not fused and op not in registry.BACKWARD

    @staticmethod
    def with_options(v: registry.Variant, launch: Launch, fused: bool) -> Launch:
        """The launch of the kernel that reads scale= and where= for a call that passes them, where its rule
        planned a plain kernel (registry: plain_knob 0 -> 1, split_row's plain fold -R -> R), on the same block
        and grid, which the rule cut by the twin's facts (as_launched). warp_rows: the options kernels of one
        chunk a lane carry the same 32-register bound, the others launch 256 threads, which any kernel of at
        most 255 registers takes; split_row: plain_block keeps the twin's block."""
        twin = v.twin_with_options(launch.knobs) if fused else None
        return launch if twin is None else dataclasses.replace(launch, knobs=twin)

    def with_halved_fold(self, v: registry.Variant, launch: Launch, m: int, n: int, pair, aligned: bool,
                         facts: FactsFn, op: str) -> Launch:
        """A plain call's launch of split_row's plain fold on one block an SM: the fold of twice the logical threads a
        thread on half the threads (SPLIT_HALVED_FOLD), where its rows, element size and chunks are the table's and
        two of its blocks fit an SM; else the launch as it is. The same logical threads, so the same bits, whatever
        the number of rows."""
        if v.name != "split_row" or v.gridded(launch.knobs) or pair[0] != pair[1]:
            return launch
        k, r, c = launch.knobs
        halved, chunks = (k, 2 * r, c), self._chunks(n, pair, aligned)
        if (r != -SPLIT_FOLD or c != 1 or halved not in v.knob_sets(op, self.device.compute_capability)
                or m < SPLIT_HALVED_FOLD_ROWS * self.device.sms
                or not any(size == pair[0].itemsize and lo < chunks < hi for size, (lo, hi) in SPLIT_HALVED_FOLD)):
            return launch
        half = launch.block // 2
        extra = self._twice_an_sm(facts(v.name, halved), half, k, chunks)
        if extra is None or self.blocks_per_sm(launch.block, facts(v.name, launch.knobs), launch.smem) >= 2:
            return launch
        return dataclasses.replace(launch, knobs=halved, block=half, smem=extra * half * 16,
                                   args=(numpy.int32(extra), *launch.args[1:]))

    def with_mask_layout(self, v: registry.Variant, launch: Launch, n: int, pair, aligned: bool, facts: FactsFn,
                         op: str) -> Launch:
        """A split_row launch for a call with where= that holds its row in one block's registers (no fold, no
        cluster, no shared-memory part) at more chunks a thread than SPLIT_MASKED_ITEMS gives its row: that
        many a thread on more threads, where the kernel is built and takes the block; else the launch as it
        is. float32 and 2-byte rows of one dtype in and out only: the rows measured. The layout follows the
        row and whether the call has a mask, never the number of rows (the table stops below
        SPLIT_CLUSTER_MIN_CHUNKS, so no cluster serves these rows), so a row's bits do not depend on its batch."""
        if v.name != "split_row" or pair[0] != pair[1] or pair[0].itemsize not in (2, 4):
            return launch
        k, r, c = launch.knobs
        chunks = self._chunks(n, pair, aligned)
        items = lookup(SPLIT_MASKED_ITEMS, chunks)
        knobs = (items, r, c)
        if items is None or k <= items or r != 1 or c != 1 or launch.smem or knobs not in v.knob_sets(op):
            return launch
        threads = _round_up(_ceil_div(chunks, items), 32)
        if threads > _block_most(facts(v.name, knobs)):
            return launch
        return dataclasses.replace(launch, knobs=knobs, block=threads)

    def with_mask_room(self, v: registry.Variant, launch: Launch, pair, facts: FactsFn) -> Launch:
        """A split_row launch with where= and a shared-memory part given room for its cached chunks' mask bytes
        too (S x blockDim.x x V bytes after the chunks: kernels/split_row.cu), where its kernel stages them
        (stages_mask) and the room keeps every block an SM it had and fits a block's limit; else the launch as
        it is (the kernel then reads those bytes from L2, as it does for float64, whose 2-byte words cp.async
        does not copy). The same layout either way, so the same bits; on the grid the same blocks an SM, so
        every block stays resident. A call with scale= alone gets no room: the kernel stages mask bytes only
        where a mask is passed (split_row.cu, `staged`).
        H100, 2026-11-27 (scripts/probe_fused.py, docs/perf/where-staged-h100.txt): where= over a full
        mask at 8192 x 50257 float32, one block of 1024 threads a row with 5 cached chunks a thread, +177 us
        over plain softmax with the mask's bytes read from L2 after each chunk lands, +145 us staged at
        0511017 (the mask's own bytes: +134 us of copy)."""
        itemsize = pair[0].itemsize
        if not launch.args or not stages_mask(v, launch.knobs, itemsize):
            return launch
        room = int(launch.args[0]) * launch.block * (16 // itemsize)  # args[0]: S
        kernel = facts(v.name, launch.knobs)
        if (not room or launch.smem + room + kernel.static_smem > self.device.smem_per_block_optin
                or self.blocks_per_sm(launch.block, kernel, launch.smem + room)
                < self.blocks_per_sm(launch.block, kernel, launch.smem)):
            return launch
        return dataclasses.replace(launch, smem=launch.smem + room)

    @staticmethod
    def on_whole_chunks(v: registry.Variant, launch: Launch, n: int, pair, op: str, aligned: bool) -> Launch:
        """The launch of the kernel's twin on whole chunks (registry: whole_chunks; plain_knob 0 -> -1, and the
        options twin's 1 -> 2), on the same block and grid, where every row of x and y starts on a 16-byte
        boundary and a mask, if any, is read row for row at x's phase (`aligned`: the caller's test), and a
        row of n elements is whole chunks. The twin computes the same values in the same order, with neither the
        element path (where input and output have one element size) nor the misalignment arithmetic compiled:
        H100, 2026-11-24, scripts/probe_whole_chunks.py, docs/perf/whole-chunks-h100.txt, two runs, warp_rows at
        auto's launch: 4096 x 1024 bfloat16 93-95% -> 96-99% of copy, float16 92-94% -> 98-99%, 262144 x 100
        float32 97% -> 99%, 4096 x 512 98% -> 100% (registers 64 -> 48, 39 -> 32, 48 -> 40). With options (O = 2)
        the mask row needs no remainder and every chunk's mask bytes are one aligned word: kernels/warp_rows.cu
        has the measurement. The gradients' twins (O = -1 where the rows of y, dy and dx are whole chunks on
        16-byte boundaries: gradients._backward's test), against their kernels of any phase on the same launch:
        H200, 2026-12-01 (scripts/probe_gradient_layouts.py at 256 threads,
        docs/perf/grad-whole-chunks-s54-h200.txt; the two 262144-row log_softmax_backward shapes in two runs), us:
        softmax_backward 4096 x 1024 bfloat16 10.4 -> 9.5, log_softmax_backward 262144 x 64 float32 46.8-47.1 ->
        46.4-46.8 (torch 46.4-46.8), 262144 x 100 74.0 -> 72.5-73.1 (torch 74.7-74.9), 262144 x 32 25.4 -> 24.9
        (torch 25.8); registers down (44 -> 40, 66 -> 48)."""
        whole = aligned and n % (16 // pair[0].itemsize) == 0
        twin = v.twin_on_whole_chunks(launch.knobs, op) if whole else None
        return launch if twin is None else dataclasses.replace(launch, knobs=twin)

    @staticmethod
    def late_y_off_boundaries(v: registry.Variant, launch: Launch, n: int, pair, op: str, aligned: bool) -> Launch:
        """The launch of the kernel's late-y twin (registry: late_y; split_row's R = 1 -> 2 on log_softmax's
        gradient clusters) on the same layout and block, for rows of LATE_Y_ITEMSIZES elements of y (and dy, at
        y's phase) that are not all whole chunks on 16-byte boundaries (`aligned`: they start on one); else the
        launch as it is. The twin computes the same values in the same order. Its fewer registers (bfloat16 48 ->
        40, sm_90) move no layout, which the kernel it replaces set; the grid a launch loops on follows the
        registers of the kernel it runs (api.persistent)."""
        whole = aligned and n % (16 // pair[0].itemsize) == 0
        if op != registry.LOG_SOFTMAX_BACKWARD or whole or pair[0].itemsize not in LATE_Y_ITEMSIZES:
            return launch
        twin = (launch.knobs[0], 2, *launch.knobs[2:]) if launch.knobs[1:2] == (1,) else None
        return launch if twin not in v.late_y else dataclasses.replace(launch, knobs=twin)

    def element_strided(self, v: registry.Variant, launch: Launch, m: int, n: int, pair, op: str,
                        facts: FactsFn) -> Launch:
        """The launch of an element-strided kernel (registry: element_strided; warp_rows' O = -2) in place of the
        plain kernel or its twin on whole chunks, on a layout of its own (ELEMENT_STRIDED_LAYOUTS: G, K, and so
        the block's rows and the grid, as _rows_in_warp launches them), for rows of n elements that are not whole
        chunks (n % V != 0), and for float64 rows of any n (ELEMENT_STRIDED_WHOLE_ROWS), whatever their phase;
        else the launch as it is. It sums in another order than the plain kernel and its twin on whole chunks, so
        it takes a row whatever its phase: such a row plans it alone as in any batch (the layout follows n, the
        dtype and the op), and its bits do not depend on its batch (a float32 row of whole chunks out of phase
        keeps Slots, which sums as on whole chunks in phase)."""
        per_chunk = 16 // pair[0].itemsize
        table = ELEMENT_STRIDED_LAYOUTS.get((pair[0].itemsize, op))
        whole_rows = n % per_chunk == 0 and pair[0].itemsize not in ELEMENT_STRIDED_WHOLE_ROWS
        if not v.element_strided or table is None or whole_rows or launch.knobs[v.plain_knob] not in (0, -1):
            return launch
        layout = lookup(table, _ceil_div(n, per_chunk))
        knobs = None if layout is None else (*layout, -2)
        if knobs not in v.element_strided_for(pair, op):
            return launch
        return self._warp_rows_launch(v, m, knobs, facts)

    def blocks_per_sm(self, threads: int, kernel: KernelFacts, smem: int) -> int:
        """Resident blocks per SM (the CUDA occupancy rules: 256-register warp granules in SUB_PARTITIONS)."""
        d = self.device
        warps = _ceil_div(threads, 32)
        by_threads = d.max_threads_per_sm // (warps * 32)
        regs_per_warp = _round_up(max(kernel.num_regs, 1) * 32, 256)
        by_regs = d.regs_per_sm // SUB_PARTITIONS // regs_per_warp * SUB_PARTITIONS // warps
        block_smem = smem + kernel.static_smem + d.smem_reserved_per_block
        by_smem = d.smem_per_sm // block_smem
        return max(0, min(by_threads, by_regs, by_smem, d.max_blocks_per_sm))

    # -- rules --------------------------------------------------------------

    def _serves(self, name, m, n, pair, facts, aligned, op, fused) -> bool:
        """Whether `name`'s rule lays out the call's rows, as _launch's first step does."""
        v = registry.VARIANTS[name]
        if v.layout != registry.ROWS:
            return False
        try:
            self.rules[v.launch](v, m, n, pair, facts, aligned or self.plain_slots(v, op, fused), op)
            return True
        except UnsuitableVariant:
            return False

    def _fit_threads(self, v, threads: int, kernel: KernelFacts) -> None:
        if threads > kernel.max_threads:
            raise UnsuitableVariant(
                f"{v.name} needs {threads} threads per block but its kernel launches at most "
                f"{kernel.max_threads} ({kernel.num_regs} registers per thread)"
            )

    def _thread_per_row(self, v, m, n, pair, facts, aligned, op) -> Launch:
        threads = NAIVE_THREADS
        self._fit_threads(v, threads, facts(v.name, ()))
        return Launch(v.name, (), min(_ceil_div(m, threads), MAX_GRID), threads, 0)

    def _warp_per_row(self, v, m, n, pair, facts, aligned, op) -> Launch:
        threads = WARP_THREADS
        self._fit_threads(v, threads, facts(v.name, ()))
        return Launch(v.name, (), min(_ceil_div(m, threads // 32), MAX_GRID), threads, 0)

    def _block_per_row(self, v, m, n, pair, facts, aligned, op) -> Launch:
        threads = lookup(BLOCK_THREADS, n)
        self._fit_threads(v, threads, facts(v.name, ()))
        smem = threads * dtypes.accumulator(pair).itemsize if v.launch == "block_per_row_tree" else 0
        return Launch(v.name, (), min(m, MAX_GRID), threads, smem)

    def _row_in_smem(self, v, m, n, pair, facts, aligned, op) -> Launch:
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

    def _row_in_registers(self, v, m, n, pair, facts, aligned, op) -> Launch:
        padded = 1 << max(n - 1, 0).bit_length()  # n rounded up to a power of two
        threads = min(lookup(REGISTER_THREADS, padded), max(padded, 32))
        items = max(padded // threads, 1)
        most = max(k for (k,) in v.knobs)
        while items <= most and threads >= 32:
            kernel = facts(v.name, (items,))
            if threads <= kernel.max_threads and self.blocks_per_sm(threads, kernel, 0) > 0:
                resident = self.blocks_per_sm(threads, kernel, 0) * self.device.sms
                return Launch(v.name, (items,), min(m, resident), threads, 0)
            threads //= 2
            items *= 2
        raise UnsuitableVariant(
            f"{v.name} holds the row in registers: a row of {n} {pair[0].name} does not fit "
            f"({most} elements per thread at most, and the block's threads times registers must fit the register file)"
        )

    def _chunks(self, n, pair, aligned) -> int:
        """16-byte chunks a row of n elements spans at most (the chunked kernels index a row with int)."""
        if n > CHUNKED_MAX_N:
            raise UnsuitableVariant(f"the 16-byte-chunk kernels index a row with int: a row of {n} is past {CHUNKED_MAX_N}")
        per_chunk = 16 // pair[0].itemsize
        return _ceil_div(n + (0 if aligned else per_chunk - 1), per_chunk)

    def _rows_in_warp(self, v, m, n, pair, facts, aligned, op) -> Launch:
        chunks = self._chunks(n, pair, aligned)
        lanes = min(32, 1 << max(_ceil_div(chunks, lookup(WARP_ROWS_ITEMS, chunks)) - 1, 0).bit_length())
        plain = [k for k in v.knob_sets(op) if k[v.plain_knob] == 0]  # (G, K, O = 0): with_options takes O = 1 where asked
        fitting = sorted(k for k in plain if k[0] == lanes and k[0] * k[1] >= chunks)
        if not fitting:
            most = max(g * k for g, k, _ in plain)
            raise UnsuitableVariant(
                f"{v.name} holds a row in one warp's registers: a row of {n} {pair[0].name} spans {chunks} "
                f"16-byte chunks, a warp holds {most}"
            )
        return self._warp_rows_launch(v, m, fitting[0], facts)

    @staticmethod
    def _warp_rows_launch(v, m, knobs, facts) -> Launch:
        """warp_rows' launch of the kernel `knobs` (G lanes a row) for m rows: WARP_ROWS_THREADS threads where
        the kernel takes them, a block for each blockDim.x / G rows."""
        threads = min(WARP_ROWS_THREADS, facts(v.name, knobs).max_threads // 32 * 32)
        return Launch(v.name, knobs, min(_ceil_div(m, threads // knobs[0]), MAX_GRID), threads, 0)

    def _row_over_cluster(self, v, m, n, pair, facts, aligned, op) -> Launch:
        """split_row: the row's layout from the row alone (_split_layout), then the cluster size C that cuts
        it into blocks by the number of rows (batch invariance: kernels/split_row.cu)."""
        chunks = self._chunks(n, pair, aligned)
        try:
            layout = self._split_layout(v, n, chunks, pair, facts, op)
        except UnsuitableVariant:
            if (launch := self._row_past_clusters(v, m, chunks, pair, facts, op)) is None:
                raise
            return launch
        launches = [self._cluster_launch(v, m, knobs, block, extra, again)
                    for knobs, block, extra, again in self.split_cuts(v, layout, facts)]
        if not launches:  # the layout's own C serves by construction; a guard should the kernels' limits differ
            raise UnsuitableVariant(f"{v.name}: no cluster size cuts a row of {n} {pair[0].name} into blocks "
                                    f"its kernels launch ({layout.threads} threads a row, {layout.k} chunks a thread)")
        if layout.sizes[-1] > 1 and m >= SPLIT_BLOCK_ROWS:
            # Many rows on clusters: launches that leave room for more blocks an SM, where any do
            resident = {launch: self.blocks_per_sm(launch.block, facts(v.name, launch.knobs), launch.smem)
                        for launch in launches}
            if op in registry.BACKWARD:
                floors = (BACKWARD_BLOCKS_PER_SM, BACKWARD_MIN_BLOCKS_PER_SM) if layout.k == BACKWARD_ITEMS else ()
            else:
                floors = () if any(launch.knobs[-1] == 1 for launch in launches) else (SPLIT_BLOCKS_PER_SM,)
            for floor in floors:
                if roomy := [launch for launch in launches if resident[launch] >= floor]:
                    launches = roomy
                    break
        launches = self.few_rows_cuts(m, launches, pair)
        best = min(launches, key=lambda launch: self._cluster_rank(m, launch, facts))
        return self._grid_launch(v, m, chunks, pair, layout, best, facts, op) or self.plain_block(v, best, facts, op)

    @staticmethod
    def plain_block(v, launch: Launch, facts, op) -> Launch:
        """A one-block launch on its plain twin (the options compiled out, kernels/split_row.cu) where it is
        built and takes the block, else the launch as it is: R = 0 (S compiled out too) for a row in registers
        (R = 1, no shared-memory part), -R for a fold. with_options gives calls with options the twin back."""
        k, r, c = launch.knobs
        plain = (k, -r if r > 1 else 0, 1)
        if (c != 1 or (r == 1 and launch.smem) or plain not in v.knob_sets(op)
                or launch.block > _block_most(facts(v.name, plain))):
            return launch
        return dataclasses.replace(launch, knobs=plain)

    def _grid_launch(self, v, m, chunks, pair, layout: SplitLayout, best: Launch, facts, op) -> Launch | None:
        """The cluster pick `best` cut over blocks anywhere on the grid instead (C = 0), where
        SPLIT_GRID_FROM_ROWS says so and the blocks fit, folded where SPLIT_GRID_FOLD
        says so; else None. The grid writes in one pass: only layouts whose clusters do so too (one_pass).
        log_softmax's gradient: its K = SPLIT_GRID_BACKWARD_ITEMS layouts from SPLIT_GRID_BACKWARD_FROM_ROWS rows
        (float accumulators: the grid kernel built)."""
        if op in registry.BACKWARD:
            to_grid = (op == registry.LOG_SOFTMAX_BACKWARD and layout.k == SPLIT_GRID_BACKWARD_ITEMS
                       and dtypes.accumulator(pair).itemsize == 4 and m >= SPLIT_GRID_BACKWARD_FROM_ROWS)
        else:
            to_grid = layout.one_pass and pair[0] == dtypes.FLOAT32 and m >= lookup(SPLIT_GRID_FROM_ROWS, chunks)
        if best.knobs[-1] <= 1 or not to_grid:
            return None
        knobs, threads, extra, _ = layout.cut(0)
        extra = extra or 0  # the gradients': None (registers only)
        launch = self._on_grid(v, m, knobs, threads, extra, pair, facts, op)
        if launch is None or extra or op in registry.BACKWARD or m <= launch.grid // launch.unit:
            return launch  # the gradients do not fold
        # SPLIT_GRID_FOLD: the logical threads' K chunks a thread, the rest of them in shared memory
        folded = self._on_grid(v, m, (knobs[0], -SPLIT_GRID_FOLD, 0), threads, (SPLIT_GRID_FOLD - 1) * knobs[0],
                               pair, facts, op)
        return folded if folded and folded.grid // folded.unit > launch.grid // launch.unit else launch

    def _row_past_clusters(self, v, m, chunks, pair, facts, op) -> Launch | None:
        """split_row on the grid for a row no cluster holds (SPLIT_GRID_ROW_THREADS), or None. The gradient
        built there (log_softmax's) holds its chunks in registers alone (no shared-memory part),
        SPLIT_GRID_BACKWARD_ITEMS a thread, on SPLIT_GRID_BACKWARD_ROW_THREADS."""
        if dtypes.accumulator(pair).itemsize != 4:
            return None
        if op in registry.BACKWARD:  # the least T that holds the row in registers, where it is one measured
            k = SPLIT_GRID_BACKWARD_ITEMS
            least = next((t for t in SPLIT_GRID_ROW_THREADS if t * k >= chunks), None)
            if least not in SPLIT_GRID_BACKWARD_ROW_THREADS:
                return None
            extra = {least: 0}
        else:
            k = lookup(SPLIT_ITEMS, chunks)
            extra = {threads: max(0, _ceil_div(chunks, threads) - k) for threads in SPLIT_GRID_ROW_THREADS}
        at_once = {(threads, g): cut[3] for threads in extra for g in SPLIT_GRID_GROUPS
                   if (cut := self._grid_cut(v, (k, g, 0), threads, extra[threads], facts, op))}
        if not at_once:
            return None
        # the most rows at once, then the larger T, then the smaller G
        threads, g = max(at_once, key=lambda tg: (at_once[tg], tg[0], -tg[1]))
        return self._on_grid(v, m, (k, g, 0), threads, extra[threads], pair, facts, op)

    def _grid_cut(self, v, knobs, threads, extra, facts, op) -> tuple | None:
        """(blockDim.x, blocks a row, shared bytes, rows the GPU holds at once) of a row of `threads` logical
        threads in blocks anywhere on the grid (C = 0), `extra` chunks a thread in shared memory; None where the
        kernel is not built here or its blocks do not fit."""
        groups, folds = max(knobs[1], 1), max(-knobs[1], 1)  # the knob G; G < 0 folds -G logical threads a thread
        built = v.knob_sets(op, self.device.compute_capability)
        if knobs not in built or threads % (32 * folds):
            return None
        plain = (*knobs[:-1], -1)  # the kernel _on_grid launches where built (as_launched: its twin with options)
        kernel = facts(v.name, plain if plain in built else knobs)
        # a block has a warp for every G groups of 32 logical warps of the row (RowTree's group level), in whole
        # warps of the row's threads
        warps = threads // 32 // folds  # the row's
        least = max(SPLIT_GRID_THREADS // 32, _ceil_div(_ceil_div(threads // 32, 32), groups))
        per_block = next((w for w in range(least, 33) if warps % w == 0), None)
        if per_block is None:
            return None
        block, blocks = 32 * per_block, warps // per_block
        smem = extra * block * 16
        if block > _block_most(kernel) or smem > self.device.smem_per_block_optin - kernel.static_smem:
            return None
        slots = self.blocks_per_sm(block, kernel, smem) * self.device.sms // blocks
        return (block, blocks, smem, slots) if slots else None

    def _on_grid(self, v, m, knobs, threads, extra, pair, facts, op) -> Launch | None:
        """The launch of _grid_cut's cut for m rows, or None (`again` 0: the grid writes in one pass anyway), on
        the plain kernel (C = -1: the options compiled out, kernels/split_row.cu) where it is built, cut by its
        registers; calls with options are cut by the twin's that reads them (C = 0, as_launched), which
        with_options gives them."""
        cut = self._grid_cut(v, knobs, threads, extra, facts, op)
        if cut is None:
            return None
        block, blocks, smem, slots = cut
        plain = (*knobs[:-1], -1)
        if plain in v.knob_sets(op, self.device.compute_capability):
            knobs = plain
        # a 64-bit tag per block of each row, then a (max, sum) per logical warp of each row (the gradients: a sum):
        # csm::GridBoard
        backward = op in registry.BACKWARD
        values = (1 if backward else 2) * dtypes.accumulator(pair).itemsize
        workspace = m * blocks * 8 + m * (threads // 32) * values
        args = (numpy.int32(blocks),) if backward else (numpy.int32(extra), numpy.int32(0), numpy.int32(blocks))
        return Launch(v.name, knobs, min(m, slots) * blocks, block, smem, args, workspace=workspace, unit=blocks,
                      tagged=m * blocks * 8)

    def split_cuts(self, v, layout: SplitLayout, facts):
        """(knobs, blockDim.x, S, again) for each C of the layout's sizes that cuts its row into blocks of whole
        warps that its kernel launches and an SM holds."""
        for c in layout.sizes:
            knobs, threads, extra, again = layout.cut(c)
            kernel = facts(v.name, knobs)
            block = threads // c
            if (threads % (32 * c) == 0 and block <= _block_most(kernel)
                    and self.blocks_per_sm(block, kernel, (extra or 0) * block * 16) > 0):
                yield knobs, block, extra, again

    def _split_layout(self, v, n, chunks, pair, facts, op) -> SplitLayout:
        """split_row's layout of a row: the chunks a thread keeps in registers (K) and in shared memory (S,
        None for the gradients), the row's threads, the cluster sizes that may serve (1 alone where C may
        not pass 1), and the fold.

        The launch for as many rows as SMs: the smallest C that holds the row (K from SPLIT_ITEMS, the
        gradients' rows below clusters BACKWARD_ONE_BLOCK_ITEMS; one block with a shared-memory part before any
        cluster); the gradients, on rows that take clusters,
        BACKWARD_ITEMS chunks a thread in the smallest C with BACKWARD_BLOCKS_PER_SM blocks resident (else
        BACKWARD_MIN_BLOCKS_PER_SM), else the same rule. Where clusters may serve fewer rows, T is rounded
        up to whole warps in a block of the largest cluster, so that every C cuts it, unless the layout's own
        block would then pass what its kernel launches (the gradients keep theirs: BACKWARD_ITEMS); a
        one-block layout then folds (SPLIT_FOLD). Long float32 rows on clusters take half the threads with a
        shared-memory part (SPLIT_SHARED_FROM_CHUNKS), and so do the forward ops' rows that one block holds in
        registers on too many threads for two blocks an SM (SPLIT_TWO_BLOCKS).
        """
        has_clusters = self.device.compute_capability >= (9, 0)
        clusters = has_clusters and chunks > SPLIT_CLUSTER_MIN_CHUNKS
        sizes = sorted({knobs[-1] for knobs in v.knob_sets(op) if knobs[-1] == 1 or (clusters and knobs[-1] > 1)})

        # K: SPLIT_ITEMS by a block's chunks, or for the gradients' rows one block holds BACKWARD_ONE_BLOCK_ITEMS
        items = lookup(BACKWARD_ONE_BLOCK_ITEMS, chunks) if op in registry.BACKWARD and not clusters else None

        def holding(sizes):  # the smallest C first (clusters by SPLIT_ITEMS on a block's chunks)
            return [launch for c in sizes
                    if (launch := self._cluster_block(v, 1, _ceil_div(chunks, c), c, facts, op,
                                                      items if c == 1 else None))]

        layouts = []
        if op in registry.BACKWARD and clusters:
            layouts = self._gradient_layouts(v, chunks, sizes, facts, op)
        layouts = layouts or holding(sizes)
        if not layouts and has_clusters:
            # Shorter rows one block cannot hold: the gradients keep y and dy in
            # registers, so a block of a kernel of many registers may not hold
            # every row below SPLIT_CLUSTER_MIN_CHUNKS
            clusters, sizes = True, sorted({knobs[-1] for knobs in v.knob_sets(op) if knobs[-1] >= 1})
            layouts = holding(sizes)
        if not layouts:
            where = "one block's registers" if sizes[-1] == 1 else f"a cluster of {sizes[-1]} blocks' registers"
            also = "" if op in registry.BACKWARD else (
                f", nor in one block's registers plus {self.device.smem_per_block_optin} bytes of shared memory")
            raise UnsuitableVariant(
                f"{v.name} keeps a row on chip: a row of {n} {pair[0].name} does not fit in {where}{also}"
            )
        first = layouts[0]
        k, _, c = first.knobs
        threads = c * first.block
        rounded = _round_up(threads, 32 * max(sizes))
        if clusters and op not in registry.BACKWARD and rounded // c <= _block_most(facts(v.name, first.knobs)):
            threads = rounded  # else only the C that cut it into whole warps serve (the layout's own among them)
        extra = int(first.args[0]) if first.args else None
        if c > 1 and extra == 0 and pair[0] == dtypes.FLOAT32 and chunks > SPLIT_SHARED_FROM_CHUNKS:
            threads = _round_up(threads // 2, 32 * max(sizes))  # see SPLIT_SHARED_FROM_CHUNKS
            extra = _ceil_div(chunks, threads) - k
        if c == 1 and extra == 0 and op not in registry.BACKWARD:
            threads, extra = self._two_blocks_an_sm(v, first.knobs, chunks, threads, pair, facts) or (threads, extra)
        # a row no block holds writes from its (max, sum) on clusters as on the grid (see SPLIT_GRID_FOLD), where
        # its kernels are built (K = 8: SPLIT_ITEMS past 512 chunks a block)
        one_pass = (c > 1 and op not in registry.BACKWARD and dtypes.accumulator(pair).itemsize == 4
                    and all((k, -1, size) in v.knob_sets(op) for size in sizes if size > 1))
        layout = SplitLayout(k, threads, extra, tuple(sizes), one_pass=one_pass)
        if c > 1 or len(sizes) == 1 or not extra or dtypes.accumulator(pair).itemsize != 4:
            return layout  # see SPLIT_FOLD
        few = [kk for kk, r, cc in v.knob_sets(op)
               if r == 1 and cc > 1 and kk <= SPLIT_FOLD_ITEMS and kk * threads * SPLIT_FOLD >= chunks]
        folded = (k, SPLIT_FOLD, 1)
        if few and folded in v.knob_sets(op) and threads <= _block_most(facts(v.name, folded)):
            return SplitLayout(k, threads, extra, tuple(sizes), SPLIT_FOLD, min(few))
        return layout

    def _two_blocks_an_sm(self, v, knobs, chunks: int, threads: int, pair, facts: FactsFn) -> tuple | None:
        """(threads, S) for a row that one block of `threads` (the layout's, rounded) holds in registers with no
        room for a second such block on its SM: half the most threads a block takes, each keeping the rest of its
        chunks in shared memory, where the row is one SPLIT_TWO_BLOCKS takes (one dtype in and out: the pairs
        measured) and two blocks then fit an SM; else None."""
        span = dict(SPLIT_TWO_BLOCKS).get(pair[0].itemsize) if pair[0] == pair[1] else None
        if span is None or not span[0] < chunks < span[1]:
            return None
        kernel = facts(v.name, knobs)
        half = _block_most(kernel) // 2
        extra = self._twice_an_sm(kernel, half, knobs[0], chunks)
        if extra is None or extra <= 0 or self.blocks_per_sm(threads, kernel, 0) >= 2:
            return None
        return half, extra

    def _twice_an_sm(self, kernel: KernelFacts, threads: int, k: int, chunks: int) -> int | None:
        """The chunks S a thread keeps in shared memory when a block of `threads` of `kernel`, K = k in registers,
        holds a row of `chunks`, where two such blocks fit an SM (_two_blocks_an_sm, with_halved_fold); else None."""
        extra = _ceil_div(chunks, threads) - k
        smem = extra * threads * 16
        if (threads > _block_most(kernel) or smem > self.device.smem_per_block_optin - kernel.static_smem
                or self.blocks_per_sm(threads, kernel, smem) < 2):
            return None
        return extra

    def _gradient_layouts(self, v, chunks, sizes, facts, op) -> list:
        """The gradients' launches at BACKWARD_ITEMS chunks a thread with BACKWARD_BLOCKS_PER_SM blocks
        resident per SM where there are any, else with BACKWARD_MIN_BLOCKS_PER_SM; else none."""
        fits = [launch for c in sizes
                if (launch := self._cluster_block(v, 1, _ceil_div(chunks, c), c, facts, op, BACKWARD_ITEMS))
                and launch.knobs[0] == BACKWARD_ITEMS]
        resident = {launch: self.blocks_per_sm(launch.block, facts(v.name, launch.knobs), 0) for launch in fits}
        return ([launch for launch in fits if resident[launch] >= BACKWARD_BLOCKS_PER_SM]
                or [launch for launch in fits if resident[launch] >= BACKWARD_MIN_BLOCKS_PER_SM])

    def few_rows_cuts(self, m: int, launches: list, pair) -> list:
        """The launches the rank chooses among for m rows of a row one block holds (a C = 1 launch among
        `launches`), from SPLIT_BLOCK_ROWS rows to fewer than the SMs: the C = 1 launch alone from
        SPLIT_BLOCK_ROWS_PER_SM rows an SM, or for pairs not measured; else it and the cuts on clusters that
        SPLIT_FEW_ROWS_CLUSTER and SPLIT_FEW_ROWS_WIDE_BLOCK allow. Other launches as they are."""
        one = [launch for launch in launches if launch.knobs[-1] == 1]
        if not one or not SPLIT_BLOCK_ROWS <= m < SPLIT_ROWS_PER_SM * self.device.sms:
            return launches
        measured = pair[0] == pair[1] and pair[0].itemsize in (2, 4)
        if not measured or m >= SPLIT_BLOCK_ROWS_PER_SM * self.device.sms:
            return one
        return one + [launch for launch in launches if launch.knobs[-1] > 1 and not launch.smem
                      and (launch.knobs[-1] <= SPLIT_FEW_ROWS_CLUSTER or launch.block >= SPLIT_FEW_ROWS_WIDE_BLOCK)]

    def _cluster_rank(self, m, launch, facts):
        """Smaller is better (see SPLIT_ROWS_PER_SM and few_rows_cuts)."""
        c = launch.knobs[-1]
        if m >= SPLIT_ROWS_PER_SM * self.device.sms:
            return (c,)
        resident = self.blocks_per_sm(launch.block, facts(launch.variant, launch.knobs), launch.smem) * self.device.sms
        return (-min(m * c, resident), c)

    def _cluster_block(self, v, m, chunks, c, facts, op, items: int | None = None) -> Launch | None:
        """A block shape holding `chunks` chunks per block of a C-block cluster, or None.

        The gradient kernels hold y and dy in registers only (no shared-memory part, no S argument).
        """
        backward = op in registry.BACKWARD
        items = lookup(SPLIT_ITEMS, chunks) if items is None else items
        for k in sorted({k for k, r, _ in v.knob_sets(op) if k >= items and r == 1}):
            kernel = facts(v.name, (k, 1, c))
            most = _block_most(kernel)
            threads = _round_up(_ceil_div(chunks, k), 32)
            if threads <= most:
                return self._cluster_launch(v, m, (k, 1, c), threads, None if backward else 0)
        # Registers full: the rest of the slice goes to shared memory, in the
        # layout of one block per row here (fewer rows then cut that block's
        # threads and part over a cluster: _row_over_cluster; long float32
        # rows on clusters get a part in _split_layout:
        # SPLIT_SHARED_FROM_CHUNKS). A layout of
        # clusters with a shared-memory part (one block per SM, its SMs in
        # lockstep) lost to two_pass: 64 x 1048576 float32 40% of copy against
        # 56% (H100, 2026-11-22, two_pass then two launches; 64% now).
        if c > 1 or backward:
            return None
        k = max(k for k, _, _ in v.knob_sets(op))
        kernel = facts(v.name, (k, 1, c))
        threads = _block_most(kernel)
        extra = _ceil_div(chunks, threads) - k
        if extra * threads * 16 > self.device.smem_per_block_optin - kernel.static_smem:
            return None
        return self._cluster_launch(v, m, (k, 1, c), threads, extra)

    def _cluster_launch(self, v, m, knobs, threads, extra, again: bool = False) -> Launch:
        """extra: the chunks a thread keeps in shared memory (the kernel's S), or None for a kernel without S;
        again: its outputs come from the row's (max, sum) alone (a launch on clusters of a folded layout)."""
        c = knobs[-1]
        # One cluster per row (the kernel loops past the grid limit); api.plan
        # then cuts the grid to rounds of the clusters the GPU holds at once, a
        # count only the driver gives (how it groups its SMs): Planner.persistent.
        grid = min(m, MAX_GRID // c) * c
        if extra is None:
            return Launch(v.name, knobs, grid, threads, 0, unit=c)
        return Launch(v.name, knobs, grid, threads, extra * threads * 16, (numpy.int32(extra), numpy.int32(again)), unit=c)

    def _row_in_two_passes(self, v, m, n, pair, facts, aligned, op) -> Launch:
        chunks = self._chunks(n, pair, aligned)
        kernel = facts(v.name, v.knobs[0])
        threads = min(TWO_PASS_THREADS, kernel.max_threads // 32 * 32)
        grid = self.blocks_per_sm(threads, kernel, 0) * self.device.sms
        backward = op in registry.BACKWARD
        # what the second pass should find in L2: x; y and dy for softmax's gradient; dy alone for
        # log_softmax's (its first pass reads no y)
        row_bytes = n * pair[0].itemsize * (2 if op == registry.SOFTMAX_BACKWARD else 1)
        capacity = max(1, self.device.l2_bytes // TWO_PASS_L2_SHARE // row_bytes)  # the rows a group holds
        group_rows = min(m, capacity)
        # Slices from the group's capacity, not from m: a row's (max, sum) merges
        # its slices' pairs, so its bits follow how it is sliced, which must not
        # change with the number of rows (batch invariance; fewer rows than a
        # group holds leave blocks idle rather than slice finer).
        slices = max(1, min(_ceil_div(grid, capacity), _ceil_div(chunks, TWO_PASS_MIN_CHUNKS)))
        partial_bytes = (1 if backward else 2) * dtypes.accumulator(pair).itemsize  # s, or (max, sum)
        return Launch(v.name, v.knobs[0], grid, threads, 0, (numpy.int32(slices), numpy.int32(group_rows)),
                      workspace=m * slices * partial_bytes + m * 4)  # a partial per piece, a counter per row

    def _columns_in_registers(self, v, outer, n, inner, pair, facts, op, aligned) -> Launch:
        has_clusters = self.device.compute_capability >= (9, 0)
        sizes = sorted({c for _, c in v.knobs if c == 1 or has_clusters})
        rs = sorted({r for r, _ in v.knobs})
        for c in sizes:
            share = _ceil_div(n, c)  # rows of a column a block holds
            ty = _ceil_div(share, rs[-1])
            if ty * 32 > min(facts(v.name, (rs[-1], c)).max_threads, 1024):  # TX is a warp at least
                continue
            r = min(r for r in rs if r * ty >= share)
            kernel = facts(v.name, (r, c))
            tx = min(lookup(STRIDED_COLUMNS, ty), _round_up(inner, 32), kernel.max_threads // ty // 32 * 32)
            items = outer * _ceil_div(inner, tx)
            accumulator = dtypes.accumulator(pair).itemsize
            smem = (2 * tx * ty + (2 * (2 + c) * tx if c > 1 else 0)) * accumulator
            return Launch(v.name, (r, c), min(items, MAX_GRID // c) * c, tx, smem, block_y=ty)
        where = "one block" if sizes[-1] == 1 else f"a cluster of {sizes[-1]} blocks"
        raise UnsuitableVariant(
            f"{v.name} holds a column in registers: a column of {n} {pair[0].name} does not fit in {where} "
            f"({rs[-1]} values a thread, as many threads as the kernel's registers allow)")

    def _columns_in_shared_memory(self, v, outer, n, inner, pair, facts, op, aligned) -> Launch:
        if self.device.compute_capability < (8, 0):
            raise UnsuitableVariant(f"{v.name} copies with cp.async, which needs sm_80 or later")
        if not aligned:
            raise UnsuitableVariant(f"{v.name} copies 16-byte pieces of each row: the view's outer and axis strides "
                                    "must be whole multiples of 16 bytes")
        if inner > CHUNKED_MAX_N:
            raise UnsuitableVariant(f"{v.name} indexes columns with int: inner axes up to {CHUNKED_MAX_N} elements")
        has_clusters = self.device.compute_capability >= (9, 0)
        sizes = sorted({c for (c,) in v.knobs if c == 1 or has_clusters})
        limit = max(self.device.smem_per_block_optin, self.device.smem_per_block)

        def launch(c):
            planned = self.column_lines_launch(v, c, STRIDED_SMEM_ROW_THREADS, outer, n, inner, pair)
            if planned.block * planned.block_y > facts(v.name, (c,)).max_threads:
                raise UnsuitableVariant(f"{v.name}: {planned.block} x {planned.block_y} threads pass the kernel's "
                                        "register limit")
            return planned

        fits = [c for c in sizes if _ceil_div(n, c) * STRIDED_SMEM_LINE <= STRIDED_SMEM_SLICE]
        fits = [c for c in fits + sizes[-1:] if launch(c).smem <= limit]
        if not fits:
            raise UnsuitableVariant(f"{v.name} caches a column in shared memory: a column of {n} {pair[0].name} "
                                    f"needs {launch(sizes[-1]).smem} bytes a block in a cluster of {sizes[-1]}, "
                                    f"past {limit}")
        return launch(fits[0])

    @staticmethod
    def loops(launch: Launch, op: str) -> bool:
        """Whether `launch` is on clusters that may loop over their items: a variant and op of CLUSTER_ROUNDS'
        (whose last knob is C) at C > 1."""
        return (launch.variant, op) in CLUSTER_ROUNDS and launch.knobs[-1] > 1

    @staticmethod
    def persistent(launch: Launch, active: int, op: str) -> Launch:
        """A launch on clusters that loop (Planner.loops) cut to P x `active` clusters, the clusters the GPU holds
        at once (see CLUSTER_ROUNDS); the launch as it is for others, where no P serves or where `active` is 0
        (unknown)."""
        if active < 1 or not Planner.loops(launch, op):
            return launch
        most, c = CLUSTER_ROUNDS[(launch.variant, op)], launch.knobs[-1]
        items = launch.grid // c
        rounds = [p for p in range(1, most + 1) if p * active * CLUSTER_MIN_ITEMS <= items]
        return dataclasses.replace(launch, grid=rounds[-1] * active * c) if rounds else launch

    def column_lines_launch(self, v, c: int, row_threads: int, outer: int, n: int, inner: int, pair) -> Launch:
        """strided_smem's launch with C = c and up to `row_threads` row-threads (no more than the slice's rows)."""
        columns = STRIDED_SMEM_LINE // pair[0].itemsize
        share = _ceil_div(n, c)
        ty = min(row_threads, share)
        reductions = 2 * columns * ty + 2 * columns + (2 * (2 + c) * columns if c > 1 else 0)
        smem = reductions * dtypes.accumulator(pair).itemsize + share * STRIDED_SMEM_LINE
        tiles = _ceil_div(inner + 16 // pair[0].itemsize - 1, columns)  # covers x's misalignment
        return Launch(v.name, (c,), min(outer * tiles, MAX_GRID // c) * c, columns, smem, block_y=ty)
