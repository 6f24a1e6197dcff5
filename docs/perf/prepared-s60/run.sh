#!/usr/bin/env bash
# Prepared in session 60: floor.diff (planner.LATE_Y_FROM_ROWS = 128: fewer rows keep log_softmax's gradient on the
# R = 1 cluster kernel, where the late-y twin tied or lost 0.1-0.4 us) checked and timed in one call, about 4-5
# minutes warm, from the checkout's root on the device (logs under $OUT):
#   1. the checkout's tree against the diff's through auto, the rows around the floor;
#   2. the diff applied to this copy of the checkout, then the GPU gradient and determinism tests (the 200-row
#      bfloat16 batch of 50257 then runs on R = 2 and each row alone on R = 1: the bits must match), then all.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
t=/tmp/s61-floor; rm -rf $t; mkdir -p $t/base $t/floor
cp -r cupysoftmax kernels tests $t/base/ && cp -r cupysoftmax kernels tests $t/floor/
(cd $t/floor && patch -s -p1 < "$OLDPWD/docs/perf/prepared-s60/floor.diff") || { echo "patch failed"; exit 1; }
for c in 8x50257xbfloat16 64x50257xbfloat16 64x50257xfloat16 127x50257xbfloat16 128x50257xbfloat16; do
  timeout 45 python3 scripts/ab_trees.py --rounds 1 --cases "$c:log_softmax_backward" $t/base $t/floor
done 2>&1 | tee $OUT/ab.txt
patch -s -p1 < docs/perf/prepared-s60/floor.diff || { echo "patch of the checkout failed"; exit 1; }
python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests/test_gpu_determinism.py tests/test_gpu_gradients.py \
  > $OUT/gradients.txt 2>&1
echo "gradient tests: rc $?"; tail -3 $OUT/gradients.txt
timeout 240 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $OUT/tests.txt 2>&1
echo "tests: rc $?"; tail -3 $OUT/tests.txt
