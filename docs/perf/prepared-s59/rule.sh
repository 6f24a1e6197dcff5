#!/usr/bin/env bash
# Prepared in session 59: late-y-rule.diff (late-y-pf.diff plus planner.BACKWARD_CLUSTER_BLOCK_MOST = 416, which keeps
# the gradients' cluster blocks within 416 threads where any launch has such blocks) checked and timed in one call,
# about 6-7 minutes warm:
#   1. auto through scripts/ab_trees.py, the checkout's tree against the diff's, one line a case (its layouts, from
#      scripts/plan_offline.py on each tree: 2-byte K = 4 clusters keep the checkout's C except float16 50257 (8 -> 4)
#      and 100000 (16 -> 8); the few-row and float16 cases below are the ones no run has timed);
#   2. the diff applied to this copy of the checkout (the device's, thrown away after), then the whole GPU suite;
#   3. log_softmax_backward's suite on it.
#   bash docs/perf/prepared-s59/rule.sh      (from the checkout's root, on the device; logs under $OUT)
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
trees=/tmp/s59-rule; rm -rf $trees; mkdir -p $trees/base $trees/rule
cp -r cupysoftmax kernels tests $trees/base/ && cp -r cupysoftmax kernels tests $trees/rule/
(cd $trees/rule && patch -s -p1 < "$OLDPWD/docs/perf/prepared-s59/late-y-rule.diff") || { echo "patch failed"; exit 1; }
for c in 8192x50257xbfloat16 8192x50257xfloat16 2048x50257xbfloat16 64x50257xfloat16 8x50257xbfloat16 \
         1x50257xbfloat16 4096x65536xbfloat16 1024x65536xbfloat16 4096x60000xbfloat16 4096x100000xfloat16 \
         128x100000xfloat16 4096x128256xbfloat16 4096x40000xbfloat16 128x128256xbfloat16; do
  timeout 60 python3 scripts/ab_trees.py --rounds 1 --cases "$c:log_softmax_backward" $trees/base $trees/rule
done 2>&1 | tee $OUT/ab.txt
patch -s -p1 < docs/perf/prepared-s59/late-y-rule.diff || { echo "patch of the checkout failed"; exit 1; }
python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $OUT/tests.txt 2>&1
echo "tests: rc $?"; tail -4 $OUT/tests.txt
python3 scripts/bench_suite.py --ops log_softmax_backward --no-sweep --no-plot --out $OUT/log_softmax_backward \
  > $OUT/suite.txt 2>&1
echo "suite: rc $?"; tail -32 $OUT/suite.txt
