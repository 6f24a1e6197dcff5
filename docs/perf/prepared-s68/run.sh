#!/usr/bin/env bash
# Prepared in session 67 (no device time was left to run it), both gradients, on the 4096-row shapes torch.compile
# leads (docs/PERFORMANCE.md, sixty-seventh); a few minutes warm:
# - scripts/probe_gradient_rounds.py: split_row's one-block rows on grids that loop over rows (P = 1, 2, 4 times
#   the blocks resident) against auto's block a row;
# - docs/perf/prepared-s68/probe_looped_grad.py: the prototype looped_grad.cu (a block a row, the row read twice,
#   the second time from L2, as Inductor's triton_red) against auto.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s68r; rm -rf $res; mkdir -p $res
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  for op in softmax_backward log_softmax_backward; do
    s=$(date +%s)
    timeout 150 python3 scripts/probe_gradient_rounds.py --op $op > $res/rounds-$op.txt 2>&1
    echo "rounds $op: rc $? ($(( $(date +%s) - s )) s)"; cat $res/rounds-$op.txt
    s=$(date +%s)
    timeout 200 python3 docs/perf/prepared-s68/probe_looped_grad.py --op $op > $res/looped-$op.txt 2>&1
    echo "looped $op: rc $? ($(( $(date +%s) - s )) s)"; cat $res/looped-$op.txt
  done
} 2>&1 | tee $res/run.log
tar czf $OUT/s68r.tgz -C $res .
