#!/usr/bin/env bash
# Session 53: the fixed determinism case, issue 4's suites (one process an op) and where='s standing (two runs),
# all at one commit ($COMMIT). Results packed into $OUT/s53-suites.tgz (a call returns at most 8 files); each
# suite's summary and each step's seconds printed as they come.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s53; rm -rf $res; mkdir -p $res
log=$res/run.log
{
  date -u +%FT%TZ; echo "commit $COMMIT"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  python3 -m pytest -m gpu -q -p no:cacheprovider -n 4 tests/test_gpu_determinism.py -k "whole or f64" 2>&1 | tail -3
  for op in log_softmax backward log_softmax_backward axis; do
    s=$(date +%s)
    python3 scripts/bench_suite.py --ops $op --no-sweep --no-plot --out $res/$op 2>&1 | tail -60
    echo "suite $op: $(( $(date +%s) - s )) s"
  done
  W="262144x32xfloat32 262144x64xfloat32 262144x100xfloat32 4096x256xfloat32 16384x256xfloat16 4096x512xfloat32 4096x1024xbfloat16 4096x1024xfloat32 16384x512xfloat32 4096x4096xfloat32 8192x2048xbfloat16 4096x16384xbfloat16 2048x32768xbfloat16 32x128256xfloat32 256x50257xfloat16 64x50257xfloat16 64x8192xfloat32 64x1048576xfloat32 8192x50257xfloat32"
  for r in 1 2; do
    s=$(date +%s)
    python3 scripts/probe_fused.py --shapes "$W" --json $res/where-run$r.json > $res/where-run$r.txt 2>&1
    echo "where run $r: rc $? $(( $(date +%s) - s )) s"
  done
} 2>&1 | tee $log
tar czf $OUT/s53-suites.tgz -C $res .
