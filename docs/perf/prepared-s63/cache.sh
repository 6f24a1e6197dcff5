#!/usr/bin/env bash
# cache-ca.diff: split_row's shared-memory chunks (copy_cached) copied by cp.async.ca (through L1) in place of .cg.
# Why: ncu at c4b8663 (ncu_fwd.sh; PERFORMANCE.md, "sixty-third"), softmax 8192 x N bfloat16 on (8, -4, 1): at
# N = 50257 those LDGSTS.BYPASS.128 asked L2 for 13.43 M sectors where 8.95 M were ideal (+50%), against none over
# at 50256, while the plain 16-byte loads and stores of the same rows were 3% over. The long-scoreboard stalls rose
# by as many samples as the time did (2.7%). Registers are unchanged (sm_90). About 4 minutes warm: auto on each
# side, 2 rounds, then the same ncu source counters on the trial at 50257.
set -uo pipefail
export PYTHONUNBUFFERED=1
t=/tmp/s63c; rm -rf $t; mkdir -p $t/base $t/ca
for d in base ca; do cp -r cupysoftmax kernels tests scripts docs pyproject.toml $t/$d/; done
(cd $t/ca && patch -s -p1) < docs/perf/prepared-s63/cache-ca.diff || { echo "patch failed"; exit 1; }
python3 scripts/ab_trees.py --rounds 2 --cases "8192x50257xbfloat16:softmax 8192x50256xbfloat16:softmax
  8192x50257xfloat32:softmax 4096x40001xbfloat16:softmax 8192x50257xbfloat16:log_softmax 4096x65536xbfloat16:softmax
  4096x65537xbfloat16:softmax" $t/base $t/ca 2>&1 | tee $OUT/ab-cache.txt
cd $t/ca && PYTHONPATH=$t/ca timeout 200 ncu --clock-control none -k regex:split_row --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section SourceCounters --import-source no -o /tmp/ca50257 \
  python3 docs/perf/prepared-s63/fwd_edge.py 8192 50257 > $OUT/ca-run.txt 2>&1; echo "ncu rc $?"
ncu -i /tmp/ca50257.ncu-rep --page source --csv --print-source sass > $OUT/ca-source-50257.csv 2>&1
ncu -i /tmp/ca50257.ncu-rep --page details | grep -E "Duration|DRAM Throughput|L2 Hit"
