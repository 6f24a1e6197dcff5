#!/usr/bin/env bash
# Session 67: the gradient shapes where torch.compile led at 0d81d43 (softmax_backward 4096 x 16384 float16 2.9%,
# bfloat16 2.3%, 4096 x 32768 float32 1.6%, 4096 x 4096 float32 1.9%, 4096 x 1024 float32 5.5%): every split_row
# cut of them (scripts/sweep_backward.py), then the suite's method on those shapes for cupysoftmax, torch.compile
# and the copy (two runs), so a cut that leads can be read against torch.compile's time of the same run.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s67g; rm -rf $res; mkdir -p $res
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  timeout 200 python3 scripts/sweep_backward.py 4096 16384 float16 4096 16384 bfloat16 4096 32768 float32 \
    4096 4096 float32 4096 2048 float32 > $res/sweep.txt 2>&1
  echo "sweep: rc $? ($(( $(date +%s) - s )) s)"; cat $res/sweep.txt
  for r in 1 2; do
    s=$(date +%s)
    timeout 120 python3 scripts/bench_suite.py --suite docs/perf/prepared-s67/grad-suite.json --ops backward \
      --providers copy,cupysoftmax,torch,torch_compile --no-sweep --no-plot --out $res/suite$r > $res/suite$r.txt 2>&1
    echo "suite run $r: rc $? ($(( $(date +%s) - s )) s)"; tail -3 $res/suite$r.txt; grep -h "^| 4096" $res/suite$r/*.md
  done
} 2>&1 | tee $res/run.log
tar czf $OUT/s67g.tgz -C $res .
