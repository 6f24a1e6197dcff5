#!/bin/bash
# s48 bf16 where= proposals: A/B on one H200 in ONE device call (<= 600 s), run from /work/main with $OUT set:
#   bash build/s48/bf16/run_ab.sh
# carry (ignored paths the run needs): build/s48/bf16/head build/s48/bf16/p3 build/s48/bf16/p4 build/s48/bf16/ab
#   build/s48/bf16/run_ab.sh  (add build/s48/bf16/p1 / p2 with TREES="head p1 p2 ...")
# Trees: head (HEAD's package + kernels) and the proposals. p3 holds p1's and p2's changes, and each target shape
# runs exactly one changed kernel (2048 x 32768: p1's (8, 1, 1); the x 50257 folds: p2's (8, 4, 1); 8192 x 2048 and
# 4096 x 16384: p3's (2, 1, 1) / (4, 1, 1)), so head/p3/p4 attribute every change; p1 and p2 exist to land parts.
# Steps: (1) bits: digests of 120 calls a tree (bits.py; plain, log_softmax, scale=, where= in five forms) against
# head's, and a float64 reference check of a few rows of the where= calls; (2) two interleaved rounds of
# scripts/probe_fused.py over the six shapes, one process a tree a round; (3) a table of medians and where='s cost
# against its bar; (4) if time is left, test_gpu_fused on p3 (split_row, 2-byte). Everything is written under a
# temporary folder and tarred into $OUT/$NAME.tar.gz at the end (also on a timeout or an error).
# Other trees: B (their folder, each with HEAD_COMMIT), TREES, NAME, e.g. session 49's
#   B=build/s49/bf16attr TREES="head t2 t3" NAME=s49-bf16attr bash docs/perf/where-proposals-s48-bf16/run_ab.sh
set -u
cd /work/main 2>/dev/null || true
B="${B:-build/s48/bf16}"
A="$(dirname "$0")/ab"  # bits.py
NAME="${NAME:-s48-bf16-ab}"
TREES="${TREES:-head p3 p4}"
S="${S:-2048x32768xbfloat16 4096x16384xbfloat16 8192x2048xbfloat16 256x50257xfloat16 64x50257xfloat16 8192x50257xbfloat16}"
ROUNDS="${ROUNDS:-1 2}"
DEADLINE="${DEADLINE:-570}"  # seconds after start by which the tarball must be written
W=$(mktemp -d /tmp/s48ab.XXXXXX)
finish() { tar czf "$OUT/$NAME.tar.gz" -C "$W" . 2>/dev/null; echo "tarred $(ls "$W" | wc -l) files into $OUT/$NAME.tar.gz"; }
trap finish EXIT
left() { echo $((DEADLINE - SECONDS)); }
log() { echo "$@" | tee -a "$W/summary.txt"; }
log "== $(date -u) $(nvidia-smi -L 2>/dev/null | head -1); trees: $TREES; HEAD $(cat $B/HEAD_COMMIT 2>/dev/null)"
python3 -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__)" 2>&1 | tee -a "$W/summary.txt"

# (1) bits: head first (its digests are the standard), each tree compiles its own kernels here (the disk cache then
# serves the probes)
for t in $TREES; do
  [ "$(left)" -lt 200 ] && { log "bits $t skipped: $(left) s left"; continue; }
  PYTHONPATH=$B/$t timeout 150 python3 $A/bits.py > "$W/bits-$t.txt" 2>&1
  log "bits $t rc=$? at ${SECONDS}s: $(grep -c '^[0-9]' "$W/bits-$t.txt") digests, $(grep -c 'FAIL' "$W/bits-$t.txt") reference FAIL; $(head -1 "$W/bits-$t.txt")"
done
for t in $TREES; do
  [ "$t" = head ] && continue
  if [ "$(grep -c '^[0-9]' "$W/bits-head.txt" 2>/dev/null)" != 120 ] || [ "$(grep -c '^[0-9]' "$W/bits-$t.txt" 2>/dev/null)" != 120 ]; then
    log "$t: bits NOT COMPARED (a run did not give its 120 digests)"
  elif cmp -s <(grep -v '^package' "$W/bits-head.txt") <(grep -v '^package' "$W/bits-$t.txt"); then log "$t: bits = head"
  else log "$t: BITS DIFFER from head:"; diff <(grep -v '^package' "$W/bits-head.txt") <(grep -v '^package' "$W/bits-$t.txt") | head -12 | tee -a "$W/summary.txt"; fi
done

# (2) timings: rounds interleaved tree by tree
for r in $ROUNDS; do for t in $TREES; do
  [ "$(left)" -lt 45 ] && { log "round $r $t skipped: $(left) s left"; continue; }
  PYTHONPATH=$B/$t timeout $(( $(left) - 30 < 150 ? $(left) - 30 : 150 )) python3 scripts/probe_fused.py --shapes "$S" \
    --json "$W/$t-round$r.json" > "$W/$t-round$r.log" 2>&1
  log "round $r $t rc=$? at ${SECONDS}s"
done; done

# (3) table: per shape and call, each tree's medians (one a round, joined by -); where=(M, N)'s cost over softmax against the
# bar (copy + mask bytes less copy), as the brief's table
python3 - "$W" $TREES <<'PY' 2>&1 | tee -a "$W/summary.txt"
import json, os, sys, glob, collections
w, trees = sys.argv[1], sys.argv[2:]
t = collections.defaultdict(list)  # (shape, call, tree) -> [us]
for tree in trees:
    for f in sorted(glob.glob(f"{w}/{tree}-round*.json")):
        for r in json.load(open(f)):
            t[(f"{r['M']}x{r['N']} {r['dtype']}", r["call"], tree)].append(r["median_ms"] * 1e3)
shapes = list(dict.fromkeys(k[0] for k in t))
calls = ["copy", "softmax", "copy + mask bytes", "scale=0.5", "where=(M, N)", "where=(N,)"]
print(f"{'shape':24} {'call':18} " + " ".join(f"{tr:>15}" for tr in trees))
for s in shapes:
    for c in calls:
        print(f"{s:24} {c:18} " + " ".join(f"{'-'.join(f'{v:.1f}' for v in t[(s, c, tr)]) or '-':>15}" for tr in trees))
    for tr in trees:
        med = {c: sum(t[(s, c, tr)]) / len(t[(s, c, tr)]) for c in calls if t[(s, c, tr)]}  # mean of the rounds
        if all(c in med for c in ("copy", "softmax", "copy + mask bytes", "where=(M, N)")):
            cost, bar = med["where=(M, N)"] - med["softmax"], med["copy + mask bytes"] - med["copy"]
            print(f"{s:24} {'ratio ' + tr:18} cost {cost:.1f} bar {bar:.1f} ratio {cost / bar:.2f}")
PY

# (4) GPU tests on p3 with what time is left (python3 -P: else /work/main's package is imported)
if echo " $TREES " | grep -q " p3 " && [ "$(left)" -gt 90 ]; then
  PYTHONPATH=$B/p3 timeout $(( $(left) - 25 )) python3 -P -m pytest -q -m gpu -x -p no:cacheprovider \
    tests/test_gpu_fused.py -k "split_row and (float16 or bfloat16)" > "$W/test-p3.log" 2>&1
  log "tests p3 rc=$? (124: cut by the deadline) at ${SECONDS}s: $(tail -1 "$W/test-p3.log")"
fi
log "== done at ${SECONDS}s"
