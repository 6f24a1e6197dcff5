#!/usr/bin/env bash
# ncu of split_row's gradient on rows of whole chunks (50256) against rows off 16-byte boundaries (50257),
# bfloat16 8192 rows, and the SASS of the kernels (build/s62/grad.cubin, made on the CPU machine by cubin.py and carried).
set -uo pipefail
export PYTHONPATH=$PWD
cuobjdump -sass build/s62/grad.cubin > $OUT/sass.txt 2>&1; echo "sass rc $?"; wc -l $OUT/sass.txt
python3 -c "import cupy; print(cupy.__version__)" 2>&1 | tail -1
for n in 50256 50257; do
  timeout 200 ncu --clock-control none -k regex:split_row --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters \
    --import-source no -o /tmp/rep$n python3 docs/perf/prepared-s62/edge.py 8192 $n softmax_backward > $OUT/ncu-run-$n.txt 2>&1
  echo "ncu $n rc $?"; tail -2 $OUT/ncu-run-$n.txt
  ncu -i /tmp/rep$n.ncu-rep --page details > $OUT/details-$n.txt 2>&1
  ncu -i /tmp/rep$n.ncu-rep --page source --csv --print-source sass > $OUT/source-$n.csv 2>&1; echo "src rc $?"
  ls -la $OUT/source-$n.csv
done
grep -E "Duration|DRAM Throughput|Warp Cycles Per Issued|Executed Instructions  |Achieved Occupancy|Stall|L2 Hit" $OUT/details-*.txt | head -24
# Then part-chunk.diff (a part chunk's element loads all issued before any merge) and part-word.diff (2-byte part
# chunks a 4-byte word at a time), auto against the checkout.
t=/tmp/s62; rm -rf $t; mkdir -p $t/base $t/part $t/word
for d in base part word; do cp -r cupysoftmax kernels tests scripts pyproject.toml $t/$d/; done
(cd $t/part && patch -s -p1) < docs/perf/prepared-s62/part-chunk.diff || echo "part-chunk.diff failed"
(cd $t/word && patch -s -p1) < docs/perf/prepared-s62/part-word.diff || echo "part-word.diff failed"
for c in 8192x50257xbfloat16:softmax_backward 8192x50256xbfloat16:softmax_backward 8192x50257xbfloat16:softmax \
    4096x65537xbfloat16:softmax_backward; do
  timeout 110 python3 scripts/ab_trees.py --rounds 2 --cases "$c" $t/base $t/part $t/word
done 2>&1 | tee $OUT/ab-part.txt
