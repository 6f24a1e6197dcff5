#!/usr/bin/env bash
# Prepared in session 58: where torch.compile leads the gradients on 4096-row float32 rows (0.0-2.8% at 25d7a83).
# ncu of ours against Inductor's looped reduction at 4096 x 2048 (the widest gap), then two_pass by name beside auto
# on the 4096-row shapes (two_pass rereads a row from L2, as Inductor's second pass does). About 2-3 minutes warm.
#   bash docs/perf/prepared-s58/gaps.sh > gaps.txt      (from the checkout's root, on the device)
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
export NCU_EXTRA_METRICS=dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,lts__t_sectors_op_read.sum
for op in log_softmax_backward softmax_backward; do
  bash scripts/ncu_peers.sh --op $op 4096 2048 float32 | grep -v "cub::\|fill" || echo "ncu $op: rc $?"
done
for n in 1024 2048 4096 12288 32768; do
  for op in softmax_backward log_softmax_backward; do
    python3 -m cupysoftmax time 4096 $n --op $op --variant auto,two_pass,warp_rows
  done
done
