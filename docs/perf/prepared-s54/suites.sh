#!/usr/bin/env bash
# Prepared in session 54 (not run): the first call of the next session. The GPU tests session 54 added or moved
# after its last GPU run (the float32 129-256-chunk rule of 1f2f4f7: determinism, odd rows, remembered calls), then the forward suite
# (issues 2 and 3: 1f2f4f7 changed auto for plain float32 rows of 129-256 chunks) and issue 4's four suites, one
# process an op, all at $COMMIT. Results packed into $OUT/s54-suites.tgz (a call returns at most 8 files).
# About 9 minutes warm: run it alone in one call (the limit is 10 minutes).
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s55; rm -rf $res; mkdir -p $res
{
  date -u +%FT%TZ; echo "commit $COMMIT"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  python3 -m pytest -m gpu -q -p no:cacheprovider -n 14 tests/test_gpu_determinism.py tests/test_gpu_softmax.py \
    -k "split_row_plain or whole or out_of_phase or n1023 or remembered" 2>&1 | tail -3
  for op in ${OPS:-forward log_softmax backward log_softmax_backward axis}; do
    s=$(date +%s)
    python3 scripts/bench_suite.py --ops $op --no-sweep --no-plot --out $res/$op 2>&1 | tail -45
    echo "suite $op: $(( $(date +%s) - s )) s"
  done
} 2>&1 | tee $res/run.log
tar czf $OUT/s54-suites.tgz -C $res .
