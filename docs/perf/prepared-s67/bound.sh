export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
rm -rf /tmp/t; mkdir -p /tmp/t; cp -r $PWD /tmp/t/before; cp docs/perf/prepared-s67/planner-before.py /tmp/t/before/cupysoftmax/planner.py
cp -r $PWD /tmp/t/head
C="92x50257xbfloat16 93x50257xbfloat16 94x50257xfloat16 95x50257xbfloat16 96x50257xbfloat16 94x50257xfloat16:log_softmax
96x50257xfloat16:log_softmax 92x128256xbfloat16 96x128256xbfloat16 93x32000xfloat32 96x32000xfloat32:log_softmax"
timeout 250 python3 scripts/ab_trees.py --rounds 3 --cases "$(echo $C)" /tmp/t/before /tmp/t/head > $OUT/bound-ab.txt 2>&1
echo rc $?; cat $OUT/bound-ab.txt
