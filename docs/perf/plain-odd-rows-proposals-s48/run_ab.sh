#!/bin/bash
# One device call (nvidia-h200, at most 600 s) for build/s48/odd: head against p1 and p2 on rows out of 16-byte phase.
# Run from /work/main with $OUT set, build/ being ignored the call must carry the trees and scripts:
#   run(command="bash build/s48/odd/run_ab.sh", timeout_s=600, kind="nvidia-h200",
#       carry=["build/s48/odd/head", "build/s48/odd/p1", "build/s48/odd/p2", "build/s48/odd/ab",
#              "build/s48/odd/run_ab.sh"])
# Steps, each bounded so that the whole stays under DEADLINE (570 s):
#   1. correctness of every tree (ab/check.py: odd N in every dtype pair, views, poisoned outputs, bytes around the
#      output untouched, the options and aligned controls, a row alone against the batch), bits digests compared;
#   2. timings, every tree in the same process and rounds (ab/ab_time.py): copy, head, p1, p2, torch, triton;
#   3. compute-sanitizer memcheck over p2's quick check (p2 reads whole 16-byte granules across row edges; an x that
#      ends at the end of a raw cudaMalloc of its exact size must raise nothing), then p1's if time is left.
# Everything lands in one file, $OUT/ab.tgz; the summaries also go to stdout.
set -u
cd "$(dirname "$0")/../../.."  # /work/main (the repository root) wherever it was called from
START=$(date +%s); DEADLINE=$((START + 570))
left() { echo $((DEADLINE - $(date +%s))); }
bounded() {  # bounded SECONDS CMD...: run CMD for at most SECONDS, or what is left before the deadline less 15 s
  local want=$1; shift; local have=$(( $(left) - 15 ))
  [ "$have" -lt 10 ] && { echo "skipped (no time left): $*"; return 124; }
  timeout $(( want < have ? want : have )) "$@"
}
export PYTHONUNBUFFERED=1
D=build/s48/odd
T=$(mktemp -d)
TREES="head p1 p2"
for t in $TREES; do  # each tree as a package of its own (kernels/ inside), for one timing process
  mkdir -p $T/pk/csm_$t && cp -r $D/$t/cupysoftmax/. $T/pk/csm_$t/ && cp -r $D/$t/kernels $T/pk/csm_$t/kernels
done
nvidia-smi -L; python3 -c "import cupy, torch, triton; print('cupy', cupy.__version__, 'torch', torch.__version__, 'triton', triton.__version__)"

echo "== 1. correctness ($(left) s left)"
for t in $TREES; do
  PYTHONPATH=$D/$t bounded 110 python3 -P $D/ab/check.py > $T/check-$t.txt 2> $T/check-$t.err
  echo "$t rc=$? $(tail -1 $T/check-$t.txt)"; grep FAIL $T/check-$t.txt | head -5
done
digests() { sed -n 's/^\(.*\) \(ok\|FAIL.*\) ratio=.* digest=\(.*\)$/\1 \3/p' $1 | tr -s ' '; }
for t in p1 p2; do
  echo "$t against head: $(diff <(digests $T/check-head.txt) <(digests $T/check-$t.txt) | grep -c '^>') of $(digests $T/check-$t.txt | wc -l) digests differ (expected: rows out of phase only); options/aligned controls:"
  diff <(digests $T/check-head.txt | grep -E 'scale=2|where|plain_aligned') <(digests $T/check-$t.txt | grep -E 'scale=2|where|plain_aligned') > /dev/null && echo "   same bits as head" || echo "   DIFFER from head"
done
diff <(digests $T/check-p1.txt) <(digests $T/check-p2.txt) > $T/digests-p1-p2.diff && echo "p1 and p2: same bits everywhere" || echo "p1 and p2: $(grep -c '^>' $T/digests-p1-p2.diff) digests differ (see digests-p1-p2.diff)"

echo "== 2. timings ($(left) s left)"
S="4194304x63xfloat32 2097152x255xbfloat16 16384x1023xbfloat16 1048576x127xfloat16 4096x4095xfloat32 262144x64xfloat32 4096x1024xbfloat16"
bounded 170 python3 -P $D/ab/ab_time.py $T/pk "$TREES" "$S" softmax 30 3 2>&1 | tee $T/time-1.txt | grep -v "^warm"
echo "-- again, trees in the other order, and log_softmax on the odd warp_rows shapes ($(left) s left)"
bounded 130 python3 -P $D/ab/ab_time.py $T/pk "p2 p1 head" "4194304x63xfloat32 2097152x255xbfloat16 16384x1023xbfloat16 1048576x127xfloat16" softmax,log_softmax 30 3 2>&1 | tee $T/time-2.txt | grep -v "^warm"

echo "== 3. compute-sanitizer memcheck on the quick check ($(left) s left)"
for t in p2 p1; do
  PYTHONPATH=$D/$t bounded 120 compute-sanitizer --tool memcheck --print-limit 20 python3 -P $D/ab/check.py quick > $T/san-$t.txt 2>&1
  echo "$t rc=$? $(grep -E '^summary|ERROR SUMMARY' $T/san-$t.txt | tr '\n' ' ')"
done

(cd $T && tar czf $OUT/ab.tgz check-*.txt check-*.err digests-*.diff time-*.txt san-*.txt 2>/dev/null)
ls -la $OUT; echo "done in $(( $(date +%s) - START )) s"
