#!/usr/bin/env bash
# Prepared in session 61: float32 gradients of 129-256 chunks (N 513-1024) on warp_rows (32, 8), where torch.compile's
# one warp a row leads split_row's block a row (4096 x 1024 float32 softmax_backward 14.7 against 13.9 us in the suite
# at 9711864). From the checkout's root on the device, about 5 minutes warm, every step held within a deadline of
# 520 s from the start (a cold machine's start is not counted in it), logs under $OUT:
#   1. scripts/probe_gradient_layouts.py in the checkout and with bound.diff (warp_rows' float32 (32, 8) gradient on
#      whole chunks held to three 256-thread blocks an SM: 80 registers in place of 92, no spills), beside auto,
#      torch and torch.compile;
#   2. auto in the checkout against bound.diff + widegrad.diff (auto sends those gradients to warp_rows, at any
#      phase where a warp holds the row): rows in phase, out of phase (N = 1021: 256 chunks from the boundary before
#      the row; 1022-1024 off boundaries count 257 and stay on split_row) and many rows; one case a call, since
#      ab_trees.py prints only at its end;
#   3. the gradient and determinism GPU tests on bound + widegrad (test_planner's gradient cases will name the old
#      route: update them with the rule if it lands);
#   4. auto at 8192 x 50256 and 50257 bfloat16, forward and softmax_backward: do rows off 16-byte boundaries cost the
#      least shapes of the suites (softmax 88.5%, softmax_backward 86.1% of copy) what they cost log_softmax's
#      gradient before its late-y twin (4-16%, session 60)?
set -uo pipefail
export PYTHONUNBUFFERED=1
root=$PWD here=$PWD/docs/perf/prepared-s61 t=/tmp/s62 deadline=$(( $(date +%s) + 520 ))
within() { local left=$(( deadline - $(date +%s) )); (( left > $1 )) && echo $1 || echo $(( left > 5 ? left : 5 )); }
rm -rf $t; mkdir -p $t/base $t/bound $t/wide
for d in base bound wide; do cp -r cupysoftmax kernels tests scripts pyproject.toml $t/$d/; done
(cd $t/bound && patch -s -p1 < $here/bound.diff) || { echo "bound.diff failed"; exit 1; }
(cd $t/wide && patch -s -p1 < $here/bound.diff && patch -s -p1 < $here/widegrad.diff) || { echo "widegrad.diff failed"; exit 1; }
S="4096:1024:float32:softmax_backward 4096:1024:float32:log_softmax_backward 4096:768:float32:softmax_backward
65536:1024:float32:softmax_backward"
for d in base bound; do
  echo "## $d"; (cd $t/$d && PYTHONPATH=$t/$d timeout $(within 100) python3 scripts/probe_gradient_layouts.py $S)
done 2>&1 | tee $OUT/layouts.txt
cd $root && for c in 4096x1024xfloat32:softmax_backward 4096x1024xfloat32:log_softmax_backward \
    4096x1021xfloat32:softmax_backward 4096x768xfloat32:softmax_backward 4096x516xfloat32:log_softmax_backward \
    16384x1024xfloat32:log_softmax_backward 65536x1024xfloat32:softmax_backward; do
  PYTHONPATH=$root timeout $(within 60) python3 scripts/ab_trees.py --rounds 3 --cases "$c" $t/base $t/wide
done 2>&1 | tee $OUT/ab.txt
(cd $t/wide && PYTHONPATH=$t/wide timeout $(within 150) python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 \
  tests/test_gpu_gradients.py tests/test_gpu_determinism.py > $OUT/tests.txt 2>&1; echo "tests: rc $?")
tail -3 $OUT/tests.txt
cd $root && for op in softmax log_softmax softmax_backward; do for n in 50256 50257; do
  PYTHONPATH=$root timeout $(within 30) python3 -m cupysoftmax time 8192 $n --dtype bfloat16 --op $op | grep -v "^variant"
done; done 2>&1 | tee $OUT/rows-off-boundaries.txt
