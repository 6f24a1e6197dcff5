"""Probe: warp_rows' plain kernel on whole chunks (O = -1: every row of x and y starts on a 16-byte boundary and N is
a multiple of a chunk's elements, so neither the element path nor the misalignment arithmetic is compiled) against
the plain kernel (O = 0) on the same launch, and the peers that come closest on short rows (torch.compile, the
Triton tutorial kernel, Liger), in one interleaved timing with a copy of the same bytes. Results against the float64
reference on poisoned outputs first. (The first run, docs/perf/whole-chunks-h100.txt, compiled the same path as
O = 2, and an O = 3 that also took the row to span exactly G * K chunks.)

    PYTHONPATH=$PWD python3 scripts/probe_whole_chunks.py
"""
import sys

import cupy

from cupysoftmax import bench, loader

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from probe_plain_warp_rows import compared, warp_rows_launches  # noqa: E402 - the script's sibling

SHAPES = [(262144, 32, "float32"), (262144, 64, "float32"), (262144, 100, "float32"), (4096, 256, "float32"),
          (4096, 512, "float32"), (4096, 256, "bfloat16"), (4096, 1024, "bfloat16"), (4096, 1024, "float16")]
PEERS = ("torch_compile", "triton", "liger")


def main() -> int:
    bad = 0
    for op, m, n, name, pair, whole, launch in warp_rows_launches(SHAPES, y_aligned=True):
        plain = loader.function("warp_rows", pair, (*launch.knobs[:-1], 0), cupy.cuda.Device().id, op)  # O = 0
        x = bench.random_input(m, n, pair[0])
        wrong, copy, cells = compared(x, op, {"plain": (plain, launch), "whole": (whole, launch)}, PEERS)
        bad += wrong
        print(f"{m:>6} x {n:<5} {name:<9} {str(launch.knobs):<11} copy {copy * 1e3:6.1f} us  {cells}", flush=True)
    print(f"\nwrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
