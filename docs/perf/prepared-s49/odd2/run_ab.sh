#!/bin/bash
# One device call (nvidia-h200, <= 570 s): warp_rows' plain GRANULES kernels (2-byte rows out of 16-byte phase, more
# than one chunk a lane) with fewer instructions a row group, against HEAD. All three keep HEAD's bits.
#   p1: Slots::granule_flat (sm_90): slot 0's granule without a divergent branch region, three times a trip
#   p2: p1 + the partial granules' pieces as predicated PTX stores (no branch, fixed words, one base address)
#   p3: p2 + csm::Unit (no FMUL by the compile-time scale 1 an element in the GRANULES kernels)
# From /work/main, after docs/perf/prepared-s49/make_trees.sh:
#   run(command="bash docs/perf/prepared-s49/odd2/run_ab.sh", timeout_s=600, kind="nvidia-h200",
#       carry=["build/s49/odd2/head", "build/s49/odd2/p1", "build/s49/odd2/p2", "build/s49/odd2/p3"])
# Other trees of the same kind: D (their folder), TREES (timed; the first is the one the others' bits are
# compared with), CHECK (checked, the first of TREES first), SAN (sanitized; empty: none), S (shapes), NAME (the
# tarball), e.g. session 49's log_softmax bound:
#   D=build/s49/logodd TREES="head q" CHECK="head q" SAN= NAME=logodd \
#   S="4194304x63xfloat32 2097152x255xbfloat16 1048576x127xfloat16 2097152x127xfloat32 1048576x200xbfloat16 262144x64xfloat32" \
#   bash docs/perf/prepared-s49/odd2/run_ab.sh
# 1. docs/perf/plain-odd-rows-proposals-s48/ab/check.py (odd N, every phase, views, NaN gaps, exact allocations, every
#    dtype pair, softmax and log_softmax) on head, p3 and p2: 0 failed, and the SAME digests as head in every case
#    (no arithmetic changes order; the unit scale drops a product by 1 that -ftz made an identity; the pieces
#    write the same bytes).
# 2. docs/perf/plain-odd-rows-proposals-s48/ab/ab_time.py: the four trees in one process with the copy, torch and
#    Triton, softmax and log_softmax, then again in the other order (softmax only if time is short).
# 3. compute-sanitizer memcheck over p3's quick check (its stores are new PTX), if time is left.
# Output: $OUT/$NAME.tgz (check-*.txt, digests-*.diff, time-*.txt, san-*.txt); summaries on stdout.
set -u
cd "$(dirname "$0")" && cd "$(git rev-parse --show-toplevel)"
START=$(date +%s); DEADLINE=$((START + 570))
left() { echo $((DEADLINE - $(date +%s))); }
bounded() { local want=$1; shift; local have=$(( $(left) - 15 ));
  [ "$have" -lt 10 ] && { echo "skipped (no time left): $*"; return 124; }
  timeout $(( want < have ? want : have )) "$@"; }
export PYTHONUNBUFFERED=1
D="${D:-build/s49/odd2}"; A=docs/perf/plain-odd-rows-proposals-s48/ab
TREES="${TREES:-head p1 p2 p3}"; CHECK="${CHECK:-head p3 p2}"; SAN="${SAN-p3}"; NAME="${NAME:-odd2}"
S="${S:-262144x100xfloat16 1048576x127xfloat16 2097152x255xbfloat16 16384x1023xbfloat16 262144x64xfloat32}"
FIRST=${TREES%% *}; REVERSED=$(echo $TREES | tr ' ' '\n' | tac | tr '\n' ' ')
T=$(mktemp -d)
finish() { (cd $T && tar czf $OUT/$NAME.tgz *.txt *.diff 2>/dev/null); echo "done in $(( $(date +%s) - START )) s"; }
trap finish EXIT
for t in $TREES; do mkdir -p $T/pk/csm_$t && cp -r $D/$t/cupysoftmax/. $T/pk/csm_$t/ && cp -r $D/$t/kernels $T/pk/csm_$t/kernels; done
nvidia-smi -L
echo "== 1. correctness ($(left) s left)"
digests() { sed -n 's/^\(.*\) \(ok\|FAIL.*\) ratio=.* digest=\(.*\)$/\1 \3/p' $1 | tr -s ' '; }
for t in $CHECK; do
  PYTHONPATH=$D/$t bounded 100 python3 -P $A/check.py > $T/check-$t.txt 2> $T/check-$t.err
  echo "$t rc=$? $(tail -1 $T/check-$t.txt)"; grep FAIL $T/check-$t.txt | head -5
  if [ $t != $FIRST ]; then
    diff <(digests $T/check-$FIRST.txt) <(digests $T/check-$t.txt) > $T/digests-$FIRST-$t.diff \
      && echo "$t: same bits as $FIRST on all $(digests $T/check-$t.txt | wc -l) digests" \
      || echo "$t: $(grep -c '^>' $T/digests-$FIRST-$t.diff) digests DIFFER from $FIRST (digests-$FIRST-$t.diff)"
  fi
done
echo "== 2. timings ($(left) s left)"
bounded 190 python3 -P $A/ab_time.py $T/pk "$TREES" "$S" softmax,log_softmax 30 3 2>&1 | tee $T/time-1.txt | grep -v "^warm"
echo "-- again, the other order ($(left) s left)"
if [ "$(left)" -gt 200 ]; then OPS=softmax,log_softmax; else OPS=softmax; fi
bounded 160 python3 -P $A/ab_time.py $T/pk "$REVERSED" "$S" $OPS 30 3 2>&1 | tee $T/time-2.txt | grep -v "^warm"
for t in $SAN; do
  echo "== 3. compute-sanitizer memcheck, $t quick ($(left) s left)"
  PYTHONPATH=$D/$t bounded 90 compute-sanitizer --tool memcheck --print-limit 20 python3 -P $A/check.py quick > $T/san-$t.txt 2>&1
  echo "$t rc=$? $(grep -E '^summary|ERROR SUMMARY' $T/san-$t.txt | tr '\n' ' ')"
done
