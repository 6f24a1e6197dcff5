#!/bin/bash
# Rebuild the ignored trees the prepared A/Bs carry, from HEAD and this folder's diffs (run from the repository root):
#   bash docs/perf/prepared-s49/make_trees.sh
# build/s49/logodd/{head,q} and build/s49/odd2/{head,p1,p2,p3} (run by odd2/run_ab.sh), build/s49/bf16attr/{head,t2,t3}
# (run by docs/perf/where-proposals-s48-bf16/run_ab.sh): README.md has the commands.
set -eu
P=docs/perf/prepared-s49
tree() {  # tree DIR [DIFF]: HEAD's package and kernels in DIR, DIFF applied
  rm -rf "$1" && mkdir -p "$1" && git archive HEAD cupysoftmax kernels | tar x -C "$1"
  if [ $# -gt 1 ]; then patch -s -d "$1" -p1 < "$2"; fi
}
tree build/s49/logodd/head; tree build/s49/logodd/q $P/logodd-q.diff
tree build/s49/bf16attr/head; tree build/s49/bf16attr/t2 $P/bf16attr-t2.diff; tree build/s49/bf16attr/t3 $P/bf16attr-t3.diff
for t in head p1 p2 p3; do if [ $t = head ]; then tree build/s49/odd2/head; else tree build/s49/odd2/$t $P/odd2/$t.diff; fi; done
git rev-parse --short HEAD | tee build/s49/logodd/HEAD_COMMIT build/s49/odd2/HEAD_COMMIT > build/s49/bf16attr/HEAD_COMMIT
echo "trees built from $(git rev-parse --short HEAD)"
