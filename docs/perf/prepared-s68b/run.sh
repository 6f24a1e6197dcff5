#!/usr/bin/env bash
# Session 68: log_softmax's gradient reads a 2-byte part chunk a word at a time on one block (C = 1) too;
# the kernels of HEAD (before/) against the working tree's, on auto's launch (the plans do not move: plan_offline).
set -uo pipefail
export PYTHONPATH=$PWD:$PWD/scripts PYTHONUNBUFFERED=1
res=/tmp/s68b; rm -rf $res; mkdir -p $res
# before/ is 2e21678's kernels, not committed: made here where it is missing (session 68 made it by hand)
[ -d docs/perf/prepared-s68b/before ] || { mkdir -p docs/perf/prepared-s68b/before && git archive 2e21678 kernels | tar -x -C docs/perf/prepared-s68b/before; }
L=log_softmax_backward
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  timeout 400 python3 scripts/probe_gradient_kernels_ab.py docs/perf/prepared-s68b/before 4096x16383xfloat16:$L \
    4096x16383xbfloat16:$L 1024x16383xbfloat16:$L 4096x8191xfloat32:$L 4096x4095xbfloat16:$L 4096x2047xfloat16:$L \
    4096x16384xfloat16:$L 4096x4096xbfloat16:$L 4096x16383xfloat16:softmax_backward > $res/ab.txt 2>&1
  echo "ab: rc $? ($(( $(date +%s) - s )) s)"; cat $res/ab.txt
} 2>&1 | tee $res/run.log
tar czf $OUT/s68b.tgz -C $res .
