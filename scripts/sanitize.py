"""Run every kernel under compute-sanitizer: memcheck, racecheck, synccheck and initcheck.

For each tool, runs scripts/sanitize_workload.py (every registry variant and op over
shapes that reach every planner path, each result checked against the float64
reference, CuPy's memory pools off) as

    compute-sanitizer --tool TOOL --error-exitcode 1 ... python3 scripts/sanitize_workload.py

with CUPYSOFTMAX_LINEINFO=1, so kernels compile with -lineinfo and a report names its
.cu line. A first run without the sanitizer compiles every kernel into CuPy's disk
cache (the same options), so the sanitized runs spend their time in the kernels. Each
tool's log goes to OUT/TOOL.log; a summary table (tool, launches, errors, reference
check, exit status) is printed last. Exits 1 unless every tool ran clean.

synccheck runs twice. compute-sanitizer 2025.3.1 (CUDA 13) reports divergent warps at a
__syncthreads() that no branch precedes in any kernel launched in more than about 30
clusters of 16 blocks (scripts/synccheck_probe.py shows it on a branch-free kernel; H100,
2026-11-23), so the first synccheck run leaves the kernels of clusters of 16 out
(--kernel-name-exclude) and the second checks only them, over the same set with every row
shape cut to 8 rows (8 clusters at once; the column shapes are left as they are). The
second must launch every such kernel that the first launched (the workload lists what it
launched), or its check says which it missed. The probe runs under synccheck too, with many
clusters and with few, through the second run's kind of filter with the probe's name
added: errors with many clusters show both that the sanitizer at hand still has the fault
and that the filter picks kernels.

`--jobs J` cuts the set into J shares (sanitize_workload.py --part K/J) and runs them side
by side, each its own sanitized process with its own log (OUT/TOOL.K.log), the compile
run too; the summary adds up the shares. The full set under racecheck needs this to fit
in a few minutes.

    python3 scripts/sanitize.py --out sanitize-logs [--tool memcheck initcheck] [--quick] [--jobs 4] [--shape NAME ...]
"""
from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
WORKLOAD = Path(__file__).resolve().parent / "sanitize_workload.py"
PROBE = Path(__file__).resolve().parent / "synccheck_probe.py"
BIG_CLUSTER = 16  # the cluster size synccheck misreports when many such clusters run (see above)
FEW_ROWS = 8  # rows a row shape in synccheck's run of the clusters of 16: 8 clusters (the probe: clean up to 24)
PROBE_CLUSTERS = (132, 16)  # many (the fault shows), few (it does not)
_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) error")
_RACE_HAZARDS = re.compile(r"RACECHECK SUMMARY: (\d+) hazard")
_TALLY = re.compile(r"launches (\d+) refused (\d+) failures (\d+)")
_LAUNCHED = re.compile(r"^launched: (.+)$", re.M)


@functools.lru_cache(maxsize=None)
def big_cluster_templates() -> tuple[str, ...]:
    """The registry's cluster kernel templates, each with its _backward."""
    sys.path.insert(0, str(WORKLOAD.parent.parent))
    from cupysoftmax import variants as registry

    names = sorted({v.cluster_template for v in registry.VARIANTS.values() if v.cluster_template})
    return tuple(f"{name}{suffix}" for name in names for suffix in ("", "_backward"))


def big_cluster_regex(templates=()) -> str:
    """The mangled names of the cluster kernels (and `templates`) of BIG_CLUSTER blocks (C, the last template argument)."""
    return f"({'|'.join((*big_cluster_templates(), *templates))})I.*Li{BIG_CLUSTER}EEv"


def is_big_cluster(expression: str) -> bool:
    """A name expression (softmax_split_row_cluster<float, float, false, 8, 1, 16>) of a BIG_CLUSTER kernel."""
    template, _, args = expression.partition("<")
    return template in big_cluster_templates() and args.endswith(f", {BIG_CLUSTER}>")


def sanitizer() -> str:
    """compute-sanitizer from PATH or CUDA_HOME; SystemExit naming both otherwise."""
    found = shutil.which("compute-sanitizer")
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    candidate = Path(home) / "compute-sanitizer" / "compute-sanitizer"
    if found is None and candidate.is_file():
        found = str(candidate)
    if found is None:
        raise SystemExit(f"compute-sanitizer is neither on PATH nor at {candidate} (it comes with the CUDA toolkit)")
    return found


def run_shares(command: list[str], workload: list[str], logs: list[Path], env: dict) -> list[int]:
    """command + workload --part K/len(logs) for every K, side by side, each into logs[K]; their exit statuses."""
    running = []
    for share, log in enumerate(logs):
        full = [*command, *workload, "--part", f"{share}/{len(logs)}"]
        f = log.open("w")
        f.write(" ".join(full) + "\n")
        f.flush()
        running.append((subprocess.Popen(full, stdout=f, stderr=subprocess.STDOUT, env=env), f))
    statuses = []
    for process, f in running:
        statuses.append(process.wait())
        f.close()
    return statuses


