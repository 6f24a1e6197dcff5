"""cupysoftmax against its peers on the suite, in one process on one GPU (cupysoftmax.suite does the work).

Writes <out>/suite-<gpu>.json (records), sweep-<gpu>.json, suite-<gpu>.md (table,
cliffs, host cost) and suite-<gpu>.png, then prints a short summary. Runs from a
checkout with PYTHONPATH set to it; COMMIT names the commit where .git is absent.
Usage: python scripts/bench_suite.py [--suite FILE] [--out DIR] [--providers a,b] [--ops forward,log_softmax,backward,axis]
                                     [--repeat K] [--no-sweep] [--no-plot]
"""
import argparse
import sys
from pathlib import Path

from cupysoftmax import device, suite
from cupysoftmax.errors import NoDevice

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=str(ROOT / "scripts" / "suite.json"), help="suite JSON file")
    parser.add_argument("--out", default=str(ROOT / "docs" / "perf"), help="folder for the results")
    parser.add_argument("--providers", default=None, help=f"comma-separated subset of: {', '.join(suite.PROVIDERS)}")
    parser.add_argument("--ops", default=None, help=f"comma-separated subset of: {', '.join(suite.OPS)} (default: forward)")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per provider")
    parser.add_argument("--no-sweep", action="store_true", help="skip the N sweep at M = 4096")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        names = suite.provider_names(args.providers)
        ops = suite.op_names(args.ops)
        shapes = suite.load_shapes(args.suite)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    try:
        device.require()
    except NoDevice as exc:
        sys.exit(f"bench_suite: {exc}")
    suite.main(shapes, names, args.out, repeat=args.repeat, with_sweep=not args.no_sweep, with_plot=not args.no_plot,
               ops=ops)


if __name__ == "__main__":
    main()
