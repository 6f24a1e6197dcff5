#!/usr/bin/env bash
# Session 69, one call at the commit of log_softmax's part words (8107951 and after): the whole GPU suite, the
# log_softmax_backward suite, then every split_row cut of short rows off the 16-byte boundary, where auto runs
# (4, 1, 1) on 96 threads (4096 x 2047 float16 log_softmax_backward at 85% of copy, session 68).
set -uo pipefail
export PYTHONPATH=$PWD:$PWD/scripts PYTHONUNBUFFERED=1
res=/tmp/s69; rm -rf $res; mkdir -p $res
{
  date -u +%FT%TZ; git log --oneline -1 2>/dev/null
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $res/tests.txt 2>&1
  echo "tests: rc $? ($(( $(date +%s) - s )) s)"; tail -6 $res/tests.txt
  s=$(date +%s)
  python3 scripts/bench_suite.py --ops log_softmax_backward --no-sweep --no-plot --out $res/log_softmax_backward \
    > $res/suite.txt 2>&1
  echo "suite: rc $? ($(( $(date +%s) - s )) s)"; tail -45 $res/suite.txt
  for op in log_softmax_backward softmax_backward; do
    s=$(date +%s)
    timeout 150 python3 scripts/sweep_backward.py --op $op 4096 2047 float16 4096 2047 bfloat16 4096 1023 float32 \
      4096 4095 bfloat16 8192 2047 float16 > $res/sweep-$op.txt 2>&1
    echo "sweep $op: rc $? ($(( $(date +%s) - s )) s)"; cat $res/sweep-$op.txt
  done
} 2>&1 | tee $res/run.log
tar czf $OUT/s69.tgz -C $res .
