#!/bin/bash
# Trees for comparing HEAD with the reverted element-strided change (run from the repository root):
#   bash docs/perf/prepared-s50/make_trees.sh     -> build/s51/strided/{head,reverted}
set -eu
P=docs/perf/prepared-s50
tree() {  # tree DIR [DIFF]: HEAD's package and kernels in DIR, DIFF applied
  rm -rf "$1" && mkdir -p "$1" && git archive HEAD cupysoftmax kernels | tar x -C "$1"
  if [ $# -gt 1 ]; then patch -s -d "$1" -p1 < "$2"; fi
}
tree build/s51/strided/head; tree build/s51/strided/reverted $P/strided.diff
git rev-parse --short HEAD > build/s51/strided/HEAD_COMMIT
echo "trees built from $(git rev-parse --short HEAD)"
