#!/usr/bin/env bash
# part-word.diff: GPU tests on its tree, then auto against the checkout on more 2-byte rows (2 rounds). Session 62 ran it without docs/ in the copies, so its tests stopped at collection; docs/ is copied now.
set -uo pipefail
export PYTHONUNBUFFERED=1
t=/tmp/s62w; rm -rf $t; mkdir -p $t/base $t/word
for d in base word; do cp -r cupysoftmax kernels tests scripts docs pyproject.toml $t/$d/; done
(cd $t/word && patch -s -p1) < docs/perf/prepared-s62/part-word.diff || { echo "patch failed"; exit 1; }
(cd $t/word && PYTHONPATH=$t/word timeout 250 python3 -m pytest -m gpu -q -x -p no:cacheprovider -n 14 tests > $OUT/tests-word.txt 2>&1; echo "tests rc $?")
tail -3 $OUT/tests-word.txt
for c in 4096x65537xbfloat16:softmax_backward 4096x65536xbfloat16:softmax_backward 8192x50257xfloat16:softmax_backward \
    8192x50257xbfloat16:log_softmax_backward 128x50257xbfloat16:softmax_backward 8x128256xbfloat16:softmax_backward \
    4096x40001xbfloat16:softmax 4096x16384xbfloat16:softmax_backward; do
  timeout 40 python3 scripts/ab_trees.py --rounds 2 --cases "$c" $t/base $t/word
done 2>&1 | tee $OUT/ab-word.txt
