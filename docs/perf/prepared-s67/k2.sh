#!/usr/bin/env bash
# Session 67: the one-block gradient kernel at K = 2 held to 32 registers (__launch_bounds__(1024, 2):
# docs/perf/grad-k2-bound-s67.diff, applied in this tree), so that 1024-thread blocks run two an SM (torch.compile's looped
# reduction at 4096 x 16384 float16: 1024 threads, 32 registers, 88% of warps active; ours (4, 1, 1) on 512,
# 48 registers, 48%). Every split_row cut (scripts/sweep_backward.py) in the tree without the bound (/tmp/orig)
# and with it, both gradients, then the suite's method for auto and torch.compile in this tree.
# split_row-orig.cu (not committed): git show 89d3534:kernels/split_row.cu > docs/perf/prepared-s67/split_row-orig.cu
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s67k; rm -rf $res /tmp/orig; mkdir -p $res
cp -r $PWD /tmp/orig && cp docs/perf/prepared-s67/split_row-orig.cu /tmp/orig/kernels/split_row.cu  # HEAD's, not committed
S="4096 16384 float16 4096 16384 bfloat16 4096 8192 float32 4096 4096 float32 4096 2048 float32 4096 1024 float32"
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  for op in softmax_backward log_softmax_backward; do
    for tree in /tmp/orig $PWD; do
      s=$(date +%s)
      (cd $tree && PYTHONPATH=$tree timeout 100 python3 scripts/sweep_backward.py --op $op $S > $res/sweep-$op-$(basename $tree).txt 2>&1)
      echo "sweep $op $tree: rc $? ($(( $(date +%s) - s )) s)"
    done
    paste -d'|' $res/sweep-$op-orig.txt $res/sweep-$op-$(basename $PWD).txt | grep -E "x|\(2, 1, 1\)|\*" | cut -c1-150
  done
  s=$(date +%s)
  timeout 120 python3 scripts/bench_suite.py --suite docs/perf/prepared-s67/grad-suite.json --ops backward,log_softmax_backward \
    --providers copy,cupysoftmax,torch,torch_compile --no-sweep --no-plot --out $res/suite > $res/suite.txt 2>&1
  echo "suite: rc $? ($(( $(date +%s) - s )) s)"; tail -3 $res/suite.txt; grep -h "^| 4096" $res/suite/*.md
} 2>&1 | tee $res/run.log
tar czf $OUT/s67k.tgz -C $res .
