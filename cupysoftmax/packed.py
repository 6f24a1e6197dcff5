"""A kernel launch whose arguments are packed once, for the remembered calls' host path.

CuPy's Function.__call__ converts every argument on every call (about 0.3 us
each on the H100 host) and softmax's kernels take 10-12. A remembered call
(api._forward) repeats one launch whose arguments differ only in the two
pointers to x and y, so PackedLaunch keeps the others in an array of 8-byte
slots with an array of the slots' addresses (cuLaunchKernel's kernelParams),
writes the two pointers in per call and launches through
cupy.cuda.driver.launchKernel. H100 host, 2026-11-24 (scripts/probe_host_path.py,
docs/perf/host-path-h100.txt, runs 2 and 3): allocation plus the launch of
auto's kernel on 8 x 1000 float32, through Function.__call__ against packed,
16.5 -> 10.4 us and 10.4 -> 7.3 us (the host's speed differed between runs).

Arguments are packed as CuPy passes them: a Python int as a 64-bit integer,
a float as a double, a numpy.int32 as a 32-bit integer (the kernels declare
long long, double and int to match). cuLaunchKernel copies the arguments when
it is called, so a slot may be rewritten as soon as it returns; two threads
must not share one PackedLaunch (api keeps them per thread).
"""
from __future__ import annotations

import numpy

SLOT = 8  # bytes a slot: every kernel argument is at most 8 bytes


class PackedLaunch:
    """function(grid, block, (x, y, *tail), shared_mem=smem) with `tail` packed once; call with the two pointers."""

    __slots__ = ("_launch", "_function", "_grid", "_block", "_smem", "_values", "_addresses", "_params")

    def __init__(self, function, grid: int, block: tuple[int, int], smem: int, tail: tuple):
        from cupy.cuda import driver

        self._launch = driver.launchKernel
        self._function = function  # the loaded cupy Function: its module stays loaded while this lives
        self._grid, self._block, self._smem = grid, block, smem
        self._values = pack(tail)
        base = self._values.ctypes.data
        self._addresses = numpy.arange(base, base + SLOT * len(self._values), SLOT, dtype=numpy.uint64)
        self._params = self._addresses.ctypes.data  # kernelParams; both arrays live as long as this does

    def __call__(self, x_ptr: int, y_ptr: int, stream_ptr: int) -> None:
        values = self._values
        values[0] = x_ptr
        values[1] = y_ptr
        self._launch(self._function.ptr, self._grid, 1, 1, self._block[0], self._block[1], 1, self._smem,
                     stream_ptr, self._params, 0)


def pack(tail: tuple) -> numpy.ndarray:
    """Slots for two pointers (left 0) and then each of `tail`, as CuPy would pass them; TypeError for others."""
    values = numpy.zeros(2 + len(tail), numpy.uint64)
    for i, a in enumerate(tail, 2):
        if type(a) is int:
            values.view(numpy.int64)[i] = a  # strides may be negative
        elif type(a) is float:
            values.view(numpy.float64)[i] = a
        elif type(a) is numpy.int32:
            values.view(numpy.int32)[2 * i] = a  # the slot's first four bytes, which the driver reads
        else:
            raise TypeError(f"cannot pack a kernel argument of type {type(a).__name__}")
    return values
