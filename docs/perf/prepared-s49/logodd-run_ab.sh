#!/bin/bash
# One device call (nvidia-h200, <= 600 s): log_softmax's plain warp_rows kernels at K = 2 held to softmax's blocks an
# SM (q) against HEAD (head), on rows out of 16-byte phase. From /work/main:
#   run(command="bash build/s49/logodd/run_ab.sh", timeout_s=600,
#       carry=["build/s49/logodd/head", "build/s49/logodd/q", "build/s49/logodd/run_ab.sh"])
# 1. docs/perf/plain-odd-rows-proposals-s48/ab/check.py on both trees (963 cases: odd N, every phase, views, NaN gaps, exact allocations,
#    softmax and log_softmax in every dtype pair): 0 failed, and the SAME digests in both (a launch bound and where
#    the 2-byte values widen change no arithmetic).
# 2. docs/perf/plain-odd-rows-proposals-s48/ab/ab_time.py, both trees in one process with the copy, torch and Triton, twice (both orders).
# Output: $OUT/logodd.tgz; summaries on stdout.
set -u
cd "$(dirname "$0")/../../.."
START=$(date +%s); DEADLINE=$((START + 570))
left() { echo $((DEADLINE - $(date +%s))); }
bounded() { local want=$1; shift; local have=$(( $(left) - 15 ));
  [ "$have" -lt 10 ] && { echo "skipped (no time left): $*"; return 124; }
  timeout $(( want < have ? want : have )) "$@"; }
export PYTHONUNBUFFERED=1
D=build/s49/logodd; A=docs/perf/plain-odd-rows-proposals-s48/ab
T=$(mktemp -d)
finish() { (cd $T && tar czf $OUT/logodd.tgz *.txt 2>/dev/null); echo "done in $(( $(date +%s) - START )) s"; }
trap finish EXIT
for t in head q; do mkdir -p $T/pk/csm_$t && cp -r $D/$t/cupysoftmax/. $T/pk/csm_$t/ && cp -r $D/$t/kernels $T/pk/csm_$t/kernels; done
nvidia-smi -L
echo "== 1. correctness ($(left) s left)"
for t in head q; do
  PYTHONPATH=$D/$t bounded 120 python3 -P $A/check.py > $T/check-$t.txt 2> $T/check-$t.err
  echo "$t rc=$? $(tail -1 $T/check-$t.txt)"; grep FAIL $T/check-$t.txt | head -5
done
digests() { sed -n 's/^\(.*\) \(ok\|FAIL.*\) ratio=.* digest=\(.*\)$/\1 \3/p' $1 | tr -s ' '; }
diff <(digests $T/check-head.txt) <(digests $T/check-q.txt) > $T/digests-head-q.txt \
  && echo "q: same bits as head on all $(digests $T/check-q.txt | wc -l) digests" \
  || echo "q: $(grep -c '^>' $T/digests-head-q.txt) digests DIFFER from head (digests-head-q.txt)"
echo "== 2. timings ($(left) s left)"
S="4194304x63xfloat32 2097152x255xbfloat16 1048576x127xfloat16 2097152x127xfloat32 1048576x200xbfloat16 262144x64xfloat32"
bounded 200 python3 -P $A/ab_time.py $T/pk "head q" "$S" log_softmax,softmax 30 3 2>&1 | tee $T/time-1.txt | grep -v "^warm"
echo "-- again, the other order ($(left) s left)"
bounded 200 python3 -P $A/ab_time.py $T/pk "q head" "$S" log_softmax 30 3 2>&1 | tee $T/time-2.txt | grep -v "^warm"