def worst(statuses: list[int]) -> int:
    """The first non-zero exit status (a signal's is negative), else 0."""
    return next((status for status in statuses if status), 0)


def run_tool(label: str, tool: str, options: list[str], workload: list[str], jobs: int, out: Path,
             env: dict) -> dict:
    """One sanitized run in jobs shares: logs out/LABEL.K.log, and the summary row over all shares."""
    command = [sanitizer(), "--tool", tool, "--error-exitcode", "1", "--print-limit", "100", *options]
    logs = [out / f"{label}.{share}.log" for share in range(jobs)]
    statuses = run_shares(command, workload, logs, env)
    launches = errors = failures = 0
    unsummed = untallied = 0  # shares that printed no sanitizer summary, no workload tally (they died)
    launched = set()
    for log in logs:
        text = log.read_text()
        found = _ERRORS.findall(text) or _RACE_HAZARDS.findall(text)
        tally = _TALLY.search(text)
        unsummed += not found
        untallied += tally is None
        errors += int(found[-1]) if found else 0
        launches += int(tally.group(1)) if tally else 0
        failures += int(tally.group(3)) if tally else 0
        launched |= set(_LAUNCHED.findall(text))
    return {
        "tool": label,
        "launches": f"{launches}?" if untallied else launches,
        "errors": f"{errors}?" if unsummed else errors,
        "check": f"{untallied} untallied" if untallied else "ok" if failures == 0 else f"{failures} failed",
        "exit": worst(statuses),
        "launched": launched,
    }


def run_probe(clusters: int, out: Path, env: dict) -> dict:
    """synccheck_probe.py under synccheck, through the cluster-of-16 filter with the probe added: a control,
    not part of the verdict."""
    log = out / f"probe-{clusters}.log"
    command = [sanitizer(), "--tool", "synccheck", "--print-limit", "1",
               "--kernel-name", f"regex={big_cluster_regex(('probe',))}", sys.executable, str(PROBE),
               "--cluster", str(BIG_CLUSTER), "--clusters", str(clusters)]
    with log.open("w") as f:
        status = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    text = log.read_text()
    found = _ERRORS.findall(text)
    return {"tool": f"probe {clusters}x{BIG_CLUSTER}", "launches": 1, "errors": found[-1] if found else "?",
            "check": "control" if "right" in text else "ran wrong", "exit": status}


def runs(tool: str) -> list[tuple[str, list[str], list[str]]]:
    """(label, sanitizer options, workload options) of each run of one tool."""
    if tool != "synccheck":
        return [(tool, [], [])]
    regex = f"regex={big_cluster_regex()}"
    return [("synccheck", ["--kernel-name-exclude", regex], []),
            (f"synccheck-c{BIG_CLUSTER}", ["--kernel-name", regex], ["--rows-most", str(FEW_ROWS)])]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=(*TOOLS, "all"), nargs="+", default=["all"], help="one or more")
    parser.add_argument("--quick", action="store_true", help="float32 and bfloat16 and the quick shapes only")
    parser.add_argument("--out", type=Path, default=Path("sanitize-logs"), help="folder for the logs")
    parser.add_argument("--jobs", type=int, default=1, help="shares of the set run side by side")
    parser.add_argument("--shape", nargs="+", default=[], help="only these shapes of the workload's (by name)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUPYSOFTMAX_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    if args.jobs < 1:
        parser.error("--jobs needs at least 1")
    workload = [sys.executable, str(WORKLOAD), *(["--quick"] if args.quick else []),
                *(["--shape", *args.shape] if args.shape else [])]
    compile_logs = [args.out / f"compile.{share}.log" for share in range(args.jobs)]
    unsanitized = worst(run_shares([], workload, compile_logs, env))  # fills CuPy's kernel cache
    print(f"unsanitized run (compiles every kernel): exit {unsanitized}, logs {args.out}/compile.*.log", flush=True)
    rows, controls = [], []
    for tool in TOOLS if "all" in args.tool else dict.fromkeys(args.tool):
        first = None
        for label, options, extra in runs(tool):
            row = run_tool(label, tool, options, [*workload, *extra], args.jobs, args.out, env)
            if first is None:
                first = row
            else:  # the clusters of 16 must all have run in this run too
                missed = {e for e in first["launched"] if is_big_cluster(e)} - row["launched"]
                row["check"] = f"{row['check']}, missed {len(missed)}" if missed else row["check"]
                for expression in sorted(missed):
                    print(f"{label} did not run {expression}", flush=True)
            rows.append(row)
            print(f"{label}: exit {row['exit']}", flush=True)
        if tool == "synccheck":
            controls += [run_probe(clusters, args.out, env) for clusters in PROBE_CLUSTERS]
    print(f"\n{'tool':<14} {'launches':>8} {'errors':>6}  {'check':<10} exit")
    for row in rows + controls:
        print(f"{row['tool']:<14} {row['launches']:>8} {row['errors']:>6}  {row['check']:<10} {row['exit']}")
    clean = unsanitized == 0 and all(row["exit"] == 0 and row["errors"] == 0 and row["check"] == "ok" for row in rows)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
