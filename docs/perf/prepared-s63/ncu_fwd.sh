#!/usr/bin/env bash
# ncu of the forward, split_row (8, -4, 1) on 8192 x N bfloat16: rows of whole chunks (50256) against rows off
# 16-byte boundaries (50257, 3.8% slower on the same launch: PERFORMANCE.md, "sixty-second"). Session 62 found the
# gradient's cost there at the tree's barrier (a part chunk read element by element); part words did not help the
# forward, so this asks where its stall samples go instead (warp states, and per SASS instruction).
set -uo pipefail
export PYTHONPATH=$PWD
for n in 50256 50257; do
  timeout 200 ncu --clock-control none -k regex:split_row --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
    --section MemoryWorkloadAnalysis --section SourceCounters --import-source no -o /tmp/fwd$n \
    python3 docs/perf/prepared-s63/fwd_edge.py 8192 $n > $OUT/fwd-run-$n.txt 2>&1
  echo "ncu $n rc $?"; tail -2 $OUT/fwd-run-$n.txt
  ncu -i /tmp/fwd$n.ncu-rep --page details > $OUT/fwd-details-$n.txt 2>&1
  ncu -i /tmp/fwd$n.ncu-rep --page source --csv --print-source sass > $OUT/fwd-source-$n.csv 2>&1; echo "src rc $?"
done
grep -E "split_row|Duration|DRAM Throughput|Warp Cycles Per Issued|Executed Instructions  |Stall|L2 Hit" \
  $OUT/fwd-details-*.txt | head -30
