#!/bin/bash
# Rebuild the ignored trees the prepared A/Bs carry, from HEAD and this folder's diffs (run from the repository root):
#   bash docs/perf/prepared-s49/make_trees.sh
# build/s49/logodd/{head,q} and run_ab.sh; build/s49/bf16attr/{head,t2,t3}, ab/ (bits.py) and run_ab.sh;
# build/s49/odd2/{head,p1,p2,p3} and run_ab.sh.
set -eu
P=docs/perf/prepared-s49
tree() {  # tree DIR [DIFF]: HEAD's package and kernels in DIR, DIFF applied
  rm -rf "$1" && mkdir -p "$1" && git archive HEAD cupysoftmax kernels | tar x -C "$1"
  if [ $# -gt 1 ]; then patch -s -d "$1" -p1 < "$2"; fi
}
tree build/s49/logodd/head; tree build/s49/logodd/q $P/logodd-q.diff
cp $P/logodd-run_ab.sh build/s49/logodd/run_ab.sh
tree build/s49/bf16attr/head; tree build/s49/bf16attr/t2 $P/bf16attr-t2.diff; tree build/s49/bf16attr/t3 $P/bf16attr-t3.diff
mkdir -p build/s49/bf16attr/ab && cp $P/bits.py build/s49/bf16attr/ab/bits.py
cp $P/bf16attr-run_ab.sh build/s49/bf16attr/run_ab.sh
for t in head p1 p2 p3; do if [ $t = head ]; then tree build/s49/odd2/head; else tree build/s49/odd2/$t $P/odd2/$t.diff; fi; done
cp $P/odd2/run_ab.sh build/s49/odd2/run_ab.sh
git rev-parse --short HEAD | tee build/s49/logodd/HEAD_COMMIT build/s49/odd2/HEAD_COMMIT > build/s49/bf16attr/HEAD_COMMIT
echo "trees built from $(git rev-parse --short HEAD)"
