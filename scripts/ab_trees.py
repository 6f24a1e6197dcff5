"""auto in several checkouts, side by side: `python -m cupysoftmax time --json` on each shape, op and dtype
below, run in each tree in turn (each with its own package first on PYTHONPATH), interleaved, ROUNDS times.

A kernel or planner change is judged against the tree before it (put there with `git archive`); each line
gives, per tree (named by its folder), the best median over the rounds, % of copy, and auto's pick
(variant, knobs, block threads, registers) with whether every check against the reference passed.
Usage: python scripts/ab_trees.py [--rounds R] [--cases "MxNxdtype:op ..."] OLD NEW [NEW ...]
(--cases: these cases in place of CASES below; op defaults to softmax)
"""
import json
import os
import subprocess
import sys

# (M, N, dtype, op): split_row one block and clusters, two_pass, forward and gradients
CASES = [
    (8192, 50257, "float32", "softmax"), (8192, 50257, "bfloat16", "softmax"), (1, 50257, "float32", "softmax"),
    (8, 128256, "float32", "softmax"), (32, 128256, "bfloat16", "softmax"), (128, 32000, "float32", "softmax"),
    (4096, 4096, "bfloat16", "softmax"), (4096, 1024, "float32", "log_softmax"), (8, 32000, "float32", "log_softmax"),
    (1, 1048576, "float32", "softmax"), (4, 1048579, "float32", "softmax"), (64, 1048576, "float32", "softmax"),
    (8192, 50257, "float32", "softmax_backward"), (8192, 50257, "bfloat16", "softmax_backward"),
    (128, 128256, "float32", "softmax_backward"), (8, 128256, "float32", "softmax_backward"),
    (4096, 32768, "float32", "log_softmax_backward"), (1, 50257, "float32", "softmax_backward"),
]
def timed(tree, m, n, dtype, op):
    """auto's record from `cupysoftmax time` in `tree`, or None (printed) where it failed."""
    run = subprocess.run([sys.executable, "-m", "cupysoftmax", "time", str(m), str(n), "--dtype", dtype, "--op", op,
                          "--json", "--repeat", "30"], cwd=tree, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": tree})
    try:
        return next(r for r in json.loads(run.stdout) if r["variant"] != "copy")
    except (ValueError, StopIteration):
        print("FAILED", tree, m, n, dtype, op, run.stdout[-300:], run.stderr[-800:], flush=True)
        return None


def parse_cases(text):
    """[(M, N, dtype, op)] from "MxNxdtype:op ..." (op: softmax where left out)."""
    cases = []
    for word in text.split():
        shape, _, op = word.partition(":")
        m, n, dtype = shape.split("x")
        cases.append((int(m), int(n), dtype, op or "softmax"))
    return cases


def main(trees, rounds, cases=CASES):
    records = {}
    for _ in range(rounds):
        for case in cases:
            for tag, tree in trees.items():
                record = timed(tree, *case)
                if record is not None:
                    records.setdefault(case, {}).setdefault(tag, []).append(record)
    for (m, n, dtype, op), by_tree in records.items():
        line = f"{m}x{n} {dtype} {op}:"
        for tag in trees:
            runs = by_tree.get(tag)
            if runs:
                pick = runs[0]
                line += (f"  {tag} {min(r['median_us'] for r in runs):.1f}us {max(r['pct_copy'] for r in runs):.0f}%"
                         f" {pick['variant']}{tuple(pick['knobs'])} b{pick['block']} r{pick['regs']}"
                         f" ok={all(r['ok'] for r in runs)}")
        print(line, flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    rounds, cases = 1, CASES
    while args[:1] in (["--rounds"], ["--cases"]):
        if args[0] == "--rounds":
            rounds = int(args[1])
        else:
            cases = parse_cases(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    paths = [os.path.abspath(tree) for tree in args]
    trees = {os.path.basename(path): path for path in paths}
    if len(trees) < len(paths):  # a tree is named by its folder: two of one name would share one column
        sys.exit(f"two trees share a folder name: {' '.join(paths)}")
    main(trees, rounds, cases)
