#!/usr/bin/env bash
# Session 66: the few-rows cluster rule (planner: SPLIT_BLOCK_ROWS_PER_SM, SPLIT_FEW_ROWS_CLUSTER) on the GPU, one
# call: the whole GPU suite, auto before (planner-before.py in a copy of this tree) against after through
# scripts/ab_trees.py, the cuts of rows near the new 0.8-an-SM threshold, and the where= standing's shapes.
# planner-before.py (not committed): git show 8572778:cupysoftmax/planner.py > docs/perf/prepared-s66/planner-before.py
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s66; rm -rf $res /tmp/before; mkdir -p $res
cp -r $PWD /tmp/before && cp docs/perf/prepared-s66/planner-before.py /tmp/before/cupysoftmax/planner.py
W="262144x32xfloat32 262144x64xfloat32 262144x100xfloat32 4096x256xfloat32 16384x256xfloat16 4096x512xfloat32
4096x1024xbfloat16 4096x1024xfloat32 16384x512xfloat32 4096x4096xfloat32 8192x2048xbfloat16 4096x16384xbfloat16
2048x32768xbfloat16 32x128256xfloat32 256x50257xfloat16 64x50257xfloat16 64x8192xfloat32 64x1048576xfloat32
8192x50257xfloat32"
AB="64x50257xbfloat16 64x50257xfloat16:log_softmax 64x32000xfloat32 80x50257xbfloat16 64x128256xbfloat16
96x65536xbfloat16 100x16400xfloat32:log_softmax 104x32000xfloat32 64x50257xfloat32 72x50257xfloat16
128x32000xfloat32 106x50257xbfloat16"
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $res/tests.txt 2>&1
  echo "tests: rc $? ($(( $(date +%s) - s )) s)"; tail -12 $res/tests.txt
  s=$(date +%s)
  python3 scripts/ab_trees.py --rounds 2 --cases "$(echo $AB)" /tmp/before $PWD > $res/ab.txt 2>&1
  echo "ab: rc $? ($(( $(date +%s) - s )) s)"; cat $res/ab.txt
  s=$(date +%s)
  python3 scripts/probe_few_rows_clusters.py --calls softmax --json $res/threshold.json 104x32000xfloat32 \
    112x32000xfloat32 120x32000xfloat32 104x50257xbfloat16 112x50257xbfloat16 120x50257xbfloat16 > $res/threshold.txt 2>&1
  echo "threshold: rc $? ($(( $(date +%s) - s )) s)"; grep -E "^[0-9]|auto|C=1 |C=8 " $res/threshold.txt
  s=$(date +%s)
  python3 scripts/probe_fused.py --shapes "$(echo $W)" --json $res/where.json > $res/where.txt 2>&1
  echo "where: rc $? ($(( $(date +%s) - s )) s)"; grep -A6 "x 50257 float16" $res/where.txt
} 2>&1 | tee $res/run.log
tar czf $OUT/s66.tgz -C $res .
