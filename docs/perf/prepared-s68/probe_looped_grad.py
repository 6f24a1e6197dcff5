"""Prototype probe (session 67): looped_grad.cu beside this file (a block a row, the row read twice: Inductor's
`triton_red` layout) against auto's gradient, on the 4096-row shapes torch.compile leads.

--build: compile every instantiation below for sm_90 and sm_80 with NVRTC and print ptxas' registers and spills
(no GPU needed). At session 67's check all were spill-free but (1, 2, True, 2) float32 softmax_backward on sm_90
(8 bytes) and (1, 2, *, 2) 2-byte softmax_backward on sm_80 (28 bytes; not a GPU timed here).
Else, on the GPU: each cut of CUTS is checked against the float64 reference on a poisoned dx
(scripts/sweep_backward.py's Case), then timed interleaved with auto and a copy of the 3 M N bytes
(bench.interleaved_ms, L2 flushed), three rounds; grids of 1, 2 and 4 times the blocks resident, and a block a row.

    PYTHONPATH=$PWD python3 docs/perf/prepared-s68/probe_looped_grad.py [--build] [--op log_softmax_backward]
"""
import argparse
import sys
from pathlib import Path

import cupy

from cupysoftmax import api, bench, dtypes, loader
from cupysoftmax import variants as registry
from cupysoftmax.planner import Launch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from sweep_backward import Case  # noqa: E402

SOURCE = Path(__file__).with_name("looped_grad.cu")
SHAPES = [(4096, 16384, "float16"), (4096, 16384, "bfloat16"), (4096, 8192, "float32"), (4096, 4096, "float32"),
          (4096, 1024, "float32"), (4096, 16383, "float16")]  # the last: rows off 16-byte boundaries
# (K pass 2's chunks a thread a tile, K1 pass 1's, PF the next row's L2 prefetch, MINB blocks an SM, threads)
CUTS = [(1, 1, False, 1, 1024), (1, 2, False, 2, 1024), (1, 2, True, 2, 1024), (2, 2, False, 1, 512),
        (4, 4, False, 1, 256)]
ROUNDS = (1, 2, 4)


def code() -> str:
    """looped_grad.cu with kernels/common.cuh inlined, as loader.source gives a variant's."""
    header = (loader.kernel_dir() / loader.HEADER).read_text()
    return SOURCE.read_text().replace(f'#include "{loader.HEADER}"', header)


def expression(dtype, op, k, k1, pf, minb):
    c, log = dtypes.CTYPE[dtype], op == registry.LOG_SOFTMAX_BACKWARD
    return f"looped_grad<{c}, {c}, {str(log).lower()}, {k}, {k1}, {str(pf).lower()}, {minb}>"


def build():
    names = sorted({expression(dtypes.parse(d), op, *cut[:-1]) for _, _, d in SHAPES for op in registry.BACKWARD
                    for cut in CUTS})
    for arch in ("sm_90", "sm_80"):
        lowered, log = loader._nvrtc_compile(code(), str(SOURCE), names, arch)
        reports = loader._parse_ptxas(log)
        for name in names:
            print(arch, name, reports[lowered[name]])


def main(op):
    dev = cupy.cuda.Device().id
    p = api.planner(dev)
    names = sorted({expression(dtypes.parse(d), op, *cut[:-1]) for _, _, d in SHAPES for cut in CUTS})
    module = cupy.RawModule(code=code(), options=loader.OPTIONS, name_expressions=names)
    print(op)
    for m, n, name in SHAPES:
        dtype = dtypes.parse(name)
        case = Case(m, n, dtype, op)
        kernel, auto = api.plan(dev, "auto", m, n, (dtype, dtype), api.rows_aligned(case.y), op)
        calls = {f"auto {auto.variant}{auto.knobs} b{auto.block} g{auto.grid}": case.call(kernel, auto)}
        for *cut, threads in CUTS:
            f = module.get_function(expression(dtype, op, *cut))
            per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(f.kernel.ptr, threads, 0)
            resident = per_sm * p.device.sms
            for grid in sorted({min(m, r * resident) for r in ROUNDS} | {m}):
                launch = Launch("looped_grad", tuple(cut), grid, threads, 0)
                err = case.check(f, launch)
                if bool(cupy.isnan(case.dx).any()):  # the sample rows aside, a row the loop left unwritten
                    err = float("inf")
                label = f"{tuple(cut)} b{threads} r{f.num_regs} g{grid}"
                if err <= 1:
                    calls[label] = case.call(f, launch)
                else:
                    print(f"   {label}: check FAILED, error {err:.2f} x tolerance", flush=True)
        calls["copy"] = bench.copy_call(3 * m * n * dtype.itemsize // 2)
        times = bench.interleaved_ms(calls, repeat=60, rounds=3)
        print(f"{m} x {n} {name}", flush=True)
        for label, ms in times.items():
            print(f"   {label:<40} {ms * 1e3:8.1f} us {100 * times['copy'] / ms:5.0f}% of copy" if not
                  isinstance(ms, Exception) else f"   {label:<40} failed: {ms}", flush=True)
        case.close()
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--op", default=registry.SOFTMAX_BACKWARD, choices=registry.BACKWARD)
    a = ap.parse_args()
    build() if a.build else main(a.op)
