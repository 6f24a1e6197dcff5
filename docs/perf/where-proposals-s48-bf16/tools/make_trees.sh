#!/bin/sh
# make_trees.sh: (re)build head and p1..p4 from HEAD's cupysoftmax + kernels and the patch scripts; pN.diff against head
set -e
cd /work/main/build/s48/bf16
T=tools
mk() { rm -rf $1 && mkdir $1 && (cd /work/main && git archive HEAD cupysoftmax kernels) | tar x -C $1; }
mk head
mk p1; python3 $T/patch_common_select2.py p1; python3 $T/patch_p1_split.py p1
mk p2; python3 $T/patch_common_select2.py p2; python3 $T/patch_p1_split.py p2; python3 $T/patch_p2_split.py p2
mk p3; python3 $T/patch_common_select2.py p3; python3 $T/patch_p1_split.py p3; python3 $T/patch_p2_split.py p3; python3 $T/patch_p3_split_words.py p3
mk p4; python3 $T/patch_common_select2.py p4; python3 $T/patch_p4_hset2.py p4; python3 $T/patch_p1_split.py p4; python3 $T/patch_p2_split.py p4; python3 $T/patch_p3_split_words.py p4
# diffs applicable with `patch -p0` from the repository root: paths cupysoftmax/..., kernels/...
for p in p1 p2 p3 p4; do
  (cd head && for f in kernels/common.cuh kernels/split_row.cu; do diff -u --label "$f" --label "$f" "$f" "../$p/$f" || true; done) > $p.diff
done
(cd /work/main && git rev-parse HEAD) > HEAD_COMMIT
