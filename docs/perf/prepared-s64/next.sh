#!/usr/bin/env bash
# Prepared in session 64. Three trees: base (the checkout), tf (+ transposed-folds.diff: RowTree reduces a fold's R
# pairs together, kernels/common.cuh warp_reduce_each) and hf (tf + halved-fold.diff: a plain call's fold of 4 on one
# 1024-thread block an SM runs as a fold of 8 on 512 threads, planner.SPLIT_HALVED_FOLD). Run it in a checkout
# without either diff applied: it builds the trial trees itself. Steps:
#   STEPS="tests ab"  about 8 minutes warm (tests ~165 s, ab ~330 s)
#   STEPS="fold8"     about 1.5 minutes: the thresholds SPLIT_HALVED_FOLD needs, measured with the transposed reduction
# tests: the whole GPU suite on hf (tf's kernels and hf's rule together; a failure's test names say which).
# ab:    scripts/ab_trees.py, two rounds, base / tf / hf: every fold auto launches (one block of 512 and of 1024
#        threads, the grid's float32 fold), the halved fold's rows, and clusters as the control.
# fold8: fold8.py on tf: the fold of 8 on 512 threads against the fold of 4 on 1024, by row length and by rows.
# Land tf if tests pass and no ab case loses past its spread; hf too if its rows gain and fold8 confirms the table.
set -uo pipefail
export PYTHONUNBUFFERED=1
steps=${STEPS:?STEPS names the steps}
t=/tmp/s65; rm -rf $t; mkdir -p $t/base $t/tf $t/hf
for d in base tf hf; do cp -r cupysoftmax kernels tests scripts docs pyproject.toml $t/$d/; done
for d in tf hf; do (cd $t/$d && patch -s -p1) < docs/perf/prepared-s64/transposed-folds.diff || { echo "patch failed"; exit 1; }; done
(cd $t/hf && patch -s -p1) < docs/perf/prepared-s64/halved-fold.diff || { echo "patch failed"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
for step in $steps; do
  s=$(date +%s)
  case $step in
    tests)
      (cd $t/hf && PYTHONPATH=$t/hf python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests) > $OUT/tests-hf.txt 2>&1
      echo "tests: rc $?"; tail -6 $OUT/tests-hf.txt ;;
    ab)
      python3 scripts/ab_trees.py --rounds 2 --cases "8192x50257xbfloat16 8192x50257xbfloat16:log_softmax
        4096x40001xbfloat16 4096x65537xbfloat16 4096x65537xfloat16:log_softmax 264x65537xbfloat16
        128x128256xbfloat16 8192x50257xfloat32 8x128256xbfloat16" $t/base $t/tf $t/hf 2>&1 | tee $OUT/ab-tf-hf.txt ;;
    fold8)
      # session 65: as first saved, these lines lacked the backslashes, so only the first shape ran
      (cd $t/tf && PYTHONPATH=$t/tf python3 docs/perf/prepared-s64/fold8.py 4096 65537 bfloat16 softmax \
        4096 68000 bfloat16 softmax 4096 72000 bfloat16 softmax 4096 76000 bfloat16 softmax 4096 80000 bfloat16 softmax \
        4096 65537 float16 log_softmax 66 65537 bfloat16 softmax 132 65537 bfloat16 softmax 198 65537 bfloat16 softmax \
        264 65537 bfloat16 softmax) 2>&1 | tee $OUT/fold8-tf.txt | grep RESULT ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  echo "$step: $(( $(date +%s) - s )) s"
done
