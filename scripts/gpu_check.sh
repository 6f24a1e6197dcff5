#!/usr/bin/env bash
# One check-and-measure pass on a GPU machine, from a checkout (no install):
# the whole test suite (GPU tests included), the offline build report, and the
# `time` tables that docs/PERFORMANCE.md records (softmax and its gradient). COMMIT names the commit
# where .git does not travel with the tree. Logs go to $OUT (or ./gpu-logs); a short
# summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
out=${OUT:-gpu-logs}
mkdir -p "$out"
{
  date -u +%Y-%m-%dT%H:%MZ
  echo "commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -m cupysoftmax info
} 2>&1 | tee "$out/info.txt"
python3 -m pytest -q -p no:cacheprovider ${PYTEST_ARGS:-} 2>&1 | tee "$out/pytest.txt" | tail -n 25
python3 -m cupysoftmax build --arch sm_90 > "$out/build-sm90.txt" 2>&1; echo "build sm_90 exit $?"
for shape in "8192 50257" "4096 1024"; do
  python3 -m cupysoftmax time $shape --variant all 2>&1 | tee "$out/time-${shape// /x}.txt"
done
for shape in "8192 50257" "4096 1024" "64 1048576"; do  # the gradients, on every variant that computes them
  python3 -m cupysoftmax time $shape --op softmax_backward --variant all 2>&1 | tee "$out/time-backward-${shape// /x}.txt"
done
