"""auto's launch for shapes on a GPU of the H100's resources (the H200's are the same: 132 SMs, 64K registers and
228 KB of shared memory an SM), with no GPU. Each kernel's registers and static shared memory come from NVRTC's
ptxas report for sm_90 (as `cupysoftmax build`). Its most threads a block follow from those registers by the
occupancy rule (warps of 256-register granules, in whole quarters of the SM). It shows which layout a kernel change moves auto to
before any device time is spent on it (session 59: late y on 2-byte clusters moved 55000-65536 bfloat16 rows from
(4, 1, 8) to (4, 1, 4), which a GPU run of 4096 x 65536 then confirmed: docs/perf/late-y-prefetch-s59-h200.txt).

    PYTHONPATH=$PWD python3 scripts/plan_offline.py [--op log_softmax_backward] [--call plain|scale|where] MxNxdtype ...

--call scale: a call with scale= (the options twins); where: with where=, its mask's rows at x's 16-byte phase
where x's rows start on 16-byte boundaries (a contiguous (M, N) or (N,) mask of N a whole number of x's chunks).
"""
import argparse
import functools
import sys
from pathlib import Path

from cupysoftmax import dtypes, loader
from cupysoftmax import variants as registry
from cupysoftmax.planner import KernelFacts, Planner

# The lent H100's attributes, as the planner's tests take them (tests/fakes.py; the H200 reads the same)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fakes import H100 as HOPPER  # noqa: E402


def most_threads(registers: int) -> int:
    """A block's most threads for a kernel of `registers` registers: its warps' 256-register granules, in whole
    quarters of the SM, within the register file (at most 1024)."""
    per_warp = -(-registers * 32 // 256) * 256
    return min(1024, HOPPER.regs_per_block // per_warp // 4 * 4 * 32)


@functools.cache
def variant_reports(name: str) -> dict:
    """{name expression: ptxas report} of every sm_90 instantiation of one variant (loader.build's, for that
    variant alone: a variant is compiled only once auto asks for one of its kernels)."""
    variant = registry.VARIANTS[name]
    expressions = [variant.name_expression(*i) for i in variant.instantiations((9, 0))]
    lowered, log = loader._nvrtc_compile(loader.source(name), variant.source, expressions, "sm_90")
    by_mangled = loader._parse_ptxas(log)
    return {e: by_mangled[lowered[e]] for e in expressions}


def facts(name, knobs, pair, op) -> KernelFacts:
    r = variant_reports(name)[registry.VARIANTS[name].name_expression(pair, knobs, op)]
    return KernelFacts(num_regs=r["registers"], static_smem=r["static_smem"], local_bytes=r["stack_bytes"],
                       max_threads=most_threads(r["registers"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default=registry.SOFTMAX, choices=(*registry.FORWARD, *registry.BACKWARD))
    parser.add_argument("--call", default="plain", choices=("plain", "scale", "where"))
    parser.add_argument("shapes", nargs="+", metavar="MxNxdtype")
    args = parser.parse_args()
    if args.call != "plain" and args.op in registry.BACKWARD:
        parser.error("--call scale|where: the gradients take no options")
    planner = Planner(HOPPER)
    for shape in args.shapes:
        m, n, name = shape.split("x")
        pair = (dtypes.parse(name),) * 2
        aligned = int(n) * pair[0].itemsize % 16 == 0  # a contiguous x's rows (and the mask's, of one byte)
        launch = planner.plan("auto", int(m), int(n), pair, lambda v, k: facts(v, k, pair, args.op), aligned=aligned,
                              op=args.op, fused=args.call != "plain", y_aligned=aligned,
                              masked=args.call == "where", mask_direct=aligned)
        print(f"{shape} {args.op} {args.call}: {launch.variant}{launch.knobs} grid {launch.grid} block {launch.block} "
              f"smem {launch.smem}")


if __name__ == "__main__":
    main()
