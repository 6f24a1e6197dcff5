#!/usr/bin/env bash
# Prepared in session 59: every (K, C, threads) of log_softmax's gradient on 2-byte rows that take clusters, timed
# (scripts/sweep_backward.py) on the checkout and on the checkout with late-y-pf.diff (y read after the row's sum on
# 2-byte K = 4 clusters of at most 8 blocks, its chunks sent to L2 after dy's loads). Run 3 of
# docs/perf/late-y-prefetch-s59-h200.txt: the diff gave 8192 x 50257 bfloat16 682 -> 630 us through auto, but
# 4096 x 65536 bfloat16 381.5 -> 414.6, since auto moved from (4, 1, 8) on 256 threads to (4, 1, 4) on 512. The sweep
# says which C each kernel wants at each N, so a rule can keep both (about 5-7 minutes warm, untimed so far; one line
# a candidate, each run cut at 100 s).
#   bash docs/perf/prepared-s59/sweep.sh      (from the checkout's root, on the device)
set -uo pipefail
export PYTHONUNBUFFERED=1
trees=/tmp/s59-sweep; rm -rf $trees; mkdir -p $trees
for t in base pf; do
  mkdir -p $trees/$t && cp -r cupysoftmax kernels scripts $trees/$t/
  [ $t = base ] || (cd $trees/$t && patch -s -p1 < "$OLDPWD/docs/perf/prepared-s59/late-y-pf.diff")
done
# the diff moves auto's layout from 448-thread blocks on (4096 rows: 55000-65536 bfloat16, C = 8 -> 4; 128256,
# C = 16 -> 8); 40000 and 50257 keep theirs (scripts/plan_offline.py on each tree). SHAPES="M N dtype;..."
# runs others.
IFS=';' read -ra shapes <<< "${SHAPES:-8192 50257 bfloat16;4096 65536 bfloat16;8192 50257 float16;4096 60000 bfloat16;4096 40000 bfloat16;1024 65536 bfloat16}"
for shape in "${shapes[@]}"; do
  for t in base pf; do
    echo "## $t: $shape"
    (cd $trees/$t && PYTHONPATH=$PWD timeout 100 python3 scripts/sweep_backward.py --op log_softmax_backward $shape)
  done
done
