#!/bin/bash
# Rebuild the ignored trees the prepared A/B carries, from HEAD and this folder's diff (run from the repository root):
#   bash docs/perf/prepared-s50/make_trees.sh
# build/s51/strided/{head,all}: README.md has the command.
set -eu
P=docs/perf/prepared-s50
tree() {  # tree DIR [DIFF]: HEAD's package and kernels in DIR, DIFF applied
  rm -rf "$1" && mkdir -p "$1" && git archive HEAD cupysoftmax kernels | tar x -C "$1"
  if [ $# -gt 1 ]; then patch -s -d "$1" -p1 < "$2"; fi
}
tree build/s51/strided/head; tree build/s51/strided/all $P/strided-all.diff
git rev-parse --short HEAD > build/s51/strided/HEAD_COMMIT
echo "trees built from $(git rev-parse --short HEAD)"
