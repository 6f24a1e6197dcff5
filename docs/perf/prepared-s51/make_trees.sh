#!/bin/bash
# Trees for the __syncwarp proposals against HEAD (run from the repository root):
#   bash docs/perf/prepared-s51/make_trees.sh   -> build/s52/sync/{head,strided,forward}
set -eu
P=docs/perf/prepared-s51
tree() {  # tree DIR [DIFF]: HEAD's package and kernels in DIR, DIFF applied
  rm -rf "$1" && mkdir -p "$1" && git archive HEAD cupysoftmax kernels | tar x -C "$1"
  if [ $# -gt 1 ]; then patch -s -d "$1" -p1 < "$2"; fi
}
tree build/s52/sync/head; tree build/s52/sync/strided $P/syncwarp-strided.diff
tree build/s52/sync/forward $P/syncwarp-forward.diff
echo "trees built from $(git rev-parse --short HEAD)"
