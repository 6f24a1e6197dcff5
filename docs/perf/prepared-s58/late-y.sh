#!/usr/bin/env bash
# Prepared in session 58: log_softmax's gradient with y read after the sum on clusters, two ways, against the
# checkout (scripts/ab_trees.py through auto, one line a case as it finishes; about 4-5 minutes warm):
#   late2b: on 2-byte K = 4 clusters alone (8192 x 50257 bfloat16 was 84.3-84.7% of copy, 86% with late y);
#   latepf: on every cluster, with an L2 prefetch of y's chunks issued after dy's loads (late y alone lost about
#           2 us at 1-6 rows of 262144 float32: its chunks are read one at a time after the sum).
# Both compile without spills for sm_90 (late2b: bfloat16 K = 4 48 -> 40 registers; latepf: float32 K = 8 94 -> 64,
# bfloat16 93 -> 70). A row's bits stay the same: only when y is read changes.
#   bash docs/perf/prepared-s58/late-y.sh      (from the checkout's root, on the device)
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
trees=/tmp/late-y; rm -rf $trees; mkdir -p $trees
for t in base late2b latepf; do
  mkdir -p $trees/$t && cp -r cupysoftmax kernels $trees/$t/
  [ $t = base ] || (cd $trees/$t && patch -s -p1 < "$OLDPWD/docs/perf/prepared-s58/$t.diff")
done
run() { timeout 60 python3 scripts/ab_trees.py --rounds 1 --cases "$1:log_softmax_backward" $trees/base "${@:2}"; }
echo "## late2b (2-byte K = 4 clusters)"
for c in 8192x50257xbfloat16 8192x50257xfloat16 32x128256xbfloat16 128x128256xbfloat16 8x128256xbfloat16 \
         4096x65536xbfloat16 8192x50257xfloat32; do
  run $c $trees/late2b
done
echo "## latepf (every cluster, y prefetched to L2)"
for c in 1x262144xfloat32 4x262144xfloat32 7x262144xfloat32 1x524288xbfloat16 8192x50257xfloat32 \
         8192x50257xbfloat16 128x128256xfloat32 16x327680xfloat32; do
  run $c $trees/latepf
done
