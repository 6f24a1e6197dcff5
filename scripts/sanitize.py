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

    python3 scripts/sanitize.py --out sanitize-logs [--tool memcheck] [--quick]
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


def run_tool(tool: str, workload: list[str], out: Path, env: dict) -> dict:
    """One sanitized run: its log in out/TOOL.log, and the summary row."""
    command = [sanitizer(), "--tool", tool, "--error-exitcode", "1", "--print-limit", "100",
               *workload]
    log = out / f"{tool}.log"
    with log.open("w") as f:
        f.write(" ".join(command) + "\n")
        f.flush()
        status = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    text = log.read_text()
    errors = _ERRORS.findall(text) or _RACE_HAZARDS.findall(text)
    tally = _TALLY.search(text)
    return {
        "tool": tool,
        "launches": tally.group(1) if tally else "?",
        "errors": errors[-1] if errors else "?",  # "?": the sanitizer printed no summary (it died)
        "check": ("ok" if tally.group(3) == "0" else f"{tally.group(3)} failed") if tally else "no tally",
        "exit": status,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=(*TOOLS, "all"), default="all")
    parser.add_argument("--quick", action="store_true", help="float32 and bfloat16 and the quick shapes only")
    parser.add_argument("--out", type=Path, default=Path("sanitize-logs"), help="folder for the logs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CUPYSOFTMAX_LINEINFO": "1", "PYTHONUNBUFFERED": "1"}
    workload = [sys.executable, str(WORKLOAD), *(["--quick"] if args.quick else [])]
    with (args.out / "compile.log").open("w") as f:  # fills CuPy's kernel cache, unsanitized
        compiled = subprocess.run(workload, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    print(f"unsanitized run (compiles every kernel): exit {compiled}, log {args.out / 'compile.log'}", flush=True)
    rows = []
    for tool in TOOLS if args.tool == "all" else (args.tool,):
        rows.append(run_tool(tool, workload, args.out, env))
        print(f"{tool}: exit {rows[-1]['exit']}", flush=True)
    print(f"\n{'tool':<10} {'launches':>8} {'errors':>6}  {'check':<10} exit")
    for row in rows:
        print(f"{row['tool']:<10} {row['launches']:>8} {row['errors']:>6}  {row['check']:<10} {row['exit']}")
    clean = compiled == 0 and all(row["exit"] == 0 and row["errors"] == "0" for row in rows)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
