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

`--jobs J` cuts the set into J shares (sanitize_workload.py --part K/J) and runs them side
by side, each its own sanitized process with its own log (OUT/TOOL.K.log), the compile
run too; the summary adds up the shares. The full set under racecheck needs this to fit
in a few minutes.

    python3 scripts/sanitize.py --out sanitize-logs [--tool memcheck] [--quick] [--jobs 4]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
WORKLOAD = Path(__file__).resolve().parent / "sanitize_workload.py"
_ERRORS = re.compile(r"ERROR SUMMARY: (\d+) error")
_RACE_HAZARDS = re.compile(r"RACECHECK SUMMARY: (\d+) hazard")
_TALLY = re.compile(r"launches (\d+) refused (\d+) failures (\d+)")


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


def run_tool(tool: str, workload: list[str], jobs: int, out: Path, env: dict) -> dict:
    """One sanitized run in jobs shares: logs out/TOOL.K.log, and the summary row over all shares."""
    command = [sanitizer(), "--tool", tool, "--error-exitcode", "1", "--print-limit", "100"]
    logs = [out / f"{tool}.{share}.log" for share in range(jobs)]
    statuses = run_shares(command, workload, logs, env)
    launches = errors = failures = 0
    unsummed = untallied = 0  # shares that printed no sanitizer summary, no workload tally (they died)
    for log in logs:
        text = log.read_text()
        found = _ERRORS.findall(text) or _RACE_HAZARDS.findall(text)
        tally = _TALLY.search(text)
        unsummed += not found
        untallied += tally is None
        errors += int(found[-1]) if found else 0
        launches += int(tally.group(1)) if tally else 0
        failures += int(tally.group(3)) if tally else 0
    return {
        "tool": tool,
        "launches": f"{launches}?" if untallied else launches,
        "errors": f"{errors}?" if unsummed else errors,
        "check": f"{untallied} untallied" if untallied else "ok" if failures == 0 else f"{failures} failed",
        "exit": max(statuses),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=(*TOOLS, "all"), default="all")
    parser.add_argument("--quick", action="store_true", help="float32 and bfloat16 and the quick shapes only")
    parser.add_argument("--out", type=Path, default=Path("sanitize-logs"), help="folder for the logs")
    parser.add_argument("--jobs", type=int, default=1, help="shares of the set run side by side")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUPYSOFTMAX_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    if args.jobs < 1:
        parser.error("--jobs needs at least 1")
    workload = [sys.executable, str(WORKLOAD), *(["--quick"] if args.quick else [])]
    compile_logs = [args.out / f"compile.{share}.log" for share in range(args.jobs)]
    compiled = max(run_shares([], workload, compile_logs, env))  # fills CuPy's kernel cache, unsanitized
    print(f"unsanitized run (compiles every kernel): exit {compiled}, logs {args.out}/compile.*.log", flush=True)
    rows = []
    for tool in TOOLS if args.tool == "all" else (args.tool,):
        rows.append(run_tool(tool, workload, args.jobs, args.out, env))
        print(f"{tool}: exit {rows[-1]['exit']}", flush=True)
    print(f"\n{'tool':<10} {'launches':>8} {'errors':>6}  {'check':<10} exit")
    for row in rows:
        print(f"{row['tool']:<10} {row['launches']:>8} {row['errors']:>6}  {row['check']:<10} {row['exit']}")
    clean = compiled == 0 and all(row["exit"] == 0 and row["errors"] == 0 for row in rows)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
