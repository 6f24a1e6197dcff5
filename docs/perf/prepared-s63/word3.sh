#!/usr/bin/env bash
# part-word-grad.diff (this folder: part-word.diff of prepared-s62 on split_row's softmax_backward alone; every other
# kernel compiles as in the checkout) against the checkout, on the H200: STEPS names the steps, run in order.
# Ran in session 63 (PERFORMANCE.md, "sixty-third"; docs/perf/part-words-s63-h200.txt). Landed at c4b8663, narrowed to clusters
# of up to 8 blocks (clusters of 16 lost on the registers alone).
#   tests: the GPU tests on the word tree (about 150 s warm)
#   grad:  auto on 2-byte softmax_backward rows, 2 rounds (about 300 s; 4096 x 65537 and 65536 take ~10 s a run)
set -uo pipefail
export PYTHONUNBUFFERED=1
t=/tmp/s63w
if [ ! -d $t/word ]; then
  rm -rf $t; mkdir -p $t/base $t/word
  for d in base word; do cp -r cupysoftmax kernels tests scripts docs pyproject.toml $t/$d/; done
  (cd $t/word && patch -s -p1) < docs/perf/prepared-s63/part-word-grad.diff || { echo "patch failed"; exit 1; }
fi
ab() { python3 scripts/ab_trees.py --rounds "$1" --cases "$2" $t/base $t/word; }
for step in ${STEPS:?}; do
  s=$(date +%s)
  case $step in
    tests) (cd $t/word && PYTHONPATH=$t/word timeout 400 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests \
              > $OUT/tests-word.txt 2>&1; echo "tests rc $?"); tail -4 $OUT/tests-word.txt ;;
    grad) ab 2 "4096x65537xbfloat16:softmax_backward 4096x65536xbfloat16:softmax_backward
               8192x50257xbfloat16:softmax_backward 8192x50256xbfloat16:softmax_backward
               8192x50257xfloat16:softmax_backward 128x50257xbfloat16:softmax_backward
               8x128256xbfloat16:softmax_backward 32x128256xbfloat16:softmax_backward
               128x128256xbfloat16:softmax_backward 4096x16384xfloat16:softmax_backward
               4096x16383xbfloat16:softmax_backward" 2>&1 | tee $OUT/ab-grad.txt ;;
  esac
  echo "step $step: $(( $(date +%s) - s )) s"
done
