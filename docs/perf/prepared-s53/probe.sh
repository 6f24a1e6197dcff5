#!/usr/bin/env bash
# Session 53's refused call (ran in session 54): the gradients' warp_rows layouts, then the forward layouts of 4096 x 256 / 1024
# float32, against the peers. Log to $OUT/probe.log.
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s53p; rm -rf $res; mkdir -p $res
{
  date -u +%FT%TZ; echo "commit $COMMIT"
  s=$(date +%s); python3 scripts/probe_gradient_layouts.py 2>&1; echo "gradient probe: rc $? $(( $(date +%s) - s )) s"
  s=$(date +%s); python3 scripts/probe_strided_layouts.py 4096:256:float32:log_softmax 4096:1024:float32:log_softmax 4096:256:float32:softmax 4096:1024:float32:softmax 2>&1; echo "forward probe: rc $? $(( $(date +%s) - s )) s"
} 2>&1 | tee $res/probe.log
cp $res/probe.log $OUT/
