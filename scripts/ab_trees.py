"""auto in two checkouts, side by side: `python -m cupysoftmax time --json` on each shape, op and dtype below,
run in OLD's tree and then NEW's (each with its own package first on PYTHONPATH), interleaved, ROUNDS times.

A kernel or planner change is judged against the tree before it (put there with `git archive`); each line
gives, per tree, the best median over the rounds, % of copy, and auto's pick (variant, knobs, block
threads, registers) with whether every check against the reference passed.
Usage: python scripts/ab_trees.py OLD NEW [ROUNDS]
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
TREES = ("old", "new")


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


def main(old, new, rounds):
    records = {}
    for _ in range(rounds):
        for case in CASES:
            for tag, tree in zip(TREES, (old, new)):
                record = timed(tree, *case)
                if record is not None:
                    records.setdefault(case, {}).setdefault(tag, []).append(record)
    for (m, n, dtype, op), by_tree in records.items():
        line = f"{m}x{n} {dtype} {op}:"
        for tag in TREES:
            runs = by_tree.get(tag)
            if runs:
                pick = runs[0]
                line += (f"  {tag} {min(r['median_us'] for r in runs):.1f}us {max(r['pct_copy'] for r in runs):.0f}%"
                         f" {pick['variant']}{tuple(pick['knobs'])} b{pick['block']} r{pick['regs']}"
                         f" ok={all(r['ok'] for r in runs)}")
        print(line, flush=True)


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1)
