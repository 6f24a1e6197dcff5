#!/usr/bin/env bash
# Session 67: the bound SPLIT_BLOCK_ROWS_PER_SM = 0.75 (3184419), which no GPU had run: the whole GPU suite at this
# tree, auto here against 8572778's planner (one block a row from 64 rows) at 96-105 rows through
# scripts/ab_trees.py (96-98 rows: clusters; 99-105: the old launch, so the same time), and
# scripts/probe_few_rows_clusters.py at 98 and 99 rows, its first run since 238a28d (api.rows_aligned).
# planner-before.py (not committed): git show 8572778:cupysoftmax/planner.py > docs/perf/prepared-s67/planner-before.py
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
res=/tmp/s67c; rm -rf $res /tmp/before; mkdir -p $res
cp -r $PWD /tmp/before && cp docs/perf/prepared-s67/planner-before.py /tmp/before/cupysoftmax/planner.py
AB="96x50257xbfloat16 98x50257xbfloat16 99x50257xbfloat16 104x50257xbfloat16 98x32000xfloat32 99x32000xfloat32
105x32000xfloat32 98x50257xfloat16:log_softmax 100x50257xfloat32"
{
  date -u +%FT%TZ; nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
  s=$(date +%s)
  timeout 300 python3 -m pytest -m gpu -q -rfE -p no:cacheprovider -n 14 tests > $res/tests.txt 2>&1
  echo "tests: rc $? ($(( $(date +%s) - s )) s)"; tail -6 $res/tests.txt
  s=$(date +%s)
  timeout 150 python3 scripts/ab_trees.py --rounds 2 --cases "$(echo $AB)" /tmp/before $PWD > $res/ab.txt 2>&1
  echo "ab: rc $? ($(( $(date +%s) - s )) s)"; cat $res/ab.txt
  s=$(date +%s)
  timeout 90 python3 scripts/probe_few_rows_clusters.py --rounds 2 --calls softmax,scale=0.5 --json $res/cuts.json \
    98x50257xbfloat16 99x50257xfloat16 > $res/cuts.txt 2>&1
  echo "cuts: rc $? ($(( $(date +%s) - s )) s)"; cat $res/cuts.txt
} 2>&1 | tee $res/run.log
tar czf $OUT/s67c.tgz -C $res .
