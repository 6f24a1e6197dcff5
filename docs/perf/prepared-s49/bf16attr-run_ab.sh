#!/bin/bash
# s49: which parts of 2ac49ca (the 2-byte where= select) pay, one device call (<= 600 s), from /work/main:
#   run(command="bash build/s49/bf16attr/run_ab.sh", timeout_s=600,
#       carry=["build/s49/bf16attr/head", "build/s49/bf16attr/t2", "build/s49/bf16attr/t3", "build/s49/bf16attr/ab",
#              "build/s49/bf16attr/run_ab.sh"])
# Trees (HEAD_COMMIT's package and kernels): head; t2 = head with kFetchTogether's words read from `first` (no
# csm::opaque_zero) and prefetch_held_masks back: the HSET2 select alone on the (8, 1, 1) twin; t3 = head without
# kLeanFold (the 2-byte folds back to mask_cached and apply). Steps as build/s48/bf16/run_ab.sh: bits of 120 calls
# against head's (expected the same), two interleaved rounds of scripts/probe_fused.py over six shapes, a table.
# If t2 is no slower than head at 2048 x 32768 bfloat16 where=, drop opaque_zero and the prefetch exclusion; if t3
# is no slower on the 50257 float16 rows, drop kLeanFold.
set -u
cd /work/main 2>/dev/null || true
B=build/s49/bf16attr
TREES="${TREES:-head t2 t3}"
S="${S:-2048x32768xbfloat16 4096x16384xbfloat16 8192x2048xbfloat16 256x50257xfloat16 64x50257xfloat16 8192x50257xbfloat16}"
ROUNDS="${ROUNDS:-1 2}"
DEADLINE="${DEADLINE:-570}"  # seconds after start by which the tarball must be written
W=$(mktemp -d /tmp/s49ab.XXXXXX)
finish() { tar czf "$OUT/s49-bf16attr.tar.gz" -C "$W" . 2>/dev/null; echo "tarred $(ls "$W" | wc -l) files into $OUT/s49-bf16attr.tar.gz"; }
trap finish EXIT
left() { echo $((DEADLINE - SECONDS)); }
log() { echo "$@" | tee -a "$W/summary.txt"; }
log "== $(date -u) $(nvidia-smi -L 2>/dev/null | head -1); trees: $TREES; HEAD $(cat $B/HEAD_COMMIT 2>/dev/null)"
python3 -c "import cupy, sys; print('python', sys.version.split()[0], 'cupy', cupy.__version__)" 2>&1 | tee -a "$W/summary.txt"

# (1) bits: head first (its digests are the standard), each tree compiles its own kernels here (the disk cache then
# serves the probes)
for t in $TREES; do
  [ "$(left)" -lt 200 ] && { log "bits $t skipped: $(left) s left"; continue; }
  PYTHONPATH=$B/$t timeout 150 python3 $B/ab/bits.py > "$W/bits-$t.txt" 2>&1
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


log "== done at ${SECONDS}s"
