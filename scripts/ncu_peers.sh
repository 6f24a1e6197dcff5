#!/usr/bin/env bash
# Evidence: ncu counters of cupysoftmax and the peers on one shape, each kernel
# profiled right after the benchmark's L2 preparation (caches not flushed by
# ncu, clocks left as they are). Usage: scripts/ncu_peers.sh [--op OP] M N dtype > out.csv
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
metrics+=,launch__grid_size,launch__block_size,launch__occupancy_limit_registers
metrics+=${NCU_EXTRA_METRICS:+,$NCU_EXTRA_METRICS}  # more, comma-separated, from the environment
ncu --clock-control none --cache-control none --nvtx --nvtx-include "timed/" --metrics "$metrics" --csv \
    python3 scripts/probe_timing.py --once "$@"
