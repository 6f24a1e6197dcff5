#!/usr/bin/env bash
# Session 66, after review: few_rows_cuts (clusters of 16 where their blocks are 256 threads wide; float32 and 2-byte
# pairs of one dtype; no shared-memory part) against 8572778's planner through auto, then the whole GPU suite.
# planner-before.py (not committed): git show 8572778:cupysoftmax/planner.py > docs/perf/prepared-s66/planner-before.py
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s66c; rm -rf $res /tmp/before; mkdir -p $res
cp -r $PWD /tmp/before && cp docs/perf/prepared-s66/planner-before.py /tmp/before/cupysoftmax/planner.py
AB="64x50257xfloat32 64x128256xbfloat16 80x128256xbfloat16 104x50257xbfloat16 96x50257xbfloat16 64x50257xbfloat16
100x50257xfloat32 64x32000xfloat64"
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  timeout 150 python3 scripts/ab_trees.py --rounds 2 --cases "$(echo $AB)" /tmp/before $PWD > $res/ab.txt 2>&1
  echo "ab: rc $? ($(( $(date +%s) - s )) s)"; cat $res/ab.txt
  s=$(date +%s)
  timeout 280 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $res/tests.txt 2>&1
  echo "tests: rc $? ($(( $(date +%s) - s )) s)"; tail -6 $res/tests.txt
} 2>&1 | tee $res/run.log
tar czf $OUT/s66c.tgz -C $res .
