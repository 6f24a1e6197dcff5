#!/usr/bin/env bash
# Prepared in session 55 (no device time was left to it): the next session's device calls, each a list of steps
# run at $COMMIT, results packed into $OUT/s55-<first step>.tgz (a call returns at most 8 files). Seconds warm:
#   tests 165, forward ~140, log_softmax 137, backward 90, log_softmax_backward 86, axis 30, where ~120, probes ~200
#   (session 56 on the H200: tests 141-167, forward 122, log_softmax 121, backward 70-85, log_softmax_backward
#   73-82, axis 26, where 10, grid 118, probes 20; a fresh machine's start, about 120, counts too).
# Three calls under the 10-minute limit:
#   STEPS="tests forward"                               bash docs/perf/prepared-s55/run.sh
#   STEPS="log_softmax backward log_softmax_backward axis" bash docs/perf/prepared-s55/run.sh
#   STEPS="where probes"                                bash docs/perf/prepared-s55/run.sh
# and the grid gradient's (run first on its branch, merged in session 56; about 2 minutes warm: its tests, then the
# timings):
#   STEPS="grid"                                        bash docs/perf/prepared-s55/run.sh
# and (session 56, about a minute each) STEPS="options trees": warp_rows' and split_row's kernels with options on
# rows where auto parts them; log_softmax's gradient on the grid's T = 16384, which auto does not plan
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
steps=${STEPS:?STEPS names the steps}
res=/tmp/s55; rm -rf $res; mkdir -p $res
# the where= standing's shapes (PERFORMANCE.md, "where= at d2539a8")
W="262144x32xfloat32 262144x64xfloat32 262144x100xfloat32 4096x256xfloat32 16384x256xfloat16 4096x512xfloat32
4096x1024xbfloat16 4096x1024xfloat32 16384x512xfloat32 4096x4096xfloat32 8192x2048xbfloat16 4096x16384xbfloat16
2048x32768xbfloat16 32x128256xfloat32 256x50257xfloat16 64x50257xfloat16 64x8192xfloat32 64x1048576xfloat32
8192x50257xfloat32"
{
  date -u +%FT%TZ; echo "commit $COMMIT, steps $steps"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  for step in $steps; do
    s=$(date +%s)
    case $step in
      tests)  # the whole GPU suite: nothing has run on a GPU since 1f2f4f7 (session 54)
        python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $res/tests.txt 2>&1
        echo "tests: rc $?"; tail -15 $res/tests.txt ;;
      forward|log_softmax|backward|log_softmax_backward|axis)
        python3 scripts/bench_suite.py --ops $step --no-sweep --no-plot --out $res/$step 2>&1 | tail -45 ;;
      where)  # two runs; 12c85c1 gives scale= alone no mask room (64 x 50257 float16: 61440 -> 40960 bytes)
        for r in 1 2; do
          python3 scripts/probe_fused.py --shapes "$(echo $W)" --json $res/where-run$r.json > $res/where-run$r.txt 2>&1
          echo "where run $r: rc $?"
        done
        tail -25 $res/where-run2.txt ;;
      probes)  # prepared-s54's second call
        for op in softmax_backward log_softmax_backward; do
          python3 scripts/sweep_backward.py --op $op 4096 16384 float16 4096 16384 bfloat16 > $res/sweep-$op.txt 2>&1
          echo "sweep $op: rc $?"; tail -8 $res/sweep-$op.txt
        done
        python3 scripts/probe_gradient_layouts.py > $res/gradient-layouts.txt 2>&1
        echo "gradient layouts: rc $?"; tail -20 $res/gradient-layouts.txt
        python3 scripts/probe_strided_layouts.py 4096:256:bfloat16:log_softmax 4096:256:float32:log_softmax \
          4096:256:float32:softmax > $res/strided-layouts.txt 2>&1
        echo "strided layouts: rc $?"; tail -20 $res/strided-layouts.txt ;;
      options)  # session 56: calls with options on float32 rows of 129-256 chunks stay on split_row where the plain
        # call takes warp_rows (32, 8); scale= costs 1.0 us at 4096 x 1024 float32, and 1.5 us at 64 x 50257 float16
        # (its fold's twin). warp_rows' options kernels beside split_row's, scale= alone, then where=
        python3 scripts/probe_where_launches.py --scale 0.5 --json $res/options-scale.json 4096x1024xfloat32 \
          4096x768xfloat32 65536x1024xfloat32 64x50257xfloat16 64x8192xfloat32 > $res/options-scale.txt 2>&1
        echo "options scale: rc $?"; cat $res/options-scale.txt
        python3 scripts/probe_where_launches.py --json $res/options-where.json 4096x1024xfloat32 4096x768xfloat32 \
          65536x1024xfloat32 > $res/options-where.txt 2>&1
        echo "options where: rc $?"; cat $res/options-where.txt ;;
      scale)  # session 57: scale= alone through auto (warp_rows on float32 whole chunks since 2b10d2f) beside the
        # plain call and split_row by name, softmax and log_softmax
        python3 scripts/probe_scale_routes.py > $res/scale-routes.txt 2>&1
        echo "scale routes: rc $?"; cat $res/scale-routes.txt ;;
      trees)  # session 56: log_softmax's gradient on the grid at T = 16384 (rows of 81921-131072 chunks, two_pass
        # since 5080f26) and 32768, beside auto and two_pass
        python3 scripts/probe_grid_gradient_trees.py > $res/grid-trees.txt 2>&1
        echo "grid trees: rc $?"; cat $res/grid-trees.txt ;;
      grid)  # branch grid-gradient: its GPU tests, then the gradients of rows no cluster holds on the grid (auto)
        # against two_pass by name, and against torch and torch.compile
        python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 8 tests/test_gpu_gradients.py \
          tests/test_gpu_determinism.py tests/test_gpu_large.py -k "longer_than_a_cluster or past_a_cluster or 2_to_the_24" \
          > $res/grid-tests.txt 2>&1
        echo "grid tests: rc $?"; tail -15 $res/grid-tests.txt
        for op in softmax_backward log_softmax_backward; do
          for shape in "64 1048576" "16 1048576" "8 2097152" "40 600000"; do
            python3 -m cupysoftmax time $shape --op $op --variant auto,two_pass
          done
        done > $res/grid-time.txt 2>&1
        echo "grid time: rc $?"; cat $res/grid-time.txt
        python3 scripts/bench_suite.py --suite docs/perf/prepared-s55/grid-gradient-suite.json \
          --ops backward,log_softmax_backward --providers cupysoftmax,torch,torch_compile --no-sweep --no-plot \
          --out $res/grid-suite 2>&1 | tail -30 ;;
      *) echo "unknown step $step" ;;
    esac
    echo "step $step: $(( $(date +%s) - s )) s"
  done
} 2>&1 | tee $res/run.log
tar czf $OUT/s55-${steps%% *}.tgz -C $res .
