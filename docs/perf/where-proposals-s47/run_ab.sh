# Next session's A/B (one device call, nvidia-h200): bits first, then timings, trees interleaved per round.
# run from /work/main: bash build/s47/proposals/ab/run_ab.sh   ($OUT set by the device runner)
set -u
P=build/s47/proposals
TREES="${TREES:-head p1 p2 p6 p7}"
path() { if [ "$1" = head ]; then echo build/s47/head; else echo $P/$1; fi; }
echo "== bits"
for t in $TREES; do PYTHONPATH=$(path $t) timeout 240 python3 $P/ab/bits.py > $OUT/bits-$t.txt 2>&1; echo "$t rc=$?"; done
for t in $TREES; do [ $t = head ] || { cmp -s $OUT/bits-head.txt $OUT/bits-$t.txt && echo "$t bits = head" || { echo "$t BITS DIFFER"; diff $OUT/bits-head.txt $OUT/bits-$t.txt | head -8; }; }; done
S="${S:-8192x50257xfloat32 4096x65536xfloat32 64x50257xfloat32}"
ROUNDS="${ROUNDS:-1 2}"
for r in $ROUNDS; do for t in $TREES; do
  echo "== round $r tree $t"
  PYTHONPATH=$(path $t) timeout 200 python3 scripts/probe_fused.py --shapes "$S" --json $OUT/$t-$r.json > $OUT/$t-$r.log 2>&1; echo rc=$?
  grep -E "^[0-9]|where|softmax |scale" $OUT/$t-$r.log | head -40
done; done
# GPU tests on each tree: python3 -P, or `python3 -m pytest` run from /work/main imports head's package whatever
# PYTHONPATH says (the cwd comes first on sys.path)
for t in $TREES; do [ $t = head ] && continue
  PYTHONPATH=$(path $t) timeout 150 python3 -P -m pytest -q -m gpu -x -p no:cacheprovider tests/test_gpu_fused.py -k "split_row" > $OUT/test-$t.log 2>&1; echo "tests $t rc=$?"; tail -2 $OUT/test-$t.log
done
